"""What the simulated apps do with an intent another process starts (``am start -a ACTION ...`` from the shell):
the activity :func:`vlui.android.intents.resolve` chose opens a Settings page, the dial pad with a number, a new
alarm, or the alarm list."""

from __future__ import annotations

from urllib.parse import unquote

from vlui.android.apps import apps
from vlui.android.intents import (
    EXTRA_HOUR,
    EXTRA_MESSAGE,
    EXTRA_MINUTES,
    EXTRA_SKIP_UI,
    EXTRA_TYPES,
    IntentFilter,
    java_bool,
    java_int,
)
from vlui.sim.apps import deskclock, dialer, on_launch, settings
from vlui.sim.protocol import Phone


def deliver(dev: Phone, f: IntentFilter, intent: str, data: str | None, extras: dict[str, tuple[str, str]],
            caller_uid: int) -> None:
    """Start ``f``'s activity for an intent from another process (``intent``: the intent as the START line prints
    it; ``extras``: name -> (am's option, value as typed)) and let it act."""
    created = dev.start_for_intent(f.app, f.activity, intent, caller_uid)
    kind, _, page = f.opens.partition(":")
    shown = f.activity
    if kind == "settings":
        settings.open_from_intent(dev, page)
    elif kind == "dial":
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

def _extra(dev: Phone, app: str, extras: dict[str, tuple[str, str]], name: str, java_type: str, default):
    """``Intent.get<Type>Extra(name, default)`` in ``app``'s process: an extra of another type gives the default,
    and Bundle warns (``Bundle.typeWarning``'s first line)."""
    if name not in extras:
        return default
    option, value = extras[name]
    found = EXTRA_TYPES.get(option, "java.lang.String")
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
