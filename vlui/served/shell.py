"""The simulated phone's shell: what ``adb shell`` and ``adb exec-out`` run on it.

``Shell(phone).run(command, write, cancelled) -> int`` runs one command line as ``/system/bin/sh -c`` does on an
Android 10 emulator after ``adb root``: the output (stdout and stderr together, as the legacy ``shell:`` service
merges them) goes through ``write`` and the exit status is returned. Streaming commands (``logcat`` without ``-d``,
``sleep``) return when ``cancelled`` is set or the phone closes.

The language is the part of ``sh`` that ADB clients send: POSIX quoting, ``;``, ``&&``, ``||``, ``$?`` and a few
variables, globs over the phone's files, ``cd``, the redirections ``>``, ``>>`` and ``N>&M``, and ``|`` into the
line filters ``grep``, ``head``, ``tail``, ``wc``, ``sort`` and ``cat``. Nothing is ever evaluated: the line is
parsed into words and every command is a Python function over the phone's data. What a real shell would run but
this one cannot (``$(...)``, backquotes, ``&``, subshells, here-documents) is a syntax error, never something else.

Commands print what Android 10 prints (``input``'s usage, ``wm``'s "Physical size", screencap's raw format,
uiautomator's "hierchary"), so clients written for a real device work unchanged. Input commands call
:class:`~vlui.sim.phone.SimDevice` with exactly the arguments an in-process caller passes, so an episode driven over
ADB leaves the same state and the same log. Where this shell differs from a device on purpose, a comment says so.

Commands (:data:`COMMANDS`, :data:`FILTERS`): ``echo true false exit sleep cd pwd id whoami sh`` · ``getprop
setprop start stop date`` · ``wm input screencap uiautomator`` · ``log logcat`` · ``am pm monkey settings cmd
dumpsys svc service media`` · ``cat ls mkdir rm rmdir cp mv touch chmod chown sqlite3`` · ``grep head tail wc sort``.
"""

from __future__ import annotations

import errno
import io as _io
import posixpath
import re
import sqlite3
import threading
import time
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

from vlui.android.apps import LAUNCHER_PKG, app_uid, apps, short_component
from vlui.android.keys import KEYCODE_NAMES
from vlui.android.logcat import EPOCH, Entry
from vlui.android.state import VOLUME_MAX, VOLUME_MIN
from vlui.errors import VluiError
from vlui.served import configure
from vlui.served.confined_sql import ConfinedDb
from vlui.served.phone import SDK, ServedPhone
from vlui.served.storage import StorageError, read_only
from vlui.sim import intents, services
from vlui.sim.apps import dialer

SH = "/system/bin/sh"
SHELL_PID = 3987  # the shell's process, as ``log`` lines and ``$$`` show it (below the apps' pids, which start at 4120)
ID = "uid=0(root) gid=0(root) groups=0(root) context=u:r:su:s0"  # an emulator's shell after ``adb root``
ENV = {"ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "EXTERNAL_STORAGE": "/sdcard", "HOME": "/",
       "HOSTNAME": "generic_x86", "PATH": "/sbin:/system/sbin:/system/bin:/system/xbin:/odm/bin:/vendor/bin",
       "SHELL": SH, "TMPDIR": "/data/local/tmp", "USER": "root"}
BIN_DIRS = ("/system/bin/", "/system/xbin/", "/bin/", "/sbin/", "/vendor/bin/")
DUMP_PATH = "/sdcard/window_dump.xml"
POLL_S = 0.1  # how often waits look at ``cancelled`` and ``phone.closed``
RGBA_8888, COLORSPACE_SRGB = 1, 1  # screencap's raw header: format and (Android 9 and later) colour space
PNG_LEVEL = 1  # zlib level of ``screencap -p``: a device's encoder compresses harder, and takes ~100 ms longer
PROP_VALUE_MAX = 91  # bytes of a property's value (bionic's PROP_VALUE_MAX, less its NUL); ro. ones may be longer
MAX_SET_PROPS = 1024  # properties a client may add: the property area of a device is a few hundred KiB
BATTERY_LEVEL = 100  # an emulator's battery: full, on AC power
with open(Path(__file__).parent / "data" / "packages.yaml", encoding="utf-8") as _f:
    PACKAGES: dict[str, dict] = yaml.safe_load(_f)
SYSTEM_PACKAGES = ("android", "com.android.phone", "com.android.providers.settings", "com.android.shell",
                   "com.android.systemui", "com.google.android.inputmethod.latin", LAUNCHER_PKG)
_PRIORITY = {"V": 2, "D": 3, "I": 4, "W": 5, "E": 6, "F": 7, "A": 7, "S": 8}  # android_LogPriority


# ================================================================================================== parsing
class _SyntaxError(Exception):
    """A line this shell does not run; the message follows ``/system/bin/sh: ``."""


def _not_supported(what: str) -> _SyntaxError:
    return _SyntaxError(f"{what}: not supported by the simulated phone's shell")


@dataclass
class _Word:
    """A shell word as written: its parts keep what was quoted, and ``$`` expansions stay unexpanded until the word
    runs (``$?`` changes between the commands of one line). Kinds: ``lit`` (unquoted text), ``quoted`` (text inside
    quotes or after a backslash), ``var`` and ``qvar`` (a variable, outside and inside double quotes)."""

    parts: list[tuple[str, str]] = field(default_factory=list)
    quoted: bool = False  # any quotes: ``''`` is a word, an unquoted empty expansion is not

    def add(self, kind: str, text: str) -> None:
        if self.parts and self.parts[-1][0] == kind and kind in ("lit", "quoted"):
            self.parts[-1] = (kind, self.parts[-1][1] + text)
        else:
            self.parts.append((kind, text))

    def io_number(self) -> int | None:
        """The file descriptor a word like the ``2`` of ``2>&1`` names, else None."""
        if len(self.parts) == 1 and self.parts[0][0] == "lit" and self.parts[0][1].isdigit():
            return int(self.parts[0][1])
        return None


@dataclass
class _Redirect:
    fd: int  # 1 or 2
    op: str  # ">", ">>" or ">&"
    target: _Word


@dataclass
class _Command:
    words: list[_Word]
    redirects: list[_Redirect]


