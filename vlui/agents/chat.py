"""An OpenAI-compatible chat endpoint, as the LLM and MLLM agents (:mod:`vlui.agents.text_agent`) reach it: the
``openai`` client library speaks HTTP, this module decides what to do with what comes back.

What can go wrong with the endpoint is sorted three ways:

- a setting the user must fix (unreachable before the run, a refused or missing API key, a wrong URL or model name):
  :meth:`Endpoint.check` finds it before the first request, and a :class:`~vlui.errors.VluiError` stops the run if it
  shows up later (the finished episodes are kept);
- a passing failure (HTTP 429, 408 or 5xx, a timeout, a dropped connection): the request is sent again, up to
  ``max_retries`` times, after ``retry_delay_s`` doubled each time or the server's ``Retry-After``, each time said in
  a warning line (the wait and the attempt), and never past ``request_deadline_s`` from its first sending;
- a request that still fails, or an answer that is not a chat completion: :class:`EndpointError`, a
  ``ConnectionError``, which the evaluation records as an infrastructure failure (not the agent's) and runs again on
  resume. After :data:`STOP_AFTER_FAILED_REQUESTS` requests in a row (from any of the run's agents) that failed
  after all their retries the endpoint is taken to be down and the run stops, rather than failing every remaining
  episode slowly.

Two things make a run reproducible and bounded:

- **the response cache** (``cache_dir``): every answer is kept under the SHA-256 of its full request (model,
  messages with their images as content hashes, sampling settings), so asking the same again is free, makes no
  request and gives the same answer: an evaluation run again from the cache is the same evaluation;
- **the budget** (``budget_requests``, ``budget_tokens``): what this process may send; once spent, the run stops in
  one line, the finished episodes kept, and the same command goes on (with what the cache holds for free).

The library's own retries are off (``max_retries=0``): ours honour ``Retry-After`` as a number of seconds or an HTTP
date, bound the wait, and can be tested without sleeping (``sleep``).

One endpoint serves every agent of a run, from several threads when the run sends requests side by side
(``agent.concurrency``, :func:`vlui.rollout.rollout`): its counts, its budget and its check are kept under a lock,
and the cache writes each answer under a name of its own thread before renaming it into place.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import openai

from vlui.data.images import IMAGE_REF
from vlui.errors import VluiError

log = logging.getLogger(__name__)

STOP_AFTER_FAILED_REQUESTS = 3  # requests in a row that failed after all their retries: the endpoint is down
NO_KEY = "EMPTY"  # what the client sends as the key to a local server that wants none (vLLM's convention)
# the longest wait for the model list of the check before a run: a server answers it at once, however slow its model,
# so one that does not is down, and says so in seconds rather than after agent.timeout_s
CHECK_TIMEOUT_S = 15.0


class EndpointError(ConnectionError):
    """A request that failed after its retries (``down``), or an answer that is not a chat completion: the episode
    is an infrastructure failure, not the agent's."""

    def __init__(self, message: str, down: bool = False) -> None:
        super().__init__(message)
        self.down = down


@dataclass(frozen=True)
class Reply:
    """What the endpoint answered to one request: its HTTP status, its JSON body (None when it is not JSON) and the
    wait a ``Retry-After`` header asks for."""

    status: int
    data: Any
    retry_after: float | None = None
    attempts: int = 1  # requests sent to get it: 1, plus one per retry

    def message(self) -> str:
        """The server's own explanation, as OpenAI-compatible servers give it (``{"error": {"message": ...}}``)."""
        data = self.data
        error = data.get("error") if isinstance(data, dict) else None
        text = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
        if text is None and isinstance(data, dict) and isinstance(data.get("detail"), str):
            text = data["detail"]  # FastAPI-style servers
        return f": {' '.join(str(text).split())[:200]}" if text else ""


@dataclass
class Usage:
    """What a run asked of the endpoint: requests sent (retries included: what the server received, and what
    ``budget_requests`` counts), answers read from the cache, and the tokens the endpoint reported for the answers
    it sent."""

    requests: int = 0
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Answer:
    """A chat answer: its text, the request as stored (images named by hash), whether the cache gave it, and its
    tokens as the endpoint counted them (0 where it did not say)."""

    text: str
    request: dict[str, Any]
    cached: bool
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 0  # requests sent for it (retries included); 0 for an answer from the cache


