"""Building blocks of Android 10 screens (app bars, list rows, switches, sliders, tabs, buttons) as widget trees.

Sizes follow Material guidelines in dp and sp, converted to pixels by the snapshot's density and font scale, so a
denser screen or a larger font setting changes the layout as it does on a phone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vlui.android.i18n import Locale
from vlui.sim.theme import Theme
from vlui.sim.typeset import wrap
from vlui.sim.ui import Node

Tap = Callable[[int, int], None]


@dataclass
class Ctx:
    """What a screen builder needs: the screen's geometry, units, theme and strings."""

    width: int
    height: int
    dpi: int
    font_scale: float
    theme: Theme
    locale: Locale
    tablet: bool
    top: int  # first pixel row below the status bar
    bottom: int  # first pixel row of the navigation bar

    def dp(self, value: float) -> int:
        return int(round(value * self.dpi / 160))

    def sp(self, value: float) -> int:
        return int(round(value * self.dpi / 160 * self.font_scale))

    def t(self, key: str, **values) -> str:
        return self.locale.t(key, **values)

    @property
    def content_left(self) -> int:
        """Left edge of content: tablets keep lists to a comfortable reading width, centred."""
        if self.tablet:
            return max(0, (self.width - self.dp(720)) // 2)
        return 0

    @property
    def content_right(self) -> int:
        return self.width - self.content_left


def text(ctx: Ctx, bounds, value: str, size_sp: float = 16, color=None, bold=False, align="start", pkg="",
         rid="", cls="android.widget.TextView", on_tap: Tap | None = None, desc="") -> Node:
    return Node(cls=cls, bounds=bounds, package=pkg, rid=rid, text=value, desc=desc, size=ctx.sp(size_sp),
                fg=color or ctx.theme.on_surface, bold=bold, align=align, on_tap=on_tap)


def paragraph(ctx: Ctx, pkg: str, x1: int, x2: int, y: int, value: str, size_sp: float, rid: str = "", color=None,
              bold: bool = False, cls: str = "android.widget.TextView") -> Node:
    """A text that wraps over lines: one view holding the whole text, as uiautomator reports a multi-line TextView,
    drawn line by line by children that the dump leaves out. Its height is its lines'."""
    size = ctx.sp(size_sp)
    lines = wrap(value, size, x2 - x1, cjk=ctx.locale.cjk_font, arabic=ctx.locale.arabic_font, bold=bold) or [""]
    line_h = int(size * 1.4)
    node = Node(cls=cls, bounds=(x1, y, x2, y + line_h * len(lines)), package=pkg, rid=rid, text=value)
    for i, line in enumerate(lines):
        node.add(Node(bounds=(x1, y + i * line_h, x2, y + (i + 1) * line_h), text=line, size=size, bold=bold,
                      fg=color or ctx.theme.on_surface, visual=True))
    return node


def app_bar(ctx: Ctx, pkg: str, title: str, up: Tap | None = None, rid_prefix: str = "", actions=()) -> Node:
    """A toolbar with an optional up arrow, the title, and icon actions ``(glyph, desc, on_tap)``."""
    h = ctx.dp(56)
    y1, y2 = ctx.top, ctx.top + h
    bar = Node(cls="android.view.ViewGroup", bounds=(0, y1, ctx.width, y2), package=pkg,
               rid=f"{rid_prefix or pkg}:id/action_bar", bg=ctx.theme.surface)
    x = ctx.dp(16)
    if up is not None:
        bar.add(Node(cls="android.widget.ImageButton", bounds=(0, y1, ctx.dp(56), y2), package=pkg,
                     desc=ctx.t("common.navigate_up"), icon="glyph:arrow_back", icon_color=ctx.theme.icon,
                     on_tap=up))
        x = ctx.dp(72)
    right = ctx.width - ctx.dp(4)
    for glyph_name, desc, tap in reversed(actions):
        bar.add(Node(cls="android.widget.ImageButton", bounds=(right - ctx.dp(48), y1, right, y2), package=pkg,
                     desc=desc, icon=f"glyph:{glyph_name}", icon_color=ctx.theme.icon, on_tap=tap))
        right -= ctx.dp(48)
    bar.add(text(ctx, (x, y1, right, y2), title, 20, pkg=pkg, bold=False))
    return bar


def list_row(ctx: Ctx, pkg: str, y: int, title: str, summary: str = "", icon: str = "", on_tap: Tap | None = None,
             switch: bool | None = None, rid_title: str = "android:id/title", rid_summary: str = "android:id/summary",
             desc: str = "") -> Node:
    """A preference row: icon, title, summary, optional switch. Height 72dp with a summary, 56dp without."""
    h = ctx.dp(72 if summary else 56)
    left, right = ctx.content_left, ctx.content_right
    row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + h), package=pkg, on_tap=on_tap,
               desc=desc)
    x = left + ctx.dp(16)
    if icon:
        row.add(Node(cls="android.widget.ImageView", bounds=(x, y + (h - ctx.dp(24)) // 2, x + ctx.dp(24),
                     y + (h + ctx.dp(24)) // 2), package=pkg, rid="android:id/icon", icon=icon,
                     icon_color=ctx.theme.accent if icon.startswith("glyph:") else None))
        x = left + ctx.dp(72)
    text_right = right - ctx.dp(16 + (52 if switch is not None else 0))
    if summary:
        row.add(text(ctx, (x, y + ctx.dp(14), text_right, y + ctx.dp(38)), title, 16, pkg=pkg, rid=rid_title))
        row.add(text(ctx, (x, y + ctx.dp(38), text_right, y + ctx.dp(60)), summary, 14, color=ctx.theme.secondary,
                     pkg=pkg, rid=rid_summary))
    else:
        row.add(text(ctx, (x, y, text_right, y + h), title, 16, pkg=pkg, rid=rid_title))
    if switch is not None:
        sw_x2 = right - ctx.dp(16)
        row.add(Node(cls="android.widget.Switch", bounds=(sw_x2 - ctx.dp(48), y + (h - ctx.dp(32)) // 2, sw_x2,
                     y + (h + ctx.dp(32)) // 2), package=pkg, rid="android:id/switch_widget", kind="switch",
                     checkable=True, checked=switch, text=ctx.t("common.switch_on" if switch else "common.switch_off"),
                     on_tap=on_tap))
    return row


def header(ctx: Ctx, pkg: str, y: int, title: str) -> Node:
    h = ctx.dp(48)
    return text(ctx, (ctx.content_left + ctx.dp(72), y, ctx.content_right - ctx.dp(16), y + h), title, 14,
                color=ctx.theme.accent, pkg=pkg, rid="android:id/title")


def slider_row(ctx: Ctx, pkg: str, y: int, title: str, value: float, on_set: Callable[[float], None],
               icon: str = "", rid: str = "android:id/seekbar") -> tuple[Node, int]:
    """A titled seek bar. Tapping or dragging it sets the value at the touch point. Returns (node, height)."""
    h = ctx.dp(88)
    left, right = ctx.content_left, ctx.content_right
    row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + h), package=pkg)
    x = left + ctx.dp(72)
    if icon:
        row.add(Node(cls="android.widget.ImageView", bounds=(left + ctx.dp(16), y + ctx.dp(40), left + ctx.dp(40),
                     y + ctx.dp(64)), package=pkg, rid="android:id/icon", icon=icon, icon_color=ctx.theme.icon))
    row.add(text(ctx, (x, y + ctx.dp(10), right - ctx.dp(16), y + ctx.dp(36)), title, 16, pkg=pkg,
                 rid="android:id/title"))
    row.add(seek_bar(ctx, pkg, (x - ctx.dp(16), y + ctx.dp(38), right - ctx.dp(8), y + ctx.dp(70)), value, on_set,
                     rid))
    return row, h


