"""The viewer's local web server: the page, the episodes as JSON and their images, on 127.0.0.1 only.

Routes: ``/`` the page (``page.html``, self-contained); ``/api/episodes`` the listing of the folders, their agents and
matched episodes; ``/api/episode?source=&id=`` one episode of the ``source``-th folder (the first by default); under
``/<source>/``, ``images/<sha256>.png`` an evaluation's kept screen or an LLM agent's request image and
``screen?id=&step=`` a dataset's screen. Nothing else in the folders is served, and the page may load nothing from
elsewhere (its Content-Security-Policy says so to the browser).
"""

from __future__ import annotations

import errno
import json
import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from vlui.errors import VluiError
from vlui.viewer.compare import Viewer

PAGE = Path(__file__).with_name("page.html")
POLICY = ("default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
          "connect-src 'self'")
FILE = re.compile(r"/(\d+)/(?:images/(\w+)\.png|(screen))")


def make_server(viewer: Viewer, port: int = 0) -> ThreadingHTTPServer:
    """A server of ``viewer``'s folders on ``127.0.0.1:port`` (0: a free port), not yet serving."""
    page = PAGE.read_bytes()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            file = FILE.fullmatch(url.path)
            folder = viewer.folders[int(file[1])] if file and int(file[1]) < len(viewer.folders) else None
            if url.path in ("/", "/index.html"):
                self.reply(page, "text/html; charset=utf-8")
            elif url.path == "/api/episodes":
                self.json(viewer.listing())
            elif url.path == "/api/episode" and query.get("source", "0").isdigit():
                found = viewer.episode(int(query.get("source", "0")), query.get("id", ""))
                self.json(found if found is not None else {"error": f"no episode {query.get('id')!r} here"},
                          HTTPStatus.OK if found is not None else HTTPStatus.NOT_FOUND)
            elif folder is not None and file[2]:
                self.png(folder.image(file[2]))
            elif folder is not None and file[3] and query.get("step", "").isdigit():
                self.png(folder.screen(query.get("id", ""), int(query["step"]), query.get("full") == "1"))
            else:
                self.reply(b"not found", "text/plain", HTTPStatus.NOT_FOUND)

        def json(self, value: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
            self.reply(json.dumps(value).encode(), "application/json", status)

        def png(self, data: bytes | None) -> None:
            if data is None:
                self.reply(b"no such image", "text/plain", HTTPStatus.NOT_FOUND)
            else:
                self.reply(data, "image/png")

        def reply(self, body: bytes, kind: str, status: HTTPStatus = HTTPStatus.OK) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", POLICY)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the browser went elsewhere before the answer came: nothing to tell it

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
            """Quiet: a request per image would drown the one line that says where the page is."""

    try:
        return ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise VluiError(f"port {port} is in use: choose another with --port N (--port 0 picks a free one)") \
                from None
        raise
