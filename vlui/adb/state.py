"""A task's starting state and state check on a device over ADB, through the commands an Android 10 shell has.

=====================  ==================================================  ======================================
field                  set with                                            read back with
=====================  ==================================================  ======================================
``airplane_mode``      ``settings put global airplane_mode_on`` and the    ``settings get global airplane_mode_on``
                       ``AIRPLANE_MODE`` broadcast (root)
``wifi``               ``svc wifi enable|disable``                         ``settings get global wifi_on``
``bluetooth``          ``svc bluetooth`` (Android 12+), else ``service     ``settings get global bluetooth_on``
                       call bluetooth_manager 6|8``
``volume``             ``media volume --stream N --set I``                 ``media volume --stream N --get``
``brightness``         ``settings put system screen_brightness``           ``settings get system screen_brightness``
``adaptive_brightness``  ``settings put system screen_brightness_mode``    the same setting
``dark_theme``         ``cmd uimode night yes|no``                         ``cmd uimode night``
``vibrate_for_calls``  ``settings put system vibrate_when_ringing``        the same setting
``phone.call``         ``am start -a android.intent.action.CALL -d tel:N`` (not read)
``installed``          (never: vlui installs no app)                       ``pm list packages``
``alarms``             (never)                                             Clock's ``alarms.db``, copied as root
``<app>.shared_prefs`` (never)                                             the app's preferences file, copied as
                                                                           root
=====================  ==================================================  ======================================

The apps' own files (Clock's alarms database, an app's shared preferences: :mod:`vlui.android.app_data`) are the
app's, readable by root alone. They are read as B-MoCA's evaluators read them (:func:`read_app_file`): copied as root
(``su 0 cp``) to the shared storage, where the shell user may read, pulled through adb's sync protocol byte for
byte, and removed. A device without root refuses the task in one line that says so.

``brightness_percent`` reads the brightness as Settings shows it (:func:`vlui.android.state.brightness_percent`).
An app's own state is named by path, as :func:`vlui.android.state.state_paths` spreads a task's state
(``{"phone": {"call": ...}}`` is ``phone.call``). Everything else a task's state may hold is state inside an app
(Clock's ``clock.tab``, ``clock.stopwatch``, ``clock.alarms``): a shell cannot set it, so :func:`set_state` refuses it
by name, and the task's emulator snapshot has to hold it.
Every value set is read back, waiting for the radios, so a device that ignored a command is an error at reset,
not a task that silently starts from the wrong state.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from vlui.adb.errors import DeviceError
from vlui.android.app_data import ALARMS_DB, alarm_columns, prefs_path
from vlui.android.apps import apps
from vlui.android.state import brightness_percent, state_paths
from vlui.device import PinnedApp, state_meets
from vlui.errors import VluiError


class AdbDevice(Protocol):
    """What reading and setting state needs of :class:`vlui.adb.device.AdbDevice`: its serial (for messages), its
    SDK level and a shell."""

    serial: str

    @property
    def sdk(self) -> int: ...

    def shell(self, command: str, timeout_s: float | None = None) -> str: ...

    def shell_out(self, command: str, timeout: float | None = None) -> tuple[str, int]: ...

    def pull_bytes(self, remote: str) -> bytes: ...

STREAMS = {"call": 0, "ring": 2, "media": 3, "alarm": 4}  # AudioManager.STREAM_*
RADIO_WAIT_S = 10.0  # how long a radio may take to report the state it was switched to
_VOLUME = re.compile(r"volume is (\d+) in range \[(\d+)\.\.(\d+)\]", re.IGNORECASE)


def _int_setting(dev: AdbDevice, namespace: str, key: str, unset: int | None = None) -> int:
    """An integer setting; ``unset`` where the device has none (``null``), else that is an error."""
    value = dev.shell(f"settings get {namespace} {key}").strip()
    if value in ("null", "") and unset is not None:
        return unset
    if not value.lstrip("-").isdigit():
        raise DeviceError(f"device {dev.serial}: settings get {namespace} {key} printed {value!r}")
    return int(value)


def _flag(dev: AdbDevice, namespace: str, key: str) -> bool:
    return _int_setting(dev, namespace, key, unset=0) != 0


def _volume(dev: AdbDevice, stream: str) -> int:
    out = dev.shell(f"media volume --stream {STREAMS[stream]} --get")
    m = _VOLUME.search(out)
    if m is None:
        raise DeviceError(f"device {dev.serial}: cannot read the {stream} volume ({out.strip()[-200:]!r})")
    return int(m.group(1))


def _night(dev: AdbDevice) -> bool:
    out = dev.shell("cmd uimode night").strip()
    if not out.startswith("Night mode:"):
        raise DeviceError(f"device {dev.serial}: cannot read the night mode ({out[-200:]!r})")
    return out.split(":", 1)[1].strip() == "yes"


# state_check paths -> how to read them from the device
READERS: dict[str, Callable[[AdbDevice], Any]] = {
    "airplane_mode": lambda d: _flag(d, "global", "airplane_mode_on"),
    # Wi-Fi's switch: 1 on, 2 on but held off by airplane mode, 3 kept on in airplane mode, 0 off
    "wifi": lambda d: _flag(d, "global", "wifi_on"),
    "bluetooth": lambda d: _flag(d, "global", "bluetooth_on"),
    "brightness": lambda d: _int_setting(d, "system", "screen_brightness"),
    "brightness_percent": lambda d: brightness_percent(_int_setting(d, "system", "screen_brightness")),
    "adaptive_brightness": lambda d: _flag(d, "system", "screen_brightness_mode"),
    "dark_theme": _night,
    "vibrate_for_calls": lambda d: _flag(d, "system", "vibrate_when_ringing"),
    **{f"volume.{stream}": (lambda d, s=stream: _volume(d, s)) for stream in STREAMS},
    "sms_sent": lambda d: _sms_sent(d),
    "alarms": lambda d: _alarms(d),
}
PREFS_SUFFIX = ".shared_prefs"  # what a check that reads an app's shared preferences is named (``snapseed.shared_prefs``)


def can_read(name: str) -> bool:
    """Whether the ADB backend reads what a task's check names ``name`` (a path of :data:`READERS`, or
    ``<app>.shared_prefs`` for an app vlui knows)."""
    if name.endswith(PREFS_SUFFIX):
        return name[:-len(PREFS_SUFFIX)] in apps()
    return name in READERS


# where the files an app keeps to itself are copied to be pulled: the shared storage, which the shell user reads
PULL_DIR = "/sdcard"


def read_app_file(dev: AdbDevice, path: str, what: str) -> bytes | None:
    """The bytes of ``path``, a file an app keeps to itself (``what`` names it in messages), or None where the app
    has not written it: copied as root to :data:`PULL_DIR`, pulled, then removed, as B-MoCA's evaluators read them.
    ``su 0`` runs the copy where adbd is not root (a Google APIs emulator has ``su``; ``adb root`` is not needed);
    a device whose shell is root already and has no ``su`` copies it itself. A device without root is an error
    that says what needs it."""
    copy = f"{PULL_DIR}/.vlui-{posixpath.basename(path)}"
    command = f"cp {shlex.quote(path)} {shlex.quote(copy)}"
    out, status = dev.shell_out(f"su 0 {command}")
    if status == 127 and dev.shell("id -u").strip() == "0":  # no su, but adbd runs as root
        out, status = dev.shell_out(command)
    if status != 0:
        if f"{path}: No such file or directory" in out and "su:" not in out:
            return None
        raise DeviceError(f"device {dev.serial}: reading {what} ({path}) needs root: `su 0 cp` printed "
                          f"{out.strip()[-200:]!r}; run the task on an emulator with a Google APIs image (which has "
                          "su), or leave it out")
    try:
        return dev.pull_bytes(copy)
    finally:
        dev.shell(f"rm -f {shlex.quote(copy)}")


def _alarms(dev: AdbDevice) -> list[dict[str, int]]:
    """Clock's alarms as its database holds them (``alarm_templates``): none where Clock has no database yet."""
    data = read_app_file(dev, ALARMS_DB, "Clock's alarms")
    try:
        return alarm_columns(data) if data is not None else []
    except ValueError as err:
        raise DeviceError(f"device {dev.serial}: {ALARMS_DB}: {err}") from None


