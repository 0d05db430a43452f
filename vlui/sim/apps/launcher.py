"""The Pixel launcher: "At a glance" date and weather, a grid of app icons laid out by the snapshot, the hotseat,
the Google search bar; swiping up opens the app drawer (all apps, the third-party ones the phone installed too,
alphabetical in the device's language). The grid, the layouts, the apps and the search rule are Launcher3's
(:mod:`vlui.android.launcher`); this module draws them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlui.android.apps import LAUNCHER_PKG
from vlui.android.launcher import drawer_order, grid, home_layout, launchable, search_matches
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, scroll_list, search_box, text


def grid_size(ctx: Ctx) -> tuple[int, int]:
    return grid(ctx.width, ctx.dpi, ctx.tablet)


def on_editor_action(dev: Phone, field: str) -> None:
    """ENTER in the drawer's search box starts the first app found, as Launcher3 does."""
    ctx = dev.ctx()
    found = [k for k in drawer_order(launchable(dev.state.installed), ctx.locale)
             if search_matches(ctx.t(f"app.{k}"), dev.state.fields.get("launcher.search", ""))]
    if found:
        dev.launch(found[0])


def icon_cell(dev: Phone, ctx: Ctx, key: str, x1: int, y1: int, x2: int, y2: int, label_color,
              show_label: bool = True) -> Node:
    """One app icon with its label; tapping launches the app."""
    label = ctx.t(f"app.{key}")
    size = min(ctx.dp(52), (x2 - x1) - ctx.dp(8))
    cx = (x1 + x2) // 2
    iy = y1 + ctx.dp(6)

    icon = Node(bounds=(cx - size // 2, iy, cx + size // 2, iy + size), icon=f"app:{key}", visual=True)

    def tap(x, y):
        dev.launch(key, icon.bounds)  # read at tap time: right-to-left layouts mirror the tree after it is built

    cell = Node(cls="android.widget.TextView", bounds=(x1, y1, x2, y2), package=LAUNCHER_PKG, text=label, desc=label,
                on_tap=tap)
    cell.add(icon)
    if show_label:
        cell.add(Node(bounds=(x1, iy + size + ctx.dp(2), x2, iy + size + ctx.dp(22)), text=label, size=ctx.sp(12),
                      fg=label_color, align="center", visual=True))
    return cell


def build(dev: Phone, ctx: Ctx) -> Node:
    return drawer(dev, ctx) if dev.state.drawer else home(dev, ctx)


@dataclass(frozen=True)
class HomeShown:
    """What the home screen shows of the phone: :func:`home` draws from this and the screen's ``Ctx`` alone (its
    handlers read the phone when they run), so home screens of equal inputs are the same screen, which the phone
    keeps rather than builds again."""

    date: tuple[int, int, int]  # the at-a-glance date: weekday (Monday 0), month, day
    layout: str | int | dict[str, Any]  # the snapshot's home layout (Snapshot.home_layout)


def home_shown(dev: Phone) -> HomeShown:
    """What :func:`home` shows of ``dev`` now."""
    now = dev.now()
    return HomeShown((now.weekday(), now.month, now.day), dev.snapshot.home_layout)


def home(dev: Phone, ctx: Ctx) -> Node:
    shown = home_shown(dev)
    root = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.height), package=LAUNCHER_PKG,
                rid=f"{LAUNCHER_PKG}:id/launcher", icon="wallpaper")

    def swipe(x1, y1, x2, y2):
        if y1 - y2 > ctx.dp(48) and abs(y1 - y2) > abs(x1 - x2):  # up: open the app drawer
            dev.state.drawer = True
            dev.state.scroll["drawer"] = 0
            return True
        return False

    root.on_swipe = swipe
    white = (255, 255, 255)
    # At a glance: date and weather
    weekday_index, month, day = shown.date
    weekday = ctx.locale.seq("weekday")[(weekday_index + 1) % 7]
    date = ctx.t("launcher.date_format", weekday=weekday, month=ctx.locale.seq("month")[month - 1], day=day)
    glance_y = ctx.top + ctx.dp(16)
    root.add(text(ctx, (ctx.dp(24), glance_y, ctx.width - ctx.dp(24), glance_y + ctx.dp(32)), date, 22, color=white,
                  pkg=LAUNCHER_PKG, rid=f"{LAUNCHER_PKG}:id/clock"))
    root.add(text(ctx, (ctx.dp(24), glance_y + ctx.dp(32), ctx.width - ctx.dp(24), glance_y + ctx.dp(56)),
                  ctx.t("launcher.weather", temp=1) + "C", 14, color=white, pkg=LAUNCHER_PKG,
                  rid=f"{LAUNCHER_PKG}:id/title_weather_text"))
    columns, rows = grid_size(ctx)
    hotseat, workspace = home_layout(shown.layout, columns, rows)
    # bottom up: search bar, hotseat, workspace
    search_h = ctx.dp(48)
    search_y = ctx.bottom - ctx.dp(12) - search_h
    hot_h = ctx.dp(88)
    hot_y = search_y - ctx.dp(8) - hot_h
    grid_top, grid_bottom = glance_y + ctx.dp(72), hot_y - ctx.dp(8)
    margin = ctx.dp(8) if not ctx.tablet else ctx.width // 8
    cell_w = (ctx.width - 2 * margin) // columns
    cell_h = (grid_bottom - grid_top) // rows
    ws = Node(cls="android.view.ViewGroup", bounds=(0, grid_top, ctx.width, grid_bottom), package=LAUNCHER_PKG,
              rid=f"{LAUNCHER_PKG}:id/workspace")
    for app, r, c in workspace:
        x1 = margin + c * cell_w
        y1 = grid_top + r * cell_h
        ws.add(icon_cell(dev, ctx, app, x1, y1, x1 + cell_w, y1 + min(cell_h, ctx.dp(96)), white))
    root.add(ws)
    hs = Node(cls="android.view.ViewGroup", bounds=(0, hot_y, ctx.width, hot_y + hot_h), package=LAUNCHER_PKG,
              rid=f"{LAUNCHER_PKG}:id/hotseat")
    hot_w = (ctx.width - 2 * margin) // columns
    start = margin + (columns - len(hotseat)) * hot_w // 2
    for i, app in enumerate(hotseat):
        if app is None:  # an empty slot of a launcher database's hotseat
            continue
        x1 = start + i * hot_w
        hs.add(icon_cell(dev, ctx, app, x1, hot_y, x1 + hot_w, hot_y + hot_h, white, show_label=False))
    root.add(hs)

    def search(x, y):
        dev.launch("google")
        dev.focus_field("google", "query")

    bar = search_box(ctx, LAUNCHER_PKG, search_y, "", search, rid=f"{LAUNCHER_PKG}:id/search_container_hotseat", margin_dp=16)
    bar.desc = ctx.t("launcher.google_search_hint")
    bar.bg = (255, 255, 255) if not ctx.theme.dark else (60, 64, 67)
    bar.children[0].icon = "glyph:google"
    bar.children[0].icon_color = (66, 133, 244)
    root.add(bar)
    return root


