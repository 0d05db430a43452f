"""The line filters a pipe feeds: ``cat``, ``head``, ``tail``, ``wc``, ``sort`` and ``grep`` (basic and extended
regexes), each a stage that reads its input as it arrives."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

from vlui.served.numbers import parse_long
from vlui.served.patterns import PatternError, TooCostly, grep_pattern
from vlui.served.shell.context import PIPE_INPUT_MAX, Abort, Input, PipeClosed, UsageError, discard, getopt


class Stage:
    """A command after ``|``: what the command before it writes is :meth:`feed` to it."""

    def feed(self, data: bytes) -> None:
        pass

    def close(self) -> int:
        return 0


class After(Stage):
    """A command that reads no input: it runs when its input ends, and what it was sent is dropped."""

    def __init__(self, run: Callable[[], int]) -> None:
        self.run = run

    def close(self) -> int:
        return self.run()


class Collect(Stage):
    """Any other command after ``|`` (a builtin, a compound command, a function): it runs when its input ends, and
    reads that input then. It keeps at most PIPE_INPUT_MAX bytes: the writer of more stops, as if this command had
    closed the pipe (on a device the writer would wait, and this command would run meanwhile)."""

    def __init__(self, run: Callable[[Input], int]) -> None:
        self.run = run
        self.chunks: list[bytes] = []
        self.size = 0

    def feed(self, data: bytes) -> None:
        room = PIPE_INPUT_MAX - self.size
        self.chunks.append(bytes(data[:room]))
        self.size += min(room, len(data))
        if len(data) > room:
            raise PipeClosed

    def close(self) -> int:
        data = b"".join(self.chunks)
        self.chunks = []
        return self.run(Input(data))


def _no_tick() -> None:
    pass


class Filter(Stage):
    """A command that reads lines (from its input, or from the files named on its command line). ``err`` is its
    standard error; ``tick`` is called as it works through its input, and raises to stop it (the shell's CPU budget,
    a client that went away)."""

    name = ""
    flags, valued = "", ""

    def __init__(self, args: list[str], out: Callable[[bytes], None], err: Callable[[bytes], None] = discard,
                 tick: Callable[[], None] = _no_tick) -> None:
        self.out, self.err, self.tick = out, err, tick
        self.status = 0
        self._pieces: list[bytes] = []  # the line being received
        self._held = 0  # its bytes so far
        opts, self.files = getopt(self.normalise(args), self.flags, self.valued)
        self.setup(opts)

    def normalise(self, args: list[str]) -> list[str]:
        return args

    def setup(self, opts: list[tuple[str, str]]) -> None:
        pass

    def feed(self, data: bytes) -> None:
        if b"\n" not in data:  # part of a line: kept in pieces, joined once its newline comes (linear, however long)
            self._held += len(data)
            if self._held > PIPE_INPUT_MAX:  # a line that never ends (``cat /dev/zero | grep x``) is held no further
                raise Abort(f"{self.name}: a line longer than {PIPE_INPUT_MAX >> 20} MiB arrived through a pipe: "
                            "the simulated phone holds no more of one line\n", 1)
            self._pieces.append(bytes(data))
            return
        *lines, rest = data.split(b"\n")
        lines[0] = b"".join(self._pieces) + lines[0]
        self._pieces = [rest] if rest else []
        self._held = len(rest)
        for line in lines:
            self.line(line + b"\n")

    def close(self) -> int:
        if self._pieces:
            last, self._pieces = b"".join(self._pieces), []
            self.line(last)
        self.finish()
        return self.status

    def line(self, line: bytes) -> None:
        self.out(line)

    def finish(self) -> None:
        pass


class _Cat(Filter):
    name, flags = "cat", "uv"

    def feed(self, data: bytes) -> None:
        self.out(data)


def _count_option(args: list[str]) -> list[str]:
    """``head -5`` is ``head -n 5``."""
    return [f"-n{a[1:]}" if re.fullmatch(r"-\d+", a) else a for a in args]


def _count(value: str) -> int:
    if not (value.isascii() and value.isdigit()):  # isdigit() alone takes '¹', which int() refuses
        raise UsageError(f"Not a number '{value}'")
    count = parse_long(value)
    if count is None:  # past a long long: toybox's strtoll fails with ERANGE, said as bionic's strerror says it
        raise UsageError(f"{value}: Math result not representable")
    return count


class _Head(Filter):
    name, valued = "head", "nc"

    def normalise(self, args: list[str]) -> list[str]:
        return _count_option(args)

    def setup(self, opts: list[tuple[str, str]]) -> None:
        self.left, self.bytes = 10, False  # lines, or bytes with -c
        for opt, value in opts:
            self.left, self.bytes = _count(value), opt == "c"

    def feed(self, data: bytes) -> None:
        if self.left <= 0:
            raise PipeClosed
        if not self.bytes:
            super().feed(data)
            return
        self.out(data[:self.left])
        self.left -= min(len(data), self.left)
        if self.left == 0:
            raise PipeClosed

    def line(self, line: bytes) -> None:
        if self.left > 0:
            self.out(line)
            self.left -= 1
            if self.left == 0:
                raise PipeClosed


class _Tail(Filter):
    name, valued = "tail", "n"

    def normalise(self, args: list[str]) -> list[str]:
        return _count_option(args)

    def setup(self, opts: list[tuple[str, str]]) -> None:
        self.count, self.start = 10, None  # the last ``count`` lines, or from line ``start`` (``-n +K``)
        self.lines: list[bytes] = []
        for _, value in opts:
            if value.startswith("+") and value[1:].isascii() and value[1:].isdigit():
                self.start = max(1, _count(value[1:]))
            else:
                self.count = _count(value)

    def line(self, line: bytes) -> None:
        self.lines.append(line)

    def finish(self) -> None:
        keep = self.lines[self.start - 1:] if self.start else (self.lines[-self.count:] if self.count else [])
        self.out(b"".join(keep))


class _Wc(Filter):
    """Counts what it reads a chunk at a time, never a line at a time: ``screencap | wc -c`` (9 MB of pixels) costs
    milliseconds. A word is a run of non-blanks, which may continue from one chunk into the next."""

    name, flags = "wc", "lwcm"

    def setup(self, opts: list[tuple[str, str]]) -> None:
        self.which = [o for o, _ in opts] or ["l", "w", "c"]
        self.counts = {"l": 0, "w": 0, "c": 0, "m": 0}
        self.in_word = False
        self.chars = codecs.getincrementaldecoder("utf-8")("replace") if "m" in self.which else None

    def feed(self, data: bytes) -> None:
        if not data:
            return
        data = bytes(data)  # screencap writes a memoryview
        self.counts["l"] += data.count(b"\n")
        self.counts["c"] += len(data)
        self.counts["w"] += len(data.split()) - (self.in_word and not data[:1].isspace())
        self.in_word = not data[-1:].isspace()
        if self.chars is not None:
            self.counts["m"] += len(self.chars.decode(data))

    def close(self) -> int:
        if self.chars is not None:
            self.counts["m"] += len(self.chars.decode(b"", final=True))
        self.finish()
        return self.status

    def finish(self) -> None:
        order = [o for o in "lwmc" if o in self.which]
        self.out((" ".join(str(self.counts[o]) for o in order) + "\n").encode())


class _Sort(Filter):
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


class _Grep(Filter):
    name, flags, valued = "grep", "vEFicqwxnsH", "e"

    def setup(self, opts: list[tuple[str, str]]) -> None:
        o = {k for k, _ in opts}
        patterns = [v for k, v in opts if k == "e"]
        if not patterns:
            if not self.files:
                raise UsageError("no pattern")
            patterns = [self.files.pop(0)]
        self.invert, self.count_only, self.quiet, self.numbered = "v" in o, "c" in o, "q" in o, "n" in o
        try:
            self.pattern = grep_pattern(patterns, extended="E" in o, fixed="F" in o, ignore_case="i" in o,
                                        word="w" in o, line="x" in o)
        except PatternError as err:  # toybox's xregcomp: "bad regex 'PATTERN': what regerror says"
            raise UsageError(f"bad regex '{'|'.join(patterns)}': {err}") from None
        self.matches = self.lines_read = 0
        self.status = 1

    def line(self, line: bytes) -> None:
        self.tick()
        self.lines_read += 1
        try:
            found = self.pattern.search(line[:-1] if line.endswith(b"\n") else line)
        except TooCostly as err:
            self.err(f"grep: {err}\n".encode())
            self.status = 2
            raise PipeClosed from None
        if found == self.invert:
            return
        self.matches += 1
        self.status = 0
        if self.quiet:
            raise PipeClosed
        if not self.count_only:
            prefix = f"{self.lines_read}:".encode() if self.numbered else b""
            self.out(prefix + line + (b"" if line.endswith(b"\n") else b"\n"))

    def finish(self) -> None:
        if self.count_only:
            self.out(f"{self.matches}\n".encode())


class _Cut(Filter):
    """``cut -b LIST | -c LIST | -f LIST [-d DELIM] [-s] [FILE...]``: toybox's. A LIST is ranges ``N``, ``N-M``,
    ``N-`` and ``-M`` joined by commas (from 1); ``-f`` splits at DELIM (a tab by default), and a line without one
    is printed whole unless ``-s``."""

    name, flags, valued = "cut", "sn", "bcfd"

    def setup(self, opts: list[tuple[str, str]]) -> None:
        lists = [(k, v) for k, v in opts if k in "bcf"]
        if len(lists) != 1:
            raise UsageError("Needs -b, -c or -f" if not lists else "-b, -c and -f exclude one another")
        self.mode, spec = lists[0]
        self.ranges = [_cut_range(part) for part in spec.split(",")]
        delims = [v for k, v in opts if k == "d"]
        self.delim = (delims[-1] if delims else "\t").encode("utf-8", "surrogateescape")
        if len(self.delim) != 1 and self.mode == "f":
            raise UsageError("-d DELIM must be one character")
        self.only_delimited = any(k == "s" for k, _ in opts)

    def line(self, line: bytes) -> None:
        self.tick()
        body = line[:-1] if line.endswith(b"\n") else line
        if self.mode == "f":
            if self.delim not in body:
                if not self.only_delimited:
                    self.out(body + b"\n")
                return
            fields = body.split(self.delim)
            self.out(self.delim.join(f for k, f in enumerate(fields, 1) if self._wanted(k)) + b"\n")
        elif self.mode == "c":
            text = body.decode("utf-8", "surrogateescape")
            kept = "".join(c for k, c in enumerate(text, 1) if self._wanted(k))
            self.out(kept.encode("utf-8", "surrogateescape") + b"\n")
        else:
            self.out(bytes(b for k, b in enumerate(body, 1) if self._wanted(k)) + b"\n")

    def _wanted(self, k: int) -> bool:
        return any(lo <= k <= hi for lo, hi in self.ranges)


def _cut_range(part: str) -> tuple[int, int]:
    """``N``, ``N-M``, ``N-`` or ``-M`` of a cut list as (first, last), counted from 1."""
    lo, dash, hi = part.partition("-")
    try:
        first = _count(lo) if lo else 1
        last = (_count(hi) if hi else 1 << 62) if dash else first
    except UsageError:
        raise UsageError(f"bad list '{part}'") from None
    if first < 1 or last < first:
        raise UsageError(f"bad list '{part}'")
    return first, last


FILTERS: dict[str, type[Filter]] = {f.name: f for f in (_Cat, _Cut, _Grep, _Head, _Tail, _Wc, _Sort)}
