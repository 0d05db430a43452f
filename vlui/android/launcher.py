"""Android 10's launcher (Launcher3, as the Pixel launcher): the home grid a screen gets, the home layouts a snapshot
may ask for (the stock one, one from a seed, an explicit one), a benchmark's launcher database fitted to the grid
(:func:`fit_layout`), the ``favorites`` table of its database that holds
a layout, the apps its drawer lists and its app search's matching rule. The simulated launcher draws what this
says (:mod:`vlui.sim.apps.launcher`); the served phone and the emulator builder write its database."""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from functools import lru_cache
from typing import Any

from vlui.android.apps import apps, short_component, third_party
from vlui.android.i18n import Locale, get_locale
from vlui.device import HomeScreen

LAUNCHER_DB = "/data/data/com.google.android.apps.nexuslauncher/databases/launcher.db"
LAUNCHABLE = ("calendar", "camera", "chrome", "clock", "contacts", "files", "gmail", "maps", "messages", "phone",
              "photos", "play_music", "settings", "youtube", "play_store")
DEFAULT_HOTSEAT = ("phone", "messages", "play_store", "chrome", "camera")
DEFAULT_WORKSPACE = {("gmail", 4, 0), ("photos", 4, 1), ("youtube", 4, 2), ("maps", 4, 3)}  # (app, row, column)

# (hotseat apps, workspace (app, row, column)); a hotseat slot may be empty (None) where a launcher database says so
Layout = tuple[tuple[str | None, ...], tuple[tuple[str, int, int], ...]]


def launchable(installed: Collection[str] = ()) -> tuple[str, ...]:
    """The apps the launcher starts on a phone with the third-party apps ``installed``: the system image's
    (:data:`LAUNCHABLE`), then those. A third-party app lives in the drawer only, unless a benchmark's launcher
    database places it (:func:`fit_layout`): the home layouts place the system image's apps, so a phone's home
    screen is the same with or without them."""
    return LAUNCHABLE + tuple(key for key in third_party() if key in installed)


def drawer_order(keys: Iterable[str], locale: Locale) -> list[str]:
    """Apps as the drawer (and Settings' app list) lists them: by their labels in ``locale``, ignoring case."""
    return sorted(keys, key=lambda key: locale.t(f"app.{key}").casefold())


def grid(width: int, dpi: int, tablet: bool) -> tuple[int, int]:
    """(columns, rows) of the home grid: the launcher fits columns of at least 80dp, as Android 10's does."""
    if tablet:
        return 6, 4
    return (5 if width * 160 / dpi >= 400 else 4), 5


def home_layout(layout: str | int | Mapping[str, Any], columns: int, rows: int) -> Layout:
    """(hotseat apps, workspace (app, row, column)) for a snapshot's ``home_layout``: the stock arrangement, a
    random one from a seed (a random subset of apps at random cells; the rest live in the drawer only), or an
    explicit ``{hotseat: [apps], workspace: [[app, row, column], ...]}`` (what the launcher database holds).

    Explicit icons outside the grid (after a density change) are not shown, as the hotseat beyond its columns."""
    if isinstance(layout, Mapping):
        cells = ((str(a), int(r), int(c)) for a, r, c in layout["workspace"])
        return (tuple(layout["hotseat"][:columns]),
                tuple(sorted(((a, r, c) for a, r, c in cells if r < rows and c < columns), key=lambda t: (t[1], t[2]))))
    return _generated_layout(layout, columns, rows)


@lru_cache(maxsize=256)
def _generated_layout(layout: str | int, columns: int, rows: int) -> Layout:
    if layout == "default":
        hotseat = DEFAULT_HOTSEAT[:columns]
        cells = {(a, r, c) for a, r, c in DEFAULT_WORKSPACE if c < columns and r < rows}
        return hotseat, tuple(sorted(cells, key=lambda t: (t[1], t[2])))
    rng = random.Random(int(layout))
    pool = list(LAUNCHABLE)
    rng.shuffle(pool)
    hotseat = tuple(pool[: rng.randint(3, columns)])
    rest = pool[len(hotseat):]
    count = rng.randint(4, min(len(rest), columns * rows - 2))
    slots = [(r, c) for r in range(rows) for c in range(columns)]
    rng.shuffle(slots)
    placed = zip(rest[:count], slots[:count], strict=True)
    workspace = tuple(sorted(((app, r, c) for app, (r, c) in placed), key=lambda t: (t[1], t[2])))
    return hotseat, workspace


def fit_layout(home: HomeScreen, columns: int, rows: int, apps_on_phone: Collection[str]) -> Layout:
    """A launcher database's home screen (B-MoCA's, from ``vlui/tasks/data/bmoca25_home.yaml``) on a ``columns`` x
    ``rows`` grid: each icon of an app on the phone (``apps_on_phone``; Launcher3 drops the others) at its own slot,
    or its own cell with rows counted from the bottom (the row above the hotseat stays the row above the hotseat),
    where the grid has it and it is free; else at the nearest free one, in its own row first (a 5-column database on a
    4-column phone moves its last column's icons inward). A hotseat icon with no free slot goes to the workspace's
    first free cell; an icon with no free cell at all is left to the drawer. The hotseat comes back with one entry
    per slot."""
    hotseat: list[str | None] = [None] * columns
    taken: dict[tuple[int, int], str] = {}
    homeless = []
    for slot, app in enumerate(home.hotseat):
        if app is None or app not in apps_on_phone:
            continue
        free = [i for i in range(columns) if hotseat[i] is None]
        if free:
            hotseat[min(free, key=lambda i: (abs(i - slot), i))] = app
        else:
            homeless.append(app)
    cells = [(r, c) for r in range(rows) for c in range(columns)]
    for app, row, column in sorted(home.workspace, key=lambda t: (t[1], t[2])):
        row -= home.rows - rows
        free = [cell for cell in cells if cell not in taken]
        if app in apps_on_phone and free:
            taken[min(free, key=lambda rc: (abs(rc[0] - row), abs(rc[1] - column), rc))] = app
    for app in homeless:
        free = [cell for cell in cells if cell not in taken]
        if free:
            taken[free[0]] = app
    return tuple(hotseat), tuple((app, r, c) for (r, c), app in sorted(taken.items()))


