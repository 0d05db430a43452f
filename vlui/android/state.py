"""Everything the simulated phone remembers between touches. Loading a snapshot is a copy of one of these.

Plain data only (numbers, strings, lists, dicts and dataclasses of them), so a copy is a cheap deep copy and two
states compare equal exactly when the phone would behave the same.

:class:`DeviceState` holds what the system keeps (tasks, settings, the status bar, text fields) and, in ``apps``,
each app's own state by app key. That state is typed in the app's own module (Clock's ``ClockState`` in
:mod:`vlui.sim.apps.deskclock`, the dialer's ``DialerState``), which sits above this package: the phone that boots a
state fills ``apps`` from its app registry, and an app reads its own with :meth:`DeviceState.app`. So a new app adds
its state in its own module, and this module stays free of any app.

A snapshot or a task sets the state from YAML: a system field by name (``wifi: false``), an app's state under its key
(``clock: {tab: stopwatch, stopwatch: {running: true}}``). :func:`state_problem` checks the system fields and that
each app's entry is a mapping when the snapshot is read; :func:`fields_problem` and :func:`set_fields` check and set
a mapping against any of these dataclasses, so the phone checks an app's entry against the app's type with the same
one-line messages.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import pickle
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from vlui.android.apps import apps, third_party

T = TypeVar("T")

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


def bounded(lo: int, hi: int, default: Any = dataclasses.MISSING) -> Any:
    """A whole-number dataclass field that a snapshot or a task may set only from ``lo`` to ``hi`` (checked with its
    type by :func:`state_problem` and :func:`fields_problem`)."""
    return field(default=default, metadata={"range": (lo, hi)})


def shaped(pattern: str, example: str, default: Any = dataclasses.MISSING) -> Any:
    """A string dataclass field that a snapshot or a task may set only to a value that ``pattern`` matches whole
    (``example`` shows one in the message that says otherwise); checked like :func:`bounded`."""
    return field(default=default, metadata={"pattern": (pattern, example)})



# The most characters a text field holds, where its app sets no limit of its own. Android 10's EditText has none: a
# client typing megabytes into a field froze the app there (each key relaid the whole line). Android 13 capped a
# single-line editable TextView at 5,000 characters (TextView.MAX_LENGTH_FOR_SINGLE_LINE_EDIT_TEXT) for that very
# reason; the simulated phone applies that cap to every field, the closest real behaviour with a bound. Fields whose
# app sets a length of its own (Messages' compose field) keep theirs.
EDIT_TEXT_MAX = 5000

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
    next_pid: int = bounded(1, 2**22, default=4120)
    scroll: dict[str, int] = field(default_factory=dict)  # scroll offset in px of each scrollable screen
    # settings
    airplane_mode: bool = False
    wifi: bool = True
    bluetooth: bool = False
    brightness: int = bounded(0, 255, default=255)  # manual; starts at full so that the brightness task is a decrease
    adaptive_brightness: bool = False
    dark_theme: bool = False
    # secure dark_mode_dialog_seen: Settings' dark theme dialog was acknowledged (the first turn-on through Settings
    # writes it; ``cmd uimode night`` does not)
    dark_mode_dialog_seen: bool = False
    volume: dict[str, int] = field(default_factory=lambda: {"media": 15, "call": 4, "ring": 5, "alarm": 5})
    vibrate_for_calls: bool = False
    muted: list[str] = field(default_factory=list)  # streams muted (VOLUME_MUTE); their level is kept
    screen_on: bool = True  # POWER turns the display off and on
    # what the status bar shows of the phone's power and radios (a snapshot may set them; nothing changes them)
    battery_level: int = bounded(0, 100, default=100)  # percent
    charging: bool = False
    signal_level: int = bounded(0, 4, default=4)  # the cellular signal's bars
    wifi_level: int = bounded(0, 4, default=4)  # the Wi-Fi signal's bars while Wi-Fi is on
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
    # the third-party apps installed (apps.yaml's third_party: keys), in install order; the system image's apps are
    # on every phone. The drawer, Settings' app list and the package manager list these besides the system's.
    installed: list[str] = field(default_factory=list)
    # the Phone app: the Pixel image's Google dialer, or AOSP's Dialer (com.android.dialer), the Phone app of the
    # android-29 google_apis images that B-MoCA release 2.5 runs on (vlui/android/apps.py app_info)
    dialer: Literal["google", "aosp"] = "google"
    clipboard: str = ""  # the primary clip's text, what Paste inserts ("": nothing was copied)
    # each app's own state by app key, of the type the app's module declares (Clock's alarms, stopwatch and timer;
    # the dialer's digits and call): made by the phone that boots the state, read with app()
    apps: dict[str, Any] = field(default_factory=dict)
    # text input: the focused field as (app, field id) and every field's content (at most the field's length: the
    # apps' max_length, EDIT_TEXT_MAX by default)
    focus: tuple[str, str] | None = None
    fields: dict[str, str] = field(default_factory=dict)
    keyboard_symbols: bool = False  # the keyboard shows its ?123 layer (digits and symbols), not the letters
    dialog: str | None = None  # a system dialog over the app: "brightness"
    # settings written (``settings put``) that nothing has acted on yet: "namespace/key" -> value. The service that
    # owns one (airplane mode, the radios, the night mode) writes it when it acts, which drops the entry here.
    unapplied_settings: dict[str, str] = field(default_factory=dict)

    def copy(self) -> DeviceState:
        # a pickle round trip: the same deep copy (plain data, see above) in half a deep copy's time
        return pickle.loads(pickle.dumps(self, pickle.HIGHEST_PROTOCOL))

    def app(self, key: str, kind: type[T]) -> T:
        """App ``key``'s own state, as ``kind``, the type its module declares (an app reads its state this way, so
        that what it reads is typed)."""
        state = self.apps[key]
        if not isinstance(state, kind):
            raise TypeError(f"the {key} app's state is a {type(state).__name__}, not a {kind.__name__}")
        return state


# The apps whose notifications a snapshot may post (their small icons: vlui.sim.systemui).
NOTIFYING_APPS = ("gmail", "messages", "calendar", "photos", "youtube", "play_store", "maps", "chrome", "phone")
# the clock comes from the snapshot's own ``time``; an app's state comes by its key; the keyboard's layer from the taps
NOT_SET = {"time_ms", "apps", "keyboard_symbols"}


@functools.cache
def hints(kind: type) -> dict[str, Any]:
    """A dataclass's field types (resolving them takes longer than checking a snapshot's state)."""
    return typing.get_type_hints(kind)


def system_fields() -> list[str]:
    """The :class:`DeviceState` fields a snapshot or a task may set by name, sorted."""
    return sorted(set(hints(DeviceState)) - NOT_SET)


def state_problem(fields: dict[str, Any]) -> str | None:
    """Why ``fields`` (a snapshot's or a task's starting state) cannot set a :class:`DeviceState`, or None: an
    unknown field (the known ones are listed), a value of the wrong type, a number out of range, an unknown volume
    stream, an app's entry that is not a mapping. Checked when the snapshot is read, before any episode runs. What an
    app's entry holds is checked against the app's own type (:func:`fields_problem`) by the phone that boots it, the
    one that knows the apps' types."""
    system = system_fields()
    for name, value in fields.items():
        if name in system:
            problem = _system_problem(name, value)
        elif name in apps():
            problem = None if isinstance(value, dict) else f"{name} must be a mapping of the app's own state, not {value!r}"
        else:
            problem = (f"unknown field {name!r}; fields: {', '.join(system)}; or an app's key with a mapping of its "
                       "own state (clock: {tab: stopwatch})")
        if problem:
            return problem
    return _tasks_problem(fields)


