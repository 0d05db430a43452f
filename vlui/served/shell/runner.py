"""The shell itself: running a script (lists, pipelines, compound commands, functions, redirections, expansion),
reading one from a pipe or a terminal, and :data:`COMMANDS`, the one table of commands by name: the command families'
tables (each family module's ``COMMANDS``) merged. :class:`Shell` is what the commands receive as ``sh``
(:class:`~vlui.served.shell.context.ShellApi`)."""

from __future__ import annotations

import errno
import posixpath
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import vlui.served.shell.apps as apps
import vlui.served.shell.builtins as builtins
import vlui.served.shell.dumpsys as dumpsys
import vlui.served.shell.files as files
import vlui.served.shell.log as log
import vlui.served.shell.procs as procs
import vlui.served.shell.screen as screen
import vlui.served.shell.sqlite as sqlite
import vlui.served.shell.system as system
from vlui.errors import VluiError
from vlui.served.patterns import TooCostly, glob
from vlui.served.phone import ServedPhone
from vlui.served.processes import SHELL_PID
from vlui.served.shell.context import (
    ARG_MAX,
    BIN_DIRS,
    CPU_BUDGET_S,
    MAX_ARG_STRLEN,
    MAX_DEPTH,
    SH,
    Abort,
    Break,
    Command,
    Exit,
    Input,
    Io,
    PipeClosed,
    RedirectError,
    Return,
    Session,
    UsageError,
    discard,
)
from vlui.served.shell.filters import FILTERS, After, Collect, Stage
from vlui.served.shell.language import (
    ArithError,
    Case,
    CommandList,
    For,
    Function,
    Group,
    If,
    Loop,
    Node,
    Parser,
    Pipeline,
    Redirect,
    ShellSyntaxError,
    Simple,
    Word,
    arithmetic,
)
from vlui.served.storage import StorageError


