"""A plausible main screen for the apps that B-MoCA only opens (Chrome, Gmail, Maps, YouTube, ...), described as
data in ``data/app_screens.yaml``: a search field or app bar, some content, a floating button, bottom tabs."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Required, TypedDict

from vlui.android.apps import apps
from vlui.resources import read_yaml
from vlui.sim import DATA_DIR
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, fab, list_row, menu_popup, search_box, tabs, text


@lru_cache(maxsize=1)
def screens() -> dict[str, dict[str, Any]]:
    return read_yaml(DATA_DIR / "app_screens.yaml")


class Screen(TypedDict, total=False):
    """A screen on a generic app's task: its main screen or a page of its spec in ``data/app_screens.yaml``."""

    screen: Required[str]
    item: str  # the row or button that opened it (a page titled ``$item`` shows it)
    tab: int  # the bottom tab selected on the main screen


def screen_names(key: str) -> tuple[str, ...]:
    """The screens app ``key`` shows: ``main`` and its spec's pages."""
    return ("main", *screens().get(key, {}).get("pages", {}))


def _label(ctx: Ctx, value: str) -> str:
    return ctx.t(value[1:]) if value.startswith("@") else value


def _title(ctx: Ctx, page: dict[str, Any], screen: dict[str, Any]) -> str:
    return screen.get("item", "") if page["title"] == "$item" else ctx.t(page["title"])


def page_spec(key: str, screen: dict[str, Any]) -> dict[str, Any]:
    """The spec of ``key``'s screen: the main one, a page from ``pages``, with the selected tab's content."""
    spec = screens()[key]
    name = screen.get("screen", "main")
    page = spec if name == "main" else spec["pages"][name]
    tab = screen.get("tab", 0)
    if name == "main" and tab and len(spec["tabs"][tab]) > 2:  # a tab with content of its own
        content = spec["pages"][spec["tabs"][tab][2]]
        page = {k: v for k, v in spec.items() if k not in ("canvas", "rows", "fab")} | content
    return page


def open_target(dev: Phone, key: str, tap: dict[str, Any], item: str = "") -> None:
    """Do what a row, button or tab's ``tap`` spec says: start an activity or show a page, and log its lines."""
    if "activity" in tap:
        dev.start_activity(key, tap["page"], tap["activity"], extras=tap.get("extras", True),
                           intent=tap.get("intent", ""), item=item)
    else:
        dev.push(key, tap["page"], item=item)
    for tag, message in tap.get("log", []):
        dev.logi(tag, message, app=key, offset_ms=30)


def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    key = dev.state.top
    spec = screens()[key]
    page = page_spec(key, screen)
    if page.get("popup"):  # a menu over the screen it was opened from
        stack = dev.state.tasks[key]
        root = build(dev, ctx, stack[-2])
        root.add(_popup(dev, ctx, key, apps()[key].package, page, screen))
        return root
    return _screen(dev, ctx, key, apps()[key].package, spec, page, screen)


def _screen(dev: Phone, ctx: Ctx, key: str, pkg: str, spec: dict[str, Any], page: dict[str, Any],
            screen: dict[str, Any]) -> Node:
    color = tuple(spec["color"])
    canvas = page.get("canvas")
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=pkg,
                bg=(0, 0, 0) if canvas == "viewfinder" else ctx.theme.background)
    y = ctx.top
    actions = [(a["glyph"], ctx.t(a["desc"]), _tapper(dev, key, a["tap"])) for a in page.get("actions", [])]
    if "search" in page:
        focused = dev.state.focus == (key, "search")
        value = dev.state.fields.get(f"{key}.search", "")
        box = search_box(ctx, pkg, y + ctx.dp(12), ctx.t(page["search"]), lambda x, yy: dev.focus_field(key, "search"),
                         rid=f"{pkg}:id/search_box", value=value, focused=focused)
        root.add(box)
        right = ctx.content_right - ctx.dp(4)
        if actions:  # icon buttons at the end of the search bar
            x1, y1, x2, y2 = box.bounds
            box.bounds = (x1, y1, x2 - ctx.dp(48) * len(actions), y2)
        for (glyph_name, desc, tap), a in reversed(list(zip(actions, page.get("actions", []), strict=False))):
            root.add(Node(cls="android.widget.ImageButton", bounds=(right - ctx.dp(48), y + ctx.dp(12), right,
                          y + ctx.dp(60)), package=pkg, rid=a.get("rid", ""), desc=desc, icon=f"glyph:{glyph_name}",
                          icon_color=ctx.theme.icon, on_tap=tap))
            right -= ctx.dp(48)
        y += ctx.dp(72)
    elif "title" in page:
        up = None if screen.get("screen", "main") == "main" else (lambda x, yy: dev.press_back())
        bar = app_bar(ctx, pkg, _title(ctx, page, screen), up=up, actions=actions)
        rids = {ctx.t(a["desc"]): a.get("rid", "") for a in page.get("actions", [])}
        for node in bar.children:
            if node.cls == "android.widget.ImageButton" and node.desc in rids:
                node.rid = rids[node.desc]
        root.add(bar)
        y += ctx.dp(56)
    tab_h = ctx.dp(56) if spec.get("tabs") and screen.get("screen", "main") == "main" else 0
    if canvas:
        y2 = ctx.bottom - tab_h - (ctx.dp(160) if page.get("rows") else 0)
        root.add(_canvas(ctx, pkg, canvas, color, (0, y, ctx.width, y2)))
        y = y2
    for row in page.get("rows", []):
        h = ctx.dp(56)
        if y + h > ctx.bottom - tab_h:
            break
        if isinstance(row, str):
            root.add(text(ctx, (ctx.content_left + ctx.dp(24), y, ctx.content_right - ctx.dp(16), y + h),
                          _label(ctx, row), 16, pkg=pkg, on_tap=lambda x, yy: None))
        else:
            label = _label(ctx, row["label"])
            node = list_row(ctx, pkg, y, label, icon=f"glyph:{row['icon']}" if "icon" in row else "",
                            on_tap=_tapper(dev, key, row["tap"], label) if "tap" in row else (lambda x, yy: None),
                            rid_title=row.get("rid", "android:id/title"), desc=label)
            h = node.bounds[3] - node.bounds[1]
            root.add(node)
        y += h
    if tab_h:
        current = screen.get("tab", 0)
        items = [(ctx.t(t[0]), t[1], i == current, _tab_tapper(dev, key, i)) for i, t in enumerate(spec["tabs"])]
        root.add(tabs(ctx, pkg, ctx.bottom - tab_h, items, h_dp=56, rid=f"{pkg}:id/bottom_navigation"))
    if "fab" in page:
        glyph_name, desc = page["fab"][:2]
        tap = _tapper(dev, key, page["fab"][2]) if len(page["fab"]) > 2 else (lambda x, yy: None)
        if canvas == "viewfinder":
            cx, cy, size = ctx.width // 2, ctx.bottom - tab_h - ctx.dp(64), 72
        else:
            cx, cy, size = ctx.content_right - ctx.dp(44), ctx.bottom - tab_h - ctx.dp(44), 56
        root.add(fab(ctx, pkg, cx, cy, glyph_name, ctx.t(desc), tap, rid=f"{pkg}:id/fab",
                     size_dp=size, color=color if canvas != "viewfinder" else (255, 255, 255)))
    return root


