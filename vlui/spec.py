"""What an observation and an action are, in one place: :class:`ObsActionSpec`.

A policy sees screens of one size and acts by dual-gestures that the environment reads as taps or swipes by one
threshold. Those numbers are the contract between the data a policy learns from, the policy, and the phones it acts
on, so they travel with the data and the policy instead of being set again by each job:

- collect.py writes the spec of its screens and actions into the dataset (``meta/info.json``, ``"spec"``);
- train.py reads it from the dataset (``data.observation_height/width`` may still ask for another training size: screens
  are resized) and stores it with the policy (checkpoints and exports, ``"policy": {"spec": ...}``);
- DAgger, PPO and evaluate.py read it from the policy: its phones show screens of the policy's size and read its
  actions by the policy's threshold.

The defaults are B-MoCA's: 256x128 screens (App. C.2), a tap when touch and lift are closer than 0.14 (App. A.1),
the y difference doubled for the 2:1 screen (the paper's code).

What a policy with memory (``model.history``) reads of an episode besides its screen is here too: :class:`Past`, the
last steps of a batch of episodes, and :class:`Memory`, one episode's record of them, which a rollout keeps per
phone and starts afresh with each episode. No torch, no Hydra here.
"""

from __future__ import annotations

import hashlib
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from vlui.errors import VluiError

ACTION_CONVENTION = "dual-gesture (touch_y, touch_x, lift_y, lift_x) in [-1, 1]; screen position p = (a + 1) / 2"
SCREEN_DTYPE = "uint8"
# How a screen wider than tall (a landscape-natural tablet) becomes a portrait observation: squeezed into it as it
# stands (B-MoCA's); turned a quarter counter-clockwise first, so that it fills the frame with little distortion; or
# cut down the middle and its left half put above its right half, so that it fills the frame upright, at about the
# scale of a phone's screen. The actions of a turned or stacked screen are positions on its observation
# (:meth:`ObsActionSpec.to_screen`).
LANDSCAPE = ("stretched", "rotated", "stacked")


def turned(point: tuple[float, float]) -> tuple[float, float]:
    """Where a normalised ``(y, x)`` point of a screen is on its observation turned a quarter counter-clockwise (the
    screen's top edge becomes the observation's left edge)."""
    return 1.0 - point[1], point[0]


def unturned(point: tuple[float, float]) -> tuple[float, float]:
    """The inverse of :func:`turned`: the point of the screen that a point of its turned observation shows."""
    return point[1], 1.0 - point[0]


def stacked(point: tuple[float, float]) -> tuple[float, float]:
    """Where a normalised ``(y, x)`` point of a screen is on its observation stacked: the screen's left half (x under
    0.5) is the observation's top half, its right half the bottom half, each at full width."""
    y, x = point
    return (y / 2, 2 * x) if x < 0.5 else (0.5 + y / 2, 2 * x - 1)


def unstacked(point: tuple[float, float]) -> tuple[float, float]:
    """The inverse of :func:`stacked`: the point of the screen that a point of its stacked observation shows."""
    y, x = point
    return (2 * y, x / 2) if y < 0.5 else (2 * y - 1, 0.5 + x / 2)


# How the screen of a phone in a right-to-left locale (Arabic, Hebrew, Persian, Urdu: Android mirrors its layouts)
# is observed: kept as it is (B-MoCA's), or mirrored left to right, so that its layouts read as a left-to-right
# locale's do (their text mirrored with them, and what Android does not mirror, as the dial pad and the clock's
# dial, mirrored too). A mirrored screen's actions are positions on the mirrored observation.
RTL = ("kept", "mirrored")
MIRRORED = "mirrored"


def mirrored(point: tuple[float, float]) -> tuple[float, float]:
    """Where a normalised ``(y, x)`` point of a screen is on its observation mirrored left to right (its own inverse)."""
    return point[0], 1.0 - point[1]


# a view's part -> (screen point to observation point, its inverse)
_VIEWS = {"rotated": (turned, unturned), "stacked": (stacked, unstacked), MIRRORED: (mirrored, mirrored)}


