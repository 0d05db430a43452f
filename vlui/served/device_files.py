"""What an Android 10 device keeps in files, written as the device writes them: Launcher3's home-screen database
(:data:`LAUNCHER_DB`, its ``favorites`` table), the wallpaper images (:data:`WALLPAPER_FILES`, PNGs that name the vlui
wallpaper they were rendered from in a text chunk) and ``persist.sys.locale``.

The served phone writes these at boot (:mod:`vlui.served.phone`), the shell's commands change them
(:mod:`vlui.served.configure`), and :mod:`vlui.adb.build` writes the same on a real emulator.
"""

from __future__ import annotations

import io
import sqlite3
import tempfile
from pathlib import Path

from PIL import PngImagePlugin

from vlui.errors import VluiError
from vlui.sim.apps import launcher
from vlui.sim.i18n import get_locale, locales
from vlui.sim.phone import SimDevice, apps, short_component
from vlui.sim.wallpapers import wallpaper

LAUNCHER_DB = "/data/data/com.google.android.apps.nexuslauncher/databases/launcher.db"
WALLPAPER_FILES = ("/data/system/users/0/wallpaper_orig", "/data/system/users/0/wallpaper")
WALLPAPER_CHUNK = "vlui.wallpaper"  # PNG text chunk: the id of the vlui wallpaper an image was rendered from

# Launcher3's favorites table, as Android 10's launcher (LauncherProvider) creates it.
FAVORITES_SCHEMA = (
    "CREATE TABLE favorites (_id INTEGER PRIMARY KEY, title TEXT, intent TEXT, container INTEGER, screen INTEGER, "
    "cellX INTEGER, cellY INTEGER, spanX INTEGER, spanY INTEGER, itemType INTEGER, "
    "appWidgetId INTEGER NOT NULL DEFAULT -1, iconPackage TEXT, iconResource TEXT, icon BLOB, "
    "appWidgetProvider TEXT, modified INTEGER NOT NULL DEFAULT 0, restored INTEGER NOT NULL DEFAULT 0, "
    "profileId INTEGER DEFAULT 0, rank INTEGER NOT NULL DEFAULT 0, options INTEGER NOT NULL DEFAULT 0)"
)
DESKTOP, HOTSEAT = -100, -101  # LauncherSettings.Favorites.CONTAINER_*
ITEM_APPLICATION = 0  # LauncherSettings.Favorites.ITEM_TYPE_APPLICATION
FAVORITES_COLUMNS = ("_id", "title", "intent", "container", "screen", "cellX", "cellY", "spanX", "spanY",
                     "itemType", "profileId", "rank")
LAUNCH_INTENT = ("#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;"
                 "launchFlags=0x10200000;component={component};end")



# ---------------------------------------------------------------------------------------------------- locale
def locale_for_tag(tag: str) -> str:
    """The locale id (``zh-hans-CN``) of an Android language tag (``zh-Hans-CN``, any case)."""
    by_tag = {}
    for locale_id, meta in locales().items():
        by_tag[meta["android"].lower()] = by_tag[locale_id.lower()] = locale_id
    found = by_tag.get(tag.strip().lower())
    if found is None:
        known = ", ".join(meta["android"] for meta in locales().values())
        raise VluiError(f"persist.sys.locale {tag!r} is not a locale of the simulated phone; choose from: {known}")
    return found


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
    return launcher.home_layout(dev.snapshot.home_layout, *launcher.snapshot_grid(dev.snapshot))


def favorites_rows(layout: launcher.Layout, locale_id: str) -> list[tuple]:
    """Launcher3 ``favorites`` rows (values for :data:`FAVORITES_COLUMNS`) of a layout: hotseat items at
    ``screen`` = ``cellX`` = their position, workspace items on the first screen at (``cellX``, ``cellY``) =
    (column, row). Titles are the apps' labels in ``locale_id``."""
    locale = get_locale(locale_id)
    hotseat, workspace = layout
    items = [(key, HOTSEAT, i, i, 0) for i, key in enumerate(hotseat)]
    items += [(key, DESKTOP, 0, column, row) for key, row, column in workspace]
    rows = []
    for _id, (key, container, screen, x, y) in enumerate(items, 1):
        info = apps()[key]
        intent = LAUNCH_INTENT.format(component=short_component(info.package, info.activity))
        rows.append((_id, locale.t(f"app.{key}"), intent, container, screen, x, y, 1, 1, ITEM_APPLICATION, 0, 0))
    return rows


def launcher_sql(layout: launcher.Layout, locale_id: str) -> str:
    """SQL that makes a launcher database hold exactly ``layout``: a DELETE, then one INSERT with a line per icon."""
    rows = [f"({', '.join(map(_sql_literal, row))})" for row in favorites_rows(layout, locale_id)]
    if not rows:
        return "DELETE FROM favorites;"
    return (f"DELETE FROM favorites;\nINSERT INTO favorites ({', '.join(FAVORITES_COLUMNS)}) VALUES\n"
            + ",\n".join(rows) + ";")


def _sql_literal(value: int | str) -> str:
    return str(value) if isinstance(value, int) else "'" + value.replace("'", "''") + "'"


def launcher_db(layout: launcher.Layout, locale_id: str) -> bytes:
    """A launcher database file (SQLite) holding ``layout``."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute(FAVORITES_SCHEMA)
        con.executescript(launcher_sql(layout, locale_id))
        return db_bytes(con)
    finally:
        con.close()


def device_launcher_db(dev: SimDevice) -> bytes:
    """The launcher database a device writes for the home screen it shows now."""
    return launcher_db(current_layout(dev), dev.snapshot.locale)


def open_db(data: bytes) -> sqlite3.Connection:
    """An in-memory SQLite connection on the bytes of a database file. Bytes that are no database raise
    :class:`sqlite3.DatabaseError` here or at the first query."""
    con = sqlite3.connect(":memory:")
    if hasattr(con, "deserialize"):  # Python 3.11+
        con.deserialize(data)
        return con
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "db")
        path.write_bytes(data)
        src = sqlite3.connect(path)
        try:
            src.backup(con)
        finally:
            src.close()
    return con


def db_bytes(con: sqlite3.Connection) -> bytes:
    """The database file of a connection, as bytes (committing first)."""
    con.commit()
    if hasattr(con, "serialize"):  # Python 3.11+
        return con.serialize()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "db")
        dst = sqlite3.connect(path)
        try:
            con.backup(dst)
        finally:
            dst.close()
        return path.read_bytes()
