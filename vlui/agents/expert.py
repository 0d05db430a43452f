"""The scripted expert: completes the supported B-MoCA tasks by reading the uiautomator XML, as a careful person
with the task's recipe would.

It finds widgets by resource id, class and structure. Where Android gives many widgets the same id (launcher icons,
Settings rows, tabs), it tells them apart by their label in the device's language, taken from vlui's string tables,
so it works in every locale and home-screen layout. It is reactive: every step it looks at the screen, works out
where it is on the way to the goal, and takes the next step, so it recovers from its own (configured) mistakes; on a
screen of an app where it cannot find its way (a wrong tap can lead anywhere) it goes home and starts over.

Imperfection, for realistic and for offline-RL data: ``tap_jitter`` moves taps within the target's bounds,
``random_action_prob`` replaces a step with a uniformly random dual-gesture, ``wrong_action_prob`` taps a random
clickable element instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from vlui.android.apps import AOSP_DIALER
from vlui.android.apps import apps as phone_apps
from vlui.android.apps import third_party
from vlui.android.calculator import FORMULA_TEXT
from vlui.android.i18n import Locale, get_locale
from vlui.android.ids import DIALPAD_KEY_IDS, SETTINGS_TOP, day_bit
from vlui.android.launcher import LAUNCHABLE
from vlui.android.state import VOLUME_MAX
from vlui.agents.base import AgentBase
from vlui.agents.settings import ExpertAgentConfig
from vlui.env.actions import key_action, normalised_to_action
from vlui.env.ui_text import Element, parse_xml
from vlui.errors import VluiError
from vlui.spec import to_view
from vlui.tasks import templates
from vlui.tasks.catalog import Task

LAUNCHER = "com.google.android.apps.nexuslauncher"
SETTINGS = "com.android.settings"
CLOCK = "com.google.android.deskclock"
DIALERS = (phone_apps()["phone"].package, AOSP_DIALER.package)  # the Pixel's Phone app; the release phones'
SYSTEMUI = "com.android.systemui"
# What a real Android 10 Pixel shows: the launcher apps' order in Settings and the dial pad's resource ids. The
# simulated phone is built from the same tables. A phone may have third-party apps besides (apps.yaml's
# third_party): the expert finds them by label in the drawer as it finds these.
APPS = LAUNCHABLE


class Stuck(RuntimeError):
    """The expert cannot find its way on this screen: a screen it was not written for, or a bug in it. Not the
    user's mistake, so not a :class:`VluiError`: the traceback shows where it stood."""


@dataclass
class Screen:
    """One observation, parsed: the elements and helpers to find things among them."""

    els: list[Element]
    width: int
    height: int
    loc: Locale

    @property
    def package(self) -> str:
        return self.els[0].package if self.els else ""

    def by_id(self, suffix: str) -> list[Element]:
        return [e for e in self.els if e.resource_id.endswith(suffix) and _visible(e)]

    def one(self, suffix: str) -> Element | None:
        found = self.by_id(suffix)
        return found[0] if found else None

    def labelled(self, label: str, where=None) -> list[Element]:
        return [e for e in self.els if (e.text == label or e.content_desc == label) and _visible(e)
                and (where is None or where(e))]

    def scroller(self) -> Element | None:
        lists = [e for e in self.els if e.scrollable and _visible(e)]
        return max(lists, key=lambda e: (e.bounds[3] - e.bounds[1])) if lists else None


def _visible(e: Element) -> bool:
    x1, y1, x2, y2 = e.bounds
    return x2 - x1 > 2 and y2 - y1 > 2


@dataclass
class Gesture:
    kind: str  # tap | swipe | key
    target: Element | None = None
    point: tuple[float, float] | None = None  # normalised (y, x)
    lift: tuple[float, float] | None = None
    key: str = ""


