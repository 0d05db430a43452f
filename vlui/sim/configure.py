"""Device configuration of the served simulated phone, as shell commands change it on a real device.

FIRST VERSION (being completed): the functions the shell calls, with fixed signatures.
"""

from __future__ import annotations

import dataclasses

from vlui.sim.served import ServedPhone

LAUNCHER_DB = "/data/data/com.google.android.apps.nexuslauncher/databases/launcher.db"
WALLPAPER_FILES = ("/data/system/users/0/wallpaper_orig", "/data/system/users/0/wallpaper")


def density(phone: ServedPhone) -> tuple[int, int | None]:
    """(physical density, override or None), as ``wm density`` prints them."""
    physical = phone.device.snapshot.profile["dpi"]
    dpi = phone.device.snapshot.dpi
    return physical, (dpi if dpi != physical else None)


def set_density(phone: ServedPhone, dpi: int | None) -> None:
    """``wm density N`` (None: ``wm density reset``)."""
    with phone.lock:
        _reconfigure(phone, dpi=dpi or phone.device.snapshot.profile["dpi"])


def get_setting(phone: ServedPhone, namespace: str, key: str) -> str | None:
    with phone.lock:
        return phone.settings[namespace].get(key)


def put_setting(phone: ServedPhone, namespace: str, key: str, value: str) -> None:
    with phone.lock:
        phone.settings[namespace][key] = value


def night_mode(phone: ServedPhone) -> str:
    return "yes" if phone.device.state.dark_theme else "no"


def set_night_mode(phone: ServedPhone, mode: str) -> None:
    with phone.lock:
        phone.device.state.dark_theme = mode == "yes"
        phone.device._invalidate()


def restart_framework(phone: ServedPhone) -> None:
    """``setprop ctl.restart zygote`` (or ``stop`` then ``start``): persisted properties take effect, apps die."""


def force_stop(phone: ServedPhone, package: str) -> None:
    """``am force-stop PACKAGE``."""


def _reconfigure(phone: ServedPhone, **changes) -> None:
    dev = phone.device
    dev.snapshot = dataclasses.replace(dev.snapshot, **changes)
    dev._invalidate()
