"""Implicit intents the simulated apps resolve (``am start -a ACTION ...`` from the shell): which app's activity
takes an intent, as the apps' manifests declare it on an Android 10 Pixel image (``vlui/sim/data/intents.yaml``),
and what that activity does with it: a Settings page, the dial pad with a number, a new alarm."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import yaml

from vlui.android.apps import apps
from vlui.sim import DATA_DIR
from vlui.sim.apps import deskclock, dialer, on_launch, settings

if TYPE_CHECKING:
    from vlui.sim.phone import SimDevice

CATEGORY_DEFAULT = "android.intent.category.DEFAULT"  # startActivity adds it: every filter here declares it
# AlarmClock's extras (android.provider.AlarmClock)
EXTRA_HOUR, EXTRA_MINUTES = "android.intent.extra.alarm.HOUR", "android.intent.extra.alarm.MINUTES"
EXTRA_MESSAGE, EXTRA_SKIP_UI = "android.intent.extra.alarm.MESSAGE", "android.intent.extra.alarm.SKIP_UI"
# am's extra options -> the Java type Intent.get<Type>Extra finds
_EXTRA_TYPES = {"--ei": "java.lang.Integer", "--es": "java.lang.String", "-e": "java.lang.String",
                "--ez": "java.lang.Boolean", "--el": "java.lang.Long", "--ef": "java.lang.Float",
                "--eu": "android.net.Uri$StringUri"}


@dataclass(frozen=True)
class IntentFilter:
    action: str
    app: str  # an app key of apps.yaml
    activity: str  # the class that resolves it
    opens: str  # "settings:<page>", "dial", "set_alarm" or "show_alarms"
    schemes: tuple[str, ...] = ("none",)  # data schemes it takes; "none": an intent without data


@lru_cache(maxsize=1)
def filters() -> tuple[IntentFilter, ...]:
    data = yaml.safe_load((DATA_DIR / "intents.yaml").read_text())
    return tuple(IntentFilter(**{**f, "schemes": tuple(f.get("schemes", ("none",)))}) for f in data)


def resolve(action: str | None, data: str | None, categories: list[str], package: str | None,
            component: tuple[str, str] | None) -> IntentFilter | None:
    """The filter that takes an intent, or None. An explicit component names the activity (any action it declares
    is taken, the first one otherwise); an implicit intent needs the action, a data scheme the filter takes, only
    the DEFAULT category, and the package given with ``-p`` if any."""

    if component is not None:
        named = [f for f in filters() if (apps()[f.app].package, f.activity) == component]
        return next((f for f in named if f.action == action), named[0] if named else None)
    scheme = data.partition(":")[0].lower() if data and ":" in data else "none" if not data else None
    for f in filters():
        if (f.action == action and scheme in f.schemes and set(categories) <= {CATEGORY_DEFAULT}
                and package in (None, apps()[f.app].package)):
            return f
    return None


def deliver(dev: SimDevice, f: IntentFilter, intent: str, data: str | None, extras: dict[str, tuple[str, str]],
            caller_uid: int) -> None:
    """Start ``f``'s activity for an intent from another process (``intent``: the intent as the START line prints
    it; ``extras``: name -> (am's option, value as typed)) and let it act."""
    created = dev.start_for_intent(f.app, f.activity, intent, caller_uid)
    kind, _, page = f.opens.partition(":")
    shown = f.activity
    if kind == "settings":
        settings.open_from_intent(dev, page)
    elif kind == "dial":
        from urllib.parse import unquote

        dialer.dial_intent(dev, unquote(data.partition(":")[2]) if data else "")
    elif kind in ("show_alarms", "set_alarm"):  # HandleApiCalls has no window: DeskClock's shows, if any
        shown = apps()[f.app].activity
        if kind == "show_alarms":
            deskclock.show_alarms_intent(dev)
        elif not deskclock.set_alarm_intent(
                dev, None if EXTRA_HOUR not in extras else _extra(dev, f.app, extras, EXTRA_HOUR, "Integer", -1),
                _extra(dev, f.app, extras, EXTRA_MINUTES, "Integer", 0),
                _extra(dev, f.app, extras, EXTRA_MESSAGE, "String", ""),
                _extra(dev, f.app, extras, EXTRA_SKIP_UI, "Boolean", False)):
            return
    else:
        raise ValueError(f"intents.yaml: {f.action} opens {f.opens!r}, which nothing handles")
    on_launch(dev, f.app, created)
    dev.displayed(f.app, shown)

def _extra(dev: SimDevice, app: str, extras: dict[str, tuple[str, str]], name: str, java_type: str, default):
    """``Intent.get<Type>Extra(name, default)`` in ``app``'s process: an extra of another type gives the default,
    and Bundle warns (``Bundle.typeWarning``'s first line)."""
    if name not in extras:
        return default
    option, value = extras[name]
    found = _EXTRA_TYPES.get(option, "java.lang.String")
    if found != f"java.lang.{java_type}":
        dev.logi("Bundle", f"Key {name} expected {java_type} but value was a {found}.  The default value "
                 f"{str(default).lower() if isinstance(default, bool) else default} was returned.", level="W",
                 app=app)
        return default
    if java_type == "Integer":
        return java_int(value)
    if java_type == "Boolean":
        return java_bool(value)
    return value


def java_int(text: str) -> int:
    """``Integer.decode`` (``12``, ``-7``, ``0x1F``, ``#1F``, ``017``), as ``am``'s ``--ei`` reads a value;
    ValueError otherwise."""
    t = text.strip()
    sign = -1 if t.startswith("-") else 1
    t = t.lstrip("+-")
    if t[:2].lower() == "0x" or t[:1] == "#":
        value = int(t[2:] if t[:1] == "0" else t[1:], 16)
    elif len(t) > 1 and t.startswith("0"):
        value = int(t[1:], 8)
    else:
        value = int(t, 10)
    value *= sign
    if not -2**31 <= value < 2**31:
        raise ValueError(text)
    return value


def java_bool(text: str) -> bool:
    """``am``'s ``--ez``: true/t, false/f, or a number (non-zero is true); ValueError otherwise."""
    if text in ("true", "t"):
        return True
    if text in ("false", "f"):
        return False
    return java_int(text) != 0
