"""Implicit intents as an Android 10 Pixel image resolves them: which app's activity takes an intent, as the apps'
manifests declare it (``vlui/android/data/intents.yaml``), the extras ``am`` passes with their Java types, and how
``am`` reads numbers and booleans. What an activity then does with an intent is the simulator's
(:mod:`vlui.sim.intents`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from vlui.android.apps import DATA_DIR, app_info, apps
from vlui.resources import read_yaml

CATEGORY_DEFAULT = "android.intent.category.DEFAULT"  # startActivity adds it: every filter here declares it
# AlarmClock's extras (android.provider.AlarmClock)
EXTRA_HOUR, EXTRA_MINUTES = "android.intent.extra.alarm.HOUR", "android.intent.extra.alarm.MINUTES"
EXTRA_MESSAGE, EXTRA_SKIP_UI = "android.intent.extra.alarm.MESSAGE", "android.intent.extra.alarm.SKIP_UI"
# am's extra options -> the Java type Intent.get<Type>Extra finds
EXTRA_TYPES = {"--ei": "java.lang.Integer", "--es": "java.lang.String", "-e": "java.lang.String",
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
    data = read_yaml(DATA_DIR / "intents.yaml")
    return tuple(IntentFilter(**{**f, "schemes": tuple(f.get("schemes", ("none",)))}) for f in data)


def filters_of(dialer: str) -> tuple[IntentFilter, ...]:
    """The filters on a phone whose Phone app is ``dialer`` (``DeviceState.dialer``): AOSP's Dialer takes the
    Google dialer's DIAL and VIEW ``tel:`` in its launcher activity, ``.main.impl.MainActivity``."""
    if dialer == "google":
        return filters()
    main = apps()["phone"].activity
    return tuple(replace(f, activity=app_info(f.app, dialer).activity) if f.app == "phone" and f.activity == main
                 else f for f in filters())


def resolve(action: str | None, data: str | None, categories: list[str], package: str | None,
            component: tuple[str, str] | None, dialer: str = "google") -> IntentFilter | None:
    """The filter that takes an intent on a phone whose Phone app is ``dialer``, or None. An explicit component
    names the activity (any action it declares is taken, the first one otherwise); an implicit intent needs the
    action, a data scheme the filter takes, only the DEFAULT category, and the package given with ``-p`` if any."""
    if component is not None:
        named = [f for f in filters_of(dialer) if (app_info(f.app, dialer).package, f.activity) == component]
        return next((f for f in named if f.action == action), named[0] if named else None)
    scheme = data.partition(":")[0].lower() if data and ":" in data else "none" if not data else None
    for f in filters_of(dialer):
        if (f.action == action and scheme in f.schemes and set(categories) <= {CATEGORY_DEFAULT}
                and package in (None, app_info(f.app, dialer).package)):
            return f
    return None


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


# ------------------------------------------------------------------------------------------------ MIME types
# What Android 10's MimeTypeMap (libcore's MimeUtils) gives a file's extension, for the extensions the simulated
# phone's files have: a file shared with ACTION_SEND carries its type, and a share target takes the types its
# filter names.
MIME_TYPES = {"pdf": "application/pdf", "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
              "gif": "image/gif", "mp4": "video/mp4", "3gp": "video/3gpp", "m4a": "audio/mp4", "mp3": "audio/mpeg",
              "ogg": "audio/ogg", "wav": "audio/x-wav", "txt": "text/plain", "zip": "application/zip",
              "doc": "application/msword",
              "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
              "apk": "application/vnd.android.package-archive"}


def mime_type(name: str) -> str:
    """The MIME type of a file named ``name``, by its extension (``application/octet-stream`` for any other, as
    DocumentsUI types a file MediaProvider cannot)."""
    _, dot, extension = name.rpartition(".")
    return MIME_TYPES.get(extension.lower(), "application/octet-stream") if dot else "application/octet-stream"


def mime_matches(mime: str, pattern: str) -> bool:
    """Whether a filter's MIME ``pattern`` (``image/*``, ``*/*`` or a whole type) takes ``mime``."""
    kind, _, sub = pattern.partition("/")
    have_kind, _, have_sub = mime.partition("/")
    return kind in ("*", have_kind) and sub in ("*", have_sub)


def common_mime(mimes: list[str]) -> str:
    """The type an ACTION_SEND_MULTIPLE carries for files of ``mimes`` (DocumentsUI's MimeTypes.findCommonMimeType):
    the one type they share, else their shared kind with ``/*``, else ``*/*``."""
    if len(set(mimes)) == 1:
        return mimes[0]
    kinds = {m.partition("/")[0] for m in mimes}
    return f"{kinds.pop()}/*" if len(kinds) == 1 else "*/*"
