"""The phone as its apps see it: the small public protocol that the simulated apps, System UI, the platform services
and the perturbations program against, instead of :class:`~vlui.sim.phone.SimDevice` itself.

An app reads the state and the configuration, posts log lines, opens activities and screens, moves between tasks,
gives a text field the focus and says when it changed the state behind the phone's back. Settings are read and
written on ``state`` through :mod:`vlui.sim.services` (which logs as Android's services do), and a system dialog
shows when ``state.dialog`` names it. :class:`~vlui.sim.phone.SimDevice` implements the protocol; the apps never import
it, so the phone can import them without a cycle, and a test phone can stand in for it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from vlui.android.apps import AppInfo
from vlui.android.i18n import Locale
from vlui.android.snapshot import Snapshot
from vlui.android.state import DeviceState
from vlui.sim.widgets import Ctx


class Phone(Protocol):
    """What the simulated apps may use of the phone they run on."""

    # what the apps read: the state they change, the configuration they draw for
    state: DeviceState
    snapshot: Snapshot
    locale: Locale
    profile: dict[str, Any]

    def ctx(self) -> Ctx:
        """The screen's geometry, units, theme and strings, for building a screen."""
        ...

    def now(self) -> datetime:
        """The virtual clock's local time."""
        ...

    # post a log line
    def logi(self, tag: str, message: str, level: str = "I", app: str | None = None, offset_ms: int = 0,
             pid: int | None = None) -> None:
        """A log line from ``app``'s process (default: system_server), ``offset_ms`` into the current step."""
        ...

    # open an activity or a screen
    def launch(self, key: str, bounds: tuple[int, int, int, int] | None = None, screen: str = "main") -> None:
        """Start ``key``'s launcher activity as the launcher does, or bring its task to the front."""
        ...

    def start_activity(self, key: str, screen: str, component: str, extras: bool = True, intent: str = "",
                       **params: Any) -> None:
        """Push a screen of ``key``'s app that Android implements as its own activity (logs the START line)."""
        ...

    def start_for_intent(self, key: str, activity: str, intent: str, caller_uid: int) -> bool:
        """Log the START of an activity another process asked for; returns whether the app had no task yet."""
        ...

    def start_process(self, key: str, info: AppInfo, activity: str) -> None:
        """``key``'s process starts for its ``activity``, unless it is running."""
        ...

    def displayed(self, key: str, activity: str) -> None:
        """The line ActivityTaskManager logs once a started activity has drawn its first frame."""
        ...

    def push(self, key: str, screen: str, **params: Any) -> None:
        """A screen of ``key``'s app on top of its task (a screen inside the same activity: nothing is logged)."""
        ...

    def top_screen(self) -> dict[str, Any] | None:
        """The screen in front (None on the home screen)."""
        ...

    # tasks and the navigation keys
    def bring_to_front(self, key: str) -> None:
        """``key``'s task comes to the front."""
        ...

    def remove_task(self, key: str) -> None:
        """``key``'s task is gone (the overview's dismiss)."""
        ...

    def press_back(self) -> None: ...

    def press_home(self) -> None: ...

    def press_overview(self) -> None: ...

    # text input
    def focus_field(self, key: str, field: str, package: str | None = None) -> None:
        """Give ``key``'s text field the input focus: the keyboard comes up."""
        ...

    def type_into_focus(self, value: str) -> None:
        """Append ``value`` to the focused text field (or the dial pad's digits when it shows)."""
        ...

    def delete_in_focus(self) -> None:
        """Delete the last character of the focused text field (the keyboard's backspace, KEYCODE_DEL)."""
        ...

    def state_changed(self) -> None:
        """The state changed outside a gesture: the next frame is drawn anew."""
        ...
