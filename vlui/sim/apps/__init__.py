"""The simulated phone's apps. Each module builds its screens as widget trees from the device state.

One explicit map from app key to module; apps without a module of their own get a plausible main screen from
:mod:`vlui.sim.apps.generic`.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from vlui.android.apps import LAUNCHER_PKG, apps
from vlui.sim import systemui
from vlui.sim.apps import deskclock, dialer, generic, launcher, settings
from vlui.sim.ui import Node, mirror_tree
from vlui.sim.widgets import Ctx

if TYPE_CHECKING:
    from vlui.sim.phone import SimDevice

MODULES: dict[str, ModuleType] = {"settings": settings, "clock": deskclock, "phone": dialer}


def module(key: str) -> ModuleType:
    return MODULES.get(key, generic)


def build_window(dev: SimDevice, ctx: Ctx) -> Node:
    """The focused window's tree (what ``uiautomator dump`` reports), mirrored for right-to-left locales."""
    st = dev.state
    if st.overview:
        content = systemui.overview(dev, ctx)
        package = systemui.SYSTEMUI
    elif st.top is None:
        content = launcher.build(dev, ctx)
        package = LAUNCHER_PKG
    else:
        content = module(st.top).build(dev, ctx, st.tasks[st.top][-1])
        package = apps()[st.top].package
    root = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.height), package=package)
    decor = Node(cls="android.widget.LinearLayout", bounds=(0, 0, ctx.width, ctx.height), package=package)
    frame = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.height), package=package,
                 rid="android:id/content")
    frame.add(content)
    if st.dialog == "brightness":
        frame.add(systemui.brightness_dialog(dev, ctx))
    if st.focus is not None and not st.overview:
        frame.add(systemui.keyboard(dev, ctx))
    root.add(decor.add(frame))
    if ctx.locale.rtl:
        mirror_tree(root, ctx.width)
    return root


def on_launch(dev: SimDevice, key: str, created: bool) -> None:
    hook = getattr(module(key), "on_launch", None)
    if hook is not None:
        hook(dev, key, created)


def on_editor_action(dev: SimDevice, key: str, field: str) -> None:
    """ENTER in a focused field (the keyboard's action key, Search for the fields here): the app's own handling if
    it has one (the launcher starts the first app found, Settings' search hides the keyboard); otherwise the field
    keeps its text and focus."""
    hook = getattr(launcher if key == "launcher" else module(key), "on_editor_action", None)
    if hook is not None:
        hook(dev, field)


def on_back(dev: SimDevice, key: str) -> bool:
    """Let the app handle BACK itself (close a picker, end a search); True if it did."""
    hook = getattr(module(key), "on_back", None)
    return bool(hook and hook(dev, key))
