"""Dual-gesture action parsing (B-MoCA App. A.1): taps vs swipes around the 0.14 threshold (y counting double),
navigation keys at the paper's points, bad input, and round trips through ``normalised_to_action``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlui.env.actions import NAV_POINTS, ActionError, ActionParser, ParsedAction, key_action, normalised_to_action
from vlui.errors import VluiError

DEFAULT = ActionParser()
PLAIN = ActionParser(y_scale=1.0)


def act(ty: float, tx: float, ly: float, lx: float) -> np.ndarray:
    """The action for normalised touch (ty, tx) and lift (ly, lx), in float64 (a = 2p - 1)."""
    return np.array([ty, tx, ly, lx], dtype=np.float64) * 2.0 - 1.0


def kind(parser: ActionParser, ty: float, tx: float, ly: float, lx: float) -> str:
    return parser.parse(act(ty, tx, ly, lx)).kind


# ------------------------------------------------------------------------------------------------ tap vs swipe
def test_defaults_are_the_papers() -> None:
    assert DEFAULT.threshold == pytest.approx(0.14)
    assert DEFAULT.y_scale == pytest.approx(2.0)
    assert NAV_POINTS == {"BACK": (0.95, 0.22), "HOME": (0.95, 0.50), "APP_SWITCH": (0.95, 0.78)}


@pytest.mark.parametrize("dx", [0.13, -0.13, 0.135, 0.0])
def test_short_x_movement_is_a_tap(dx: float) -> None:
    assert kind(DEFAULT, 0.5, 0.5, 0.5, 0.5 + dx) == "tap"
    assert kind(PLAIN, 0.5, 0.5, 0.5, 0.5 + dx) == "tap"


@pytest.mark.parametrize("dx", [0.15, -0.15, 0.145, 0.4])
def test_long_x_movement_is_a_swipe(dx: float) -> None:
    assert kind(DEFAULT, 0.5, 0.5, 0.5, 0.5 + dx) == "swipe"
    assert kind(PLAIN, 0.5, 0.5, 0.5, 0.5 + dx) == "swipe"


@pytest.mark.parametrize("dy", [0.06, -0.06, 0.065])
def test_y_difference_counts_double_short_is_tap(dy: float) -> None:
    # 2 * 0.06 = 0.12 < 0.14: a tap with the default parser
    assert kind(DEFAULT, 0.5, 0.5, 0.5 + dy, 0.5) == "tap"


@pytest.mark.parametrize("dy", [0.08, -0.08, 0.075])
def test_y_difference_counts_double_long_is_swipe(dy: float) -> None:
    # 2 * 0.08 = 0.16 >= 0.14: a swipe with the default parser, although 0.08 < 0.14
    assert kind(DEFAULT, 0.5, 0.5, 0.5 + dy, 0.5) == "swipe"


@pytest.mark.parametrize("dy, expected", [(0.06, "tap"), (0.08, "tap"), (0.13, "tap"), (-0.13, "tap"),
                                          (0.15, "swipe"), (-0.15, "swipe")])
def test_y_scale_one_uses_plain_distance(dy: float, expected: str) -> None:
    assert kind(PLAIN, 0.5, 0.5, 0.5 + dy, 0.5) == expected


@pytest.mark.parametrize("dy, dx, default, plain", [
    (0.04, 0.10, "tap", "tap"),      # sqrt(0.08² + 0.10²) = 0.128 | sqrt(0.04² + 0.10²) = 0.108
    (0.05, 0.10, "swipe", "tap"),    # sqrt(0.10² + 0.10²) = 0.141 | 0.112
    (-0.05, -0.10, "swipe", "tap"),
    (0.09, 0.09, "swipe", "tap"),    # 0.201 | 0.127
    (0.10, 0.10, "swipe", "swipe"),  # 0.224 | 0.141
    (0.03, 0.05, "tap", "tap"),
])
def test_diagonal_movement(dy: float, dx: float, default: str, plain: str) -> None:
    assert kind(DEFAULT, 0.4, 0.4, 0.4 + dy, 0.4 + dx) == default
    assert kind(PLAIN, 0.4, 0.4, 0.4 + dy, 0.4 + dx) == plain


def test_distance_equal_to_threshold_is_a_swipe() -> None:
    # the paper: swipe if d >= threshold; 0.25 and 0.5 are exact in binary, so d is exactly 0.25
    parser = ActionParser(threshold=0.25)
    assert parser.parse([-0.5, -0.5, -0.5, 0.0]).kind == "swipe"
    assert parser.parse([-0.5, -0.5, -0.5, -0.0625]).kind == "tap"


def test_custom_threshold_changes_the_decision() -> None:
    a = act(0.5, 0.5, 0.5, 0.7)  # d = 0.2
    assert DEFAULT.parse(a).kind == "swipe"
    assert ActionParser(threshold=0.3).parse(a).kind == "tap"


# ------------------------------------------------------------------------------------------------ parsed points
def test_swipe_points_are_the_normalised_touch_and_lift() -> None:
    p = DEFAULT.parse([-0.6, 0.0, 0.6, 0.2])
    assert p.kind == "swipe"
    assert p.touch == pytest.approx((0.2, 0.5))
    assert p.lift == pytest.approx((0.8, 0.6))
    assert p.key == ""


def test_tap_is_at_the_touch_point_and_lift_equals_touch() -> None:
    p = DEFAULT.parse(act(0.30, 0.40, 0.32, 0.45))  # a small wobble: a tap at the touch point
    assert p.kind == "tap"
    assert p.touch == pytest.approx((0.30, 0.40))
    assert p.lift == p.touch
    assert p.key == ""


def test_corners_map_to_screen_corners() -> None:
    p = DEFAULT.parse([-1.0, -1.0, 1.0, 1.0])
    assert p.kind == "swipe"
    assert p.touch == (0.0, 0.0)
    assert p.lift == (1.0, 1.0)


def test_as_dict_is_plain_data() -> None:
    d = DEFAULT.parse([-0.6, 0.0, 0.6, 0.2]).as_dict()
    assert d["kind"] == "swipe" and d["key"] == ""
    assert d["touch"] == pytest.approx([0.2, 0.5]) and d["lift"] == pytest.approx([0.8, 0.6])
    assert isinstance(d["touch"], list)


# ------------------------------------------------------------------------------------------------ navigation keys
@pytest.mark.parametrize("key", ["BACK", "HOME", "APP_SWITCH"])
def test_tap_at_paper_nav_point_presses_the_key(key: str) -> None:
    point = {"BACK": (0.95, 0.22), "HOME": (0.95, 0.50), "APP_SWITCH": (0.95, 0.78)}[key]
    p = DEFAULT.parse(normalised_to_action(point))
    assert p.kind == "key"
    assert p.key == key
    assert p.touch == pytest.approx(point, abs=1e-6)


@pytest.mark.parametrize("key", ["BACK", "HOME", "APP_SWITCH"])
@pytest.mark.parametrize("dy, dx", [(0.01, 0.02), (-0.015, -0.03), (0.0, 0.045), (0.02, 0.0)])
def test_tap_near_nav_point_within_radius_presses_the_key(key: str, dy: float, dx: float) -> None:
    y, x = NAV_POINTS[key]
    p = DEFAULT.parse(normalised_to_action((y + dy, x + dx)))
    assert (p.kind, p.key) == ("key", key)


@pytest.mark.parametrize("point", [(0.5, 0.5), (0.1, 0.22), (0.95, 0.36), (0.95, 0.64), (0.80, 0.50),
                                   (0.95, 0.29), (0.92, 0.50)])
def test_tap_away_from_nav_points_is_a_plain_tap(point: tuple[float, float]) -> None:
    # (0.92, 0.50) is 0.03 above HOME: 0.06 after the y scaling, outside the 0.05 radius
    p = DEFAULT.parse(normalised_to_action(point))
    assert p.kind == "tap"
    assert p.key == ""
    assert p.touch == pytest.approx(point, abs=1e-6)


def test_y_offset_near_nav_point_counts_double_only_with_default_scale() -> None:
    a = normalised_to_action((0.92, 0.50))
    assert DEFAULT.parse(a).kind == "tap"
    assert PLAIN.parse(a).kind == "key" and PLAIN.parse(a).key == "HOME"


@pytest.mark.parametrize("key", ["BACK", "HOME", "APP_SWITCH"])
def test_swipe_starting_at_nav_point_is_a_swipe_not_a_key(key: str) -> None:
    y, x = NAV_POINTS[key]
    p = DEFAULT.parse(normalised_to_action((y, x), (0.5, x)))
    assert p.kind == "swipe"
    assert p.key == ""
    assert p.touch == pytest.approx((y, x), abs=1e-6)
    assert p.lift == pytest.approx((0.5, x), abs=1e-6)


@pytest.mark.parametrize("key", ["BACK", "HOME", "APP_SWITCH"])
def test_key_action_round_trips(key: str) -> None:
    a = key_action(key)
    assert a.shape == (4,)
    assert np.all(np.abs(a) <= 1.0)
    p = DEFAULT.parse(a)
    assert (p.kind, p.key) == ("key", key)


def test_key_action_unknown_key_is_a_clear_error() -> None:
    with pytest.raises(ActionError, match="unknown key 'MENU'.*BACK, HOME, APP_SWITCH"):
        key_action("MENU")


def test_custom_nav_radius() -> None:
    a = normalised_to_action((0.95, 0.57))  # 0.07 right of HOME
    assert DEFAULT.parse(a).kind == "tap"
    p = ActionParser(nav_radius=0.08).parse(a)
    assert (p.kind, p.key) == ("key", "HOME")


# ------------------------------------------------------------------------------------------------ bad input
def test_action_error_is_a_vlui_error() -> None:
    assert issubclass(ActionError, VluiError)


@pytest.mark.parametrize("bad", [[0.0, 0.0, 0.0], [0.0] * 5, [[0.0, 0.0, 0.0, 0.0]], np.zeros((2, 4)), [], 0.5])
def test_wrong_shape_is_rejected(bad) -> None:
    with pytest.raises(ActionError, match=r"4 values .*touch_y, touch_x, lift_y, lift_x.*got shape"):
        DEFAULT.parse(bad)


@pytest.mark.parametrize("bad", [[math.nan, 0, 0, 0], [0, 0, 0, math.inf], [0, -math.inf, 0, 0]])
@pytest.mark.parametrize("clip", [False, True])
def test_nan_or_inf_is_rejected_even_when_clipping(bad, clip: bool) -> None:
    with pytest.raises(ActionError, match="NaN or infinite"):
        ActionParser(clip=clip).parse(bad)


@pytest.mark.parametrize("bad", [[1.01, 0, 0, 0], [0, -1.5, 0, 0], [0, 0, 0, 3.0]])
def test_out_of_range_is_rejected_with_a_hint(bad) -> None:
    with pytest.raises(ActionError, match=r"outside \[-1, 1\].*clip"):
        DEFAULT.parse(bad)


def test_clip_clips_out_of_range_values_and_parses() -> None:
    p = ActionParser(clip=True).parse([1.5, -2.0, 1.2, 3.0])
    assert p.kind == "swipe"
    assert p.touch == (1.0, 0.0)
    assert p.lift == (1.0, 1.0)
    tap = ActionParser(clip=True).parse([-1.3, -1.1, -1.0, -1.0])
    assert tap.kind == "tap" and tap.touch == (0.0, 0.0)


@pytest.mark.parametrize("bad", [["a", "b", "c", "d"], [None, 0, 0, 0], [[0.0, 0.0], [0.0]], "tap"])
def test_non_numeric_is_rejected_as_a_user_error(bad) -> None:
    with pytest.raises(ActionError, match="4 values|NaN"):
        DEFAULT.parse(bad)


def test_accepts_lists_tuples_and_float32_arrays() -> None:
    for a in ([0.0, 0.0, 0.5, 0.5], (0.0, 0.0, 0.5, 0.5), np.array([0.0, 0.0, 0.5, 0.5], dtype=np.float32)):
        p = DEFAULT.parse(a)
        assert p.kind == "swipe"
        assert p.touch == pytest.approx((0.5, 0.5)) and p.lift == pytest.approx((0.75, 0.75))


# ------------------------------------------------------------------------------------------------ round trips
def test_normalised_to_action_is_in_range() -> None:
    a = normalised_to_action((0.0, 1.0), (0.5, 0.25))
    assert a.dtype == np.float32
    np.testing.assert_allclose(a, [-1.0, 1.0, 0.0, -0.5])
    np.testing.assert_allclose(normalised_to_action((0.3, 0.6)), [-0.4, 0.2, -0.4, 0.2], atol=1e-6)


def _expected_kind(parser: ActionParser, touch, lift) -> tuple[str, str]:
    if parser.distance(touch, lift) >= parser.threshold:
        return "swipe", ""
    for key, point in parser.nav_points:
        if parser.distance(touch, point) <= parser.nav_radius:
            return "key", key
    return "tap", ""


@pytest.mark.parametrize("y_scale", [1.0, 2.0])
def test_random_points_round_trip(y_scale: float) -> None:
    rng = np.random.default_rng(0)
    parser = ActionParser(y_scale=y_scale)
    kinds = set()
    for _ in range(500):
        touch = tuple(rng.uniform(0, 1, 2).tolist())
        lift = tuple(rng.uniform(0, 1, 2).tolist())
        p = parser.parse(normalised_to_action(touch, lift))
        d = parser.distance(touch, lift)
        if abs(d - parser.threshold) < 1e-4:
            continue  # too close to call in float32
        want_kind, want_key = _expected_kind(parser, touch, lift)
        if want_kind == "key" and abs(parser.distance(touch, dict(parser.nav_points)[want_key]) - parser.nav_radius) < 1e-4:
            continue
        assert (p.kind, p.key) == (want_kind, want_key)
        assert p.touch == pytest.approx(touch, abs=1e-6)
        assert p.lift == pytest.approx(lift if p.kind == "swipe" else touch, abs=1e-6)
        kinds.add(p.kind)
    assert "swipe" in kinds


def test_random_taps_round_trip() -> None:
    rng = np.random.default_rng(1)
    for _ in range(300):
        point = tuple(rng.uniform(0, 0.85, 2).tolist())  # well above the navigation bar
        p = DEFAULT.parse(normalised_to_action(point))
        assert p.kind == "tap"
        assert p.touch == pytest.approx(point, abs=1e-6)
        assert p.lift == p.touch


def test_parsed_action_is_immutable() -> None:
    p = DEFAULT.parse([0.0, 0.0, 0.0, 0.0])
    assert isinstance(p, ParsedAction)
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        p.kind = "swipe"  # type: ignore[misc]
