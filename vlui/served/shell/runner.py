"""The shell itself: running a command line (lists, pipelines, redirections, expansion) and :data:`COMMANDS`,
the one table of commands by name. :class:`Shell` gathers the command families' methods."""

from __future__ import annotations

import errno
import posixpath
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from vlui.errors import VluiError
from vlui.served.phone import ServedPhone
from vlui.served.shell.apps import AppCommands
from vlui.served.shell.builtins import BuiltinCommands
from vlui.served.shell.context import (
    BIN_DIRS,
    SH,
    SHELL_PID,
    _discard,
    _Exit,
    _Io,
    _PipeClosed,
    _RedirectError,
    _Session,
    _UsageError,
)
from vlui.served.shell.dumpsys import DumpsysCommands
from vlui.served.shell.files import FileCommands
from vlui.served.shell.filters import FILTERS, _After, _Stage
from vlui.served.shell.language import _Command, _glob_regex, _Parser, _Redirect, _SyntaxError, _Word
from vlui.served.shell.log import LogCommands
from vlui.served.shell.screen import ScreenCommands
from vlui.served.shell.sqlite import SqliteCommands
from vlui.served.shell.system import SystemCommands
from vlui.served.storage import StorageError


class Shell(BuiltinCommands, FileCommands, SystemCommands, ScreenCommands, LogCommands, AppCommands, DumpsysCommands,
            SqliteCommands):
    """``/system/bin/sh -c`` on the served phone. One instance may run several lines one after the other."""

    def __init__(self, phone: ServedPhone) -> None:
        self.phone = phone
        self._session: _Session | None = None

    def run(self, command: str, write: Callable[[bytes], None], cancelled: threading.Event,
            err: Callable[[bytes], None] | None = None) -> int:
        """Run ``command``; its standard output through ``write``, its standard error through ``err`` (with
        ``write`` when None, as adb's legacy shell protocol mixes them); the exit status. Lines run by one Shell
        share a session, as lines typed at one prompt do: the working directory, exported variables and ``$?``."""
        if self._session is None:
            self._session = _Session(cancelled)
        s = self._session
        s.cancelled = cancelled
        return self._run_line(command, _Io(write, err or write), s)

    @property
    def exited(self) -> bool:
        """Whether ``exit`` or ``exec`` ended this shell (an interactive session then ends)."""
        return self._session is not None and self._session.exited

    def _run_line(self, command: str, io: _Io, s: _Session) -> int:
        try:
            items = _Parser(command).parse()
        except _SyntaxError as err:
            io.complain(f"{SH}: {err}\n")
            return 2
        try:
            for connector, pipeline in items:
                if self._stopped(s):
                    break
                if (connector == "&&" and s.status != 0) or (connector == "||" and s.status == 0):
                    continue
                s.status = self._run_pipeline(s, io, pipeline)
        except _Exit as done:
            s.status = done.status
            s.exited = True
        return s.status

    def _stopped(self, s: _Session) -> bool:
        return s.cancelled.is_set() or self.phone.closed.is_set()

    # ---------------------------------------------------------------------------------------------- running
    def _run_pipeline(self, s: _Session, io: _Io, pipeline: list[_Command]) -> int:
        if len(pipeline) == 1:
            return self._run_command(s, io, pipeline[0])
        with ExitStack() as stack:
            stages: list[_Stage] = []
            downstream = io.out
            for cmd in reversed(pipeline[1:]):  # right to left: each stage's output is the next one's input
                stage = self._stage(s, _Io(downstream, io.err), cmd, stack)
                stages.insert(0, stage)
                downstream = stage.feed
            try:
                self._run_command(s, _Io(downstream, io.err), pipeline[0])
            except _PipeClosed:
                pass
            status = 0
            for stage in stages:
                try:
                    status = stage.close()
                except _PipeClosed:
                    status = 0
            return status

    def _stage(self, s: _Session, io: _Io, cmd: _Command, stack: ExitStack) -> _Stage:
        try:
            rio = stack.enter_context(self._redirected(s, io, cmd.redirects))
        except _RedirectError as err:
            io.complain(f"{SH}: {err}\n")
            return _After(lambda: 1)
        argv = self._expand(s, cmd.words)
        name = self._name(argv[0]) if argv else ""
        if name in FILTERS:
            try:
                stage = FILTERS[name](argv[1:], rio.out)
            except _UsageError as err:
                rio.complain(f"{name}: {err}\n")
                return _After(lambda: 2 if name == "grep" else 1)
            if not stage.files:
                return stage
        return _After(lambda: self._call(s, rio, argv) if argv else 0)

    def _run_command(self, s: _Session, io: _Io, cmd: _Command) -> int:
        try:
            with self._redirected(s, io, cmd.redirects) as rio:
                argv = self._expand(s, cmd.words)
                return self._call(s, rio, argv) if argv else 0
        except _RedirectError as err:
            io.complain(f"{SH}: {err}\n")
            return 1

    @contextmanager
    def _redirected(self, s: _Session, io: _Io, redirects: list[_Redirect]) -> Iterator[_Io]:
        """``io`` with ``redirects`` applied. A file is created when opened, and its content stored when the command
        ends."""
        out, err = io.out, io.err
        files: list[tuple[str, bytearray, bool]] = []
        for r in redirects:
            words = self._expand(s, [r.target], glob=False)
            target = words[0] if words else ""
            if r.op == ">&":
                if target not in ("1", "2", "-"):
                    raise _RedirectError(f"{target}: illegal file descriptor name")
                stream = {"1": out, "2": err, "-": _discard}[target]
            elif target in ("/dev/null", "/dev/zero"):
                stream = _discard
            else:
                path = self._path(s, target)
                with self.phone.lock:
                    problem = self._unwritable(path)
                    if problem:
                        raise _RedirectError(f"can't create {target}: {problem}")
                    if r.op == ">":
                        self.phone.files[path] = b""
                    else:
                        self.phone.files.setdefault(path, b"")
                buf = bytearray()
                files.append((path, buf, r.op == ">>"))
                stream = self._bounded_writer(path, buf, r.op == ">>")
            if r.fd == 1:
                out = stream
            else:
                err = stream
        try:
            yield _Io(out, err)
        finally:
            if files:
                with self.phone.lock:
                    for path, buf, append in files:
                        content = (self.phone.files.get(path, b"") if append else b"") + bytes(buf)
                        # what others wrote meanwhile may have taken the room: keep what fits, as a full disk does
                        self.phone.files[path] = content[:max(0, self.phone.files.room(replacing=path))]

    def _bounded_writer(self, path: str, buf: bytearray, append: bool) -> Callable[[bytes], None]:
        """What a command writes into a redirected file: gathered in ``buf`` until the phone's storage is full; the
        write that does not fit stores what fits and raises ``StorageError`` (``No space left on device``)."""
        files = self.phone.files

        def write(data: bytes) -> None:
            kept = len(files.get(path, b"")) if append else 0
            room = files.room(replacing=path) - kept - len(buf)
            if len(data) > room:
                buf.extend(data[:max(0, room)])
                raise StorageError(errno.ENOSPC, path)
            buf.extend(data)
        return write

    def _expand(self, s: _Session, words: list[_Word], glob: bool = True) -> list[str]:
        """The arguments that ``words`` become: variables expanded, unquoted empty expansions dropped, unquoted
        globs matched against the phone's files (a glob that matches nothing stays as written, as in sh)."""
        args = []
        for word in words:
            text = "".join(self._variable(s, t) if k in ("var", "qvar") else t for k, t in word.parts)
            if not text and not word.quoted:
                continue
            if glob and any(k == "lit" and any(c in t for c in "*?[") for k, t in word.parts):
                pattern = "".join(self._glob_part(s, k, t) for k, t in word.parts)
                args += self._glob(s, pattern) or [text]
            else:
                args.append(text)
        return args

    def _glob_part(self, s: _Session, kind: str, text: str) -> str:
        """A word part in a glob pattern: what was quoted matches literally."""
        if kind in ("var", "qvar"):
            text = self._variable(s, text)
        return re.sub(r"([*?\[])", r"[\1]", text) if kind in ("quoted", "qvar") else text

    def _variable(self, s: _Session, name: str) -> str:
        special = {"?": str(s.status), "$": str(SHELL_PID), "#": "0", "0": SH}
        return special.get(name, s.env.get(name, ""))

    def _glob(self, s: _Session, pattern: str) -> list[str]:
        absolute = self._path(s, pattern)
        parts = absolute.strip("/").split("/")
        regexes = [re.compile(_glob_regex(p)) for p in parts]
        with self.phone.lock:
            paths = set()
            for p in (*self.phone.files, *self.phone.STANDARD_DIRS):
                p = p.rstrip("/")
                while p:
                    paths.add(p)
                    p = posixpath.dirname(p) if p != "/" else ""
        found = sorted(p for p in paths if p != "/" and len(p.strip("/").split("/")) == len(parts)
                       and all(r.fullmatch(c) for r, c in zip(regexes, p.strip("/").split("/"))))
        if pattern.startswith("/"):
            return found
        base = s.cwd.rstrip("/") + "/"
        return [p[len(base):] if p.startswith(base) else p for p in found]

    def _name(self, arg: str) -> str:
        for d in BIN_DIRS:
            if arg.startswith(d) and "/" not in arg[len(d):]:
                return arg[len(d):]
        return arg

    def _call(self, s: _Session, io: _Io, argv: list[str]) -> int:
        name = self._name(argv[0])
        if name in FILTERS:
            return self._filter(s, io, name, argv[1:])
        command = COMMANDS.get(name)
        if command is None:
            io.complain(f"{SH}: {argv[0]}: not found\n")
            return 127
        try:
            return command(self, s, io, argv[1:])
        except (VluiError, _UsageError) as err:  # bad usage, or a value the simulated phone refuses: say why
            io.complain(f"{name}: {err}\n")
            return 1
        except StorageError as err:  # a full disk or a read-only partition, met while writing
            io.complain(f"{name}: {err.filename}: {err.strerror}\n")
            return 1
        finally:
            self.phone.changed()  # any command may have logged: streaming readers look

    def _filter(self, s: _Session, io: _Io, name: str, args: list[str]) -> int:
        """A filter run on its own: it reads the files it names (its standard input, the host's, stays unread)."""
        try:
            f = FILTERS[name](args, io.out)
        except _UsageError as err:
            io.complain(f"{name}: {err}\n")
            return 2 if name == "grep" else 1
        status = 0
        try:
            for arg in f.files:
                data, problem = self._read(self._path(s, arg)) if arg != "-" else (b"", "")
                if problem:
                    io.complain(f"{name}: {arg}: {problem}\n")
                    status = 2 if name == "grep" else 1
                    continue
                f.feed(data)
            f.close()
        except _PipeClosed:
            pass
        return status or f.status