class Shell:
    """``/system/bin/sh`` on the served phone. One instance may run several lines one after the other, as lines typed
    at one prompt: they share the working directory, the variables, the functions and ``$?``. It is the
    :class:`~vlui.served.shell.context.ShellApi` its commands receive.

    ``cpu_budget_s``: the CPU time one command line's loops and function calls may take before the line stops
    (``while true; do :; done`` ends there; sleeping and waiting take none)."""

    def __init__(self, phone: ServedPhone, cpu_budget_s: float = CPU_BUDGET_S) -> None:
        self.phone = phone
        self.cpu_budget_s = cpu_budget_s
        self._session: Session | None = None
        self._reader = _ScriptReader()

    def run(self, command: str, write: Callable[[bytes], None], cancelled: threading.Event,
            err: Callable[[bytes], None] | None = None) -> int:
        """Run ``command`` as ``sh -c`` does; its standard output through ``write``, its standard error through
        ``err`` (with ``write`` when None, as adb's legacy shell protocol mixes them); the exit status. A command
        of MAX_ARG_STRLEN bytes or more cannot be an argument of ``sh -c``: adbd's exec fails, as on a device."""
        io = Io(write, err or write)
        if len(command) >= MAX_ARG_STRLEN // 4 and len(command.encode("utf-8", "surrogateescape")) >= MAX_ARG_STRLEN:
            io.complain(f"error: exec '{SH}' failed: Argument list too long\n")
            return 126
        return self.run_line(self._session_for(cancelled), io, command)

    def feed(self, data: bytes, write: Callable[[bytes], None], cancelled: threading.Event,
             err: Callable[[bytes], None] | None = None) -> int:
        """Go on reading a script from a pipe or a terminal: ``data`` is its next bytes. Every command that a line
        of it completes runs now; a command that spans lines (an open quote, ``if``, ``{``) waits for the line that
        ends it (:attr:`waiting`). A line is at most MAX_ARG_STRLEN - 1 bytes (a longer one is dropped with one
        error line), and the parsing is linear in what was sent. The status of the last command."""
        s = self._session_for(cancelled)
        io = Io(write, err or write)
        for line in self._reader.lines(data):
            if s.exited:
                break
            script = self._reader.add(line, io)
            if script is not None:
                self._run_lines(script, io, s, final=False)
        return s.status

    def finish(self, write: Callable[[bytes], None], cancelled: threading.Event,
               err: Callable[[bytes], None] | None = None) -> int:
        """The script's input ended: its last line runs, and a command still open is a syntax error."""
        s = self._session_for(cancelled)
        io = Io(write, err or write)
        for line in self._reader.end():
            script = self._reader.add(line, io)
            if script is not None and not s.exited:
                self._run_lines(script, io, s, final=False)
        if self._reader.waiting and not s.exited:
            self._run_lines(self._reader.take(), io, s, final=True)
        return s.status

    def run_script(self, read: Callable[[], bytes], write: Callable[[bytes], None], cancelled: threading.Event,
                   err: Callable[[bytes], None] | None = None) -> int:
        """``sh`` reading its script from a pipe (``echo ... | adb shell``): ``read()`` gives the next bytes, b"" at
        the end; runs until the end or ``exit``. The status of the last command."""
        while not self.exited:
            data = read()
            if not data:
                break
            self.feed(data, write, cancelled, err)
        if self.exited:
            return self._session.status
        return self.finish(write, cancelled, err)

    @property
    def waiting(self) -> bool:
        """Whether a command begun on an earlier line waits for more lines (a terminal shows ``> `` then)."""
        return self._reader.waiting

    @property
    def exited(self) -> bool:
        """Whether ``exit`` or ``exec`` ended this shell (an interactive session then ends)."""
        return self._session is not None and self._session.exited

    # ---------------------------------------------------------------------------------------------- files (ShellApi)
    def path(self, s: Session, path: str) -> str:
        """:func:`vlui.served.shell.files.phone_path`: ``path`` typed in ``s`` as the phone's path."""
        return files.phone_path(s, path)

    def read(self, path: str) -> tuple[bytes, str]:
        """:func:`vlui.served.shell.files.read_file`: (content, "") or (b"", why it cannot be read)."""
        return files.read_file(self.phone, path)

    def unwritable(self, path: str) -> str:
        """:func:`vlui.served.shell.files.unwritable`: why ``path`` cannot be written ("" when it can)."""
        return files.unwritable(self.phone, path)

    def exists(self, path: str) -> bool:
        """:func:`vlui.served.shell.files.exists`."""
        with self.phone.lock:
            return files.exists(self.phone, path)

    def _session_for(self, cancelled: threading.Event) -> Session:
        if self._session is None:
            self._session = Session(cancelled)
        self._session.cancelled = cancelled
        return self._session

    def run_line(self, s: Session, io: Io, line: str) -> int:
        """Parse and run a command line in ``s``; a syntax error is said on ``io`` (status 2)."""
        try:
            tree = Parser(line).parse()
        except ShellSyntaxError as err:
            io.complain(f"{SH}: {err}\n")
            s.status = 2
            return 2
        return self._execute(tree, io, s)

    def _run_lines(self, script: str, io: Io, s: Session, final: bool) -> None:
        """The complete commands of the lines in ``script``; what they leave open goes back to the reader."""
        try:
            tree, rest = Parser(script, partial=True).complete_lines()
        except ShellSyntaxError as err:
            io.complain(f"{SH}: {err}\n")
            s.status = 2
            return
        if tree:
            self._execute(tree, io, s)
        if final and script[rest:].strip():
            self.run_line(s, io, script[rest:])  # says what is open
        elif not final:
            self._reader.keep(script[rest:], progress=bool(tree))

    def _execute(self, tree: CommandList, io: Io, s: Session) -> int:
        s.cpu_start = time.thread_time()
        try:
            self._run_list(s, io, tree)
        except (Exit, Return) as done:  # ``return`` outside a function ends the script, as in mksh
            s.status = done.status
            s.exited = True
        except Abort as stop:
            io.complain(stop.message)
            s.status = stop.status
        return s.status

    def stopped(self, s: Session) -> bool:
        """Whether the client is gone or the phone closed."""
        return s.cancelled.is_set() or self.phone.closed.is_set()

    def tick(self, s: Session) -> None:
        """Between two turns of a loop, before a function runs, and as a command works through its input (grep's
        lines, logcat's entries): stop when the client is gone or the line has used its CPU time. (A device has no such budget; ``ulimit -t`` would end the shell with SIGXCPU, 152.)"""
        if self.stopped(s):
            raise Abort("", 130)
        if time.thread_time() - s.cpu_start > self.cpu_budget_s:
            raise Abort(f"{SH}: CPU time limit exceeded: a command line may take {self.cpu_budget_s:g} s of "
                        f"the simulated phone's CPU\n", 152)

    # ---------------------------------------------------------------------------------------------- lists
    def _run_list(self, s: Session, io: Io, items: CommandList) -> int:
        for and_or in items:
            for connector, pipeline in and_or:
                if self.stopped(s):
                    raise Abort("", s.status)
                if (connector == "&&" and s.status != 0) or (connector == "||" and s.status == 0):
                    continue
                status = self._run_pipeline(s, io, pipeline)
                s.status = int(not status) if pipeline.negated else status
        return s.status

    def _run_pipeline(self, s: Session, io: Io, pipeline: Pipeline) -> int:
        commands = pipeline.commands
        if len(commands) == 1:
            return self._run_node(s, io, commands[0])
        pump = _Pump(io.out)
        with ExitStack() as stack:
            for k, cmd in enumerate(commands[1:]):
                pump.add(self._stage(s, Io(pump.writer(k + 1), io.err), cmd, stack))
            return pump.run(lambda: self._run_node(s, Io(pump.writer(0), io.err, io.inp), commands[0]))

    def _stage(self, s: Session, io: Io, cmd: Node, stack: ExitStack) -> Stage:
        """A command after ``|``: a line filter reads its input as it comes; any other command runs when its input
        ends, and reads it then."""
        if isinstance(cmd, Simple) and not cmd.assigns and all(r.op != "<" for r in cmd.redirects):
            try:
                rio = stack.enter_context(self._redirected(s, io, cmd.redirects))
            except RedirectError as err:
                io.complain(f"{SH}: {err}\n")
                return After(lambda: 1)
            argv = self._expand(s, cmd.words)
            name = self._name(argv[0]) if argv else ""
            if name in FILTERS and argv[0] not in s.functions:
                try:
                    stage = FILTERS[name](argv[1:], rio.out, rio.err, lambda: self.tick(s))
                except UsageError as err:
                    rio.complain(f"{name}: {err}\n")
                    return After(lambda: 2 if name == "grep" else 1)
                if not stage.files:
                    return stage
            return Collect(lambda inp: self.call(s, Io(rio.out, rio.err, inp), argv) if argv else 0)
        return Collect(lambda inp: self._run_node(s, Io(io.out, io.err, inp), cmd))

    # ---------------------------------------------------------------------------------------------- commands
    def _run_node(self, s: Session, io: Io, node: Node) -> int:
        if isinstance(node, Simple):
            return self._run_simple(s, io, node)
        if isinstance(node, Function):
            s.functions[node.name] = node.body
            return 0
        try:
            with self._redirected(s, io, node.redirects) as rio:
                self._enter(s, "{" if isinstance(node, Group) else type(node).__name__.lower())
                try:
                    if isinstance(node, Group):
                        return self._run_list(s, rio, node.body)
                    if isinstance(node, If):
                        return self._run_if(s, rio, node)
                    if isinstance(node, Case):
                        return self._run_case(s, rio, node)
                    return self._run_loop(s, rio, node)
                finally:
                    s.depth -= 1
        except RedirectError as err:
            io.complain(f"{SH}: {err}\n")
            return 1

    def _enter(self, s: Session, name: str) -> None:
        """One level deeper (a function, a compound command), at most MAX_DEPTH: deeper is an error, not a crash."""
        if s.depth >= MAX_DEPTH:
            raise Abort(f"{SH}: {name}: nested too deeply (at most {MAX_DEPTH} levels)\n", 1)
        s.depth += 1

    def _run_simple(self, s: Session, io: Io, cmd: Simple) -> int:
        try:
            with self._redirected(s, io, cmd.redirects) as rio:
                argv = self._expand(s, cmd.words)
                values = [(name, self._expand_one(s, word)) for name, word in cmd.assigns]
                if not argv:
                    for name, value in values:
                        s.setvar(name, value)
                    return 0
                saved = [(name, s.env.get(name)) for name, _ in values]
                for name, value in values:  # for this command only (every variable reaches the commands here)
                    s.setvar(name, value)
                try:
                    return self.call(s, rio, argv)
                finally:
                    for name, old in reversed(saved):
                        s.unsetvar(name) if old is None else s.setvar(name, old)
        except RedirectError as err:
            io.complain(f"{SH}: {err}\n")
            return 1

    def _run_if(self, s: Session, io: Io, node: If) -> int:
        for cond, body in node.branches:
            self._run_list(s, io, cond)
            if s.status == 0:
                return self._run_list(s, io, body)
        return self._run_list(s, io, node.orelse) if node.orelse else 0

    def _run_case(self, s: Session, io: Io, node: Case) -> int:
        subject = self._expand_one(s, node.subject)
        for patterns, body in node.arms:
            try:
                if any(glob(self._pattern(s, p), path=False).fullmatch(subject) for p in patterns):
                    return self._run_list(s, io, body) if body else 0
            except TooCostly as err:
                raise Abort(f"{SH}: case: {err}\n", 1) from None
        return 0

    def _run_loop(self, s: Session, io: Io, node: Loop | For) -> int:
        """``while``, ``until`` and ``for``: the status of the body's last run (0 when it never ran)."""
        status = 0
        if isinstance(node, For):
            turns = iter(self._expand(s, node.items) if node.items is not None else list(s.args))
        s.loops += 1
        try:
            while True:
                self.tick(s)
                if isinstance(node, For):
                    item = next(turns, None)
                    if item is None:
                        return status
                    s.setvar(node.name, item)
                else:
                    self._run_list(s, io, node.cond)
                    if (s.status == 0) == node.until:
                        return status
                try:
                    status = self._run_list(s, io, node.body)
                except Break as brk:
                    if brk.levels > 1:
                        raise Break(brk.levels - 1, brk.again) from None
                    status = s.status
                    if not brk.again:
                        return status
        finally:
            s.loops -= 1

    def _call_function(self, s: Session, io: Io, argv: list[str]) -> int:
        self.tick(s)
        self._enter(s, argv[0])
        saved = s.args, s.loops, s.locals
        s.args, s.loops, s.locals = argv[1:], 0, {}
        try:
            return self._run_node(s, io, s.functions[argv[0]])
        except Return as done:
            return done.status
        finally:
            for name, old in s.locals.items():  # ``local`` variables end with the function
                s.unsetvar(name) if old is None else s.setvar(name, old)
            s.args, s.loops, s.locals = saved
            s.depth -= 1

    @contextmanager
    def _redirected(self, s: Session, io: Io, redirects: list[Redirect]) -> Iterator[Io]:
        """``io`` with ``redirects`` applied. A file is created when opened, and its content stored when the command
        ends; ``<`` reads the file as it is when the command starts."""
        out, err, inp = io.out, io.err, io.inp
        opened: list[tuple[str, bytearray, bool]] = []
        for r in redirects:
            target = self._expand_one(s, r.target)
            if r.op == "<":
                data, problem = self.read(self.path(s, target))
                if problem:
                    raise RedirectError(f"can't open {target}: {problem}")
                inp = Input(data)
                continue
            if r.op == ">&":
                if target not in ("1", "2", "-"):
                    raise RedirectError(f"{target}: illegal file descriptor name")
                stream = {"1": out, "2": err, "-": discard}[target]
            elif target in ("/dev/null", "/dev/zero"):
                stream = discard
            else:
                path = self.path(s, target)
                with self.phone.lock:
                    problem = self.unwritable(path)
                    if problem:
                        raise RedirectError(f"can't create {target}: {problem}")
                    if r.op == ">":
                        self.phone.files[path] = b""
                    else:
                        self.phone.files.setdefault(path, b"")
                buf = bytearray()
                opened.append((path, buf, r.op == ">>"))
                stream = self._bounded_writer(path, buf, r.op == ">>")
            if r.fd == 1:
                out = stream
            else:
                err = stream
        try:
            yield Io(out, err, inp)
        finally:
            if opened:
                with self.phone.lock:
                    for path, buf, append in opened:
                        content = (self.phone.files.get(path, b"") if append else b"") + bytes(buf)
                        # what others wrote meanwhile may have taken the room: keep what fits, as a full disk does
                        self.phone.files[path] = content[:max(0, self.phone.files.room(replacing=path))]

    def _bounded_writer(self, path: str, buf: bytearray, append: bool) -> Callable[[bytes], None]:
        """What a command writes into a redirected file: gathered in ``buf`` until the phone's storage is full; the
        write that does not fit stores what fits and raises ``StorageError`` (``No space left on device``)."""
        stored = self.phone.files

        def write(data: bytes) -> None:
            kept = len(stored.get(path, b"")) if append else 0
            room = stored.room(replacing=path) - kept - len(buf)
            if len(data) > room:
                buf.extend(data[:max(0, room)])
                raise StorageError(errno.ENOSPC, path)
            buf.extend(data)
        return write

    # ---------------------------------------------------------------------------------------------- expansion
    def _expand(self, s: Session, words: list[Word]) -> list[str]:
        """The arguments that ``words`` become: parameters and ``$(( ))`` expanded, unquoted expansions split at
        ``$IFS``, unquoted empty expansions dropped, unquoted globs matched against the phone's files (a glob that
        matches nothing stays as written, as in sh). Past ARG_MAX in all, the command does not run (as execve
        refuses it on a device)."""
        args: list[str] = []
        size = [0]
        for word in words:
            for text, pattern in self._fields(s, word, size):
                found = self._glob(s, pattern) if pattern is not None else []
                size[0] += sum(len(f) + 1 for f in found)
                if size[0] > ARG_MAX:
                    raise Abort(f"{SH}: Argument list too long\n", 126)
                args += found or [text]
        return args

    def _expand_one(self, s: Session, word: Word) -> str:
        """A word that stays one (an assignment's value, a redirection's file, ``case``'s subject): expanded, not
        split, not globbed."""
        size = [0]
        return "".join(self._value(s, kind, text, size) if kind not in ("lit", "quoted") else text
                       for kind, text in word.parts)

    def _value(self, s: Session, kind: str, text: str, size: list[int]) -> str:
        value = self._arith(s, text) if kind in ("arith", "qarith") else self._variable(s, text)
        size[0] += len(value)
        if size[0] > ARG_MAX:
            raise Abort(f"{SH}: Argument list too long\n", 126)
        return value

    def _fields(self, s: Session, word: Word, size: list[int]) -> list[tuple[str, str | None]]:
        """The fields a word becomes: (text, the glob pattern when an unquoted part has ``*?[``, else None)."""
        fields: list[tuple[str, str | None]] = []
        text: list[str] = []
        pattern: list[str] = []
        globby = present = False  # present: the field exists even when empty (it had quotes)
        at_only = ("qvar", "@") in word.parts

        def end() -> None:
            nonlocal text, pattern, globby, present
            if present or any(text):
                fields.append(("".join(text), "".join(pattern) if globby else None))
            text, pattern, globby, present = [], [], False, False

        for k, (kind, part) in enumerate(word.parts):
            if k == 0 and kind == "lit" and (part == "~" or part.startswith("~/")):  # a tilde prefix: $HOME
                part = s.env.get("HOME", "") + part[1:]
            if kind in ("lit", "quoted"):
                size[0] += len(part)
                if size[0] > ARG_MAX:
                    raise Abort(f"{SH}: Argument list too long\n", 126)
            if kind == "lit":
                text.append(part)
                pattern.append(part)
                globby = globby or _GLOB_CHARS.search(part) is not None
            elif kind == "quoted" or (kind in ("qvar", "qarith") and part != "@"):
                value = part if kind == "quoted" else self._value(s, kind, part, size)
                text.append(value)
                pattern.append(_GLOB_CHARS.sub(r"[\g<0>]", value))
                present = present or bool(value) or not at_only
            elif kind == "qvar":  # "$@": one field per argument
                for j, arg in enumerate(s.args):
                    size[0] += len(arg)
                    if j:
                        end()
                    text.append(arg)
                    pattern.append(_GLOB_CHARS.sub(r"[\g<0>]", arg))
                    present = True
            else:  # an unquoted expansion: split at $IFS
                pieces = self._split_fields(s, self._value(s, kind, part, size))
                for j, (piece, delimited) in enumerate(pieces):
                    if j:
                        end()
                    present = present or delimited
                    text.append(piece)
                    pattern.append(piece)
                    globby = globby or _GLOB_CHARS.search(piece) is not None
        end()
        return fields

    def _split_fields(self, s: Session, value: str) -> list[tuple[str, bool]]:
        """:meth:`split`'s pieces, each with whether a delimiter holding a character of $IFS that is not whitespace
        ends it: such a delimiter ends a field even when it is empty (``IFS=a`` splits ``baac`` into ``b``, ``""``
        and ``c``), where whitespace only separates (POSIX's field splitting, as mksh does it)."""
        ifs = s.env.get("IFS", " \t\n")
        pieces = self.split(s, value)
        if len(pieces) < 2 or not ifs.strip(" \t\n"):
            return [(piece, False) for piece in pieces]
        delimiters = re.findall(self._ifs_pattern(ifs), value)
        return [(piece, j < len(delimiters) and bool(delimiters[j].strip(" \t\n")))
                for j, piece in enumerate(pieces)]

    @staticmethod
    def _ifs_pattern(ifs: str) -> str:
        white = "".join(c for c in ifs if c in " \t\n")
        other = "".join(c for c in ifs if c not in " \t\n")
        w = f"[{re.escape(white)}]*" if white else ""
        delims = ([f"{w}[{re.escape(other)}]{w}"] if other else []) + ([f"[{re.escape(white)}]+"] if white else [])
        return "|".join(delims)

    def split(self, s: Session, value: str, maxsplit: int = 0) -> list[str]:
        """Field splitting: whitespace in ``$IFS`` separates (runs of it count once), any other IFS character
        ends a field. The first and last pieces join the text around the expansion. ``maxsplit``: as many fields
        at most, plus the rest (``read``)."""
        ifs = s.env.get("IFS", " \t\n")
        if not value or not ifs:
            return [value]
        return re.split(self._ifs_pattern(ifs), value, maxsplit=maxsplit)

    def _pattern(self, s: Session, word: Word) -> str:
        """A ``case`` pattern: quoted text matches literally."""
        size = [0]
        out = []
        for kind, text in word.parts:
            value = text if kind in ("lit", "quoted") else self._value(s, kind, text, size)
            out.append(_GLOB_CHARS.sub(r"[\g<0>]", value) if kind in ("quoted", "qvar", "qarith") else value)
        return "".join(out)

    def _arith(self, s: Session, text: str) -> str:
        expanded = _PARAMETER.sub(lambda m: self._variable(s, m.group(1) or m.group(2)), text)
        try:
            return str(arithmetic(expanded, lambda name: s.env.get(name, ""), s.setvar))
        except ArithError as err:
            raise Abort(f"{SH}: {err}\n", 1) from None

    def _variable(self, s: Session, name: str) -> str:
        if name.isascii() and name.isdigit():  # str.isdigit() is true of '¹' too, which int() refuses
            n = int(name) if len(name) < 10 else 1 << 31  # past any argument list ARG_MAX allows
            return s.name if n == 0 else (s.args[n - 1] if n <= len(s.args) else "")
        special = {"?": str(s.status), "$": str(SHELL_PID), "#": str(len(s.args)), "@": " ".join(s.args),
                   "*": " ".join(s.args), "!": "", "-": ""}
        return special[name] if name in special else s.env.get(name, "")

    def _glob(self, s: Session, pattern: str) -> list[str]:
        """The phone's paths that ``pattern`` matches, sorted, found component by component through the
        directories' index: what it costs is what it looks at. A ``*`` or ``?`` matches no leading dot."""
        parts = self.path(s, pattern).strip("/").split("/")
        found = ["/"]
        with self.phone.lock:
            for part in parts:
                if _GLOB_CHARS.search(part) is None:
                    found = [p for d in found for p in [posixpath.join(d, part)] if files.exists(self.phone, p)]
                    continue
                matcher = glob(part)
                try:
                    found = [posixpath.join(d, name) for d in found for name in files.dir_names(self.phone, d)
                             if (part.startswith(".") or not name.startswith(".")) and matcher.fullmatch(name)]
                except TooCostly as err:
                    raise Abort(f"{SH}: {err}\n", 1) from None
        found = sorted(p for p in found if p != "/")
        if pattern.startswith("/"):
            return found
        base = s.cwd.rstrip("/") + "/"
        return [p[len(base):] if p.startswith(base) else p for p in found]

    def has_command(self, name: str) -> bool:
        """Whether ``name`` (or its path under /system/bin and the like) is a command of the phone's."""
        name = self._name(name)
        return name in COMMANDS or name in FILTERS

    def _name(self, arg: str) -> str:
        for d in BIN_DIRS:
            if arg.startswith(d) and "/" not in arg[len(d):]:
                return arg[len(d):]
        return arg

    def call(self, s: Session, io: Io, argv: list[str]) -> int:
        """Run ``argv``: a function of ``s``, a filter, or a command of :data:`COMMANDS` (by name, or by its path
        under /system/bin and the like). What a command raises for bad usage or a refused value is said as
        ``NAME: why`` (status 1)."""
        if argv[0] in s.functions:
            return self._call_function(s, io, argv)
        name = self._name(argv[0])
        if name in FILTERS:
            return self._filter(s, io, name, argv[1:])
        command = COMMANDS.get(name)
        if command is None:
            io.complain(f"{SH}: {argv[0]}: not found\n")
            return 127
        try:
            return command(self, s, io, argv[1:])
        except (VluiError, UsageError) as err:  # bad usage, or a value the simulated phone refuses: say why
            io.complain(f"{name}: {err}\n")
            return 1
        except StorageError as err:  # a full disk or a read-only partition, met while writing
            io.complain(f"{name}: {err.filename}: {err.strerror}\n")
            return 1
        finally:
            self.phone.changed()  # any command may have logged: streaming readers look

    def _filter(self, s: Session, io: Io, name: str, args: list[str]) -> int:
        """A filter run on its own: it reads the files it names, or its standard input (a ``<`` file, what came
        through ``|``; none for ``adb shell CMD``)."""
        try:
            f = FILTERS[name](args, io.out, io.err, lambda: self.tick(s))
        except UsageError as err:
            io.complain(f"{name}: {err}\n")
            return 2 if name == "grep" else 1
        status = 0
        try:
            for arg in f.files or ["-"]:
                if arg != "-" and self.path(s, arg) == "/dev/zero":
                    self._zeros(s, f)
                data, problem = self.read(self.path(s, arg)) if arg != "-" else (io.inp.read(), "")
                if problem:
                    io.complain(f"{name}: {arg}: {problem}\n")
                    status = 2 if name == "grep" else 1
                    continue
                f.feed(data)
            f.close()
        except PipeClosed:
            pass
        return status or f.status


    def _zeros(self, s: Session, f: Stage) -> None:
        """``/dev/zero`` into filter ``f``: zeros without end, until the reader has what it wants (``head -c``), the
        client leaves or the line's CPU time is spent."""
        while True:
            self.tick(s)
            f.feed(_ZEROS)