def view_parts(view: str | None) -> list[str]:
    """The transformations of a view, in the order they apply to the screen: ``"mirrored+stacked"`` is the screen
    mirrored, then stacked; None or ``""`` is the screen as it stands."""
    return view.split("+") if view else []


def to_view(point: tuple[float, float], view: str | None) -> tuple[float, float]:
    """Where a normalised ``(y, x)`` point of a screen is on its observation under ``view`` (None: as it stands)."""
    for part in view_parts(view):
        point = _VIEWS[part][0](point)
    return point


def from_view(point: tuple[float, float], view: str | None) -> tuple[float, float]:
    """The point of the screen that a point of its observation under ``view`` shows (None: as it stands)."""
    for part in reversed(view_parts(view)):
        point = _VIEWS[part][1](point)
    return point


def gesture_distance(p: tuple[float, float], q: tuple[float, float], y_scale: float) -> float:
    """How far apart two normalised (y, x) points are for telling taps from swipes: the y difference times
    ``y_scale``."""
    return math.hypot(y_scale * (q[0] - p[0]), q[1] - p[1])


@dataclass(frozen=True)
class ObsActionSpec:
    """A policy's screens (``height`` x ``width`` RGB, uint8) and how its actions read: touch and lift closer than
    ``tap_threshold`` (normalised units, the y difference times ``y_scale``) are a tap, otherwise a swipe.
    ``landscape``: how a screen wider than tall is observed (:data:`LANDSCAPE`); ``rtl``: how the screen of a phone
    in a right-to-left locale is (:data:`RTL`)."""

    height: int = 256
    width: int = 128
    tap_threshold: float = 0.14
    y_scale: float = 2.0
    landscape: str = "stretched"
    rtl: str = "kept"

    def __post_init__(self) -> None:
        for name in ("height", "width"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise VluiError(f"a screen {name} is a positive whole number of pixels, not {value!r}")
        for name in ("tap_threshold", "y_scale"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise VluiError(f"{name} is a finite number >= 0, not {value!r}")
        if self.landscape not in LANDSCAPE:
            raise VluiError(f"landscape must be one of {', '.join(LANDSCAPE)}, not {self.landscape!r}")
        if self.rtl not in RTL:
            raise VluiError(f"rtl must be one of {', '.join(RTL)}, not {self.rtl!r}")

    @property
    def image_size(self) -> tuple[int, int]:
        """(height, width) of the screens."""
        return self.height, self.width

    def resized(self, height: int, width: int) -> ObsActionSpec:
        """The same actions on screens of another size."""
        return replace(self, height=int(height), width=int(width))

    def gesture_distance(self, p: tuple[float, float], q: tuple[float, float]) -> float:
        """How far apart two normalised (y, x) points are for telling taps from swipes."""
        return gesture_distance(p, q, self.y_scale)

    def same_actions(self, other: ObsActionSpec) -> bool:
        """Whether actions read the same under ``other`` (screen sizes may differ: screens can be resized)."""
        return (self.tap_threshold, self.y_scale, self.landscape, self.rtl) == (other.tap_threshold, other.y_scale,
                                                                                other.landscape, other.rtl)

    def reading(self) -> str:
        """How its actions read, in words for messages."""
        return (f"tap_threshold {self.tap_threshold}, y_scale {self.y_scale}"
                + (f", landscape {self.landscape}" if self.landscape != "stretched" else "")
                + (f", rtl {self.rtl}" if self.rtl != "kept" else ""))

    def view(self, size: tuple[int, int], rtl: bool = False) -> str | None:
        """How a screen of ``size`` ``(width, height)`` is observed (``rtl``: the phone's locale is right-to-left):
        None as it stands, else the transformations that apply, joined by ``+`` (:func:`view_parts`): ``"mirrored"``
        under ``rtl: mirrored``, then ``"rotated"`` or ``"stacked"`` for a screen wider than tall
        (:data:`LANDSCAPE`)."""
        parts = ([MIRRORED] if rtl and self.rtl == MIRRORED else []) + (
            [self.landscape] if self.landscape != "stretched" and size[0] > size[1] else [])
        return "+".join(parts) or None

    def to_screen(self, point: tuple[float, float], size: tuple[int, int], rtl: bool = False) -> tuple[float, float]:
        """A normalised ``(y, x)`` point of the observation as a point of the screen of ``size``: the observation of a
        turned screen is the screen a quarter counter-clockwise (its left edge the screen's top), of a stacked one
        the screen's left half above its right half, of a mirrored one the screen mirrored left to right."""
        return from_view(point, self.view(size, rtl))

    def from_screen(self, point: tuple[float, float], size: tuple[int, int], rtl: bool = False) -> tuple[float, float]:
        """The inverse of :meth:`to_screen`: where a point of the screen is on the observation."""
        return to_view(point, self.view(size, rtl))

    def require_same_actions(self, other: ObsActionSpec, this: str, that: str, fix: str) -> None:
        """A :class:`VluiError` naming both (``this`` is self, ``that`` is ``other``) and ``fix`` when ``other``
        reads actions another way: a policy learns one reading."""
        if not self.same_actions(other):
            raise VluiError(f"{that} reads actions by {other.reading()}, {this} by {self.reading()}: {fix}")

    def to_dict(self) -> dict[str, Any]:
        """What datasets and policies store: plain JSON, with the conventions spelled out for other readers."""
        out = {"screen": [self.height, self.width, 3], "dtype": SCREEN_DTYPE, "action": ACTION_CONVENTION,
               "tap_threshold": self.tap_threshold, "y_scale": self.y_scale}
        if self.landscape != "stretched":  # written only when it differs, so earlier data and policies read as before
            out["landscape"] = self.landscape
        if self.rtl != "kept":
            out["rtl"] = self.rtl
        return out

    @classmethod
    def from_dict(cls, stored: Any, where: str = "the stored spec") -> ObsActionSpec:
        """The spec :meth:`to_dict` wrote; anything else is a :class:`VluiError` naming ``where``."""
        if not isinstance(stored, dict):
            raise VluiError(f"{where} must be a mapping (screen, tap_threshold, y_scale), not {stored!r}")
        unknown = sorted(set(stored) - {"screen", "dtype", "action", "tap_threshold", "y_scale", "landscape", "rtl"})
        if unknown:
            raise VluiError(f"{where} has unknown field(s) {', '.join(unknown)}; this vlui knows: screen, dtype, "
                            "action, tap_threshold, y_scale, landscape, rtl")
        screen = stored.get("screen")
        if not (isinstance(screen, (list, tuple)) and len(screen) == 3 and screen[2] == 3):
            raise VluiError(f"{where}: screen must be [height, width, 3], not {screen!r}")
        if stored.get("dtype", SCREEN_DTYPE) != SCREEN_DTYPE or stored.get("action", ACTION_CONVENTION) != \
                ACTION_CONVENTION:
            raise VluiError(f"{where} describes other screens or actions ({stored.get('dtype')!r}, "
                            f"{stored.get('action')!r}) than this vlui's ({SCREEN_DTYPE}, {ACTION_CONVENTION})")
        try:
            return cls(screen[0], screen[1], stored.get("tap_threshold", cls.tap_threshold),
                       stored.get("y_scale", cls.y_scale), stored.get("landscape", cls.landscape),
                       stored.get("rtl", cls.rtl))
        except VluiError as err:
            raise VluiError(f"{where}: {err}") from None


@dataclass(frozen=True)
class Past:
    """The last ``K`` steps of ``B`` episodes, the most recent first: slot ``j`` is the step ``j + 1`` steps before
    the one being decided, its ``action`` the dual-gesture taken there and its ``screen`` the screen it was taken on.
    ``valid`` is False where the episode has no such step (it began fewer than ``j + 1`` steps ago, or that step's
    action was not a dual-gesture): what such a slot holds is never read.

    The arrays are numpy in rollouts and torch tensors in the model. ``screens`` is None for a policy that does not
    read past screens; inside training it may hold what the frozen backbone's feature cache holds of them instead of
    their pixels (``(B, K, C, h, w)``), the same form as the current screens are handed in."""

    actions: Any  # (B, K, 4) float32
    valid: Any  # (B, K) bool
    screens: Any = None  # (B, K, H, W, 3) uint8, or None
    # with a memory that keeps them (agent.avoid_repeats): for each episode, the (n, 4) actions it has already taken
    # on a screen identical to its current one, earlier in the episode (any number of steps back)
    tried: Any = None

    @property
    def steps(self) -> int:
        """K, the slots per episode."""
        return int(self.valid.shape[1])


class Memory:
    """One episode's last ``steps`` steps (their screens too when ``screens``), as a policy with ``model.history``
    reads them: started afresh at each episode's start (:meth:`reset`), told every step's screen and action
    (:meth:`add`). A rollout keeps one per phone (:meth:`batch` hands a batch agent all of them as one :class:`Past`);
    an agent acting on one phone keeps its own."""

    def __init__(self, steps: int = 0, screens: bool = False, repeats: bool = False) -> None:
        self.steps, self.screens, self.repeats = int(steps), bool(screens), bool(repeats)
        self._kept: deque[tuple[np.ndarray | None, np.ndarray | None]] = deque(maxlen=max(self.steps, 1))
        self._tried: dict[bytes, list[np.ndarray]] = {}  # with ``repeats``: a screen's digest -> the actions taken on it

    def reset(self) -> None:
        """A new episode: nothing happened before its first step."""
        self._kept.clear()
        self._tried.clear()

    def tried(self, screen: np.ndarray) -> np.ndarray:
        """``(n, 4)``: the dual-gestures this episode has taken on a screen identical to ``screen`` (kept with
        ``repeats``; none without)."""
        taken = self._tried.get(_digest(screen), [])
        return np.stack(taken) if taken else np.zeros((0, 4), dtype=np.float32)

    def add(self, screen: np.ndarray, action: np.ndarray | None) -> None:
        """A step was taken: ``action`` (None, or anything but four finite numbers, counts as no dual-gesture) on
        ``screen`` (``(H, W, 3)`` uint8, kept only when the memory keeps screens)."""
        if not self.steps and not self.repeats:
            return
        a = None if action is None else np.asarray(action, dtype=np.float32)
        if a is not None and (a.shape != (4,) or not np.isfinite(a).all()):
            a = None
        if self.repeats and a is not None:
            self._tried.setdefault(_digest(screen), []).append(a)
        if self.steps:
            self._kept.appendleft((np.array(screen, copy=True) if self.screens else None, a))

    @staticmethod
    def batch(memories: Sequence[Memory], screens: np.ndarray) -> Past | None:
        """The :class:`Past` of each memory's episode, in order, for the current ``(B, H, W, 3)`` ``screens`` (their
        size and type are those of a missing past screen's zeros); None when the memories keep no steps."""
        if not memories or not (memories[0].steps or memories[0].repeats):
            return None
        k, with_screens, repeats = memories[0].steps, memories[0].screens, memories[0].repeats
        if any((m.steps, m.screens, m.repeats) != (k, with_screens, repeats) for m in memories):
            raise VluiError("the memories of one batch must keep the same steps (model.history), screens and repeats")
        actions = np.full((len(memories), k, 4), np.nan, dtype=np.float32)
        valid = np.zeros((len(memories), k), dtype=bool)
        past_screens = np.zeros((len(memories), k, *screens.shape[1:]), dtype=screens.dtype) if with_screens else None
        for b, memory in enumerate(memories):
            for j, (screen, action) in enumerate(memory._kept):
                if action is None:
                    continue
                actions[b, j], valid[b, j] = action, True
                if past_screens is not None:
                    past_screens[b, j] = screen
        tried = [m.tried(screen) for m, screen in zip(memories, screens, strict=True)] if repeats else None
        return Past(actions, valid, past_screens, tried)


def _digest(screen: np.ndarray) -> bytes:
    """A screen's identity: a digest of its pixels (the simulated phone draws the same state the same way)."""
    return hashlib.blake2b(np.ascontiguousarray(screen).tobytes(), digest_size=16).digest()
