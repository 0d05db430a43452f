"""Everything the simulated phone remembers between touches. Loading a snapshot is a copy of one of these.

Plain data only (numbers, strings, lists, dicts), so a copy is a cheap deep copy and two states compare equal
exactly when the phone would behave the same.
"""

from __future__ import annotations

import copy
import functools
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any

# Android 10 stream volume ranges (AudioService defaults on Pixel phones).
VOLUME_MAX = {"media": 25, "call": 7, "ring": 7, "alarm": 7}
VOLUME_MIN = {"media": 0, "call": 1, "ring": 0, "alarm": 1}

# Screen brightness: the setting (``system screen_brightness``) is linear, 10..255 by hand on a Pixel; the slider
# and Settings' "Brightness level" percent are in Android 10's gamma space (SettingsLib BrightnessUtils, 0..1023),
# so the slider's middle is a dim screen. "Percent" in vlui means what Settings shows.
BRIGHTNESS_MIN, BRIGHTNESS_MAX = 10, 255
GAMMA_SPACE_MAX = 1023
_R, _A, _B, _C = 0.5, 0.17883277, 0.28466892, 0.55991073  # the hybrid log-gamma curve's constants


def brightness_to_gamma(level: int) -> int:
    """The slider position (0..1023) of brightness ``level`` (the linear setting)."""
    x = 12 * (min(max(level, BRIGHTNESS_MIN), BRIGHTNESS_MAX) - BRIGHTNESS_MIN) / (BRIGHTNESS_MAX - BRIGHTNESS_MIN)
    g = _R * math.sqrt(x) if x <= 1 else _A * math.log(x - _B) + _C
    return round(g * GAMMA_SPACE_MAX)


def gamma_to_brightness(position: float) -> int:
    """The linear brightness a slider position (0..1023) sets."""
    g = min(max(position, 0), GAMMA_SPACE_MAX) / GAMMA_SPACE_MAX
    x = (g / _R) ** 2 if g <= _R else math.exp((g - _C) / _A) + _B
    return round(BRIGHTNESS_MIN + (BRIGHTNESS_MAX - BRIGHTNESS_MIN) * x / 12)


def brightness_percent(level: int) -> int:
    """What Settings shows as the brightness level, in percent."""
    return round(brightness_to_gamma(level) * 100 / GAMMA_SPACE_MAX)


@dataclass
class Alarm:
    id: int
    hour: int
    minute: int
    enabled: bool = False
    label: str = ""
    vibrate: bool = True


@dataclass
class DeviceState:
    time_ms: int  # the virtual clock: local time, ms since 1970-01-01; advanced by every input, never by sleeping
    # navigation: one task (a stack of screens) per app, the app in front (None = the launcher), most recent first
    tasks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    top: str | None = None
    recents: list[str] = field(default_factory=list)
    drawer: bool = False  # the launcher's app drawer is open
    overview: bool = False  # the recent-apps screen is showing
    running: list[str] = field(default_factory=list)  # app processes alive (a START of any other starts one)
    pids: dict[str, int] = field(default_factory=dict)
    next_pid: int = 4120
    scroll: dict[str, int] = field(default_factory=dict)  # scroll offset in px of each scrollable screen
    # settings
    airplane_mode: bool = False
    wifi: bool = True
    bluetooth: bool = False
    brightness: int = 255  # 0..255, manual; starts at full so that the brightness task is a decrease
    adaptive_brightness: bool = False
    dark_theme: bool = False
    volume: dict[str, int] = field(default_factory=lambda: {"media": 15, "call": 4, "ring": 5, "alarm": 5})
    vibrate_for_calls: bool = False
    muted: list[str] = field(default_factory=list)  # streams muted (VOLUME_MUTE); their level is kept
    screen_on: bool = True  # POWER turns the display off and on
    # what the status bar shows of the phone's power and radios (a snapshot may set them; nothing changes them)
    battery_level: int = 100  # percent
    charging: bool = False
    signal_level: int = 4  # the cellular signal's bars, 0..4
    wifi_level: int = 4  # the Wi-Fi signal's bars while Wi-Fi is on, 0..4
    notifications: list[str] = field(default_factory=list)  # apps (keys of apps.yaml) with a notification posted
    # a notification that has just arrived, shown as a heads-up banner until ``until_ms``: {app, title, text, until_ms}
    headsup: dict[str, Any] | None = None
    slow_start: bool = False  # the next app launched shows its starting window for one step before its first screen
    starting: dict[str, Any] | None = None  # that starting window while it shows: {app, at_ms}
    shade: bool = False  # the notification shade is pulled down over the screen
    permission_prompt: bool = False  # the next app opened that asks for a permission shows the prompt (env.stochastic)
    permission: dict[str, Any] | None = None  # the runtime permission prompt showing over an app: {app, group}
    do_not_disturb: bool = False  # quick settings tiles with no other effect on the simulated phone
    auto_rotate: bool = False
    languages: list[str] = field(default_factory=list)
    # clock
    alarms: list[Alarm] = field(default_factory=lambda: [Alarm(1, 9, 0, False), Alarm(2, 8, 30, False)])
    next_alarm_id: int = 3
    clock_tab: str = "alarm"
    stopwatch_running: bool = False
    stopwatch_started_ms: int = 0
    stopwatch_elapsed_ms: int = 0
    timer_digits: str = ""  # typed on the timer's keypad, up to 6: HHMMSS filled from the right
    timer_end_ms: int | None = None  # a running timer rings at this time
    timer_left_ms: int = 0  # a paused timer's remaining time
    picker: dict[str, Any] | None = None  # the alarm time picker: {hour, minute, mode: hour|minute}
    # telephony
    digits: str = ""
    call: dict[str, Any] | None = None  # {number, started_ms, emergency}
    # text input: the focused field as (app, field id) and every field's content
    focus: tuple[str, str] | None = None
    fields: dict[str, str] = field(default_factory=dict)
    dialog: str | None = None  # a system dialog over the app: "brightness"
    # settings written (``settings put``) that nothing has acted on yet: "namespace/key" -> value. The service that
    # owns one (airplane mode, the radios, the night mode) writes it when it acts, which drops the entry here.
    unapplied_settings: dict[str, str] = field(default_factory=dict)

    def copy(self) -> DeviceState:
        return copy.deepcopy(self)


