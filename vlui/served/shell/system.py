"""System services and properties: ``getprop``/``setprop``, ``start``/``stop``, ``date``, ``settings``, ``cmd``,
``svc``, ``service`` and ``media``."""

from __future__ import annotations

import re
from datetime import datetime

from vlui.android.apps import LAUNCHER_PKG
from vlui.android.logcat import EPOCH
from vlui.android.state import VOLUME_MAX, VOLUME_MIN
from vlui.served import configure
from vlui.served.phone import ServedPhone
from vlui.served.shell.context import _Io, _Session
from vlui.sim import services

PROP_VALUE_MAX = 91  # bytes of a property's value (bionic's PROP_VALUE_MAX, less its NUL); ro. ones may be longer


MAX_SET_PROPS = 1024  # properties a client may add: the property area of a device is a few hundred KiB


SYSTEM_PACKAGES = ("android", "com.android.phone", "com.android.providers.settings", "com.android.shell",
                   "com.android.systemui", "com.google.android.inputmethod.latin", LAUNCHER_PKG)


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


def _without_user(args: list[str]) -> list[str]:
    """``args`` without ``--user N`` (the simulated phone has one user)."""
    out = list(args)
    while "--user" in out:
        i = out.index("--user")
        del out[i:i + 2]
    return out