_OPERATORS = ("&&", "||", ";;", ">>", ">&", ">|", "<<", "<&", "<>", "&", "|", ";", "<", ">", "(", ")", "\n")
_UNSUPPORTED = {"&": "background jobs (&)", "<<": "here-documents (<<)", "(": "subshells ( )", ")": "subshells ( )",
                "<": "input redirection (<)", "<&": "input redirection (<&)", "<>": "input redirection (<>)"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _lex(line: str) -> list[_Word | str | int]:
    """Words, operators (strings) and the file descriptors (ints) written just before ``>``."""
    tokens: list[_Word | str | int] = []
    word: _Word | None = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t\r" or c in ";&|<>()\n":
            if word is not None:
                fd = word.io_number() if c in "<>" else None
                tokens.append(word if fd is None else fd)
                word = None
            if c in " \t\r":
                i += 1
            else:
                op = next(o for o in _OPERATORS if line.startswith(o, i))
                tokens.append(op)
                i += len(op)
            continue
        if c == "#" and word is None:  # a comment, to the end of the line
            end = line.find("\n", i)
            i = n if end < 0 else end
            continue
        if word is None:
            word = _Word()
        if c == "\\":
            if line.startswith("\\\n", i):  # a continued line
                i += 2
                continue
            word.add("quoted", line[i + 1:i + 2] or "\\")
            i += 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise _SyntaxError("no closing quote")
            word.add("quoted", line[i + 1:end])
            word.quoted = True
            i = end + 1
        elif c == '"':
            i = _lex_double_quoted(line, i + 1, word)
        elif c == "$":
            i = _lex_dollar(line, i, word, quoted=False)
        elif c == "`":
            raise _not_supported("command substitution (`...`)")
        else:
            word.add("lit", c)
            i += 1
    if word is not None:
        tokens.append(word)
    return tokens


def _lex_double_quoted(line: str, i: int, word: _Word) -> int:
    word.quoted = True
    while i < len(line):
        c = line[i]
        if c == '"':
            return i + 1
        if c == "\\" and line[i + 1:i + 2] in ("$", "`", '"', "\\", "\n"):
            if line[i + 1] != "\n":
                word.add("quoted", line[i + 1])
            i += 2
        elif c == "$":
            i = _lex_dollar(line, i, word, quoted=True)
        elif c == "`":
            raise _not_supported("command substitution (`...`)")
        else:
            word.add("quoted", c)
            i += 1
    raise _SyntaxError("no closing quote")


def _lex_dollar(line: str, i: int, word: _Word, quoted: bool) -> int:
    kind = "qvar" if quoted else "var"
    nxt = line[i + 1:i + 2]
    if nxt == "(":
        raise _not_supported("command substitution $(...)")
    if nxt and (nxt in "?$#!-*@" or nxt.isdigit()):
        word.add(kind, nxt)
        return i + 2
    if nxt == "{":
        end = line.find("}", i + 2)
        name = line[i + 2:end] if end > 0 else ""
        if not (_NAME.fullmatch(name) or name.isdigit() or (len(name) == 1 and name in "?$#!-*@")):
            raise _SyntaxError(f"{line[i:end + 1] if end > 0 else line[i:]}: bad substitution")
        word.add(kind, name)
        return end + 1
    m = _NAME.match(line, i + 1)
    if m is not None:
        word.add(kind, m.group())
        return m.end()
    word.add("quoted" if quoted else "lit", "$")
    return i + 1


class _Parser:
    """``list := pipeline ((; | && | || | newline) pipeline)*``, ``pipeline := command (| command)*``."""

    def __init__(self, line: str) -> None:
        self.tokens = _lex(line)
        self.i = 0

    def peek(self) -> _Word | str | int | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> _Word | str | int | None:
        tok = self.peek()
        self.i += 1
        return tok

    @staticmethod
    def unexpected(tok) -> _SyntaxError:
        if tok is None:
            return _SyntaxError("syntax error: unexpected EOF")
        if tok in _UNSUPPORTED:
            return _not_supported(_UNSUPPORTED[tok])
        return _SyntaxError(f"syntax error: '{'newline' if tok == chr(10) else tok}' unexpected")

    def parse(self) -> list[tuple[str, list[_Command]]]:
        """(connector, pipeline) pairs: the connector (``;``, ``&&`` or ``||``) says when the pipeline runs."""
        items: list[tuple[str, list[_Command]]] = []
        connector = ";"
        while self.peek() is not None:
            if self.peek() == "\n" and connector == ";":
                self.take()
                continue
            items.append((connector, self.pipeline()))
            tok = self.take()
            if tok is None:
                break
            if tok in (";", "\n"):
                connector = ";"
            elif tok in ("&&", "||"):
                connector = tok
                self.skip_newlines()
                if self.peek() is None:
                    raise self.unexpected(None)
            else:
                raise self.unexpected(tok)
        return items

    def skip_newlines(self) -> None:
        while self.peek() == "\n":
            self.take()

    def pipeline(self) -> list[_Command]:
        commands = [self.command()]
        while self.peek() == "|":
            self.take()
            self.skip_newlines()
            commands.append(self.command())
        return commands

    def command(self) -> _Command:
        cmd = _Command([], [])
        while True:
            tok = self.peek()
            if isinstance(tok, _Word):
                cmd.words.append(self.take())
            elif isinstance(tok, int) or tok in (">", ">>", ">|", ">&", "<", "<&", "<>"):
                fd = self.take() if isinstance(tok, int) else 1
                op = self.take()
                if op not in (">", ">>", ">|", ">&"):
                    raise self.unexpected(op)
                target = self.take()
                if not isinstance(target, _Word):
                    raise self.unexpected(target)
                if fd not in (1, 2):
                    raise _not_supported(f"redirecting file descriptor {fd}")
                cmd.redirects.append(_Redirect(fd, ">" if op == ">|" else op, target))
            else:
                if not cmd.words and not cmd.redirects:
                    raise self.unexpected(tok)
                return cmd


# ================================================================================================== I/O
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


# ================================================================================================== filters
class _Stage:
    """A command after ``|``: what the command before it writes is :meth:`feed` to it."""

    def feed(self, data: bytes) -> None:
        pass

    def close(self) -> int:
        return 0


class _After(_Stage):
    """A command that reads no input: it runs when its input ends, and what it was sent is dropped."""

    def __init__(self, run: Callable[[], int]) -> None:
        self.run = run

    def close(self) -> int:
        return self.run()


class _Filter(_Stage):
    """A command that reads lines (from its input, or from the files named on its command line)."""

    name = ""
    flags, valued = "", ""

    def __init__(self, args: list[str], out: Callable[[bytes], None]) -> None:
        self.out = out
        self.status = 0
        self._pending = b""
        opts, self.files = _getopt(self.normalise(args), self.flags, self.valued)
        self.setup(opts)

    def normalise(self, args: list[str]) -> list[str]:
        return args

    def setup(self, opts: list[tuple[str, str]]) -> None:
        pass

    def feed(self, data: bytes) -> None:
        *lines, self._pending = (self._pending + data).split(b"\n")
        for line in lines:
            self.line(line + b"\n")

    def close(self) -> int:
        if self._pending:
            self.line(self._pending)
            self._pending = b""
        self.finish()
        return self.status

    def line(self, line: bytes) -> None:
        self.out(line)

    def finish(self) -> None:
        pass


class _Cat(_Filter):
    name, flags = "cat", "uv"

    def feed(self, data: bytes) -> None:
        self.out(data)


def _count_option(args: list[str]) -> list[str]:
    """``head -5`` is ``head -n 5``."""
    return [f"-n{a[1:]}" if re.fullmatch(r"-\d+", a) else a for a in args]


def _count(value: str) -> int:
    if not value.isdigit():
        raise _UsageError(f"Not a number '{value}'")
    return int(value)


class _Head(_Filter):
    name, valued = "head", "nc"

    def normalise(self, args: list[str]) -> list[str]:
        return _count_option(args)

    def setup(self, opts: list[tuple[str, str]]) -> None:
        self.left, self.bytes = 10, False  # lines, or bytes with -c
        for opt, value in opts:
            self.left, self.bytes = _count(value), opt == "c"

    def feed(self, data: bytes) -> None:
        if self.left <= 0:
            raise _PipeClosed
        if not self.bytes:
            super().feed(data)
            return
        self.out(data[:self.left])
        self.left -= min(len(data), self.left)
        if self.left == 0:
            raise _PipeClosed

    def line(self, line: bytes) -> None:
        if self.left > 0:
            self.out(line)
            self.left -= 1
            if self.left == 0:
                raise _PipeClosed


class _Tail(_Filter):
    name, valued = "tail", "n"

    def normalise(self, args: list[str]) -> list[str]:
        return _count_option(args)

    def setup(self, opts: list[tuple[str, str]]) -> None:
        self.count, self.start = 10, None  # the last ``count`` lines, or from line ``start`` (``-n +K``)
        self.lines: list[bytes] = []
        for _, value in opts:
            if value.startswith("+") and value[1:].isdigit():
                self.start = max(1, int(value[1:]))
            else:
                self.count = _count(value)

    def line(self, line: bytes) -> None:
        self.lines.append(line)

    def finish(self) -> None:
        keep = self.lines[self.start - 1:] if self.start else (self.lines[-self.count:] if self.count else [])
        self.out(b"".join(keep))


class _Wc(_Filter):
    name, flags = "wc", "lwcm"

    def setup(self, opts: list[tuple[str, str]]) -> None:
        self.which = [o for o, _ in opts] or ["l", "w", "c"]
        self.counts = {"l": 0, "w": 0, "c": 0, "m": 0}

    def line(self, line: bytes) -> None:
        self.counts["l"] += line.endswith(b"\n")
        self.counts["w"] += len(line.split())
        self.counts["c"] += len(line)
        self.counts["m"] += len(line.decode("utf-8", "replace"))

    def finish(self) -> None:
        order = [o for o in "lwmc" if o in self.which]
        self.out((" ".join(str(self.counts[o]) for o in order) + "\n").encode())


class _Sort(_Filter):
    name, flags = "sort", "rnu"

    def setup(self, opts: list[tuple[str, str]]) -> None:
        self.options = {o for o, _ in opts}
        self.lines: list[bytes] = []

    def line(self, line: bytes) -> None:
        self.lines.append(line.rstrip(b"\n"))

    def finish(self) -> None:
        lines = sorted(set(self.lines)) if "u" in self.options else self.lines

        def number(line: bytes) -> float:
            m = re.match(rb"\s*-?\d+(\.\d*)?", line)
            return float(m.group()) if m else 0.0

        lines = sorted(lines, key=number if "n" in self.options else None, reverse="r" in self.options)
        self.out(b"".join(line + b"\n" for line in lines))


_POSIX_CLASSES = {"[:digit:]": "0-9", "[:alpha:]": "A-Za-z", "[:alnum:]": "A-Za-z0-9", "[:upper:]": "A-Z",
                  "[:lower:]": "a-z", "[:space:]": r"\s", "[:xdigit:]": "0-9A-Fa-f", "[:punct:]": r"!-/:-@\[-`{-~"}


def _basic_regex(pattern: str) -> str:
    """A grep basic regular expression in Python's syntax: there ``\\( \\) \\{ \\} \\| \\+ \\?`` are the operators
    and the bare characters are literals."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "(){}|+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "(){}|+?" else c)
        i += 1
    return "".join(out)


class _Grep(_Filter):
    name, flags, valued = "grep", "vEFicqwxnsH", "e"

    def setup(self, opts: list[tuple[str, str]]) -> None:
        o = {k for k, _ in opts}
        patterns = [v for k, v in opts if k == "e"]
        if not patterns:
            if not self.files:
                raise _UsageError("no pattern")
            patterns = [self.files.pop(0)]
        self.invert, self.count_only, self.quiet, self.numbered = "v" in o, "c" in o, "q" in o, "n" in o
        regexes = []
        for p in patterns:
            for alt in p.split("\n"):
                if "F" in o:
                    rx = re.escape(alt)
                else:
                    for cls, py in _POSIX_CLASSES.items():
                        alt = alt.replace(cls, py)
                    rx = alt if "E" in o else _basic_regex(alt)
                if "w" in o:
                    rx = rf"(?<!\w)(?:{rx})(?!\w)"
                if "x" in o:
                    rx = rf"^(?:{rx})$"
                regexes.append(rx)
        try:
            self.regex = re.compile("|".join(f"(?:{r})" for r in regexes), re.IGNORECASE if "i" in o else 0)
        except re.error as err:
            raise _UsageError(f"bad regex '{'|'.join(patterns)}': {err}") from None
        self.matches = self.lines_read = 0
        self.status = 1

    def line(self, line: bytes) -> None:
        self.lines_read += 1
        text = line.rstrip(b"\n").decode("utf-8", "surrogateescape")
        if (self.regex.search(text) is not None) == self.invert:
            return
        self.matches += 1
        self.status = 0
        if self.quiet:
            raise _PipeClosed
        if not self.count_only:
            prefix = f"{self.lines_read}:".encode() if self.numbered else b""
            self.out(prefix + line + (b"" if line.endswith(b"\n") else b"\n"))

    def finish(self) -> None:
        if self.count_only:
            self.out(f"{self.matches}\n".encode())


FILTERS: dict[str, type[_Filter]] = {f.name: f for f in (_Cat, _Grep, _Head, _Tail, _Wc, _Sort)}


# ================================================================================================== screencap
@dataclass
class _Screencap:
    """A frame in screencap's formats: converted once, so screencaps of a screen seen before are almost free."""

    frame: np.ndarray
    raw: bytes | memoryview
    png: bytes | None = None


SCREENCAP_CACHE = 8  # frames kept converted per phone (9 MB each at 1080x2160): an episode's screens recur

# One cache per served phone, dropped with it, most recent last. Frames are the renderer's read-only arrays: the same
# array is the same picture, so the identity of the frame is the key (the entry holds the frame, so it stays unique).
_SCREENCAPS: weakref.WeakKeyDictionary[ServedPhone, OrderedDict[int, _Screencap]] = weakref.WeakKeyDictionary()


def rgba8888(frame: np.ndarray) -> memoryview:
    """``(H, W, 3)`` uint8 RGB as ``screencap`` writes it raw on Android 10: width, height, format (1: RGBA_8888) and
    colour space (1: sRGB) as little-endian uint32, then the rows as RGBA with alpha 255."""
    h, w, _ = frame.shape
    n = h * w
    flat = np.ascontiguousarray(frame).reshape(-1)
    out = np.empty(4 + n, "<u4")
    out[:4] = (w, h, RGBA_8888, COLORSPACE_SRGB)
    # Pixel i read as a little-endian uint32 at byte 3i holds R, G, B and the next pixel's R; setting the top byte
    # to 0xFF makes it R, G, B, 255. One vectorised pass (~2 ms at 1080x2160) instead of a strided copy (~20 ms).
    pixels = np.ndarray((n - 1,), "<u4", buffer=flat, strides=(3,))
    np.bitwise_or(pixels, 0xFF000000, out=out[4:-1])
    r, g, b = (int(v) for v in flat[-3:])
    out[-1] = r | g << 8 | b << 16 | 0xFF000000
    out.setflags(write=False)  # read-only: the transport sends it without a copy
    return memoryview(out).cast("B")


def _png(raw: bytes | memoryview, width: int, height: int) -> bytes:
    img = Image.frombuffer("RGBA", (width, height), memoryview(raw)[16:], "raw", "RGBA", 0, 1)
    buf = _io.BytesIO()
    img.save(buf, format="PNG", compress_level=PNG_LEVEL)
    return buf.getvalue()


# ================================================================================================== logcat
@dataclass
class _LogQuery:
    """What one ``logcat`` prints: its options and filter specs."""

    fmt: str = "threadtime"
    modifiers: frozenset[str] = frozenset()  # -v epoch, -v year, ...: how the time is written
    dump: bool = False
    clear: bool = False
    sizes: bool = False
    tail: int | None = None  # -t/-T N: start with the last N entries
    since_ms: int | None = None  # -t/-T TIME: start with the entries at or after TIME
    max_count: int | None = None
    default: str = "V"
    levels: dict[str, str] = field(default_factory=dict)
    regex: re.Pattern | None = None
    pid: int | None = None
    buffers: tuple[str, ...] = ("main", "system", "crash")

    def wants(self, e: Entry) -> bool:
        level = self.levels.get(e.tag, self.default)
        return (_PRIORITY.get(e.level, 2) >= _PRIORITY[level] and level != "S"
                and (self.pid is None or e.pid == self.pid)
                and (self.regex is None or self.regex.search(e.message) is not None))

    @property
    def silent_buffers(self) -> bool:
        """The simulated phone keeps one log, shown for main, system and crash; the other buffers stay empty."""
        return not set(self.buffers) & {"main", "system", "crash", "all", "default"}


_LOG_FORMATS = ("threadtime", "brief", "time", "tag", "process", "thread", "raw", "long")
# -v modifiers: epoch, year and usec change the time as on a device; the others (colours, uid, monotonic, ...) are
# accepted and print as without them
_LOG_MODIFIERS = ("epoch", "year", "usec", "monotonic", "UTC", "zone", "color", "colour", "descriptive",
                  "printable", "uid")


def _format_entry(fmt: str, e: Entry, modifiers: frozenset[str] = frozenset()) -> str:
    """``e`` as ``logcat -v FMT`` prints it; a message of several lines gets the header on each, as logcat does."""
    t = EPOCH + timedelta(milliseconds=e.time_ms)
    frac = f"{t.microsecond:06d}" if "usec" in modifiers else f"{t.microsecond // 1000:03d}"
    if "epoch" in modifiers:  # the log's times are ms since the Unix epoch
        stamp = f"{e.time_ms // 1000:>5d}.{frac}"
    else:
        stamp = f"{t:%Y-%m-%d %H:%M:%S}.{frac}" if "year" in modifiers else f"{t:%m-%d %H:%M:%S}.{frac}"
    if fmt == "long":
        return f"[ {stamp} {e.pid:5d}:{e.tid:5d} {e.level}/{e.tag:<8} ]\n{e.message}\n\n"
    prefix = {"threadtime": f"{stamp} {e.pid:5d} {e.tid:5d} {e.level} {e.tag:<8}: ",
              "brief": f"{e.level}/{e.tag:<8}({e.pid:5d}): ",
              "time": f"{stamp} {e.level}/{e.tag:<8}({e.pid:5d}): ",
              "tag": f"{e.level}/{e.tag:<8}: ",
              "process": f"{e.level}({e.pid:5d}) ",
              "thread": f"{e.level}({e.pid:5d}:{e.tid:5d}) ",
              "raw": ""}[fmt]
    suffix = f"  ({e.tag})" if fmt == "process" else ""
    return "".join(f"{prefix}{line}{suffix}\n" for line in e.message.split("\n"))


def _log_time(value: str, year: int) -> int:
    """A ``-t``/``-T`` time (``MM-DD hh:mm:ss.mmm``, optionally with the year first) as ms since the epoch."""
    for fmt, text in (("%m-%d %H:%M:%S.%f", f"{value}"), ("%Y-%m-%d %H:%M:%S.%f", value)):
        try:
            when = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if fmt.startswith("%m"):
            when = when.replace(year=year)
        return int((when - EPOCH).total_seconds() * 1000)
    raise _UsageError(f"-t/-T \"{value}\" is neither a count nor a time like 'MM-DD hh:mm:ss.mmm'")


def _logcat_query(args: list[str], year: int, env_tags: str | None = None) -> _LogQuery:
    """The query of ``logcat ARGS``. ``env_tags``: ``$ANDROID_LOG_TAGS``, the filter specs used when ARGS give
    none (``adb logcat`` exports the host's, ``''`` when unset)."""
    q = _LogQuery()
    long_options = {"--pid": "pid", "--regex": "-e", "--max-count": "-m", "--format": "-v", "--buffer": "-b",
                    "--clear": "-c", "--dump": "-d"}
    short: list[str] = []
    buffers: list[str] = []
    args = list(args)
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        if not arg.startswith("--") or arg == "--":
            short.append(arg)
            continue
        if name not in long_options:
            raise _UsageError(f"unrecognized option '{arg}'")
        if name in ("--clear", "--dump"):
            short.append(long_options[name])
            continue
        if not eq:
            if not args:
                raise _UsageError(f"option '{name}' requires an argument")
            value = args.pop(0)
        if name != "--pid":
            short += [long_options[name], value]
        elif value.isdigit():
            q.pid = int(value)
        else:
            raise _UsageError(f"--pid={value} is not a process id")
    opts, specs = _getopt(short, "cdsgDBLS", "bvtTmeGfrn")
    for opt, value in opts:
        if opt == "c":
            q.clear = True
        elif opt == "d":
            q.dump = True
        elif opt == "s":
            q.default = "S"
        elif opt == "g":
            q.sizes = True
        elif opt == "v":
            for word in value.replace(",", " ").split():
                if word in _LOG_FORMATS:
                    q.fmt = word
                elif word in _LOG_MODIFIERS:
                    q.modifiers |= {word}
                else:
                    raise _UsageError(f"Invalid parameter \"{word}\" to -v; the simulated phone prints "
                                      f"{', '.join(_LOG_FORMATS)} (with {', '.join(_LOG_MODIFIERS)})")
        elif opt in "tT":
            q.dump = q.dump or opt == "t"
            if value.isdigit():
                q.tail = int(value)
            else:
                q.since_ms = _log_time(value, year)
        elif opt == "m":
            if not value.isdigit() or int(value) == 0:
                raise _UsageError(f"-m \"{value}\" isn't an integer greater than zero")
            q.max_count = int(value)
        elif opt == "e":
            try:
                q.regex = re.compile(value)
            except re.error as err:
                raise _UsageError(f"bad regex '{value}': {err}") from None
        elif opt == "b":
            buffers += value.split(",")
        elif opt in "frn":
            raise _UsageError(f"-{opt} (log files) is not supported by the simulated phone")
    if buffers:
        q.buffers = tuple(buffers)
    from_env = not specs and env_tags is not None
    for spec in specs or (env_tags or "").split():
        # as liblog's android_log_addFilterRule: the tag runs to the first ':', the level is the one character after
        # it (what follows is ignored), and "*" with no level means D
        tag, colon, rest = spec.partition(":")
        level = rest[:1].upper() if colon else ("D" if tag == "*" else "V")
        if not tag or level not in _PRIORITY or level == "A":
            if from_env:
                raise _UsageError(f"Invalid filter expression '{spec}' in ANDROID_LOG_TAGS")
            raise _UsageError(f"Invalid filter expression '{spec}'")
        if tag == "*":
            q.default = level
        else:
            q.levels[tag] = level
    return q


class _LogPrinter:
    """Writes entries as one ``logcat`` invocation does: its divider before the first, at most ``max_count``."""

    def __init__(self, q: _LogQuery, out: Callable[[bytes], None]) -> None:
        self.q, self.out = q, out
        self.started = False
        self.printed = 0

    def print(self, entries: list[Entry]) -> bool:
        """Print what ``entries`` the query wants; True once ``max_count`` lines are out."""
        if not entries:
            return False
        chunks = []
        if not self.started and (len(self.q.buffers) > 1 or "all" in self.q.buffers):
            chunks.append("--------- beginning of main\n")  # logcat's divider when it reads several buffers
        self.started = True
        done = False
        for e in entries:
            if self.q.wants(e):
                chunks.append(_format_entry(self.q.fmt, e, self.q.modifiers))
                self.printed += 1
                if self.q.max_count is not None and self.printed >= self.q.max_count:
                    done = True
                    break
        if chunks:
            self.out("".join(chunks).encode("utf-8", "surrogateescape"))
        return done


# ================================================================================================== input
# Android 10's ``input`` (frameworks/base/cmds/input): its sources, commands and usage text.
_INPUT_SOURCES = ("keyboard", "dpad", "gamepad", "touchscreen", "mouse", "stylus", "trackball", "touchpad",
                  "touchnavigation", "joystick")
_INPUT_USAGE = """Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]

The sources are: 
{sources}

-d: specify the display ID.
      (Default: -1 for key event, 0 for motion event if not specified.)
The commands and default sources are:
      text <string> (Default: touchscreen)
      keyevent [--longpress] <key code number or name> ... (Default: keyboard)
      tap <x> <y> (Default: touchscreen)
      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      press (Default: trackball)
      roll <dx> <dy> (Default: trackball)
""".format(sources="\n".join(f"      {s}" for s in _INPUT_SOURCES))
# KeyEvent's names of the keys the simulated phone acts on (``input keyevent NAME``, with or without KEYCODE_)
_KEY_NAMES = {**KEYCODE_NAMES, 17: "STAR", 18: "POUND", 55: "COMMA", 56: "PERIOD", 62: "SPACE", 69: "MINUS",
              70: "EQUALS", 71: "LEFT_BRACKET", 72: "RIGHT_BRACKET", 73: "BACKSLASH", 74: "SEMICOLON",
              75: "APOSTROPHE", 76: "SLASH", 77: "AT", 81: "PLUS", **{7 + d: str(d) for d in range(10)},
              **{29 + i: chr(ord("A") + i) for i in range(26)}}
_KEYCODES = {name: code for code, name in _KEY_NAMES.items()}
_JAVA_FLOAT = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")


LOG_MAX_PAYLOAD = 4068  # liblog's LOGGER_ENTRY_MAX_PAYLOAD: priority, tag, NUL, message, NUL


def _log_payload(tag: str, message: str) -> str:
    """``message`` as liblog stores it: cut so that the entry's payload fits :data:`LOG_MAX_PAYLOAD` bytes."""
    room = max(0, LOG_MAX_PAYLOAD - 3 - len(tag.encode("utf-8", "surrogateescape")))
    raw = message.encode("utf-8", "surrogateescape")
    return message if len(raw) <= room else raw[:room].decode("utf-8", "ignore")


def _java_float(text: str) -> float:
    """``Float.parseFloat``'s syntax (``1.5``, ``2e3``, ``7f``, ``NaN``). The value is Python's float, not Java's
    32-bit one, so that ``input tap 540.1 ...`` reaches the phone as the 540.1 an in-process caller passes."""
    text = text.strip()
    if not _JAVA_FLOAT.fullmatch(text):
        raise ValueError(text)
    return float(text.rstrip("fFdD"))


def _java_int(text: str) -> int:
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError(text)
    return int(text)


def _keycode(arg: str) -> int:
    """``KeyEvent.keyCodeFromString``: a number, or a name with or without ``KEYCODE_``; 0 (unknown) otherwise."""
    try:
        return _java_int(arg)
    except ValueError:
        return _KEYCODES.get(arg.removeprefix("KEYCODE_"), 0)


def _input_text(arg: str) -> str:
    """What ``input text ARG`` types: Android 10's loop that turns ``%s`` into a space (``%%s`` into ``% ``)."""
    chars = list(arg)
    escape = False
    i = 0
    while i < len(chars):
        if escape:
            escape = False
            if chars[i] == "s":
                chars[i] = " "
                del chars[i - 1]
                i -= 1
        if chars[i] == "%":
            escape = True
        i += 1
    return "".join(chars)


# ================================================================================================== the shell
@dataclass
class _Intent:
    action: str | None = None
    categories: list[str] = field(default_factory=list)
    data: str | None = None
    mime: str | None = None
    flags: int = 0
    package: str | None = None
    component: tuple[str, str] | None = None  # (package, class)
    extras: bool = False

    def __str__(self) -> str:
        """``Intent.toShortString`` inside ``Intent { }``, as ``am`` prints it."""
        parts = [f"act={self.action}" if self.action else "",
                 f"cat=[{','.join(self.categories)}]" if self.categories else "",
                 f"dat={_safe_uri(self.data)}" if self.data else "", f"typ={self.mime}" if self.mime else "",
                 f"flg=0x{self.flags:x}" if self.flags else "", f"pkg={self.package}" if self.package else "",
                 f"cmp={short_component(*self.component)}" if self.component else "",
                 "(has extras)" if self.extras else ""]
        return "Intent { " + " ".join(p for p in parts if p) + " }"


def _safe_uri(uri: str) -> str:
    """``Uri.toSafeString``: a phone number (``tel:``, ``sms:``, ...) is printed as one ``x`` per character."""
    scheme, sep, rest = uri.partition(":")
    if sep and scheme in ("tel", "sip", "sms", "smsto", "mailto", "nfc"):
        return f"{scheme}:{'x' * len(rest)}"
    return uri


_AM_FLAGS = {"-W", "-S", "-D", "-N", "--streaming", "--track-allocation", "--grant-read-uri-permission",
             "--grant-write-uri-permission", "--exclude-stopped-packages", "--include-stopped-packages",
             "--debug-log-resolution", "--receiver-registered-only", "--receiver-replace-pending"}
_AM_VALUED = {"-a", "-d", "-t", "-c", "-n", "-f", "-p", "--user", "-R", "-P", "--start-profiler", "--sampling",
              "--display", "--windowingMode", "--activityType", "--task", "--esn"}
_AM_EXTRAS = {"-e", "--es", "--ez", "--ei", "--el", "--ef", "--eu", "--ecn", "--eia", "--eial", "--ela", "--elal",
              "--efa", "--efal", "--esa", "--esal"}
MAIN, LAUNCHER = "android.intent.action.MAIN", "android.intent.category.LAUNCHER"
CALL, AIRPLANE_MODE = "android.intent.action.CALL", "android.intent.action.AIRPLANE_MODE"
_SETTINGS_USAGE = """Settings provider (settings) commands:
  help
      Print this help text.
  get [--user <USER_ID> | current] NAMESPACE KEY
      Retrieve the current value of KEY.
  put [--user <USER_ID> | current] NAMESPACE KEY VALUE [TAG] [default]
      Change the contents of KEY to VALUE.
  delete [--user <USER_ID> | current] NAMESPACE KEY
      Delete the entry for KEY.
  list [--user <USER_ID> | current] NAMESPACE
      Print all defined keys.
      NAMESPACE is one of {system, secure, global}, case-insensitive
"""
_ECHO_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                 "\\": "\\"}