def shared_prefs(dev: AdbDevice, app: str, file: str) -> str | None:
    """The text of app ``app``'s shared-preferences ``file`` (see :meth:`vlui.device.Device.shared_prefs`)."""
    if app not in apps():
        raise VluiError(f"unknown app {app!r}; apps: {', '.join(apps())}")
    data = read_app_file(dev, prefs_path(apps()[app].package, file), f"the {app} app's shared preferences")
    return None if data is None else data.decode("utf-8", "replace")


_SMS_ROW = re.compile(r"^Row: \d+ address=(.*?), body=(.*)$")


def _sms_sent(dev: AdbDevice) -> list[dict[str, str]]:
    """The texts the phone sent (``content://sms/sent``): each row's address and body. A body that spans lines is
    joined back (``content`` prints a value as it is)."""
    out = dev.shell("content query --uri content://sms/sent --projection address:body")
    if "Permission Denial" in out or "SecurityException" in out:
        raise DeviceError(f"device {dev.serial}: reading the sent texts needs root: run `adb -s {dev.serial} root` "
                          "first (an emulator with a Google APIs image allows it)")
    rows: list[dict[str, str]] = []
    for line in out.splitlines():
        m = _SMS_ROW.match(line)
        if m:
            rows.append({"address": m.group(1), "body": m.group(2)})
        elif rows and line and not line.startswith("No result found"):
            rows[-1]["body"] += "\n" + line
    return rows


