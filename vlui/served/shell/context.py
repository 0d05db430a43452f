"""What every command receives and may raise: the shell it runs in (:class:`ShellApi`, all a command may use of it),
the session (working directory, variables, ``$?``), the output streams, option parsing, and the shell's environment.

A command is a function ``(sh, s, io, args) -> status`` (:data:`Command`): ``sh`` the shell, ``s`` the session, ``io``
the streams, ``args`` the arguments after the command's name. Each command family's module lists its own in a
``COMMANDS`` table, and :mod:`~vlui.served.shell.runner` merges them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from vlui.served.phone import ServedPhone

SH = "/system/bin/sh"


ID = "uid=0(root) gid=0(root) groups=0(root) context=u:r:su:s0"  # an emulator's shell after ``adb root``


ENV = {"ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "EXTERNAL_STORAGE": "/sdcard", "HOME": "/",
       "HOSTNAME": "generic_x86", "PATH": "/sbin:/system/sbin:/system/bin:/system/xbin:/odm/bin:/vendor/bin",
       "SHELL": SH, "TMPDIR": "/data/local/tmp", "USER": "root"}


BIN_DIRS = ("/system/bin/", "/system/xbin/", "/bin/", "/sbin/", "/vendor/bin/")


DUMP_PATH = "/sdcard/window_dump.xml"


POLL_S = 0.1  # how often waits look at ``cancelled`` and ``phone.closed``


# What a client's script may take (docs/security.md). A command line reaches ``sh -c`` as one argument of execve, so it
# is at most the kernel's MAX_ARG_STRLEN; what one command is given, and the variables together, at most Android's
# ARG_MAX (sysconf: a quarter of the 8 MiB stack limit), what execve takes.
MAX_ARG_STRLEN = 131072
ARG_MAX = 2097152
MAX_DEPTH = 64  # functions, compound commands and ``sh`` running inside one another
CPU_BUDGET_S = 10.0  # the CPU time one command line's loops and function calls may take (sleeping is free)
PIPE_INPUT_MAX = 4 << 20  # what a command after ``|`` that is not a line filter is given (it reads when its input ends)


class Exit(Exception):
    """``exit N`` (or ``exec``): the shell ends with status N."""

    def __init__(self, status: int) -> None:
        self.status = status


class PipeClosed(Exception):
    """The reader of a pipe is done (``head`` has its lines): the writer stops, as SIGPIPE stops it on a device."""


class UsageError(Exception):
    """A command used wrongly (an unknown option, an argument missing): the shell prints ``NAME: message``."""


class Abort(Exception):
    """The script stops here (an arithmetic error, an argument past ARG_MAX, the CPU budget spent, the client gone):
    ``message`` (none when the client is gone) and the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message, self.status = message, status


class Break(Exception):
    """``break N`` (``continue`` with ``again``): unwinds N loops."""

    def __init__(self, levels: int, again: bool) -> None:
        self.levels, self.again = levels, again


class Return(Exception):
    """``return N``: the running function ends with status N."""

    def __init__(self, status: int) -> None:
        self.status = status


class Input:
    """A command's standard input: a file given with ``<``, or what the command before ``|`` wrote. ``adb shell
    CMD`` gives none (the host's standard input is not read)."""

    def __init__(self, data: bytes = b"") -> None:
        self.data, self.pos = data, 0

    def readline(self) -> bytes:
        end = self.data.find(b"\n", self.pos)
        end = len(self.data) if end < 0 else end + 1
        line, self.pos = self.data[self.pos:end], end
        return line

    def read(self) -> bytes:
        rest, self.pos = self.data[self.pos:], len(self.data)
        return rest


_NO_INPUT = Input()


@dataclass(frozen=True)
class Io:
    """A command's streams: standard output, standard error and standard input."""

    out: Callable[[bytes], None]
    err: Callable[[bytes], None]
    inp: Input = _NO_INPUT

    def say(self, text: str) -> None:
        if text:
            self.out(text.encode("utf-8", "surrogateescape"))

    def complain(self, text: str) -> None:
        if text:
            self.err(text.encode("utf-8", "surrogateescape"))


def discard(data: bytes) -> None:
    """A stream that keeps nothing (``>/dev/null``)."""


