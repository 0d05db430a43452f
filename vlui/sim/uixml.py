"""Serialise a widget tree as ``uiautomator dump`` does (Android 10): the same file a real device writes."""

from __future__ import annotations

import re
from xml.sax.saxutils import quoteattr

from vlui.sim.ui import Node

HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


_NEEDS_ESCAPING = re.compile(r'[&<>"\n\r\t]')


def _attr(value: str) -> str:
    """``value`` as a quoted XML attribute, exactly as :func:`xml.sax.saxutils.quoteattr` writes it; most values
    (ids, class names, plain labels) need no escaping, and a dump has thousands of them."""
    return quoteattr(value) if _NEEDS_ESCAPING.search(value) else f'"{value}"'


def _b(value: bool) -> str:
    return "true" if value else "false"


def _node(n: Node, index: int, out: list[str]) -> None:
    x1, y1, x2, y2 = n.bounds
    attrs = (
        f"index=\"{index}\" text={_attr(n.text)} resource-id={_attr(n.rid)} class={_attr(n.cls)} "
        f"package={_attr(n.package)} content-desc={_attr(n.desc)} checkable=\"{_b(n.checkable)}\" "
        f"checked=\"{_b(n.checked)}\" clickable=\"{_b(n.clickable or n.on_tap is not None)}\" "
        f"enabled=\"{_b(n.enabled)}\" focusable=\"{_b(n.focusable or n.on_tap is not None)}\" "
        f"focused=\"{_b(n.focused)}\" scrollable=\"{_b(n.scrollable)}\" "
        f"long-clickable=\"{_b(n.long_clickable or n.on_long_press is not None)}\" password=\"{_b(n.password)}\" "
        f"selected=\"{_b(n.selected)}\" bounds=\"[{x1},{y1}][{x2},{y2}]\""
    )
    children = [c for c in n.children if not c.visual]
    if not children:
        out.append(f"<node {attrs} />")
        return
    out.append(f"<node {attrs}>")
    for i, child in enumerate(children):
        _node(child, i, out)
    out.append("</node>")


def dump(root: Node, rotation: int = 0) -> str:
    """The XML document for ``root``'s window, as ``uiautomator dump`` writes it (one line)."""
    out = [HEADER, f"<hierarchy rotation=\"{rotation}\">"]
    _node(root, 0, out)
    out.append("</hierarchy>")
    return "".join(out)