def _tasks_problem(fields: dict[str, Any]) -> str | None:
    """The apps a starting state leaves open go together: ``tasks`` (each app's stack of screens, the first at the
    bottom: ``{calendar: [{screen: main}, {screen: event, event: 0}]}``), ``recents`` (those apps once each, the most
    recent first, as the overview shows them) and, when an app is in front, ``top`` (the first of ``recents``)."""
    named = {"tasks", "recents", "top"} & set(fields)
    if not named:
        return None
    if not {"tasks", "recents"} <= named:
        return ("tasks and recents go together: the apps' open tasks and their order in the overview, the most recent "
                "first (with top: the first of them, for an app in front)")
    tasks, recents, top = fields["tasks"], fields["recents"], fields.get("top")
    unknown = sorted(set(tasks) - set(apps()))
    if unknown:
        return f"tasks: unknown app {unknown[0]!r}; apps: {', '.join(apps())}"
    if sorted(recents) != sorted(tasks):
        return f"recents must list the apps of tasks once each, the most recent first, not {recents!r}"
    for key, stack in tasks.items():
        if not stack or not all(isinstance(screen.get("screen"), str) for screen in stack):
            return f"tasks.{key} must be a list of screens, each a mapping with its name ({{screen: main}}), not {stack!r}"
    if top is not None and top != recents[0]:
        return f"top must be the first of recents ({recents[0] if recents else 'none'}) or null, not {top!r}"
    return None


