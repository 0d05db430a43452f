"""The simulated Android 10 phone: a :class:`~vlui.device.Device` in pure Python.

State (:class:`~vlui.android.state.DeviceState`) plus apps that build widget trees from it. Every frame's tree is used
three ways, so they can never disagree: drawn to pixels, serialised to uiautomator XML, and hit-tested by touches.
Handlers change the state and write log lines with the tags and wording of a real device. Time is virtual: each
input advances the clock by ``step_ms``; nothing ever sleeps.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
import random
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from vlui.android.apps import (
    LAUNCHER_PKG,
    SYSTEM_PID,
    SYSTEMUI_PID,
    AOSP_DIALER,
    AppInfo,
    app_info,
    app_uid,
    apps,
    on_phone,
    short_component,
    uid_name,
)
from vlui.android.i18n import get_locale
from vlui.android.keys import KEY_CHARS, KEYCODE_NAMES
from vlui.android.launcher import explicit_layout, fit_layout, launchable
from vlui.android.logcat import EPOCH, LogBuffer
from vlui.android.snapshot import Snapshot, load_snapshot
from vlui.android.state import (
    EDIT_TEXT_MAX,
    VOLUME_MAX,
    VOLUME_MIN,
    DeviceState,
    brightness_percent,
    installed_problem,
    set_fields,
)
from vlui.device import KEYCODE_ENTER, KEYS, Device, HomeScreen, PinnedApp, state_meets
from vlui.errors import VluiError
from vlui.sim import services, uixml
from vlui.sim.apps import (
    app_state_problem,
    app_states,
    build_window,
    check_screen,
    max_length,
    on_back,
    on_editor_action,
    on_launch,
    on_state_set,
    window_inputs,
)
from vlui.sim.apps import app as sim_app
from vlui.sim.apps.calculator import CalculatorState, evaluate, formula_text
from vlui.sim.apps.deskclock import alarm_rows
from vlui.sim.apps.dialer import DIALABLE, dialer_state
from vlui.sim.apps.messages import sms_rows
from vlui.sim.noise import noise_lines
from vlui.sim.perturb import perturb
from vlui.sim.render import SHARED_FRAMES, FrameCache, Renderer, Style
from vlui.sim.systemui import (
    GRANT_ACTIVITY,
    NAV_POINTS,
    PERMISSION_CONTROLLER,
    PERMISSION_GROUPS,
    TABLET_NAV_POINTS,
    headsup,
    nav_bar,
    status_bar,
    status_shown,
)
from vlui.sim.theme import theme
from vlui.sim.ui import Node, hit
from vlui.sim.widgets import Ctx

BOOT_STATES_KEPT = 4096
RENDERERS_KEPT = 8  # configurations whose renderer (with its last frame drawn) a device keeps
TOUCH_SLOP_DP = 8  # ViewConfiguration's touch slop: a touch that moves less is not a drag
LONG_PRESS_TIMEOUT_MS = 500  # ViewConfiguration.DEFAULT_LONG_PRESS_TIMEOUT: a touch held this long is a long press
KEPT = 6  # parts of the screen a device keeps by what they are built from (the bars, the home screen)


def _apply_state(state: DeviceState, fields: dict[str, Any], where: str) -> None:
    """Set ``fields`` of ``state`` (a snapshot's or a task's starting state): a system field by name, an app's own
    state under the app's key, checked against the app's type first."""
    problem = app_state_problem(fields)
    if problem:
        raise VluiError(f"{where}: {problem}")
    for name, value in fields.items():
        if name in state.apps:
            set_fields(state.apps[name], value)
            continue
        if not hasattr(state, name):
            raise VluiError(f"{where}: unknown state field {name!r}")
        current = getattr(state, name)
        if name == "volume" and isinstance(value, dict):  # the streams named change; the others keep their level
            unknown = sorted(set(value) - set(current))
            if unknown:
                raise VluiError(f"{where}: unknown volume stream(s) {', '.join(unknown)}; streams: "
                                f"{', '.join(current)}")
            value = {**current, **value}
        setattr(state, name, copy.deepcopy(value))
    if "tasks" in fields or "installed" in fields:
        _open_tasks(state, where)
    on_state_set(state, fields)


def _open_tasks(state: DeviceState, where: str) -> None:
    """Apps that a starting state leaves open (its ``tasks``, checked with ``recents`` and ``top`` by
    :func:`vlui.android.state.state_problem`): each must be on the phone (a third-party app installed), each screen
    one its app draws, and each app has run, so its process is alive (switching to it from the overview starts
    none); without a ``top`` of its own the home screen is in front."""
    for key, stack in state.tasks.items():
        if not on_phone(key, state.installed):
            raise VluiError(f"{where}: tasks: {_not_installed(state, key)}")
        for screen in stack:
            try:
                check_screen(key, screen["screen"])
            except VluiError as err:
                raise VluiError(f"{where}: tasks: {err}") from None
        if key not in state.running:
            state.running.append(key)
            state.pids[key] = state.next_pid
            state.next_pid += 41
    if state.top is not None and state.top not in state.tasks:
        state.top = None


def _not_installed(state: DeviceState, key: str) -> str:
    return (f"the {key} app is not installed on the phone (installed: "
            f"{', '.join(state.installed) or 'no third-party app'})")


def check_snapshot_state(snap: Snapshot) -> None:
    """That the apps' entries in ``snap``'s state fit the apps' own types (reading the snapshot checked the rest,
    which needs no app): a one-line error naming the snapshot otherwise."""
    problem = app_state_problem(snap.state)
    if problem:
        raise VluiError(f"{snap.source or snap.id}: state: {problem}")


# Values a task's state_check may read that the state holds in another form: what Settings shows the user, the
# texts sent as the SMS provider's sent box holds them (what a real phone's state check reads: content://sms/sent),
# and Clock's alarms as its database holds them (what B-MoCA's evaluators read: alarms.db)
# What a task's truth (vlui/tasks/truth.py) reads besides: the screen in front (``front.app``: the app, "launcher" or
# "overview"; ``front.screen`` and the screen's own fields, e.g. ``front.tab``) and the Calculator's formula, keys as
# their letters with a period for the point whatever the language, and its value
STATE_VIEWS = {"brightness_percent": lambda st: brightness_percent(st.brightness),
               "sms_sent": lambda st: [{"address": r["address"], "body": r["body"]} for r in sms_rows(st, "sent")],
               "alarms": alarm_rows,
               "front": lambda st: _front(st),
               "calculator_formula": lambda st: formula_text(st.app("calculator", CalculatorState).keys, "."),
               "calculator_value": lambda st: evaluate(st.app("calculator", CalculatorState).keys,
                                                       st.app("calculator", CalculatorState).degrees)}


def _front(state: DeviceState) -> dict[str, Any]:
    if state.overview:
        return {"app": "overview"}
    if state.top is None or not state.tasks.get(state.top):
        return {"app": "launcher", "drawer": state.drawer}
    return {"app": state.top, **state.tasks[state.top][-1]}


def _state_value(state: DeviceState, path: str) -> Any:
    """A ``state_check`` key's value: a view (``brightness_percent``, ``front.app``: a view's field) or a dotted path
    (``volume.media``, an app's own state by its key: ``clock.stopwatch.running``). A path through nothing (a field of
    ``phone.call`` with no call, of a screen that lacks it) is None."""
    name, *keys = path.split(".")
    if name in STATE_VIEWS:
        value = STATE_VIEWS[name](state)
    elif name not in state.apps and not hasattr(state, name):
        raise VluiError(f"state_check: unknown state field {name!r} (or a view: {', '.join(STATE_VIEWS)}; or an "
                        f"app's own state: {', '.join(state.apps)})")
    else:
        value = state.apps[name] if name in state.apps else getattr(state, name)
    for key in keys:
        if value is None or (name == "front" and isinstance(value, dict) and key not in value):
            return None
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif dataclasses.is_dataclass(value) and key in {f.name for f in dataclasses.fields(value)}:
            value = getattr(value, key)
        else:
            raise VluiError(f"state_check: {path!r} names nothing in the device state")
    return value


class SimDevice(Device):
    """A simulated phone loaded from a snapshot (an id in ``envs/`` or a snapshot file). Its frames and observations
    come from ``frames``, by default the process's cache that every phone shares; None: each configuration's
    renderer keeps its own, as before the cache was shared (the same pixels either way). ``reuse`` keeps work that a
    reset or a step can take again: the boot states kept pickled (a reset loads one; a deep copy took twice as long),
    the UI dump of a window not rebuilt since, and the status and navigation bars while what they are built from
    stays equal; False: each made anew, as before (the same dumps, observations and log either way, which
    tests/sim/test_reuse.py checks)."""

    def __init__(self, snapshot: str | Path | Snapshot = "000", envs_dir: str | Path | None = None,
                 step_ms: int = 3000, noise: bool = True, incremental: bool = True,
                 frames: FrameCache | None = SHARED_FRAMES, reuse: bool = True) -> None:
        self.envs_dir = envs_dir
        self.reuse = reuse
        self.incremental = incremental  # a new screen drawn over the last one; False: whole (the same pixels)
        self.frames = frames
        self.step_ms = step_ms
        self.noise = noise
        self.log = LogBuffer()
        # boot state by snapshot: pickled (reuse) or as is
        self._initial: OrderedDict[str, bytes | DeviceState] = OrderedDict()
        self._renderers: OrderedDict[tuple, Renderer] = OrderedDict()
        self._frame: Node | None = None
        self._window: Node | None = None
        self._dumped: tuple[Node, str] | None = None  # the last UI dump and the window it is of
        self._kept: list[tuple[tuple, Node]] = []  # parts of the last frames (reuse), newest first, by their inputs
        self.load_snapshot(snapshot)

    # ------------------------------------------------------------------------------------------ configuration
    def load_snapshot(self, snapshot: str | Path | Snapshot) -> None:
        snap = load_snapshot(snapshot, self.envs_dir)
        self._configure(snap)
        key = repr(snap)
        if key not in self._initial:
            boot = self._boot_state(snap)
            self._initial[key] = pickle.dumps(boot, pickle.HIGHEST_PROTOCOL) if self.reuse else boot
            while len(self._initial) > BOOT_STATES_KEPT:
                self._initial.popitem(last=False)
        boot = self._initial[key]
        self.state = pickle.loads(boot) if isinstance(boot, bytes) else copy.deepcopy(boot)
        self.log.clear()
        self._last_log_ms = 0
        self._rng = random.Random(f"{snap.id}:{snap.time}")
        self.state_changed()

    def reconfigure(self, **changes: Any) -> None:
        """Change the configuration (density, font scale, locale, wallpaper, theme, home layout) of the running
        phone, as settings and shell commands do on a device: apps and their state stay as they are."""
        self._configure(dataclasses.replace(self.snapshot, **changes))

    def _configure(self, snap: Snapshot) -> None:
        """Take ``snap`` as the configuration and everything derived from it; the frame is rebuilt on next use."""
        self.snapshot = snap
        self.locale = get_locale(snap.locale)
        self.profile = snap.profile
        self.width, self.height = snap.size
        self.tablet = self.profile["kind"] == "tablet"
        self.state_changed()

    def _boot_state(self, snap: Snapshot) -> DeviceState:
        check_snapshot_state(snap)
        start = snap.start_time
        state = DeviceState(time_ms=int((start - EPOCH).total_seconds() * 1000), dark_theme=snap.dark_theme,
                            languages=[snap.locale], apps=app_states())
        _apply_state(state, snap.state, f"{snap.source or snap.id}: state")
        return state

    def install_apps(self, pinned: Sequence[PinnedApp], home: HomeScreen | None = None) -> None:
        """The apps join the phone's third-party apps (``state.installed``) as if the snapshot had been made with
        them: nothing is logged and no time passes. The drawer lists them; the home screen stays as it is, or, given
        ``home``, becomes that one on this phone's grid (:func:`~vlui.android.launcher.fit_layout`) until the next
        snapshot is loaded. AOSP's Dialer pinned as the Phone app makes it the phone's Phone app (``state.dialer``),
        as on an image that has it."""
        if any(app.key == "phone" and app.package == AOSP_DIALER.package for app in pinned):
            self.state.dialer = "aosp"
            pinned = [app for app in pinned if app.key != "phone"]
        keys = [app.key for app in pinned]
        problem = installed_problem(keys)
        if problem:
            raise VluiError(problem)
        for app in pinned:
            if app.package != apps()[app.key].package:
                raise VluiError(f"{app.name} is {app.package} at version {app.version}, but vlui's {app.key} app is "
                                f"{apps()[app.key].package} (vlui/android/data/apps.yaml)")
        self.state.installed = self.state.installed + [k for k in keys if k not in self.state.installed]
        if home is not None:
            layout = fit_layout(home, *self.snapshot.home_grid, launchable(self.state.installed))
            self._configure(dataclasses.replace(self.snapshot, home_layout=explicit_layout(layout)))
        self.state_changed()

    def set_state(self, fields: dict[str, Any]) -> None:
        self.state = self.state.copy()
        _apply_state(self.state, fields, "the task's starting state")
        self.state_changed()

    def check_state(self, spec: dict[str, Any]) -> bool:
        return state_meets(spec, lambda path: _state_value(self.state, path))

    def state_value(self, path: str) -> Any:
        return copy.deepcopy(_state_value(self.state, path))

    def shared_prefs(self, app: str, file: str) -> str | None:
        """The app's file as its simulated module writes it; None where the phone has not installed the app (no
        ``/data/data/<package>``). An app whose module keeps no preferences files (or one vlui lacks) cannot be
        read, as the base class says."""
        hook = sim_app(app).shared_prefs if app in apps() else None
        if hook is None:
            return super().shared_prefs(app, file)
        if not on_phone(app, self.state.installed):
            return None
        return hook(self, file)

    # ------------------------------------------------------------------------------------------ Device API
    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height

    @property
    def density(self) -> int:
        return self.snapshot.dpi

    def locale_id(self) -> str:
        return self.snapshot.locale

    def screenshot(self) -> np.ndarray:
        return self.screen().copy()

    def screen(self) -> np.ndarray:
        """The full-resolution screen ``(H, W, 3)`` without a copy: the renderer's cached frame, read-only. The same
        drawing gives the same array object, so callers can cache what they derive from it by identity."""
        return self.renderer().render(self.frame())

    def observation(self, height: int, width: int) -> np.ndarray:
        return self.renderer().observation(self.frame(), width, height).copy()

    def ui_xml(self) -> str:
        self.frame()
        if self._dumped is not None and self._dumped[0] is self._window:
            return self._dumped[1]
        xml = uixml.dump(self._window)
        if self.reuse:
            self._dumped = (self._window, xml)
        return xml

    def tap(self, x: float, y: float) -> None:
        x, y = self._point(x, y)
        if x is not None:
            node = hit(self.frame(), x, y)
            if node is not None:
                node.on_tap(int(x), int(y))
        self._after_input()

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None:
        a = self._point(x1, y1)
        if a[0] is not None:
            bx = min(max(x2, 0), self.width - 1) if math.isfinite(x2) else a[0]
            by = min(max(y2, 0), self.height - 1) if math.isfinite(y2) else a[1]
            if math.hypot(bx - a[0], by - a[1]) < TOUCH_SLOP_DP * self.snapshot.dpi / 160:
                self._press(int(a[0]), int(a[1]), duration_ms)
            else:
                self._dispatch_swipe(int(a[0]), int(a[1]), int(bx), int(by), duration_ms)
        self._after_input()

    def _press(self, x: int, y: int, duration_ms: int) -> None:
        """A touch that stays within the touch slop (``input swipe x y x y 800``): the view under it that is
        clickable or long-clickable gets it. Held for the long-press timeout, a view with a long-click action
        performs it; otherwise Android's View clicks on release, however long the touch was held."""
        node = hit(self.frame(), x, y, ("on_tap", "on_long_press"))
        if node is None:
            return
        if duration_ms >= LONG_PRESS_TIMEOUT_MS and node.on_long_press is not None:
            node.on_long_press(x, y)
        elif node.on_tap is not None:
            node.on_tap(x, y)

    def key(self, name: str) -> None:
        if name not in KEYS:
            raise VluiError(f"unknown key {name!r}; choose from: {', '.join(KEYS)}")
        self.press_keycode({"HOME": 3, "BACK": 4, "APP_SWITCH": 187}[name])

    def keyboard_enter(self) -> None:
        self.press_keycode(KEYCODE_ENTER)

    def open_app(self, app: str) -> None:
        """``app``'s launcher activity started, as ``monkey -p PACKAGE -c android.intent.category.LAUNCHER 1`` starts
        it; an app the phone does not have starts nothing (monkey finds no activity). Time advances as for input."""
        if on_phone(app, self.state.installed):
            self.launch(app)
        self._after_input()

    def wait(self) -> None:
        """A step with no input: the clock advances by ``step_ms`` (an app that was starting has drawn, a heads-up
        banner goes)."""
        self._after_input()

    def press_keycode(self, code: int, long_press: bool = False) -> None:
        """A key event as ``input keyevent CODE`` injects it (Android's KeyEvent codes): the navigation keys, the
        volume keys (the volume of the stream in use: the call's during a call, else media, as Android 9+ does),
        POWER (the display off or on), SEARCH (the Google app's search field), DEL and ENTER in the focused field,
        typed characters. Keys the phone has no use for change nothing but the time, as on a device. A long press
        of POWER or HOME would open the power menu or the Assistant, which the simulated phone lacks: nothing
        happens. Time advances as for any input."""
        st = self.state
        name = KEYCODE_NAMES.get(code)
        if not st.screen_on:  # only the keys that wake the display do anything on a sleeping phone
            if name in ("POWER", "WAKEUP") and not long_press:
                self._set_screen(True)
        elif long_press and name in ("POWER", "HOME"):
            pass
        elif name in ("BACK", "HOME", "APP_SWITCH"):
            {"BACK": self.press_back, "HOME": self.press_home, "APP_SWITCH": self.press_overview}[name]()
        elif name in ("POWER", "SLEEP"):
            self._set_screen(False)
        elif name in ("VOLUME_UP", "VOLUME_DOWN", "VOLUME_MUTE"):
            self._volume_key(name)
        elif name == "SEARCH":
            self.launch("google")
            self.focus_field("google", "query")
        elif name == "DEL":
            self.delete_in_focus()
        elif name in ("ENTER", "NUMPAD_ENTER") and st.focus is not None:
            on_editor_action(self, *st.focus)
        elif code in KEY_CHARS:
            self._edit_focus(lambda text: text + KEY_CHARS[code])
        self._after_input()

    def _edit_focus(self, edit) -> None:
        """Change the focused field's text, or the dial pad's digits when it shows (its field takes key input). A
        field keeps what its length lets in (its LengthFilter): typed text beyond it is dropped."""
        st = self.state
        if st.focus is not None:
            key = f"{st.focus[0]}.{st.focus[1]}"
            st.fields[key] = edit(st.fields.get(key, ""))[:max_length(*st.focus)]
        elif st.top == "phone" and not st.overview and self.top_screen() == {"screen": "keypad"}:
            dialer = dialer_state(self)
            dialer.digits = "".join(c for c in edit(dialer.digits) if c in DIALABLE)[:EDIT_TEXT_MAX]

    def _volume_key(self, name: str) -> None:
        """AudioService.adjustSuggestedStreamVolume: the stream in use changes by one step (or its mute toggles);
        SystemUI's volume controller logs the change and its dialog shows."""
        st = self.state
        stream = "call" if dialer_state(self).call is not None else "media"
        android_name = services.SLIDER_EVENT_STREAMS[stream]
        if name == "VOLUME_MUTE":
            muted = stream not in st.muted
            st.muted = [s for s in st.muted if s != stream] + ([stream] if muted else [])
            self.logi("vol.Events", f"writeEvent mute_changed {android_name} {str(muted).lower()}",
                      pid=SYSTEMUI_PID)
        else:
            if stream in st.muted:  # a raise unmutes first, as ADJUST_RAISE does
                st.muted = [s for s in st.muted if s != stream]
                self.logi("vol.Events", f"writeEvent mute_changed {android_name} false", pid=SYSTEMUI_PID)
            lo, hi = VOLUME_MIN[stream], VOLUME_MAX[stream]
            level = min(max(st.volume[stream] + (1 if name == "VOLUME_UP" else -1), lo), hi)
            services.set_volume(self, stream, level)
        self.logi("vol.Events", "writeEvent show_dialog volume_changed keyguard=false", pid=SYSTEMUI_PID,
                  offset_ms=2)

    def _set_screen(self, on: bool) -> None:
        """The display off (POWER) or on again, as PowerManagerService logs it."""
        self.state.screen_on = on
        if on:
            self.logi("PowerManagerService", "Waking up from Asleep (uid=1000 reason=WAKE_REASON_POWER_BUTTON "
                      "details=android.policy:POWER)...")
        else:
            self.logi("PowerManagerService", "Going to sleep due to power_button (uid 1000)...")

    def text(self, value: str) -> None:
        self.type_into_focus(value)
        self._after_input()

    def type_into_focus(self, value: str) -> None:
        """Append ``value`` to the focused text field (or the dial pad's digits when it shows); nothing happens
        when nothing takes text."""
        self._edit_focus(lambda text: text + value)

    def delete_in_focus(self) -> None:
        self._edit_focus(lambda text: text[:-1])

    def log_mark(self) -> int:
        return self.log.mark()

    def log_lines(self, since: int = 0, tags: Iterable[str] | None = None) -> list[str]:
        return self.log.lines(since, tags)

    def clear_log(self) -> None:
        self.log.clear()

    # ------------------------------------------------------------------------------------------ input
    def _point(self, x: float, y: float) -> tuple[float | None, float | None]:
        """A touch point, or (None, None) where a real screen would register nothing (off-screen, NaN)."""
        if not (isinstance(x, (int, float, np.number)) and isinstance(y, (int, float, np.number))):
            raise VluiError(f"touch coordinates must be numbers, not {x!r}, {y!r}")
        if not (math.isfinite(x) and math.isfinite(y)) or not (0 <= x < self.width and 0 <= y < self.height):
            return None, None
        if not self.state.screen_on:  # a sleeping display's touch panel reports nothing
            return None, None
        return float(x), float(y)

    def _dispatch_swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        frame = self.frame()
        node = hit(frame, x1, y1, "on_swipe")
        if node is not None and node.on_swipe is not None and node.on_swipe(x1, y1, x2, y2):
            return
        if node is not None and node.scrollable and abs(y2 - y1) >= abs(x2 - x1):
            # a drag scrolls by its distance; a quick swipe flings further, as on a phone
            fling = 2.0 if duration_ms <= 400 else 1.0
            offset = self.state.scroll.get(node.scroll_key, 0) + int((y1 - y2) * fling)
            self.state.scroll[node.scroll_key] = min(max(offset, 0), node.scroll_max)

    def _after_input(self) -> None:
        if self.noise:
            self._noise()
        st = self.state
        if st.starting is not None and st.starting["at_ms"] < st.time_ms:  # the app has drawn its first screen
            st.starting = None
        st.time_ms += self.step_ms
        if st.headsup is not None and st.headsup["until_ms"] <= st.time_ms:
            st.headsup = None
        self.state_changed()

    def perturb(self, seed: int) -> dict[str, Any]:
        return perturb(self, seed)

    def state_changed(self) -> None:
        """Its state was changed from outside its gestures (a shell command, the emulator console, a perturbation):
        the next screenshot and UI dump are drawn anew."""
        self._frame = None
        self._window = None

    # ------------------------------------------------------------------------------------------ logging
    def now(self) -> datetime:
        return EPOCH + timedelta(milliseconds=self.state.time_ms)

    def logi(self, tag: str, message: str, level: str = "I", app: str | None = None, offset_ms: int = 0,
             pid: int | None = None) -> None:
        """Write a log line from ``app``'s process (default: system_server), ``offset_ms`` into the current step."""
        if pid is None:
            pid = self.state.pids.get(app, SYSTEM_PID) if app else SYSTEM_PID
        tid = pid if app else pid + 37
        self._write_log(self.state.time_ms + offset_ms, pid, tid, level, tag, message)

    def set_clock(self, time_ms: int) -> None:
        """The wall clock jumps to ``time_ms``: lines logged after a jump back are stamped by the new clock, as logd
        stamps them on a device."""
        self.state.time_ms = time_ms
        self._last_log_ms = min(self._last_log_ms, time_ms)
        self.state_changed()

    def log_marker(self, pid: int, level: str, tag: str, message: str) -> None:
        """A line stamped with the latest line's time, which it does not advance: markers (an ADB backend logs one
        after every input) must not move the lines after them."""
        self.log.write(self._last_log_ms or self.state.time_ms, pid, pid, level, tag, message)

    def _write_log(self, time_ms: int, pid: int, tid: int, level: str, tag: str, message: str) -> None:
        # logcat is chronological: a line is never stamped before the one written just before it
        time_ms = max(time_ms, self._last_log_ms + 1)
        self._last_log_ms = time_ms
        self.log.write(time_ms, pid, tid, level, tag, message)

    def _noise(self) -> None:
        """Background lines in the second part of the step, after the input's own lines."""
        lines = noise_lines(self._rng, self)
        offsets = sorted(self._rng.randrange(self.step_ms // 3, self.step_ms) for _ in lines)
        for (tag, level, message, pid), offset in zip(lines, offsets, strict=True):
            self._write_log(self.state.time_ms + offset, pid, pid + 11, level, tag, message)

    # ------------------------------------------------------------------------------------------ navigation
    def top_screen(self) -> dict[str, Any] | None:
        if self.state.top is None:
            return None
        return self.state.tasks[self.state.top][-1]

    def launch(self, key: str, bounds: tuple[int, int, int, int] | None = None, screen: str = "main") -> None:
        """Start ``key``'s launcher activity as the launcher does, or bring its task to the front. A third-party app
        the phone has not installed has no activity to start: refused, as ``am start`` refuses its component."""
        if not on_phone(key, self.state.installed):
            raise VluiError(f"{_not_installed(self.state, key)}: it cannot be launched")
        check_screen(key, screen)
        info = app_info(key, self.state.dialer)
        st = self.state
        flags = "act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] flg=0x10200000"
        bnds = f" bnds=[{bounds[0]},{bounds[1]}][{bounds[2]},{bounds[3]}]" if bounds else ""
        self.logi("ActivityTaskManager",
                  f"START u0 {{{flags} cmp={short_component(info.package, info.activity)}{bnds}}} from uid 10080")
        self.start_process(key, info, info.activity)
        created = key not in st.tasks
        if created:
            st.tasks[key] = [{"screen": screen}]
        self.bring_to_front(key)
        if st.slow_start:  # env.stochastic: this app takes a step to draw its first screen
            st.slow_start, st.starting = False, {"app": key, "at_ms": st.time_ms}
        if st.permission_prompt and key in PERMISSION_GROUPS:  # env.stochastic: it asks for a permission first
            st.permission_prompt, st.permission = False, {"app": key, "group": PERMISSION_GROUPS[key]}
            self.logi("ActivityTaskManager", "START u0 {act=android.content.pm.action.REQUEST_PERMISSIONS "
                      f"pkg={PERMISSION_CONTROLLER} cmp={PERMISSION_CONTROLLER}/{GRANT_ACTIVITY} (has extras)}} from "
                      f"uid {app_uid(key)}", offset_ms=300)
        on_launch(self, key, created)
        self.logi("ActivityTaskManager", f"Displayed {short_component(info.package, info.activity)}: "
                  f"+{280 + self._rng.randrange(400)}ms", offset_ms=400)
        self.state_changed()

    def start_process(self, key: str, info: AppInfo, activity: str) -> None:
        """``key``'s process starts (as ActivityManager logs it) for its ``activity``, unless it is running."""
        st = self.state
        if key in st.running:
            return
        st.running.append(key)
        st.pids[key] = st.next_pid
        st.next_pid += 17 + self._rng.randrange(60)
        # ProcessList.startProcessLocked's line: ActivityManager's tag on Android 10 too (START is ActivityTaskManager's)
        self.logi("ActivityManager", f"Start proc {st.pids[key]}:{info.package}/{uid_name(key)} for activity "
                  f"{{{info.package}/{activity}}}", offset_ms=5)

    def start_for_intent(self, key: str, activity: str, intent: str, caller_uid: int) -> bool:
        """Log the START of ``key``'s ``activity`` (its class) for an intent another process sent (``intent``: the
        intent as the START line prints it, inside the braces) and start the app's process if it is not running.
        Returns whether the app had no task yet (its main activity will be created)."""
        self.logi("ActivityTaskManager", f"START u0 {{{intent}}} from uid {caller_uid}")
        self.start_process(key, app_info(key, self.state.dialer), activity)
        return key not in self.state.tasks

    def displayed(self, key: str, activity: str) -> None:
        """ActivityMetricsLogger's line once a started activity has drawn its first frame."""
        self.logi("ActivityTaskManager", f"Displayed {short_component(app_info(key, self.state.dialer).package, activity)}: "
                  f"+{280 + self._rng.randrange(400)}ms", offset_ms=400)

    def start_activity(self, key: str, screen: str, component: str, extras: bool = True, intent: str = "",
                       **params: Any) -> None:
        """Push a screen of ``key``'s app that Android implements as its own activity (logs the START line).
        ``intent``: what the intent holds before its component (``act=... dat=...``)."""
        self.logi("ActivityTaskManager", f"START u0 {{{intent + ' ' if intent else ''}cmp={component}"
                  f"{' (has extras)' if extras else ''}}} from uid {app_uid(key)}")
        self.push(key, screen, **params)

    def push(self, key: str, screen: str, **params: Any) -> None:
        check_screen(key, screen)
        self.state.tasks.setdefault(key, []).append({"screen": screen, **params})
        self.state.focus = None

    def bring_to_front(self, key: str) -> None:
        """``key``'s task comes to the front (the top of the recents), over the drawer, the overview and focus."""
        st = self.state
        st.top, st.drawer, st.overview, st.focus = key, False, False, None
        if key in st.recents:
            st.recents.remove(key)
        st.recents.insert(0, key)

    def remove_task(self, key: str) -> None:
        """The overview's dismiss: ``key``'s task is gone. If it was the app behind the overview, the home screen is
        there now; once no task is left, the overview gives way to it, as Android 10 does."""
        st = self.state
        if key in st.recents:
            st.recents.remove(key)
        st.tasks.pop(key, None)
        if st.top == key:
            st.top, st.dialog, st.focus = None, None, None
            if st.permission is not None and st.permission["app"] == key:
                st.permission = None
        if not st.recents:
            st.overview, st.top = False, None

    def press_back(self) -> None:
        st = self.state
        if st.shade:
            st.shade = False  # BACK closes the notification shade first
        elif st.permission is not None:
            st.permission = None  # BACK on the permission prompt denies
        elif st.focus is not None:
            st.focus = None  # the first BACK hides the keyboard
        elif st.dialog is not None:
            st.dialog = None
        elif st.overview:
            st.overview = False
        elif st.top is None:
            st.drawer = False
        else:
            if on_back(self, st.top):
                return
            stack = st.tasks[st.top]
            stack.pop()
            if not stack:
                del st.tasks[st.top]
                st.recents.remove(st.top)
                st.top = None

    def press_home(self) -> None:
        st = self.state
        st.top, st.drawer, st.overview, st.dialog, st.focus = None, False, False, None, None
        st.shade = False
        st.scroll.pop("drawer", None)
        self.logi("ActivityTaskManager", f"START u0 {{act=android.intent.action.MAIN cat=[android.intent.category."
                  f"HOME] flg=0x10200000 cmp={LAUNCHER_PKG}/.NexusLauncherActivity}} from uid 1000")

    def press_overview(self) -> None:
        st = self.state
        if st.overview:  # a second press switches to the previous app, as on Android 10
            st.overview = False
            if len(st.recents) > 1:
                self.bring_to_front(st.recents[1])
            return
        st.overview, st.dialog, st.focus = True, None, None

    def focus_field(self, key: str, field: str, package: str | None = None) -> None:
        """Give ``key``'s text field the input focus: the keyboard comes up (LatinIME logs its activation)."""
        pkg = package or app_info(key, self.state.dialer).package
        self.state.focus = (key, field)
        self.state.keyboard_symbols = False  # a field comes up with the letters
        pid = self.state.pids.get("gboard", 2790)
        self._write_log(self.state.time_ms + 40, pid, pid, "I", "AndroidIME",
                       f"LatinIme.onActivate() : EditorInfo = inputType=Text|AutoCorrect imeOptions=Search "
                       f"packageName={pkg} fieldId={zlib.crc32(field.encode()) % 100000}, IncognitoMode = false")

    # ------------------------------------------------------------------------------------------ frames
    def ctx(self) -> Ctx:
        dp = self.snapshot.dpi / 160
        status = int(round(24 * dp))
        nav = max(int(round(48 * dp)), math.ceil(0.065 * self.height))
        return Ctx(self.width, self.height, self.snapshot.dpi, self.snapshot.font_scale, theme(self.state.dark_theme),
                   self.locale, self.tablet, status, self.height - nav)

    def renderer(self) -> Renderer:
        """The renderer of the current configuration; the few most recent are kept (an environment that goes through
        hundreds of generated configurations keeps only those)."""
        key = (self.snapshot.wallpaper, self.state.dark_theme, self.locale.id, self.width, self.height)
        r = self._renderers.get(key)
        latest = next(reversed(self._renderers.values()), None)
        if latest is not None and latest is not r:
            latest.drop_canvas()  # only the configuration in use keeps its last frame drawn (7 MB at 1080x2160)
        if r is None:
            style = Style(theme(self.state.dark_theme), self.snapshot.wallpaper, self.locale.rtl,
                          self.locale.cjk_font, self.locale.arabic_font)
            r = Renderer(style, (self.width, self.height), self.frames, incremental=self.incremental)
            self._renderers[key] = r
            while len(self._renderers) > RENDERERS_KEPT:
                self._renderers.popitem(last=False)
        else:
            self._renderers.move_to_end(key)
        return r

    def frame(self) -> Node:
        """The whole screen's tree: the focused window plus the status and navigation bars (a black screen with
        nothing on it while the display sleeps)."""
        if self._frame is None and not self.state.screen_on:
            self._window = Node(cls="android.widget.FrameLayout", bounds=(0, 0, self.width, self.height),
                                package="com.android.systemui", bg=(0, 0, 0))
            self._frame = Node(bounds=(0, 0, self.width, self.height), children=[self._window])
        if self._frame is None:
            ctx = self.ctx()
            inputs = window_inputs(self, ctx)
            self._window = (build_window(self, ctx) if inputs is None
                            else self._keep(inputs, lambda: build_window(self, ctx)))
            banner = [headsup(self, ctx)] if self.state.headsup is not None else []
            shown, home = status_shown(self, ctx), self.state.top is None
            self._frame = Node(bounds=(0, 0, self.width, self.height), children=[
                self._window, *banner, self._keep(("status", ctx, shown), lambda: status_bar(self, ctx, shown)),
                self._keep(("nav", ctx, home), lambda: nav_bar(self, ctx, home))])
        return self._frame

    def _keep(self, inputs: tuple, build: Callable[[], Node]) -> Node:
        """The part of the screen that ``build()`` makes from ``inputs`` alone (its name, the screen's ``Ctx`` and
        what it shows of the state; its handlers read the phone when they run). With ``reuse``, one built from equal
        inputs, compared exactly, is taken again: the status bar changes once a minute, the navigation bar between
        the home screen and an app, the home screen once a day, and a step or a reset would otherwise build them
        anew."""
        if not self.reuse:
            return build()
        for i, (kept, part) in enumerate(self._kept):
            if kept == inputs:
                self._kept.insert(0, self._kept.pop(i))
                return part
        part = build()
        self._kept.insert(0, (inputs, part))
        del self._kept[KEPT:]
        return part

    def nav_points(self) -> dict[str, tuple[float, float]]:
        """Normalised (y, x) of the navigation buttons' centres on this device."""
        xs = TABLET_NAV_POINTS if self.tablet else NAV_POINTS
        ctx = self.ctx()
        y = (ctx.bottom + self.height) / 2 / self.height
        return {k: (y, x) for k, x in zip(KEYS, xs, strict=True)}