@dataclass
class ExpertAgent(AgentBase):
    reads: ClassVar[tuple[str, ...]] = ("xml",)  # it finds its targets in the UI tree
    tap_jitter: float = 0.0
    random_action_prob: float = 0.0
    wrong_action_prob: float = 0.0
    seed: int = 0
    rng: np.random.Generator = field(init=False)
    task: Task | None = field(init=False, default=None)
    _plan: Any = field(init=False, default=None)
    _memory: dict[str, Any] = field(init=False, default_factory=dict)
    _view: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        for name in ("tap_jitter", "random_action_prob", "wrong_action_prob"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise VluiError(f"agent.{name} must be between 0 and 1, not {value!r}")
        if self.random_action_prob + self.wrong_action_prob > 1.0:
            raise VluiError(f"agent.random_action_prob + agent.wrong_action_prob must be at most 1 (they share one "
                            f"roll per step), not {self.random_action_prob + self.wrong_action_prob:g}")
        self.rng = np.random.default_rng(self.seed)

    @classmethod
    def from_settings(cls, agent: ExpertAgentConfig, seed: int = 0) -> ExpertAgent:
        return cls(tap_jitter=agent.tap_jitter, random_action_prob=agent.random_action_prob,
                   wrong_action_prob=agent.wrong_action_prob, seed=seed)

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self._plan = plan_for(task)
        self.task = task
        self._memory = {}
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        """The next dual-gesture action in [-1, 1]. Needs ``obs["xml"]`` and ``info["locale"]``/``["screen_size"]``."""
        if "xml" not in obs:
            raise VluiError("the expert reads the UI tree: create the environment with include_xml=True")
        width, height = info["screen_size"]
        screen = Screen(parse_xml(obs["xml"]), width, height, get_locale(info["locale"]))
        self._view = info.get("view")  # its observation is the screen turned or stacked: so are its actions
        allow = screen.one(":id/permission_allow_button")
        if allow is not None:  # a runtime permission prompt over the app: allow, as a user going on with the task
            return self._to_action(Gesture("tap", allow), screen)
        if screen.package not in ("", LAUNCHER) and not any(e.clickable for e in screen.els):
            # an app's starting window (it has not drawn its first screen yet): wait a step, a tap on nothing
            return normalised_to_action((0.5, 0.5))
        roll = self.rng.random()
        if roll < self.random_action_prob:
            return self.rng.uniform(-1, 1, 4).astype(np.float32)
        if roll < self.random_action_prob + self.wrong_action_prob:
            clickable = [e for e in screen.els if e.clickable and _visible(e)]
            if clickable:
                return self._to_action(Gesture("tap", clickable[self.rng.integers(len(clickable))]), screen)
        try:
            gesture = self._plan(self, screen)
        except Stuck:
            if screen.package in ("", LAUNCHER):
                raise  # lost on the home screen itself: a screen it was not written for, or a bug in it
            # lost in an app (after a mistake of its own, or of a policy it labels for DAgger): start over from home
            gesture = Gesture("key", key="HOME")
        return self._to_action(gesture, screen)

    # ------------------------------------------------------------------------------------------------ gestures
    def _to_action(self, g: Gesture, s: Screen) -> np.ndarray:
        """The gesture as an action: points of the screen, or of its turned or stacked observation where the
        environment observes it so (``info["view"]``); keys are read where B-MoCA puts them, whatever the screen."""
        if g.kind == "key":
            return key_action(g.key)
        if g.kind == "swipe":
            return normalised_to_action(to_view(g.point, self._view), to_view(g.lift, self._view))
        if g.target is not None:
            x1, y1, x2, y2 = g.target.bounds
            cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
            if self.tap_jitter:
                cx += self.rng.uniform(-0.5, 0.5) * self.tap_jitter * (x2 - x1)
                cy += self.rng.uniform(-0.5, 0.5) * self.tap_jitter * (y2 - y1)
            return normalised_to_action(to_view((cy / s.height, cx / s.width), self._view))
        return normalised_to_action(to_view(g.point, self._view))

    # ------------------------------------------------------------------------------------------------ skills
    def open_app(self, s: Screen, app: str) -> Gesture:
        """From anywhere: home, the drawer if needed, the icon; or, for an app a recipe knows is open (its task is in
        the recents: ``_memory["recents"]``), the recents screen and the app's card."""
        if app in self._memory.get("recents", ()):
            return self.switch_to(s, app)
        if s.package != LAUNCHER:
            return Gesture("key", key="HOME")
        label = s.loc.t(f"app.{app}")
        icons = s.labelled(label, where=lambda e: e.clickable)
        if icons:
            return Gesture("tap", icons[0])
        if s.one(":id/apps_list_view") is None:  # on the home screen: open the drawer
            return Gesture("swipe", point=(0.75, 0.5), lift=(0.25, 0.5))
        return self.scroll(s, "drawer")

    def switch_to(self, s: Screen, app: str) -> Gesture:
        """To an app whose task is open, through the recents screen: APP_SWITCH, then a tap on the part of the app's
        card that is on the screen (the cards beside the middle one reach past its edge). An app without a card
        there (its task was dismissed) is opened from home instead."""
        if s.one(f"{SYSTEMUI}:id/snapshot") is None:
            return Gesture("key", key="APP_SWITCH")
        label = s.loc.t(f"app.{app}")
        cards = [e for e in s.by_id(f"{SYSTEMUI}:id/snapshot") if e.content_desc == label]
        if not cards:
            self._memory["recents"] = tuple(a for a in self._memory["recents"] if a != app)
            return self.open_app(s, app)
        x1, y1, x2, y2 = cards[0].bounds
        x1, x2 = max(x1, 0), min(x2, s.width)
        return Gesture("tap", point=((y1 + y2) / 2 / s.height, (x1 + x2) / 2 / s.width))

    def scroll(self, s: Screen, name: str, towards: float | None = None) -> Gesture:
        """Swipe the main list: towards a position (+ down the list / - up) when known, else onward, turning
        back at the end."""
        lst = s.scroller()
        if lst is None:
            raise Stuck(f"{self.task.id}: nothing to scroll on this screen looking for {name}")
        x1, y1, x2, y2 = lst.bounds
        top, bottom = (y1 + (y2 - y1) * 0.2) / s.height, (y1 + (y2 - y1) * 0.8) / s.height
        key = f"scroll:{name}"
        signature = tuple(e.text for e in s.els if e.text)
        direction = self._memory.get(key, 1)
        if towards is None:
            if self._memory.get(key + ":last") == signature:  # the last swipe moved nothing: at the end
                direction = -direction
            self._memory[key], self._memory[key + ":last"] = direction, signature
            span = bottom - top
        else:
            direction = 1 if towards > 0 else -1
            span = min(bottom - top, max(abs(towards) / 2.0, 0.08))  # a quick swipe scrolls twice its length
            if abs(towards) / 2.0 > bottom - top:  # out of one swipe's reach (a short screen): the list's full height
                top, span = (y1 + (y2 - y1) * 0.05) / s.height, (y2 - y1) * 0.9 / s.height
        start, end = (top + span, top) if direction > 0 else (top, top + span)
        return Gesture("swipe", point=(start, 0.5), lift=(end, 0.5))

    def settings_path(self, s: Screen, pages: list[str], final: str, final_action=None) -> Gesture:
        """Open Settings, go down ``pages`` (string keys of row titles), then tap the row titled ``final`` (or call
        ``final_action``)."""
        if s.package == SYSTEMUI and s.one(":id/slider") is not None and final_action is None:
            return Gesture("key", key="BACK")
        if s.package not in (SETTINGS, SYSTEMUI):
            return self.open_app(s, "settings")
        if final_action is not None and s.one(f"{SYSTEMUI}:id/slider") is not None:
            return final_action(s)
        level = self.settings_level(s, pages)
        if level is None:
            return Gesture("key", key="BACK")
        target = pages[level] if level < len(pages) else final
        label = s.loc.t(f"settings.{target}")
        rows = s.labelled(label, where=lambda e: e.resource_id == "android:id/title" and self.tappable(s, e))
        if rows:
            return Gesture("tap", rows[0])
        towards = None
        if level == 0 and target in SETTINGS_TOP:
            towards = self._estimate_offset(s, target)
        return self.scroll(s, f"settings:{level}", towards)

    def settings_level(self, s: Screen, pages: list[str]) -> int | None:
        """How far down ``pages`` the current Settings screen is, or None when it is off the path."""
        if s.one(f"{SETTINGS}:id/search_action_bar") is not None:
            return 0
        bar = s.one(f"{SETTINGS}:id/action_bar")
        if bar is None:
            return None
        titles = [e.text for e in s.els if e.cls == "android.widget.TextView" and e.text and _inside(e, bar)]
        for i, page in enumerate(pages):
            if s.loc.t(f"settings.{page}") in titles:
                return i + 1
        return None

    def _estimate_offset(self, s: Screen, target: str) -> float | None:
        """Normalised distance to scroll so that a top-level Settings row comes into view, from the visible rows."""
        labels = {s.loc.t(f"settings.{k}"): i for i, k in enumerate(SETTINGS_TOP)}
        seen = [(labels[e.text], (e.bounds[1] + e.bounds[3]) / 2) for e in s.els
                if e.resource_id == "android:id/title" and e.text in labels and _visible(e)]
        if len(seen) < 2:
            return None
        (i0, y0), (i1, y1) = seen[0], seen[-1]
        row = (y1 - y0) / max(1, i1 - i0)
        want = y0 + (SETTINGS_TOP.index(target) - i0) * row
        lst = s.scroller()
        mid = (lst.bounds[1] + lst.bounds[3]) / 2 if lst else s.height / 2
        return (want - mid) / s.height

    def tappable(self, s: Screen, e: Element) -> bool:
        """Fully on screen above the navigation bar, not under the status bar."""
        x1, y1, x2, y2 = e.bounds
        return y1 >= s.height * 0.03 and y2 <= s.height * 0.93 and (y2 - y1) > 8

    def clock_tab(self, s: Screen, tab: str) -> Gesture | None:
        """Open Clock and select ``tab``; None once it is selected."""
        if s.package != CLOCK:
            return self.open_app(s, "clock")
        if s.one(":id/time_picker") is not None:
            return Gesture("key", key="BACK")
        label = s.loc.t(f"clock.{tab}")
        tabs = s.labelled(label, where=lambda e: e.resource_id.endswith(":id/tab_menu_item"))
        if not tabs:
            raise Stuck(f"{self.task.id}: no {tab} tab")
        return None if tabs[0].selected else Gesture("tap", tabs[0])


def _inside(e: Element, box: Element) -> bool:
    x1, y1, x2, y2 = e.bounds
    a1, b1, a2, b2 = box.bounds
    return x1 >= a1 and y1 >= b1 and x2 <= a2 and y2 <= b2


def _centre_inside(e: Element, box: Element) -> bool:
    x, y = e.center
    a1, b1, a2, b2 = box.bounds
    return a1 <= x < a2 and b1 <= y < b2


# ---------------------------------------------------------------------------------------------------- recipes
def _open(app: str):
    return lambda ex, s: ex.open_app(s, app)


def _airplane_on(ex: ExpertAgent, s: Screen) -> Gesture:
    return ex.settings_path(s, ["network"], "airplane_mode")


def _add_language(ex: ExpertAgent, s: Screen) -> Gesture:
    return ex.settings_path(s, ["system", "languages_input", "languages"], "add_language")


def _brightness_down(ex: ExpertAgent, s: Screen) -> Gesture:
    def lower(screen: Screen) -> Gesture:
        bar = screen.one(f"{SYSTEMUI}:id/slider")
        x1, y1, x2, y2 = bar.bounds
        frac = 0.7 if screen.loc.rtl else 0.3  # a third of the way from the low end
        return Gesture("tap", point=((y1 + y2) / 2 / screen.height, (x1 + (x2 - x1) * frac) / screen.width))

    return ex.settings_path(s, ["display"], "brightness", final_action=lower)


def _alarm_card(ex: ExpertAgent, s: Screen, hour: int, minute: int) -> tuple[Gesture | None, Element | None]:
    """The card of the ``hour:minute`` alarm on Clock's alarm tab, or first the gesture that gets closer to it."""
    g = ex.clock_tab(s, "alarm")
    if g is not None:
        return g, None
    cards = s.labelled(s.loc.time(hour, minute), where=lambda e: e.resource_id.endswith(":id/digital_clock"))
    if not cards:
        return ex.scroll(s, "alarms"), None
    return None, cards[0]


def _alarm_on(hour: int, minute: int):
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        g, card = _alarm_card(ex, s, hour, minute)
        if g is not None:
            return g
        label = s.loc.time(hour, minute)
        switches = [e for e in s.by_id(":id/onoff") if e.bounds[1] < card.bounds[3] and e.bounds[3] > card.bounds[1]]
        if not switches:
            raise Stuck(f"{ex.task.id}: the {label} alarm has no switch")
        return Gesture("tap", switches[0])
    return recipe


def _delete_alarm(hour: int, minute: int):
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        g, card = _alarm_card(ex, s, hour, minute)
        if g is not None:
            return g
        label = s.loc.time(hour, minute)
        # the card's Delete button sits below its time, inside the same card
        buttons = [e for e in s.by_id(":id/delete") if e.bounds[1] >= card.bounds[1]]
        if not buttons:
            raise Stuck(f"{ex.task.id}: the {label} alarm has no Delete button")
        return Gesture("tap", min(buttons, key=lambda e: e.bounds[1]))
    return recipe


def _show_tab(tab: str):
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package != CLOCK:
            return ex.open_app(s, "clock")
        if s.one(":id/time_picker") is not None:
            return Gesture("key", key="BACK")
        tabs = s.by_id(":id/tab_menu_item")
        want = [e for e in tabs if e.content_desc == s.loc.t(f"clock.{tab}")]
        if not want:
            raise Stuck(f"{ex.task.id}: no {tab} tab")
        if want[0].selected:  # tapping the shown tab again does nothing: go to another one first
            return Gesture("tap", next(e for e in tabs if e is not want[0]))
        return Gesture("tap", want[0])
    return recipe


def _stopwatch(action: str):
    """Press the stopwatch's ``start``, ``pause`` or ``reset`` button, pausing first where reset needs it."""
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        g = ex.clock_tab(s, "stopwatch")
        if g is not None:
            return g
        fab = s.one(f"{CLOCK}:id/fab")
        running = fab.content_desc == s.loc.t("clock.pause")
        if action == "reset" and not running:
            reset = s.one(f"{CLOCK}:id/left_button")
            if reset is not None:
                return Gesture("tap", reset)
        return Gesture("tap", fab)  # start, pause, or toggle towards the state the action needs
    return recipe


def _create_alarm(hour: int, minute: int):
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package == CLOCK and s.one(":id/time_picker") is not None:
            return _set_picker(ex, s, hour, minute)
        g = ex.clock_tab(s, "alarm")
        if g is not None:
            return g
        return Gesture("tap", s.one(f"{CLOCK}:id/fab"))
    return recipe


def _repeating_alarm(hour: int, minute: int, days: int):
    """Create the ``hour:minute`` alarm, then make it repeat on ``days`` (``daysofweek`` bits): its card expanded
    (a new alarm's is), Repeat checked (every day), then each day button that differs from ``days`` tapped."""
    create = _create_alarm(hour, minute)

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if not ex._memory.get("alarm_made"):
            on_tab = s.package == CLOCK and s.one(":id/time_picker") is None
            if not (on_tab and s.labelled(s.loc.time(hour, minute), where=_is_id(":id/digital_clock"))):
                return create(ex, s)
            ex._memory["alarm_made"] = True
        g, card = _alarm_card(ex, s, hour, minute)
        if g is not None:
            return g
        later = [e.bounds[1] for e in s.by_id(":id/digital_clock") if e.bounds[1] > card.bounds[1]]

        def on_card(suffix: str) -> list[Element]:
            return [e for e in s.by_id(suffix) if card.bounds[1] <= e.bounds[1] < min(later, default=s.height)]
        repeat = on_card(":id/repeat_onoff")
        if not repeat:
            return Gesture("tap", on_card(":id/arrow")[0])
        if not repeat[0].checked:
            return Gesture("tap", repeat[0])
        names = s.loc.seq("weekday")
        wrong = [b for b in on_card(":id/day_button_box") if b.checked != bool(days & day_bit(names.index(b.content_desc)))]
        if wrong:
            ex._memory["part_done"] = len(wrong) == 1  # the last day to set: a goal of _in_turn's reached
            return Gesture("tap", wrong[0])
        raise Stuck(f"{ex.task.id}: the {s.loc.time(hour, minute)} alarm already repeats as asked")
    return recipe


def _is_id(suffix: str) -> Callable[[Element], bool]:
    return lambda e: e.resource_id.endswith(suffix)


def _set_picker(ex: ExpertAgent, s: Screen, hour: int, minute: int) -> Gesture:
    loc = s.loc
    hour12 = loc.meta["hour12"]
    hours, minutes = s.one("android:id/hours"), s.one("android:id/minutes")
    shown_h = loc.number(str(hour % 12 or 12) if hour12 else f"{hour:02d}")
    shown_m = loc.number(f"{minute:02d}")
    dial = s.one(":id/radial_picker")
    dial_labels = [e for e in s.els if e.cls == "android.widget.TextView" and not e.resource_id and e.clickable
                   and dial is not None and _centre_inside(e, dial)]
    if hour12:
        marker = s.one(f"android:id/{'pm' if hour >= 12 else 'am'}_label")
        if marker is not None and not marker.checked:
            return Gesture("tap", marker)
    if hours.text != shown_h:
        if not hours.selected:
            return Gesture("tap", hours)
        return Gesture("tap", _label(dial_labels, shown_h, ex))
    if minutes.text != shown_m:
        if not minutes.selected:
            return Gesture("tap", minutes)
        return Gesture("tap", _label(dial_labels, shown_m, ex))
    return Gesture("tap", s.one("android:id/button1"))


def _label(labels: list[Element], text: str, ex: ExpertAgent) -> Element:
    for e in labels:
        if e.text == text:
            return e
    raise Stuck(f"{ex.task.id}: no {text} on the dial")


def _typed(digits: Element) -> str:
    """The number typed on the dial pad, without the spaces, dashes and parentheses AOSP's Dialer formats it with."""
    return "".join(c for c in digits.text if c not in " -()")


def _call(number: str):
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package not in DIALERS:
            return ex.open_app(s, "phone")
        if s.one(":id/incall_end_call") is not None:
            return Gesture("tap", s.one(":id/incall_end_call"))  # a call that is not ours: hang up first
        digits = s.one(f"{s.package}:id/digits")
        if digits is None:
            return Gesture("tap", s.one(f"{s.package}:id/fab"))
        typed = _typed(digits)
        if typed == number:
            return Gesture("tap", s.one(":id/dialpad_floating_action_button"))
        if not number.startswith(typed):
            return Gesture("tap", s.one(":id/deleteButton"))
        return Gesture("tap", s.one(f"{s.package}:id/{DIALPAD_KEY_IDS[number[len(typed)]]}"))
    return recipe


def _settings_row(pages: list[str], final: str):
    """Go down ``pages`` and tap the row titled ``final`` (a switch or a page)."""
    return lambda ex, s: ex.settings_path(s, pages, final)


def _volume_slider(stream: str, place: Callable[[Screen, Element], tuple[float, float]]):
    """On Sound, tap the ``stream`` slider at ``place(screen, slider)`` (a normalised (y, x))."""
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package == SETTINGS and ex.settings_level(s, ["sound"]) == 1:
            label = s.loc.t(f"settings.{stream}_volume")
            titles = s.labelled(label, where=lambda e: e.resource_id == "android:id/title")
            bars = [e for e in s.by_id("android:id/seekbar") for t in titles
                    if 0 <= e.bounds[1] - t.bounds[3] < e.bounds[3] - e.bounds[1] and ex.tappable(s, e)]
            if not bars:
                return ex.scroll(s, f"sound:{stream}")
            return Gesture("tap", point=place(s, bars[0]))
        return ex.settings_path(s, [], "sound")
    return recipe


def _volume_up(stream: str):
    """On Sound, tap the ``stream`` slider near its high end: a level above the starting one."""
    def near_high_end(s: Screen, bar: Element) -> tuple[float, float]:
        x1, y1, x2, y2 = bar.bounds
        frac = 0.1 if s.loc.rtl else 0.9
        return (y1 + y2) / 2 / s.height, (x1 + (x2 - x1) * frac) / s.width
    return _volume_slider(stream, near_high_end)


def _app_info_list(ex: ExpertAgent, s: Screen) -> Gesture:
    if s.package == SETTINGS and ex.settings_level(s, ["apps"]) == 1:
        def is_title(e: Element) -> bool:
            return e.resource_id == "android:id/title" and ex.tappable(s, e)

        # the launcher's apps, the third-party apps the phone has (as many as it may install) and Google
        counts = range(len(APPS) + 1, len(APPS) + len(third_party()) + 2)
        rows = [row for n in counts for row in s.labelled(s.loc.t("settings.see_all_apps", count=n), where=is_title)]
        return Gesture("tap", rows[0]) if rows else ex.scroll(s, "apps")
    return ex.settings_path(s, [], "apps")


def _dial_and_call(ex: ExpertAgent, s: Screen) -> Gesture:
    """Type one digit (the call button places nothing with an empty number), then press call."""
    if s.package in DIALERS:
        digits = s.one(f"{s.package}:id/digits")
        if digits is not None and digits.text:
            return Gesture("tap", s.one(":id/dialpad_floating_action_button"))
    return _call("1")(ex, s)


def _end_call(ex: ExpertAgent, s: Screen) -> Gesture:
    if s.package not in DIALERS:
        return ex.open_app(s, "phone")  # the phone's task is the call in progress: its in-call screen comes back
    end = s.one(":id/incall_end_call")
    if end is None:
        raise Stuck(f"{ex.task.id}: no call in progress")
    return Gesture("tap", end)


def _label_of(key: str):
    """A finder: the clickable element labelled with string ``key`` (text or content description)."""
    return lambda s: next(iter(s.labelled(s.loc.t(key), where=lambda e: e.clickable)), None)


def _id_of(suffix: str):
    return lambda s: s.one(suffix)


def _in_app(app: str, *steps):
    """Open ``app``, then tap what ``steps`` find, in order: each step taps the furthest one on screen, and a
    screen of the app with none of them (a page off the path) is left with BACK."""
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package != phone_apps()[app].package:
            return ex.open_app(s, app)
        for find in reversed(steps):
            target = find(s)
            if target is not None:
                return Gesture("tap", target)
        return Gesture("key", key="BACK")
    return recipe


def _search_google(ex: ExpertAgent, s: Screen) -> Gesture:
    """The home screen's Google search bar opens the Google app with its search field focused."""
    if s.package == phone_apps()["google"].package and s.one(":id/search_box") is not None:
        return Gesture("tap", s.one(":id/search_box"))
    bar = s.one(f"{LAUNCHER}:id/search_container_hotseat")
    if bar is not None:
        return Gesture("tap", bar)
    return Gesture("key", key="HOME" if s.package != LAUNCHER else "BACK")


PLANS = {
    **{f"open_{app}": _open(app) for app in APPS if app != "play_store"},
    "airplane_on": _airplane_on,
    "add_language": _add_language,
    "brightness_down": _brightness_down,
    "alarm_9am_on": _alarm_on(9, 0),
    "alarm_1030": _create_alarm(10, 30),
    **{f"alarm_{h:02d}{m:02d}": _create_alarm(h, m) for h, m in ((6, 30), (13, 30), (17, 30), (20, 30), (23, 30))},
    "alarm_9am_delete": _delete_alarm(9, 0),
    **{f"clock_{tab}_tab": _show_tab(tab) for tab in ("alarm", "stopwatch", "timer")},
    **{f"stopwatch_{action}": _stopwatch(action) for action in ("start", "pause", "reset")},
    "call_911": _call("911"),
    "airplane_off": _airplane_on,  # the same switch: the task starts with airplane mode on
    "wifi_on": _settings_row(["network"], "wifi"),
    "wifi_off": _settings_row(["network"], "wifi"),
    **{f"volume_{stream}_up": _volume_up(stream) for stream in ("media", "call", "ring", "alarm")},
    "dark_theme_toggle": _settings_row(["display"], "dark_theme"),
    "vibrate_calls_toggle": _settings_row(["sound"], "vibrate_for_calls"),
    "app_info_list": _app_info_list,
    "bluetooth_settings": _settings_row(["connected", "connection_preferences"], "bluetooth"),
    "dial_call_button": _dial_and_call,
    "end_call": _end_call,
    **{f"files_{root}": _in_app("files", _label_of(f"apps.files_{root}"))
       for root in ("audio", "images", "videos", "downloads")},
    "contacts_insert": _in_app("contacts", _id_of(":id/fab")),
    "contacts_edit": _in_app("contacts", _id_of(":id/cliv_name_textview"), _id_of(":id/menu_edit")),
    **{f"search_{app}": _in_app(app, _id_of(":id/search_box")) for app in ("chrome", "maps", "youtube", "messages")},
    "search_google": _search_google,
    "messages_start_chat": _in_app("messages", _id_of(":id/start_new_conversation_button")),
    "chrome_history": _in_app("chrome", _id_of(":id/menu_button"), _label_of("apps.chrome_history")),
    "b25_chrome_new_tab": _in_app("chrome", _id_of(":id/tab_switcher_button"), _id_of(":id/new_tab_button")),
    "photos_trash": _in_app("photos", _label_of("apps.photos_library"), _label_of("apps.photos_trash")),
    "youtube_pairing": _in_app("youtube", _id_of(":id/media_route_button"), _label_of("apps.youtube_link_tv")),
}


# ------------------------------------------------------------------------------------------ B-MoCA release 2.5
# A release task with the goal of one of the paper's 60 (``paper:`` in bmoca25.yaml) follows that task's recipe
# (plan_for), from the state the release's reset leaves: a switch the recipe flips the wrong way first is flipped
# again. The others have goals of their own: two of Clock's alarms, or one deleted and one made.
def _in_turn(*parts: tuple[Callable[[ExpertAgent, Screen], Gesture], Callable[[Gesture], bool]]):
    """Goals one after another: each part's recipe until it makes the gesture that reaches its goal (``last``
    says which, or the recipe itself by ``part_done`` in the expert's memory), then the next part's."""
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        done = ex._memory.get("parts_done", 0)
        part, last = parts[min(done, len(parts) - 1)]
        g = part(ex, s)
        if last(g) or ex._memory.pop("part_done", False):
            ex._memory["parts_done"] = done + 1
        return g
    return recipe


def _taps(suffix: str) -> Callable[[Gesture], bool]:
    """Whether a gesture taps the element whose resource id ends with ``suffix``."""
    return lambda g: g.target is not None and g.target.resource_id.endswith(suffix)


_SAVES_ALARM, _DELETES_ALARM = _taps("android:id/button1"), _taps(":id/delete")  # the picker's OK; a card's Delete
# B-MoCA release 2.5's calls, on its phones' AOSP Dialer: the number's digits on the dial pad, then call
PLANS |= {f"b25_call_{name}": _call(number) for name, number in (
    ("11489", "11489"), ("1234578", "1234578"), ("2234458", "2234458"), ("264451193", "264451193"),
    ("311311", "311311"), ("4027717", "4027717"), ("7663394", "7663394"), ("9876654", "9876654"),
    ("us_contact_center", "8003334636"), ("weather_service", "3017130622"), ("social_security", "8007721213"),
    ("white_house", "2024561111"))}
PLANS |= {
    "b25_alarm_1330_and_2h_after": _in_turn((_create_alarm(13, 30), _SAVES_ALARM),
                                            (_create_alarm(15, 30), _SAVES_ALARM)),
    "b25_alarm_1330_and_2h_before": _in_turn((_create_alarm(13, 30), _SAVES_ALARM),
                                             (_create_alarm(11, 30), _SAVES_ALARM)),
    "b25_alarm_9am_delete_and_1030": _in_turn((_delete_alarm(9, 0), _DELETES_ALARM),
                                              (_create_alarm(10, 30), _SAVES_ALARM)),
    # the alarm, then the alarm volume up (refused by the benchmark, whose check holds once the alarm is there; the
    # detectors study plays them: docs/environment.md, "How often the detectors judge right")
    "b25_alarm_1030_and_alarm_volume": _in_turn((_create_alarm(10, 30), _SAVES_ALARM),
                                                (_volume_up("alarm"), _SAVES_ALARM)),
    "b25_alarm_1330_and_alarm_volume": _in_turn((_create_alarm(13, 30), _SAVES_ALARM),
                                                (_volume_up("alarm"), _SAVES_ALARM)),
    "b25_alarm_9am_on_and_alarm_volume": _in_turn((_alarm_on(9, 0), _taps(":id/onoff")),
                                                  (_volume_up("alarm"), _SAVES_ALARM)),
    "b25_alarm_1330_weekend_and_alarm_volume": _in_turn((_repeating_alarm(13, 30, 96), lambda g: False),
                                                        (_volume_up("alarm"), _SAVES_ALARM)),
    # B-MoCA's evaluators: weekdays Monday to Friday (31), weekend Saturday and Sunday (96), midweek Monday to
    # Thursday (15)
    **{f"b25_alarm_{h}{m:02d}_{name}": _repeating_alarm(h, m, days) for h, m in ((10, 30), (13, 30))
       for name, days in (("weekdays", 31), ("weekend", 96), ("midweek", 15))},
}


def _slider_point(s: Screen, bar: Element, fraction: float) -> tuple[float, float]:
    """The normalised (y, x) where a tap sets a seek bar to ``fraction``: its track is inset by half its height."""
    x1, y1, x2, y2 = bar.bounds
    pad = (y2 - y1) // 2
    f = 1.0 - fraction if s.loc.rtl else fraction
    return (y1 + y2) / 2 / s.height, (x1 + pad + f * (x2 - x1 - 2 * pad)) / s.width


def _set_volume(stream: str, level: int):
    """On Sound, tap the ``stream`` slider where it sets ``level``."""
    return _volume_slider(stream, lambda s, bar: _slider_point(s, bar, level / VOLUME_MAX[stream]))


def _set_brightness(percent: int):
    def tap(screen: Screen) -> Gesture:
        return Gesture("tap", point=_slider_point(screen, screen.one(f"{SYSTEMUI}:id/slider"), percent / 100))

    return lambda ex, s: ex.settings_path(s, ["display"], "brightness", final_action=tap)


_TOGGLES = {"airplane": (["network"], "airplane_mode"), "wifi": (["network"], "wifi"),
            "bluetooth": (["connected", "connection_preferences", "bluetooth"], "bluetooth")}

# --------------------------------------------------------------------------------------------- cross-app recipes
CALENDAR = phone_apps()["calendar"].package
CONTACTS = phone_apps()["contacts"].package


def _look_up(app: str, find: Callable[[ExpertAgent, Screen], Element | None],
             shown: Callable[[ExpertAgent, Screen], bool], then: Callable[[ExpertAgent, Screen], Gesture],
             key: str = "found"):
    """A cross-app recipe: first find the information in ``app``, as a person would (open it, tap what ``find``
    picks, scroll when it picks nothing, go back from a page without the list), until ``shown`` sees it on the
    screen; then ``then``'s recipe, from wherever that left the phone. A look-up inside another's ``then`` (a
    second app to read) remembers what it found under a ``key`` of its own."""
    package = phone_apps()[app].package

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if not ex._memory.get(key):
            if s.package == package and shown(ex, s):
                ex._memory[key] = True
            elif s.package != package:
                return ex.open_app(s, app)
            else:
                target = find(ex, s)
                if target is not None:
                    return Gesture("tap", target)
                if s.scroller() is None:
                    return Gesture("key", key="BACK")
                return ex.scroll(s, f"look-up:{app}")
        return then(ex, s)
    return recipe


def _event_chip(title: str, hour: int, minute: int):
    """Calendar's schedule: the chip of the event ``title`` starting at ``hour:minute`` (the first, in date order)."""
    def find(ex: ExpertAgent, s: Screen) -> Element | None:
        start = s.loc.time(hour, minute)
        for chip in s.by_id(":id/event_chip"):
            inside = [e for e in s.els if _inside(e, chip)]
            if (any(e.resource_id.endswith(":id/event_title") and e.text == title for e in inside)
                    and any(e.resource_id.endswith(":id/event_time") and e.text.startswith(start) for e in inside)
                    and ex.tappable(s, chip)):
                return chip
        return None
    return find


def _event_details(title: str, hour: int, minute: int, holds: str = ""):
    """Calendar's details page of the event ``title`` at ``hour:minute`` (whose notes hold ``holds``)."""
    def shown(ex: ExpertAgent, s: Screen) -> bool:
        titled = any(e.resource_id == f"{CALENDAR}:id/title" and e.text == title for e in s.els)
        timed = any(e.resource_id == f"{CALENDAR}:id/time" and e.text.startswith(s.loc.time(hour, minute))
                    for e in s.els)
        noted = not holds or any(e.resource_id == f"{CALENDAR}:id/description" and holds in e.text for e in s.els)
        return titled and timed and noted
    return shown


def _person_row(name: str):
    return lambda ex, s: next((e for e in s.labelled(name) if e.resource_id == f"{CONTACTS}:id/cliv_name_textview"
                               and ex.tappable(s, e)), None)


def _person_card(name: str, phone: str):
    def shown(ex: ExpertAgent, s: Screen) -> bool:
        return (any(e.text == name for e in s.els if e.cls == "android.widget.TextView")
                and any(e.resource_id == f"{CONTACTS}:id/header" and e.text == phone for e in s.els))
    return shown


MESSAGES = phone_apps()["messages"].package
KEYBOARD = "com.google.android.inputmethod.latin"


def _type_into(ex: ExpertAgent, s: Screen, field: Element, hint: str, text: str) -> Gesture | None:
    """Type ``text`` into ``field`` (showing ``hint`` while empty) on the keyboard's keys, as a person taps them:
    focus it, tap each next letter, delete what does not fit; None once the field holds ``text``."""
    typed = "" if field.text == hint else field.text
    if typed == text:
        return None
    keys = [e for e in s.els if e.package == KEYBOARD]
    if not keys or not field.focused:  # the keyboard types into the field that has focus: this one
        return Gesture("tap", field)
    if not text.startswith(typed):
        return Gesture("tap", next(e for e in keys if e.resource_id.endswith(":id/key_pos_del")))
    key = next((e for e in keys if e.text == text[len(typed)]), None)
    if key is None:  # on the other layer: letters <-> ?123
        layer = next((e for e in keys if e.resource_id.endswith(":id/key_pos_symbol")), None)
        if layer is None or ex._memory.get("layer_switched") == typed:
            raise Stuck(f"{ex.task.id}: no key for {text[len(typed)]!r} on the keyboard")
        ex._memory["layer_switched"] = typed
        return Gesture("tap", layer)
    return Gesture("tap", key)


def _to_messages(s: Screen) -> Gesture:
    """On the share sheet: Messages' row (BACK where the sheet does not show it)."""
    target = next((e for e in s.labelled(s.loc.t("app.messages")) if e.resource_id == "android:id/text1"), None)
    return Gesture("tap", target) if target is not None else Gesture("key", key="BACK")


def _pick(ex: ExpertAgent, s: Screen, name: str) -> Gesture:
    """On Messages' recipient picker: the contact ``name`` (exactly that name), scrolling until it is in reach."""
    rows = [e for e in s.labelled(name) if e.resource_id == f"{MESSAGES}:id/contact_name" and ex.tappable(s, e)]
    return Gesture("tap", rows[0]) if rows else ex.scroll(s, "picker")


def _send_text(name: str, text: str):
    """Messages: start a chat with ``name`` (from the contacts the picker lists), type ``text`` and send it."""
    text = text.lower()  # the keyboard's letters

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package != MESSAGES:
            return ex.open_app(s, "messages")
        compose = s.one(f"{MESSAGES}:id/compose_message_text")
        if compose is not None:
            title = s.one(f"{MESSAGES}:id/conversation_title")
            if title is None or title.text != name:
                return Gesture("key", key="BACK")
            g = _type_into(ex, s, compose, s.loc.t("messages.compose_hint"), text)
            return g or Gesture("tap", s.one(f"{MESSAGES}:id/send_message_button_icon"))
        if s.one(f"{MESSAGES}:id/recipient_text_view") is not None:  # the picker
            return _pick(ex, s, name)
        start = s.one(f"{MESSAGES}:id/start_new_conversation_button")
        if start is not None and any(e.package == KEYBOARD for e in s.els):
            return Gesture("key", key="BACK")  # the keyboard (a search field was tapped) covers the button
        if start is not None:
            return Gesture("tap", start)
        return Gesture("key", key="BACK")
    return recipe


def _place_shown(title: str, hour: int, minute: int, place: str):
    def shown(ex: ExpertAgent, s: Screen) -> bool:
        return _event_details(title, hour, minute)(ex, s) and any(
            e.resource_id == f"{CALENDAR}:id/location" and e.text == place for e in s.els)
    return shown


def _text_event_place(p: dict[str, Any]):
    (hour, minute) = p["time"]
    title = _choice_words("text_event_place", "event", p["event"])
    place = _choice_words("text_event_place", "place", p["place"])
    person = _choice_words("text_event_place", "person", p["person"])
    return _look_up("calendar", _event_chip(title, hour, minute), _place_shown(title, hour, minute, place),
                    _send_text(person, place))


def _conversation_row(name: str):
    return lambda ex, s: next((e for e in s.labelled(name) if e.resource_id == f"{MESSAGES}:id/conversation_name"
                               and ex.tappable(s, e)), None)


def _message_shown(name: str, holds: str):
    """Messages: the conversation with ``name`` is open and one of its bubbles holds ``holds``."""
    def shown(ex: ExpertAgent, s: Screen) -> bool:
        title = s.one(f"{MESSAGES}:id/conversation_title")
        return (title is not None and title.text == name
                and any(e.resource_id == f"{MESSAGES}:id/message_text" and holds in e.text for e in s.els))
    return shown


def _words(p: dict[str, Any], template: str, *params: str) -> list[str]:
    return [_choice_words(template, n, p[n]) for n in params]


def _text_contact_number(p: dict[str, Any]):
    person, other = _words(p, "text_contact_number", "person", "other")
    return _look_up("contacts", _person_row(other), _person_card(other, p["phone_number"]),
                    _send_text(person, p["phone_number"]))


def _text_dial_in(p: dict[str, Any]):
    person, title = _words(p, "text_dial_in", "person", "event")
    return _look_up("calendar", _event_chip(title, 23, 0), _event_details(title, 23, 0, p["phone_number"]),
                    _send_text(person, p["phone_number"]))


def _alarm_from_message(p: dict[str, Any]):
    (hour, minute), (person,) = p["time"], _words(p, "alarm_from_message", "person")
    asked = f"{hour}:{minute:02d}"  # as the text writes it
    return _look_up("messages", _conversation_row(person), _message_shown(person, asked), _create_alarm(hour, minute))


def _call_from_message(p: dict[str, Any]):
    (person,) = _words(p, "call_from_message", "person")
    return _look_up("messages", _conversation_row(person), _message_shown(person, p["phone_number"]),
                    _call(p["phone_number"]))


def _alarm_before_event(p: dict[str, Any]):
    (hour, minute), lead = p["time"], int(p["lead"])
    title = _choice_words("alarm_before_event", "event", p["event"])
    total = (hour * 60 + minute - lead) % (24 * 60)
    return _look_up("calendar", _event_chip(title, hour, minute), _event_details(title, hour, minute),
                    _create_alarm(total // 60, total % 60))


def _alarm_from_schedule(p: dict[str, Any]):
    """As :func:`_alarm_before_event`, reading the event's time off its chip in the schedule: its details stay shut."""
    (hour, minute), lead = p["time"], int(p["lead"])
    title = _choice_words("alarm_before_event", "event", p["event"])
    total = (hour * 60 + minute - lead) % (24 * 60)
    chip = _event_chip(title, hour, minute)
    return _look_up("calendar", lambda ex, s: None, lambda ex, s: chip(ex, s) is not None,
                    _create_alarm(total // 60, total % 60))


def _call_contact(p: dict[str, Any]):
    name = _choice_words("call_contact", "person", p["person"])
    return _look_up("contacts", _person_row(name), _person_card(name, p["phone_number"]), _call(p["phone_number"]))


def _call_event_dial_in(p: dict[str, Any]):
    title = _choice_words("call_event_dial_in", "event", p["event"])
    return _look_up("calendar", _event_chip(title, 23, 0), _event_details(title, 23, 0, p["phone_number"]),
                    _call(p["phone_number"]))


def _choice_words(template: str, param: str, value: str) -> str:
    """The words a template's choice parameter gives its value (an event's title, a person's name)."""
    return templates.template(template)["params"][param]["values"][value]


# -------------------------------------------------------------------------------- Chrome's pages (cross-app recipes)
CHROME = phone_apps()["chrome"].package
FRAMEWORK = "android"  # the share sheet's window (ChooserActivity) is the framework's


def _site_row(title: str):
    """Chrome's new tab page: the row of the site titled ``title``."""
    return lambda ex, s: next((e for e in s.labelled(title) if e.resource_id == f"{CHROME}:id/tile_view_title"
                               and ex.tappable(s, e)), None)


def _page_shown(title: str, holds: str = ""):
    """Chrome shows the page titled ``title`` (its heading under the URL bar), with a paragraph holding ``holds``."""
    def shown(ex: ExpertAgent, s: Screen) -> bool:
        texts = [e.text for e in s.els if e.cls == "android.view.View" and e.package == CHROME]
        return s.one(f"{CHROME}:id/url_bar") is not None and title in texts and any(holds in t for t in texts)
    return shown


def _from_page(title: str, holds: str, then: Callable[[ExpertAgent, Screen], Gesture]):
    """A cross-app recipe that reads a web page first: open Chrome, tap the site's row on the new tab page (from
    another page, BACK to it) until the page shows ``holds``; then ``then``'s recipe."""
    shown = _page_shown(title, holds)
    look = _look_up("chrome", _site_row(title), shown, then)

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package == CHROME and s.one(f"{CHROME}:id/app_menu_list") is None and not shown(ex, s):
            ex._memory["found"] = False  # Chrome shows another page (after a wrong tap): find the page again
            if s.one(f"{CHROME}:id/url_bar") is not None:
                return Gesture("key", key="BACK")  # back towards the new tab page
        return look(ex, s)
    return recipe


def _share_to(name: str):
    """From the page Chrome shows: the app menu's Share…, Messages in the share sheet, ``name`` in Messages' picker,
    then send the draft the share made. Nothing is typed (the constrained variant holds to it): a conversation
    without the shared draft is left for Chrome, to share again."""
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package == FRAMEWORK:
            return _to_messages(s)
        if s.package == MESSAGES:
            compose, title = s.one(f"{MESSAGES}:id/compose_message_text"), s.one(f"{MESSAGES}:id/conversation_title")
            if (compose is not None and title is not None and title.text == name
                    and compose.text not in ("", s.loc.t("messages.compose_hint"))):
                return Gesture("tap", s.one(f"{MESSAGES}:id/send_message_button_icon"))
            if s.one(f"{MESSAGES}:id/recipient_text_view") is not None:  # the picker the share opened
                return _pick(ex, s, name)
            return ex.open_app(s, "chrome")
        if s.package != CHROME:
            return ex.open_app(s, "chrome")
        share = [e for e in s.labelled(s.loc.t("apps.chrome_share")) if e.resource_id == f"{CHROME}:id/menu_item_text"]
        if share:
            return Gesture("tap", share[0])
        if s.one(f"{CHROME}:id/app_menu_list") is not None:  # a menu without Share…: not over the page
            return Gesture("key", key="BACK")
        return Gesture("tap", s.one(f"{CHROME}:id/menu_button"))
    return recipe


def _share_page(p: dict[str, Any]):
    site, person = _words(p, "share_page", "site", "person")
    return _from_page(site, "", _share_to(person))


def _text_page_fact(p: dict[str, Any]):
    site, password, person = _words(p, "text_page_fact", "site", "password", "person")
    return _from_page(site, password, _send_text(person, password))


def _call_page_number(p: dict[str, Any]):
    (site,) = _words(p, "call_page_number", "site")
    return _from_page(f"{site} - Contact", p["phone_number"], _call(p["phone_number"]))


def _alarm_from_page(p: dict[str, Any]):
    (hour, minute), (site, event) = p["time"], _words(p, "alarm_from_page", "site", "event")
    return _from_page(site, f"The {event} starts at {hour}:{minute:02d}", _create_alarm(hour, minute))


# ------------------------------------------------------------------------- Files and the recents screen (cross-app)
FILES = phone_apps()["files"].package


def _from_recents(apps: tuple[str, ...], recipe: Callable[[ExpertAgent, Screen], Gesture]):
    """A recipe for a phone whose starting state leaves ``apps`` open: every app it opens among them it reaches on
    the recents screen (:meth:`ExpertAgent.switch_to`), never through the home screen (a constrained variant holds
    to it)."""
    def wrapped(ex: ExpertAgent, s: Screen) -> Gesture:
        ex._memory.setdefault("recents", apps)
        return recipe(ex, s)
    return wrapped


def _item_rows(s: Screen) -> list[tuple[Element, Element]]:
    """Files' list: each item's row with its title, in screen order."""
    rows = s.by_id(f"{FILES}:id/item_root")
    titles = [e for e in s.els if e.resource_id == "android:id/title" and e.package == FILES]
    return [(row, t) for row in rows for t in titles if t.parent == row.index]


def _share_file(root: str, name: str, person: str):
    """Files -> Messages: the file ``name`` in Files' root ``root`` (its row on Recent, never the search), chosen by
    a tap on its icon, then the action mode's Share, Messages in the share sheet, ``person`` in Messages' picker
    (exactly that name: a namesake "(work)" stands beside them), and send once the conversation carries the file.
    A choice that is not the file alone is cleared first."""
    label = f"apps.files_{root}"

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package == FRAMEWORK:  # the share sheet
            return _to_messages(s)
        if s.package == MESSAGES:
            title = s.one(f"{MESSAGES}:id/conversation_title")
            carried = [e.content_desc for e in s.by_id(f"{MESSAGES}:id/attachment_preview")]
            if title is not None and title.text == person and carried == [name]:
                return Gesture("tap", s.one(f"{MESSAGES}:id/send_message_button_icon"))
            if s.one(f"{MESSAGES}:id/recipient_text_view") is not None:  # the picker the share opened
                return _pick(ex, s, person)
            return ex.open_app(s, "files")
        if s.package != FILES:
            return ex.open_app(s, "files")
        if any(e.package == KEYBOARD for e in s.els):
            return Gesture("key", key="BACK")
        share = s.one(f"{FILES}:id/action_menu_share")
        if share is not None:  # the action mode: share the file if it alone is chosen, else clear the choice
            count = s.one("android:id/action_bar_title")
            chosen = [t.text for row, t in _item_rows(s) if row.selected]
            if count is not None and count.text == s.loc.number(1) and chosen == [name]:
                return Gesture("tap", share)
            return Gesture("tap", s.one("android:id/action_mode_close_button"))
        bar = s.one(f"{FILES}:id/action_bar")
        if bar is not None:  # a root's list
            if not any(e.text == s.loc.t(label) for e in s.els if _inside(e, bar)):
                return Gesture("key", key="BACK")
            rows = [row for row, t in _item_rows(s) if t.text == name and ex.tappable(s, row)]
            if not rows:
                return ex.scroll(s, f"files:{root}")
            icon = next(e for e in s.by_id(f"{FILES}:id/icon") if e.parent == rows[0].index)
            return Gesture("tap", icon)
        rows = [e for e in s.labelled(s.loc.t(label)) if e.clickable and ex.tappable(s, e)]  # Recent: the root
        return Gesture("tap", rows[0]) if rows else Gesture("key", key="BACK")
    return recipe


def _share_photo(p: dict[str, Any]):
    photo, person = _words(p, "share_photo", "photo", "person")
    return _share_file("images", f"{photo}.jpg", person)


def _share_newest_download(p: dict[str, Any]):
    photo, person = _words(p, "share_newest_download", "photo", "person")
    return _share_file("downloads", f"{photo}.jpg", person)


def _share_selected_via_recents(p: dict[str, Any]):
    video, person = _words(p, "share_selected_via_recents", "video", "person")
    return _from_recents(("files", "messages"), _share_file("videos", f"{video}.mp4", person))


def _alarm_event_via_recents(p: dict[str, Any]):
    (hour, minute), lead = p["time"], int(p["lead"])
    title = _choice_words("alarm_event_via_recents", "event", p["event"])
    total = (hour * 60 + minute - lead) % (24 * 60)
    return _from_recents(("calendar", "clock"), _look_up("calendar", _event_chip(title, hour, minute),
                                                         _event_details(title, hour, minute),
                                                         _create_alarm(total // 60, total % 60)))


def _namesake_rows(name: str):
    """Contacts' list: the rows named ``name``, a different one at each try (two people share the name; the card
    tells them apart by the number)."""
    def find(ex: ExpertAgent, s: Screen) -> Element | None:
        rows = [e for e in s.labelled(name) if e.resource_id == f"{CONTACTS}:id/cliv_name_textview"
                and ex.tappable(s, e)]
        if not rows:
            return None
        tried = ex._memory.get("namesakes_tried", 0)
        ex._memory["namesakes_tried"] = tried + 1
        return rows[tried % len(rows)]
    return find


def _call_contact_via_recents(p: dict[str, Any]):
    (name,) = _words(p, "call_contact_via_recents", "person")
    return _from_recents(("contacts", "phone"), _look_up("contacts", _namesake_rows(name),
                                                         _person_card(name, p["phone_number"]),
                                                         _call(p["phone_number"])))


def _text_page_via_recents(p: dict[str, Any]):
    site, password, person = _words(p, "text_page_via_recents", "site", "password", "person")
    return _from_recents(("chrome", "messages"), _from_page(site, password, _send_text(person, password)))


# ------------------------------------------------------------------------------------------ Snapseed (release 2.5)
# Snapseed's tasks: a photo opened from the app's own panel (the newest of the strip), the tab, the look or Noir's
# style tapped; a setting chosen in the app's Settings (More options, Settings, the row, the choice); the two in turn.
SNAPSEED = "com.niksoftware.snapseed"


def _snapseed_editor(ex: ExpertAgent, s: Screen) -> Gesture | None:
    """Snapseed open on a photo, with nothing over the editor's tabs; None once it is so."""
    if s.package != SNAPSEED:
        return ex.open_app(s, "snapseed")
    if s.one(f"{SNAPSEED}:id/action_bar") is not None or s.one(f"{SNAPSEED}:id/title") is not None:
        return Gesture("key", key="BACK")  # Settings or the More options menu: off the path
    for rid in ("recent_image", "logo_view"):
        found = s.one(f"{SNAPSEED}:id/{rid}")
        if found is not None:
            return Gesture("tap", found)
    return None


def _on_editor(then: Callable[[ExpertAgent, Screen], Gesture]):
    """A recipe that opens a photo in Snapseed's editor first, then goes on with ``then``."""
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        g = _snapseed_editor(ex, s)
        return g if g is not None else then(ex, s)
    return recipe


def _snapseed_tab(tab: str):
    """A photo open and the editor's ``tab`` selected (LOOKS is, once a photo opens)."""
    def then(ex: ExpertAgent, s: Screen) -> Gesture:
        button = s.one(f"{SNAPSEED}:id/{tab}_button")
        if button is None:  # a look being tried or a tool open: put it away
            return Gesture("key", key="BACK")
        return Gesture("tap", button)
    return _on_editor(then)


def _snapseed_look(look: str):
    def then(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.one(f"{SNAPSEED}:id/looks_list") is None:
            return _snapseed_tab("looks")(ex, s)
        name = s.loc.t(f"snapseed.look_{look}")
        items = s.labelled(name, where=lambda e: e.resource_id == f"{SNAPSEED}:id/label")
        if not items:
            raise Stuck(f"{ex.task.id}: the look {name!r} is not in the strip")
        return Gesture("tap", items[0])
    return _on_editor(then)


def _snapseed_noir(style: str):
    """TOOLS, Noir, Styles, the style."""
    def then(ex: ExpertAgent, s: Screen) -> Gesture:
        styles = s.labelled(style, where=lambda e: e.resource_id == f"{SNAPSEED}:id/label")
        if styles:
            return Gesture("tap", styles[0])
        strip = s.one(f"{SNAPSEED}:id/styles_list")
        if strip is not None:  # the style is further along the strip: swipe it on (the other way in a mirrored one)
            x1, y1, x2, y2 = strip.bounds
            y = (y1 + y2) / 2 / s.height
            ends = ((x1 + (x2 - x1) * 0.8) / s.width, (x1 + (x2 - x1) * 0.2) / s.width)
            start, end = reversed(ends) if s.loc.rtl else ends
            return Gesture("swipe", point=(y, start), lift=(y, end))
        button = s.one(f"{SNAPSEED}:id/styles_button")
        if button is not None:
            return Gesture("tap", button)
        if s.one(f"{SNAPSEED}:id/tools_list") is not None:
            noir = s.labelled(s.loc.t("snapseed.tool_noir"), where=lambda e: e.clickable and ex.tappable(s, e))
            return Gesture("tap", noir[0]) if noir else ex.scroll(s, "snapseed_tools")
        return _snapseed_tab("tools")(ex, s)
    return _on_editor(then)


def _snapseed_setting(row: str, choice: Callable[[Locale], str] | None = None):
    """More options, Settings, the row titled ``row`` (a string key), and in its dialog the ``choice`` (its text in
    the locale); a row without one is the Dark theme switch's."""
    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package != SNAPSEED:
            return ex.open_app(s, "snapseed")
        if s.one(f"{SNAPSEED}:id/action_bar") is not None:  # Settings
            if choice is not None and s.one("android:id/select_dialog_listview") is not None:
                options = s.labelled(choice(s.loc), where=lambda e: e.resource_id == "android:id/text1")
                return Gesture("tap", options[0]) if options else Gesture("key", key="BACK")
            rows = s.labelled(s.loc.t(row), where=lambda e: e.resource_id == "android:id/title")
            return Gesture("tap", rows[0]) if rows else ex.scroll(s, "snapseed_settings")
        item = s.labelled(s.loc.t("snapseed.settings"), where=lambda e: e.resource_id == f"{SNAPSEED}:id/title")
        if item:
            return Gesture("tap", item[0])
        if s.one(f"{SNAPSEED}:id/open_panel") is not None:
            return Gesture("key", key="BACK")
        more = s.labelled(s.loc.t("common.more_options"), where=lambda e: e.clickable)
        return Gesture("tap", more[0]) if more else Gesture("key", key="BACK")
    return recipe


def _snapseed_open(ex: ExpertAgent, s: Screen) -> Gesture:
    """Snapseed's start screen (or wherever it opens): once it is open the task is done."""
    return ex.open_app(s, "snapseed") if s.package != SNAPSEED else Gesture("key", key="BACK")


_SNAPSEED_SETTINGS = {
    "dark_theme": (_snapseed_setting("snapseed.dark_theme"),
                   lambda g: g.target is not None and g.target.resource_id == "android:id/title"),
    "quality_100": (_snapseed_setting("snapseed.format_quality",
                                      lambda loc: loc.t("snapseed.jpg", n=loc.number(100))), _taps("android:id/text1")),
    "sizing_2000": (_snapseed_setting("snapseed.image_sizing",
                                      lambda loc: loc.t("snapseed.px", n=loc.number(2000))), _taps("android:id/text1")),
}
PLANS |= {
    "b25_open_snapseed": _snapseed_open,
    "b25_snapseed_open_image": _snapseed_tab("looks"),
    "b25_snapseed_tools": _snapseed_tab("tools"),
    "b25_snapseed_portrait": _snapseed_look("portrait"),
    "b25_snapseed_s03": _snapseed_noir("S03"),
    "b25_snapseed_dark_theme": _SNAPSEED_SETTINGS["dark_theme"][0],
    "b25_snapseed_quality_100": _SNAPSEED_SETTINGS["quality_100"][0],
    "b25_snapseed_sizing_2000": _SNAPSEED_SETTINGS["sizing_2000"][0],
    **{f"b25_snapseed_s03_after_{name}": _in_turn(part, (_snapseed_noir("S03"), lambda g: False))
       for name, part in _SNAPSEED_SETTINGS.items()},
}


# Parameterized tasks (vlui/tasks/templates.py): template -> its recipe for an instance's parameters.
TEMPLATE_PLANS = {
    "create_alarm": lambda p: _create_alarm(*p["time"]),
    "call_number": lambda p: _call(p["phone_number"]),
    "toggle_setting": lambda p: _settings_row(*_TOGGLES[p["setting"]]),  # the switch flips either way
    "set_volume": lambda p: _set_volume(p["stream"], p["level"]),
    "set_brightness": lambda p: _set_brightness(p["level"]),
}
# Constrained variants whose base recipe keeps the constraint: Settings' rows, not its search; the dial pad, not
# Contacts; a new alarm, no alarm deleted (the tests hold every instance to it)
TEMPLATE_PLANS |= {"toggle_setting_no_search": TEMPLATE_PLANS["toggle_setting"],
                   "call_number_no_contacts": TEMPLATE_PLANS["call_number"],
                   "create_alarm_keep_alarms": TEMPLATE_PLANS["create_alarm"],
                   # cross-app: found in one app, used in another
                   "alarm_before_event": _alarm_before_event, "call_contact": _call_contact,
                   "call_event_dial_in": _call_event_dial_in, "text_event_place": _text_event_place,
                   # constrained cross-app tasks: the list, not the search; the schedule, not the details; Messages'
                   # own picker, not Contacts
                   "call_contact_no_search": _call_contact, "alarm_before_event_from_schedule": _alarm_from_schedule,
                   "text_event_place_no_contacts": _text_event_place,
                   "text_contact_number": _text_contact_number, "text_dial_in": _text_dial_in,
                   "alarm_from_message": _alarm_from_message, "call_from_message": _call_from_message,
                   # constrained: reading a text, not answering it; reading a contact, not editing it; the event's
                   # notes, not Contacts; a new alarm, none deleted; a new chat, not a search
                   "alarm_from_message_no_reply": _alarm_from_message, "call_from_message_no_reply": _call_from_message,
                   "call_contact_no_edit": _call_contact, "call_event_dial_in_no_contacts": _call_event_dial_in,
                   "alarm_before_event_keep_alarms": _alarm_before_event, "text_event_place_no_search": _text_event_place,
                   # Chrome's pages: the site's row, then the share sheet (nothing typed, as the constrained variant
                   # wants), the keyboard, the dial pad or Clock; the new tab page's rows, never the search bar
                   "share_page": _share_page, "text_page_fact": _text_page_fact,
                   "call_page_number": _call_page_number, "alarm_from_page": _alarm_from_page,
                   "share_page_no_typing": _share_page, "call_page_number_no_search": _call_page_number}


# ------------------------------------------------------------------------------------------ More cross-app families
# The recipes of the templates under the same heading in templates.yaml: the skills above, composed; a second app to
# read is a look-up inside the first's (its own memory key), and Contacts' editor, Clock's timer and Chrome's new
# tab page get a skill each.
def _event_with(template: str, p: dict[str, Any]) -> tuple[str, str]:
    """An event titled "<event> with <person>" (who it is with is in its title), and the person."""
    event, person = _words(p, template, "event", "person")
    return f"{event} with {person}", person


def _call_event_person(p: dict[str, Any]):
    title, person = _event_with("call_event_person", p)
    return _look_up("calendar", _event_chip(title, 12, 30), _event_details(title, 12, 30),
                    _look_up("contacts", _person_row(person), _person_card(person, p["phone_number"]),
                             _call(p["phone_number"]), key="found:contacts"))


def _text_event_time(p: dict[str, Any]):
    (hour, minute), (title, person) = p["time"], _event_with("text_event_time", p)
    return _look_up("calendar", _event_chip(title, hour, minute), _event_details(title, hour, minute),
                    _send_text(person, f"{hour}:{minute:02d}"))  # a morning's time reads so in every locale


def _text_contact_email(p: dict[str, Any]):
    person, other, domain = _words(p, "text_contact_email", "person", "other", "domain")
    email = f"{p['other']}@{domain}"
    return _look_up("contacts", _person_row(other), _person_card(other, email), _send_text(person, email))


def _forward_message_place(p: dict[str, Any]):
    person, other, place = _words(p, "forward_message_place", "person", "other", "place")
    return _look_up("messages", _conversation_row(person), _message_shown(person, place), _send_text(other, place))


_SETTING_TOGGLES = {"wifi": _TOGGLES["wifi"], "bluetooth": _TOGGLES["bluetooth"], "airplane_mode": _TOGGLES["airplane"]}


def _setting_from_message(p: dict[str, Any]):
    """The switch's row in Settings' pages (never its search: the constrained variant holds to that)."""
    person, setting = _words(p, "setting_from_message", "person", "setting")
    return _look_up("messages", _conversation_row(person), _message_shown(person, f"turn on {setting}"),
                    _settings_row(*_SETTING_TOGGLES[p["setting"]]))


def _brightness_from_page(p: dict[str, Any]):
    (site,) = _words(p, "brightness_from_page", "site")
    return _from_page(site, f"brightness to {p['level']} percent", _set_brightness(p["level"]))


def _start_timer(minutes: int):
    """Clock's timer: delete a timer that is set, type ``minutes`` on the keypad (deleting what does not fit), start."""
    want = f"{minutes}00"  # HHMMSS filled from the right: 25 minutes is 2, 5, 0, 0

    def setup_text(s: Screen, digits: str) -> str:  # what the keypad's display shows for the digits typed
        d = digits.rjust(6, "0")
        return s.loc.number(f"{d[0:2]}h {d[2:4]}m {d[4:6]}s")

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        g = ex.clock_tab(s, "timer")
        if g is not None:
            return g
        if s.one(f"{CLOCK}:id/timer_time_text") is not None:  # a timer set before this one
            return Gesture("tap", s.one(f"{CLOCK}:id/left_button"))
        shown = s.one(f"{CLOCK}:id/timer_setup_time")
        if shown is None:
            raise Stuck(f"{ex.task.id}: no timer keypad")
        typed = next((k for k in range(len(want), -1, -1) if shown.text == setup_text(s, want[:k])), None)
        if typed == len(want):
            return Gesture("tap", s.one(f"{CLOCK}:id/fab"))
        if typed is None:
            return Gesture("tap", s.one(f"{CLOCK}:id/timer_setup_delete"))
        return Gesture("tap", s.one(f"{CLOCK}:id/timer_setup_digit_{want[typed]}"))
    return recipe


def _timer_from_page(p: dict[str, Any]):
    site, dish = _words(p, "timer_from_page", "site", "dish")
    return _from_page(site, f"Bake the {dish} for {p['minutes']} minutes", _start_timer(p["minutes"]))


def _timer_from_message(p: dict[str, Any]):
    (person,) = _words(p, "timer_from_message", "person")
    return _look_up("messages", _conversation_row(person), _message_shown(person, f"a {p['minutes']} minute timer"),
                    _start_timer(p["minutes"]))


def _open_site(title: str):
    """Chrome: the site titled ``title`` from the new tab page's rows (another page, the menu or the keyboard: BACK
    towards it). Opening it is the goal: nothing comes after."""
    row = _site_row(title)

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package != CHROME:
            return ex.open_app(s, "chrome")
        target = row(ex, s)
        if target is not None:
            return Gesture("tap", target)
        if s.one(f"{CHROME}:id/tile_grid_layout") is not None and not any(e.package == KEYBOARD for e in s.els):
            return ex.scroll(s, "sites")
        return Gesture("key", key="BACK")
    return recipe


def _open_event_page(p: dict[str, Any]):
    event, site = _words(p, "open_event_page", "event", "site")
    return _look_up("calendar", _event_chip(event, 19, 0), _event_details(event, 19, 0, f"{p['site']}.example.org"),
                    _open_site(site))


def _open_message_link(p: dict[str, Any]):
    person, site = _words(p, "open_message_link", "person", "site")
    return _look_up("messages", _conversation_row(person), _message_shown(person, f"{p['site']}.example.org"),
                    _open_site(site))


_EDITOR_HINTS = ("apps.contacts_first_name", "apps.contacts_last_name", "apps.contacts_phone")


def _save_contact(name: str, phone: str):
    """Contacts: a new contact (the list's create button), its first name, last name and phone typed in the
    editor's fields (in their order, the keyboard's letters), then Save."""
    given, _, family = name.lower().rpartition(" ")
    texts = (given, family, phone) if given else (family, "", phone)

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package != CONTACTS:
            return ex.open_app(s, "contacts")
        save = s.one(f"{CONTACTS}:id/editor_menu_save_button")
        if save is not None:
            if not s.labelled(s.loc.t("apps.contacts_create")):
                return Gesture("key", key="BACK")  # an existing contact's editor
            fields = [e for e in s.els if e.cls == "android.widget.EditText" and e.package == CONTACTS]
            for field, hint, text in zip(fields, _EDITOR_HINTS, texts, strict=True):
                g = _type_into(ex, s, field, s.loc.t(hint), text)
                if g is not None:
                    return g
            return Gesture("tap", save)
        create = s.one(f"{CONTACTS}:id/fab")
        if create is not None and not any(e.package == KEYBOARD for e in s.els):
            return Gesture("tap", create)
        return Gesture("key", key="BACK")  # a card, or the search's keyboard over the list
    return recipe


def _save_contact_from_message(p: dict[str, Any]):
    person, other = _words(p, "save_contact_from_message", "person", "other")
    return _look_up("messages", _conversation_row(person), _message_shown(person, p["phone_number"]),
                    _save_contact(other, p["phone_number"]))


def _save_contact_from_page(p: dict[str, Any]):
    (site,) = _words(p, "save_contact_from_page", "site")
    return _from_page(f"{site} - Contact", p["phone_number"], _save_contact(site, p["phone_number"]))


def _call_texter(p: dict[str, Any]):
    topic, person = _words(p, "call_texter", "topic", "person")
    return _look_up("messages", _conversation_row(person), _message_shown(person, topic),
                    _look_up("contacts", _person_row(person), _person_card(person, p["phone_number"]),
                             _call(p["phone_number"]), key="found:contacts"))


def _reply_event_time(p: dict[str, Any]):
    (hour, minute), (person, event) = p["time"], _words(p, "reply_event_time", "person", "event")
    return _look_up("messages", _conversation_row(person), _message_shown(person, event),
                    _look_up("calendar", _event_chip(event, hour, minute), _event_details(event, hour, minute),
                             _send_text(person, f"{hour}:{minute:02d}"), key="found:calendar"))


TEMPLATE_PLANS |= {"call_event_person": _call_event_person, "text_event_time": _text_event_time,
                   "text_contact_email": _text_contact_email, "forward_message_place": _forward_message_place,
                   "setting_from_message": _setting_from_message, "brightness_from_page": _brightness_from_page,
                   "timer_from_page": _timer_from_page, "timer_from_message": _timer_from_message,
                   "open_event_page": _open_event_page, "open_message_link": _open_message_link,
                   "save_contact_from_message": _save_contact_from_message,
                   "save_contact_from_page": _save_contact_from_page, "call_texter": _call_texter,
                   "reply_event_time": _reply_event_time,
                   # constrained: Settings' pages, never its search
                   "setting_from_message_no_search": _setting_from_message}
# Files and the recents screen: a file chosen in its root (never Files' search, as share_photo_no_search wants) and
# shared; apps left open reached on the recents screen (never through home, as alarm_event_via_recents_no_home wants)
TEMPLATE_PLANS |= {"share_photo": _share_photo, "share_newest_download": _share_newest_download,
                   "share_selected_via_recents": _share_selected_via_recents,
                   "alarm_event_via_recents": _alarm_event_via_recents,
                   "call_contact_via_recents": _call_contact_via_recents,
                   "text_page_via_recents": _text_page_via_recents,
                   "share_photo_no_search": _share_photo, "alarm_event_via_recents_no_home": _alarm_event_via_recents}


# ------------------------------------------------------------------------------- Calculator (B-MoCA release 2.5)
_CALCULATOR_KEYS = {text: key for key, text in FORMULA_TEXT.items() if key not in ("lparen", "rparen")}


def _calculator(formula: str):
    """Type ``formula`` (its text as the formula shows it, a function as its letter) on the Calculator's keys: one
    key a character, the parentheses key for "(" and ")"; a scientific key opens the scientific rows (or turns the
    inverse functions off) first. A formula that is not the start of this one, or a result shown, is cleared."""
    keys = ["parens" if ch in "()" else _CALCULATOR_KEYS[ch] for ch in formula]
    package = phone_apps()["calculator"].package

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        if s.package != package:
            return ex.open_app(s, "calculator")
        shown = s.one(":id/formula")
        text = shown.text if shown is not None else ""
        if s.one(":id/result_final") is not None or not formula.startswith(text):
            return Gesture("tap", s.one(":id/clr"))
        if text == formula:
            return Gesture("tap", s.one(":id/eq"))
        target = s.one(f":id/{keys[len(text)]}")
        if target is None:  # a scientific key: its rows are closed, or show the inverse functions
            return Gesture("tap", s.one(":id/collapse_expand" if s.one(":id/toggle_inv") is None else ":id/toggle_inv"))
        return Gesture("tap", target)
    return recipe


# the formula each task's check reads, typed as the app writes it ("c60" is cos(60: the check wants no ")"); the two
# means as the live result shows them: 60^(1/3) and 2/(1/4+1/5)
PLANS |= {
    "b25_open_calculator": _open("calculator"),
    **{f"b25_calc_{name}": _calculator(formula) for name, formula in (
        ("50_percent_of_28", "50%28"), ("geometric_mean", "(3×4×5)^(1÷3"), ("harmonic_mean", "2÷(1÷4+1÷5"),
        ("1_plus_1", "1+1"), ("10_choose_2", "10!÷(2!×8!)"), ("17_times_23", "17×23"), ("2_plus_24_over_3", "2+24÷3"),
        ("3_times_5", "3×5"), ("5_choose_2", "5!÷(2!×3!)"), ("cos_180", "c180"), ("cos_60", "c60"),
        ("ln_1234", "l1234"), ("input_1", "1"), ("factorial_6", "6!"), ("sqrt_25", "√25"),
        ("sum_5_fibonacci", "1+1+2+3+5"), ("sum_5_primes", "2+3+5+7+11"), ("45_degrees_to_radians", "45×π÷180"))},
}


# ------------------------------------------------------------------------------------------ Walmart (release 2.5)
# Its five tabs, the cart button and the store map by resource id; the store map's row and the Grocery department by
# their text: the row's label in the phone's language, the department by its name, the catalogue's English on every
# phone (the name B-MoCA's evaluator reads).
def _text(value: Callable[[Screen], str]):
    """A finder: the first element showing the text ``value`` gives for the screen (its row takes the tap)."""
    return lambda s: next(iter(s.labelled(value(s))), None)


PLANS |= {
    "b25_open_walmart": _in_app("walmart"),
    **{f"b25_walmart_{tab}": _in_app("walmart", _id_of(f"walmart.android:id/navigation_{tab}"))
       for tab in ("account", "my_items", "search", "services")},
    "b25_walmart_cart": _in_app("walmart", _id_of("walmart.android:id/cart_button")),
    "b25_walmart_store_map": _in_app("walmart", _id_of("walmart.android:id/navigation_services"),
                                     _text(lambda s: s.loc.t("walmart.store_map"))),
    "b25_walmart_grocery": _in_app("walmart", _id_of("walmart.android:id/navigation_search"),
                                   _text(lambda s: "Grocery")),
}
# Instagram (release 2.5): its tab bar by resource id; the app opens on Home, whose tab (feed_tab selected) is what
# "open Instagram" is judged by
PLANS |= {
    "b25_open_instagram": _in_app("instagram"),
    **{f"b25_instagram_{name}": _in_app("instagram", _id_of(f"instagram.android:id/{tab}"))
       for name, tab in (("profile", "profile_tab"), ("reels", "clips_tab"), ("search", "search_tab"))},
}


def plan_for(task: Task):
    """The recipe for a task: its own, or its template's for its parameters."""
    if task.id in PLANS:
        return PLANS[task.id]
    if task.paper in PLANS:
        return PLANS[task.paper]
    if task.template in TEMPLATE_PLANS:
        return TEMPLATE_PLANS[task.template](task.params)
    raise VluiError(f"the expert has no recipe for task {task.id!r} yet")


# ------------------------------------------------------------------------------------------ Wikipedia (B-MoCA 2.5)
# The app's settings through More > Settings: Show link previews first (a preferences file keeps its keys in the
# order they were first written, and B-MoCA's check reads its last entry: the feed's), then Explore Feed's switches
# (each row's title, the card types in their order), then App theme's text size, then BACK to the tab wanted. The
# feed's switches alone are nearer through a feed card's menu (Customize the feed).
WIKIPEDIA = phone_apps()["wikipedia"].package
_WIKI_CARDS = ("featured_article", "top_read", "featured_image", "because_you_read", "news", "on_this_day", "random",
               "main_page")  # Customize the feed's rows, in order (its 1-based "indices")


def _wikipedia(tab: str = "explore", cards_off: tuple[int, ...] = (), text_percent: int | None = None,
               previews_off: bool = False):
    """Wikipedia: the card types at 0-based ``cards_off`` switched off in Customize the feed, the text size at
    ``text_percent``, Show link previews off, then the ``tab`` (nav_tab_*) selected."""
    def text_shown(s: Screen) -> str:
        percent = s.loc.number(text_percent) + "%"
        return s.loc.t("wikipedia.text_size_default", value=percent) if text_percent == 100 else percent

    def recipe(ex: ExpertAgent, s: Screen) -> Gesture:
        mem = ex._memory
        if s.package != WIKIPEDIA:
            return ex.open_app(s, "wikipedia")
        todo = ((previews_off and not mem.get("wiki:previews")) or (cards_off and not mem.get("wiki:feed"))
                or (text_percent is not None and not mem.get("wiki:text")))
        tabs = s.one(f"{WIKIPEDIA}:id/nav_more_container")
        sheet = s.one(f"{WIKIPEDIA}:id/main_drawer_settings_container")
        if sheet is not None:
            return Gesture("tap", sheet) if todo else Gesture("key", key="BACK")
        customize = s.labelled(s.loc.t("wikipedia.customize_title"), where=lambda e: e.resource_id.endswith(":id/title"))
        if customize:  # a card's menu
            return Gesture("tap", customize[0]) if todo else Gesture("key", key="BACK")
        if tabs is not None:
            # the feed alone: a card's menu has Customize the feed, nearer than More > Settings > Explore Feed
            card_menu = [e for e in s.by_id(f"{WIKIPEDIA}:id/view_list_card_header_menu") if ex.tappable(s, e)]
            if todo and card_menu and not (previews_off or text_percent is not None):
                return Gesture("tap", card_menu[0])
            if todo:
                return Gesture("tap", tabs)
            item = s.one(f"{WIKIPEDIA}:id/nav_tab_{'reading_lists' if tab == 'saved' else tab}")
            return Gesture("tap", item) if not item.selected else Gesture("key", key="BACK")
        if s.one(f"{WIKIPEDIA}:id/content_types_recycler") is not None:
            return _wiki_cards(ex, s, cards_off)
        bar = s.one(f"{WIKIPEDIA}:id/text_size_seek_bar")
        if bar is not None:
            if s.one(f"{WIKIPEDIA}:id/text_size_percent").text == text_shown(s):
                mem["wiki:text"] = True
                return Gesture("key", key="BACK")
            return Gesture("tap", point=_slider_point(s, bar, (text_percent - 50) / 130))
        if s.one(f"{WIKIPEDIA}:id/recycler_view") is None:
            return Gesture("key", key="BACK")
        # Settings
        previews = _wiki_row(s, "wikipedia.link_previews")
        if previews_off and not mem.get("wiki:previews"):
            switch = previews and next((e for e in s.els if e.resource_id.endswith(":id/switchWidget")
                                        and _inside(e, previews)), None)
            if switch is None:
                return ex.scroll(s, "wiki:settings")
            if not switch.checked:
                mem["wiki:previews"] = True
            else:
                return Gesture("tap", switch)
        for done, title in (("wiki:feed", "wikipedia.explore_feed"), ("wiki:text", "wikipedia.app_theme")):
            wanted = cards_off if done == "wiki:feed" else text_percent is not None
            if wanted and not mem.get(done):
                row = _wiki_row(s, title)
                return Gesture("tap", row) if row is not None else ex.scroll(s, "wiki:settings")
        return Gesture("key", key="BACK")
    return recipe


def _wiki_row(s: Screen, key: str) -> Element | None:
    """The clickable Settings row whose title is string ``key``, fully on the screen."""
    titles = s.labelled(s.loc.t(key), where=lambda e: e.resource_id == "android:id/title")
    rows = [r for r in s.els if r.clickable and titles and _centre_inside(titles[0], r) and r.cls.endswith("Layout")]
    return rows[0] if rows and s.height * 0.03 <= rows[0].bounds[1] and rows[0].bounds[3] <= s.height * 0.93 else None


def _wiki_cards(ex: ExpertAgent, s: Screen, cards_off: tuple[int, ...]) -> Gesture:
    """Customize the feed: the rows' switches as wanted (off at ``cards_off``), the rows off the screen scrolled to;
    once those are seen right, BACK (which saves them)."""
    seen = ex._memory.setdefault("wiki:cards", {})
    titles = {s.loc.t(f"wikipedia.card_{kind}"): i for i, kind in enumerate(_WIKI_CARDS)}
    where: dict[int, float] = {}  # the rows in view, by index: their middle, as a fraction of the screen's height
    for title in s.by_id(f"{WIKIPEDIA}:id/feed_content_type_title"):
        i = titles.get(title.text)
        row = next((e for e in s.els if e.content_desc.startswith(title.text + ", ")), None)
        switch = next((e for e in s.by_id(f"{WIKIPEDIA}:id/feed_content_type_checkbox")
                       if row is not None and _centre_inside(e, row)), None)
        if i is None or row is None:
            continue
        where[i] = (row.bounds[1] + row.bounds[3]) / 2 / s.height
        x1, y1, x2, y2 = switch.bounds if switch is not None else (0, 0, 1, 0)
        if (y2 - y1) < 0.6 * (x2 - x1):  # cut by the list's edge: scrolled into view first
            continue
        if switch.checked == (i in cards_off):
            seen.pop(i, None)
            return Gesture("tap", switch)
        seen[i] = True
    # the rows up to the last to switch off, seen right; those further down are on, as the feed starts, unless seen
    # otherwise on the way (a wrong one in view is switched above)
    missing = set(range(max(cards_off) + 1)) - set(seen)
    if not missing:
        ex._memory["wiki:feed"] = True
        return Gesture("key", key="BACK")
    first = min(missing)
    down = where[first] > 0.5 if first in where else (not where or first > max(where))
    return ex.scroll(s, "wiki:cards", towards=0.6 if down else -0.6)


PLANS |= {
    "b25_open_wikipedia": _wikipedia(),
    "b25_wikipedia_saved_tab": _wikipedia("saved"),
    "b25_wikipedia_search_tab": _wikipedia("search"),
    "b25_wikipedia_text_50": _wikipedia(text_percent=50),
    "b25_wikipedia_text_180": _wikipedia(text_percent=180),
    "b25_wikipedia_no_featured_text_50": _wikipedia(cards_off=(0,), text_percent=50),
    "b25_wikipedia_no_featured_text_180": _wikipedia(cards_off=(0,), text_percent=180),
    "b25_wikipedia_no_previews_top_read": _wikipedia(cards_off=(1,), previews_off=True),
    "b25_wikipedia_no_top1_randomizer": _wikipedia(cards_off=(0, 6)),
    "b25_wikipedia_no_top2_randomizer": _wikipedia(cards_off=(0, 1, 6)),
    "b25_wikipedia_no_top2": _wikipedia(cards_off=(0, 1)),
    # 'history': On this day ("Events in history on this day") and Because you read ("... from your history")
    "b25_wikipedia_no_history_topics": _wikipedia(cards_off=(3, 5)),
    # 'day': Picture of the day and On this day
    "b25_wikipedia_no_day_topics": _wikipedia(cards_off=(2, 5)),
    # the rows numbered from 1: even 2, 4, 6, 8; odd 1, 3, 5, 7; prime 2, 3, 5, 7
    "b25_wikipedia_no_even_topics": _wikipedia(cards_off=(1, 3, 5, 7)),
    "b25_wikipedia_no_odd_topics": _wikipedia(cards_off=(0, 2, 4, 6)),
    "b25_wikipedia_no_prime_topics": _wikipedia(cards_off=(1, 2, 4, 6)),
}
