"""An LLM agent over an OpenAI-compatible chat endpoint: it reads the XML-parsed screen (B-MoCA's numbered element
list) and answers with one of the paper's text actions, which are converted to dual-gestures.

A malformed answer is counted as a step and does nothing (the paper's rule); the environment is driven through
:class:`vlui.env.text_env.TextActions` semantics by returning ``None`` for the gesture, which the evaluation runner
turns into a skipped step.

What can go wrong with the endpoint is sorted three ways:

- a setting the user must fix (unreachable before the run, a refused or missing API key, a wrong URL or model name):
  :meth:`TextAgent.check` finds it before the run, and a :class:`~vlui.errors.VluiError` stops the run if it shows up
  later (the finished episodes are kept);
- a passing failure (HTTP 429, 408 or 5xx, a timeout, a dropped connection): the request is sent again, up to
  ``max_retries`` times, after ``retry_delay_s`` doubled each time or the server's ``Retry-After``;
- a request that still fails, or an answer that is not a chat completion: :class:`EndpointError`, a
  ``ConnectionError``, which the evaluation records as an infrastructure failure (not the agent's) and runs again on
  resume. After ``STOP_AFTER_FAILED_REQUESTS`` requests in a row that failed after all their retries the endpoint is
  taken to be down and the run stops, rather than failing every remaining episode slowly.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar

import numpy as np

from vlui.config import AgentConfig
from vlui.env.ui_text import ACTION_HELP, describe, parse_text_action, parse_xml
from vlui.errors import VluiError
from vlui.tasks.catalog import Task

SYSTEM = ("You operate an Android phone to complete the user's task. Each turn you see the screen as a numbered list "
          "of UI elements and answer with exactly one action.\n" + ACTION_HELP)

STOP_AFTER_FAILED_REQUESTS = 3  # requests in a row that failed after all their retries: the endpoint is down


class EndpointError(ConnectionError):
    """A request that failed after its retries (``down``), or an answer that is not a chat completion: the episode
    is an infrastructure failure, not the agent's."""

    def __init__(self, message: str, down: bool = False) -> None:
        super().__init__(message)
        self.down = down


@dataclass
class _Reply:
    status: int
    body: bytes
    retry_after: float | None = None  # seconds, from the Retry-After header

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None

    def message(self) -> str:
        """The server's own explanation, as OpenAI-compatible servers give it (``{"error": {"message": ...}}``)."""
        data = self.json()
        error = data.get("error") if isinstance(data, dict) else None
        text = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
        if text is None and isinstance(data, dict) and isinstance(data.get("detail"), str):
            text = data["detail"]  # FastAPI-style servers
        return f": {' '.join(str(text).split())[:200]}" if text else ""


def _retryable(status: int) -> bool:
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