def seek_bar(ctx: Ctx, pkg: str, bounds, value: float, on_set: Callable[[float], None],
             rid: str = "android:id/seekbar") -> Node:
    x1, y1, x2, y2 = bounds
    pad = (y2 - y1) // 2
    rtl = ctx.locale.rtl

    def fraction(x: int) -> float:
        left, _, right, _ = node.bounds  # where it is drawn: right-to-left layouts mirror the bounds after building
        f = min(1.0, max(0.0, (x - left - pad) / max(1, right - left - 2 * pad)))
        return 1.0 - f if rtl else f

    def tap(x: int, y: int) -> None:
        on_set(fraction(x))

    def drag(xa: int, ya: int, xb: int, yb: int) -> bool:
        on_set(fraction(xb))
        return True

    node = Node(cls="android.widget.SeekBar", bounds=bounds, package=pkg, rid=rid, kind="slider", value=value,
                focusable=True, on_tap=tap, on_swipe=drag, text="")
    return node


def tabs(ctx: Ctx, pkg: str, y: int, items: list[tuple[str, str, bool, Tap]], h_dp: int = 48,
         rid: str = "") -> Node:
    """A row of tabs ``(label, glyph, selected, on_tap)`` spread evenly over the width."""
    h = ctx.dp(h_dp)
    row = Node(cls="android.widget.HorizontalScrollView", bounds=(0, y, ctx.width, y + h), package=pkg,
               bg=ctx.theme.surface)
    w = ctx.width / len(items)
    for i, (label, glyph_name, selected, tap) in enumerate(items):
        x1, x2 = int(i * w), int((i + 1) * w)
        color = ctx.theme.accent if selected else ctx.theme.secondary
        tab = Node(cls="android.widget.LinearLayout", bounds=(x1, y, x2, y + h), package=pkg, desc=label,
                   selected=selected, on_tap=tap, rid=rid)
        if glyph_name:
            g = ctx.dp(24)
            cx = (x1 + x2) // 2
            tab.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, y + ctx.dp(6), cx + g // 2,
                         y + ctx.dp(6) + g), package=pkg, icon=f"glyph:{glyph_name}", icon_color=color))
            tab.add(text(ctx, (x1, y + ctx.dp(32), x2, y + h), label, 12, color=color, align="center", pkg=pkg))
        else:
            tab.add(text(ctx, (x1, y, x2, y + h), label, 14, color=color, align="center", pkg=pkg, bold=True))
        if selected:
            tab.add(Node(cls="android.view.View", bounds=(x1 + ctx.dp(8), y + h - ctx.dp(3), x2 - ctx.dp(8), y + h),
                         package=pkg, bg=ctx.theme.accent))
        row.add(tab)
    return row


