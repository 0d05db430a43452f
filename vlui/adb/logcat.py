"""Reading a device's log as it is written: ``logcat -v threadtime`` streamed on a background thread.

Lines keep their order and get stable indices, which is what :meth:`vlui.device.Device.log_mark` hands out. A line
logged under :data:`SYNC_TAG` is a marker the backend writes after each input (``log -t VluiSync <token>``): once
the reader has seen it, every line the device logged before it has arrived. Markers are not kept as lines.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Protocol

from vlui.android.logcat import parse_threadtime

SYNC_TAG = "VluiSync"


class Stream(Protocol):
    """A byte stream from the device (an adbutils connection's socket)."""

    def recv(self, n: int) -> bytes: ...

    def close(self) -> None: ...


def logcat_command(tags: list[str] | None) -> str:
    """The streaming logcat command line: every tag, or only ``tags`` (and the sync markers)."""
    if tags is None:
        return "logcat -v threadtime"
    specs = " ".join(f"{t}:V" for t in sorted({*tags, SYNC_TAG}))
    return f"logcat -v threadtime {specs} '*:S'"


class LogcatReader:
    """Streams the log of one device into memory. ``open_stream()`` starts ``logcat`` and returns its stream."""

    def __init__(self, open_stream: Callable[[], Stream], name: str) -> None:
        self._open_stream = open_stream
        self.name = name
        self.lines: list[str] = []
        self._markers: dict[str, int] = {}
        self._cond = threading.Condition()
        self._stream: Stream | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.error: str | None = None  # why the stream ended, when it ended on its own
        self._resume: tuple[str, str | None] | None = None  # (marker token, last line kept) while resuming
        self._held: list[tuple[str, str]] = []

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        self.stop()
        self._stop.clear()
        self.error = None
        self._resume, self._held = None, []
        self._open()

    def resume(self, token: str) -> None:
        """Open a new stream after a broken one, keeping the lines already read. ``logcat`` replays its buffer, so
        what arrives before marker ``token`` (which the caller logs next) is matched against the last line kept and
        only the newer lines are added."""
        self.stop()
        self._stop.clear()
        self.error = None
        with self._cond:
            self._resume, self._held = (token, self.lines[-1] if self.lines else None), []
        self._open()

    def _open(self) -> None:
        self._stream = self._open_stream()
        self._thread = threading.Thread(target=self._run, args=(self._stream,), name=f"logcat {self.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._stream is not None:
            try:
                if isinstance(self._stream, socket.socket):  # wakes the reader's recv at once; close() alone does not
                    self._stream.shutdown(socket.SHUT_RDWR)
                self._stream.close()
            except OSError:
                pass
            self._stream = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def wait_marker(self, token: str, timeout_s: float) -> int | None:
        """The number of lines received before marker ``token``, once it arrives; None if it did not arrive in
        time or the stream ended."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while token not in self._markers:
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive:
                    return None
                self._cond.wait(min(left, 0.5))
            return self._markers.pop(token)

    def count(self) -> int:
        with self._cond:
            return len(self.lines)

    def since(self, index: int) -> list[str]:
        with self._cond:
            return self.lines[index:]

    # ------------------------------------------------------------------------------------------ thread
    def _run(self, stream: Stream) -> None:
        pending = b""
        try:
            while not self._stop.is_set():
                try:
                    chunk = stream.recv(65536)
                except socket.timeout:
                    continue
                if not chunk:
                    if not self._stop.is_set():
                        self.error = "the logcat stream ended"
                    break
                pending += chunk
                *complete, pending = pending.split(b"\n")
                if complete:
                    self._add([raw.decode("utf-8", "replace").rstrip("\r") for raw in complete])
        except OSError as err:
            if not self._stop.is_set():
                self.error = f"the logcat stream broke ({err})"
        finally:
            with self._cond:
                self._cond.notify_all()

    def _add(self, raw_lines: list[str]) -> None:
        with self._cond:
            for line in raw_lines:
                fields = parse_threadtime(line) if line else None
                if fields is None:  # logcat's own "--------- beginning of main" separators are dropped
                    continue
                item = ("marker", fields["message"].strip()) if fields["tag"] == SYNC_TAG else ("line", line)
                if self._resume is None:
                    self._take(*item)
                    continue
                self._held.append(item)
                if item == ("marker", self._resume[0]):  # the replay is over: keep what is newer than before
                    last = self._resume[1]
                    seen = [i for i, (kind, text) in enumerate(self._held) if kind == "line" and text == last]
                    held = self._held[seen[-1] + 1:] if seen else self._held
                    self._resume, self._held = None, []
                    for kind, text in held:
                        self._take(kind, text)
            self._cond.notify_all()

    def _take(self, kind: str, text: str) -> None:
        if kind == "marker":
            self._markers[text] = len(self.lines)
        else:
            self.lines.append(text)
