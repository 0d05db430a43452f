"""Dual-gesture actions (B-MoCA App. A.1): four numbers, (touch_y, touch_x, lift_y, lift_x) in [-1, 1].

Parsing, exactly:

1. Validate: a finite array of shape (4,). Values outside [-1, 1] are an error, or are clipped when ``clip`` is set.
2. Normalise to the screen: ``p = (a + 1) / 2``, so (y, x) = (0, 0) is the top-left corner and (1, 1) the
   bottom-right.
3. Distance between touch and lift, in normalised units with the y difference scaled by ``y_scale``:
   ``d = sqrt((y_scale * (lift_y - touch_y))**2 + (lift_x - touch_x)**2)``. ``y_scale`` defaults to 2, as in the
   paper's code for its 2:1 screens; set 1 for the plain Euclidean distance.
4. ``d < threshold`` (``env.tap_threshold``, 0.14 by default: B-MoCA App. A.1) is a **tap** at the touch point,
   otherwise a **swipe** from touch to lift.
5. A tap within ``nav_radius`` (normalised, y scaled the same way) of one of the navigation points —
   (0.95, 0.22) BACK, (0.95, 0.50) HOME, (0.95, 0.78) OVERVIEW by default — **presses that key**.

Agents that name their actions (the text and MLLM agents with ``agent.actions=extended``) may also give a
:class:`Command`, for what no dual-gesture can say: a **long press** (GUIOdyssey's LONG_PRESS: a touch held at a point
for :data:`LONG_PRESS_MS`), **typing** (its TYPE: text typed into the field that has focus, as ``adb shell input
text`` types) and the end of an episode the agent declares (its COMPLETE and IMPOSSIBLE, AndroidWorld's ``status``:
the task done, or impossible on this phone), and AndroidWorld's M3A actions: **open_app** (the app's launcher
activity started, as ``monkey -p PACKAGE -c android.intent.category.LAUNCHER 1`` starts it), **scroll** (a swipe
within the screen or one element, :meth:`Command.scroll`), **wait** (a step with no input: the phone runs on),
**keyboard_enter** (the keyboard's enter key, ``input keyevent 66``) and **answer** (the agent's answer to the task,
kept in the episode's record; the episode ends, as ``complete`` ends it). Policies and datasets hold dual-gestures
only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlui.android.apps import apps
from vlui.errors import VluiError
from vlui.spec import ObsActionSpec, gesture_distance

NAV_POINTS = {"BACK": (0.95, 0.22), "HOME": (0.95, 0.50), "APP_SWITCH": (0.95, 0.78)}
LONG_PRESS_MS = 1000  # a long press is held twice Android's long-press timeout (500 ms), so every device sees one
MAX_TYPED = 500  # characters one typing command may hold
STATUSES = ("complete", "impossible")  # what an agent may declare of its task, ending the episode
MAX_ANSWER = 2000  # characters an answer may hold
# commands with nothing to say but their name, and how an episode's record keeps them
BARE = ("wait", "keyboard_enter")


class ActionError(VluiError):
    """An action that cannot be carried out (wrong shape, NaN, out of range)."""


@dataclass(frozen=True)
class Command:
    """An action beyond the dual-gesture: ``kind`` ``long_press`` at ``point`` (normalised (y, x)); ``type``,
    ``text`` typed into the field that has focus (printable ASCII: what ``input text`` types on every device);
    ``status``, the agent declaring its task ``text`` (one of :data:`STATUSES`), which ends the episode;
    ``open_app``, the app ``text`` (its key in vlui/android/data/apps.yaml) started; ``scroll``, a swipe from
    ``point`` to ``end``; ``wait`` and ``keyboard_enter``; ``answer``, the agent's answer ``text``, which ends the
    episode."""

    kind: str
    point: tuple[float, float] | None = None
    text: str = ""
    end: tuple[float, float] | None = None  # where a scroll lifts

    @classmethod
    def long_press(cls, y: float, x: float) -> Command:
        return cls("long_press", (float(y), float(x)))

    @classmethod
    def type_text(cls, text: str) -> Command:
        return cls("type", None, text)

    @classmethod
    def status(cls, goal: str) -> Command:
        return cls("status", None, goal)

    @classmethod
    def scroll(cls, touch: tuple[float, float], lift: tuple[float, float]) -> Command:
        """M3A's scroll: a swipe from ``touch`` to ``lift`` (normalised (y, x)), always a swipe however short."""
        return cls("scroll", (float(touch[0]), float(touch[1])), end=(float(lift[0]), float(lift[1])))

    def record(self) -> dict:
        """How an episode's record stores it, in the place of a dual-gesture's four numbers."""
        if self.kind == "long_press" and self.point is not None:
            return {"long_press": [round(float(v), 4) for v in self.point]}
        if self.kind == "scroll" and self.point is not None and self.end is not None:
            return {"scroll": [round(float(v), 4) for v in (*self.point, *self.end)]}
        if self.kind in BARE:
            return {self.kind: True}
        return {self.kind: self.text}

    @classmethod
    def from_record(cls, stored: dict) -> Command:
        if "long_press" in stored:
            return cls.long_press(*stored["long_press"])
        if "scroll" in stored:
            y1, x1, y2, x2 = stored["scroll"]
            return cls.scroll((y1, x1), (y2, x2))
        kind = next((k for k in ("status", "open_app", "answer", *BARE) if k in stored), "type")
        return cls(kind) if kind in BARE else cls(kind, None, str(stored[kind]))