def _checked(dev: AdbDevice, command: str, ok: Callable[[str], bool], what: str) -> str:
    out = dev.shell(command)
    if "Permission Denial" in out or "SecurityException" in out:
        raise DeviceError(f"device {dev.serial}: {what} needs root: run `adb -s {dev.serial} root` first (an "
                          "emulator with a Google APIs image allows it), or start the task from a snapshot that "
                          "has this state")
    if not ok(out):
        raise DeviceError(f"device {dev.serial}: {what} failed: {command!r} printed {out.strip()[-200:]!r}")
    return out


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise DeviceError(f"a task's starting state: {name} must be true or false, not {value!r}")
    return value


def _set_airplane(dev: AdbDevice, on: Any) -> None:
    on = _bool("airplane_mode", on)
    dev.shell(f"settings put global airplane_mode_on {int(on)}")
    _checked(dev, f"am broadcast -a android.intent.action.AIRPLANE_MODE --ez state {str(on).lower()}",
             lambda out: "Broadcast completed" in out, "switching airplane mode")


def _set_wifi(dev: AdbDevice, on: Any) -> None:
    _checked(dev, f"svc wifi {'enable' if _bool('wifi', on) else 'disable'}", lambda out: "usage" not in out.lower(),
             "switching Wi-Fi")


def _set_bluetooth(dev: AdbDevice, on: Any) -> None:
    on = _bool("bluetooth", on)
    if dev.sdk >= 31:  # Android 12 gave svc a Bluetooth command
        _checked(dev, f"svc bluetooth {'enable' if on else 'disable'}", lambda out: "usage" not in out.lower(),
                 "switching Bluetooth")
    else:  # IBluetoothManager.enable() and disable() (transactions 6 and 8 on Android 10 and 11)
        _checked(dev, f"service call bluetooth_manager {6 if on else 8}", lambda out: out.startswith("Result: Parcel"),
                 "switching Bluetooth")


def _set_volume(dev: AdbDevice, levels: Any) -> None:
    if not isinstance(levels, dict) or not set(levels) <= set(STREAMS):
        raise DeviceError(f"a task's starting state: volume must map streams ({', '.join(STREAMS)}) to levels, "
                          f"not {levels!r}")
    for stream, level in levels.items():
        if isinstance(level, bool) or not isinstance(level, int):
            raise DeviceError(f"a task's starting state: the {stream} volume must be an integer, not {level!r}")
        _checked(dev, f"media volume --stream {STREAMS[stream]} --set {level}",
                 lambda out: "error" not in out.lower(), f"setting the {stream} volume to {level}")


def _set_int_setting(namespace: str, key: str, name: str) -> Callable[[AdbDevice, Any], None]:
    def apply(dev: AdbDevice, value: Any) -> None:
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int):
            raise DeviceError(f"a task's starting state: {name} must be an integer, not {value!r}")
        dev.shell(f"settings put {namespace} {key} {value}")

    return apply


