"""Processes and identity: ``ps``, ``pidof``, ``kill``, ``uname``, ``su``, ``run-as`` and ``toybox``, as Android 10's
toybox and the AOSP programs print them, over the phone's processes (:mod:`vlui.served.processes`)."""

from __future__ import annotations

from vlui.android.apps import SYSTEM_PID, app_uid, apps
from vlui.served import configure, processes
from vlui.served.configure import ZYGOTE_PID
from vlui.served.processes import SHELL_PID, Process
from vlui.served.shell.apps import SYSTEM_PACKAGES, package_app
from vlui.served.shell.context import Command, Exit, Io, Session, ShellApi, UsageError, getopt
from vlui.served.shell.files import TOYBOX

# ps's columns: name -> (header, width: negative is left-aligned, the value of a process)
_PS_FIELDS = {
    "user": ("USER", -12, lambda p: p.user),
    "uid": ("UID", 5, lambda p: str(p.uid)),
    "pid": ("PID", 5, lambda p: str(p.pid)),
    "ppid": ("PPID", 5, lambda p: str(p.ppid)),
    "vsz": ("VSZ", 7, lambda p: str(p.vsz)),
    "rss": ("RSS", 6, lambda p: str(p.rss)),
    "wchan": ("WCHAN", -16, lambda p: p.wchan if p.state != "R" else "0"),
    "addr": ("ADDR", 4, lambda p: "0"),
    "s": ("S", 1, lambda p: p.state),
    "pri": ("PRI", 3, lambda p: "19"),
    "ni": ("NI", 3, lambda p: "0"),
    "tty": ("TT", -8, lambda p: "?"),
    "time": ("TIME", 8, lambda p: "00:00:00"),
    "name": ("NAME", -27, lambda p: p.name),
    "cmd": ("CMD", -27, lambda p: p.name),
    "comm": ("COMM", -15, lambda p: p.name.strip("[]")[-15:]),
    "args": ("ARGS", -27, lambda p: p.name),
    "cmdline": ("CMDLINE", -27, lambda p: p.name),
}
_PS_DEFAULT = "user,pid,ppid,vsz,rss,wchan,addr,s,name"

# the signals by number, as Linux on x86 numbers them (kill -l lists them)
SIGNALS = ("HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM",
           "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF",
           "WINCH", "IO", "PWR", "SYS")
_HARMLESS = {"CHLD", "CONT", "URG", "WINCH", "STOP", "TSTP", "TTIN", "TTOU"}  # ignored or stopping, never fatal


