"""A local stand-in for an OpenAI-compatible LLM endpoint, on 127.0.0.1 in a thread: it can want an API key, serve a
model list or none, fail with any status (429 and 503 with Retry-After, 401, ...), answer late (a timeout), and
answer B-MoCA text actions with the tokens it counted. A request's content may be text or parts (text and images, as
an MLLM's): the answer is chosen from its text. Nothing in the tests reaches the internet."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Failure:
    """An error answer: a status, its headers (e.g. ``{"Retry-After": "0"}``) and an OpenAI-style message, given
    after ``stall_s`` seconds (longer than the client waits: a timeout)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "stand-in failure"
    stall_s: float = 0.0


def text_of(content) -> str:
    """The text of a message's content: itself, or its text parts joined by line breaks."""
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def images_of(content) -> list[str]:
    """The image URLs of a message's content (none for plain text)."""
    return [] if isinstance(content, str) else [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]


def open_app(prompt: str) -> str:
    """A competent LLM for the ``open_<app>`` tasks: taps the app's icon when the screen shows it, else opens the
    app drawer."""
    instruction = prompt.split("\n", 1)[0].lower()
    for line in prompt.splitlines():
        if line.startswith("[") and "TextView " in line:
            label = line.split("TextView ", 1)[1].split(" ")[0].lower()
            if label and f"the {label} app" in instruction.replace("setting app", "settings app"):
                return f"tap({line[1:line.index(']')]})"
    return 'swipe("up")'


def _png_data_url(url: str) -> bool:
    """Whether ``url`` is a data URL holding a PNG (its signature)."""
    head = "data:image/png;base64,"
    try:
        return url.startswith(head) and base64.b64decode(url[len(head):], validate=True)[:8] == b"\x89PNG\r\n\x1a\n"
    except ValueError:
        return False


class StandIn:
    """``with StandIn() as llm:`` serves ``llm.url`` (``http://127.0.0.1:<port>/v1``) until the block ends.

    ``key``: the API key it wants (None: any). ``models``: the models it serves, which ``GET /v1/models`` lists
    unless ``list_models`` is false (that route is then a 404, as on some servers). ``failures``: answers to the next
    requests, used up in order. ``fail``: called on every chat request with its user prompt; a :class:`Failure` it
    returns is the answer (an endpoint that is down, or down for some prompts). ``answer``: the action text of a
    successful chat answer. ``delay``: the seconds a chat request's answer takes, given its prompt (a slow model).
    ``requests``: ``(method, path, headers, body)`` of every request received; ``answered``: when each chat request
    came and when its answer left (``time.monotonic()``); ``most_at_once``: the most chat requests it held at once."""

    def __init__(self, key: str | None = None, models: tuple[str, ...] = ("stand-in",), list_models: bool = True,
                 answer: Callable[[str], str] = open_app) -> None:
        self.key, self.models, self.list_models, self.answer = key, list(models), list_models, answer
        self.failures: list[Failure] = []
        self.fail: Callable[[str], Failure | None] = lambda prompt: None
        self.delay: Callable[[str], float] = lambda prompt: 0.0
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.answered: list[tuple[float, float]] = []
        self.most_at_once = 0
        self._at_once = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def chat_requests(self) -> list[Any]:
        return [body for method, path, _, body in self.requests if method == "POST"]

    def __enter__(self) -> StandIn:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                raw = data if isinstance(data, bytes) else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _error(self, failure: Failure) -> None:
                time.sleep(failure.stall_s)
                self._reply(failure.status, {"error": {"message": failure.message, "type": "stand_in"}},
                            failure.headers)

            def _authorised(self) -> bool:
                if stand_in.key is None or self.headers.get("Authorization") == f"Bearer {stand_in.key}":
                    return True
                self._error(Failure(401, message="Incorrect API key provided"))
                return False

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                stand_in.requests.append(("GET", self.path, self.headers, None))
                if stand_in.failures:
                    self._error(stand_in.failures.pop(0))
                elif self.path != "/v1/models" or not stand_in.list_models:
                    self._error(Failure(404, message=f"no route {self.path}"))
                elif self._authorised():
                    self._reply(200, {"object": "list", "data": [{"id": m, "object": "model"}
                                                                 for m in stand_in.models]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.requests.append(("POST", self.path, self.headers, body))
                if self.path != "/v1/chat/completions":
                    return self._error(Failure(404, message=f"no route {self.path}"))
                if not self._authorised():
                    return None
                if body.get("model") not in stand_in.models:
                    return self._error(Failure(404, message=f"The model `{body.get('model')}` does not exist."))
                content = body["messages"][-1]["content"]
                bad = [u for u in images_of(content) if not _png_data_url(u)]
                if bad:  # what an endpoint refuses: only PNG data URLs are sent
                    return self._error(Failure(400, message=f"not a PNG data URL: {bad[0][:40]}"))
                prompt = text_of(content)
                failure = stand_in.failures.pop(0) if stand_in.failures else stand_in.fail(prompt)
                if failure is not None:
                    return self._error(failure)
                came = time.monotonic()
                with stand_in._lock:
                    stand_in._at_once += 1
                    stand_in.most_at_once = max(stand_in.most_at_once, stand_in._at_once)
                time.sleep(stand_in.delay(prompt))
                with stand_in._lock:
                    stand_in._at_once -= 1
                    stand_in.answered.append((came, time.monotonic()))
                answer = stand_in.answer(prompt)
                if not isinstance(answer, str):  # a body that is not a chat completion
                    return self._reply(200, answer)
                usage = {"prompt_tokens": len(prompt) // 4 + 85 * len(images_of(content)),
                         "completion_tokens": len(answer) // 4 + 1}
                return self._reply(200, {"object": "chat.completion", "usage": usage, "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": answer}}]})

            def log_message(self, *args) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address) -> None:
                pass  # a client that stopped waiting (a timeout) closed its end: nothing to report

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