class SystemCommands:
    """The system commands of :class:`~vlui.served.shell.runner.Shell` (a mixin: ``self`` is the shell)."""

    phone: ServedPhone

    # ---------------------------------------------------------------------------------------------- system
    def _getprop(self, s: _Session, io: _Io, args: list[str]) -> int:
        with self.phone.lock:
            props = self.phone.all_props()
        if not args:
            io.say("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
        else:
            io.say((props.get(args[0]) or (args[1] if len(args) > 1 else "")) + "\n")
        return 0

    def _setprop(self, s: _Session, io: _Io, args: list[str]) -> int:
        if len(args) != 2:
            io.complain("usage: setprop NAME VALUE\n\nSets an Android system property.\n")
            return 1
        name, value = args
        if name.startswith("ctl."):  # init's service control: of the services, the phone simulates the framework
            if value in ("zygote", "zygote_secondary") and name in ("ctl.restart", "ctl.start"):
                configure.restart_framework(self.phone)
            return 0
        with self.phone.lock:
            refused = ((name.startswith("ro.") and name in self.phone.all_props())  # ro. properties are set once
                       or (len(value.encode()) > PROP_VALUE_MAX and not name.startswith("ro."))
                       or (name not in self.phone.props and len(self.phone.props) >= MAX_SET_PROPS))
            if not refused:
                self.phone.props[name] = value
        if refused:
            io.complain(f"setprop: failed to set property '{name}' to '{value}'\n")
            return 1
        return 0

    def _stop(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``stop`` (the framework): the simulated phone keeps showing its screen until ``start`` restarts it."""
        return 0

    def _start(self, s: _Session, io: _Io, args: list[str]) -> int:
        if not args or set(args) & {"zygote", "zygote_secondary"}:
            configure.restart_framework(self.phone)
        return 0

    def _date(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``date``, ``date +FORMAT`` and, as root, ``date MMDDhhmm[[CC]YY][.ss]`` (the virtual clock)."""
        operands = [a for a in args if a != "-u"]  # the simulated phone's clock has no time zone: it is local
        with self.phone.lock:
            now = self.phone.device.now()
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
            configure.set_time(self.phone, now)
            operands = []
        fmt = operands[0][1:] if operands else "%a %b %e %H:%M:%S GMT %Y"
        seconds = str(int((now - EPOCH).total_seconds()))
        io.say(now.strftime(fmt.replace("%s", seconds)) + "\n")
        return 0

    def _settings(self, s: _Session, io: _Io, args: list[str]) -> int:
        args = _without_user(args)
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
            value = configure.get_setting(self.phone, namespace, rest[1])
            io.say(("null" if value is None else value) + "\n")
        elif verb == "put":
            configure.put_setting(self.phone, namespace, rest[1], rest[2])
        elif verb == "delete":
            io.say(f"Deleted {configure.delete_setting(self.phone, namespace, rest[1])} rows\n")
        else:
            io.say("".join(f"{k}={v}\n" for k, v in configure.list_settings(self.phone, namespace).items()))
        return 0

    def _cmd(self, s: _Session, io: _Io, args: list[str]) -> int:
        known = {"activity": self._am, "package": self._pm, "settings": self._settings, "uimode": None,
                 "window": self._wm}
        if not args:
            io.complain("cmd: No service specified; use -l to list all known\n")
            return 20
        if args[0] == "-l":
            io.say("Currently running known:\n" + "".join(f"  {name}\n" for name in sorted(known)))
            return 0
        if args[0] not in known:
            io.complain(f"cmd: Can't find service: {args[0]}\n")
            return 20
        if args[0] != "uimode":
            return known[args[0]](s, io, args[1:])
        if args[1:2] != ["night"] or len(args) > 3:
            io.complain("Error: the simulated phone's uimode knows: night [yes|no]\n")
            return 255
        if len(args) == 3:
            if args[2] not in ("yes", "no", "auto"):
                io.complain("Error: mode must be 'yes', 'no', or 'auto'\n")
                return 255
            configure.set_night_mode(self.phone, args[2])
        io.say(f"Night mode: {configure.night_mode(self.phone)}\n")
        return 0

    def _svc(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``svc wifi enable|disable``: Wi-Fi through WifiManager, as the shell's package (Android 10's svc has no
        Bluetooth command; ``service call bluetooth_manager`` is how a shell reaches it there)."""
        if len(args) != 2 or args[0] != "wifi" or args[1] not in ("enable", "disable"):
            io.say("Control the Wi-Fi manager\n\nusage: svc wifi [enable|disable]\n"
                   "         Turn Wi-Fi on or off.\n\n")
            return 0 if args[:1] in ([], ["help"], ["wifi"]) else 1
        with self.phone.lock:
            services.set_wifi(self.phone.device, args[1] == "enable", caller=(services.SHELL_CALLER[0], 0))
            self.phone.device._invalidate()
        return 0

    def _service(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``service call bluetooth_manager 6|8``: IBluetoothManager's enable() and disable() (Android 10's
        transaction numbers), which is how a shell switches Bluetooth before Android 12's ``svc bluetooth``.
        ``service list`` and ``service check`` name the services the simulated phone has."""
        names = ("activity", "audio", "bluetooth_manager", "connectivity", "display", "package", "settings",
                 "telecom", "uimode", "wifi", "window")
        if args[:1] == ["list"]:
            io.say(f"Found {len(names)} services:\n" + "".join(f"{i}\t{n}: []\n" for i, n in enumerate(names)))
            return 0
        if args[:1] == ["check"] and len(args) == 2:
            io.say(f"Service {args[1]}: {'found' if args[1] in names else 'not found'}\n")
            return 0
        if args[:2] == ["call", "bluetooth_manager"] and len(args) == 3 and args[2] in ("6", "8"):
            with self.phone.lock:
                services.set_bluetooth(self.phone.device, args[2] == "6", package=None)
                self.phone.device._invalidate()
            io.say("Result: Parcel(00000000 00000001   '........')\n")
            return 0
        if args[:1] == ["call"] and len(args) >= 3:
            io.complain(f"service: the simulated phone answers no call {' '.join(args[1:3])} (it knows "
                        "bluetooth_manager 6 and 8: enable and disable)\n")
            return 255
        io.say("Usage: service [-h|-?]\n       service list\n       service check SERVICE\n"
               "       service call SERVICE CODE [i32 N | i64 N | f N | d N | s16 STR ] ...\n")
        return 0 if args[:1] in ([], ["-h"], ["-?"]) else 1

    def _media(self, s: _Session, io: _Io, args: list[str]) -> int:
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
        with self.phone.lock:
            dev = self.phone.device
            if index is not None:
                if not lo <= index <= hi:
                    io.complain(f"Error: invalid volume index {index} for stream {stream} (should be in "
                                f"[{lo}..{hi}])\n")
                    return 1
                services.set_volume(dev, key, index)
            elif adjust is not None:
                step = {"raise": 1, "same": 0, "lower": -1}[adjust]
                services.set_volume(dev, key, min(hi, max(lo, dev.state.volume[key] + step)))
            dev._invalidate()
            if get:
                io.say(f"[V] volume is {dev.state.volume[key]} in range [{lo}..{hi}]\n")
        return 0
