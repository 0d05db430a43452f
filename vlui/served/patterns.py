"""The patterns a client gives the served phone, matched in time linear in the text: grep's regular expressions
(POSIX basic and extended, as toybox's grep takes them through bionic's ``regcomp``), logcat's ``-e`` (ECMAScript, as
Android 10's logcat hands it to ``std::regex``), the shell's globs (``case`` patterns and file names) and a content
provider's ``LIKE``.

Python's ``re`` backtracks: ``(a+)+$`` against 26 a's and a ``!``, or the glob ``*a*a*a*a*a*a*a*b`` against 75 a's,
runs for seconds to hours while holding the interpreter, and every client of the phone waits. Here each pattern is
translated to RE2's syntax and matched by RE2 (``google-re2``), which never backtracks: a match costs at most the
text's length times the pattern's compiled size, and RE2 releases the interpreter while it runs
(docs/security.md has the measurements behind the choice).

What RE2 cannot express (back-references ``\\1``, lookaround) is refused with one error line, never matched another
way. A match whose worst case (the text's length times the pattern's size, see :data:`WORK_LIMIT`) would take more
than a few seconds is refused too (:class:`TooCostly`), before it starts.
"""

from __future__ import annotations

from collections.abc import Callable

import re2

from vlui.errors import VluiError

# A compiled pattern keeps at most this much memory (its program and its DFA's cache; RE2's default is 8 MiB): every
# client's grep has one, and RE2 falls back to its slower automaton, still linear, when the cache is full.
MAX_MEM = 1 << 20
# The most work one match may take: the text's length times the pattern's program size. RE2's automaton (the slowest
# of its engines, taken when its DFA runs out of memory) costs about 7 ns per unit on a 2-core machine, so a match
# stays under ~8 s of one core, and unlike a backtracking engine's, it leaves the interpreter to the other clients
# while it runs.
WORK_LIMIT = 1 << 30
RE_DUP_MAX = 255  # bionic's largest count in a{n,m} (limits.h)

_OPTIONS = re2.Options()
_OPTIONS.max_mem = MAX_MEM
_OPTIONS.never_capture = True  # whether a line matches, never what a group took: the fastest of RE2's paths
_OPTIONS.log_errors = False  # a bad pattern is the client's: said on its stream, not on the server's stderr


class PatternError(VluiError):
    """A pattern that does not compile; the message says why, as bionic's ``regerror`` words it where it has a word
    for it."""


class TooCostly(VluiError):
    """A match whose worst case exceeds :data:`WORK_LIMIT` (a complex pattern against a very long text)."""


# RE2's errors, as bionic's regerror says them (regex/regerror.c); the others are said as RE2 says them
_REGERROR = (("missing ]", "brackets ([ ]) not balanced"), ("missing )", "parentheses not balanced"),
             ("unexpected )", "parentheses not balanced"), ("trailing \\", "trailing backslash (\\)"),
             ("no argument for repetition operator", "repetition-operator operand invalid"),
             ("bad repetition operator", "repetition-operator operand invalid"),
             ("invalid repetition size", "invalid repetition count(s)"),
             ("invalid character class range", "invalid character range"),
             ("invalid character class", "invalid character class"))