@dataclass
class Session:
    """The state of one shell: it outlives each command of a line, and each line of an interactive session."""

    cancelled: threading.Event
    cwd: str = "/"
    status: int = 0  # $?
    env: dict[str, str] = field(default_factory=lambda: dict(ENV))
    exited: bool = False  # ``exit`` (or ``exec``) ended the shell
    args: list[str] = field(default_factory=list)  # $1 ..., a function's arguments while it runs
    name: str = SH  # $0
    functions: dict = field(default_factory=dict)  # name: the function's body (a node of the language's tree)
    locals: dict[str, str | None] | None = None  # in a function: its ``local`` names and the values they hid
    depth: int = 0  # functions and compound commands running inside one another
    loops: int = 0  # loops running, for ``break`` and ``continue``
    cpu_start: float = 0.0  # the thread's CPU time when the current line began
    env_bytes: int = 0  # the variables' size, as execve counts an environment

    def __post_init__(self) -> None:
        self.env_bytes = sum(len(k) + len(v) + 2 for k, v in self.env.items())

    def setvar(self, name: str, value: str) -> None:
        """``name=value``, refused past ARG_MAX for the variables together (what a device could still pass on to a
        command it runs)."""
        old = self.env.get(name)
        size = self.env_bytes - (len(name) + len(old) + 2 if old is not None else 0) + len(name) + len(value) + 2
        if size > ARG_MAX:
            raise Abort(f"{SH}: {name}: Argument list too long\n", 1)
        self.env[name], self.env_bytes = value, size

    def unsetvar(self, name: str) -> None:
        old = self.env.pop(name, None)
        if old is not None:
            self.env_bytes -= len(name) + len(old) + 2


def getopt(args: list[str], flags: str, valued: str = "") -> tuple[list[tuple[str, str]], list[str]]:
    """Options and operands as bionic's getopt parses them: clustered flags (``-rf``), values attached or not
    (``-n5``, ``-n 5``), options after operands (it permutes), ``--`` ending the options."""
    opts: list[tuple[str, str]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands += args[i:]
            break
        if len(arg) < 2 or arg[0] != "-":
            operands.append(arg)
            continue
        j = 1
        while j < len(arg):
            c = arg[j]
            j += 1
            if c in valued:
                if j < len(arg):
                    opts.append((c, arg[j:]))
                elif i < len(args):
                    opts.append((c, args[i]))
                    i += 1
                else:
                    raise UsageError(f"Needs argument for -{c}")
                break
            if c not in flags:
                raise UsageError(f"Unknown option '{c}'")
            opts.append((c, ""))
    return opts, operands


def without_user(args: list[str]) -> list[str]:
    """``args`` without ``--user N`` (the simulated phone has one user)."""
    out = list(args)
    while "--user" in out:
        i = out.index("--user")
        del out[i:i + 2]
    return out


class RedirectError(Exception):
    """A redirection that cannot be made (a file that cannot be opened or created): the command does not run."""


class ShellApi(Protocol):
    """What a command may use of the shell that runs it (:class:`~vlui.served.shell.runner.Shell` is one), and nothing
    more: the phone, its files as the shell sees them, running other commands, and the session's state."""

    phone: ServedPhone

    def path(self, s: Session, path: str) -> str:
        """The phone's path of ``path`` typed in ``s``: absolute, normalised, the storage links followed."""
        ...

    def read(self, path: str) -> tuple[bytes, str]:
        """A file's content: (content, "") or (b"", why it cannot be read)."""
        ...

    def unwritable(self, path: str) -> str:
        """Why ``path`` cannot be written ("" when it can). The caller holds ``phone.lock``."""
        ...

    def exists(self, path: str) -> bool:
        """Whether ``path`` is a file or a directory of the phone (the system's folders included)."""
        ...

    def call(self, s: Session, io: Io, argv: list[str]) -> int:
        """Run the command ``argv`` (a function, a filter or a command of the table) as a simple command does."""
        ...

    def run_line(self, s: Session, io: Io, line: str) -> int:
        """Parse and run a command line in ``s``; a syntax error is said on ``io`` (status 2)."""
        ...

    def split(self, s: Session, value: str, maxsplit: int = 0) -> list[str]:
        """``value`` split at ``$IFS``, as an unquoted expansion is; at most ``maxsplit`` splits when not 0."""
        ...

    def stopped(self, s: Session) -> bool:
        """Whether the client is gone or the phone closed: a command that waits or streams ends."""
        ...

    def has_command(self, name: str) -> bool:
        """Whether ``name`` (or its path under /system/bin and the like) is a command of the phone's."""
        ...

    def tick(self, s: Session) -> None:
        """Raise :class:`Abort` when the client is gone or the command line has used its CPU time: a command that
        works through a large input calls it as it goes."""
        ...


Command = Callable[[ShellApi, Session, Io, list[str]], int]  # a command: (sh, s, io, args) -> exit status