# The apps whose notifications a snapshot may post (their small icons: vlui.sim.systemui).
NOTIFYING_APPS = ("gmail", "messages", "calendar", "photos", "youtube", "play_store", "maps", "chrome", "phone")

# Fields a snapshot or a task may set, with the numeric range each allows beyond its type.
_RANGES = {"brightness": (0, 255), "next_pid": (1, 2**22), "next_alarm_id": (1, 10**6), "battery_level": (0, 100),
           "signal_level": (0, 4), "wifi_level": (0, 4)}


@functools.cache
def _state_hints() -> dict[str, Any]:
    """:class:`DeviceState`'s field types (resolving them takes longer than checking a snapshot's state)."""
    return typing.get_type_hints(DeviceState)


def state_problem(fields: dict[str, Any]) -> str | None:
    """Why ``fields`` (a snapshot's or a task's starting state) cannot set a :class:`DeviceState`, or None: an
    unknown field (the known ones are listed), a value of the wrong type, a number out of range, an unknown volume
    stream. Checked when the snapshot is read, before any episode runs."""
    hints = _state_hints()
    settable = sorted(set(hints) - {"time_ms"})  # the clock comes from the snapshot's own ``time``
    for name, value in fields.items():
        if name not in settable:
            return f"unknown field {name!r}; fields: {', '.join(settable)}"
        if name == "volume":
            problem = _volume_problem(value)
        elif name == "notifications" and _fits(value, hints[name]):
            unknown = sorted(set(value) - set(NOTIFYING_APPS))
            problem = (f"notifications: unknown app(s) {', '.join(unknown)}; apps: {', '.join(NOTIFYING_APPS)}"
                       if unknown else None)
        else:
            problem = None if _fits(value, hints[name]) else f"{name} must be {_describe(hints[name])}, not {value!r}"
        if problem is None and name in _RANGES and not _RANGES[name][0] <= value <= _RANGES[name][1]:
            problem = f"{name} must be between {_RANGES[name][0]} and {_RANGES[name][1]}, not {value!r}"
        if problem:
            return problem
    return None


def _volume_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"volume must be a mapping of stream -> level ({', '.join(VOLUME_MAX)}), not {value!r}"
    for stream, level in value.items():
        if stream not in VOLUME_MAX:
            return f"unknown volume stream {stream!r}; streams: {', '.join(VOLUME_MAX)}"
        lo, hi = VOLUME_MIN[stream], VOLUME_MAX[stream]
        if isinstance(level, bool) or not isinstance(level, int) or not lo <= level <= hi:
            return f"volume.{stream} must be a whole number from {lo} to {hi}, not {level!r}"
    return None


def _fits(value: Any, hint: Any) -> bool:
    """Whether a plain YAML value has the type ``hint`` (bool, int, str, None, list[...], dict[...], tuple, unions)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is list:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value)
    if origin is tuple:
        return isinstance(value, (list, tuple)) and len(value) == len(args) and all(
            _fits(v, a) for v, a in zip(value, args, strict=True))
    if origin is dict:
        return isinstance(value, dict) and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
    return isinstance(value, hint) if isinstance(hint, type) else False


def _describe(hint: Any) -> str:
    """``hint`` in words a snapshot's author reads."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    names = {bool: "true or false", int: "a whole number", str: "a string", type(None): "null"}
    if hint in names:
        return names[hint]
    if origin is list:
        return f"a list of {_describe(args[0])}s" if args[0] in names else f"a list of {_describe(args[0])} entries"
    if origin is dict:
        return "a mapping"
    if origin is tuple:
        return f"a list of {len(args)} values"
    return getattr(hint, "__name__", str(hint))