class Pattern:
    """A compiled pattern: :meth:`search` (anywhere in the text) and :meth:`fullmatch` (the whole text). Texts are
    bytes (a str is encoded as UTF-8, its undecodable bytes as they came: surrogateescape)."""

    def __init__(self, regex: str, ignore_case: bool = False, captures: bool = False) -> None:
        options = _OPTIONS
        if ignore_case or captures:  # captures: what groups took, for a substitution (sed's s///)
            options = re2.Options()
            for name in re2.Options.NAMES:
                setattr(options, name, getattr(_OPTIONS, name))
            options.case_sensitive = not ignore_case
            options.never_capture = not captures
        try:
            # the class itself, not re2.compile: that keeps the last 128 patterns (and their memory) in a cache
            self._regex = re2._Regexp(_bytes(regex), options)
        except re2.error as err:
            raise PatternError(_regerror(err)) from None
        self.size = self._regex._regexp.ProgramSize()
        self.groups = self._regex.groups  # capturing groups

    def _check(self, text: bytes) -> bytes:
        if self.size * max(len(text), 1) > WORK_LIMIT:
            raise TooCostly(f"a pattern of {self.size} steps against {len(text)} bytes: the simulated phone bounds "
                            f"a match at {WORK_LIMIT} steps")
        return text

    def search(self, text: bytes | str) -> bool:
        return self._regex.search(self._check(_bytes(text))) is not None

    def fullmatch(self, text: bytes | str) -> bool:
        return self._regex.fullmatch(self._check(_bytes(text))) is not None

    def subn(self, replace: Callable[[Callable[[int], bytes]], bytes], text: bytes, count: int = 0, nth: int = 1,
             limit: int = 1 << 62) -> tuple[bytes, int]:
        """``text`` with its matches from the ``nth`` on (at most ``count`` of them; 0: all) replaced by
        ``replace(group)``, where ``group(n)`` is what group n took (0: the whole match, b"" for a group that took
        nothing); and how many were replaced. :class:`TooCostly` once the result passes ``limit`` bytes. Needs a
        pattern made with ``captures``."""
        out, pos, done, size = [], 0, 0, 0
        for k, m in enumerate(self._regex.finditer(self._check(text)), 1):
            if k < nth:
                continue
            piece = replace(lambda n, m=m: m.group(n) or b"")
            out += [text[pos:m.start()], piece]
            size += m.start() - pos + len(piece)
            if size > limit:
                raise TooCostly(f"a line that grows past {limit} bytes: the simulated phone holds no longer line")
            pos = m.end()
            done += 1
            if done == count:
                break
        return b"".join(out) + text[pos:], done


def _bytes(text: bytes | str) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


def _regerror(err: re2.error) -> str:
    message = err.args[0].decode("utf-8", "replace") if err.args and isinstance(err.args[0], bytes) else str(err)
    for start, said in _REGERROR:
        if message.startswith(start):
            return said
    return message


def escape(text: str) -> str:
    """``text`` as an RE2 pattern that matches it literally (re2.escape cannot take the surrogates of undecodable
    bytes). RE2 reads a backslash before any ASCII character that is not a letter, digit or ``_`` as that character."""
    return "".join("\\" + c if c.isascii() and not (c.isalnum() or c == "_") else c for c in text)


def _unsupported(what: str) -> PatternError:
    return PatternError(f"{what} not supported by the simulated phone (it matches in linear time)")