def drawer(dev: Phone, ctx: Ctx) -> Node:
    st = dev.state
    root = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.height), package=LAUNCHER_PKG,
                rid=f"{LAUNCHER_PKG}:id/apps_view", bg=ctx.theme.drawer)

    def close_on_pull_down(x1, y1, x2, y2):
        if y2 - y1 > ctx.dp(48) and st.scroll.get("drawer", 0) == 0:
            st.drawer = False
            return True
        return False

    search_y = ctx.top + ctx.dp(8)
    focused = st.focus == ("launcher", "search")
    root.add(search_box(ctx, LAUNCHER_PKG, search_y, ctx.t("launcher.search_hint"),
                        lambda x, y: dev.focus_field("launcher", "search", package=LAUNCHER_PKG),
                        rid=f"{LAUNCHER_PKG}:id/search_box_input", value=st.fields.get("launcher.search", ""),
                        focused=focused))
    columns, _ = grid_size(ctx)
    labels = drawer_order(launchable(st.installed), ctx.locale)
    query = st.fields.get("launcher.search", "")
    if query.strip():  # typed text filters the apps, by their labels in the device's language
        labels = [k for k in labels if search_matches(ctx.t(f"app.{k}"), query)]
    margin = ctx.dp(8) if not ctx.tablet else ctx.width // 8
    cell_w = (ctx.width - 2 * margin) // columns
    row_h = ctx.dp(100)
    fg = ctx.theme.on_surface

    def make_row(chunk):
        def build_row(y):
            row = Node(cls="android.view.ViewGroup", bounds=(0, y, ctx.width, y + row_h), package=LAUNCHER_PKG)
            for c, app in enumerate(chunk):
                x1 = margin + c * cell_w
                row.add(icon_cell(dev, ctx, app, x1, y, x1 + cell_w, y + row_h, fg))
            return row
        return build_row

    rows = [(row_h, make_row(labels[i:i + columns])) for i in range(0, len(labels), columns)]
    lst = scroll_list(ctx, LAUNCHER_PKG, "drawer", search_y + ctx.dp(64), ctx.bottom, rows, st.scroll.get("drawer", 0),
                      rid=f"{LAUNCHER_PKG}:id/apps_list_view")
    lst.on_swipe = close_on_pull_down
    root.add(lst)
    return root