class TextAgent:
    reads: ClassVar[tuple[str, ...]] = ("xml",)  # the UI tree, described to the model as text

    def __init__(self, url: str | None, model: str | None, api_key_env: str = "OPENAI_API_KEY",
                 timeout_s: float = 60.0, with_bounds: bool = True, max_retries: int = 5, retry_delay_s: float = 1.0,
                 retry_max_delay_s: float = 60.0, sleep: Callable[[float], None] = time.sleep) -> None:
        if not url or not model:
            raise VluiError("agent=text needs agent.url (an OpenAI-compatible endpoint, e.g. "
                            "http://127.0.0.1:8000/v1) and agent.model")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise VluiError(f"agent.url must be an http:// or https:// URL such as http://127.0.0.1:8000/v1, not "
                            f"{url!r}")
        for name, value in (("max_retries", max_retries), ("retry_delay_s", retry_delay_s),
                            ("retry_max_delay_s", retry_max_delay_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise VluiError(f"agent.{name} must be a number at least 0, not {value!r}")
        if timeout_s is None or not timeout_s > 0:
            raise VluiError(f"agent.timeout_s must be greater than 0, not {timeout_s!r}")
        self.base = url.rstrip("/")
        self.url = self.base + "/chat/completions"
        self.model, self.timeout_s, self.with_bounds = model, timeout_s, with_bounds
        self.max_retries, self.retry_delay_s, self.retry_max_delay_s = int(max_retries), retry_delay_s, \
            retry_max_delay_s
        self.sleep = sleep
        self.api_key_env = api_key_env
        self.api_key = os.environ.get(api_key_env, "").strip()
        if any(c.isspace() or not c.isprintable() or ord(c) > 127 for c in self.api_key):
            raise VluiError(f"the API key in ${api_key_env} contains spaces, line breaks or non-ASCII characters: "
                            "set the variable to the key alone")
        self.history: list[str] = []
        self.task: Task | None = None
        self.last_error = ""
        self.failed_in_a_row = 0

    @classmethod
    def from_settings(cls, agent: AgentConfig, seed: int = 0) -> TextAgent:
        return cls(agent.url, agent.model, agent.api_key_env, agent.timeout_s, max_retries=agent.max_retries,
                   retry_delay_s=agent.retry_delay_s, retry_max_delay_s=agent.retry_max_delay_s)

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self.task, self.history, self.last_error = task, [], ""

    # ------------------------------------------------------------------------------------------------ HTTP
    def _send(self, method: str, path: str, payload: dict[str, Any] | None) -> _Reply:
        """One request; any HTTP answer is returned, no answer at all raises ``OSError`` or ``HTTPException``."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return _Reply(response.status, response.read())
        except urllib.error.HTTPError as err:  # an answer, with an error status
            try:
                body = err.read() if err.fp is not None else b""
            finally:
                err.close()
            return _Reply(err.code, body, retry_after_seconds(err.headers.get("Retry-After") if err.headers else None))

    def _request(self, method: str, path: str, payload: dict[str, Any] | None = None,
                 retry_unanswered: bool = True) -> _Reply:
        """The endpoint's answer, after sending the request again on 429, 408 and 5xx answers (and, with
        ``retry_unanswered``, on timeouts and connection failures): at most ``max_retries`` times, waiting the
        server's ``Retry-After`` or ``retry_delay_s`` doubled each time, never more than ``retry_max_delay_s``."""
        what = f"{method} {self.base}{path}"
        attempt = 0
        while True:
            wait = None
            try:
                reply = self._send(method, path, payload)
            except (OSError, http.client.HTTPException) as err:  # URLError and timeouts are OSErrors
                problem = _reason(err)
                if not retry_unanswered:
                    raise EndpointError(f"{what}: {problem}", down=True) from None
            else:
                if not _retryable(reply.status):
                    return reply
                problem, wait = f"HTTP {reply.status}{reply.message()}", reply.retry_after
            if attempt >= self.max_retries:
                raise EndpointError(f"{what} failed {attempt + 1} time(s), last with {problem}", down=True)
            if wait is None:
                wait = min(self.retry_max_delay_s, self.retry_delay_s * 2 ** attempt)
            elif wait > self.retry_max_delay_s:
                raise EndpointError(f"{what} answered {problem} and asked to wait {wait:g} s (Retry-After), more than "
                                    f"agent.retry_max_delay_s={self.retry_max_delay_s:g}", down=True)
            self.sleep(wait)
            attempt += 1

    def _setting_problem(self, reply: _Reply, what: str) -> str | None:
        """What the user must fix when ``reply`` refuses the request for a setting (key, URL, model), else None."""
        if reply.status in (401, 403):
            if not self.api_key:
                return (f"the text agent's endpoint {self.base} wants an API key (HTTP {reply.status} to {what}"
                        f"{reply.message()}): put it in the environment variable {self.api_key_env} "
                        "(agent.api_key_env names another)")
            return (f"the text agent's endpoint {self.base} refused the API key in ${self.api_key_env} (HTTP "
                    f"{reply.status} to {what}{reply.message()}): set a valid key")
        if reply.status == 404:
            return (f"the text agent's endpoint {self.base} answered HTTP 404 to {what}{reply.message()}: agent.url "
                    f"must be the API's base URL (e.g. http://127.0.0.1:8000/v1) and agent.model={self.model!r} a "
                    "model it serves")
        return None

    def _chat_request(self, messages: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
        return {"model": self.model, "temperature": 0.0, "messages": messages, **extra}

    # ------------------------------------------------------------------------------------------------ checks
    def check(self) -> None:
        """Before a run: the endpoint answers, takes the API key and serves ``model``; otherwise one
        :class:`VluiError` line that says what to fix. Asks for the model list (``GET /models``) or, from a server
        without one, a one-token chat completion."""
        served: list[str] | None = None
        try:
            reply = self._request("GET", "/models", retry_unanswered=False)
            if reply.status in (404, 405, 501):  # no model list on this server: a one-token chat request instead
                reply = self._request("POST", "/chat/completions", self._chat_request(
                    [{"role": "user", "content": "Answer with one word: ready?"}], max_tokens=1),
                                      retry_unanswered=False)
                what = "POST /chat/completions"
                expected = _content(reply.json()) is not None
            else:
                what = "GET /models"
                served = _model_ids(reply.json())
                expected = served is not None
        except EndpointError as err:
            raise VluiError(f"the text agent's endpoint does not work ({err}): start the server or fix agent.url") \
                from None
        problem = self._setting_problem(reply, what)
        if problem:
            raise VluiError(problem)
        if reply.status != 200 or not expected:
            raise VluiError(f"{self.base} does not answer like an OpenAI-compatible API (HTTP {reply.status} to "
                            f"{what}{reply.message()}): agent.url must be its base URL, e.g. http://127.0.0.1:8000/v1")
        if what == "GET /models" and served and self.model not in served:
            listed = ", ".join(served[:20]) + (f" and {len(served) - 20} more" if len(served) > 20 else "")
            raise VluiError(f"the text agent's endpoint {self.base} does not serve agent.model={self.model!r}; it "
                            f"serves: {listed}")

    # ------------------------------------------------------------------------------------------------ acting
    def _chat(self, prompt: str) -> str:
        reply = self._request("POST", "/chat/completions", self._chat_request(
            [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]))
        problem = self._setting_problem(reply, "POST /chat/completions")
        if problem:
            raise VluiError(f"{problem}; the finished episodes are saved: run the same command again to go on")
        if reply.status != 200:
            raise EndpointError(f"{self.url} answered HTTP {reply.status}{reply.message()}")
        content = _content(reply.json())
        if content is None:
            raise EndpointError(f"{self.url} did not answer like an OpenAI chat endpoint")
        return content

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray | None:
        """A dual-gesture, or None for a malformed answer (the step is counted and skipped). Raises
        :class:`EndpointError` when the endpoint fails (an infrastructure failure)."""
        elements = parse_xml(obs["xml"])
        previous = "\n".join(self.history[-8:]) or "(none)"
        prompt = (f"Task: {obs['instruction']}\nPrevious actions:\n{previous}\nScreen:\n"
                  f"{describe(elements, with_bounds=self.with_bounds)}\nYour action:")
        try:
            answer = self._chat(prompt).strip()
        except EndpointError as err:
            self.failed_in_a_row = self.failed_in_a_row + 1 if err.down else 0
            if self.failed_in_a_row >= STOP_AFTER_FAILED_REQUESTS:
                raise VluiError(f"the text agent's endpoint failed {self.failed_in_a_row} requests in a row ({err}): "
                                "the finished episodes are saved; run the same command again when it works (episodes "
                                "that failed for infrastructure reasons run again)") from None
            raise
        self.failed_in_a_row = 0
        parsed = parse_text_action(answer, elements, info["screen_size"])
        self.history.append(answer if parsed.gesture is not None else f"{answer} (invalid: {parsed.error})")
        self.last_error = parsed.error
        return None if parsed.gesture is None else np.asarray(parsed.gesture, dtype=np.float32)


def _reason(err: BaseException) -> str:
    """A one-line reason for a request that got no answer."""
    reason = getattr(err, "reason", None) or err
    text = str(reason).strip() or type(reason).__name__
    return text.splitlines()[0] if text else type(err).__name__


def _content(data: Any) -> str | None:
    """The answer's text from a chat completion (an empty string for a null content), None when ``data`` is not one."""
    try:
        content = data["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return content if isinstance(content, str) else "" if content is None else None


def _model_ids(data: Any) -> list[str] | None:
    """The model names of a ``GET /models`` answer (``{"data": [{"id": ...}, ...]}``), None when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return [m["id"] for m in data["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