# ---------------------------------------------------------------------------------------------- POSIX regexes
def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The POSIX bracket expression at ``pattern[i] == "["`` as an RE2 class, and where it ends. Inside it a backslash
    is a character like any other; ``]`` first is one too; ``[:alpha:]`` is a class, ``[=a=]`` and ``[.a.]`` the
    character they name."""
    out = ["["]
    j = i + 1
    if pattern[j:j + 1] == "^":
        out.append("^")
        j += 1
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        first = False
        if c == "[" and pattern[j + 1:j + 2] in (":", "=", "."):
            kind = pattern[j + 1]
            end = pattern.find(kind + "]", j + 2)
            if end < 0:
                raise PatternError("brackets ([ ]) not balanced")
            name = pattern[j + 2:end]
            if kind == ":":
                out.append(f"[:{name}:]")
            elif len(name) == 1:
                out.append(_class_char(name))
            else:
                raise PatternError("invalid collating element")
            j = end + 2
            continue
        out.append(c if c == "-" else _class_char(c))
        j += 1
    raise PatternError("brackets ([ ]) not balanced")


def _class_char(c: str) -> str:
    """One character inside an RE2 class, escaped where RE2 would read it otherwise."""
    return "\\" + c if c in "\\[]^-" else c


def _interval(pattern: str, i: int) -> tuple[str, int]:
    """The ``{n}``, ``{n,}`` or ``{n,m}`` that ``pattern[i:]`` starts with (after ``{``, or ``\\{`` in a basic
    regex, at ``i``), and where it ends; counts past RE_DUP_MAX or backwards are bionic's REG_BADBR."""
    j = i
    while j < len(pattern) and pattern[j].isascii() and (pattern[j].isdigit() or pattern[j] == ","):
        j += 1
    body = pattern[i:j]
    low, comma, high = body.partition(",")
    if not low.isdigit() or (high and not high.isdigit()) or "," in high:
        raise PatternError("invalid repetition count(s)")
    if int(low) > RE_DUP_MAX or (high and not int(low) <= int(high) <= RE_DUP_MAX):
        raise PatternError("invalid repetition count(s)")
    return "{" + body + "}", j


def _no_second_repetition(pattern: str, i: int) -> None:
    """A repetition operator right after another (``a**``, ``a+{2}``) is bionic's REG_BADRPT in an extended regex."""
    nxt = pattern[i:i + 1]
    if nxt in ("*", "+", "?") or (nxt == "{" and pattern[i + 1:i + 2].isdigit()):
        raise PatternError("repetition-operator operand invalid")


def posix_regex(pattern: str, extended: bool) -> str:
    """A POSIX regular expression (basic, or ``extended`` as ``grep -E``) in RE2's syntax.

    As bionic reads it: a bracket expression's backslash is a character; ``\\X`` outside one is the character X, but
    for GNU's ``\\w \\W \\s \\S \\b \\B \\< \\>`` (and ``\\d \\D``), which toybox's users write and which are kept as
    what they mean; ``{`` not followed by a digit is a character. In a basic regex ``\\( \\) \\{ \\} \\| \\+ \\?`` are
    the operators and the bare characters literals, ``*`` first is a literal, ``^`` an anchor only first and ``$``
    only last. Back-references cannot be matched in linear time: :class:`PatternError`."""
    out: list[str] = []
    i, n = 0, len(pattern)
    start = True  # at the start of the expression or of a group or alternative
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 == n:
                raise PatternError("trailing backslash (\\)")
            nxt = pattern[i + 1]
            i += 2
            if nxt.isdigit() and nxt != "0":
                raise _unsupported("back-references (\\" + nxt + ") are")
            if not extended and nxt in "(){}|+?":
                if nxt == "{":
                    if start:
                        raise PatternError("repetition-operator operand invalid")
                    end = pattern.find("\\}", i)
                    if end < 0:
                        raise PatternError("braces not balanced")
                    text, j = _interval(pattern, i)
                    if j != end:
                        raise PatternError("invalid repetition count(s)")
                    out.append(text)
                    i = end + 2
                elif nxt == "}":
                    raise PatternError("braces not balanced")
                else:
                    out.append(nxt)
                start = nxt in "(|"
                continue
            if nxt in "wWsSdDbB":
                out.append("\\" + nxt)
            elif nxt in "<>":
                out.append("\\b")
            else:
                out.append(escape(nxt))
            start = False
            continue
        if c == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
            start = False
            continue
        i += 1
        if extended:
            if c in "*+?":
                if start:
                    raise PatternError("repetition-operator operand invalid")
                out.append(c)
                _no_second_repetition(pattern, i)
            elif c == "{":
                if i < n and pattern[i].isascii() and pattern[i].isdigit():
                    if start:
                        raise PatternError("repetition-operator operand invalid")
                    if pattern.find("}", i) < 0:
                        raise PatternError("braces not balanced")
                    text, i = _interval(pattern, i)
                    if pattern[i:i + 1] != "}":
                        raise PatternError("invalid repetition count(s)")
                    i += 1
                    out.append(text)
                    _no_second_repetition(pattern, i)
                else:
                    out.append("\\{")
                start = False
                continue
            elif c == "(":
                if pattern[i:i + 1] in ("*", "+", "?"):
                    raise PatternError("repetition-operator operand invalid")
                out.append("(")
            elif c in ")|":
                if c == "|" and (out[-1:] in ([], ["("], ["|"]) or pattern[i:i + 1] in ("", ")")):
                    raise PatternError("empty (sub)expression")
                out.append(c)
            elif c in "^$.":
                out.append(c)
            else:
                out.append(escape(c))
            start = c in "(|^"
            continue
        # a basic regex's bare characters
        if c == "*" and not start:
            out.append("*")
        elif c == "^" and start:
            out.append("^")
            start = True
            continue
        elif c == "$" and (i == n or pattern.startswith("\\)", i) or pattern.startswith("\\|", i)):
            out.append("$")
        elif c == ".":
            out.append(".")
        else:
            out.append(escape(c))
        start = False
    return "".join(out)


def grep_pattern(patterns: list[str], extended: bool, fixed: bool, ignore_case: bool, word: bool,
                 line: bool) -> Pattern:
    """What ``grep`` matches a line against: any of ``patterns`` (``-e`` each, or one with newlines between them),
    POSIX basic or ``extended`` or ``fixed`` strings, ``-i``, ``-w`` (a match with no word character either side),
    ``-x`` (the whole line)."""
    regexes = []
    for p in patterns:
        for alt in p.split("\n"):
            rx = escape(alt) if fixed else posix_regex(alt, extended)
            if word:
                rx = rf"(?:^|\W)(?:{rx})(?:\W|$)"
            if line:
                rx = rf"^(?:{rx})$"
            regexes.append(rx)
    return Pattern("|".join(f"(?:{r})" for r in regexes), ignore_case)


def ecmascript_pattern(pattern: str) -> Pattern:
    """``logcat -e``'s pattern: logcat gives it to ``std::regex`` (ECMAScript), whose syntax RE2 reads as it is but
    for back-references and lookaround, which it refuses."""
    for construct, what in (("(?=", "lookahead (?=...) is"), ("(?!", "lookahead (?!...) is")):
        if construct in pattern:
            raise _unsupported(what)
    return Pattern(pattern)


# ---------------------------------------------------------------------------------------------- globs and LIKE
def glob_regex(pattern: str, path: bool = True) -> str:
    """A glob in RE2's syntax: ``*`` any run of characters, ``?`` one, ``[...]`` one of a set (``[!...]`` one not in
    it), anything else itself. A ``path`` glob (one component of a file name) stops ``*`` and ``?`` at ``/``; a
    ``case`` pattern's match any character. (That ``*`` matches no leading dot in a file name is the caller's
    check: RE2 has no lookahead.)"""
    out, i = [], 0
    any_char = "[^/]" if path else "(?s:.)"
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(any_char + "*")
        elif c == "?":
            out.append(any_char)
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(escape(c))
            else:
                body = pattern[i + 1:end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                chars = "".join(c if c == "-" and 0 < k < len(body) - 1 else _class_char(c)
                                for k, c in enumerate(body))
                out.append("[" + ("^" if negate else "") + chars + "]")
                i = end
        else:
            out.append(escape(c))
        i += 1
    return "".join(out)


def glob(pattern: str, path: bool = True) -> Pattern:
    """A glob (see :func:`glob_regex`); a set with a backwards range matches nothing, as in mksh."""
    try:
        return Pattern(glob_regex(pattern, path))
    except PatternError:
        return Pattern(r"\b\B")  # nothing


LIKE_PATTERN_MAX = 50000  # SQLite's SQLITE_MAX_LIKE_PATTERN_LENGTH


def like(pattern: str) -> Pattern:
    """SQLite's ``LIKE``: ``%`` any run of characters, ``_`` one, case-insensitive for ASCII letters only (as SQLite
    without ICU). A pattern over SQLite's 50,000 bytes is SQLite's own error."""
    if len(pattern.encode("utf-8", "surrogateescape")) > LIKE_PATTERN_MAX:
        raise PatternError("LIKE or GLOB pattern too complex")
    parts = []
    for c in pattern:
        if c == "%":
            parts.append("(?s:.*)")
        elif c == "_":
            parts.append("(?s:.)")
        elif c.isascii() and c.isalpha():
            parts.append(f"[{c.lower()}{c.upper()}]")
        else:
            parts.append(escape(c))
    return Pattern("".join(parts))
