"""What the apps whose one activity shows its tabs in a bar at the bottom (Walmart, Instagram) do alike: the tab shown
is the ``tab`` of the task's ``main`` screen; choosing a tab closes the screens opened over the tabs; BACK on a tab
other than the first goes to the first, and on the first leaves the app."""

from __future__ import annotations

from collections.abc import Callable

from vlui.sim.protocol import Phone


def select_tab(dev: Phone, key: str, tab: str) -> None:
    """App ``key`` shows its tab ``tab``: the screens opened over its tabs close."""
    stack = dev.state.tasks[key]
    while len(stack) > 1 and stack[-1]["screen"] != "main":
        stack.pop()
    stack[-1] = {"screen": "main", "tab": tab}
    dev.state.focus = None


def back_to(first: str) -> Callable[[Phone, str], bool]:
    """The app's BACK hook: on a tab other than ``first``, ``first`` shows (True); elsewhere BACK is the phone's."""
    def on_back(dev: Phone, key: str) -> bool:
        screen = dev.top_screen()
        if screen and screen["screen"] == "main" and screen.get("tab", first) != first:
            select_tab(dev, key, first)
            return True
        return False
    return on_back