def _system_problem(name: str, value: Any) -> str | None:
    hint = hints(DeviceState)[name]
    if name == "volume":
        return _volume_problem(value)
    if name == "notifications" and _fits(value, hint):
        unknown = sorted(set(value) - set(NOTIFYING_APPS))
        return f"notifications: unknown app(s) {', '.join(unknown)}; apps: {', '.join(NOTIFYING_APPS)}" if unknown else None
    if name == "installed" and _fits(value, hint):
        return installed_problem(value)
    return _value_problem(value, hint, name, _metadata(DeviceState, name))


def installed_problem(keys: list[str]) -> str | None:
    """Why a phone cannot have the apps ``keys`` installed, or None: one that is not a third-party app (the system
    image's are always there; an unknown one has no simulated app)."""
    for key in keys:
        if key not in third_party():
            what = "a system app, on every phone" if key in apps() else "not an app vlui knows"
            return (f"installed: {key!r} is {what}; installable (third-party) apps: "
                    f"{', '.join(third_party()) or 'none yet'} (vlui/android/data/apps.yaml)")
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


def state_paths(fields: dict[str, Any]) -> dict[str, Any]:
    """A starting state with each app's entry spread into its fields by path (``{"phone": {"call": c}}`` gives
    ``{"phone.call": c}``): how the ADB backend and the task catalog name what a state sets."""
    system = system_fields()
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name in system or not isinstance(value, dict):
            out[name] = value
        else:
            out.update({f"{name}.{key}": item for key, item in value.items()})
    return out