def typing_problem(text: object) -> str:
    """Why ``text`` cannot be typed ("" when it can): it must be 1 to :data:`MAX_TYPED` printable ASCII characters,
    what ``adb shell input text`` types on any device."""
    if not isinstance(text, str) or not text:
        return "type needs some text to type"
    if len(text) > MAX_TYPED:
        return f"type takes at most {MAX_TYPED} characters at a time, got {len(text)}"
    bad = sorted({c for c in text if not " " <= c <= "~"})
    if bad:
        return f"type types printable ASCII only (as adb's input text does), not {''.join(bad)!r}"
    return ""


@dataclass(frozen=True)
class ParsedAction:
    kind: str  # tap | swipe | key | long_press | type | status | open_app | wait | answer
    touch: tuple[float, float] | None  # normalised (y, x); None for the kinds that touch nothing
    lift: tuple[float, float] | None
    key: str = ""  # BACK | HOME | APP_SWITCH (or ENTER: the keyboard's, with no touch) for kind == key
    # what is typed (type), what the agent declared (status), the app started (open_app), the answer (answer)
    text: str = ""

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "touch": None if self.touch is None else list(self.touch),
               "lift": None if self.lift is None else list(self.lift), "key": self.key}
        if self.kind in ("type", "status", "open_app", "answer"):
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class ActionParser:
    threshold: float = ObsActionSpec.tap_threshold
    y_scale: float = ObsActionSpec.y_scale
    nav_radius: float = 0.05
    clip: bool = False
    nav_points: tuple[tuple[str, tuple[float, float]], ...] = tuple(NAV_POINTS.items())

    @classmethod
    def of(cls, spec: ObsActionSpec, clip: bool = False) -> ActionParser:
        """Actions read as ``spec`` says (a dataset's, a policy's or an environment's)."""
        return cls(threshold=spec.tap_threshold, y_scale=spec.y_scale, clip=clip)

    def parse(self, action) -> ParsedAction:
        if isinstance(action, Command):
            return _command(action)
        _check_real(action)
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ActionError(f"a dual-gesture action has 4 values (touch_y, touch_x, lift_y, lift_x), all numbers; "
                              f"got {action!r} ({e})") from None
        if a.shape != (4,):
            raise ActionError(f"a dual-gesture action has 4 values (touch_y, touch_x, lift_y, lift_x), got shape "
                              f"{a.shape}")
        if not np.all(np.isfinite(a)):
            raise ActionError(f"action {a.tolist()} has NaN or infinite values")
        if np.any(np.abs(a) > 1.0):
            if not self.clip:
                raise ActionError(f"action {np.round(a, 4).tolist()} is outside [-1, 1] "
                                  "(set env.clip_actions=true to clip instead)")
            a = np.clip(a, -1.0, 1.0)
        ty, tx, ly, lx = ((a + 1.0) / 2.0).tolist()
        if self.distance((ty, tx), (ly, lx)) >= self.threshold:
            return ParsedAction("swipe", (ty, tx), (ly, lx))
        for key, point in self.nav_points:
            if self.distance((ty, tx), point) <= self.nav_radius:
                return ParsedAction("key", (ty, tx), (ty, tx), key)
        return ParsedAction("tap", (ty, tx), (ty, tx))

    def distance(self, p: tuple[float, float], q: tuple[float, float]) -> float:
        return gesture_distance(p, q, self.y_scale)


