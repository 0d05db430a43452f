"""``sqlite3`` on the phone's database files: its options and files here; its SQL in a worker process of its own,
confined (:mod:`vlui.served.confined_sql`), started for each invocation and killed when the client goes away.

At most :data:`MAX_WORKERS` workers run at once, over all clients, so the memory of all queries together is bounded
too; an invocation waits for a free one. A worker holds its slot for a bounded time: its statements stop at the time
limit, and what it writes goes through a relay of :data:`RELAY_LIMIT` bytes to the client, whose thread writes it
out holding no slot; a client that leaves the relay full for the time limit (one that never reads) has its worker
killed, and the slot goes to the next."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

from vlui.served import confined_sql
from vlui.served.confined_sql import FRAME
from vlui.served.device_files import app_file
from vlui.served.shell.context import Command, Io, Session, ShellApi
from vlui.served.storage import StorageError

MAX_WORKERS = 4
GRACE_S = 5.0  # beyond the statement time limit, before a silent worker is killed
RELAY_LIMIT = 1 << 20  # bytes of a worker's output waiting for its client
WORKER = (sys.executable, "-I", "-S", confined_sql.__file__)  # the standard library only: no site, no environment
_SIGNALS = {signal.SIGSEGV: "Segmentation fault", signal.SIGBUS: "Bus error", signal.SIGABRT: "Aborted",
            signal.SIGKILL: "Killed"}  # as mksh reports a command that one of these ended
_slots = threading.BoundedSemaphore(MAX_WORKERS)


def sqlite3(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``sqlite3 [-header] [-separator SEP] DB [SQL...]`` in list mode, on a database file in ``phone.files``."""
    header, separator = False, b"|"
    args = list(args)
    while args and args[0].startswith("-"):
        opt = args.pop(0).lstrip("-")
        if opt == "header":
            header = True
        elif opt == "noheader":
            header = False
        elif opt == "separator" and args:
            separator = args.pop(0).encode("utf-8", "surrogateescape")
        elif opt not in ("list", "batch", "bail"):
            io.complain(f"sqlite3: Error: unknown option: -{opt}\nUse -help for a list of options.\n")
            return 1
    if not args:
        io.complain("sqlite3: the simulated phone needs a database file: sqlite3 DB \"SQL\"\n")
        return 1
    db, sql = args[0], args[1:]
    path = sh.path(s, db)
    with sh.phone.lock:  # a copy of the file; the SQL runs unlocked, so a slow query stalls no other client
        original = sh.phone.files.get(path)
        if original is None:  # an app's own database (Clock's alarms.db), as the app holds it now
            original = app_file(sh.phone.device, path)
        problem = "" if original is not None else sh.unwritable(path)
        room = sh.phone.files.room(replacing=path)
    if problem:
        io.complain(f"Error: unable to open database \"{db}\": unable to open database file\n")
        return 1
    job = confined_sql.job(sql, room, sh.phone.limits.sql_timeout_s, header, separator, original or b"")
    status, data = run_confined(job, sh.phone.limits.sql_timeout_s, io.out, io.complain,
                                lambda: sh.stopped(s))
    if data is not None:
        try:
            with sh.phone.lock:  # the last writer's file wins, as with two sqlite3 processes on a device
                sh.phone.files[path] = data
        except StorageError:  # others filled the storage while the SQL ran
            io.complain("Error: database or disk is full\n")
            return 1
    return status


def run_confined(job: list[bytes], timeout_s: float, out: Callable[[bytes], None], complain: Callable[[str], None],
                 stopped: Callable[[], bool]) -> tuple[int, bytes | None]:
    """Run ``job`` (:func:`confined_sql.job`) in a new worker: rows go to ``out`` as they come, an error to
    ``complain`` as one line (``Error: ...``, as a device's sqlite3 prints it).

    Returns the exit status and the database file's new bytes (None when unchanged). Statements that ran before an
    error stay done (autocommit), as on a device. The worker is killed when ``stopped()`` turns true, when it says
    nothing for ``timeout_s`` + :data:`GRACE_S` (its own time limit failed to stop it), or when its output waits
    for the client ``timeout_s`` in all. The worker runs, holding its slot, on a thread of its own; this one writes
    its output to the client, holding none, however long the client takes."""
    while not _slots.acquire(timeout=0.1):
        if stopped():
            return 1, None
    relay = _Relay(timeout_s, stopped)
    result: list[tuple[int, bytes | None]] = []

    def work() -> None:
        try:
            result.append(_Worker(timeout_s, stopped).run(job, relay))
        finally:
            _slots.release()
            relay.close()

    thread = threading.Thread(target=work, name="sqlite3 worker", daemon=True)
    thread.start()
    try:
        while (message := relay.take()) is not None:
            kind, payload = message
            if kind == b"o":
                out(payload)
            else:
                complain(payload.decode("utf-8", "surrogateescape"))
    finally:
        relay.abandon()  # when the client is gone: the worker thread stops waiting for room, and ends its worker
        thread.join()
    return result[0] if result else (1, None)


