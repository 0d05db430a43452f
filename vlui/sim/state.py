"""Everything the simulated phone remembers between touches. Loading a snapshot is a copy of one of these.

Plain data only (numbers, strings, lists, dicts), so a copy is a cheap deep copy and two states compare equal
exactly when the phone would behave the same.
"""

from __future__ import annotations

import copy
import math
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