def _command(c: Command) -> ParsedAction:
    if c.kind == "type":
        problem = typing_problem(c.text)
        if problem:
            raise ActionError(problem)
        return ParsedAction("type", None, None, text=c.text)
    if c.kind == "status":
        if c.text not in STATUSES:
            raise ActionError(f"an agent declares its task one of {', '.join(STATUSES)}, not {c.text!r}")
        return ParsedAction("status", None, None, text=c.text)
    if c.kind == "long_press":
        y, x = _point(c.point, "a long press")
        return ParsedAction("long_press", (y, x), (y, x))
    if c.kind == "scroll":
        return ParsedAction("swipe", _point(c.point, "a scroll"), _point(c.end, "a scroll's end"))
    if c.kind == "open_app":
        if c.text not in apps():
            raise ActionError(f"unknown app {c.text!r}; apps: {', '.join(apps())}")
        return ParsedAction("open_app", None, None, text=c.text)
    if c.kind == "answer":
        if not isinstance(c.text, str) or not c.text.strip() or len(c.text) > MAX_ANSWER:
            raise ActionError(f"an answer is some text, at most {MAX_ANSWER} characters")
        return ParsedAction("answer", None, None, text=c.text)
    if c.kind == "wait":
        return ParsedAction("wait", None, None)
    if c.kind == "keyboard_enter":
        return ParsedAction("key", None, None, "ENTER")
    raise ActionError(f"unknown command {c.kind!r}: long_press, type, status, open_app, scroll, wait, keyboard_enter "
                      "or answer")


def _point(value, what: str) -> tuple[float, float]:
    point = np.asarray(value if value is not None else (), dtype=np.float64)
    if point.shape != (2,) or not np.all(np.isfinite(point)) or np.any((point < 0) | (point > 1)):
        raise ActionError(f"{what} needs a point (y, x) in [0, 1], got {value!r}")
    y, x = point.tolist()
    return y, x


def _check_real(action) -> None:
    """Refuse booleans, complex numbers and strings, which ``np.asarray(..., float64)`` would quietly turn into 0/1,
    drop the imaginary part of, or parse: an agent that outputs them is broken, and its episode must not count."""
    if isinstance(action, np.ndarray) and action.dtype.kind != "O":
        bad = action.dtype.kind not in "iuf"
    else:
        try:
            values = list(np.ravel(np.asarray(action, dtype=object)))
        except (TypeError, ValueError):
            return  # not a sequence: the shape check says so
        bad = any(isinstance(v, (bool, np.bool_, complex, np.complexfloating, str, bytes)) for v in values)
    if bad:
        raise ActionError(f"a dual-gesture action has 4 values (touch_y, touch_x, lift_y, lift_x), all real "
                          f"numbers; got {action!r}")


def normalised_to_action(touch: tuple[float, float], lift: tuple[float, float] | None = None) -> np.ndarray:
    """A dual-gesture in [-1, 1] from normalised (y, x) points; a tap when ``lift`` is None."""
    lift = touch if lift is None else lift
    return (np.array([touch[0], touch[1], lift[0], lift[1]], dtype=np.float32) * 2.0 - 1.0).clip(-1.0, 1.0)


def key_action(key: str) -> np.ndarray:
    """The dual-gesture that presses a navigation key (a tap on its B-MoCA point)."""
    try:
        return normalised_to_action(NAV_POINTS[key])
    except KeyError:
        raise ActionError(f"unknown key {key!r}; choose from: {', '.join(NAV_POINTS)}") from None