def retryable(status: int) -> bool:
    """Answers that may change if asked again: rate limits, timeouts, server errors (not 501 Not Implemented or 505
    HTTP Version Not Supported, which say the request can never work)."""
    return status in (408, 429) or (500 <= status <= 599 and status not in (501, 505))


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for: a number of seconds or an HTTP date; None when absent or
    unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def request_key(request: dict[str, Any]) -> str:
    """The cache key of a request: the SHA-256 of its canonical JSON (keys sorted, images as content hashes)."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def with_data_urls(messages: list[dict[str, Any]], images: dict[str, bytes]) -> list[dict[str, Any]]:
    """``messages`` as the endpoint gets them: each image named ``sha256:<hash>`` becomes a PNG data URL."""
    def part(p: Any) -> Any:
        url = p.get("image_url", {}).get("url", "") if isinstance(p, dict) and p.get("type") == "image_url" else ""
        if not url.startswith(IMAGE_REF):
            return p
        data = base64.b64encode(images[url[len(IMAGE_REF):]]).decode("ascii")
        return {**p, "image_url": {**p["image_url"], "url": f"data:image/png;base64,{data}"}}

    return [{**m, "content": [part(p) for p in m["content"]]} if isinstance(m.get("content"), list) else m
            for m in messages]


class ResponseCache:
    """Answers on disk, one JSON file per request under ``<dir>/<key[:2]>/<key>.json`` (the request, the answer and
    its tokens), written whole and renamed into place so a kill leaves no half file."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, request: dict[str, Any]) -> dict[str, Any] | None:
        path = self._path(request_key(request))
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise VluiError(f"the response cache entry {path} is damaged: delete it (the request is sent again)") \
                from None
        return entry if isinstance(entry, dict) and entry.get("request") == request else None

    def put(self, request: dict[str, Any], answer: str, input_tokens: int, output_tokens: int) -> None:
        path = self._path(request_key(request))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"request": request, "answer": answer, "input_tokens": input_tokens,
                                   "output_tokens": output_tokens}, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)


def check_address(base_url: str | None, model: str | None, who: str = "text",
                  url_setting: str = "agent.base_url") -> None:
    """One line unless ``base_url`` is an http(s) URL and ``model`` is named: what an agent of a model behind an
    endpoint needs, checked before any work that comes before its first request."""
    if not base_url or not model:
        raise VluiError(f"agent={who} needs agent.base_url (an OpenAI-compatible endpoint, e.g. "
                        "http://127.0.0.1:8000/v1) and agent.model")
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise VluiError(f"{url_setting} must be an http:// or https:// URL such as http://127.0.0.1:8000/v1, not "
                        f"{base_url!r}")