# ---------------------------------------------------------------------------------------- typed state from YAML
def fields_problem(fields: Any, kind: type, path: str, new: bool = False) -> str | None:
    """Why the plain YAML mapping ``fields`` cannot set the dataclass ``kind``'s fields (``path`` names it in the
    message: ``clock.stopwatch``), or None: not a mapping, an unknown field (the known ones are listed), a value of
    the wrong type, a number out of its field's range (:func:`bounded`); for a ``new`` one (see :func:`set_fields`),
    a field without a default left out."""
    names = [f.name for f in dataclasses.fields(kind)]
    if not isinstance(fields, dict):
        return f"{path} must be a mapping of {', '.join(names)}, not {fields!r}"
    for name, value in fields.items():
        if name not in names:
            return f"{path}: unknown field {name!r}; fields: {', '.join(sorted(names))}"
        problem = _value_problem(value, hints(kind)[name], f"{path}.{name}", _metadata(kind, name))
        if problem:
            return problem
    missing = [f.name for f in dataclasses.fields(kind) if new and f.name not in fields
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    return f"{path} must give {', '.join(missing)}" if missing else None


def set_fields(target: Any, fields: dict[str, Any]) -> None:
    """Set the dataclass ``target``'s ``fields`` from plain YAML values (:func:`fields_problem` found nothing wrong):
    a mapping for a part that is always there (Clock's stopwatch) sets the fields it names and keeps the others; a
    mapping for a part that may be absent (a call) or for an entry of a list (an alarm) makes a new one."""
    kinds = hints(type(target))
    for name, value in fields.items():
        current = getattr(target, name)
        if isinstance(value, dict) and dataclasses.is_dataclass(current) and kinds[name] is type(current):
            set_fields(current, value)
        else:
            setattr(target, name, _built(value, kinds[name]))


def _built(value: Any, hint: Any) -> Any:
    """A plain YAML value as ``hint``'s type: a mapping becomes the dataclass it stands for, at any depth."""
    kind = _record(hint)
    if kind is not None and isinstance(value, dict):
        return kind(**{name: _built(item, hints(kind)[name]) for name, item in value.items()})
    if typing.get_origin(hint) is list and isinstance(value, list):
        return [_built(item, typing.get_args(hint)[0]) for item in value]
    return copy.deepcopy(value)


def _record(hint: Any) -> type | None:
    """The dataclass that ``hint`` is, alone or or-null; None for any other type."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        hint = args[0]
    return hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None


def _metadata(kind: type, name: str) -> Mapping[str, Any]:
    """What :func:`bounded` or :func:`shaped` says of ``kind``'s field ``name`` (empty for any other field)."""
    return next(f.metadata for f in dataclasses.fields(kind) if f.name == name)


def _value_problem(value: Any, hint: Any, path: str, metadata: Mapping[str, Any] | None = None) -> str | None:
    """Why ``value`` cannot be the field at ``path`` of type ``hint`` (and the range or shape its ``metadata``
    gives), or None."""
    if not _fits(value, hint):
        return f"{path} must be {_describe(hint)}, not {value!r}"
    kind = _record(hint)
    if kind is not None and isinstance(value, dict):
        return fields_problem(value, kind, path, new=hint is not kind)  # an optional part is made anew: set_fields
    if typing.get_origin(hint) is list and _record(typing.get_args(hint)[0]) is not None:
        for i, item in enumerate(value):
            problem = fields_problem(item, _record(typing.get_args(hint)[0]), f"{path}[{i}]", new=True)
            if problem:
                return problem
    bounds = (metadata or {}).get("range")
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        return f"{path} must be between {bounds[0]} and {bounds[1]}, not {value!r}"
    shape = (metadata or {}).get("pattern")
    if shape is not None and isinstance(value, str) and not re.fullmatch(shape[0], value):
        return f"{path} must look like {shape[1]!r}, not {value!r}"
    return None


def _fits(value: Any, hint: Any) -> bool:
    """Whether a plain YAML value has the type ``hint`` (bool, int, str, None, list[...], dict[...], tuple, unions,
    literals; a dataclass: a mapping, whose fields :func:`fields_problem` checks)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is typing.Literal:
        return any(value == a and type(value) is type(a) for a in args)
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
    if _record(hint) is not None:
        return isinstance(value, dict)
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
    if origin is typing.Literal:
        return f"one of {', '.join(map(str, args))}"
    names = {bool: "true or false", int: "a whole number", str: "a string", type(None): "null"}
    if hint in names:
        return names[hint]
    if _record(hint) is not None:
        return f"a mapping of {', '.join(f.name for f in dataclasses.fields(hint))}"
    if origin is list:
        if _record(args[0]) is not None:
            return f"a list of mappings of {', '.join(f.name for f in dataclasses.fields(args[0]))}"
        return f"a list of {_describe(args[0])}s" if args[0] in names else f"a list of {_describe(args[0])} entries"
    if origin is dict:
        return "a mapping"
    if origin is tuple:
        return f"a list of {len(args)} values"
    return getattr(hint, "__name__", str(hint))