class _Relay:
    """A worker's messages on their way to the client: the worker's thread puts them, the client's takes them. It
    holds :data:`RELAY_LIMIT` bytes; a put waits for room, ``patience`` seconds in all over the worker's life, and
    fails past them, or at once when the client is gone (``stopped``) or its thread gave up (:meth:`abandon`)."""

    def __init__(self, patience: float, stopped: Callable[[], bool]) -> None:
        self.patience, self.stopped = patience, stopped
        self.cond = threading.Condition()
        self.messages: deque[tuple[bytes, bytes]] = deque()
        self.size = 0
        self.closed = self.abandoned = False

    def put(self, kind: bytes, payload: bytes, force: bool = False) -> bool:
        """Queue a message (``force``: whatever the room, for the last line); False if it cannot wait longer."""
        with self.cond:
            while self.size >= RELAY_LIMIT and not force:
                if self.abandoned or self.patience <= 0 or self.stopped():
                    return False
                start = time.monotonic()
                self.cond.wait(min(0.1, self.patience))
                self.patience -= time.monotonic() - start
            if self.abandoned:
                return False
            self.messages.append((kind, payload))
            self.size += len(payload)
            self.cond.notify_all()
            return True

    def take(self) -> tuple[bytes, bytes] | None:
        """The next message, once there is one; None once the worker's thread has closed the relay and all is taken."""
        with self.cond:
            while not self.messages and not self.closed:
                self.cond.wait()
            if not self.messages:
                return None
            kind, payload = self.messages.popleft()
            self.size -= len(payload)
            self.cond.notify_all()
            return kind, payload

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def abandon(self) -> None:
        with self.cond:
            self.abandoned = True
            self.messages.clear()
            self.cond.notify_all()


class _Worker:
    """One worker process, from its start to its end; :attr:`ended` says why the server ended it ("stopped",
    "silent", "unread"), if it did."""

    def __init__(self, timeout_s: float, stopped: Callable[[], bool]) -> None:
        self.timeout_s = timeout_s
        self.stopped = stopped
        self.ended = ""
        self._buf = b""

    def run(self, job: list[bytes], relay: _Relay) -> tuple[int, bytes | None]:
        try:
            self.proc = subprocess.Popen(WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        except OSError:  # no process to be had: the host is short of memory or processes
            relay.put(b"e", b"Error: out of memory\n", force=True)
            return 1, None
        try:
            try:  # the worker reads its whole job before it writes anything, so this cannot deadlock
                for piece in job:
                    view = memoryview(piece)
                    while view:
                        view = view[self.proc.stdin.write(view):]
                self.proc.stdin.close()
            except OSError:
                pass  # it died early; its exit status says how
            status, data, error = self._results(relay)
            if error:
                relay.put(b"e", error.encode("utf-8", "surrogateescape"), force=True)
            return status, data
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc.stdout.close()

    def _results(self, relay: _Relay) -> tuple[int, bytes | None, str]:
        """(exit status, the database's new bytes or None, the last error line the server adds or "")."""
        status, data = 0, None
        while (message := self._next()) is not None:
            kind, payload = message
            if kind == b"o":
                if not relay.put(b"o", payload):
                    self.ended = "unread" if not self.stopped() else "stopped"
                    self.proc.kill()
                    break
            elif kind == b"e":
                relay.put(b"e", b"Error: " + payload + b"\n", force=True)
                status = 1
            elif kind == b"d":
                data = payload
        if self.ended == "stopped":
            return 1, None, ""
        if self.ended == "silent":
            return 1, None, (f"Error: interrupted: the simulated phone stops an SQL statement after "
                             f"{self.timeout_s:g} s\n")
        if self.ended == "unread":
            return 1, None, (f"Error: interrupted: the simulated phone stops an SQL statement whose output is not "
                             f"read within {self.timeout_s:g} s\n")
        code = self.proc.wait()
        if code != 0:  # ended by something other than SQL's errors, which it reports itself
            if -code in _SIGNALS:
                return 128 - code, None, f"{_SIGNALS[-code]}\n"
            return 1, None, "Error: out of memory\n"
        return status, data, ""

    def _next(self) -> tuple[bytes, bytes] | None:
        """The worker's next message (kind, payload); None at its end, or once the server killed it."""
        silent_since = time.monotonic()
        fd = self.proc.stdout.fileno()
        poll = select.poll()  # not select(): a busy server's descriptors may pass FD_SETSIZE
        poll.register(fd, select.POLLIN)
        while True:
            if len(self._buf) >= FRAME.size:
                kind, size = FRAME.unpack(self._buf[:FRAME.size])
                if len(self._buf) >= FRAME.size + size:
                    payload, self._buf = self._buf[FRAME.size:FRAME.size + size], self._buf[FRAME.size + size:]
                    return kind, payload
            if self.stopped():
                self.ended = "stopped"
            elif time.monotonic() - silent_since > self.timeout_s + GRACE_S:
                self.ended = "silent"
            if self.ended:
                self.proc.kill()
                return None
            if not poll.poll(100):
                continue
            piece = os.read(fd, 1 << 20)
            if not piece:
                return None
            self._buf += piece
            silent_since = time.monotonic()


COMMANDS: dict[str, Command] = {"sqlite3": sqlite3}