# The commands, by name (an executable's path under /system/bin and the like finds the same one).
COMMANDS: dict[str, Callable[[Shell, _Session, _Io, list[str]], int]] = {
    "am": Shell._am, "cd": Shell._cd, "chmod": Shell._chmod, "chown": Shell._chown, "cmd": Shell._cmd,
    "cp": Shell._cp, "date": Shell._date, "dumpsys": Shell._dumpsys, "echo": Shell._echo, "exec": Shell._exec,
    "exit": Shell._exit, "export": Shell._export, "unset": Shell._unset,
    "false": Shell._false, "getprop": Shell._getprop, "id": Shell._id, "input": Shell._input, "log": Shell._log,
    "logcat": Shell._logcat, "ls": Shell._ls, "media": Shell._media, "mkdir": Shell._mkdir,
    "monkey": Shell._monkey, "mv": Shell._mv, "service": Shell._service, "svc": Shell._svc,
    "pm": Shell._pm, "pwd": Shell._pwd, "rm": Shell._rm, "rmdir": Shell._rmdir, "screencap": Shell._screencap,
    "setprop": Shell._setprop, "settings": Shell._settings, "sh": Shell._sh, "sleep": Shell._sleep,
    "sqlite3": Shell._sqlite3, "start": Shell._start, "stop": Shell._stop, "touch": Shell._touch,
    "true": Shell._true, "uiautomator": Shell._uiautomator, "whoami": Shell._whoami, "wm": Shell._wm,
}
