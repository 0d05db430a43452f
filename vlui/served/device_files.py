"""What an Android 10 device keeps in files, written as the device writes them: Launcher3's home-screen database
(:data:`vlui.android.launcher.LAUNCHER_DB`, its ``favorites`` table), the wallpaper images (:data:`WALLPAPER_FILES`,
PNGs that name the vlui wallpaper they were rendered from in a text chunk), ``persist.sys.locale``, and the apps'
own files that B-MoCA's evaluators read (:func:`app_files`: Clock's alarms database, shared preferences).

The served phone writes these at boot (:mod:`vlui.served.phone`), the shell's commands change them
(:mod:`vlui.served.configure`), and :mod:`vlui.emulator.build` writes the same on a real emulator.
"""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Callable

from PIL import PngImagePlugin

from vlui.android import app_data, launcher
from vlui.android.apps import app_info, apps, on_phone
from vlui.android.i18n import locales

# a database file's bytes <-> a connection: defined with the confined SQL, whose worker imports nothing of vlui;
# the launcher's readers (configure, tests) take them from here
from vlui.served.confined_sql import db_bytes, open_db  # noqa: F401
from vlui.sim import apps as sim_apps
from vlui.sim.apps import deskclock
from vlui.sim.phone import SimDevice
from vlui.sim.wallpapers import wallpaper

WALLPAPER_FILES = ("/data/system/users/0/wallpaper_orig", "/data/system/users/0/wallpaper")
WALLPAPER_CHUNK = "vlui.wallpaper"  # PNG text chunk: the id of the vlui wallpaper an image was rendered from



# ---------------------------------------------------------------------------------------------------- locale
def locale_prop(dev: SimDevice) -> str:
    """``persist.sys.locale`` as the framework writes it: the language list, as comma-separated Android tags."""
    return ",".join(locales()[i]["android"] for i in (dev.state.languages or [dev.snapshot.locale]))


# ---------------------------------------------------------------------------------------------------- wallpaper
def wallpaper_png(wallpaper_id: str, width: int, height: int) -> bytes:
    """Wallpaper ``wallpaper_id`` drawn at ``width`` x ``height`` as a PNG that names it in a text chunk, so the
    simulated phone can tell which wallpaper a pushed image is."""
    info = PngImagePlugin.PngInfo()
    info.add_text(WALLPAPER_CHUNK, wallpaper_id)
    out = io.BytesIO()
    wallpaper(wallpaper_id, width, height).save(out, format="PNG", pnginfo=info)
    return out.getvalue()


# ---------------------------------------------------------------------------------------------------- launcher db
def current_layout(dev: SimDevice) -> launcher.Layout:
    """The home screen the launcher shows now: (hotseat apps, workspace (app, row, column))."""
    return launcher.home_layout(dev.snapshot.home_layout, *dev.snapshot.home_grid)


def launcher_db(layout: launcher.Layout, locale_id: str, dialer: str = "google") -> bytes:
    """A launcher database file (SQLite) holding ``layout``, the Phone app's icon starting ``dialer``'s."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute(launcher.FAVORITES_SCHEMA)
        con.executescript(launcher.launcher_sql(layout, locale_id, dialer))
        return db_bytes(con)
    finally:
        con.close()


def device_launcher_db(dev: SimDevice) -> bytes:
    """The launcher database a device writes for the home screen it shows now."""
    return launcher_db(current_layout(dev), dev.snapshot.locale, dev.state.dialer)


# ---------------------------------------------------------------------------------------------------- apps' own files
APP_DATA_ROOTS = ("/data/data/", "/data/user_de/")


def app_files(dev: SimDevice) -> dict[str, Callable[[], bytes | None]]:
    """The files the phone's apps keep that vlui makes (:mod:`vlui.android.app_data`), by path: each gives the
    file's bytes as the app holds it at the moment it is read, made from the phone's state, or None where the app
    has not written it. Clock's alarms database, and the shared-preferences files of each installed app that keeps
    some (Snapseed's, Wikipedia's)."""
    found: dict[str, Callable[[], bytes | None]] = {app_data.ALARMS_DB: lambda: deskclock.alarms_db(dev)}
    for key, app in sim_apps.APPS.items():
        if app.prefs_files and on_phone(key, dev.state.installed):
            package = app_info(key, dev.state.dialer).package
            for name in app.prefs_files:
                found[app_data.prefs_path(package, name)] = lambda key=key, name=name: _encoded(
                    dev.shared_prefs(key, name))
    return found


def _encoded(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


def app_file(dev: SimDevice, path: str) -> bytes | None:
    """The bytes of the app's file at ``path`` (see :func:`app_files`), or None for a path that is none."""
    if not path.startswith(APP_DATA_ROOTS):
        return None
    make = app_files(dev).get(path)
    return make() if make is not None else None


def app_file_owner(path: str) -> str | None:
    """The app key whose private storage holds ``path``, or None."""
    for root in APP_DATA_ROOTS:
        if path.startswith(root):
            rest = path[len(root):].split("/")
            package = rest[1] if root == "/data/user_de/" and len(rest) > 1 else rest[0]
            return next((key for key, info in apps().items() if info.package == package), None)
    return None