_ZEROS = bytes(64 << 10)
_GLOB_CHARS = re.compile(r"[*?\[]")
# inside $(( )); a name in braces holds no "$", so a "${" without its "}" is given up at the next "$" (linear in the
# text, where [^}]* made "${${${..." quadratic)
_PARAMETER = re.compile(r"\$(?:\{([^}$]*)\}|([A-Za-z_][A-Za-z0-9_]*|[0-9?$#!@*-]))")


class _Pump:
    """A pipeline's stages, fed in a loop rather than through one another, so that a pipeline of any length runs
    in constant stack depth. While data moves along, what each stage writes waits in its box."""

    def __init__(self, out: Callable[[bytes], None]) -> None:
        self.out = out
        self.stages: list[Stage] = []
        self.boxes: list[list[bytes]] = []
        self.dead = -1  # the stages up to this one read no more (``head`` has its lines): their writers stop
        self.pumping = False

    def add(self, stage: Stage) -> None:
        self.stages.append(stage)
        self.boxes.append([])

    def writer(self, k: int) -> Callable[[bytes], None]:
        """Where the command before stage ``k`` writes (the first command for 0; past the last stage, ``out``)."""
        def write(data: bytes) -> None:
            if self.pumping:
                self.boxes[k - 1].append(data)
            elif data:
                self.push(k, data)
        return write

    def push(self, k: int, data: bytes) -> None:
        """``data`` into stage ``k``, and what comes out of it along the rest; ``PipeClosed`` when stage ``k``
        reads no more."""
        closed = False
        self.pumping = True
        try:
            while k < len(self.stages) and data:
                if k <= self.dead:
                    raise PipeClosed
                try:
                    self.stages[k].feed(data)
                except PipeClosed:
                    self.dead, closed = k, True
                data = b"".join(self.boxes[k])
                self.boxes[k].clear()
                k += 1
        finally:
            self.pumping = False
        if data and k == len(self.stages):
            self.out(data)
        if closed:
            raise PipeClosed

    def run(self, first: Callable[[], int]) -> int:
        """Run the first command, then end each stage's input in turn; the last stage's status."""
        try:
            first()
        except PipeClosed:
            pass
        status = 0
        for stage in self.stages:
            try:
                status = stage.close()
            except PipeClosed:
                status = 0
        return status


