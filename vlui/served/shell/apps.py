"""Apps and intents: ``am`` (start, broadcast, force-stop), ``monkey`` and ``pm``."""

from __future__ import annotations

import io as io_module
import re
import zipfile
import zlib
from dataclasses import dataclass, field

from vlui.android import intents as android_intents
from vlui.android.apps import LAUNCHER_PKG, apps, on_phone, short_component
from vlui.resources import read_yaml
from vlui.served import DATA_DIR, configure
from vlui.served.numbers import parse_long
from vlui.served.phone import ServedPhone
from vlui.served.shell.context import Command, Io, Session, ShellApi, UsageError, getopt, without_user
from vlui.sim import intents
from vlui.sim.apps import dialer

# what dumpsys package and pm say of the apps' packages (versions, install times, uids)
PACKAGES: dict[str, dict] = read_yaml(DATA_DIR / "packages.yaml")


# the system packages ``pm list packages`` lists besides the apps'
SYSTEM_PACKAGES = ("android", "com.android.phone", "com.android.providers.settings", "com.android.shell",
                   "com.android.systemui", "com.google.android.inputmethod.latin", LAUNCHER_PKG)


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


def am(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    sub = args[0] if args else None
    if sub in ("start", "start-activity"):
        return _am_start(sh.phone, io, args[1:])
    if sub == "broadcast":
        return _am_broadcast(sh.phone, io, args[1:])
    if sub == "force-stop":
        packages = without_user(args[1:])
        if len(packages) != 1:
            io.complain("Error: force-stop takes one package name\n")
            return 255
        configure.force_stop(sh.phone, packages[0])
        return 0
    if sub in (None, "help", "-h"):
        io.say("Activity manager (activity) commands:\n  start [-W] [-S] [-n COMPONENT] ...\n"
               "      Start an Activity.\n  force-stop PACKAGE\n      Completely stop the given application "
               "package.\n")
        return 0
    io.complain(f"Error: am {sub} is not supported by the simulated phone\n")
    return 255


def _parse_intent(io: Io, args: list[str]) -> tuple[_Intent, set[str], dict[str, tuple[str, str]]] | None:
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
                    intent.component = _component(value)
                elif arg == "--esn":
                    intent.extras = True
            elif arg in _AM_EXTRAS:
                if len(args) < 2:
                    raise IndexError(arg)
                try:  # Intent.parseCommandArgs decodes these at once; a bad one is am's exception
                    if arg == "--ei":
                        android_intents.java_int(args[1])
                    elif arg == "--ez":
                        android_intents.java_bool(args[1])
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
                intent.component = _component(arg)
            else:
                intent.data = arg
    except (IndexError, ValueError):
        io.complain("Error: an option of am lacks its value\n")
        return None
    return intent, flags, extras


def _am_start(phone: ServedPhone, io: Io, args: list[str]) -> int:
    parsed = _parse_intent(io, args)
    if parsed is None:
        return 255
    intent, flags, extras = parsed
    wait, stop_first = "-W" in flags, "-S" in flags
    io.say(f"Starting: {intent}\n")
    if intent.action == CALL and intent.component is None and (intent.data or "").startswith("tel:"):
        with phone.lock:  # Telecom places the call, or shows the dial pad for an emergency number
            dialer.call_intent(phone.device, intent.data[4:], caller_uid=0)
            phone.device.state_changed()
        return 0
    installed = phone.device.state.installed
    key = _resolve(intent, installed)
    target = None if key is not None else android_intents.resolve(
        intent.action, intent.data, intent.categories, intent.package, intent.component)
    if target is not None and not on_phone(target.app, installed):
        target = None
    if target is not None:  # an activity that takes the intent: a Settings page, the dial pad, Clock
        info = apps()[target.app]
        if stop_first:
            configure.force_stop(phone, info.package)
        intent.flags |= 0x10000000  # FLAG_ACTIVITY_NEW_TASK, which am adds
        intent.component, intent.package = (info.package, target.activity), None
        with phone.lock:
            dev = phone.device
            st = dev.state
            state = "HOT" if target.app in st.tasks else "WARM" if target.app in st.running else "COLD"
            mark = dev.log.mark()
            intents.deliver(dev, target, str(intent)[len("Intent { "):-len(" }")], intent.data, extras,
                            caller_uid=0)
            dev.state_changed()
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
        configure.force_stop(phone, info.package)
    with phone.lock:
        dev = phone.device
        st = dev.state
        warning = ("Warning: Activity not started, intent has been delivered to currently running top-most "
                   "instance.\n" if st.top == key and not st.overview else
                   "Warning: Activity not started, its current task has been brought to the front\n"
                   if key in st.tasks else "")
        state = "HOT" if key in st.tasks else "WARM" if key in st.running else "COLD"
        mark = dev.log.mark()
        dev.launch(key)  # as the launcher starts it: the START line is the launcher's
        dev.state_changed()
        shown = [int(m.group(1)) for e in dev.log.entries(mark) if e.tag == "ActivityTaskManager"
                 for m in [re.match(r"Displayed .*: \+(\d+)ms", e.message)] if m]
    io.say(warning)
    if wait:
        total = shown[-1] if shown else 0
        io.say(f"Status: ok\nLaunchState: {state}\nActivity: {short_component(info.package, info.activity)}\n"
               f"TotalTime: {total}\nWaitTime: {total + 17}\nComplete\n")
    return 0


def _am_broadcast(phone: ServedPhone, io: Io, args: list[str]) -> int:
    """``am broadcast``. The phone's receivers act on ``android.intent.action.AIRPLANE_MODE`` (a protected
    broadcast: the shell sends it as root); others reach no receiver."""
    parsed = _parse_intent(io, args)
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
        configure.apply_airplane_mode(phone, None if state is None else state.lower() == "true")
    io.say("Broadcast completed: result=0\n")
    return 0


def _component(text: str) -> tuple[str, str]:
    package, sep, cls = text.partition("/")
    if not sep or not package or not cls:
        raise ValueError(text)
    return package, package + cls if cls.startswith(".") else cls


def _resolve(intent: _Intent, installed: list[str]) -> str | None:
    """The app on the phone (a third-party one ``installed``) whose launcher activity an intent starts. Explicit:
    the app with that launcher activity. Implicit: the launcher intent (MAIN/LAUNCHER) of a package given with
    ``-p``. Other implicit intents the apps take (``android.settings.*``, ``DIAL tel:``, ``SET_ALARM``) are
    :func:`vlui.android.intents.resolve`'s."""
    for key, info in apps().items():
        if not on_phone(key, installed):
            continue
        if intent.component is not None:
            if intent.component == (info.package, info.activity):
                return key
        elif (intent.package == info.package and intent.action in (None, MAIN)
              and set(intent.categories) <= {LAUNCHER, "android.intent.category.DEFAULT"} and not intent.data):
            return key
    return None


def monkey(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
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
        elif arg.isascii() and arg.isdigit():
            count = parse_long(arg)
    key = package_app(sh.phone, package)
    if count != 1:
        io.complain("** the simulated phone's monkey starts an app: monkey -p PACKAGE 1\n")
        return 1
    if key is None:
        io.say("** No activities found to run, monkey aborted.\n")
        return 252
    with sh.phone.lock:
        sh.phone.device.launch(key)
        sh.phone.device.state_changed()
    io.say("Events injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")
    return 0


def package_app(phone: ServedPhone, package: str | None) -> str | None:
    """The key of the app on the phone (a third-party one installed) whose package is ``package``, or None."""
    return next((k for k, info in apps().items() if info.package == package
                 and on_phone(k, phone.device.state.installed)), None)


def pm(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    if args[:2] in (["list", "packages"], ["list", "package"]):
        opts, operands = getopt(without_user(args[2:]), "fdesu3iUa")
        o = {k for k, _ in opts}
        installed = sh.phone.device.state.installed
        system = {info.package for info in apps().values() if not info.third_party} | set(SYSTEM_PACKAGES)
        added = {apps()[key].package for key in installed}  # the third-party apps installed (-3 lists them alone)
        # every app of the emulator image is an enabled system app: -d (disabled) lists none
        names = [] if "d" in o else sorted(added if "3" in o else system if "s" in o else system | added)
        names = [n for n in names if not operands or operands[0] in n]
        io.say("".join(f"package:{n}\n" for n in names))
        return 0
    if args[:1] == ["install"]:
        return _pm_install(sh, s, io, args[1:])
    if not args or args[0] in ("help", "-h"):
        io.say("Package manager (package) commands:\n  list packages [-3] [-s] [FILTER]\n"
               "  install [-r] [-t] [-d] [-g] PATH\n")
        return 0
    io.complain(f"Error: pm {args[0]} is not supported by the simulated phone\n")
    return 255


def _pm_install(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``pm install [OPTIONS] PATH`` (``adb install`` pushes the APK to /data/local/tmp, runs this, then removes
    it). Answered as an Android 10 emulator's install session answers at commit: a file that is no zip archive is
    ``INSTALL_PARSE_FAILED_NOT_APK``, a zip without a manifest fails to parse. Deviation: the simulated phone
    runs only its own apps, so a real APK is refused too (``INSTALL_FAILED_INTERNAL_ERROR``)."""
    try:
        _, operands = getopt(without_user(args), "lrtdgfspR", "iSP")
    except UsageError as err:
        io.complain(f"Error: {err}\n")
        return 1
    if not operands:
        io.complain("Error: must either specify a package size or an APK file\n")
        return 1
    path = sh.path(s, operands[-1])
    data, problem = sh.read(path)
    if problem:
        io.complain(f"Error: Can't open file: {operands[-1]}\n")
        return 1
    staged = f"/data/app/vmdl{zlib.crc32(path.encode() + data[:4096]) % 2_000_000_000}.tmp/base.apk"
    if not data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        why = f"INSTALL_PARSE_FAILED_NOT_APK: Failed to parse {staged}"
    else:
        try:
            names = zipfile.ZipFile(io_module.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, ValueError, OSError):
            names = None
        if names is None:
            why = f"INSTALL_PARSE_FAILED_NOT_APK: Failed to parse {staged}"
        elif "AndroidManifest.xml" not in names:
            why = f"INSTALL_PARSE_FAILED_UNEXPECTED_EXCEPTION: Failed to parse {staged}"
        else:
            why = "INSTALL_FAILED_INTERNAL_ERROR: the simulated phone installs no apps"
    io.say(f"Failure [{why}]\n")
    return 1


COMMANDS: dict[str, Command] = {"am": am, "monkey": monkey, "pm": pm}