def explicit_layout(layout: Layout) -> dict[str, Any]:
    """A layout as a snapshot's explicit ``home_layout`` mapping (plain lists, as YAML writes them)."""
    hotseat, workspace = layout
    return {"hotseat": list(hotseat), "workspace": [[a, r, c] for a, r, c in workspace]}


def check_layout(layout: Any, columns: int, rows: int) -> str | None:
    """Why an explicit ``home_layout`` mapping is invalid for a ``columns`` x ``rows`` grid, or None if it is valid."""
    if set(layout) != {"hotseat", "workspace"}:
        return f"home_layout must have exactly the keys hotseat and workspace, not {', '.join(map(str, layout))}"
    hotseat, workspace = layout["hotseat"], layout["workspace"]
    if not isinstance(hotseat, list) or len(hotseat) > columns:
        return f"home_layout.hotseat must be a list of at most {columns} apps (the grid's columns)"
    for app in hotseat:
        if app not in LAUNCHABLE:
            return f"home_layout.hotseat: unknown app {app!r}; choose from: {', '.join(LAUNCHABLE)}"
    if not isinstance(workspace, list):
        return "home_layout.workspace must be a list of [app, row, column]"
    taken = set()
    for i, item in enumerate(workspace):
        where = f"home_layout.workspace[{i}]"
        if not isinstance(item, list) or len(item) != 3:
            return f"{where} must be [app, row, column], not {item!r}"
        app, row, column = item
        if app not in LAUNCHABLE:
            return f"{where}: unknown app {app!r}; choose from: {', '.join(LAUNCHABLE)}"
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (row, column)):
            return f"{where}: row and column must be integers, not {row!r}, {column!r}"
        if not (0 <= row < rows and 0 <= column < columns):
            return f"{where}: cell ({row}, {column}) is outside the {columns}x{rows} grid (columns x rows)"
        if (row, column) in taken:
            return f"{where}: cell ({row}, {column}) holds two apps"
        taken.add((row, column))
    return None


def search_matches(label: str, query: str) -> bool:
    """Whether a search ``query`` finds ``label``, as Launcher3's app search (DefaultAppSearchAlgorithm) decides:
    the query, case-insensitively, at the start of a word of the label, where a word starts after a space or
    punctuation, at a lower-to-upper case change, or at any letter of a script without case (Chinese, Japanese,
    Arabic, Devanagari: every position). Settings' search takes the same rule. An empty query finds nothing."""
    query = query.strip().casefold()
    if not query:
        return False
    folded = label.casefold()
    for i in range(len(label)):
        if folded.startswith(query, i) and (
                i == 0 or not label[i - 1].isalnum() or (label[i - 1].islower() and label[i].isupper())
                or unicodedata.category(label[i]) == "Lo"):
            return True
    return False


# ---------------------------------------------------------------------------------------------------- database
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


def favorites_rows(layout: Layout, locale_id: str) -> list[tuple]:
    """Launcher3 ``favorites`` rows (values for :data:`FAVORITES_COLUMNS`) of a layout: hotseat items at
    ``screen`` = ``cellX`` = their slot (an empty slot has no row), workspace items on the first screen at (``cellX``, ``cellY``) =
    (column, row). Titles are the apps' labels in ``locale_id``."""
    locale = get_locale(locale_id)
    hotseat, workspace = layout
    items = [(key, HOTSEAT, i, i, 0) for i, key in enumerate(hotseat) if key is not None]
    items += [(key, DESKTOP, 0, column, row) for key, row, column in workspace]
    rows = []
    for _id, (key, container, screen, x, y) in enumerate(items, 1):
        info = apps()[key]
        intent = LAUNCH_INTENT.format(component=short_component(info.package, info.activity))
        rows.append((_id, locale.t(f"app.{key}"), intent, container, screen, x, y, 1, 1, ITEM_APPLICATION, 0, 0))
    return rows


def launcher_sql(layout: Layout, locale_id: str) -> str:
    """SQL that makes a launcher database hold exactly ``layout``: a DELETE, then one INSERT with a line per icon."""
    rows = [f"({', '.join(map(_sql_literal, row))})" for row in favorites_rows(layout, locale_id)]
    if not rows:
        return "DELETE FROM favorites;"
    return (f"DELETE FROM favorites;\nINSERT INTO favorites ({', '.join(FAVORITES_COLUMNS)}) VALUES\n"
            + ",\n".join(rows) + ";")


def _sql_literal(value: int | str) -> str:
    return str(value) if isinstance(value, int) else "'" + value.replace("'", "''") + "'"
