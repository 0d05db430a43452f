"""The shell's builtins: ``echo``, ``true``, ``false``, ``exit``, ``sleep``, ``cd``, ``pwd``, ``id``, ``whoami``,
``sh``, ``export``, ``unset`` and ``exec``."""

from __future__ import annotations

import re
import time

from vlui.served.phone import ServedPhone
from vlui.served.shell.context import ID, POLL_S, SH, _Exit, _Io, _Session, _UsageError

_ECHO_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                 "\\": "\\"}


def _echo_escapes(text: str) -> tuple[str, bool]:
    """mksh's echo escapes (on by default); True when ``\\c`` ended the output."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        e = text[i + 1]
        if e == "c":
            return "".join(out), True
        if e == "0":
            digits = re.match(r"[0-7]{0,3}", text[i + 2:]).group()
            value = int(digits or "0", 8) & 0xFF
            out.append(chr(value) if value < 0x80 else chr(0xDC00 + value))  # a raw byte, via surrogateescape
            i += 2 + len(digits)
        elif e in _ECHO_ESCAPES:
            out.append(_ECHO_ESCAPES[e])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out), False


class BuiltinCommands:
    """The builtins commands of :class:`~vlui.served.shell.runner.Shell` (a mixin: ``self`` is the shell)."""

    phone: ServedPhone

    # ---------------------------------------------------------------------------------------------- sh built-ins
    def _echo(self, s: _Session, io: _Io, args: list[str]) -> int:
        newline, escapes = True, True
        while args and re.fullmatch(r"-[neE]+", args[0]):
            for flag in args[0][1:]:
                newline = newline and flag != "n"
                escapes = flag == "e" if flag in "eE" else escapes
            args = args[1:]
        text = " ".join(args)
        if escapes:
            text, stopped = _echo_escapes(text)
            newline = newline and not stopped
        io.say(text + ("\n" if newline else ""))
        return 0

    def _true(self, s: _Session, io: _Io, args: list[str]) -> int:
        return 0

    def _false(self, s: _Session, io: _Io, args: list[str]) -> int:
        return 1

    def _exit(self, s: _Session, io: _Io, args: list[str]) -> int:
        if args and not re.fullmatch(r"-?\d+", args[0]):
            io.complain(f"{SH}: exit: {args[0]}: bad number\n")
            raise _Exit(1)
        raise _Exit((int(args[0]) if args else s.status) & 0xFF)

    def _sleep(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``sleep N[smhd]...``: real time, cut short when the stream is cancelled."""
        if not args:
            raise _UsageError("Needs 1 argument")
        total = 0.0
        units = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
        for arg in args:
            m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)", arg)
            if m is None:
                raise _UsageError(f"Not a number '{arg}'")
            total += float(m.group(1)) * units[m.group(2)]
        deadline = time.monotonic() + total
        while (left := deadline - time.monotonic()) > 0:
            if s.cancelled.wait(min(left, POLL_S)) or self.phone.closed.is_set():
                return 130
        return 0

    def _cd(self, s: _Session, io: _Io, args: list[str]) -> int:
        path = self._path(s, args[0] if args else s.env.get("HOME", "/"))
        with self.phone.lock:
            ok = self.phone.is_dir(path)
        if not ok:
            io.complain(f"{SH}: cd: {args[0]}: No such file or directory\n")
            return 1
        s.cwd = path
        return 0

    def _pwd(self, s: _Session, io: _Io, args: list[str]) -> int:
        io.say(s.cwd + "\n")
        return 0

    def _id(self, s: _Session, io: _Io, args: list[str]) -> int:
        io.say(ID + "\n")
        return 0

    def _whoami(self, s: _Session, io: _Io, args: list[str]) -> int:
        io.say("root\n")
        return 0

    def _sh(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``sh -c LINE``: LINE runs in a new shell (its ``exit`` and ``cd`` stay there)."""
        if len(args) < 2 or args[0] != "-c":
            io.complain(f"{SH}: only 'sh -c COMMAND' is supported by the simulated phone\n")
            return 2
        return self._run_line(args[1], io, _Session(s.cancelled, s.cwd, env=dict(s.env)))

    def _export(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``export NAME=VALUE ...`` (or ``export NAME``, which keeps NAME's value). Every variable of the simulated
        shell reaches the commands it runs, so exported and set are the same here."""
        status = 0
        for arg in args:
            name, eq, value = arg.partition("=")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                io.complain(f"{SH}: export: {arg}: bad variable name\n")
                status = 1
            elif eq:
                s.env[name] = value
            else:
                s.env.setdefault(name, "")
        return status

    def _unset(self, s: _Session, io: _Io, args: list[str]) -> int:
        for name in args:
            s.env.pop(name, None)
        return 0

    def _exec(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``exec CMD ARGS``: CMD replaces the shell, so nothing after it on the line runs."""
        if not args:
            return 0
        raise _Exit(self._call(s, io, args))