def _popup(dev: Phone, ctx: Ctx, key: str, pkg: str, page: dict[str, Any], screen: dict[str, Any]) -> Node:
    """The page's rows as a menu over the screen it was opened from (a titled one as a dialog)."""
    items = []
    for row in page["rows"]:
        label = _label(ctx, row["label"])
        items.append((label, row.get("rid", "android:id/title"),
                      _tapper(dev, key, row["tap"], label) if "tap" in row else (lambda x, yy: None)))
    return menu_popup(ctx, pkg, items, lambda x, yy: dev.press_back(), rid=page.get("rid", ""),
                      title=_title(ctx, page, screen) if "title" in page else "")


def _tapper(dev: Phone, key: str, tap: dict[str, Any], item: str = ""):
    def on_tap(x: int, y: int) -> None:
        if dev.state.tasks[key][-1].get("screen", "main") != "main" and screens()[key]["pages"].get(
                dev.state.tasks[key][-1]["screen"], {}).get("popup"):
            dev.state.tasks[key].pop()  # choosing from a menu closes it
        open_target(dev, key, tap, item)
    return on_tap


def _tab_tapper(dev: Phone, key: str, i: int):
    def on_tap(x: int, y: int) -> None:
        dev.state.tasks[key][-1]["tab"] = i
    return on_tap


def _canvas(ctx: Ctx, pkg: str, kind: str, color, bounds) -> Node:
    """A content area drawn as simple shapes: map blocks and roads, a viewfinder, a photo grid, video thumbnails."""
    x1, y1, x2, y2 = bounds
    area = Node(cls="android.view.View", bounds=bounds, package=pkg, rid=f"{pkg}:id/content", visual=False)
    if kind == "map":
        area.bg = (229, 227, 223) if not ctx.theme.dark else (36, 39, 44)
        for i in range(6):
            yy = y1 + (y2 - y1) * (i + 1) // 7
            area.add(Node(bounds=(x1, yy, x2, yy + ctx.dp(6)), bg=(255, 255, 255) if not ctx.theme.dark
                          else (70, 74, 80), visual=True))
        for i in range(3):
            xx = x1 + (x2 - x1) * (i + 1) // 4
            area.add(Node(bounds=(xx, y1, xx + ctx.dp(8), y2), bg=(251, 192, 45), visual=True))
        area.add(Node(bounds=((x1 + x2) // 2 - ctx.dp(16), (y1 + y2) // 2 - ctx.dp(16), (x1 + x2) // 2 + ctx.dp(16),
                      (y1 + y2) // 2 + ctx.dp(16)), bg=(66, 133, 244), radius=-1, visual=True))
    elif kind == "viewfinder":
        area.bg = (18, 18, 18)
        area.add(Node(bounds=(x1 + ctx.dp(24), y1 + ctx.dp(24), x2 - ctx.dp(24), y2 - ctx.dp(24)), kind="border",
                      icon_color=(90, 90, 90), visual=True))
    elif kind in ("photos", "videos"):
        cols = 3 if kind == "photos" else 1
        cell_w = (x2 - x1) // cols
        cell_h = cell_w if kind == "photos" else cell_w * 9 // 16
        palette = [(244, 180, 0), (66, 133, 244), (52, 168, 83), (234, 67, 53), (171, 71, 188), (0, 172, 193)]
        i = 0
        yy = y1
        while yy + cell_h <= y2:
            for c in range(cols):
                area.add(Node(bounds=(x1 + c * cell_w + 2, yy + 2, x1 + (c + 1) * cell_w - 2, yy + cell_h - 2),
                              bg=palette[i % len(palette)], visual=True))
                i += 1
            yy += cell_h + (ctx.dp(48) if kind == "videos" else 0)
    return area


def on_back(dev: Phone, key: str) -> bool:
    """BACK on a tab other than the first goes to the first tab, as the apps with bottom navigation do."""
    screen = dev.top_screen()
    if screen and screen.get("screen", "main") == "main" and screen.get("tab", 0):
        screen["tab"] = 0
        return True
    return False
