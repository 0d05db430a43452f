"""The simulated phone's apps. Each module builds its screens as widget trees from the device state.

One explicit registry (:data:`APPS`) from app key to what the app does: how it builds a screen and the hooks it
handles itself. Apps without a module of their own get a plausible main screen from :mod:`vlui.sim.apps.generic`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from vlui.android.apps import LAUNCHER_PKG, apps
from vlui.errors import VluiError
from vlui.sim import systemui
from vlui.sim.apps import deskclock, dialer, generic, launcher, settings
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node, mirror_tree
from vlui.sim.widgets import Ctx


@dataclass(frozen=True)
class App:
    """An app of the simulated phone: ``build(dev, ctx, screen)`` draws the screen on top of its task (``screen``: a
    dict typed in the app's module, ``{"screen": <name>, ...}``), ``screens(key)`` names the screens it can draw, and
    each hook, where the app has one, handles that event itself (see :func:`on_launch`, :func:`on_back`,
    :func:`on_editor_action`)."""

    build: Callable[[Phone, Ctx, Any], Node]
    screens: Callable[[str], Collection[str]] = lambda key: ("main",)
    on_launch: Callable[[Phone, str, bool], None] | None = None
    on_back: Callable[[Phone, str], bool] | None = None
    on_editor_action: Callable[[Phone, str], None] | None = None


GENERIC = App(generic.build, generic.screen_names, on_back=generic.on_back)
APPS: dict[str, App] = {
    "settings": App(settings.build, lambda key: settings.SCREENS, on_editor_action=settings.on_editor_action),
    "clock": App(deskclock.build, lambda key: deskclock.SCREENS, on_back=deskclock.on_back),
    "phone": App(dialer.build, lambda key: dialer.SCREENS, on_launch=dialer.on_launch, on_back=dialer.on_back),
}


def app(key: str) -> App:
    """The app ``key`` (an app key of :func:`vlui.android.apps.apps`)."""
    return APPS.get(key, GENERIC)


def check_screen(key: str, screen: str) -> None:
    """That app ``key`` has a screen ``screen``: a one-line error naming its screens otherwise."""
    names = app(key).screens(key)
    if screen not in names:
        raise VluiError(f"the {key} app has no screen {screen!r}; its screens: {', '.join(names)}")


def build_window(dev: Phone, ctx: Ctx) -> Node:
    """The focused window's tree (what ``uiautomator dump`` reports), mirrored for right-to-left locales."""
    st = dev.state
    if st.shade:
        content = systemui.notification_shade(dev, ctx)
        package = systemui.SYSTEMUI
    elif st.overview:
        content = systemui.overview(dev, ctx)
        package = systemui.SYSTEMUI
    elif st.top is None:
        content = launcher.build(dev, ctx)
        package = LAUNCHER_PKG
    elif st.starting is not None and st.starting["app"] == st.top:
        content = systemui.starting_window(dev, ctx, st.top)
        package = apps()[st.top].package
    else:
        content = app(st.top).build(dev, ctx, st.tasks[st.top][-1])
        package = apps()[st.top].package
    root = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.height), package=package)
    decor = Node(cls="android.widget.LinearLayout", bounds=(0, 0, ctx.width, ctx.height), package=package)
    frame = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.height), package=package,
                 rid="android:id/content")
    frame.add(content)
    if st.dialog == "brightness":
        frame.add(systemui.brightness_dialog(dev, ctx))
    if st.permission is not None and st.permission["app"] == st.top and not st.overview and not st.shade:
        frame.add(systemui.permission_prompt(dev, ctx))
    if st.focus is not None and not st.overview:
        frame.add(systemui.keyboard(dev, ctx))
    root.add(decor.add(frame))
    if ctx.locale.rtl:
        mirror_tree(root, ctx.width)
    return root


def on_launch(dev: Phone, key: str, created: bool) -> None:
    hook = app(key).on_launch
    if hook is not None:
        hook(dev, key, created)


def on_editor_action(dev: Phone, key: str, field: str) -> None:
    """ENTER in a focused field (the keyboard's action key, Search for the fields here): the app's own handling if
    it has one (the launcher starts the first app found, Settings' search hides the keyboard); otherwise the field
    keeps its text and focus."""
    hook = launcher.on_editor_action if key == "launcher" else app(key).on_editor_action
    if hook is not None:
        hook(dev, field)


def on_back(dev: Phone, key: str) -> bool:
    """Let the app handle BACK itself (close a picker, end a search); True if it did."""
    hook = app(key).on_back
    return bool(hook and hook(dev, key))
