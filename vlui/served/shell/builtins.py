"""The shell's builtins: ``echo``, ``true``, ``false``, ``:``, ``exit``, ``sleep``, ``cd``, ``pwd``, ``id``,
``whoami``, ``sh``, ``export``, ``unset``, ``local``, ``set``, ``exec``, ``test`` and ``[``, ``read``, ``break``,
``continue`` and ``return``. A function whose name Python has taken (``exit``, ``id``, ``set``, ``exec``, ``break``,
``continue``, ``return``, and ``sh``, the name of the shell argument) ends in ``_``."""

from __future__ import annotations

import re
import time

from vlui.served.numbers import parse_long
from vlui.served.shell.context import (
    ARG_MAX,
    ID,
    MAX_DEPTH,
    POLL_S,
    SH,
    Break,
    Command,
    Exit,
    Io,
    Return,
    Session,
    ShellApi,
    UsageError,
)
from vlui.served.shell.files import BIN_DIRS
from vlui.served.shell.language import decimal

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


def echo(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
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


def true(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return 0


def false(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return 1


def _getn(text: str) -> int | None:
    """A builtin's number as mksh's getn reads it: an optional sign and digits that fit a 32-bit int, else None
    (``bad number``)."""
    return parse_long(text.lstrip(" \t\n"), -(1 << 31), (1 << 31) - 1)


def exit_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    if args and _getn(args[0]) is None:
        io.complain(f"{SH}: exit: {args[0]}: bad number\n")
        raise Exit(1)
    raise Exit((_getn(args[0]) if args else s.status) & 0xFF)


def sleep(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``sleep N[smhd]...``: real time, cut short when the stream is cancelled."""
    if not args:
        raise UsageError("Needs 1 argument")
    total = 0.0
    units = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
    for arg in args:
        m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)", arg)
        if m is None:
            raise UsageError(f"Not a number '{arg}'")
        total += float(m.group(1)) * units[m.group(2)]
    deadline = time.monotonic() + total
    while (left := deadline - time.monotonic()) > 0:
        if s.cancelled.wait(min(left, POLL_S)) or sh.phone.closed.is_set():
            return 130
    return 0


def cd(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    path = sh.path(s, args[0] if args else s.env.get("HOME", "/"))
    with sh.phone.lock:
        ok = sh.phone.is_dir(path)
    if not ok:
        io.complain(f"{SH}: cd: {args[0]}: No such file or directory\n")
        return 1
    s.cwd = path
    return 0


def pwd(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    io.say(s.cwd + "\n")
    return 0


def id_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    io.say(ID + "\n")
    return 0


def whoami(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    io.say("root\n")
    return 0


def sh_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``sh -c SCRIPT [NAME ARG...]``, or ``sh`` reading its script from its standard input: it runs in a new
    shell (its ``exit``, ``cd`` and variables stay there)."""
    inner = Session(s.cancelled, s.cwd, env=dict(s.env), depth=s.depth + 1, cpu_start=s.cpu_start)
    if inner.depth > MAX_DEPTH:
        io.complain(f"{SH}: sh: nested too deeply (at most {MAX_DEPTH} levels)\n")
        return 1
    if args and args[0] == "-c":
        if len(args) < 2:
            io.complain(f"{SH}: -c: option requires an argument\n")
            return 1
        inner.name, inner.args = (args[2], args[3:]) if len(args) > 2 else (SH, [])
        return sh.run_line(inner, io, args[1])
    if args and args != ["-s"]:
        io.complain(f"{SH}: only 'sh -c SCRIPT' and 'sh' reading its input are supported by the simulated "
                    f"phone\n")
        return 2
    return sh.run_line(inner, io, io.inp.read().decode("utf-8", "surrogateescape"))


def export(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``export NAME=VALUE ...`` (or ``export NAME``, which keeps NAME's value). Every variable of the simulated
    shell reaches the commands it runs, so exported and set are the same here."""
    status = 0
    for arg in args:
        name, eq, value = arg.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            io.complain(f"{SH}: export: {arg}: bad variable name\n")
            status = 1
        elif eq:
            s.setvar(name, value)
        elif name not in s.env:
            s.setvar(name, "")
    return status


def unset(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``unset [-v] NAME...`` (variables), ``unset -f NAME...`` (functions)."""
    functions = bool(args) and args[0] == "-f"
    for name in args[1:] if args and args[0] in ("-f", "-v") else args:
        if functions:
            s.functions.pop(name, None)
        else:
            s.unsetvar(name)
    return 0


def local(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``local NAME[=VALUE]...``: variables of the running function, restored when it returns."""
    if s.locals is None:
        io.complain(f"{SH}: local: not in a function\n")  # mksh makes them global; bash refuses: so do we
        return 1
    for arg in args:
        name, eq, value = arg.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            io.complain(f"{SH}: local: {arg}: bad variable name\n")
            return 1
        if name not in s.locals:
            s.locals[name] = s.env.get(name)
        s.setvar(name, value) if eq else s.unsetvar(name)
    return 0


def set_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``set`` (the variables, one ``NAME=value`` a line) and ``set -- ARG...`` (the positional parameters).
    Options (``-e``, ``-x``, ...) are not supported: refused, not ignored."""
    if not args:
        io.say("".join(f"{k}={_quoted(v)}\n" for k, v in sorted(s.env.items())))
        return 0
    if args[0] != "--":
        io.complain(f"{SH}: set: {args[0]}: not supported by the simulated phone's shell\n")
        return 1
    s.args = args[1:]
    return 0


def colon(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return 0


def break_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return _unwind(s, io, "break", args)


def continue_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return _unwind(s, io, "continue", args)


def _unwind(s: Session, io: Io, name: str, args: list[str]) -> int:
    """``break [N]`` and ``continue [N]``: out of (or on with) the N-th enclosing loop."""
    if args and ((_getn(args[0]) or 0) < 1 or not args[0].isdigit()):
        io.complain(f"{SH}: {name}: {args[0]}: bad number\n")
        return 1
    if not s.loops:
        io.complain(f"{SH}: {name}: can't {name}\n")
        return 1
    raise Break(min(_getn(args[0]) if args else 1, s.loops), again=name == "continue")


def return_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    if args and _getn(args[0]) is None:
        io.complain(f"{SH}: return: {args[0]}: bad number\n")
        raise Return(1)
    raise Return((_getn(args[0]) if args else s.status) & 0xFF)


def read(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``read [-r] [NAME...]``: one line of the standard input, split at ``$IFS`` into the NAMEs (the last
    takes the rest; ``REPLY`` when none is named). Status 1 at the end of the input."""
    raw = bool(args) and args[0] == "-r"
    names = (args[1:] if raw else args) or ["REPLY"]
    line = b""
    while True:
        piece = io.inp.readline()
        line += piece
        if raw or not piece.endswith(b"\\\n"):
            break
        line = line[:-2]  # a backslash at the end of a line continues it
    if not line:
        return 1
    text = line.decode("utf-8", "surrogateescape").removesuffix("\n")
    if not raw:
        text = re.sub(r"\\(.)", r"\1", text)
    white = "".join(c for c in s.env.get("IFS", " \t\n") if c in " \t\n")
    fields = sh.split(s, text.strip(white) if white else text, maxsplit=len(names) - 1)
    for i, name in enumerate(names):
        s.setvar(name, fields[i] if i < len(fields) else "")
    return 0 if line.endswith(b"\n") else 1


def test(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return _condition(sh, s, io, "test", args)


def bracket(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    if not args or args[-1] != "]":
        io.complain(f"{SH}: [: missing ]\n")
        return 2
    return _condition(sh, s, io, "[", args[:-1])


def _condition(sh: ShellApi, s: Session, io: Io, name: str, args: list[str]) -> int:
    """``test EXPR``: 0 when true, 1 when false, 2 (with a message) when EXPR is malformed."""
    try:
        return 0 if _Test(sh, s, args).evaluate() else 1
    except UsageError as err:
        io.complain(f"{SH}: {name}: {err}\n")
        return 2


def exec_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``exec CMD ARGS``: CMD replaces the shell, so nothing after it on the line runs."""
    if not args:
        return 0
    raise Exit(sh.call(s, io, args))


def _quoted(value: str) -> str:
    """A value as ``set`` prints it: bare when that reads back the same, else in single quotes."""
    if re.fullmatch(r"[A-Za-z0-9_./:,+=@%-]+", value):
        return value
    return "'" + value.replace("'", "'\\''") + "'"


_FILE_TESTS = "efdsrwxLhb"
_BINARY_TESTS = ("=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "<", ">")


class _Test:
    """The expression of ``test`` (and ``[``): POSIX's rules for up to four arguments, then ``!``, ``-a``, ``-o``
    and parentheses by precedence. The phone is asked about files; an integer operand must be an integer."""

    def __init__(self, sh: ShellApi, s: Session, args: list[str]) -> None:
        self.sh, self.s, self.args, self.i, self.depth = sh, s, args, 0, 0

    def evaluate(self) -> bool:
        a = self.args
        if len(a) == 0:
            return False
        if len(a) == 1:
            return a[0] != ""
        if len(a) == 2 and a[0] == "!":
            return a[1] == ""
        if len(a) == 3 and a[1] in _BINARY_TESTS:
            return self.binary(a[0], a[1], a[2])
        value = self.or_()
        if self.i < len(a):
            raise UsageError(f"{a[self.i]}: unexpected operator")
        return value

    def peek(self) -> str | None:
        return self.args[self.i] if self.i < len(self.args) else None

    def take(self) -> str:
        if self.i >= len(self.args):
            raise UsageError("argument expected")
        self.i += 1
        return self.args[self.i - 1]

    def or_(self) -> bool:
        value = self.and_()
        while self.peek() == "-o":
            self.i += 1
            value = self.and_() or value
        return value

    def and_(self) -> bool:
        value = self.not_()
        while self.peek() == "-a":
            self.i += 1
            value = self.not_() and value
        return value

    def not_(self) -> bool:
        negate = False
        while self.peek() == "!" and self.i + 1 < len(self.args):
            self.i += 1
            negate = not negate
        return self.primary() != negate

    def primary(self) -> bool:
        tok = self.take()
        if tok == "(" and self.peek() is not None:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise UsageError("expression nested too deeply")
            value = self.or_()
            if self.take() != ")":
                raise UsageError("')' expected")
            self.depth -= 1
            return value
        if self.peek() in _BINARY_TESTS:
            op = self.take()
            return self.binary(tok, op, self.take())
        if len(tok) == 2 and tok[0] == "-" and tok[1] in "nz" + _FILE_TESTS and self.peek() is not None:
            return self.unary(tok[1], self.take())
        return tok != ""

    def unary(self, op: str, arg: str) -> bool:
        if op in "nz":
            return (arg != "") == (op == "n")
        data, problem = self.sh.read(self.sh.path(self.s, arg))
        is_dir = problem == "Is a directory"
        if op in "Lhb":  # the simulated phone's files are no links or devices
            return False
        if op == "d":
            return is_dir
        if op == "f":
            return not problem
        if op == "s":
            return bool(data) or is_dir
        return not problem or is_dir  # e, r, w, x: root may

    def binary(self, a: str, op: str, b: str) -> bool:
        if op in ("=", "=="):
            return a == b
        if op == "!=":
            return a != b
        if op in ("<", ">"):
            return a < b if op == "<" else a > b
        x, y = self.integer(a), self.integer(b)
        return {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y}[op]

    @staticmethod
    def integer(text: str) -> int:
        """An operand of ``-eq`` and the like: mksh reads it as its arithmetic does (wrapping at 32 bits)."""
        value = decimal(text.strip().lstrip("+")) if re.fullmatch(r"\s*[-+]?\d+\s*", text) else None
        if value is None:
            raise UsageError(f"{text}: bad number")
        return value


_PRINTF_SPEC = re.compile(r"%([-+ #0]*)(\*|\d*)(?:\.(\*|\d*))?([diouxXeEfFgGcsb%])")


def printf(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``printf FORMAT [ARGUMENT...]``: toybox's. The format's escapes (``\\n``, ``\\NNN``, ``\\xHH``) and
    conversions (``%s %b %c %d %i %o %u %x %X %e %f %g %%`` with flags, width and precision, ``*`` from an argument)
    are C's; the format is used again while arguments remain. A number that is not one is said (``printf: invalid
    number 'X'``, status 1) and taken as what of it reads; a width or precision past ARG_MAX is refused."""
    if not args:
        raise UsageError("Needs 1 argument")
    fmt, rest = args[0], list(args[1:])
    status = 0
    while True:
        used = len(rest)
        out, stop, bad = _printf_once(_printf_escapes(fmt)[0], rest, io)
        status = status or bad
        io.say(out)
        if stop or not rest or len(rest) == used:
            return status


def _printf_escapes(text: str) -> tuple[str, bool]:
    """C's escapes of printf's format and of ``%b``: ``\\NNN`` octal (``\\0NNN`` for ``%b``), ``\\xHH``; True
    when ``\\c`` ends the output."""
    text = re.sub(r"\\x([0-9a-fA-F]{1,2})", lambda m: "\\0" + oct(int(m.group(1), 16))[2:], text)
    text = re.sub(r"\\([1-7][0-7]{0,2})", r"\\0\1", text)
    return _echo_escapes(text)


def _printf_number(text: str, kind: str) -> tuple[int | float, int]:
    """An argument of a numeric conversion as strtoll/strtod read it: (its value, 1 when it is not all a number)."""
    if text[:1] in ("'", '"'):
        return (ord(text[1]) if len(text) > 1 else 0), 0
    if kind in "eEfFgG":
        try:
            return float(text or "0"), 0
        except ValueError:
            return 0.0, 1
    m = re.match(r"[-+]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if m is None:
        return 0, int(bool(text))
    body = m.group(1)
    sign = -1 if text.startswith("-") else 1
    digits = body[2:] if body[:2].lower() == "0x" else body
    base = 16 if body[:2].lower() == "0x" else 8 if body.startswith("0") and len(body) > 1 else 10
    value = parse_long(str(int(digits, base)) if len(digits) < 40 else "9" * 40)
    if value is None:
        return sign * ((1 << 63) - 1), 1
    return sign * value, int(m.end() != len(text))


def _printf_once(fmt: str, rest: list[str], io: Io) -> tuple[str, bool, int]:
    """One pass of the format, taking arguments from ``rest``: (output, whether ``\\c`` ended it, status); a number
    that is not one is said on ``io``."""
    out: list[str] = []
    bad = 0
    pos = 0
    for m in _PRINTF_SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, precision, kind = m.groups()
        if kind == "%":
            out.append("%")
            continue
        if width == "*":
            width = str(_printf_number(rest.pop(0) if rest else "0", "d")[0])
        if precision == "*":
            precision = str(_printf_number(rest.pop(0) if rest else "0", "d")[0])
        for n in (width, precision):
            if n and n.lstrip("-").isdigit() and (len(n) > 8 or abs(int(n)) > ARG_MAX):
                raise UsageError(f"width or precision {n} past what a command may print at once ({ARG_MAX} bytes)")
        arg = rest.pop(0) if rest else ""
        spec = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
        if kind == "b":
            text, stopped = _echo_escapes(re.sub(r"\\0([0-7]{1,3})", r"\\0\1", arg))
            out.append((spec + "s") % text)
            if stopped:
                return "".join(out), True, bad
        elif kind == "s":
            out.append((spec + "s") % arg)
        elif kind == "c":
            out.append((spec + "s") % arg[:1])
        else:
            value, wrong = _printf_number(arg, kind)
            if wrong:
                io.complain(f"printf: invalid number '{arg}'\n")
                bad = 1
            conv = "d" if kind in "iu" else kind
            if kind == "u" and isinstance(value, int) and value < 0:
                value += 1 << 64
            out.append((spec + conv) % value)
    out.append(fmt[pos:])
    return "".join(out), False, bad


# mksh's own builtins, which no folder of BIN_DIRS holds (``which`` finds none of them)
SHELL_ONLY = frozenset({":", "exit", "cd", "export", "unset", "local", "set", "exec", "read", "break", "continue",
                        "return"})


def which(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``which [-a] NAME...``: toybox's, the path of each command in ``$PATH`` (/system/bin, or /system/xbin for
    ``su`` and ``sqlite3``); a name it does not find prints nothing, and the status is 1."""
    status = 0
    for name in (a for a in args if a not in ("-a", "--")):
        found = "" if "/" in name else next((f"{d}/{name}" for d, names in BIN_DIRS.items() if name in names), "")
        if "/" in name and sh.has_command(name):
            found = name
        if found:
            io.say(found + "\n")
        else:
            status = 1
    return status


COMMANDS: dict[str, Command] = {
    "echo": echo, "true": true, "false": false, ":": colon, "exit": exit_, "sleep": sleep, "cd": cd, "pwd": pwd,
    "id": id_, "whoami": whoami, "sh": sh_, "export": export, "unset": unset, "local": local, "set": set_,
    "exec": exec_, "test": test, "[": bracket, "read": read, "break": break_, "continue": continue_,
    "return": return_, "which": which, "printf": printf,
}
