"""The shell's language: the lexer and parser of a command line (words, quoting, ``$`` expansion, operators,
redirections) and glob patterns. What a real ``sh`` would run but this one cannot is a syntax error here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


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