class Endpoint:
    """One OpenAI-compatible chat endpoint, shared by every agent of a run: its client, its check, its cache and its
    budget. ``who`` names the agent in messages ("the mllm agent's endpoint"), ``url_setting`` the setting that
    gave ``base_url`` (``agent.base_url``, or ``agent.url``, its former name)."""

    def __init__(self, base_url: str | None, model: str | None, *, who: str = "text",
                 url_setting: str = "agent.base_url", api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 60.0,
                 max_retries: int = 5, retry_delay_s: float = 1.0, retry_max_delay_s: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep, cache_dir: str | Path | None = None,
                 budget_requests: int | None = None, budget_tokens: int | None = None,
                 stop_after_invalid: int | None = None, request_deadline_s: float = 180.0) -> None:
        check_address(base_url, model, who, url_setting)
        for name, value in (("max_retries", max_retries), ("retry_delay_s", retry_delay_s),
                            ("retry_max_delay_s", retry_max_delay_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise VluiError(f"agent.{name} must be a number at least 0, not {value!r}")
        for name, value in (("timeout_s", timeout_s), ("request_deadline_s", request_deadline_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise VluiError(f"agent.{name} must be a number greater than 0, not {value!r}")
        self.who, self.url_setting = who, url_setting
        self.base = base_url.rstrip("/")
        self.model, self.timeout_s, self.request_deadline_s = model, timeout_s, request_deadline_s
        self.max_retries, self.retry_delay_s, self.retry_max_delay_s = int(max_retries), retry_delay_s, \
            retry_max_delay_s
        self.sleep = sleep
        self.lock = threading.Lock()  # the counts and the budget, shared by the threads of a run's requests
        self.check_lock = threading.Lock()
        self.api_key_env = api_key_env
        self.api_key = os.environ.get(api_key_env, "").strip()
        if any(c.isspace() or not c.isprintable() or ord(c) > 127 for c in self.api_key):
            raise VluiError(f"the API key in ${api_key_env} contains spaces, line breaks or non-ASCII characters: "
                            "set the variable to the key alone")
        self.client = openai.OpenAI(base_url=self.base, api_key=self.api_key or NO_KEY, max_retries=0,
                                    timeout=timeout_s)
        self.cache = ResponseCache(cache_dir) if cache_dir else None
        self.budget_requests, self.budget_tokens = budget_requests, budget_tokens
        self.stop_after_invalid = stop_after_invalid
        self.invalid_in_a_row = 0  # answers with no valid action since the last valid one, across the run's agents
        self.failed_in_a_row = 0  # requests that failed after their retries since the last answered, across them too
        self.usage = Usage()
        self.checked = False
        self.check_before_asking = False  # a check deferred to the first request the cache cannot answer

    @property
    def url(self) -> str:
        return self.base + "/chat/completions"

    # ------------------------------------------------------------------------------------------------ HTTP
    def _send(self, what: str, payload: dict[str, Any] | None, timeout_s: float, spend: bool = False) -> Reply:
        """One request (``what``: ``GET /models`` or ``POST /chat/completions``) that waits ``timeout_s`` for its
        answer; any HTTP answer is returned, no answer at all raises ``openai.APIConnectionError`` (timeouts
        included). A chat request is counted as it is sent; with ``spend``, after the budget says it may be (one step
        under the lock: requests sent side by side never overspend it)."""
        try:
            if what == "GET /models":
                raw = self.client.models.with_raw_response.list(timeout=timeout_s)
            else:
                with self.lock:
                    if spend:
                        self._spend()
                    self.usage.requests += 1
                raw = self.client.chat.completions.with_raw_response.create(**payload, timeout=timeout_s)
            response = raw.http_response
        except openai.APIStatusError as err:  # an answer, with an error status
            response = err.response
        try:
            data = json.loads(response.text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = None
        return Reply(response.status_code, data, retry_after_seconds(response.headers.get("Retry-After")))

    def request(self, what: str, payload: dict[str, Any] | None = None, retry_unanswered: bool = True,
                timeout_s: float | None = None, spend: bool = False) -> Reply:
        """The endpoint's answer, after sending the request again on 429, 408 and 5xx answers (and, with
        ``retry_unanswered``, on timeouts and connection failures): at most ``max_retries`` times, waiting the
        server's ``Retry-After`` or ``retry_delay_s`` doubled each time, never more than ``retry_max_delay_s``, each
        time said in a warning line, and all within ``request_deadline_s`` of the first sending (each attempt waits
        ``timeout_s``, ``agent.timeout_s`` unless given, or what is left of that). ``spend``: the first sending is
        checked against the budget."""
        method, path = what.split(" ", 1)
        where = f"{method} {self.base}{path}"
        deadline = time.monotonic() + self.request_deadline_s
        attempt = 0
        while True:
            wait = None
            patience = max(0.01, min(timeout_s or self.timeout_s, deadline - time.monotonic()))
            try:
                reply = self._send(what, payload, patience, spend=spend and attempt == 0)
            except openai.APIConnectionError as err:
                problem = _reason(err, patience)
                if not retry_unanswered:
                    raise EndpointError(f"{where}: {problem}", down=True) from None
            else:
                if not retryable(reply.status):
                    return replace(reply, attempts=attempt + 1)
                problem, wait = f"HTTP {reply.status}{reply.message()}", reply.retry_after
            if attempt >= self.max_retries:
                raise EndpointError(f"{where} failed {attempt + 1} time(s), last with {problem}", down=True)
            if wait is None:
                wait = min(self.retry_max_delay_s, self.retry_delay_s * 2 ** attempt)
            elif wait > self.retry_max_delay_s:
                raise EndpointError(f"{where} answered {problem} and asked to wait {wait:g} s (Retry-After), more "
                                    f"than agent.retry_max_delay_s={self.retry_max_delay_s:g}", down=True)
            if time.monotonic() + wait >= deadline:
                raise EndpointError(f"{where} was given up at agent.request_deadline_s={self.request_deadline_s:g} s "
                                    f"({attempt + 1} attempt(s), the last {problem})", down=True)
            log.warning(f"the {self.who} agent's {where}: {problem} (attempt {attempt + 1} of "
                        f"{self.max_retries + 1}); sending it again in {wait:.3g} s")
            self.sleep(wait)
            attempt += 1

    def setting_problem(self, reply: Reply, what: str) -> str | None:
        """What the user must fix when ``reply`` refuses the request for a setting (key, URL, model), else None."""
        mine = f"the {self.who} agent's endpoint {self.base}"
        if reply.status in (401, 403):
            if not self.api_key:
                return (f"{mine} wants an API key (HTTP {reply.status} to {what}{reply.message()}): put it in the "
                        f"environment variable {self.api_key_env} (agent.api_key_env names another)")
            return (f"{mine} refused the API key in ${self.api_key_env} (HTTP {reply.status} to {what}"
                    f"{reply.message()}): set a valid key")
        if reply.status == 404:
            return (f"{mine} answered HTTP 404 to {what}{reply.message()}: {self.url_setting} must be the API's base "
                    f"URL (e.g. http://127.0.0.1:8000/v1) and agent.model={self.model!r} a model it serves")
        return None

    # ------------------------------------------------------------------------------------------------ checks
    def check(self) -> None:
        """Before the first request: the endpoint answers, takes the API key and serves ``model``; otherwise one
        :class:`VluiError` line that says what to fix. Asks for the model list (``GET /models``) or, from a server
        without one, a one-token chat completion."""
        served: list[str] | None = None
        try:
            reply = self.request("GET /models", retry_unanswered=False, timeout_s=min(self.timeout_s,
                                                                                       CHECK_TIMEOUT_S))
            if reply.status in (404, 405, 501):  # no model list on this server: a one-token chat request instead
                what = "POST /chat/completions"
                reply = self.request(what, {"model": self.model, "temperature": 0.0, "max_tokens": 1, "messages": [
                    {"role": "user", "content": "Answer with one word: ready?"}]}, retry_unanswered=False)
                expected = content(reply.data) is not None
            else:
                what = "GET /models"
                served = model_ids(reply.data)
                expected = served is not None
        except EndpointError as err:
            raise VluiError(f"the {self.who} agent's endpoint does not work ({err}): start the server or fix "
                            f"{self.url_setting}") from None
        problem = self.setting_problem(reply, what)
        if problem:
            raise VluiError(problem)
        if reply.status != 200 or not expected:
            raise VluiError(f"{self.base} does not answer like an OpenAI-compatible API (HTTP {reply.status} to "
                            f"{what}{reply.message()}): {self.url_setting} must be its base URL, e.g. "
                            "http://127.0.0.1:8000/v1")
        if what == "GET /models" and served and self.model not in served:
            listed = ", ".join(served[:20]) + (f" and {len(served) - 20} more" if len(served) > 20 else "")
            raise VluiError(f"the {self.who} agent's endpoint {self.base} does not serve agent.model={self.model!r}; "
                            f"it serves: {listed}")
        self.checked = True

    def check_when_asking(self) -> None:
        """:meth:`check` now, or, with a response cache, before the first request the cache cannot answer: a run the
        cache answers whole needs no endpoint at all (and makes no request)."""
        if self.cache is None:
            self.check()
        else:
            self.check_before_asking = True

    def _check_once(self) -> None:
        """The deferred check, by the first of the run's threads to need it; the others wait for its verdict."""
        with self.check_lock:
            if not self.checked:
                self.check()

    def _spend(self) -> None:
        """Stop the run in one line when this process has spent its budget of requests or tokens (called under
        :attr:`lock`)."""
        spent = [f"{name}={limit}" for name, used, limit in (
            ("agent.budget_requests", self.usage.requests, self.budget_requests),
            ("agent.budget_tokens", self.usage.tokens, self.budget_tokens)) if limit is not None and used >= limit]
        if spent:
            raise VluiError(f"the {self.who} agent's budget is spent ({self.usage.requests} requests, "
                            f"{self.usage.tokens} tokens this run; {', '.join(spent)}): the finished episodes are "
                            "saved; run the same command again to go on (answers already received come from the cache, "
                            "free), with a larger budget if need be")

    def failed(self, down: bool) -> int:
        """Count a request that failed after all its retries (``down``) or not (answered, or refused on its own
        merits): the requests in a row that failed so, across the run's agents."""
        with self.lock:
            self.failed_in_a_row = self.failed_in_a_row + 1 if down else 0
            return self.failed_in_a_row

    def judged(self, valid: bool, answer: str, error: str) -> None:
        """Count an answer as one with a valid action or not; stop the run in one line after
        ``stop_after_invalid`` invalid ones in a row: a model that never follows the answer format (a wrong chat
        template, a base model) would otherwise spend the whole budget on failures."""
        with self.lock:
            self.invalid_in_a_row = in_a_row = 0 if valid else self.invalid_in_a_row + 1
        if self.stop_after_invalid is not None and in_a_row >= self.stop_after_invalid:
            said = " ".join(answer.split())[:120]
            raise VluiError(f"the {self.who} agent's last {in_a_row} answers held no valid action "
                            f"(the last: {said!r}: {error}): is agent.model={self.model} a chat model that follows "
                            "the prompt's answer format? The finished episodes are saved; agent.stop_after_invalid="
                            "null measures such a model anyway")

    # ------------------------------------------------------------------------------------------------ asking
    def complete(self, messages: list[dict[str, Any]], images: dict[str, bytes], **sampling: Any) -> Answer:
        """The answer to ``messages`` (images named ``sha256:<hash>``, their PNGs in ``images``) with the sampling
        settings ``sampling`` (those that are None are not sent): from the cache when it holds the same request,
        else from the endpoint. Raises :class:`EndpointError` when the endpoint fails (an infrastructure failure),
        :class:`VluiError` for a setting to fix, the budget spent or an endpoint that stays down."""
        request = {"model": self.model, "messages": messages, **{k: v for k, v in sampling.items() if v is not None}}
        hit = self.cache.get(request) if self.cache is not None else None
        if hit is not None:
            with self.lock:
                self.usage.cached += 1
            return Answer(str(hit["answer"]), request, True, int(hit.get("input_tokens") or 0),
                          int(hit.get("output_tokens") or 0))
        if self.check_before_asking and not self.checked:
            self._check_once()
        reply = self.request("POST /chat/completions", {**request, "messages": with_data_urls(messages, images)},
                             spend=True)
        problem = self.setting_problem(reply, "POST /chat/completions")
        if problem:
            raise VluiError(f"{problem}; the finished episodes are saved: run the same command again to go on")
        if reply.status != 200:
            raise EndpointError(f"{self.url} answered HTTP {reply.status}{reply.message()}")
        text = content(reply.data)
        if text is None:
            raise EndpointError(f"{self.url} did not answer like an OpenAI chat endpoint")
        usage = reply.data.get("usage") if isinstance(reply.data, dict) else None
        tokens_in, tokens_out = (_count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))
        with self.lock:
            self.usage.input_tokens += tokens_in
            self.usage.output_tokens += tokens_out
        if self.cache is not None:
            self.cache.put(request, text, tokens_in, tokens_out)
        return Answer(text, request, False, tokens_in, tokens_out, reply.attempts)


def _count(usage: Any, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _reason(err: BaseException, waited_s: float) -> str:
    """A one-line reason for a request that got no answer after ``waited_s``: the transport's, under the library's
    "Connection error."."""
    if isinstance(err, openai.APITimeoutError):
        return f"timed out: no answer in {waited_s:.3g} s (agent.timeout_s)"
    cause = err.__cause__ or err.__context__ or err
    text = str(cause).strip() or type(cause).__name__
    return text.splitlines()[0]


def content(data: Any) -> str | None:
    """The answer's text from a chat completion (an empty string for a null content), None when ``data`` is not one."""
    try:
        text = data["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return text if isinstance(text, str) else "" if text is None else None


def model_ids(data: Any) -> list[str] | None:
    """The model names of a ``GET /models`` answer (``{"data": [{"id": ...}, ...]}``), None when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return [m["id"] for m in data["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
