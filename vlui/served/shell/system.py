"""System services and properties: ``getprop``/``setprop``, ``start``/``stop``, ``date``, ``settings``, ``cmd``
(``cmd activity``, ``package`` and ``window`` are :func:`~vlui.served.shell.apps.am`,
:func:`~vlui.served.shell.apps.pm` and :func:`~vlui.served.shell.screen.wm`), ``svc``, ``service``, ``media``, ``df``,
``env`` and ``content``."""

from __future__ import annotations

import re
from datetime import datetime

from vlui.android.logcat import EPOCH
from vlui.android.state import VOLUME_MAX, VOLUME_MIN
from vlui.resources import read_yaml
from vlui.served import DATA_DIR, configure, providers
from vlui.served.phone import ServedPhone
from vlui.served.shell.apps import am, pm
from vlui.served.shell.context import Command, Io, Session, ShellApi, getopt, without_user
from vlui.served.shell.files import SDCARD
from vlui.served.shell.screen import wm
from vlui.sim import services

PROP_VALUE_MAX = 91  # bytes of a property's value (bionic's PROP_VALUE_MAX, less its NUL); ro. ones may be longer


MAX_SET_PROPS = 1024  # properties a client may add: the property area of a device is a few hundred KiB


PROP_AREA_BYTES = 128 << 10  # bionic's PA_SIZE: one property area's bytes, which the names and values a client adds share


PROP_MSG_MAX = 0xFFFF  # init's RecvString refuses a longer name or value ("RecvString asked to read huge string")


PROP_INFO_BYTES = 96  # what a property takes in the area besides its name and value (prop_info and its trie node)


# the properties of an Android 10 emulator that tools read and the simulated phone does not derive (init's services,
# the VM's settings, the radio, USB): YAML, as `getprop` lists them
EMULATOR_PROPS: dict[str, str] = {k: str(v) for k, v in read_yaml(DATA_DIR / "props.yaml").items()}


def _property_name_problem(name: str) -> str:
    """Why toybox's ``setprop`` refuses ``name`` before asking init ("" when it asks): it repeats init's
    IsLegalPropertyName, since init's refusal gives no reason."""
    if not name or name[0] == "." or name[-1] == ".":
        return "property names must not start or end with '.'"
    if ".." in name:
        return "'..' is not allowed in a property name"
    bad = next((c for c in name if not (c.isascii() and c.isalnum()) and c not in ":@_.-"), None)
    return f"invalid character '{bad}' in name '{name}'" if bad is not None else ""


def _props(phone: ServedPhone) -> dict[str, str]:
    """Every property ``getprop`` lists: an emulator's (:data:`EMULATOR_PROPS`) under the phone's own. The caller
    holds the lock."""
    return {**EMULATOR_PROPS, **phone.all_props()}


SERVICES: list[str] = read_yaml(DATA_DIR / "services.yaml")


_SETTINGS_USAGE = """Settings provider (settings) commands:
  help
      Print this help text.
  get [--user <USER_ID> | current] NAMESPACE KEY
      Retrieve the current value of KEY.
  put [--user <USER_ID> | current] NAMESPACE KEY VALUE [TAG] [default]
      Change the contents of KEY to VALUE.
  delete [--user <USER_ID> | current] NAMESPACE KEY
      Delete the entry for KEY.
  list [--user <USER_ID> | current] NAMESPACE
      Print all defined keys.
      NAMESPACE is one of {system, secure, global}, case-insensitive
"""


_CONTENT_USAGE = """usage: adb shell content [subcommand] [options]

usage: adb shell content query --uri <URI> [--user <USER_ID>] [--projection <PROJECTION>] [--where <WHERE>] [--sort <SORT_ORDER>]
  <PROJECTION> is a list of colon separated column names and is formatted:
  <COLUMN_NAME>[:<COLUMN_NAME>...]
  <SORT_ORDER> is the order in which rows in the result should be sorted.
  Example:
  # Select "name" and "value" columns from secure settings where "name" is equal to "new_setting" and sort the result by name in ascending order.
  adb shell content query --uri content://settings/secure --projection name:value --where "name=\'new_setting\'" --sort "name ASC"
"""


