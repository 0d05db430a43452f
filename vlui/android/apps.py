"""The phone's apps (``data/apps.yaml``): package, launcher activity, the uid their processes run as, and how
ActivityManager prints their components and uids.

Most are the system image's and every phone has them. A third-party app (``third_party: true``: B-MoCA release
2.5's Calculator, Instagram, ...) is on a phone only when the phone installs it (``DeviceState.installed``); its uid
comes after the system apps', as Android gives the first free one to an app installed after the image's."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

from vlui.errors import VluiError
from vlui.resources import read_yaml

DATA_DIR = Path(__file__).resolve().parent / "data"
SYSTEM_PID = 1210  # system_server
SYSTEMUI_PID = 1402  # as the boot log starts it (vlui/android/data/boot_log.yaml)
SYSTEMUI_UID = 10102  # an app uid whose number depends on the image: u0a102, as the boot log prints it
LAUNCHER_PKG = "com.google.android.apps.nexuslauncher"
FIRST_APP_UID = 10050  # the first app uid of the simulated image (an app's uid depends on the image)


@dataclass(frozen=True)
class AppInfo:
    key: str
    package: str
    activity: str
    third_party: bool = False  # not in the system image: on a phone only when the phone installs it


@lru_cache(maxsize=1)
def apps() -> dict[str, AppInfo]:
    """Every app vlui knows, by key: the system image's, and the third-party ones whether a phone installs them
    or not."""
    data = read_yaml(DATA_DIR / "apps.yaml")
    names = [f.name for f in fields(AppInfo) if f.name != "key"]
    for key, entry in data.items():
        unknown = sorted(set(entry) - set(names))
        if unknown:
            raise VluiError(f"apps.yaml: {key}: unknown field {unknown[0]!r}; fields: {', '.join(names)}")
    return {key: AppInfo(key, **entry) for key, entry in data.items()}


def third_party() -> tuple[str, ...]:
    """The third-party apps' keys, sorted: what a phone may install (``DeviceState.installed``)."""
    return tuple(sorted(key for key, info in apps().items() if info.third_party))


def on_phone(key: str, installed: Collection[str]) -> bool:
    """Whether app ``key`` is on a phone with the third-party apps ``installed``: a system app always is."""
    return not apps()[key].third_party or key in installed


def short_component(package: str, activity: str) -> str:
    """``ComponentName.flattenToShortString``: ``pkg/.Act`` when the activity is inside the package."""
    return f"{package}/{activity[len(package):]}" if activity.startswith(package + ".") else f"{package}/{activity}"


def app_uid(key: str) -> int:
    """The Linux uid of app ``key``'s processes (Settings runs as the system user). The system apps hold the first
    uids, in key order; the third-party apps the next ones, in key order, as on a phone that installed every one of
    them in that order (B-MoCA's release phones have all five), so that no system app's uid depends on them."""
    if key == "settings":
        return 1000
    system = sorted(k for k, info in apps().items() if not info.third_party)
    if key in system:
        return FIRST_APP_UID + system.index(key)
    return FIRST_APP_UID + len(system) + third_party().index(key)


def uid_name(key: str) -> str:
    """The uid as ActivityManager prints it: ``u0a57`` for an app, ``1000`` for the system."""
    uid = app_uid(key)
    return str(uid) if uid < 10000 else f"u0a{uid - 10000}"
