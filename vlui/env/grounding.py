"""Grounding examples from the UI tree: (label, tap) pairs that name an element of a screen and point at it.

Every screen of the simulated phone comes with its ``uiautomator dump``, which says for free where each clickable
element is and what it is called (a launcher icon's "Clock" in the phone's locale, a settings row's title). Training
on "this label -> a tap at that element" besides the demonstrations (``data.grounding``, docs/training.md) teaches the
encoder and the fusion to find a named element on any layout, locale and wallpaper.

:func:`grounding_pairs` is a pure function of the dump: which elements it keeps and where it points is decided by the
rules in its docstring, and the tap is the dual-gesture :func:`vlui.env.actions.normalised_to_action` makes, as the
expert's taps are, checked with the environment's :class:`~vlui.env.actions.ActionParser` to be read as a tap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from vlui.env.actions import ActionParser, normalised_to_action
from vlui.env.ui_text import Element, parse_xml

__all__ = ["grounding_pairs", "label_of"]

MIN_VISIBLE = 0.5  # the fraction of an element's area that must be on the screen for its label to be shown there


def _one_line(s: str) -> str:
    return " ".join(s.split())


def label_of(element: Element, elements: Sequence[Element]) -> str:
    """What a clickable ``element`` is called, as a screen reader says it: its content description, else its text,
    else the first of these inside it that no clickable node in between claims (a settings row is named by its
    title, the first text in it; its summary comes after). ``elements`` is the whole dump, ``elements[i].index ==
    i``. Empty when it has none."""
    own = _one_line(element.content_desc) or _one_line(element.text)
    if own:
        return own
    for e in elements[element.index + 1:]:
        if not _inside(e, element, elements):
            break  # past its subtree: document order lists a node's descendants right after it
        if e.clickable:
            continue  # a clickable descendant is an element of its own, with its own name
        if not _claimed(e, element, elements):
            label = _one_line(e.content_desc) or _one_line(e.text)
            if label:
                return label
    return ""


def _inside(e: Element, ancestor: Element, elements: Sequence[Element]) -> bool:
    """Whether ``ancestor`` encloses ``e`` in the tree."""
    i = e.parent
    while i >= 0:
        if i == ancestor.index:
            return True
        i = elements[i].parent
    return False


def _claimed(e: Element, ancestor: Element, elements: Sequence[Element]) -> bool:
    """Whether a clickable node between ``ancestor`` and ``e`` (exclusive) encloses ``e``: its text names that node."""
    i = e.parent
    while i >= 0 and i != ancestor.index:
        if elements[i].clickable:
            return True
        i = elements[i].parent
    return False


def _reached(element: Element, x: float, y: float, elements: Sequence[Element]) -> bool:
    """Whether a tap at pixel ``(x, y)`` reaches ``element``: it is the topmost clickable node there whose ancestors
    all contain the point, as Android (and the simulated phone's ``hit``) dispatches touches: children are drawn
    over their parents and later siblings over earlier ones, which is document order. An element under a dialog,
    a keyboard or a list row drawn over it is not reached, and is not seen either."""

    def contains(e: Element) -> bool:
        x1, y1, x2, y2 = e.bounds
        return x1 <= x < x2 and y1 <= y < y2

    def on_path(e: Element) -> bool:
        while e.parent >= 0:
            e = elements[e.parent]
            if not contains(e):
                return False
        return True

    top = next((e for e in reversed(elements) if e.clickable and contains(e) and on_path(e)), None)
    return top is element


def grounding_pairs(xml: str, screen_size: tuple[int, int] | None = None,
                    parser: ActionParser | None = None) -> list[tuple[str, np.ndarray]]:
    """The ``(label, action)`` grounding pairs of one screen: ``action`` is the float32 dual-gesture in ``[-1, 1]``
    (:func:`~vlui.env.actions.normalised_to_action`) that taps the element named ``label``.

    Kept: enabled, clickable elements with a label (:func:`label_of`), at least :data:`MIN_VISIBLE` of whose area is
    on the screen, and that a tap at the centre of their on-screen part reaches (:func:`_reached`); that centre is the
    target, so it lies inside the element's bounds. Left out: zero-size elements, elements off the screen or mostly
    off it, elements under something drawn over them, taps the environment would read as a navigation key press, and
    every element of a label that names more than one kept element (the label points at no single one). The status
    and navigation bars are not in the simulated phone's dump (it holds the focused window only), so none of their
    icons is a pair. Pairs are in document order.

    Args:
        xml: a ``uiautomator dump`` (:func:`~vlui.env.ui_text.parse_xml` reads it; malformed XML raises
            :class:`~vlui.errors.VluiError`).
        screen_size: ``(width, height)`` in pixels; None: the far corner of the dump's root node, which is the
            screen on the simulated phone (its window always spans it).
        parser: reads the actions as the environment does (default: :class:`~vlui.env.actions.ActionParser`'s).
    """
    elements = parse_xml(xml)
    if not elements:
        return []
    width, height = screen_size if screen_size is not None else elements[0].bounds[2:]
    parser = parser or ActionParser()
    kept: list[tuple[str, np.ndarray]] = []
    for e in elements:
        if not (e.clickable and e.enabled):
            continue
        x1, y1, x2, y2 = e.bounds
        cx1, cy1, cx2, cy2 = max(x1, 0), max(y1, 0), min(x2, width), min(y2, height)
        if x2 <= x1 or y2 <= y1 or cx2 <= cx1 or cy2 <= cy1:
            continue
        if (cx2 - cx1) * (cy2 - cy1) < MIN_VISIBLE * (x2 - x1) * (y2 - y1):
            continue
        x, y = (cx1 + cx2) / 2, (cy1 + cy2) / 2
        if not _reached(e, x, y, elements):
            continue
        label = label_of(e, elements)
        action = normalised_to_action((y / height, x / width))
        if label and parser.parse(action).kind == "tap":
            kept.append((label, action))
    count = Counter(label for label, _ in kept)
    return [(label, action) for label, action in kept if count[label] == 1]
