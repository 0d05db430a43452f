"""The widget tree: one structure that renders to pixels, serialises to uiautomator XML and receives touches.

Apps build a fresh tree of :class:`Node` for every frame from the device state (like a declarative UI). A node
carries what ``uiautomator dump`` reports (class, resource id, text, content description, flags, bounds) and how it
is drawn (background, text style, icon, or a special ``kind`` such as a switch or a slider). Touch handlers are
closures over the device, so the tree itself holds no state worth keeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Color = tuple[int, int, int]
Bounds = tuple[int, int, int, int]  # x1, y1, x2, y2 in pixels, x2/y2 exclusive as in uiautomator's [x1,y1][x2,y2]


@dataclass(eq=False, slots=True)
class Node:
    cls: str = "android.widget.FrameLayout"
    bounds: Bounds = (0, 0, 0, 0)
    package: str = ""
    rid: str = ""  # resource-id, e.g. "com.android.settings:id/title"
    text: str = ""
    desc: str = ""  # content-desc
    clickable: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    focusable: bool = False
    focused: bool = False
    selected: bool = False
    enabled: bool = True
    long_clickable: bool = False
    password: bool = False
    children: list[Node] = field(default_factory=list)
    # drawing
    bg: Color | None = None
    radius: int = 0  # corner radius in px; -1 draws an ellipse
    fg: Color = (0, 0, 0)
    size: int = 0  # text size in px
    bold: bool = False
    align: str = "start"  # start | center | end (start is the right edge in right-to-left locales)
    valign: str = "center"  # top | center
    inset: int = 0  # px kept free before the text at its start edge (room for a leading icon)
    icon: str = ""  # "app:<key>" launcher icon, "glyph:<name>" system icon, "wallpaper" the snapshot's wallpaper
    icon_color: Color | None = None
    kind: str = ""  # special drawing: switch, slider, dial, border
    value: float = 0.0  # slider position in [0, 1]
    extra: Any = None  # kind-specific drawing data (e.g. the dial's labels)
    visual: bool = False  # drawing only: left out of the uiautomator XML (e.g. the icon inside a launcher label)
    mirror: bool = True  # mirrored in right-to-left layouts (False for dial pads, clock dials, media controls)
    # input
    on_tap: Callable[[int, int], None] | None = None
    on_long_press: Callable[[int, int], None] | None = None  # a touch held in place (View.OnLongClickListener)
    on_swipe: Callable[[int, int, int, int], bool] | None = None  # returns whether it consumed the swipe
    scroll_key: str = ""  # scrollable containers: the state key holding their scroll offset
    scroll_max: int = 0

    def walk(self) -> Iterator[Node]:
        """This node and its descendants, depth first in drawing order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def contains(self, x: float, y: float) -> bool:
        x1, y1, x2, y2 = self.bounds
        return x1 <= x < x2 and y1 <= y < y2

    def add(self, *nodes: Node) -> Node:
        self.children.extend(nodes)
        return self

    def find(self, rid: str = "", text: str = "") -> Node | None:
        """The first node (depth first) with this resource id and/or text; for tests and debugging."""
        for node in self.walk():
            if (not rid or node.rid == rid) and (not text or node.text == text):
                return node
        return None


def mirror_tree(node: Node, width: int) -> None:
    """Mirror a tree horizontally for right-to-left locales, in place (subtrees with ``mirror=False`` keep their
    inner layout but are moved as a block)."""
    x1, y1, x2, y2 = node.bounds
    node.bounds = (width - x2, y1, width - x1, y2)
    if node.mirror:
        for child in node.children:
            mirror_tree(child, width)
    else:
        shift = (width - x2) - x1
        for child in node.children:
            _shift_tree(child, shift)


def _shift_tree(node: Node, dx: int) -> None:
    x1, y1, x2, y2 = node.bounds
    node.bounds = (x1 + dx, y1, x2 + dx, y2)
    for child in node.children:
        _shift_tree(child, dx)


def hit(node: Node, x: float, y: float, attr: str | tuple[str, ...] = "on_tap") -> Node | None:
    """The topmost node under ``(x, y)`` that handles ``attr`` (or any of several: a touch goes to the view that
    is clickable or long-clickable; children are drawn over their parents, later siblings over earlier ones), as
    Android dispatches touches."""
    if not node.contains(x, y):
        return None
    for child in reversed(node.children):
        found = hit(child, x, y, attr)
        if found is not None:
            return found
    attrs = (attr,) if isinstance(attr, str) else attr
    if any(getattr(node, a) is not None for a in attrs) or ("on_swipe" in attrs and node.scrollable):
        return node
    return None
