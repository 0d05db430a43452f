"""The line filters a pipe feeds: ``cat``, ``head``, ``tail``, ``wc``, ``sort`` and ``grep`` (basic and extended
regexes), each a stage that reads its input as it arrives."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

from vlui.served.numbers import parse_long
from vlui.served.patterns import Pattern, PatternError, TooCostly, grep_pattern, posix_regex
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


class _Sed(Filter):
    """``sed [-nE] [-e SCRIPT]... [SCRIPT] [FILE...]``: toybox's for the commands scripts use most: ``s/RE/REPL/FLAGS``
    (``g``, ``p``, ``I``, a number; ``&`` and ``\\1``-``\\9`` in REPL), ``d``, ``p``, ``q`` and ``=``, each after
    an address (``N``, ``$``, ``/RE/``) or a range of two, ``!`` negating it, separated by ``;`` or newlines. The
    regular expressions are grep's (RE2, linear in the line). Deviations: ``-i`` (editing a file in place) and the
    other commands (``a i c y h g x n N b t {}``...) are refused in one line."""

    name, flags, valued = "sed", "nEri", "e"

    def setup(self, opts: list[tuple[str, str]]) -> None:
        o = {k for k, _ in opts}
        if "i" in o:
            raise UsageError("-i: the simulated phone's sed edits no file in place (write the output with >)")
        scripts = [v for k, v in opts if k == "e"]
        if not scripts:
            if not self.files:
                raise UsageError("Needs 1 argument")
            scripts = [self.files.pop(0)]
        self.quiet, self.extended = "n" in o, bool(o & {"E", "r"})
        self.commands = _sed_parse("\n".join(scripts), self.extended)
        self.number = 0
        self.held: bytes | None = None  # the line read before this one: the last line (for $) is known at close

    def line(self, line: bytes) -> None:
        held, self.held = self.held, line
        if held is not None:
            self._run(held, last=False)

    def finish(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            self._run(held, last=True)

    def _run(self, line: bytes, last: bool) -> None:
        self.tick()
        self.number += 1
        newline = line.endswith(b"\n")
        space = line[:-1] if newline else line
        end = b"\n" if newline or not last else b""
        for c in self.commands:
            if not c.applies(space, self.number, last):
                continue
            if c.name == "d":
                return
            if c.name == "p":
                self.out(space + b"\n")
            elif c.name == "=":
                self.out(f"{self.number}\n".encode())
            elif c.name == "q":
                if not self.quiet:
                    self.out(space + end)
                self.held = None  # what was read after this line is not printed
                raise PipeClosed
            else:
                try:
                    space, done = c.pattern.subn(c.replace, space, 0 if c.every else 1, c.nth, PIPE_INPUT_MAX)
                except TooCostly as err:
                    raise Abort(f"sed: {err}\n", 1) from None
                if done and c.print:
                    self.out(space + b"\n")
        if not self.quiet:
            self.out(space + end)


class _SedCommand:
    """One command of a sed script: its address (None, or one or two), ``!``, its name and, for ``s``, the
    pattern, the replacement and the flags."""

    def __init__(self) -> None:
        self.first = self.last = None  # each ("line", N), ("end", 0) or ("re", Pattern)
        self.negate = self.active = False
        self.name = ""
        self.pattern: Pattern | None = None
        self.template: list[bytes | int] = []  # literal bytes, or a group's number (0: the whole match)
        self.every = self.print = False
        self.nth = 1

    def _matches(self, address, space: bytes, number: int, last: bool) -> bool:
        kind, value = address
        return {"line": number == value, "end": last}.get(kind, False) if kind != "re" else value.search(space)

    def applies(self, space: bytes, number: int, last: bool) -> bool:
        if self.first is None:
            hit = True
        elif self.last is None:
            hit = self._matches(self.first, space, number, last)
        elif self.active:
            hit = True
            kind, value = self.last
            self.active = not (number >= value if kind == "line" else self._matches(self.last, space, number, last))
        else:
            hit = self._matches(self.first, space, number, last)
            kind, value = self.last
            self.active = hit and not (kind == "line" and value <= number)
        return hit != self.negate

    def replace(self, group: Callable[[int], bytes]) -> bytes:
        return b"".join(part if isinstance(part, bytes) else group(part) for part in self.template)


def _sed_parse(script: str, extended: bool) -> list[_SedCommand]:
    """A sed script's commands; a script sed cannot run is a UsageError naming what is wrong."""
    commands, i = [], 0
    while i < len(script):
        while i < len(script) and script[i] in " \t\n;":
            i += 1
        if i == len(script):
            break
        c = _SedCommand()
        c.first, i = _sed_address(script, i, extended)
        if c.first is not None and script[i:i + 1] == ",":
            c.last, i = _sed_address(script, i + 1, extended)
            if c.last is None:
                raise UsageError(f"bad address in '{script}'")
        while script[i:i + 1] in (" ", "!"):
            c.negate = c.negate or script[i] == "!"
            i += 1
        c.name = script[i:i + 1]
        i += 1
        if c.name == "s":
            i = _sed_substitution(c, script, i, extended)
        elif c.name not in ("d", "p", "q", "="):
            raise UsageError(f"unknown command '{c.name}' (the simulated phone's sed runs s, d, p, q and =)"
                             if c.name else f"missing command in '{script}'")
        while i < len(script) and script[i] in " \t":
            i += 1
        if i < len(script) and script[i] not in ";\n}":
            raise UsageError(f"extra characters after command in '{script}'")
        commands.append(c)
    return commands


