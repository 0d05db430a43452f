"""A plausible main screen for the apps that B-MoCA only opens (Chrome, Gmail, Maps, YouTube, ...), described as
data in ``data/app_screens.yaml``: a search field or app bar, some content, a floating button, bottom tabs."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import yaml

from vlui.sim.snapshot import DATA_DIR
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, fab, search_box, tabs, text

if TYPE_CHECKING:
    from vlui.sim.phone import SimDevice


@lru_cache(maxsize=1)
def screens() -> dict[str, dict[str, Any]]:
    return yaml.safe_load((DATA_DIR / "app_screens.yaml").read_text(encoding="utf-8"))


def _label(ctx: Ctx, value: str) -> str:
    return ctx.t(value[1:]) if value.startswith("@") else value


def build(dev: SimDevice, ctx: Ctx, screen: dict[str, Any]) -> Node:
    from vlui.sim.phone import apps

    key = dev.state.top
    spec = screens()[key]
    pkg = apps()[key].package
    color = tuple(spec["color"])
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=pkg,
                bg=(0, 0, 0) if spec.get("canvas") == "viewfinder" else ctx.theme.background)
    y = ctx.top
    if "search" in spec:
        focused = dev.state.focus == (key, "search")
        value = dev.state.fields.get(f"{key}.search", "")
        root.add(search_box(ctx, pkg, y + ctx.dp(12), ctx.t(spec["search"]),
                            lambda x, yy: dev.focus_field(key, "search"), rid=f"{pkg}:id/search_box", value=value,
                            focused=focused))
        y += ctx.dp(72)
    elif "title" in spec:
        root.add(app_bar(ctx, pkg, ctx.t(spec["title"])))
        y += ctx.dp(56)
    tab_h = ctx.dp(56) if spec.get("tabs") else 0
    canvas = spec.get("canvas")
    if canvas:
        y2 = ctx.bottom - tab_h - (ctx.dp(160) if spec.get("rows") else 0)
        root.add(_canvas(ctx, pkg, canvas, color, (0, y, ctx.width, y2)))
        y = y2
    for row in spec.get("rows", []):
        h = ctx.dp(56)
        if y + h > ctx.bottom - tab_h:
            break
        root.add(text(ctx, (ctx.content_left + ctx.dp(24), y, ctx.content_right - ctx.dp(16), y + h), _label(ctx, row),
                      16, pkg=pkg, on_tap=lambda x, yy: None))
        y += h
    if spec.get("tabs"):
        items = [(ctx.t(label), glyph_name, i == 0, lambda x, yy: None)
                 for i, (label, glyph_name) in enumerate(spec["tabs"])]
        root.add(tabs(ctx, pkg, ctx.bottom - tab_h, items, h_dp=56, rid=f"{pkg}:id/bottom_navigation"))
    if "fab" in spec:
        glyph_name, desc = spec["fab"]
        if canvas == "viewfinder":
            cx, cy, size = ctx.width // 2, ctx.bottom - tab_h - ctx.dp(64), 72
        else:
            cx, cy, size = ctx.content_right - ctx.dp(44), ctx.bottom - tab_h - ctx.dp(44), 56
        root.add(fab(ctx, pkg, cx, cy, glyph_name, ctx.t(desc), lambda x, yy: None, rid=f"{pkg}:id/fab",
                     size_dp=size, color=color if canvas != "viewfinder" else (255, 255, 255)))
    return root


def _canvas(ctx: Ctx, pkg: str, kind: str, color, bounds) -> Node:
    """A content area drawn as simple shapes: map blocks and roads, a photo grid, video thumbnails, ..."""
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
    elif kind in ("photos", "videos", "grid"):
        cols = 3 if kind != "videos" else 1
        cell_w = (x2 - x1) // cols
        cell_h = cell_w if kind == "photos" else (cell_w * 9 // 16 if kind == "videos" else ctx.dp(56))
        palette = [(244, 180, 0), (66, 133, 244), (52, 168, 83), (234, 67, 53), (171, 71, 188), (0, 172, 193)]
        i = 0
        yy = y1
        while yy + cell_h <= y2:
            for c in range(cols):
                fill = palette[i % len(palette)] if kind != "grid" else ctx.theme.search_bar
                area.add(Node(bounds=(x1 + c * cell_w + 2, yy + 2, x1 + (c + 1) * cell_w - 2, yy + cell_h - 2),
                              bg=fill, visual=True))
                i += 1
            yy += cell_h + (ctx.dp(48) if kind == "videos" else 0)
    return area