def _without_user(args: list[str]) -> list[str]:
    """``args`` without ``--user N`` (the simulated phone has one user)."""
    out = list(args)
    while "--user" in out:
        i = out.index("--user")
        del out[i:i + 2]
    return out


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


def _sqlite_value(value) -> bytes:
    """A value as sqlite3's list mode prints it: NULL empty, reals always with a point (``printf %!.15g``)."""
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, float):
        text = "%.15g" % value
        if text in ("inf", "-inf"):
            return b"Inf" if text == "inf" else b"-Inf"
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa and mantissa.lstrip("-").isdigit():
            mantissa += ".0"
        return (mantissa + (f"e{exponent}" if e else "")).encode()
    return str(value).encode("utf-8", "surrogateescape")


def _sql_statements(sql: str) -> Iterator[str]:
    """The complete statements of ``sql``, one by one (a ``;`` inside a string does not end one)."""
    buf = ""
    for piece in re.split(r"(;)", sql):
        buf += piece
        if piece == ";" and sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                yield buf
            buf = ""
    if buf.strip(" \t\r\n;"):
        yield buf


class Shell:
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

    # ---------------------------------------------------------------------------------------------- files
    def _path(self, s: _Session, path: str) -> str:
        norm = posixpath.normpath(posixpath.join(s.cwd, path))
        return "/" + norm.lstrip("/")

    def _read(self, path: str) -> tuple[bytes, str]:
        """(content, "") or (b"", why it cannot be read)."""
        if path in ("/dev/null", "/dev/zero"):
            return b"", ""
        with self.phone.lock:
            data = self.phone.files.get(path)
            if data is not None:
                return data, ""
            return b"", "Is a directory" if self.phone.is_dir(path) else "No such file or directory"

    def _unwritable(self, path: str) -> str:
        """Why ``path`` cannot be written ("" when it can). The caller holds the lock."""
        if self.phone.is_dir(path):
            return "Is a directory"
        parent = posixpath.dirname(path)
        while parent != "/" and parent not in self.phone.files:
            parent = posixpath.dirname(parent)
        if parent != "/":
            return "Not a directory"
        if not self.phone.is_dir(posixpath.dirname(path)):
            return "No such file or directory"
        return "Read-only file system" if read_only(path) else ""

    def _exists(self, path: str) -> bool:
        return path in self.phone.files or self.phone.is_dir(path)

    def _tree(self, path: str) -> list[str]:
        """The keys of ``files`` at or under ``path``."""
        prefix = path.rstrip("/") + "/"
        return [p for p in self.phone.files if p == path or p.startswith(prefix)]

    def _ls(self, s: _Session, io: _Io, args: list[str]) -> int:
        opts, operands = _getopt(args, "la1dAhnF")
        o = {k for k, _ in opts}
        errors, blocks = [], []
        with self.phone.lock:
            now = self.phone.device.now().strftime("%Y-%m-%d %H:%M")
            files, dirs = [], []
            for arg in operands or ["."]:
                path = self._path(s, arg)
                if path in self.phone.files or (path != "/" and "d" in o and self.phone.is_dir(path)):
                    files.append((arg, path))
                elif self.phone.is_dir(path):
                    dirs.append((arg, path))
                else:
                    errors.append(f"ls: {arg}: No such file or directory\n")

            def rows(entries: list[tuple[str, str]]) -> str:
                if "l" not in o:
                    return "".join(name + "\n" for name, _ in entries)
                stats = [(name, p not in self.phone.files, len(self.phone.files.get(p, b"")) or 4096)
                         for name, p in entries]
                width = max((len(str(size)) for _, _, size in stats), default=1)
                return "".join(f"{'drwxrwx--x 2' if is_dir else '-rw-rw---- 1'} root root {size:>{width}} {now} "
                               f"{name}\n" for name, is_dir, size in stats)

            if files:
                blocks.append(rows(files))
            for arg, path in dirs:
                names = [n for n in self.phone.list_dir(path) if o & {"a", "A"} or not n.startswith(".")]
                entries = [(n, posixpath.join(path, n)) for n in names]
                total = sum(-(-len(self.phone.files.get(p, b"")) // 4096) * 4 for _, p in entries)
                blocks.append((f"{arg}:\n" if len(files) + len(dirs) > 1 else "")
                              + (f"total {total}\n" if "l" in o else "") + rows(entries))
        io.complain("".join(errors))
        io.say("\n".join(blocks))
        return 1 if errors else 0

    def _mkdir(self, s: _Session, io: _Io, args: list[str]) -> int:
        opts, operands = _getopt(args, "pv", "m")
        parents = any(k == "p" for k, _ in opts)
        if not operands:
            raise _UsageError("Needs 1 argument")
        errors = []
        with self.phone.lock:
            for arg in operands:
                path = self._path(s, arg)
                if self._exists(path):
                    if not (parents and self.phone.is_dir(path)):
                        errors.append(f"mkdir: '{arg}': File exists\n")
                    continue
                problem = self._unwritable(path)
                if problem == "No such file or directory" and parents:
                    problem = self._unwritable(self._nearest_dir_below(path))
                if problem:
                    errors.append(f"mkdir: '{arg}': {problem}\n")
                else:
                    self.phone.make_dir(path)
        io.complain("".join(errors))
        return 1 if errors else 0

    def _nearest_dir_below(self, path: str) -> str:
        """The highest missing directory on the way to ``path`` (what ``mkdir -p`` makes first)."""
        while not self._exists(posixpath.dirname(path)):
            path = posixpath.dirname(path)
        return path

    def _rm(self, s: _Session, io: _Io, args: list[str]) -> int:
        opts, operands = _getopt(args, "frRiv")
        o = {k for k, _ in opts}
        force, recursive = "f" in o, bool(o & {"r", "R"})
        if not operands and not force:
            raise _UsageError("Needs 1 argument")
        errors = []
        with self.phone.lock:
            for arg in operands:
                path = self._path(s, arg)
                if read_only(path) and self._exists(path):
                    errors.append(f"rm: {arg}: Read-only file system\n")
                    continue
                if path in self.phone.files:
                    del self.phone.files[path]
                elif not self.phone.is_dir(path):
                    if not force:
                        errors.append(f"rm: {arg}: No such file or directory\n")
                    continue
                elif not recursive:
                    errors.append(f"rm: {arg}: Is a directory\n")
                    continue
                else:
                    for p in self._tree(path):
                        del self.phone.files[p]
                self.phone.make_dir(posixpath.dirname(path))  # a directory stays when its last file goes
        io.complain("".join(errors))
        return 1 if errors else 0

    def _rmdir(self, s: _Session, io: _Io, args: list[str]) -> int:
        errors = []
        with self.phone.lock:
            for arg in args:
                path = self._path(s, arg)
                if not self.phone.is_dir(path):
                    why = "Not a directory" if path in self.phone.files else "No such file or directory"
                    errors.append(f"rmdir: '{arg}': {why}\n")
                elif self.phone.list_dir(path):
                    errors.append(f"rmdir: '{arg}': Directory not empty\n")
                elif read_only(path):
                    errors.append(f"rmdir: '{arg}': Read-only file system\n")
                else:
                    self.phone.files.pop(path.rstrip("/") + "/", None)
        io.complain("".join(errors))
        return 1 if errors else 0

    def _cp(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._copy(s, io, args, "cp")

    def _mv(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._copy(s, io, args, "mv")

    def _copy(self, s: _Session, io: _Io, args: list[str], name: str) -> int:
        opts, operands = _getopt(args, "rRafpnvuHLP" if name == "cp" else "fnvi")
        recursive = name == "mv" or bool({k for k, _ in opts} & {"r", "R", "a"})
        if len(operands) < 2:
            raise _UsageError("Needs 2 arguments")
        *sources, dest_arg = operands
        errors = []
        with self.phone.lock:
            dest = self._path(s, dest_arg)
            into = self.phone.is_dir(dest)
            if len(sources) > 1 and not into:
                raise _UsageError(f"'{dest_arg}' not directory")
            for arg in sources:
                src = self._path(s, arg)
                target = posixpath.join(dest, posixpath.basename(src)) if into else dest
                if not self._exists(src):
                    errors.append(f"{name}: {arg}: No such file or directory\n")
                    continue
                if src == target or target.startswith(src.rstrip("/") + "/"):
                    errors.append(f"{name}: '{arg}' and '{dest_arg}' are the same or nested\n")
                    continue
                is_file = src in self.phone.files
                if name == "mv" and read_only(src):
                    errors.append(f"mv: '{arg}': Read-only file system\n")
                    continue
                if not (is_file or recursive):
                    errors.append(f"cp: Skipped dir '{arg}'\n")
                    continue
                problem = self._unwritable(target)
                if problem and (is_file or problem != "Is a directory"):
                    errors.append(f"{name}: '{dest_arg}': {problem}\n")
                    continue
                moved = {src: target} if is_file else {p: target + p[len(src):] for p in self._tree(src)}
                for old, new in (moved or {src + "/": target + "/"}).items():
                    self.phone.files[new] = self.phone.files.get(old, b"")
                if name == "mv":
                    for old in moved:
                        self.phone.files.pop(old, None)
                    self.phone.make_dir(posixpath.dirname(src))
        io.complain("".join(errors))
        return 1 if errors else 0

    def _touch(self, s: _Session, io: _Io, args: list[str]) -> int:
        _, operands = _getopt(args, "acmh", "dtr")
        errors = []
        with self.phone.lock:
            for arg in operands:
                path = self._path(s, arg)
                problem = "" if self._exists(path) else self._unwritable(path)
                if problem:
                    errors.append(f"touch: '{arg}': {problem}\n")
                elif not self._exists(path):
                    self.phone.files[path] = b""
        io.complain("".join(errors))
        return 1 if errors else 0

    def _chmod(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._set_owner_or_mode(s, io, args, "chmod")

    def _chown(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._set_owner_or_mode(s, io, args, "chown")

    def _set_owner_or_mode(self, s: _Session, io: _Io, args: list[str], name: str) -> int:
        """The simulated phone keeps no owners or modes: the command checks its paths and changes nothing."""
        operands = [a for a in args if a not in ("-R", "-h", "-v", "-f")]
        if len(operands) < 2:
            raise _UsageError("Needs 2 arguments")
        with self.phone.lock:
            errors = [f"{name}: {arg}: No such file or directory\n" for arg in operands[1:]
                      if not self._exists(self._path(s, arg))]
        io.complain("".join(errors))
        return 1 if errors else 0

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

    # ---------------------------------------------------------------------------------------------- system
    def _getprop(self, s: _Session, io: _Io, args: list[str]) -> int:
        with self.phone.lock:
            props = self.phone.all_props()
        if not args:
            io.say("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
        else:
            io.say((props.get(args[0]) or (args[1] if len(args) > 1 else "")) + "\n")
        return 0

    def _setprop(self, s: _Session, io: _Io, args: list[str]) -> int:
        if len(args) != 2:
            io.complain("usage: setprop NAME VALUE\n\nSets an Android system property.\n")
            return 1
        name, value = args
        if name.startswith("ctl."):  # init's service control: of the services, the phone simulates the framework
            if value in ("zygote", "zygote_secondary") and name in ("ctl.restart", "ctl.start"):
                configure.restart_framework(self.phone)
            return 0
        with self.phone.lock:
            refused = ((name.startswith("ro.") and name in self.phone.all_props())  # ro. properties are set once
                       or (len(value.encode()) > PROP_VALUE_MAX and not name.startswith("ro."))
                       or (name not in self.phone.props and len(self.phone.props) >= MAX_SET_PROPS))
            if not refused:
                self.phone.props[name] = value
        if refused:
            io.complain(f"setprop: failed to set property '{name}' to '{value}'\n")
            return 1
        return 0

    def _stop(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``stop`` (the framework): the simulated phone keeps showing its screen until ``start`` restarts it."""
        return 0

    def _start(self, s: _Session, io: _Io, args: list[str]) -> int:
        if not args or set(args) & {"zygote", "zygote_secondary"}:
            configure.restart_framework(self.phone)
        return 0

    def _date(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``date``, ``date +FORMAT`` and, as root, ``date MMDDhhmm[[CC]YY][.ss]`` (the virtual clock)."""
        operands = [a for a in args if a != "-u"]  # the simulated phone's clock has no time zone: it is local
        with self.phone.lock:
            now = self.phone.device.now()
        if operands and not operands[0].startswith("+"):
            m = re.fullmatch(r"(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?(\d\d)?(?:\.(\d\d))?", operands[0])
            if m is None or len(operands) > 1:
                io.complain(f"date: bad date '{operands[0]}'\n")
                return 1
            month, day, hour, minute, cc, yy, sec = m.groups()
            year = now.year
            if yy is not None:
                year = int(cc + yy)
            elif cc is not None:
                year = 2000 + int(cc) if int(cc) < 69 else 1900 + int(cc)
            try:
                now = datetime(year, int(month), int(day), int(hour), int(minute), int(sec or 0))
            except ValueError:
                io.complain(f"date: bad date '{operands[0]}'\n")
                return 1
            configure.set_time(self.phone, now)
            operands = []
        fmt = operands[0][1:] if operands else "%a %b %e %H:%M:%S GMT %Y"
        seconds = str(int((now - EPOCH).total_seconds()))
        io.say(now.strftime(fmt.replace("%s", seconds)) + "\n")
        return 0

    # ---------------------------------------------------------------------------------------------- window, input
    def _wm(self, s: _Session, io: _Io, args: list[str]) -> int:
        sub = args[0] if args else None
        if sub == "size" and len(args) == 1:
            with self.phone.lock:
                width, height = self.phone.device.size
            io.say(f"Physical size: {width}x{height}\n")
            return 0
        if sub == "density" and len(args) == 1:
            physical, override = configure.density(self.phone)
            io.say(f"Physical density: {physical}\n" + (f"Override density: {override}\n" if override else ""))
            return 0
        if sub == "density" and len(args) == 2:
            if args[1] == "reset":
                configure.set_density(self.phone, None)
                return 0
            try:
                dpi = _java_int(args[1])
            except ValueError:
                io.complain(f"Error: bad number java.lang.NumberFormatException: For input string: \"{args[1]}\"\n")
                return 255
            if dpi < 72:
                io.complain("Error: Density must be at least 72\n")
                return 255
            configure.set_density(self.phone, dpi)
            return 0
        if sub == "size":
            io.complain("Error: changing the screen size is not supported by the simulated phone\n")
            return 255
        if sub in (None, "help", "-h"):
            io.say("Window manager (window) commands:\n  size [reset|WxH|WdpxHdp]\n    Return or override display "
                   "size.\n  density [reset|DENSITY]\n    Return or override display density.\n")
            return 0
        io.say(f"Unknown command: {sub}\n")
        return 255

    def _input(self, s: _Session, io: _Io, args: list[str]) -> int:
        def usage(error: str) -> int:
            # Deviation: Android 10's input prints this and exits 0; the simulated phone exits 1, so that a client
            # that checks exit statuses sees its mistake.
            io.complain(_INPUT_USAGE + "\n" + error + "\n")
            return 1

        args = list(args)
        if args and args[0] in _INPUT_SOURCES:
            args.pop(0)
        if args[:1] == ["-d"]:
            if len(args) < 2 or not args[1].lstrip("-").isdigit():
                return usage("Error: Invalid arguments for display ID.")
            args = args[2:]
        if not args:
            return usage("Argument expected after \"input\"")
        command, rest = args[0], args[1:]
        dev = self.phone.device
        try:
            if command == "text":
                if not rest:
                    return usage("Argument expected after \"text\"")
                with self.phone.lock:
                    dev.text(_input_text(rest[0]))  # as Android 10: the first argument is typed, the rest ignored
            elif command == "keyevent":
                long_press = rest[:1] == ["--longpress"]
                if long_press:
                    rest = rest[1:]
                if not rest:
                    return usage(f"Argument expected after \"{args[-1]}\"")
                for arg in rest:  # each a press (or a long press); an unknown code is injected and does nothing
                    with self.phone.lock:
                        dev.press_keycode(_keycode(arg), long_press)
            elif command == "tap":
                if len(rest) < 2:
                    return usage(f"Argument expected after \"{args[-1]}\"")
                x, y = _java_float(rest[0]), _java_float(rest[1])
                with self.phone.lock:
                    dev.tap(x, y)
            elif command == "swipe":
                if len(rest) < 4:
                    return usage(f"Argument expected after \"{args[-1]}\"")
                x1, y1, x2, y2 = (_java_float(a) for a in rest[:4])
                duration = _java_int(rest[4]) if len(rest) > 4 else -1
                with self.phone.lock:
                    dev.swipe(x1, y1, x2, y2, duration if duration >= 0 else 300)
            elif command in ("press", "roll"):  # trackball events: the simulated phone has no trackball
                if command == "roll":
                    for arg in (rest[0], rest[1]):
                        _java_float(arg)
            elif command == "draganddrop":
                io.complain("Error: draganddrop (a long press, then a move) is not supported by the simulated "
                            "phone\n")
                return 1
            else:
                return usage(f"Error: Unknown command: {command}")
        except (ValueError, IndexError):
            return usage(f"Error: Invalid arguments for command: {command}")
        return 0

    # ---------------------------------------------------------------------------------------------- screen
    def _screencap(self, s: _Session, io: _Io, args: list[str]) -> int:
        usage = ("usage: screencap [-hp] [-d display-id] [FILENAME]\n   -h: this message\n   -p: save the file as a "
                 "png.\n   -d: specify the display id to capture (default: 0)\nIf FILENAME ends with .png it will "
                 "be saved as a png.\nIf FILENAME is not given, the results will be printed to stdout.\n")
        try:
            opts, operands = _getopt(args, "hp", "d")
        except _UsageError:
            io.complain(usage)
            return 1
        o = dict(opts)
        if "h" in o or len(operands) > 1 or o.get("d", "0") != "0":
            io.complain(usage)
            return 1 if "h" not in o else 0
        png = "p" in o or (bool(operands) and operands[0].endswith(".png"))
        data = self._screen(png)
        if not operands:
            io.out(data)
            return 0
        path = self._path(s, operands[0])
        with self.phone.lock:
            problem = self._unwritable(path)
            if not problem:
                self.phone.files[path] = bytes(data)
        if problem:
            io.complain(f"Error opening file: {operands[0]} ({problem})\n")
            return 1
        return 0

    def _screen(self, png: bool) -> bytes | memoryview:
        """The current frame as screencap writes it; converted once per frame (the conversions run unlocked:
        frames are immutable)."""
        with self.phone.lock:
            frame = self.phone.device.screen()
            caps = _SCREENCAPS.setdefault(self.phone, OrderedDict())
            cap = caps.get(id(frame))
            if cap is not None:
                caps.move_to_end(id(frame))
            raw = cap.raw if cap is not None else None
            encoded = cap.png if cap is not None else None
        if raw is None:
            raw = rgba8888(frame)
        if png and encoded is None:
            encoded = _png(raw, frame.shape[1], frame.shape[0])
        with self.phone.lock:
            cap = caps.get(id(frame))
            if cap is None:
                cap = caps[id(frame)] = _Screencap(frame, raw)
                while len(caps) > SCREENCAP_CACHE:
                    caps.popitem(last=False)
            if encoded is not None:
                cap.png = encoded
        return encoded if png else raw

    def _uiautomator(self, s: _Session, io: _Io, args: list[str]) -> int:
        if not args or args[0] != "dump":
            text = ("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                    "help: displays help message\n\n"
                    "dump: creates an XML dump of current UI hierarchy\n    dump [--verbose][file]\n"
                    "      [--compressed]: dumps compressed layout information.\n"
                    "      [file]: the location where the dumped XML should be stored, default is\n"
                    f"      {DUMP_PATH}\n")
            if args and args[0] != "help":
                io.complain(f"uiautomator {args[0]} is not supported by the simulated phone\n" + text)
                return 1
            io.say(text)
            return 0
        # --compressed (drop the nodes that are not important for accessibility) is accepted; the dump is complete
        operands = [a for a in args[1:] if a not in ("--compressed", "--verbose")]
        target = operands[0] if operands else DUMP_PATH
        path = self._path(s, target)
        with self.phone.lock:
            xml = self.phone.device.ui_xml().encode("utf-8")
            problem = "" if path == "/dev/tty" else self._unwritable(path)
            if not problem and path != "/dev/tty":
                self.phone.files[path] = xml
        if problem:
            io.complain(f"ERROR: could not write dump to {path} ({problem})\n")
            return 1
        if path == "/dev/tty":
            io.out(xml)
        io.say(f"UI hierchary dumped to: {path}\n")  # sic: Android's spelling
        return 0

    # ---------------------------------------------------------------------------------------------- log
    def _log(self, s: _Session, io: _Io, args: list[str]) -> int:
        try:
            opts, words = _getopt(args, "", "pt")
        except _UsageError as err:
            io.complain(f"log: {err}\n")
            return 1
        level, tag = "I", "log"
        for opt, value in opts:
            if opt == "p":
                if not value or value[0].lower() not in "vdiwef":
                    io.complain(f"log: bad -p '{value}'\n")
                    return 1
                level = value[0].upper()
            else:
                tag = value
        if not words:
            io.complain("log: Needs 1 argument\n")
            return 1
        message = _log_payload(tag, " ".join(words))
        with self.phone.lock:
            dev = self.phone.device
            # Stamped with the latest line's time, which it does not advance: an ADB backend logs a marker after
            # every input, and markers must not move the lines after them, so the log stays the in-process one.
            dev.log.write(dev._last_log_ms or dev.state.time_ms, SHELL_PID, SHELL_PID, level, tag, message)
        return 0

    def _logcat(self, s: _Session, io: _Io, args: list[str]) -> int:
        with self.phone.lock:
            year = self.phone.device.now().year
        try:
            q = _logcat_query(args, year, s.env.get("ANDROID_LOG_TAGS"))
        except _UsageError as err:
            io.complain(f"logcat: {err}\n")
            return 1
        if q.clear:
            with self.phone.lock:
                self.phone.device.clear_log()
            return 0
        if q.sizes:
            with self.phone.lock:
                used = sum(len(e.message) + len(e.tag) + 28 for e in self.phone.device.log.entries())
            for b in q.buffers:
                io.say(f"{b}: ring buffer is 256 KiB ({min(256, used // 1024)} KiB consumed), max entry is 5120 B, "
                       "max payload is 4068 B\n")
            return 0
        with self.phone.lock:
            log = self.phone.device.log
            entries = [] if q.silent_buffers else log.entries()
            next_seq = log.mark()
        if q.since_ms is not None:
            entries = [e for e in entries if e.time_ms >= q.since_ms]
        if q.tail is not None:  # as logd: the last N entries, then the filters (they run in logcat)
            entries = entries[-q.tail:] if q.tail else []
        printer = _LogPrinter(q, io.out)
        if printer.print(entries) or q.dump:
            return 0
        while not self._stopped(s):
            with self.phone.lock:
                log = self.phone.device.log
                if log.mark() == next_seq:
                    self.phone.log_changed.wait(POLL_S)
                next_seq = min(next_seq, log.mark())  # a snapshot load may rewind the log's sequence numbers
                entries = [] if q.silent_buffers else log.entries(next_seq)
                next_seq = log.mark()
            if printer.print(entries):  # written unlocked: the network may block
                return 0
        return 0

    # ---------------------------------------------------------------------------------------------- apps
    def _am(self, s: _Session, io: _Io, args: list[str]) -> int:
        sub = args[0] if args else None
        if sub in ("start", "start-activity"):
            return self._am_start(io, args[1:])
        if sub == "broadcast":
            return self._am_broadcast(io, args[1:])
        if sub == "force-stop":
            packages = _without_user(args[1:])
            if len(packages) != 1:
                io.complain("Error: force-stop takes one package name\n")
                return 255
            configure.force_stop(self.phone, packages[0])
            return 0
        if sub in (None, "help", "-h"):
            io.say("Activity manager (activity) commands:\n  start [-W] [-S] [-n COMPONENT] ...\n"
                   "      Start an Activity.\n  force-stop PACKAGE\n      Completely stop the given application "
                   "package.\n")
            return 0
        io.complain(f"Error: am {sub} is not supported by the simulated phone\n")
        return 255

    def _parse_intent(self, io: _Io, args: list[str]) -> tuple[_Intent, set[str], dict[str, tuple[str, str]]] | None:
        """An intent as ``am`` reads it: the intent, the flags given (``-W``, ``-S``, ...) and the extras
        (name -> (option, value as typed)). None after complaining about bad usage."""
        intent, flags, extras = _Intent(), set(), {}
        args = list(args)
        try:
            while args:
                arg = args.pop(0)
                if arg in _AM_FLAGS or arg.startswith(("--activity-", "--receiver-")):
                    flags.add(arg)
                elif arg in _AM_VALUED:
                    value = args.pop(0)
                    if arg == "-a":
                        intent.action = value
                    elif arg == "-c":
                        intent.categories.append(value)
                    elif arg == "-d":
                        intent.data = value
                    elif arg == "-t":
                        intent.mime = value
                    elif arg == "-f":
                        intent.flags = int(value, 0)
                    elif arg == "-p":
                        intent.package = value
                    elif arg == "-n":
                        intent.component = self._component(value)
                    elif arg == "--esn":
                        intent.extras = True
                elif arg in _AM_EXTRAS:
                    if len(args) < 2:
                        raise IndexError(arg)
                    try:  # Intent.parseCommandArgs decodes these at once; a bad one is am's exception
                        if arg == "--ei":
                            intents.java_int(args[1])
                        elif arg == "--ez":
                            intents.java_bool(args[1])
                    except ValueError:
                        io.complain("Exception occurred while executing:\n" + (
                            f"java.lang.NumberFormatException: For input string: \"{args[1]}\"\n" if arg == "--ei"
                            else f"java.lang.IllegalArgumentException: Invalid boolean value: {args[1]}\n"))
                        return None
                    extras[args[0]] = (arg, args[1])
                    del args[:2]
                    intent.extras = True
                elif arg.startswith("-"):
                    io.complain(f"Error: Unknown option: {arg}\n")
                    return None
                elif "/" in arg and ":" not in arg:
                    intent.component = self._component(arg)
                else:
                    intent.data = arg
        except (IndexError, ValueError):
            io.complain("Error: an option of am lacks its value\n")
            return None
        return intent, flags, extras

    def _am_start(self, io: _Io, args: list[str]) -> int:
        parsed = self._parse_intent(io, args)
        if parsed is None:
            return 255
        intent, flags, extras = parsed
        wait, stop_first = "-W" in flags, "-S" in flags
        io.say(f"Starting: {intent}\n")
        if intent.action == CALL and intent.component is None and (intent.data or "").startswith("tel:"):
            with self.phone.lock:  # Telecom places the call, or shows the dial pad for an emergency number
                dialer.call_intent(self.phone.device, intent.data[4:], caller_uid=0)
                self.phone.device._invalidate()
            return 0
        key = self._resolve(intent)
        target = None if key is not None else intents.resolve(intent.action, intent.data, intent.categories,
                                                               intent.package, intent.component)
        if target is not None:  # an activity that takes the intent: a Settings page, the dial pad, Clock
            info = apps()[target.app]
            if stop_first:
                configure.force_stop(self.phone, info.package)
            intent.flags |= 0x10000000  # FLAG_ACTIVITY_NEW_TASK, which am adds
            intent.component, intent.package = (info.package, target.activity), None
            with self.phone.lock:
                dev = self.phone.device
                st = dev.state
                state = "HOT" if target.app in st.tasks else "WARM" if target.app in st.running else "COLD"
                mark = dev.log.mark()
                intents.deliver(dev, target, str(intent)[len("Intent { "):-len(" }")], intent.data, extras,
                                caller_uid=0)
                dev._invalidate()
                shown = [int(m.group(1)) for e in dev.log.entries(mark) if e.tag == "ActivityTaskManager"
                         for m in [re.match(r"Displayed .*: \+(\d+)ms", e.message)] if m]
            if wait:
                total = shown[-1] if shown else 0
                io.say(f"Status: ok\nLaunchState: {state}\nActivity: {short_component(info.package, target.activity)}\n"
                       f"TotalTime: {total}\nWaitTime: {total + 17}\nComplete\n")
            return 0
        if key is None:
            # Deviation: Android 10's am prints these and exits 0; the simulated phone exits 1.
            if intent.component is not None:
                io.say(f"Error type 3\nError: Activity class {{{intent.component[0]}/{intent.component[1]}}} does "
                       "not exist.\n")
            else:
                intent.flags |= 0x10000000  # FLAG_ACTIVITY_NEW_TASK, which am adds
                io.say(f"Error: Activity not started, unable to resolve {intent}\n")
            return 1
        info = apps()[key]
        if stop_first:
            configure.force_stop(self.phone, info.package)
        with self.phone.lock:
            dev = self.phone.device
            st = dev.state
            warning = ("Warning: Activity not started, intent has been delivered to currently running top-most "
                       "instance.\n" if st.top == key and not st.overview else
                       "Warning: Activity not started, its current task has been brought to the front\n"
                       if key in st.tasks else "")
            state = "HOT" if key in st.tasks else "WARM" if key in st.running else "COLD"
            mark = dev.log.mark()
            dev.launch(key)  # as the launcher starts it: the START line is the launcher's
            dev._invalidate()
            shown = [int(m.group(1)) for e in dev.log.entries(mark) if e.tag == "ActivityTaskManager"
                     for m in [re.match(r"Displayed .*: \+(\d+)ms", e.message)] if m]
        io.say(warning)
        if wait:
            total = shown[-1] if shown else 0
            io.say(f"Status: ok\nLaunchState: {state}\nActivity: {short_component(info.package, info.activity)}\n"
                   f"TotalTime: {total}\nWaitTime: {total + 17}\nComplete\n")
        return 0

    def _am_broadcast(self, io: _Io, args: list[str]) -> int:
        """``am broadcast``. The phone's receivers act on ``android.intent.action.AIRPLANE_MODE`` (a protected
        broadcast: the shell sends it as root); others reach no receiver."""
        parsed = self._parse_intent(io, args)
        if parsed is None:
            return 255
        intent, _, extras = parsed
        intent.flags |= 0x400000  # FLAG_RECEIVER_INCLUDE_BACKGROUND, which am adds
        io.say(f"Broadcasting: {intent}\n")
        if intent.action == AIRPLANE_MODE:
            state = extras["state"][1] if "state" in extras else None
            if state is not None and state.lower() not in ("true", "false"):
                io.complain(f"Error: --ez state takes true or false, not {state!r}\n")
                return 255
            configure.apply_airplane_mode(self.phone, None if state is None else state.lower() == "true")
        io.say("Broadcast completed: result=0\n")
        return 0

    def _component(self, text: str) -> tuple[str, str]:
        package, sep, cls = text.partition("/")
        if not sep or not package or not cls:
            raise ValueError(text)
        return package, package + cls if cls.startswith(".") else cls

    def _resolve(self, intent: _Intent) -> str | None:
        """The app whose launcher activity an intent starts. Explicit: the app with that launcher activity.
        Implicit: the launcher intent (MAIN/LAUNCHER) of a package given with ``-p``. Other implicit intents the
        apps take (``android.settings.*``, ``DIAL tel:``, ``SET_ALARM``) are :func:`vlui.sim.intents.resolve`'s."""
        for key, info in apps().items():
            if intent.component is not None:
                if intent.component == (info.package, info.activity):
                    return key
            elif (intent.package == info.package and intent.action in (None, MAIN)
                  and set(intent.categories) <= {LAUNCHER, "android.intent.category.DEFAULT"} and not intent.data):
                return key
        return None

    def _monkey(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``monkey -p PACKAGE [-c android.intent.category.LAUNCHER] 1``: what tools use to start an app."""
        io.say("".join(f"  bash arg: {a}\n" for a in args))
        package, count, rest = None, None, list(args)
        while rest:
            arg = rest.pop(0)
            if arg in ("-p", "-c", "-s", "--throttle", "--pct-touch", "--pct-motion") and rest:
                value = rest.pop(0)
                package = value if arg == "-p" else package
            elif arg.startswith("-"):
                continue
            elif arg.isdigit():
                count = int(arg)
        key = next((k for k, info in apps().items() if info.package == package), None)
        if count != 1:
            io.complain("** the simulated phone's monkey starts an app: monkey -p PACKAGE 1\n")
            return 1
        if key is None:
            io.say("** No activities found to run, monkey aborted.\n")
            return 252
        with self.phone.lock:
            self.phone.device.launch(key)
            self.phone.device._invalidate()
        io.say("Events injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")
        return 0

    def _pm(self, s: _Session, io: _Io, args: list[str]) -> int:
        if args[:2] in (["list", "packages"], ["list", "package"]):
            opts, operands = _getopt(_without_user(args[2:]), "fdesu3iUa")
            o = {k for k, _ in opts}
            names = sorted({info.package for info in apps().values()} | set(SYSTEM_PACKAGES))
            if "3" in o or "d" in o:  # every app of the emulator image is an enabled system app
                names = []
            names = [n for n in names if not operands or operands[0] in n]
            io.say("".join(f"package:{n}\n" for n in names))
            return 0
        if not args or args[0] in ("help", "-h"):
            io.say("Package manager (package) commands:\n  list packages [-3] [-s] [FILTER]\n")
            return 0
        io.complain(f"Error: pm {args[0]} is not supported by the simulated phone\n")
        return 255

    def _settings(self, s: _Session, io: _Io, args: list[str]) -> int:
        args = _without_user(args)
        if not args or args[0] in ("help", "-h"):
            io.say(_SETTINGS_USAGE)
            return 0
        verb, rest = args[0], args[1:]
        need = {"get": 2, "put": 3, "delete": 2, "list": 1}.get(verb)
        if need is None or len(rest) < need:
            io.complain(("Invalid command: " + verb if need is None else "Invalid arguments") + "\n"
                        + _SETTINGS_USAGE)
            return 255
        namespace = rest[0].lower()
        if namespace not in ("system", "secure", "global"):
            io.complain(f"Invalid namespace '{rest[0]}'\n{_SETTINGS_USAGE}")
            return 255
        if verb == "get":
            value = configure.get_setting(self.phone, namespace, rest[1])
            io.say(("null" if value is None else value) + "\n")
        elif verb == "put":
            configure.put_setting(self.phone, namespace, rest[1], rest[2])
        elif verb == "delete":
            io.say(f"Deleted {configure.delete_setting(self.phone, namespace, rest[1])} rows\n")
        else:
            io.say("".join(f"{k}={v}\n" for k, v in configure.list_settings(self.phone, namespace).items()))
        return 0

    def _cmd(self, s: _Session, io: _Io, args: list[str]) -> int:
        known = {"activity": "am", "package": "pm", "settings": "settings", "uimode": None, "window": "wm"}
        if not args:
            io.complain("cmd: No service specified; use -l to list all known\n")
            return 20
        if args[0] == "-l":
            io.say("Currently running known:\n" + "".join(f"  {name}\n" for name in sorted(known)))
            return 0
        if args[0] not in known:
            io.complain(f"cmd: Can't find service: {args[0]}\n")
            return 20
        if args[0] != "uimode":
            return COMMANDS[known[args[0]]](self, s, io, args[1:])
        if args[1:2] != ["night"] or len(args) > 3:
            io.complain("Error: the simulated phone's uimode knows: night [yes|no]\n")
            return 255
        if len(args) == 3:
            if args[2] not in ("yes", "no", "auto"):
                io.complain("Error: mode must be 'yes', 'no', or 'auto'\n")
                return 255
            configure.set_night_mode(self.phone, args[2])
        io.say(f"Night mode: {configure.night_mode(self.phone)}\n")
        return 0

    def _svc(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``svc wifi enable|disable``: Wi-Fi through WifiManager, as the shell's package (Android 10's svc has no
        Bluetooth command; ``service call bluetooth_manager`` is how a shell reaches it there)."""
        if len(args) != 2 or args[0] != "wifi" or args[1] not in ("enable", "disable"):
            io.say("Control the Wi-Fi manager\n\nusage: svc wifi [enable|disable]\n"
                   "         Turn Wi-Fi on or off.\n\n")
            return 0 if args[:1] in ([], ["help"], ["wifi"]) else 1
        with self.phone.lock:
            services.set_wifi(self.phone.device, args[1] == "enable", caller=(services.SHELL_CALLER[0], 0))
            self.phone.device._invalidate()
        return 0

    def _service(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``service call bluetooth_manager 6|8``: IBluetoothManager's enable() and disable() (Android 10's
        transaction numbers), which is how a shell switches Bluetooth before Android 12's ``svc bluetooth``.
        ``service list`` and ``service check`` name the services the simulated phone has."""
        names = ("activity", "audio", "bluetooth_manager", "connectivity", "display", "package", "settings",
                 "telecom", "uimode", "wifi", "window")
        if args[:1] == ["list"]:
            io.say(f"Found {len(names)} services:\n" + "".join(f"{i}\t{n}: []\n" for i, n in enumerate(names)))
            return 0
        if args[:1] == ["check"] and len(args) == 2:
            io.say(f"Service {args[1]}: {'found' if args[1] in names else 'not found'}\n")
            return 0
        if args[:2] == ["call", "bluetooth_manager"] and len(args) == 3 and args[2] in ("6", "8"):
            with self.phone.lock:
                services.set_bluetooth(self.phone.device, args[2] == "6", package=None)
                self.phone.device._invalidate()
            io.say("Result: Parcel(00000000 00000001   '........')\n")
            return 0
        if args[:1] == ["call"] and len(args) >= 3:
            io.complain(f"service: the simulated phone answers no call {' '.join(args[1:3])} (it knows "
                        "bluetooth_manager 6 and 8: enable and disable)\n")
            return 255
        io.say("Usage: service [-h|-?]\n       service list\n       service check SERVICE\n"
               "       service call SERVICE CODE [i32 N | i64 N | f N | d N | s16 STR ] ...\n")
        return 0 if args[:1] in ([], ["-h"], ["-?"]) else 1

    def _media(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``media volume [--show] [--stream N] [--set INDEX|--adj raise|same|lower] [--get]``: AudioService's
        stream volumes, printed as Android 10's VolumeCtrl prints them."""
        if args[:1] != ["volume"]:
            io.say("usage: media volume [--show] [--stream STREAM] [--set INDEX | --adj DIRECTION] [--get]\n")
            return 0 if not args else 1
        stream, index, adjust, get = 3, None, None, False
        rest = list(args[1:])
        out = []
        try:
            while rest:
                option = rest.pop(0)
                if option == "--show":
                    continue
                if option == "--get":
                    get = True
                    out.append("will get volume")
                elif option == "--stream":
                    stream = int(rest.pop(0), 0)
                    name = services.AUDIO_STREAMS.get(stream, (None, "invalid stream"))[1]
                    out.append(f"will control stream={stream} ({name})")
                elif option == "--set":
                    index = int(rest.pop(0), 0)
                    out.append(f"will set volume to index={index}")
                elif option == "--adj":
                    adjust = rest.pop(0)
                    out.append("will adjust volume")
                else:
                    io.say("".join(f"[V] {line}\n" for line in out))
                    io.complain(f"Error: Unknown argument {option}\n")
                    return 1
        except (IndexError, ValueError):
            io.complain("Error: an option of media volume lacks its (integer) value\n")
            return 1
        io.say("".join(f"[V] {line}\n" for line in out) + "[V] Connecting to AudioService\n")
        if adjust is not None and adjust not in ("raise", "same", "lower"):
            io.complain(f"Error: no valid volume adjustment, was {adjust}, expected lower|same|raise\n")
            return 1
        if stream not in services.AUDIO_STREAMS:  # deviation: a device has streams 0-10; the phone models four
            io.complain(f"Error: the simulated phone models streams {sorted(services.AUDIO_STREAMS)}, not {stream}\n")
            return 1
        key = services.AUDIO_STREAMS[stream][0]
        lo, hi = VOLUME_MIN[key], VOLUME_MAX[key]
        with self.phone.lock:
            dev = self.phone.device
            if index is not None:
                if not lo <= index <= hi:
                    io.complain(f"Error: invalid volume index {index} for stream {stream} (should be in "
                                f"[{lo}..{hi}])\n")
                    return 1
                services.set_volume(dev, key, index)
            elif adjust is not None:
                step = {"raise": 1, "same": 0, "lower": -1}[adjust]
                services.set_volume(dev, key, min(hi, max(lo, dev.state.volume[key] + step)))
            dev._invalidate()
            if get:
                io.say(f"[V] volume is {dev.state.volume[key]} in range [{lo}..{hi}]\n")
        return 0

    def _dumpsys(self, s: _Session, io: _Io, args: list[str]) -> int:
        """The parts of ``dumpsys SERVICE`` that tools read (adbutils, uiautomator2, AndroidEnv): the app in front
        (``window``, ``activity``), the display's size and rotation, the screen's power state, the keyboard, the
        battery, and a package's version."""
        service = args[0] if args else None
        dumps = {"display": self._dump_display, "power": self._dump_power, "input_method": self._dump_input_method,
                 "battery": self._dump_battery, "package": self._dump_package}
        if service in dumps:
            with self.phone.lock:
                io.say(dumps[service](args[1:]))
            return 0
        if service not in ("window", "activity"):
            io.complain(f"Can't find service: {service}\n" if service else
                        "dumpsys: the simulated phone dumps the services " + ", ".join(
                            sorted([*dumps, "window", "activity"])) + "\n")
            return 0 if service else 1
        with self.phone.lock:
            st = self.phone.device.state
            if st.top is None or st.overview:
                package, activity = LAUNCHER_PKG, LAUNCHER_PKG + ".NexusLauncherActivity"
            else:
                info = apps()[st.top]
                package, activity = info.package, info.activity

        def ref(salt: str) -> str:
            return f"{zlib.crc32((salt + activity).encode()) & 0xFFFFFFF:x}"

        task = zlib.crc32(package.encode()) % 90 + 10
        record = f"ActivityRecord{{{ref('r')} u0 {short_component(package, activity)} t{task}}}"
        if service == "window":
            io.say(f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
                   f"  mCurrentFocus=Window{{{ref('w')} u0 {package}/{activity}}}\n"
                   f"  mFocusedApp=AppWindowToken{{{ref('a')} token=Token{{{ref('t')} {record}}}}}\n")
        else:
            io.say(f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to "
                   f"bottom):\n    mResumedActivity: {record}\n  ResumedActivity: {record}\n")
        return 0

    # Each dump is Android 10's layout for the lines it has (the services print many more); the caller holds the lock.
    def _dump_display(self, args: list[str]) -> str:
        dev = self.phone.device
        width, height = dev.size
        physical, override = configure.density(self.phone)
        dpi = override or physical
        info = (f'DisplayInfo{{"Built-in Screen", uniqueId "local:0", app {width} x {height}, real {width} x '
                f"{height}, largest app {width} x {height}, smallest app {width} x {height}, mode 1, defaultModeId "
                f"1, modes [{{id=1, width={width}, height={height}, fps=60.0}}], rotation 0, density {dpi} "
                f"({dpi}.0 x {dpi}.0) dpi, layerStack 0, type INTERNAL, state {'ON' if self._awake() else 'OFF'}, "
                "FLAG_SECURE, FLAG_SUPPORTS_PROTECTED_BUFFERS}")
        frame = f"Rect(0, 0 - {width}, {height})"
        return (f"DISPLAY MANAGER (dumpsys display)\n  mOnlyCode=false\n  mSafeMode=false\n"
                f"  mPendingTraversal=false\n  mGlobalDisplayState={'ON' if self._awake() else 'OFF'}\n"
                f"  mNextNonDefaultDisplayId=1\n  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, "
                f"isActive=true, displayId=0, uniqueId='local:0', physicalPort=0, orientation=0, logicalFrame="
                f"{frame}, physicalFrame={frame}, deviceWidth={width}, deviceHeight={height}}}]\n"
                f"  mDefaultDisplayDefaultColorMode=0\n\nDisplay Adapters: size=1\n  LocalDisplayAdapter\n\n"
                f"Logical Displays: size=1\n  Display 0:\n    mDisplayId=0\n    mLayerStack=0\n"
                f"    mHasContent=true\n    mRequestedColorMode=0\n    mDisplayOffset=(0, 0)\n"
                f"    mPrimaryDisplayDevice=Built-in Screen\n    mBaseDisplayInfo={info}\n"
                f"    mOverrideDisplayInfo={info}\n")

    def _awake(self) -> bool:
        return self.phone.device.state.screen_on

    def _dump_power(self, args: list[str]) -> str:
        awake = self._awake()
        return (f"POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mDirty=0x0\n"
                f"  mWakefulness={'Awake' if awake else 'Asleep'}\n  mWakefulnessChanging=false\n"
                f"  mIsPowered=true\n  mPlugType=1\n  mBatteryLevel={BATTERY_LEVEL}\n"
                f"  mBatteryLevelWhenDreamStarted=0\n  mDockState=0\n  mStayOn=false\n  mProximityPositive=false\n"
                f"  mBootCompleted=true\n  mSystemReady=true\n  mHoldingWakeLockSuspendBlocker=false\n"
                f"  mHoldingDisplaySuspendBlocker={'true' if awake else 'false'}\n"
                f"  mDisplayReady=true\n  mScreenBrightnessSetting={self.phone.device.state.brightness}\n\n"
                f"Display Power: state={'ON' if awake else 'OFF'}\n")

    def _dump_input_method(self, args: list[str]) -> str:
        st = self.phone.device.state
        shown = st.focus is not None
        ime = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
        client = apps()[st.focus[0]].package if shown and st.focus[0] in apps() else LAUNCHER_PKG
        return (f"Current Input Method Manager state:\n  mCurMethodId={ime}\n  mCurrentSubtype=null\n"
                f"  mCurFocusedWindowClient={'ClientState{' + client + '}' if shown else 'null'}\n"
                f"  mCurId={ime} mHaveConnection={'true' if shown else 'false'} mBoundToMethod=true "
                f"mVisibleBound={'true' if shown else 'false'}\n  mShowRequested={'true' if shown else 'false'} "
                f"mShowExplicitlyRequested=false mShowForced=false mInputShown={'true' if shown else 'false'}\n"
                f"  mInFullscreenMode=false\n  mSystemReady=true mInteractive={'true' if self._awake() else 'false'}\n")

    def _dump_battery(self, args: list[str]) -> str:
        return ("Current Battery Service state:\n  AC powered: true\n  USB powered: false\n"
                "  Wireless powered: false\n  Max charging current: 0\n  Max charging voltage: 0\n"
                "  Charge counter: 10000\n  status: 2\n  health: 2\n  present: true\n"
                f"  level: {BATTERY_LEVEL}\n  scale: 100\n  voltage: 5000\n  temperature: 250\n"
                "  technology: Li-ion\n")

    def _dump_package(self, args: list[str]) -> str:
        """``dumpsys package NAME``: the package's record; for a package the phone does not have, nothing, as on
        Android (which then prints only the headers of its tables)."""
        names = [a for a in args if not a.startswith("-")]
        if not names or names[0] not in PACKAGES:
            return ""
        name, info = names[0], PACKAGES[names[0]]
        key = next((k for k, a in apps().items() if a.package == name), None)
        uid = app_uid(key) if key is not None else info["uid"]
        stamp = "2008-12-31 16:00:00"  # system apps keep the build's fixed install time
        return (f"Packages:\n  Package [{name}] ({zlib.crc32(name.encode()) & 0xFFFFFFF:x}):\n    userId={uid}\n"
                f"    pkg=Package{{{zlib.crc32(b'p' + name.encode()) & 0xFFFFFFF:x} {name}}}\n"
                f"    codePath={info['codePath']}\n    resourcePath={info['codePath']}\n"
                f"    versionCode={info['versionCode']} minSdk={SDK} targetSdk={SDK}\n"
                f"    versionName={info['versionName']}\n    splits=[base]\n    apkSigningVersion=3\n"
                f"    flags=[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n    timeStamp={stamp}\n"
                f"    firstInstallTime={stamp}\n    lastUpdateTime={stamp}\n    installerPackageName=null\n"
                f"    User 0: ceDataInode=0 installed=true hidden=false suspended=false stopped=false "
                f"notLaunched=false enabled=0 instant=false virtual=false\n")

    # ---------------------------------------------------------------------------------------------- sqlite3
    def _sqlite3(self, s: _Session, io: _Io, args: list[str]) -> int:
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
                separator = args.pop(0).encode()
            elif opt not in ("list", "batch", "bail"):
                io.complain(f"sqlite3: Error: unknown option: -{opt}\nUse -help for a list of options.\n")
                return 1
        if not args:
            io.complain("sqlite3: the simulated phone needs a database file: sqlite3 DB \"SQL\"\n")
            return 1
        db, sql = args[0], args[1:]
        path = self._path(s, db)
        with self.phone.lock:  # a copy of the file; the SQL runs unlocked, so a slow query stalls no other client
            original = self.phone.files.get(path)
            problem = "" if original is not None else self._unwritable(path)
            room = self.phone.files.room(replacing=path)
        if problem:
            io.complain(f"Error: unable to open database \"{db}\": unable to open database file\n")
            return 1
        status, data = 0, original or b""
        try:
            with ConfinedDb(data, room, self.phone.limits.sql_timeout_s) as con:
                try:
                    for statement in (st for text in sql for st in _sql_statements(text)):
                        if self._stopped(s):
                            status = 1
                            break
                        if statement.lstrip().startswith("."):
                            io.out(self._sqlite_dot(con, statement.strip()))
                            continue
                        cur = con.execute(statement)
                        first = True
                        while rows := con.fetch(cur):
                            if header and first and cur.description:
                                io.out(separator.join(c[0].encode() for c in cur.description) + b"\n")
                            first = False
                            io.out(b"".join(separator.join(_sqlite_value(v) for v in row) + b"\n" for row in rows))
                finally:  # statements that ran before an error stay done (autocommit), as on a device
                    data = con.data()
        except (sqlite3.Error, _UsageError) as err:
            io.complain(f"Error: {err}\n")
            status = 1
        if data != (original or b""):
            with self.phone.lock:  # the last writer's file wins, as with two sqlite3 processes on a device
                self.phone.files[path] = data
        return status

    def _sqlite_dot(self, con: ConfinedDb, command: str) -> bytes:
        name, *rest = command.split()
        if name == ".tables":
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                                "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            return b"".join(f"{t}\n".encode() for t in tables)
        if name == ".schema":
            query = "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL" + (" AND tbl_name = ?" if rest else "")
            return b"".join(f"{r[0]};\n".encode() for r in con.execute(query, rest[:1]))
        raise _UsageError(f"unknown command or invalid arguments:  \"{name[1:]}\". Enter \".help\" for help")


class _RedirectError(Exception):
    pass


def _glob_regex(component: str) -> str:
    """One path component of a glob as a regex: ``*`` and ``?`` stop at ``/``, and match no leading dot."""
    out, i = [], 0
    while i < len(component):
        c = component[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = component.find("]", i + 2 if component[i + 1:i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = component[i + 1:end].replace("\\", "\\\\").replace("[", "\\[")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    regex = "".join(out)
    return regex if component.startswith(".") else f"(?!\\.){regex}"


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