def _sed_address(script: str, i: int, extended: bool) -> tuple[tuple | None, int]:
    m = re.match(r"\d+", script[i:])
    if m:
        return ("line", int(m.group()[-12:])), i + m.end()
    if script[i:i + 1] == "$":
        return ("end", 0), i + 1
    if script[i:i + 1] in ("/", "\\"):
        delim = script[i + 1] if script[i] == "\\" and i + 1 < len(script) else "/"
        start = i + 2 if script[i] == "\\" else i + 1
        regex, i = _sed_delimited(script, start, delim)
        return ("re", _sed_pattern(regex, extended, False)), i
    return None, i


def _sed_delimited(script: str, i: int, delim: str) -> tuple[str, int]:
    """The text from ``i`` up to an unescaped ``delim`` (``\\delim`` is the delimiter itself), and what follows."""
    out = []
    while i < len(script) and script[i] != delim:
        if script[i] == "\\" and i + 1 < len(script):
            out.append(script[i + 1] if script[i + 1] == delim else script[i:i + 2])
            i += 2
        else:
            out.append(script[i])
            i += 1
    if i >= len(script):
        raise UsageError(f"unterminated address regex or s command in '{script}'")
    return "".join(out), i + 1


def _sed_pattern(regex: str, extended: bool, ignore_case: bool) -> Pattern:
    try:
        return Pattern(posix_regex(regex, extended), ignore_case, captures=True)
    except PatternError as err:
        raise UsageError(f"bad regex '{regex}': {err}") from None


def _sed_substitution(c: _SedCommand, script: str, i: int, extended: bool) -> int:
    if i >= len(script) or script[i] in "\\\n":
        raise UsageError(f"bad s command in '{script}'")
    delim = script[i]
    regex, i = _sed_delimited(script, i + 1, delim)
    repl, i = _sed_delimited(script, i, delim)
    ignore_case = False
    while i < len(script) and script[i] not in ";\n} \t":
        flag = script[i]
        m = re.match(r"\d+", script[i:])
        if m:
            c.nth = max(1, int(m.group()[-9:]))
            i += m.end()
            continue
        if flag not in "gpIi":
            raise UsageError(f"unknown option to 's': '{flag}'")
        c.every, c.print = c.every or flag == "g", c.print or flag == "p"
        ignore_case = ignore_case or flag in "Ii"
        i += 1
    c.pattern = _sed_pattern(regex, extended, ignore_case)
    k = 0
    while k < len(repl):
        ch = repl[k]
        if ch == "&":
            c.template.append(0)
        elif ch == "\\" and k + 1 < len(repl):
            nxt = repl[k + 1]
            k += 1
            if nxt.isdigit():
                if int(nxt) > c.pattern.groups:
                    raise UsageError(f"invalid reference \\{nxt} on s command's RHS")
                c.template.append(int(nxt))
            else:
                c.template.append({"n": b"\n", "t": b"\t"}.get(nxt, nxt.encode("utf-8", "surrogateescape")))
        else:
            c.template.append(ch.encode("utf-8", "surrogateescape"))
        k += 1
    return i


FILTERS: dict[str, type[Filter]] = {f.name: f for f in (_Cat, _Cut, _Grep, _Head, _Tail, _Wc, _Sort, _Sed)}
