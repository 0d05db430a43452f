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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlui.errors import VluiError
from vlui.spec import ObsActionSpec, gesture_distance

NAV_POINTS = {"BACK": (0.95, 0.22), "HOME": (0.95, 0.50), "APP_SWITCH": (0.95, 0.78)}


class ActionError(VluiError):
    """An action that cannot be carried out (wrong shape, NaN, out of range)."""


@dataclass(frozen=True)
class ParsedAction:
    kind: str  # tap | swipe | key
    touch: tuple[float, float]  # normalised (y, x)
    lift: tuple[float, float]
    key: str = ""  # BACK | HOME | APP_SWITCH for kind == key

    def as_dict(self) -> dict:
        return {"kind": self.kind, "touch": list(self.touch), "lift": list(self.lift), "key": self.key}


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
