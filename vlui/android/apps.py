"""The phone's apps (``data/apps.yaml``): package, launcher activity, the uid their processes run as, and how
ActivityManager prints their components and uids."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from vlui.resources import read_yaml

DATA_DIR = Path(__file__).resolve().parent / "data"
SYSTEM_PID = 1210  # system_server
SYSTEMUI_PID = 1688
SYSTEMUI_UID = 10046  # android.uid.systemui, an app uid whose number depends on the image
LAUNCHER_PKG = "com.google.android.apps.nexuslauncher"


@dataclass(frozen=True)
class AppInfo:
    key: str
    package: str
    activity: str


@lru_cache(maxsize=1)
def apps() -> dict[str, AppInfo]:
    data = read_yaml(DATA_DIR / "apps.yaml")
    return {key: AppInfo(key, v["package"], v["activity"]) for key, v in data.items()}


def short_component(package: str, activity: str) -> str:
    """``ComponentName.flattenToShortString``: ``pkg/.Act`` when the activity is inside the package."""
    return f"{package}/{activity[len(package):]}" if activity.startswith(package + ".") else f"{package}/{activity}"


def app_uid(key: str) -> int:
    """The Linux uid of app ``key``'s processes (Settings runs as the system user)."""
    return 1000 if key == "settings" else 10050 + sorted(apps()).index(key)


def uid_name(key: str) -> str:
    """The uid as ActivityManager prints it: ``u0a57`` for an app, ``1000`` for the system."""
    uid = app_uid(key)
    return str(uid) if uid < 10000 else f"u0a{uid - 10000}"
