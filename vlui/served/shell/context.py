"""What every command receives and may raise: the session (working directory, variables, ``$?``), the output
streams, option parsing, and the shell's environment."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

SH = "/system/bin/sh"


SHELL_PID = 3987  # the shell's process, as ``log`` lines and ``$$`` show it (below the apps' pids, which start at 4120)


ID = "uid=0(root) gid=0(root) groups=0(root) context=u:r:su:s0"  # an emulator's shell after ``adb root``


ENV = {"ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "EXTERNAL_STORAGE": "/sdcard", "HOME": "/",
       "HOSTNAME": "generic_x86", "PATH": "/sbin:/system/sbin:/system/bin:/system/xbin:/odm/bin:/vendor/bin",
       "SHELL": SH, "TMPDIR": "/data/local/tmp", "USER": "root"}


BIN_DIRS = ("/system/bin/", "/system/xbin/", "/bin/", "/sbin/", "/vendor/bin/")


DUMP_PATH = "/sdcard/window_dump.xml"


POLL_S = 0.1  # how often waits look at ``cancelled`` and ``phone.closed``


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


class _PipeClosed(Exception):
    """The reader of a pipe is done (``head`` has its lines): the writer stops, as SIGPIPE stops it on a device."""


class _UsageError(Exception):
    pass


@dataclass(frozen=True)
class _Io:
    out: Callable[[bytes], None]
    err: Callable[[bytes], None]

    def say(self, text: str) -> None:
        if text:
            self.out(text.encode("utf-8", "surrogateescape"))

    def complain(self, text: str) -> None:
        if text:
            self.err(text.encode("utf-8", "surrogateescape"))


def _discard(data: bytes) -> None:
    pass


@dataclass
class _Session:
    """The state of one ``run``: it outlives each command of the line."""

    cancelled: threading.Event
    cwd: str = "/"
    status: int = 0  # $?
    env: dict[str, str] = field(default_factory=lambda: dict(ENV))
    exited: bool = False  # ``exit`` (or ``exec``) ended the shell


def _getopt(args: list[str], flags: str, valued: str = "") -> tuple[list[tuple[str, str]], list[str]]:
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
                    raise _UsageError(f"Needs argument for -{c}")
                break
            if c not in flags:
                raise _UsageError(f"Unknown option '{c}'")
            opts.append((c, ""))
    return opts, operands


class _RedirectError(Exception):
    pass