def _set_dark_theme(dev: AdbDevice, on: Any) -> None:
    _checked(dev, f"cmd uimode night {'yes' if _bool('dark_theme', on) else 'no'}",
             lambda out: out.startswith("Night mode:"), "switching the dark theme")


def _place_call(dev: AdbDevice, call: Any) -> None:
    number = str(call.get("number", "")) if isinstance(call, dict) else ""
    if not re.fullmatch(r"\+?[0-9*#]+", number):
        raise DeviceError(f"a task's starting state: phone.call must give a phone number, not {call!r}")
    _checked(dev, f"am start -a android.intent.action.CALL -d {shlex.quote('tel:' + number)}",
             lambda out: "Error" not in out, f"calling {number}")


# field -> how to set it, in the order they are applied (airplane mode first: it switches the radios)
SETTERS: dict[str, Callable[[AdbDevice, Any], None]] = {
    "airplane_mode": _set_airplane,
    "wifi": _set_wifi,
    "bluetooth": _set_bluetooth,
    "volume": _set_volume,
    "brightness": _set_int_setting("system", "screen_brightness", "brightness"),
    "adaptive_brightness": _set_int_setting("system", "screen_brightness_mode", "adaptive_brightness"),
    "dark_theme": _set_dark_theme,
    "vibrate_for_calls": _set_int_setting("system", "vibrate_when_ringing", "vibrate_for_calls"),
    "phone.call": _place_call,
}


def set_state(dev: AdbDevice, fields: dict[str, Any]) -> None:
    """Put the device in a task's starting state, then read back what was set."""
    fields = state_paths(fields)
    unknown = [name for name in fields if name not in SETTERS]
    if unknown:
        raise DeviceError(f"device {dev.serial}: the ADB backend cannot set {', '.join(unknown)} (state inside an "
                          "app, which no shell command reaches); start the task from an emulator snapshot that "
                          f"holds it, or run it on the simulated phone (env=sim). It can set: {', '.join(SETTERS)}")
    for name, apply in SETTERS.items():
        if name in fields:
            apply(dev, fields[name])
    expect = {name: value for name, value in fields.items() if name in READERS}
    expect.update({f"volume.{stream}": level for stream, level in fields.get("volume", {}).items()})
    _wait_for(dev, expect)


def _wait_for(dev: AdbDevice, expect: dict[str, Any]) -> None:
    """Read ``expect`` back until it holds (radios switch asynchronously on a device) or :data:`RADIO_WAIT_S`."""
    deadline = time.monotonic() + RADIO_WAIT_S
    while True:
        have = {path: READERS[path](dev) for path in expect}
        wrong = {path: (have[path], want) for path, want in expect.items() if have[path] != want}
        if not wrong:
            return
        if time.monotonic() > deadline:
            detail = ", ".join(f"{path} is {got!r}, not {want!r}" for path, (got, want) in wrong.items())
            raise DeviceError(f"device {dev.serial}: the task's starting state did not take: {detail}")
        time.sleep(0.2)


def require_installed(dev: AdbDevice, pinned: Sequence[PinnedApp]) -> None:
    """That the device has the apps ``pinned`` installed (``pm list packages``): a real phone brings its own, and
    vlui never downloads one. One line naming those it lacks, their packages and the versions pinned, otherwise."""
    listed = set(re.findall(r"^package:(\S+)", dev.shell("pm list packages"), re.MULTILINE))
    missing = [app for app in pinned if app.package not in listed]
    if missing:
        named = "; ".join(f"{app.name} ({app.package}, version {app.version})" for app in missing)
        raise VluiError(f"device {dev.serial} lacks {named}: B-MoCA's release tasks run on phones with these apps at "
                        "these versions; install them there with adb install (vlui downloads no app)")


def check_state(dev: AdbDevice, spec: dict[str, Any]) -> bool:
    """Whether the device meets a task's ``state_check`` (see :meth:`vlui.device.Device.check_state`)."""
    unknown = [path for path in spec if path not in READERS]
    if unknown:
        raise DeviceError(f"device {dev.serial}: the ADB backend cannot read {', '.join(unknown)}; it reads "
                          f"{', '.join(READERS)}")
    return state_meets(spec, lambda path: READERS[path](dev))
