"""The simulator tests' hand on the phone: find widgets in the frame's tree (inside the simulator, as an agent never
can) and touch them, to test navigation, hit-testing and rendering one gesture at a time.

It knows no task. How a task is done is the expert's plan (:mod:`vlui.agents.expert`); a test that needs a phone in
a task's end state walks the expert through it (:func:`vlui.agents.walkthrough.walkthrough`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from vlui.sim.phone import SimDevice
from vlui.sim.ui import Node


def nodes(dev: SimDevice, pred: Callable[[Node], bool]) -> list[Node]:
    """The nodes of the phone's frame that ``pred`` holds for, in drawing order."""
    return [n for n in dev.frame().walk() if pred(n)]


def one(dev: SimDevice, pred: Callable[[Node], bool], what: str) -> Node:
    """The first node ``pred`` holds for; an assertion naming ``what`` when none is on screen."""
    found = nodes(dev, pred)
    assert found, f"{what} not on screen"
    return found[0]


def centre(node: Node) -> tuple[float, float]:
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) / 2, (y1 + y2) / 2


def tap(dev: SimDevice, node: Node) -> None:
    dev.tap(*centre(node))


def long_press(dev: SimDevice, node: Node) -> None:
    x, y = centre(node)
    dev.swipe(x, y, x, y, 800)  # ``input swipe x y x y 800``: a touch held in place


class Driver:
    def __init__(self, dev: SimDevice) -> None:
        self.dev = dev
        self.steps = 0

    # ------------------------------------------------------------------------------------------------ looking
    def find(self, pred: Callable[[Node], bool]) -> Node | None:
        for node in self.dev.frame().walk():
            x1, y1, x2, y2 = node.bounds
            if x2 > x1 and y2 > y1 and pred(node):
                return node
        return None

    def need(self, pred: Callable[[Node], bool], what: str) -> Node:
        node = self.find(pred)
        if node is None:
            raise AssertionError(f"{what} not on screen (snapshot {self.dev.snapshot.id})")
        return node

    def texts(self) -> list[str]:
        """The texts of the window's nodes, in the order ``uiautomator dump`` lists them (what an agent reads)."""
        return [n.get("text") for n in ET.fromstring(self.dev.ui_xml()).iter("node") if n.get("text")]

    def label(self, key: str) -> str:
        return self.dev.locale.t(key)

    # ------------------------------------------------------------------------------------------------ acting
    def tap(self, node: Node) -> None:
        x1, y1, x2, y2 = node.bounds
        self.dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
        self.steps += 1

    def tap_rid(self, rid: str) -> None:
        self.tap(self.need(lambda n: n.rid == rid, rid))

    def swipe(self, fx1: float, fy1: float, fx2: float, fy2: float) -> None:
        w, h = self.dev.size
        self.dev.swipe(fx1 * w, fy1 * h, fx2 * w, fy2 * h)
        self.steps += 1

    def app_icon(self, key: str) -> Node:
        """The app's launcher icon: on the home screen, or else in the app drawer (which this opens)."""
        label = self.label(f"app.{key}")
        icon = self.find(lambda n: n.desc == label and n.on_tap is not None)
        if icon is None:
            self.swipe(0.5, 0.7, 0.5, 0.2)
            icon = self.need(lambda n: n.desc == label and n.on_tap is not None, f"{key} icon in the drawer")
        return icon

    def open_app(self, key: str) -> None:
        """Tap the app's icon on the home screen, or in the app drawer."""
        self.tap(self.app_icon(key))

    def scroll_to(self, pred: Callable[[Node], bool], what: str, tries: int = 4) -> Node:
        for _ in range(tries):
            node = self.find(pred)
            if node is not None and node.bounds[3] - node.bounds[1] > 4:
                return node
            self.swipe(0.5, 0.8, 0.5, 0.3)
        return self.need(pred, what)

    def tap_title(self, key: str) -> None:
        """Tap the settings row titled with string ``key``, scrolling to it if needed."""
        title = self.label(key)
        row = self.scroll_to(lambda n: n.text == title and n.rid == "android:id/title", title)
        self.tap(row)