def fab(ctx: Ctx, pkg: str, cx: int, cy: int, glyph_name: str, desc: str, on_tap: Tap, rid: str = "",
        size_dp: int = 56, color=None) -> Node:
    """A round floating action button centred at ``(cx, cy)``."""
    r = ctx.dp(size_dp) // 2
    node = Node(cls="android.widget.ImageButton", bounds=(cx - r, cy - r, cx + r, cy + r), package=pkg, rid=rid,
                desc=desc, bg=color or ctx.theme.accent, radius=-1, on_tap=on_tap)
    g = ctx.dp(24)
    node.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, cy - g // 2, cx + g // 2, cy + g // 2),
                  package=pkg, icon=f"glyph:{glyph_name}", icon_color=ctx.theme.on_accent))
    return node


def search_box(ctx: Ctx, pkg: str, y: int, hint: str, on_tap: Tap, rid: str, value: str = "",
               focused: bool = False, h_dp: int = 48, margin_dp: int = 16) -> Node:
    """A rounded search field; tapping focuses it (the keyboard comes up)."""
    h = ctx.dp(h_dp)
    left, right = ctx.content_left + ctx.dp(margin_dp), ctx.content_right - ctx.dp(margin_dp)
    box = Node(cls="android.widget.EditText" if focused else "android.widget.TextView", bounds=(left, y, right, y + h),
               package=pkg, rid=rid, text=value or hint, bg=ctx.theme.search_bar, radius=h // 2, on_tap=on_tap,
               focusable=True, focused=focused, size=ctx.sp(16), inset=ctx.dp(48),
               fg=ctx.theme.on_surface if value else ctx.theme.secondary)
    box.add(Node(cls="android.widget.ImageView", bounds=(left + ctx.dp(12), y + (h - ctx.dp(24)) // 2,
                 left + ctx.dp(36), y + (h + ctx.dp(24)) // 2), package=pkg, icon="glyph:search",
                 icon_color=ctx.theme.icon))
    return box


def button(ctx: Ctx, pkg: str, bounds, label: str, on_tap: Tap, rid: str = "", filled: bool = False) -> Node:
    return Node(cls="android.widget.Button", bounds=bounds, package=pkg, rid=rid, text=label, size=ctx.sp(14),
                bold=True, align="center", fg=ctx.theme.on_accent if filled else ctx.theme.accent,
                bg=ctx.theme.accent if filled else None, radius=ctx.dp(4), on_tap=on_tap)


def menu_popup(ctx: Ctx, pkg: str, items: list[tuple[str, str, Tap]], dismiss: Tap, rid: str = "",
               title: str = "") -> Node:
    """A menu card at the top end of the screen with a row per item ``(label, rid of its text, on_tap)``, or with a
    ``title`` a dialog in the middle of the screen over a scrim; a tap outside the card calls ``dismiss``."""
    scrim = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=pkg,
                 on_tap=dismiss, bg=ctx.theme.scrim if title else None)
    w = min(ctx.width - ctx.dp(16), ctx.dp(240))
    h = ctx.dp(48)
    head = ctx.dp(48) if title else 0
    if head:  # a dialog: in the middle of the screen
        x2, y = (ctx.width + w) // 2, (ctx.top + ctx.bottom - head - h * len(items)) // 2
    else:
        x2, y = ctx.content_right - ctx.dp(8), ctx.top + ctx.dp(8)
    card = Node(cls="android.widget.ListView", bounds=(x2 - w, y, x2, y + head + h * len(items) + ctx.dp(16)),
                package=pkg, rid=rid, bg=ctx.theme.surface, radius=ctx.dp(4))
    if head:
        card.add(text(ctx, (x2 - w + ctx.dp(16), y + ctx.dp(8), x2 - ctx.dp(8), y + ctx.dp(8) + head), title, 18,
                      pkg=pkg, bold=True, rid="android:id/alertTitle"))
    y += ctx.dp(8) + head
    for label, label_rid, tap in items:
        item = Node(cls="android.widget.LinearLayout", bounds=(x2 - w, y, x2, y + h), package=pkg, desc=label,
                    on_tap=tap)
        item.add(text(ctx, (x2 - w + ctx.dp(16), y, x2 - ctx.dp(8), y + h), label, 16, pkg=pkg, rid=label_rid))
        card.add(item)
        y += h
    x1, y1, x2, y2 = card.bounds
    scrim.add(Node(bounds=(x1 - 1, y1 - 1, x2 + 1, y2 + ctx.dp(2)), bg=ctx.theme.divider, radius=ctx.dp(4),
                   visual=True))  # the card's edge and shadow
    return scrim.add(card)