class _ScriptReader:
    """The lines of a script read from a pipe or a terminal, bounded and parsed in linear time: a line of
    MAX_ARG_STRLEN bytes or more is dropped (with one error line) as it arrives, and a command spanning lines is
    parsed again only as often as its growth pays for (so a long ``{`` block costs a few times its size)."""

    def __init__(self) -> None:
        self.partial: list[bytes] = []  # the line being received
        self.partial_size = 0
        self.overflow = False  # the line being received is too long: dropped up to its newline
        self.pending: list[str] = []  # the lines of a command not complete yet
        self.pending_size = 0
        self.spent = 0  # what parsing the pending command has cost so far

    @property
    def waiting(self) -> bool:
        return bool(self.pending)

    def lines(self, data: bytes) -> Iterator[bytes | None]:
        """The lines ``data`` completes (with their newline); None for one that was too long."""
        *complete, last = data.split(b"\n")
        for piece in complete:
            too_long = self.overflow or self.partial_size + len(piece) >= MAX_ARG_STRLEN
            line = None if too_long else b"".join(self.partial) + piece + b"\n"
            self.partial, self.partial_size, self.overflow = [], 0, False
            yield line
        if not self.overflow:
            if self.partial_size + len(last) >= MAX_ARG_STRLEN:
                self.partial, self.partial_size, self.overflow = [], 0, True
            elif last:
                self.partial.append(last)
                self.partial_size += len(last)

    def end(self) -> list[bytes | None]:
        """At the end of the input: its last line, when it has no newline (None: it was too long)."""
        last: list[bytes | None] = [None] if self.overflow else [b"".join(self.partial) + b"\n"] if self.partial else []
        self.partial, self.partial_size, self.overflow = [], 0, False
        return last

    def add(self, line: bytes | None, io: Io) -> str | None:
        """One more line: the script to parse now (what is pending and this line), or None to wait."""
        if line is None:
            io.complain(f"{SH}: line too long: at most {MAX_ARG_STRLEN - 1} bytes\n")
            self.pending, self.pending_size, self.spent = [], 0, 0
            return None
        text = line.decode("utf-8", "surrogateescape")
        if self.pending_size + len(text) >= MAX_ARG_STRLEN:
            io.complain(f"{SH}: command too long: at most {MAX_ARG_STRLEN - 1} bytes\n")
            self.pending, self.pending_size, self.spent = [], 0, 0
            return None
        self.pending.append(text)
        self.pending_size += len(text)
        if self.spent > 3 * self.pending_size:
            return None  # parsed too often for its size: wait until it has grown
        return self.take()

    def take(self) -> str:
        script = "".join(self.pending)
        self.spent += len(script)
        self.pending, self.pending_size = [], 0
        return script

    def keep(self, rest: str, progress: bool) -> None:
        """What the last parse left open: it waits for more lines."""
        if rest.strip():
            self.pending, self.pending_size = [rest], len(rest)
        if progress or not rest.strip():
            self.spent = 0


FAMILIES = (builtins, files, system, screen, log, apps, dumpsys, sqlite, procs)  # the modules of commands, each with its COMMANDS


def _merged(tables: list[dict[str, Command]]) -> dict[str, Command]:
    """The families' tables as one; a name two families define is an error, not a silent override."""
    merged: dict[str, Command] = {}
    for table in tables:
        twice = sorted(merged.keys() & table.keys())
        if twice:
            raise AssertionError(f"shell commands defined twice: {twice}")
        merged.update(table)
    return merged


# The commands, by name (an executable's path under /system/bin and the like finds the same one).
COMMANDS: dict[str, Command] = _merged([family.COMMANDS for family in FAMILIES])
