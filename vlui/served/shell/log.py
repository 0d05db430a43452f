"""The log: ``log`` (write a line as liblog does) and ``logcat`` (filter specs, ``$ANDROID_LOG_TAGS``, formats,
``-d``, ``-c``, streaming until cancelled)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from vlui.android.logcat import EPOCH, Entry
from vlui.served.numbers import parse_long
from vlui.served.patterns import Pattern, PatternError, ecmascript_pattern
from vlui.served.processes import SHELL_PID
from vlui.served.shell.context import (
    POLL_S,
    Command,
    Io,
    Session,
    ShellApi,
    UsageError,
    getopt,
)

UINT_MAX = (1 << 32) - 1  # what android::base::ParseUint reads into logcat's counts and pids

_PRIORITY = {"V": 2, "D": 3, "I": 4, "W": 5, "E": 6, "F": 7, "A": 7, "S": 8}  # android_LogPriority


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
    regex: Pattern | None = None
    pid: int | None = None
    buffers: tuple[str, ...] = ("main", "system", "crash")

    def wants(self, e: Entry) -> bool:
        level = self.levels.get(e.tag, self.default)
        return (_PRIORITY.get(e.level, 2) >= _PRIORITY[level] and level != "S"
                and (self.pid is None or e.pid == self.pid)
                and (self.regex is None or self.regex.search(e.message)))

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
    raise UsageError(f"-t/-T \"{value}\" is neither a count nor a time like 'MM-DD hh:mm:ss.mmm'")


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
            raise UsageError(f"unrecognized option '{arg}'")
        if name in ("--clear", "--dump"):
            short.append(long_options[name])
            continue
        if not eq:
            if not args:
                raise UsageError(f"option '{name}' requires an argument")
            value = args.pop(0)
        if name != "--pid":
            short += [long_options[name], value]
        elif (pid := parse_long(value, 0, UINT_MAX)) is not None and value.isdigit():
            q.pid = pid
        else:
            raise UsageError(f"--pid={value} is not a process id")
    opts, specs = getopt(short, "cdsgDBLS", "bvtTmeGfrn")
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
                    raise UsageError(f"Invalid parameter \"{word}\" to -v; the simulated phone prints "
                                     f"{', '.join(_LOG_FORMATS)} (with {', '.join(_LOG_MODIFIERS)})")
        elif opt in "tT":
            q.dump = q.dump or opt == "t"
            if value.isdigit() and (count := parse_long(value, 0, UINT_MAX)) is not None:
                q.tail = count
            else:
                q.since_ms = _log_time(value, year)
        elif opt == "m":
            count = parse_long(value, 1, UINT_MAX) if value.isdigit() else None
            if count is None:
                raise UsageError(f"-m \"{value}\" isn't an integer greater than zero")
            q.max_count = count
        elif opt == "e":
            try:
                q.regex = ecmascript_pattern(value)
            except PatternError as err:
                raise UsageError(f"bad regex '{value}': {err}") from None
        elif opt == "b":
            buffers += value.split(",")
        elif opt in "frn":
            raise UsageError(f"-{opt} (log files) is not supported by the simulated phone")
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
                raise UsageError(f"Invalid filter expression '{spec}' in ANDROID_LOG_TAGS")
            raise UsageError(f"Invalid filter expression '{spec}'")
        if tag == "*":
            q.default = level
        else:
            q.levels[tag] = level
    return q


class _LogPrinter:
    """Writes entries as one ``logcat`` invocation does: its divider before the first, at most ``max_count``.
    ``tick`` is called for each entry (it raises to stop a long ``-e`` match: the CPU budget, a client gone)."""

    def __init__(self, q: _LogQuery, out: Callable[[bytes], None], tick: Callable[[], None]) -> None:
        self.q, self.out, self.tick = q, out, tick
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
            if self.q.regex is not None:
                self.tick()
            if self.q.wants(e):
                chunks.append(_format_entry(self.q.fmt, e, self.q.modifiers))
                self.printed += 1
                if self.q.max_count is not None and self.printed >= self.q.max_count:
                    done = True
                    break
        if chunks:
            self.out("".join(chunks).encode("utf-8", "surrogateescape"))
        return done


LOG_MAX_PAYLOAD = 4068  # liblog's LOGGER_ENTRY_MAX_PAYLOAD: priority, tag, NUL, message, NUL


def _log_payload(tag: str, message: str) -> tuple[str, str]:
    """``(tag, message)`` as liblog stores them: the entry's payload (priority, tag, NUL, message, NUL) is cut at
    :data:`LOG_MAX_PAYLOAD` bytes, the tag included. A tag that fills the payload leaves no room for the message:
    logcat then prints the tag's bytes that fit and an empty message."""
    raw_tag = tag.encode("utf-8", "surrogateescape")
    tag_room = LOG_MAX_PAYLOAD - 2  # the priority byte, and the last byte that holds the tag's NUL or the cut
    if len(raw_tag) >= tag_room:
        return raw_tag[:tag_room].decode("utf-8", "ignore"), ""
    room = LOG_MAX_PAYLOAD - 3 - len(raw_tag)
    raw = message.encode("utf-8", "surrogateescape")
    return tag, message if len(raw) <= room else raw[:room].decode("utf-8", "ignore")


def log(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    try:
        opts, words = getopt(args, "", "pt")
    except UsageError as err:
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
    tag, message = _log_payload(tag, " ".join(words))
    with sh.phone.lock:
        # an ADB backend logs a marker after every input: the log stays the in-process one
        sh.phone.device.log_marker(SHELL_PID, level, tag, message)
    return 0


def logcat(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    with sh.phone.lock:
        year = sh.phone.device.now().year
    try:
        q = _logcat_query(args, year, s.env.get("ANDROID_LOG_TAGS"))
    except UsageError as err:
        io.complain(f"logcat: {err}\n")
        return 1
    if q.clear:
        with sh.phone.lock:
            sh.phone.device.clear_log()
        return 0
    if q.sizes:
        with sh.phone.lock:
            log = sh.phone.device.log
            size, used = log.max_bytes, log.used
        for b in q.buffers:  # the phone keeps one log for every buffer: each reports it
            io.say(f"{b}: ring buffer is {size >> 10} KiB ({used >> 10} KiB consumed), max entry is 5120 B, "
                   "max payload is 4068 B\n")
        return 0
    with sh.phone.lock:
        log = sh.phone.device.log
        entries = [] if q.silent_buffers else log.entries()
        next_seq = log.mark()
    if q.since_ms is not None:
        entries = [e for e in entries if e.time_ms >= q.since_ms]
    if q.tail is not None:  # as logd: the last N entries, then the filters (they run in logcat)
        entries = entries[-q.tail:] if q.tail else []
    printer = _LogPrinter(q, io.out, lambda: sh.tick(s))
    if printer.print(entries) or q.dump:
        return 0
    while not sh.stopped(s):
        with sh.phone.lock:
            log = sh.phone.device.log
            if log.mark() == next_seq:
                sh.phone.log_changed.wait(POLL_S)
            next_seq = min(next_seq, log.mark())  # a snapshot load may rewind the log's sequence numbers
            entries = [] if q.silent_buffers else log.entries(next_seq)
            next_seq = log.mark()
        if printer.print(entries):  # written unlocked: the network may block
            return 0
    return 0


COMMANDS: dict[str, Command] = {"log": log, "logcat": logcat}
