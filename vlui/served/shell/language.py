"""The shell's language: the lexer and parser of a script (words, quoting, ``$`` expansions, operators,
redirections, and mksh's compound commands) and ``$(( ))`` arithmetic; its globs are matched by
:mod:`vlui.served.patterns`. What a real ``sh`` would run but this one cannot (command substitution, ``&``, subshells, here-documents) is a syntax error here.

Everything is linear in the length of the script, and nothing recurses without a bound: a script nests at most
:data:`MAX_NESTING` compound commands, an arithmetic expression 64 levels, and a pipeline is a flat list however
long."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

MAX_NESTING = 64  # compound commands written inside one another; mksh has no such limit


class ShellSyntaxError(Exception):
    """A script this shell does not run; the message follows ``/system/bin/sh: ``. ``incomplete``: more lines could
    complete it (an unclosed quote, ``if`` or ``{``), as a shell reading its input waits for them."""

    def __init__(self, message: str, incomplete: bool = False) -> None:
        super().__init__(message)
        self.incomplete = incomplete


def _not_supported(what: str) -> ShellSyntaxError:
    return ShellSyntaxError(f"{what}: not supported by the simulated phone's shell")


# ---------------------------------------------------------------------------------------------- the syntax tree
@dataclass
class Word:
    """A shell word as written: its parts keep what was quoted, and ``$`` expansions stay unexpanded until the word
    runs (``$?`` changes between the commands of a line). Kinds: ``lit`` (unquoted text), ``quoted`` (text inside
    quotes or after a backslash), ``var`` and ``qvar`` (a variable, outside and inside double quotes), ``arith`` and
    ``qarith`` (the text of a ``$(( ))``)."""

    parts: list[tuple[str, str]] = field(default_factory=list)
    quoted: bool = False  # any quotes: ``''`` is a word, an unquoted empty expansion is not

    def add(self, kind: str, text: str) -> None:
        self.parts.append((kind, text))

    def finish(self) -> Word:
        """Adjacent parts of one kind joined (once, so a word of many escapes lexes in linear time)."""
        merged: list[tuple[str, str]] = []
        run: list[str] = []
        for kind, text in self.parts:
            if merged and kind == merged[-1][0] and kind in ("lit", "quoted"):
                run.append(text)
                continue
            if run:
                merged[-1] = (merged[-1][0], "".join(run))
            merged.append((kind, text))
            run = [text]
        if run:
            merged[-1] = (merged[-1][0], "".join(run))
        self.parts = merged
        return self

    def literal(self) -> str | None:
        """The word's text when it is plain unquoted text (how reserved words and names are written), else None."""
        if len(self.parts) == 1 and self.parts[0][0] == "lit":
            return self.parts[0][1]
        return None

    def io_number(self) -> int | None:
        """The file descriptor a word like the ``2`` of ``2>&1`` names, else None."""
        text = self.literal()
        return int(text) if text is not None and text.isascii() and text.isdigit() and len(text) < 4 else None


@dataclass
class Redirect:
    fd: int  # 0, 1 or 2
    op: str  # ">", ">>", ">&" or "<"
    target: Word


@dataclass
class Simple:
    """``NAME=VALUE ... WORD ... REDIRECT ...``."""

    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirects: list[Redirect]


@dataclass
class Group:
    """``{ LIST; }``."""

    body: CommandList
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class If:
    """``if C; then B; elif C; then B; else B; fi``: (condition, body) pairs, and the else body."""

    branches: list[tuple[CommandList, CommandList]]
    orelse: CommandList | None
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Loop:
    """``while C; do B; done`` (``until``: while C fails)."""

    until: bool
    cond: CommandList
    body: CommandList
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class For:
    """``for NAME [in WORD...]; do B; done`` (without ``in``: the positional parameters)."""

    name: str
    items: list[Word] | None
    body: CommandList
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Case:
    """``case WORD in PATTERN|PATTERN) B;; ... esac``."""

    subject: Word
    arms: list[tuple[list[Word], CommandList]]
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Function:
    """``NAME() COMMAND`` or ``function NAME COMMAND``: defines NAME."""

    name: str
    body: Node


Node = Union[Simple, Group, If, Loop, For, Case, Function]


@dataclass
class Pipeline:
    commands: list[Node]
    negated: bool = False  # ``! PIPELINE``


AndOr = list[tuple[str, Pipeline]]  # (connector, pipeline): ``;`` (always), ``&&`` or ``||``
CommandList = list[AndOr]


# ---------------------------------------------------------------------------------------------- the lexer
_OPERATORS = ("&&", "||", ";;", ">>", ">&", ">|", "<<", "<&", "<>", "&", "|", ";", "<", ">", "(", ")", "\n")
_UNSUPPORTED = {"&": "background jobs (&)", "<<": "here-documents (<<)", "<&": "input redirection (<&)",
                "<>": "input redirection (<>)"}
_OPERATOR = re.compile("|".join(re.escape(o) for o in _OPERATORS))  # longest first, as _OPERATORS lists them
_BLANKS = re.compile(r"[ \t\r]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN = re.compile(r"[^ \t\r\n;&|<>()\\'\"$`#]+")  # unquoted text with nothing special in it
_PLAIN_QUOTED = re.compile(r"[^\"\\$`]+")  # the same inside double quotes
_SPECIAL_PARAMS = "?$#!-*@"


def _lex(script: str, starts: list[int] | None = None) -> list[Word | str | int]:
    """Words, operators (strings) and the file descriptors (ints) written just before ``>`` or ``<``. With ``starts``,
    where each token begins is appended to it, and a script cut in the middle of a word (an unclosed quote) ends
    before that word instead of failing: a reader of lines waits for the rest."""
    tokens: list[Word | str | int] = []
    word: Word | None = None
    word_start = 0
    i, n = 0, len(script)

    def emit(token, start: int) -> None:
        tokens.append(token)
        if starts is not None:
            starts.append(start)
    try:
        while i < n:
            c = script[i]
            if c in " \t\r;&|<>()\n":
                if word is not None:
                    fd = word.io_number() if c in "<>" else None
                    emit(word.finish() if fd is None else fd, word_start)
                    word = None
                if c in " \t\r":
                    i = _BLANKS.match(script, i).end()
                else:
                    op = _OPERATOR.match(script, i).group()
                    emit(op, i)
                    i += len(op)
                continue
            if c == "#" and word is None:  # a comment, to the end of the line
                end = script.find("\n", i)
                i = n if end < 0 else end
                continue
            if word is None:
                word, word_start = Word(), i
            if c == "\\":
                if script.startswith("\\\n", i):  # a continued line
                    i += 2
                    continue
                if i + 1 == n:
                    raise ShellSyntaxError("syntax error: unexpected EOF", incomplete=True)
                word.add("quoted", script[i + 1])
                i += 2
            elif c == "'":
                end = script.find("'", i + 1)
                if end < 0:
                    raise ShellSyntaxError("no closing quote", incomplete=True)
                word.add("quoted", script[i + 1:end])
                word.quoted = True
                i = end + 1
            elif c == '"':
                i = _lex_double_quoted(script, i + 1, word)
            elif c == "$":
                i = _lex_dollar(script, i, word, quoted=False)
            elif c == "`":
                raise _not_supported("command substitution (`...`)")
            else:
                m = _PLAIN.match(script, i)
                text = m.group() if m else c  # a "#" inside a word is text
                word.add("lit", text)
                i += len(text)
    except ShellSyntaxError as err:
        if starts is None or not err.incomplete:
            raise
        starts.append(word_start if word is not None else i)  # where the cut word begins
        return tokens
    if word is not None:
        emit(word.finish(), word_start)
    return tokens


def _lex_double_quoted(script: str, i: int, word: Word) -> int:
    word.quoted = True
    while i < len(script):
        c = script[i]
        if c == '"':
            return i + 1
        if c == "\\" and script[i + 1:i + 2] in ("$", "`", '"', "\\", "\n"):
            if script[i + 1] != "\n":
                word.add("quoted", script[i + 1])
            i += 2
        elif c == "$":
            i = _lex_dollar(script, i, word, quoted=True)
        elif c == "`":
            raise _not_supported("command substitution (`...`)")
        else:
            m = _PLAIN_QUOTED.match(script, i)
            text = m.group() if m else c
            word.add("quoted", text)
            i += len(text)
    raise ShellSyntaxError("no closing quote", incomplete=True)


def _lex_dollar(script: str, i: int, word: Word, quoted: bool) -> int:
    kind = "qvar" if quoted else "var"
    nxt = script[i + 1:i + 2]
    if script.startswith("$((", i):
        end = _arith_end(script, i + 3)
        word.add("qarith" if quoted else "arith", script[i + 3:end])
        return end + 2
    if nxt == "(":
        raise _not_supported("command substitution $(...)")
    if nxt and (nxt in _SPECIAL_PARAMS or nxt in "0123456789"):  # ASCII digits: '$¹' is no parameter
        word.add(kind, nxt)
        return i + 2
    if nxt == "{":
        end = script.find("}", i + 2)
        name = script[i + 2:end] if end > 0 else ""
        if not (_NAME.fullmatch(name) or (name.isascii() and name.isdigit())
                or (len(name) == 1 and name in _SPECIAL_PARAMS)):
            if end < 0:
                raise ShellSyntaxError("syntax error: unexpected EOF", incomplete=True)
            raise ShellSyntaxError(f"{script[i:end + 1]}: bad substitution")
        word.add(kind, name)
        return end + 1
    m = _NAME.match(script, i + 1)
    if m is not None:
        word.add(kind, m.group())
        return m.end()
    word.add("quoted" if quoted else "lit", "$")
    return i + 1


def _arith_end(script: str, i: int) -> int:
    """Where the ``))`` that closes a ``$((`` starting its expression at ``i`` is (parentheses nest inside)."""
    depth = 0
    for m in re.compile(r"[()]").finditer(script, i):
        if m.group() == "(":
            depth += 1
        elif depth:
            depth -= 1
        elif script.startswith("))", m.start()):
            return m.start()
        else:
            raise _not_supported("command substitution $(...)")  # ``$((a) ...)``: a subshell inside $( )
    raise ShellSyntaxError("no closing quote", incomplete=True)


# ---------------------------------------------------------------------------------------------- the parser
_CLOSERS = ("then", "elif", "else", "fi", "do", "done", "esac", "}")  # reserved words that end a list


class Parser:
    """A script: ``list := and_or ((; | newline) and_or)*``, ``and_or := pipeline ((&& | ||) pipeline)*``,
    ``pipeline := [!] command (| command)*``, and a command is a simple command, a compound command (``{ }``,
    ``if``, ``while``, ``until``, ``for``, ``case``) or a function definition."""

    def __init__(self, script: str, partial: bool = False) -> None:
        self.starts: list[int] | None = [] if partial else None
        self.tokens = _lex(script, self.starts)
        self.i = 0
        self.opened: list[str] = []  # the compound commands being parsed, for "'if' unmatched"
        self.length = len(script)

    # ------------------------------------------------------------------------------------------ tokens
    def peek(self, ahead: int = 0) -> Word | str | int | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self) -> Word | str | int | None:
        tok = self.peek()
        self.i += 1
        return tok

    def reserved(self) -> str | None:
        """The reserved word (or ``{``, ``}``, ``!``) the next token is, where one can stand."""
        tok = self.peek()
        return tok.literal() if isinstance(tok, Word) else None

    def unexpected(self, tok) -> ShellSyntaxError:
        if tok is None:
            if self.opened:
                return ShellSyntaxError(f"syntax error: '{self.opened[-1]}' unmatched", incomplete=True)
            return ShellSyntaxError("syntax error: unexpected EOF", incomplete=True)
        if isinstance(tok, Word):
            text = "".join(t for _, t in tok.parts)
            return ShellSyntaxError(f"syntax error: '{text[:64]}' unexpected")
        if tok in _UNSUPPORTED:
            return _not_supported(_UNSUPPORTED[tok])
        return ShellSyntaxError(f"syntax error: '{'newline' if tok == chr(10) else tok}' unexpected")

    def expect(self, word: str) -> None:
        if self.reserved() != word:
            raise self.unexpected(self.peek())
        self.take()

    def skip_newlines(self) -> None:
        while self.peek() == "\n":
            self.take()

    # ------------------------------------------------------------------------------------------ lists
    def parse(self) -> CommandList:
        """The whole script."""
        items = self.list(top=True)
        if self.peek() is not None:
            raise self.unexpected(self.peek())
        return items

    def complete_lines(self) -> tuple[CommandList, int]:
        """For a ``partial`` parser (a reader of lines): the commands of the script's first complete lines, and
        where the rest (a command that more lines may complete) begins. Raises what is wrong for good."""
        items: CommandList = []
        committed, done = 0, 0  # how many items, and how many tokens, end with a newline
        while True:
            try:
                self.skip_newlines()
                if self.peek() is None:
                    return items[:committed], self.start(done)
                items.append(self.and_or())
                tok = self.peek()
                if tok in (";", "\n"):
                    self.take()
                elif tok is not None:
                    raise self.unexpected(tok)
                if tok == "\n":
                    committed, done = len(items), self.i
            except ShellSyntaxError as err:
                if not err.incomplete:
                    raise
                return items[:committed], self.start(done)

    def start(self, token: int) -> int:
        return self.starts[token] if self.starts is not None and token < len(self.starts) else self.length

    def list(self, top: bool = False) -> CommandList:
        """and_or items up to a reserved word that closes a compound command, ``;;``, ``)`` or the end. Inside a
        compound command the list may not be empty."""
        items: CommandList = []
        while True:
            self.skip_newlines()
            tok = self.peek()
            if tok is None or tok in (";;", ")") or self.reserved() in _CLOSERS:
                if not items and not top:
                    raise self.unexpected(tok)
                return items
            items.append(self.and_or())
            tok = self.peek()
            if tok in (";", "\n"):
                self.take()
            elif tok is not None and tok not in (";;", ")") and self.reserved() not in _CLOSERS:
                raise self.unexpected(tok)

    def and_or(self) -> AndOr:
        items: AndOr = [(";", self.pipeline())]
        while self.peek() in ("&&", "||"):
            connector = self.take()
            self.skip_newlines()
            items.append((connector, self.pipeline()))
        return items

    def pipeline(self) -> Pipeline:
        negated = False
        while self.reserved() == "!":
            self.take()
            negated = not negated
        commands = [self.command()]
        while self.peek() == "|":
            self.take()
            self.skip_newlines()
            commands.append(self.command())
        return Pipeline(commands, negated)

    # ------------------------------------------------------------------------------------------ commands
    def command(self) -> Node:
        word = self.reserved()
        compound = _COMPOUND.get(word)
        if compound is not None:
            if len(self.opened) >= MAX_NESTING:
                raise ShellSyntaxError(f"syntax error: more than {MAX_NESTING} nested compound commands")
            self.opened.append(word)
            self.take()
            node = compound(self, word)
            self.opened.pop()
            if not isinstance(node, Function):
                node.redirects = self.redirects()
            return node
        if word in _CLOSERS or word == "!":
            raise self.unexpected(self.peek())
        if self.peek() == "(":
            raise _not_supported("subshells ( )")
        if isinstance(self.peek(), Word) and self.peek(1) == "(":
            return self.function_parens()
        return self.simple()

    def simple(self) -> Simple:
        cmd = Simple([], [], [])
        while True:
            tok = self.peek()
            if isinstance(tok, Word):
                self.take()
                name = _assignment(tok) if not cmd.words else None
                if name is not None:
                    value = Word(quoted=True)
                    value.parts = [(tok.parts[0][0], tok.parts[0][1][len(name) + 1:]), *tok.parts[1:]]
                    cmd.assigns.append((name, value))
                else:
                    cmd.words.append(tok)
            elif isinstance(tok, int) or tok in (">", ">>", ">|", ">&", "<", "<&", "<>", "<<"):
                cmd.redirects.append(self.redirect())
            else:
                if not cmd.words and not cmd.redirects and not cmd.assigns:
                    raise self.unexpected(tok)
                return cmd

    def redirects(self) -> list[Redirect]:
        found = []
        while isinstance(self.peek(), int) or self.peek() in (">", ">>", ">|", ">&", "<", "<&", "<>", "<<"):
            found.append(self.redirect())
        return found

    def redirect(self) -> Redirect:
        fd = self.take() if isinstance(self.peek(), int) else None
        op = self.take()
        if op not in (">", ">>", ">|", ">&", "<"):
            raise self.unexpected(op)
        target = self.take()
        if not isinstance(target, Word):
            raise self.unexpected(target)
        fd = (0 if op == "<" else 1) if fd is None else fd
        if fd not in ((0,) if op == "<" else (1, 2)):
            raise _not_supported(f"redirecting file descriptor {fd}")
        return Redirect(fd, ">" if op == ">|" else op, target)

    def group(self, word: str) -> Group:
        body = self.list()
        self.expect("}")
        return Group(body)

    def if_(self, word: str) -> If:
        branches = []
        while True:
            cond = self.list()
            self.expect("then")
            branches.append((cond, self.list()))
            closer = self.reserved()
            self.take() if closer in ("elif", "else", "fi") else self.expect("fi")
            if closer == "elif":
                continue
            orelse = None
            if closer == "else":
                orelse = self.list()
                self.expect("fi")
            return If(branches, orelse)

    def loop(self, word: str) -> Loop:
        cond = self.list()
        self.expect("do")
        body = self.list()
        self.expect("done")
        return Loop(word == "until", cond, body)

    def for_(self, word: str) -> For:
        name = self.take()
        if not isinstance(name, Word) or name.literal() is None or not _NAME.fullmatch(name.literal()):
            raise self.unexpected(name)
        items = None
        self.skip_newlines()
        if self.reserved() == "in":
            self.take()
            items = []
            while isinstance(self.peek(), Word):
                items.append(self.take())
            if self.peek() not in (";", "\n"):
                raise self.unexpected(self.peek())
            self.take()
        elif self.peek() == ";":
            self.take()
        self.skip_newlines()
        self.expect("do")
        body = self.list()
        self.expect("done")
        return For(name.literal(), items, body)

    def case(self, word: str) -> Case:
        subject = self.take()
        if not isinstance(subject, Word):
            raise self.unexpected(subject)
        self.skip_newlines()
        self.expect("in")
        arms = []
        while True:
            self.skip_newlines()
            if self.reserved() == "esac":
                self.take()
                return Case(subject, arms)
            if self.peek() == "(":
                self.take()
            patterns = []
            while True:
                pattern = self.take()
                if not isinstance(pattern, Word):
                    raise self.unexpected(pattern)
                patterns.append(pattern)
                tok = self.take()
                if tok == ")":
                    break
                if tok != "|":
                    raise self.unexpected(tok)
            self.skip_newlines()
            body = [] if self.peek() == ";;" or self.reserved() == "esac" else self.list()
            if self.peek() == ";;":
                self.take()
            elif self.reserved() != "esac":
                raise self.unexpected(self.peek())
            arms.append((patterns, body))

    def function(self, word: str) -> Function:
        """``function NAME { ...; }`` (ksh's form; mksh's too)."""
        name = self.take()
        if not isinstance(name, Word) or name.literal() is None or not _NAME.fullmatch(name.literal()):
            raise self.unexpected(name)
        if self.peek() == "(" and self.peek(1) == ")":
            self.i += 2
        self.skip_newlines()
        return Function(name.literal(), self.command())

    def function_parens(self) -> Function:
        """``NAME() COMMAND``."""
        name = self.take().literal()
        self.take()
        if self.peek() != ")":
            raise _not_supported("subshells ( )")
        self.take()
        if name is None or not _NAME.fullmatch(name):
            raise ShellSyntaxError(f"{name or 'function'}: invalid function name")
        self.skip_newlines()
        if len(self.opened) >= MAX_NESTING:
            raise ShellSyntaxError(f"syntax error: more than {MAX_NESTING} nested compound commands")
        self.opened.append(name)
        body = self.command()
        self.opened.pop()
        return Function(name, body)


_COMPOUND = {"{": Parser.group, "if": Parser.if_, "while": Parser.loop, "until": Parser.loop, "for": Parser.for_,
             "case": Parser.case, "function": Parser.function}


def _assignment(word: Word) -> str | None:
    """The NAME of a word written ``NAME=...`` (the name and ``=`` unquoted), else None."""
    if not word.parts or word.parts[0][0] != "lit":
        return None
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", word.parts[0][1])
    return m.group(1) if m else None


# ---------------------------------------------------------------------------------------------- arithmetic
class ArithError(Exception):
    """A ``$(( ))`` that cannot be evaluated; the message follows ``/system/bin/sh: ``, as mksh words it."""


_ARITH_NESTING = 64  # operators and parentheses inside one another in one $(( ))
_ARITH_INDIRECTION = 16  # a variable whose value names a variable whose value ...
_INT_BITS = 32  # mksh's arithmetic is 32-bit signed, wrapping (lksh's is long)
_ARITH_TOKEN = re.compile(r"\s*(?:(0[xX][0-9A-Fa-f]+|[0-9]+#[0-9A-Za-z@_]+|[0-9][0-9A-Za-z_]*)|([A-Za-z_][A-Za-z0-9_]*)|"
                          r"(<<=|>>=|\+\+|--|\*\*|&&|\|\||<<|>>|<=|>=|==|!=|[-+*/%&^|]=|[-+*/%<>=!~&^|?:(),]))")
_BINARY = {  # operator: (precedence, right-associative)
    ",": (1, False), "=": (2, True), "+=": (2, True), "-=": (2, True), "*=": (2, True), "/=": (2, True),
    "%=": (2, True), "<<=": (2, True), ">>=": (2, True), "&=": (2, True), "^=": (2, True), "|=": (2, True),
    "?": (3, True), "||": (4, False), "&&": (5, False), "|": (6, False), "^": (7, False), "&": (8, False),
    "==": (9, False), "!=": (9, False), "<": (10, False), "<=": (10, False), ">": (10, False), ">=": (10, False),
    "<<": (11, False), ">>": (11, False), "+": (12, False), "-": (12, False), "*": (13, False), "/": (13, False),
    "%": (13, False),
}


def _wrap(value: int) -> int:
    value &= (1 << _INT_BITS) - 1
    return value - (1 << _INT_BITS) if value >> (_INT_BITS - 1) else value


def wrapped(digits: str, base: int = 10) -> int:
    """A number as mksh reads it, digit by digit in a 32-bit unsigned integer, "overflow as truncation" (var.c's
    getint), then signed: any count of digits, in linear time (Python's ``int()`` refuses more than 4,300). Raises
    ValueError for a digit not of ``base``."""
    value = 0
    for i in range(0, len(digits), 8):
        chunk = digits[i:i + 8]
        value = (value * base ** len(chunk) + int(chunk, base)) & ((1 << _INT_BITS) - 1)
    return _wrap(value)


def decimal(text: str) -> int | None:
    """A decimal integer with an optional sign, as mksh's arithmetic reads a variable's value, or None."""
    digits = text[1:] if text[:1] == "-" else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    value = wrapped(digits)
    return _wrap(-value) if text[:1] == "-" else value


def _c_div(a: int, b: int, op: str) -> int:
    """C's division and remainder (truncating toward zero), as mksh computes them."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q if op == "/" else a - q * b


class _Arith:
    """One ``$(( ))`` evaluated while it is parsed (precedence climbing); ``get`` and ``set`` read and write
    variables. Short-circuit operators parse their skipped side without evaluating it."""

    def __init__(self, text: str, get, set_) -> None:
        self.text, self.get, self.set = text, get, set_
        self.tokens = self.lex(text)
        self.i = 0
        self.depth = 0
        self.evaluating: set[str] = set()

    def lex(self, text: str) -> list[str]:
        tokens, i = [], 0
        while i < len(text):
            m = _ARITH_TOKEN.match(text, i)
            if m is None:
                if text[i:].strip():
                    raise ArithError(f"{self.text}: unexpected '{text[i:].strip()[0]}'")
                break
            tokens.append(m.group(m.lastindex))
            i = m.end()
        return tokens

    def error(self, what: str) -> ArithError:
        return ArithError(f"{self.text.strip()}: {what}")

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def evaluate(self) -> int:
        if not self.tokens:
            return 0
        value = self.expr(1, True)
        if self.peek() is not None:
            raise self.error(f"unexpected '{self.peek()}'")
        return value

    def number(self, tok: str) -> int:
        try:
            if tok[:2] in ("0x", "0X"):
                return _wrap(int(tok[2:], 16))
            if "#" in tok:
                base, digits = tok.split("#", 1)
                if not 2 <= int(base[-3:]) <= 36 or len(base.lstrip("0")) > 2:
                    raise ValueError(base)
                return wrapped(digits, int(base))
            return wrapped(tok)  # mksh reads 010 as ten (octal only with ``set -o posix``)
        except ValueError:
            raise self.error(f"bad number '{tok}'") from None

    def variable(self, name: str) -> int:
        """A variable's value, itself read as an expression (empty or unset: 0)."""
        if name in self.evaluating:
            raise self.error(f"expression recurses on parameter '{name}'")
        value = self.get(name).strip()
        if not value:
            return 0
        if (number := decimal(value)) is not None:
            return number
        if len(self.evaluating) >= _ARITH_INDIRECTION:
            raise self.error(f"expression recurses on parameter '{name}'")
        inner = _Arith(value, self.get, self.set)
        inner.evaluating = self.evaluating | {name}
        return inner.evaluate()

    def lvalue(self) -> str:
        tok = self.peek()
        if tok is None or not _NAME.fullmatch(tok):
            raise self.error(f"unexpected '{tok or 'end of expression'}'")
        self.i += 1
        return tok

    def unary(self, live: bool) -> int:
        tok = self.peek()
        if tok is None:
            raise self.error("unexpected 'end of expression'")
        self.i += 1
        if tok in ("+", "-", "!", "~"):
            self.nest()
            value = self.unary(live)
            self.depth -= 1
            return {"+": value, "-": _wrap(-value), "!": int(not value), "~": _wrap(~value)}[tok]
        if tok in ("++", "--"):
            name = self.lvalue()
            value = _wrap(self.variable(name) + (1 if tok == "++" else -1)) if live else 0
            if live:
                self.set(name, str(value))
            return value
        if tok == "(":
            value = self.expr(1, live)
            if self.peek() != ")":
                raise self.error(f"unexpected '{self.peek() or 'end of expression'}'")
            self.i += 1
            return value
        if tok[0].isdigit():
            return self.number(tok)
        if _NAME.fullmatch(tok):
            if self.peek() in ("++", "--"):
                op = self.tokens[self.i]
                self.i += 1
                value = self.variable(tok) if live else 0
                if live:
                    self.set(tok, str(_wrap(value + (1 if op == "++" else -1))))
                return value
            return self.variable(tok) if live else 0
        raise self.error(f"unexpected '{tok}'")

    def expr(self, min_prec: int, live: bool) -> int:
        self.nest()
        try:
            return self.binary(min_prec, live)
        finally:
            self.depth -= 1

    def nest(self) -> None:
        self.depth += 1
        if self.depth > _ARITH_NESTING:
            raise self.error("expression nested too deeply")

    def binary(self, min_prec: int, live: bool) -> int:
        start = self.i
        left = self.unary(live)
        while True:
            op = self.peek()
            if op not in _BINARY or _BINARY[op][0] < min_prec:
                return left
            prec, right_assoc = _BINARY[op]
            self.i += 1
            if prec == 2:  # an assignment: the left side must be a bare name
                if self.i - 1 != start + 1 or not _NAME.fullmatch(self.tokens[start]):
                    raise self.error(f"unexpected '{op}'")
                value = self.expr(prec, live)
                if live:
                    if op != "=":
                        value = self.apply(op[:-1], left, value)
                    self.set(self.tokens[start], str(value))
                left = value
            elif op == "?":
                yes = self.expr(1, live and bool(left))
                if self.peek() != ":":
                    raise self.error(f"unexpected '{self.peek() or 'end of expression'}'")
                self.i += 1
                no = self.expr(prec, live and not left)
                left = yes if left else no
            elif op in ("&&", "||"):
                right = self.expr(prec + 1, live and (bool(left) if op == "&&" else not left))
                left = int(bool(left) and bool(right)) if op == "&&" else int(bool(left) or bool(right))
            else:
                right = self.expr(prec + (0 if right_assoc else 1), live)
                left = self.apply(op, left, right) if live else 0

    def apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%"):
            if b == 0:
                raise self.error("zero divisor")
            return _wrap(_c_div(a, b, op))
        if op in ("<<", ">>"):
            b &= _INT_BITS - 1
            return _wrap(a << b) if op == "<<" else a >> b
        return _wrap({"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "&": lambda: a & b,
                      "^": lambda: a ^ b, "|": lambda: a | b, "==": lambda: int(a == b), "!=": lambda: int(a != b),
                      "<": lambda: int(a < b), "<=": lambda: int(a <= b), ">": lambda: int(a > b),
                      ">=": lambda: int(a >= b), ",": lambda: b}[op]())


def arithmetic(text: str, get, set_) -> int:
    """The value of ``$((text))``, ``text`` already expanded; ``get(name) -> str`` and ``set_(name, str)`` are the
    variables. Raises :class:`ArithError`."""
    return _Arith(text, get, set_).evaluate()