def scroll_list(ctx: Ctx, pkg: str, key: str, y1: int, y2: int, rows: list[tuple[int, Callable[[int], Node]]],
                offset: int, rid: str = "", cls: str = "androidx.recyclerview.widget.RecyclerView") -> Node:
    """A vertically scrolling list of rows ``(height, build(y) -> Node)`` between ``y1`` and ``y2``, scrolled by
    ``offset`` px. Only rows at least partly visible are in the tree, as in a RecyclerView."""
    total = sum(h for h, _ in rows)
    max_off = max(0, total - (y2 - y1))
    offset = min(max(offset, 0), max_off)
    node = Node(cls=cls, bounds=(0, y1, ctx.width, y2), package=pkg, rid=rid, scrollable=max_off > 0,
                scroll_key=key, scroll_max=max_off)
    y = y1 - offset
    for h, build in rows:
        if y + h > y1 and y < y2:
            row = build(y)
            _clip(row, y1, y2)
            node.add(row)
        y += h
    return node


def _clip(node: Node, y1: int, y2: int) -> None:
    """Clip a row to the list's viewport: uiautomator reports the visible part of a partly hidden view and leaves
    out the views that cannot be seen at all."""
    a, b, c, d = node.bounds
    node.bounds = (a, max(b, y1), c, min(d, y2))
    node.children = [child for child in node.children if child.bounds[3] > y1 and child.bounds[1] < y2]
    for child in node.children:
        _clip(child, y1, y2)


def bottom_navigation(ctx: Ctx, pkg: str, y: int, items: list[tuple[str, str, str, bool, Tap]], rid: str,
                      label_ids: tuple[str, str] | None = None, color=None, bg=None) -> Node:
    """Material's BottomNavigationView from ``y`` to the bottom: an item ``(rid, label, glyph, selected, on_tap)``
    each, spread over the content's width, its label its content description, ``selected`` on the one shown. With
    ``label_ids`` (the selected's, the others') the label shows under the icon; ``color`` is the selected item's."""
    bar = Node(cls="android.widget.FrameLayout", bounds=(0, y, ctx.width, ctx.bottom), package=pkg, rid=rid,
               bg=bg or ctx.theme.surface)
    bar.add(Node(bounds=(0, y, ctx.width, y + max(1, ctx.dp(1))), bg=ctx.theme.divider, visual=True))
    left, right = ctx.content_left, ctx.content_right
    w = (right - left) / len(items)
    icon_top = ctx.dp(8) if label_ids else (ctx.bottom - y - ctx.dp(24)) // 2
    for i, (item_rid, label, glyph_name, selected, tap) in enumerate(items):
        x1, x2 = left + int(i * w), left + int((i + 1) * w)
        tint = (color or ctx.theme.on_surface) if selected else ctx.theme.secondary
        item = Node(cls="android.widget.FrameLayout", bounds=(x1, y, x2, ctx.bottom), package=pkg, rid=item_rid,
                    desc=label, selected=selected, clickable=True, focusable=True, on_tap=tap)
        g, cx = ctx.dp(24), (x1 + x2) // 2
        item.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, y + icon_top, cx + g // 2,
                      y + icon_top + g), package=pkg, rid=f"{pkg}:id/navigation_bar_item_icon_view",
                      icon=f"glyph:{glyph_name}", icon_color=tint))
        if label_ids:
            item.add(text(ctx, (x1, y + ctx.dp(34), x2, ctx.bottom - ctx.dp(4)), label, 11, color=tint,
                          bold=selected, align="center", pkg=pkg, rid=label_ids[0 if selected else 1]))
        bar.add(item)
    return bar