def getprop(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    with sh.phone.lock:
        props = _props(sh.phone)
    if not args:
        io.say("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
    else:
        io.say((props.get(args[0]) or (args[1] if len(args) > 1 else "")) + "\n")
    return 0


def setprop(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    if len(args) != 2:
        io.complain("usage: setprop NAME VALUE\n\nSets an Android system property.\n")
        return 1
    name, value = args
    if name.startswith("ctl."):  # init's service control: of the services, the phone simulates the framework
        if value in ("zygote", "zygote_secondary") and name in ("ctl.restart", "ctl.start"):
            configure.restart_framework(sh.phone)
        return 0
    problem = _property_name_problem(name)
    if problem:
        io.complain(f"setprop: {problem}\n")
        return 1
    raw = value.encode("utf-8", "surrogateescape")
    with sh.phone.lock:
        props = sh.phone.props
        used = sum(len(k) + len(v) + PROP_INFO_BYTES for k, v in props.items() if k != name)
        # What init refuses, as __system_property_set reports it (a bare failure): a name or value longer than its
        # socket message, an ro. property already set, a value past PROP_VALUE_MAX (ro. ones excepted), a value
        # that is not UTF-8, and a property that the full property area has no room for.
        refused = (len(name.encode()) > PROP_MSG_MAX or len(raw) > PROP_MSG_MAX
                   or (name.startswith("ro.") and name in _props(sh.phone))
                   or (len(raw) > PROP_VALUE_MAX and not name.startswith("ro."))
                   or raw.decode("utf-8", "replace").encode("utf-8") != raw
                   or used + len(name.encode()) + len(raw) + PROP_INFO_BYTES > PROP_AREA_BYTES
                   or (name not in props and len(props) >= MAX_SET_PROPS))
        if not refused:
            props[name] = value
    if refused:
        io.complain(f"setprop: failed to set property '{name}' to '{value}'\n")
        return 1
    return 0


def stop(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``stop`` (the framework): the simulated phone keeps showing its screen until ``start`` restarts it."""
    return 0


def start(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    if not args or set(args) & {"zygote", "zygote_secondary"}:
        configure.restart_framework(sh.phone)
    return 0


def date(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``date``, ``date +FORMAT`` and, as root, ``date MMDDhhmm[[CC]YY][.ss]`` (the virtual clock)."""
    operands = [a for a in args if a != "-u"]  # the simulated phone's clock has no time zone: it is local
    with sh.phone.lock:
        now = sh.phone.device.now()
    if operands and not operands[0].startswith("+"):
        m = re.fullmatch(r"(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?(\d\d)?(?:\.(\d\d))?", operands[0])
        if m is None or len(operands) > 1:
            io.complain(f"date: bad date '{operands[0]}'\n")
            return 1
        month, day, hour, minute, cc, yy, sec = m.groups()
        year = now.year
        if yy is not None:
            year = int(cc + yy)
        elif cc is not None:
            year = 2000 + int(cc) if int(cc) < 69 else 1900 + int(cc)
        try:
            now = datetime(year, int(month), int(day), int(hour), int(minute), int(sec or 0))
        except ValueError:
            io.complain(f"date: bad date '{operands[0]}'\n")
            return 1
        configure.set_time(sh.phone, now)
        operands = []
    fmt = operands[0][1:] if operands else "%a %b %e %H:%M:%S GMT %Y"
    seconds = str(int((now - EPOCH).total_seconds()))
    io.say(now.strftime(fmt.replace("%s", seconds)) + "\n")
    return 0


def settings(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    args = without_user(args)
    if not args or args[0] in ("help", "-h"):
        io.say(_SETTINGS_USAGE)
        return 0
    verb, rest = args[0], args[1:]
    need = {"get": 2, "put": 3, "delete": 2, "list": 1}.get(verb)
    if need is None or len(rest) < need:
        io.complain(("Invalid command: " + verb if need is None else "Invalid arguments") + "\n"
                    + _SETTINGS_USAGE)
        return 255
    namespace = rest[0].lower()
    if namespace not in ("system", "secure", "global"):
        io.complain(f"Invalid namespace '{rest[0]}'\n{_SETTINGS_USAGE}")
        return 255
    if verb == "get":
        value = configure.get_setting(sh.phone, namespace, rest[1])
        io.say(("null" if value is None else value) + "\n")
    elif verb == "put":
        configure.put_setting(sh.phone, namespace, rest[1], rest[2])
    elif verb == "delete":
        io.say(f"Deleted {configure.delete_setting(sh.phone, namespace, rest[1])} rows\n")
    else:
        io.say("".join(f"{k}={v}\n" for k, v in configure.list_settings(sh.phone, namespace).items()))
    return 0


def cmd(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    known = {"activity": am, "package": pm, "settings": settings, "uimode": None, "window": wm}
    if not args:
        io.complain("cmd: No service specified; use -l to list all known\n")
        return 20
    if args[0] == "-l":
        io.say("Currently running services:\n" + "".join(f"  {name}\n" for name in SERVICES))
        return 0
    if args[0] not in SERVICES:
        io.complain(f"cmd: Can't find service: {args[0]}\n")
        return 20
    if args[0] not in known:  # deviation: the service exists on a device; the simulated phone runs few commands
        io.complain(f"cmd: the simulated phone answers cmd {', '.join(sorted(known))}, not {args[0]}\n")
        return 255
    if args[0] != "uimode":
        return known[args[0]](sh, s, io, args[1:])
    if args[1:2] != ["night"] or len(args) > 3:
        io.complain("Error: the simulated phone's uimode knows: night [yes|no]\n")
        return 255
    if len(args) == 3:
        if args[2] not in ("yes", "no", "auto"):
            io.complain("Error: mode must be 'yes', 'no', or 'auto'\n")
            return 255
        configure.set_night_mode(sh.phone, args[2])
    io.say(f"Night mode: {configure.night_mode(sh.phone)}\n")
    return 0


def svc(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``svc wifi enable|disable``: Wi-Fi through WifiManager, as the shell's package (Android 10's svc has no
    Bluetooth command; ``service call bluetooth_manager`` is how a shell reaches it there)."""
    if len(args) != 2 or args[0] != "wifi" or args[1] not in ("enable", "disable"):
        io.say("Control the Wi-Fi manager\n\nusage: svc wifi [enable|disable]\n"
               "         Turn Wi-Fi on or off.\n\n")
        return 0 if args[:1] in ([], ["help"], ["wifi"]) else 1
    with sh.phone.lock:
        services.set_wifi(sh.phone.device, args[1] == "enable", caller=(services.SHELL_CALLER[0], 0))
        sh.phone.device.state_changed()
    return 0


def service(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``service call bluetooth_manager 6|8``: IBluetoothManager's enable() and disable() (Android 10's
    transaction numbers), which is how a shell switches Bluetooth before Android 12's ``svc bluetooth``.
    ``service list`` and ``service check`` name the services the simulated phone has."""
    names = SERVICES
    if args[:1] == ["list"]:
        io.say(f"Found {len(names)} services:\n" + "".join(f"{i}\t{n}: []\n" for i, n in enumerate(names)))
        return 0
    if args[:1] == ["check"] and len(args) == 2:
        io.say(f"Service {args[1]}: {'found' if args[1] in names else 'not found'}\n")
        return 0
    if args[:2] == ["call", "bluetooth_manager"] and len(args) == 3 and args[2] in ("6", "8"):
        with sh.phone.lock:
            services.set_bluetooth(sh.phone.device, args[2] == "6", package=None)
            sh.phone.device.state_changed()
        io.say("Result: Parcel(00000000 00000001   '........')\n")
        return 0
    if args[:1] == ["call"] and len(args) >= 3:
        io.complain(f"service: the simulated phone answers no call {' '.join(args[1:3])} (it knows "
                    "bluetooth_manager 6 and 8: enable and disable)\n")
        return 255
    io.say("Usage: service [-h|-?]\n       service list\n       service check SERVICE\n"
           "       service call SERVICE CODE [i32 N | i64 N | f N | d N | s16 STR ] ...\n")
    return 0 if args[:1] in ([], ["-h"], ["-?"]) else 1


def media(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``media volume [--show] [--stream N] [--set INDEX|--adj raise|same|lower] [--get]``: AudioService's
    stream volumes, printed as Android 10's VolumeCtrl prints them."""
    if args[:1] != ["volume"]:
        io.say("usage: media volume [--show] [--stream STREAM] [--set INDEX | --adj DIRECTION] [--get]\n")
        return 0 if not args else 1
    stream, index, adjust, get = 3, None, None, False
    rest = list(args[1:])
    out = []
    try:
        while rest:
            option = rest.pop(0)
            if option == "--show":
                continue
            if option == "--get":
                get = True
                out.append("will get volume")
            elif option == "--stream":
                stream = int(rest.pop(0), 0)
                name = services.AUDIO_STREAMS.get(stream, (None, "invalid stream"))[1]
                out.append(f"will control stream={stream} ({name})")
            elif option == "--set":
                index = int(rest.pop(0), 0)
                out.append(f"will set volume to index={index}")
            elif option == "--adj":
                adjust = rest.pop(0)
                out.append("will adjust volume")
            else:
                io.say("".join(f"[V] {line}\n" for line in out))
                io.complain(f"Error: Unknown argument {option}\n")
                return 1
    except (IndexError, ValueError):
        io.complain("Error: an option of media volume lacks its (integer) value\n")
        return 1
    io.say("".join(f"[V] {line}\n" for line in out) + "[V] Connecting to AudioService\n")
    if adjust is not None and adjust not in ("raise", "same", "lower"):
        io.complain(f"Error: no valid volume adjustment, was {adjust}, expected lower|same|raise\n")
        return 1
    if stream not in services.AUDIO_STREAMS:  # deviation: a device has streams 0-10; the phone models four
        io.complain(f"Error: the simulated phone models streams {sorted(services.AUDIO_STREAMS)}, not {stream}\n")
        return 1
    key = services.AUDIO_STREAMS[stream][0]
    lo, hi = VOLUME_MIN[key], VOLUME_MAX[key]
    with sh.phone.lock:
        dev = sh.phone.device
        if index is not None:
            if not lo <= index <= hi:
                io.complain(f"Error: invalid volume index {index} for stream {stream} (should be in "
                            f"[{lo}..{hi}])\n")
                return 1
            services.set_volume(dev, key, index)
        elif adjust is not None:
            step = {"raise": 1, "same": 0, "lower": -1}[adjust]
            services.set_volume(dev, key, min(hi, max(lo, dev.state.volume[key] + step)))
        dev.state_changed()
        if get:
            io.say(f"[V] volume is {dev.state.volume[key]} in range [{lo}..{hi}]\n")
    return 0


def df(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``df [-h] [-k] [PATH...]``: an emulator's mounts. /data (and the shared storage on it) is the phone's
    storage: its size is the served phone's budget, its use what the phone's files hold."""
    opts, operands = getopt(args, "hHkPat", "")
    human = any(k in "hH" for k, _ in opts)
    with sh.phone.lock:
        files = sh.phone.files
        data = (files.budget >> 10, files.used >> 10)
    ram = (2_035_480, 0)
    mounts = [("/dev/root", "/", (2_027_408, 1_655_124)), ("tmpfs", "/dev", (ram[0], 484)),
              ("tmpfs", "/mnt", ram), ("tmpfs", "/apex", ram), ("/dev/block/vde1", "/vendor", (99_150, 77_280)),
              ("/dev/block/vdc", "/data", data), ("/data/media", "/storage/emulated", data)]
    if operands:
        wanted = []
        for arg in operands:
            path = sh.path(s, arg)
            if path == SDCARD or path.startswith(SDCARD + "/"):  # the shared storage is mounted there
                path = "/storage/emulated/0" + path[len(SDCARD):]
            elif not sh.exists(path) and path not in ("/", "/dev", "/mnt", "/apex", "/vendor"):
                io.complain(f"df: {arg}: No such file or directory\n")
                return 1
            wanted.append(max((m for m in mounts if path == m[1] or path.startswith(m[1].rstrip("/") + "/")),
                              key=lambda m: len(m[1])))
        mounts = wanted

    def size(kib: int) -> str:
        if not human:
            return str(kib)
        value, units = float(kib), "KMGT"
        while value >= 1024 and len(units) > 1:
            value, units = value / 1024, units[1:]
        return (f"{value:.1f}" if value < 10 and units[0] != "K" else f"{value:.0f}") + units[0]

    rows = [("Filesystem", "Size" if human else "1K-blocks", "Used", "Avail" if human else "Available",
             "Use%", "Mounted on")]
    for fs, mount, (total, used) in mounts:
        rows.append((fs, size(total), size(used), size(total - used), f"{-(-100 * used // total) if total else 0}%",
                     mount))
    io.say("".join(f"{r[0]:<16} {r[1]:>9} {r[2]:>7} {r[3]:>9} {r[4]:>4} {r[5]}\n" for r in rows))
    return 0


def env(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``env [-i] [NAME=VALUE]... [COMMAND [ARG]...]``: the environment, or COMMAND run with it changed."""
    env = dict(s.env)
    rest = list(args)
    if rest[:1] in (["-i"], ["-"]):
        env = {}
        rest = rest[1:]
    while rest and "=" in rest[0] and not rest[0].startswith("="):
        name, _, value = rest.pop(0).partition("=")
        env[name] = value
    if not rest:
        io.say("".join(f"{k}={v}\n" for k, v in env.items()) + "_=/system/bin/env\n")
        return 0
    saved, s.env = s.env, env
    try:
        return sh.call(s, io, rest)
    finally:
        s.env = saved


def content(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``content query --uri URI [--projection COL[:COL]] [--where WHERE] [--sort SORT]``: the rows of one of the
    simulated phone's providers (:data:`vlui.served.providers.TABLES`: the settings, the calendar's events, the
    contacts), printed as Android 10's ``content`` prints a cursor. The deviations (fewer columns, a where clause of
    simple comparisons) are :mod:`vlui.served.providers`'."""
    if not args or args[0] != "query":
        io.say(_CONTENT_USAGE)
        return 0 if not args or args[0] in ("help", "-h") else 1
    options: dict[str, str] = {}
    rest = without_user(args[1:])
    while rest:
        option = rest.pop(0)
        if option not in ("--uri", "--projection", "--where", "--sort", "--arg") or not rest:
            io.complain(f"Error: Unknown argument: {option}\n{_CONTENT_USAGE}")
            return 1
        options[option] = rest.pop(0)
    uri = options.get("--uri")
    if uri is None:
        io.complain(f"Error: Content provider URI not specified\n{_CONTENT_USAGE}")
        return 1
    try:
        columns, rows = providers.query(sh.phone, uri, options.get("--projection"), options.get("--where"),
                                        options.get("--sort"))
    except providers.ProviderError as e:
        authority = re.match(r"(?:content://)?([^/]*)", uri).group(1)
        io.complain(f"Error while accessing provider:{authority}\n{e}\n")
        return 1
    if not rows:
        io.say("No result found.\n")
        return 0
    io.say("".join(f"Row: {n} " + ", ".join(f"{c}={'NULL' if v is None else v}" for c, v in zip(columns, row,
                                                                                                strict=True)) + "\n"
                   for n, row in enumerate(rows)))
    return 0


COMMANDS: dict[str, Command] = {
    "getprop": getprop, "setprop": setprop, "start": start, "stop": stop, "date": date, "settings": settings,
    "cmd": cmd, "svc": svc, "service": service, "media": media, "df": df, "env": env, "content": content,
}