def ps(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``ps [-Aef] [-o FIELD,...] [-p PID,...] [-u USER,...] [PID...]``: toybox's columns. Without a selection it
    lists the shell's own processes (``sh`` and ``ps``), as on a device since Android 8."""
    opts, operands = getopt(args, "AaedfLlnwZTMk", "opuUtgG")
    o = {k for k, _ in opts}
    fields = [f for k, v in opts if k == "o" for f in v.split(",") if f] or _PS_DEFAULT.split(",")
    columns = []
    for f in fields:
        name, _, header = f.partition("=")
        if name.lower() not in _PS_FIELDS:
            io.complain(f"ps: bad -o {f}\n")
            return 1
        title, width, value = _PS_FIELDS[name.lower()]
        columns.append((header or title, width, value))
    pids = {_number("-p", p) for k, v in opts if k == "p" for p in v.split(",") if p}
    pids |= {_number("PID", p) for p in operands}
    users = {u for k, v in opts if k in "uU" for u in v.split(",") if u}
    with sh.phone.lock:
        procs = processes.processes(sh.phone)
        me = Process("root", sh.phone.device.state.next_pid, SHELL_PID, 10784, 2428, "0", "R", "ps")  # the newest
    procs.append(me)
    if pids or users:
        procs = [p for p in procs if p.pid in pids or p.user in users or str(p.uid) in users]
    elif not o & {"A", "e"}:
        procs = [p for p in procs if p.pid in (SHELL_PID, me.pid)]
    widths = [w for _, w, _ in columns]
    lines = [_ps_line([title for title, _, _ in columns], widths)]
    lines += [_ps_line([value(p) for _, _, value in columns], widths) for p in procs]
    io.say("".join(lines))
    return 0 if procs else 1


def _ps_line(cells: list[str], widths: list[int]) -> str:
    """One line of ``ps``: each cell padded to its width (negative: left-aligned), as toybox pads them; a cell
    wider than its column takes the room from the next one's padding."""
    out, carry = [], 0
    for cell, width in zip(cells, widths, strict=True):
        room = max(0, abs(width) - carry)
        out.append(cell.ljust(room) if width < 0 else cell.rjust(room))
        carry = max(0, len(cell) - room)
    return " ".join(out).rstrip(" ") + "\n"


def _number(what: str, text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise UsageError(f"bad {what} '{text}'")
    return int(text)


def pidof(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``pidof [-s] [-o PID,...] NAME...``: the pids of the processes so named, on one line; status 1 if none."""
    opts, names = getopt(args, "sx", "o")
    omit = {p for k, v in opts if k == "o" for p in v.split(",")}
    with sh.phone.lock:
        procs = processes.processes(sh.phone)
    found = [str(p.pid) for p in reversed(procs) if p.name in names or p.name.rsplit("/", 1)[-1] in names]
    found = [pid for pid in found if pid not in omit and not (pid == str(SHELL_PID) and "%PPID" in omit)]
    if ("s", "") in opts:
        found = found[:1]
    if found:
        io.say(" ".join(found) + "\n")
    return 0 if found else 1


def _signal(spec: str) -> int | None:
    """A signal's number from ``9``, ``KILL`` or ``SIGKILL`` (any case); None for no signal."""
    if spec.isascii() and spec.isdigit():
        return int(spec) if int(spec) <= len(SIGNALS) else None
    name = spec.upper().removeprefix("SIG")
    return SIGNALS.index(name) + 1 if name in SIGNALS else None


def kill(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``kill [-s SIGNAL | -SIGNAL] PID...`` and ``kill -l``. An app's process dies (its task stays; the app in
    front is started again at once, as ActivityManager restarts a visible activity), and so does the framework with
    system_server or zygote (it restarts); the shell's own process ends the shell. A signal to any other process is
    delivered and changes nothing on the simulated phone (a deviation: such a daemon restarts on a device)."""
    if args[:1] == ["-l"]:
        rows = [SIGNALS[k:k + 4] for k in range(0, len(SIGNALS), 4)]
        io.say("".join(" ".join(f"{k * 4 + j + 1:2d}) SIG{name:<9}" for j, name in enumerate(row)).rstrip() + "\n"
                       for k, row in enumerate(rows)))
        return 0
    signal, rest = 15, list(args)
    if rest[:1] == ["-s"] and len(rest) > 1:
        spec, rest = rest[1], rest[2:]
    elif rest and rest[0].startswith("-") and rest[0] != "--" and len(rest[0]) > 1:
        spec, rest = rest[0][1:], rest[1:]
    else:
        spec = "15"
    rest = rest[1:] if rest[:1] == ["--"] else rest
    number = _signal(spec) if spec != "0" else 0
    if number is None:
        raise UsageError(f"Unknown signal '{spec}'")
    signal = number
    if not rest:
        raise UsageError("Needs 1 argument")
    status = 0
    for arg in rest:
        if not (arg.isascii() and arg.lstrip("-").isdigit()) or len(arg) > 10:
            io.complain(f"kill: invalid pid '{arg}'\n")
            status = 1
            continue
        pid = int(arg)
        with sh.phone.lock:
            target = processes.find(sh.phone, pid)
            if target is None:
                io.complain(f"kill: {arg}: No such process\n")
                status = 1
                continue
            if signal == 0 or SIGNALS[signal - 1] in _HARMLESS:
                continue
            if pid == SHELL_PID:
                raise Exit(128 + signal)
            if pid in (SYSTEM_PID, ZYGOTE_PID):
                configure.restart_framework(sh.phone)
            else:
                _app_died(sh, pid)
    return status


def _app_died(sh: ShellApi, pid: int) -> None:
    """The app whose process is ``pid`` loses it, as Android 10's ActivityManager logs it; the app in front starts
    a new one at once. The caller holds the lock."""
    key = processes.app_of(sh.phone, pid)
    if key is None:
        return
    dev = sh.phone.device
    st = dev.state
    top = st.top == key
    st.running.remove(key)
    del st.pids[key]
    info = apps()[key]
    dev.logi("ActivityManager", f"Process {info.package} (pid {pid}) has died: {'fg  TOP ' if top else 'cch CAC '}")
    if top:
        dev.start_process(key, info, info.activity)
    dev.state_changed()


def uname(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``uname [-asnrvmo]``: the release emulator's kernel (``-s`` when no option is given)."""
    opts, _ = getopt(args, "asnrvmo")
    o = {k for k, _ in opts} or {"s"}
    if "a" in o:
        o = set("snrvmo")
    values = {"s": "Linux", "n": processes.NODENAME, "r": processes.KERNEL_RELEASE, "v": processes.KERNEL_VERSION,
              "m": processes.MACHINE, "o": "Android"}
    io.say(" ".join(values[k] for k in "snrvmo" if k in o) + "\n")
    return 0


def su(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``su [WHO [COMMAND...]]``: AOSP's su of a userdebug image (the Google APIs emulator's /system/xbin/su, which
    B-MoCA's environment calls as ``su 0 toybox date ...``): COMMAND runs as WHO, not through a shell; without one,
    the shell reads its standard input. The simulated phone runs commands as root only: another WHO is refused."""
    if not args:
        return sh.run_line(s, io, io.inp.read().decode("utf-8", "surrogateescape"))
    who, command = args[0], args[1:]
    user = who.split(",")[0]
    if processes.user_uid(user) < 0:
        io.complain(f"su: unknown user '{user}'\n")
        return 1
    if processes.user_uid(user) != 0:
        io.complain(f"su: the simulated phone runs commands as root only, not as '{who}'\n")
        return 1
    if not command:
        return sh.run_line(s, io, io.inp.read().decode("utf-8", "surrogateescape"))
    if not sh.has_command(command[0]):
        io.complain(f"su: failed to exec {command[0]}: No such file or directory\n")
        return 1
    return sh.call(s, io, command)


def run_as(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``run-as PACKAGE [--user UID] COMMAND [ARGS...]``: Android 10's refusals. No package of the phone is
    debuggable (every app is a release build), so a known app is always refused."""
    if len(args) < 1:
        io.complain("run-as: usage: run-as <package-name> [--user <uid>] <command> [<args>]\n")
        return 1
    package = args[0]
    key = package_app(sh.phone, package)
    if key is None and package not in SYSTEM_PACKAGES:
        io.complain(f"run-as: unknown package: {package}\n")
        return 1
    from_system = package in _SYSTEM_UID_PACKAGES or (key is not None and app_uid(key) < 10000)
    io.complain(f"run-as: package not {'an application' if from_system else 'debuggable'}: {package}\n")
    return 1


_SYSTEM_UID_PACKAGES = {"android", "com.android.phone", "com.android.providers.settings", "com.android.shell"}


def toybox(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``toybox [COMMAND [ARGS...]]``: one of its commands, or their names."""
    if not args:
        io.say(" ".join(TOYBOX) + "\n")
        return 0
    if args[0] not in TOYBOX:
        io.complain(f"toybox: Unknown command {args[0]}\n")
        return 1
    return sh.call(s, io, args)


COMMANDS: dict[str, Command] = {"ps": ps, "pidof": pidof, "kill": kill, "uname": uname, "su": su, "run-as": run_as,
                                "toybox": toybox}
