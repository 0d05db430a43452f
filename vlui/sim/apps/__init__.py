"""The simulated phone's apps. Each module builds its screens as widget trees from the device state.

One explicit registry (:data:`APPS`) from app key to what the app does: how it builds a screen, the state it keeps
and the hooks it handles itself. Apps without a module of their own get a plausible main screen from
:mod:`vlui.sim.apps.generic`.

An app's own state is a dataclass typed in its module (Clock's ``ClockState``) and named in its entry. The phone
boots with one of each (:func:`app_states`, kept in ``DeviceState.apps`` by app key: :mod:`vlui.android.state` sits
below the apps and knows none of their types), and a snapshot's or a task's entry for an app is checked against the
app's type here (:func:`app_state_problem`) and set with :func:`vlui.android.state.set_fields`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from vlui.android.apps import LAUNCHER_PKG, app_info, apps
from vlui.android.state import EDIT_TEXT_MAX, DeviceState, fields_problem, system_fields
from vlui.errors import VluiError
from vlui.sim import systemui
from vlui.sim.apps import (
    calculator,
    calendar,
    chooser,
    chrome,
    contacts,
    deskclock,
    dialer,
    files,
    generic,
    instagram,
    launcher,
    messages,
    settings,
    snapseed,
    wikipedia,
    walmart,
)
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node, mirror_tree
from vlui.sim.widgets import Ctx


@dataclass(frozen=True)
class App:
    """An app of the simulated phone: ``build(dev, ctx, screen)`` draws the screen on top of its task (``screen``: a
    dict typed in the app's module, ``{"screen": <name>, ...}``), ``screens(key)`` names the screens it can draw,
    ``state`` is the dataclass of what it remembers (None: nothing beyond its screens and text fields; every field
    has a default, so that ``state()`` is the app's state on a phone that has just booted), ``entry_problem`` says
    what the state's type cannot about a snapshot's or a task's entry for the app (Calendar: that a date is a date),
    ``max_length(field)`` is what each of its text fields holds at most, where the app sets a length (Messages'
    compose field; :data:`vlui.android.state.EDIT_TEXT_MAX` otherwise), and each hook, where the app has one,
    handles that event itself (see :func:`on_launch`, :func:`on_back`, :func:`on_editor_action`,
    :func:`on_state_set`, :func:`on_restart`); ``shared_prefs`` gives the text of one of its shared-preferences
    files (``prefs_files`` names them), or None where it has not written it (:meth:`SimDevice.shared_prefs`)."""

    build: Callable[[Phone, Ctx, Any], Node]
    screens: Callable[[str], Collection[str]] = lambda key: ("main",)
    state: Callable[[], Any] | None = None
    entry_problem: Callable[[Any], str | None] | None = None
    on_launch: Callable[[Phone, str, bool], None] | None = None
    on_back: Callable[[Phone, str], bool] | None = None
    on_editor_action: Callable[[Phone, str], None] | None = None
    on_state_set: Callable[[DeviceState, dict[str, Any]], None] | None = None
    on_restart: Callable[[Phone], None] | None = None
    max_length: Callable[[str], int] = lambda field: EDIT_TEXT_MAX
    shared_prefs: Callable[[Phone, str], str | None] | None = None  # a preferences file's text, by its name
    prefs_files: tuple[str, ...] = ()  # the names of the preferences files it keeps


GENERIC = App(generic.build, generic.screen_names, on_back=generic.on_back)
APPS: dict[str, App] = {
    "settings": App(settings.build, lambda key: settings.SCREENS, on_editor_action=settings.on_editor_action),
    "clock": App(deskclock.build, lambda key: deskclock.SCREENS, state=deskclock.ClockState,
                 on_back=deskclock.on_back, on_restart=deskclock.on_restart),
    "phone": App(dialer.build, lambda key: dialer.SCREENS, state=dialer.DialerState, on_launch=dialer.on_launch,
                 on_back=dialer.on_back, on_state_set=dialer.on_state_set, on_restart=dialer.on_restart),
    "calendar": App(calendar.build, lambda key: calendar.SCREENS, state=calendar.CalendarState,
                    entry_problem=calendar.entry_problem),
    "contacts": App(contacts.build, lambda key: contacts.SCREENS, state=contacts.ContactsState),
    "messages": App(messages.build, lambda key: messages.SCREENS, state=messages.MessagesState,
                    on_back=messages.on_back, on_editor_action=messages.on_editor_action,
                    max_length=messages.max_length),
    "chrome": App(chrome.build, lambda key: chrome.SCREENS, state=chrome.ChromeState),
    "files": App(files.build, lambda key: files.SCREENS, state=files.FilesState, entry_problem=files.entry_problem,
                 on_back=files.on_back, on_editor_action=files.on_editor_action),
    "calculator": App(calculator.build, lambda key: calculator.SCREENS, state=calculator.CalculatorState),
    "snapseed": App(snapseed.build, lambda key: snapseed.SCREENS, state=snapseed.SnapseedState,
                    on_back=snapseed.on_back, shared_prefs=snapseed.shared_prefs,
                    prefs_files=(snapseed.PREFS_FILE,)),
    "wikipedia": App(wikipedia.build, lambda key: wikipedia.SCREENS, state=wikipedia.WikipediaState,
                     entry_problem=wikipedia.entry_problem, on_launch=wikipedia.on_launch, on_back=wikipedia.on_back,
                     on_state_set=wikipedia.on_state_set, shared_prefs=wikipedia.shared_prefs,
                     prefs_files=(wikipedia.PREFS_FILE,)),
    "walmart": App(walmart.build, lambda key: walmart.SCREENS, state=walmart.WalmartState,
                   entry_problem=walmart.entry_problem, on_back=walmart.on_back),
    "instagram": App(instagram.build, lambda key: instagram.SCREENS, on_back=instagram.on_back),
}


def app(key: str) -> App:
    """The app ``key`` (an app key of :func:`vlui.android.apps.apps`)."""
    return APPS.get(key, GENERIC)


def app_states() -> dict[str, Any]:
    """Each app's own state on a phone that has just booted, by app key (``DeviceState.apps``)."""
    return {key: entry.state() for key, entry in APPS.items() if entry.state is not None}


def app_state_problem(fields: dict[str, Any]) -> str | None:
    """Why the apps' entries in a snapshot's or a task's state ``fields`` (those under an app's key; the system
    fields are :func:`vlui.android.state.state_problem`'s) cannot set the apps' states, or None: an app that keeps
    none, the app's own ``entry_problem``, or :func:`vlui.android.state.fields_problem` against the app's type
    (``clock: unknown field 'tabb'; fields: alarms, ...``)."""
    system = system_fields()
    for key, value in fields.items():
        if key in system or key not in apps():
            continue
        entry = app(key)
        if entry.state is None:
            with_state = ", ".join(k for k, e in APPS.items() if e.state is not None)
            return f"{key}: the app keeps no state a snapshot or a task sets; apps that do: {with_state}"
        # the app's own check first: it knows what a plain type check would misread (an unquoted YAML date)
        problem = entry.entry_problem(value) if entry.entry_problem is not None else None
        problem = problem or fields_problem(value, entry.state, key)
        if problem:
            return problem
    return None


def on_state_set(st: DeviceState, fields: dict[str, Any]) -> None:
    """Once a snapshot's or a task's state ``fields`` is set: each app with an entry there makes what the entry
    implies true (the dialer's call in progress puts the in-call screen in front)."""
    for key, value in fields.items():
        hook = APPS[key].on_state_set if key in APPS else None
        if hook is not None:
            hook(st, value)


def on_restart(dev: Phone) -> None:
    """The framework restarted (``setprop ctl.restart zygote``): each app forgets what only its process held."""
    for entry in APPS.values():
        if entry.on_restart is not None:
            entry.on_restart(dev)


def check_screen(key: str, screen: str) -> None:
    """That app ``key`` has a screen ``screen`` (or the share sheet, which any app's task may hold: it starts in the
    task of the app that shares): a one-line error naming its screens otherwise."""
    names = (*app(key).screens(key), chooser.SCREEN)
    if screen not in names:
        raise VluiError(f"the {key} app has no screen {screen!r}; its screens: {', '.join(names)}")


def window_inputs(dev: Phone, ctx: Ctx) -> tuple | None:
    """What :func:`build_window` builds the window from, where that is known exactly, as a value to compare: the
    home screen with nothing over it (no shade, overview, drawer, dialog, prompt or keyboard) is built from ``ctx``
    and :func:`launcher.home_shown` alone. None for every other window (built anew each time)."""
    st = dev.state
    if (st.top is None and not (st.shade or st.overview or st.drawer) and st.dialog is None and st.permission is None
            and st.focus is None):
        return "home", ctx, launcher.home_shown(dev)
    return None


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
        package = app_info(st.top, st.dialer).package
    elif st.tasks[st.top][-1]["screen"] == chooser.SCREEN:  # the framework's share sheet, on the app's task
        content = chooser.build(dev, ctx, st.tasks[st.top][-1])
        package = chooser.PKG
    else:
        content = app(st.top).build(dev, ctx, st.tasks[st.top][-1])
        package = app_info(st.top, st.dialer).package
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


def max_length(key: str, field: str) -> int:
    """The most characters app ``key``'s text field ``field`` holds (what its LengthFilter lets in)."""
    return app(key).max_length(field)


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
