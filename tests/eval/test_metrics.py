"""Evaluation statistics: Wilson intervals, standard errors, t-tests, the bootstrap over seeds and phones, the t
interval over the phones' means, Holm's adjustment, AndroidArena's adaptive metrics, and GUIOdyssey's action matching (AMS, offline SR)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from vlui.env.actions import ParsedAction
from vlui.eval.metrics import (
    AMS_TAP_DISTANCE,
    actions_match,
    adaptive_metrics,
    bootstrap_ci,
    bootstrap_difference,
    holm,
    lcs_matches,
    mean_stderr,
    offline_scores,
    paired,
    phone_t_interval,
    repeat_ratio,
    swipe_direction,
    welch,
    wilson_interval,
)


def test_androidarena_worked_example() -> None:
    reference, executed = "ABCDEFG", "AXYBUVWEFFFGZ"
    assert [reference[i] for i in lcs_matches(reference, executed)] == list("ABEFG")
    m = adaptive_metrics(reference, executed, gamma=0.9)
    # matched reference positions 1, 2, 5, 6, 7 of L = 7: TR = 0.9^6 + 0.9^5 + 0.9^2 + 0.9^1 + 0.9^0
    assert m.tr == pytest.approx(0.9 ** 6 + 0.9 ** 5 + 0.81 + 0.9 + 1)
    assert m.tcr == 1.0  # the last matched action is the last reference action, G
    assert m.rrr == pytest.approx(7 / 13)
    assert m.tr_normalised == pytest.approx(m.tr / sum(0.9 ** k for k in range(7)))


def test_partial_and_perfect_trajectories() -> None:
    assert adaptive_metrics("ABCD", "ABCD") .__dict__ == {"tr": pytest.approx(sum(0.9 ** k for k in range(4))),
                                                          "tr_normalised": 1.0, "tcr": 1.0, "rrr": 1.0}
    m = adaptive_metrics("ABCD", "AB")  # stopped half way
    assert m.tcr == 0.5 and m.rrr == 2.0 and m.tr == pytest.approx(0.9 ** 3 + 0.9 ** 2)
    none = adaptive_metrics("ABCD", "XYZ")
    assert none.tr == 0 and none.tcr == 0 and none.rrr == pytest.approx(4 / 3)
    with pytest.raises(ValueError):
        adaptive_metrics("", "A")


def test_wilson_interval_matches_known_values() -> None:
    lo, hi = wilson_interval(0, 10)  # a rate of 0 still has an upper bound
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_mean_and_standard_error_across_runs() -> None:
    mean, se = mean_stderr([0.5, 0.6, 0.7])
    assert mean == pytest.approx(0.6) and se == pytest.approx(0.1 / math.sqrt(3))
    assert mean_stderr([0.4]) == (0.4, 0.0)


def test_paired_t_test_by_hand() -> None:
    # three seeds fine-tuned from their own starting policies: differences 0, 0, +0.1 (mean 1/30, s.e. 1/30), t = 1
    # with 2 degrees of freedom, where P(|T| >= t) = 1 - t / sqrt(t^2 + 2) and the 97.5% quantile is 4.3027
    d = paired([0.6, 0.45, 0.55], [0.6, 0.45, 0.45])
    assert d.difference == pytest.approx(1 / 30) and d.stderr == pytest.approx(1 / 30) and d.dof == 2
    assert d.t == pytest.approx(1.0) and d.p_value == pytest.approx(1 - 1 / math.sqrt(3), abs=1e-6)
    assert d.ci95 == (pytest.approx(1 / 30 - 4.302653 / 30, abs=1e-5), pytest.approx(1 / 30 + 4.302653 / 30, abs=1e-5))
    # unpaired, the seeds' own spread (0.45 to 0.6) swamps the same difference
    assert welch([0.6, 0.45, 0.55], [0.6, 0.45, 0.45]).p_value > 0.6
    # the same change in every seed is exact; too few pairs give no test
    assert paired([0.5, 0.6], [0.4, 0.5]).p_value == 0.0 and paired([0.5], [0.4]) is None
    assert paired([0.5, 0.6], [0.5, 0.6]).p_value == 1.0


def test_welch_matches_scipys_unequal_variance_t_test() -> None:
    a, b = [0.62, 0.55, 0.71, 0.58], [0.41, 0.52, 0.47]
    d, ref = welch(a, b), stats.ttest_ind(a, b, equal_var=False)
    assert d.t == pytest.approx(ref.statistic) and d.p_value == pytest.approx(ref.pvalue)
    assert d.dof == pytest.approx(ref.df) and d.ci95 == pytest.approx(tuple(ref.confidence_interval()))
    assert welch([0.5], b) is None  # fewer than two seeds: no test
    assert welch([0.5, 0.5], [0.4, 0.4]).ci95 == (pytest.approx(0.1), pytest.approx(0.1))  # no spread: exact


def test_holm_on_a_textbook_example() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0] and holm([0.02]) == [0.02] and holm([]) == []  # capped at 1


def test_a_constant_matrix_has_a_zero_width_interval_at_the_constant() -> None:
    b = bootstrap_ci(np.full((3, 45), 1 / 6))
    assert b.mean == b.ci95[0] == b.ci95[1] == 1 / 6 and b.stderr == 0 and (b.seeds, b.phones) == (3, 45)


def test_one_seed_over_many_phones_is_the_binomial_standard_error() -> None:
    n = 400
    b = bootstrap_ci([[1.0] * (n // 2) + [0.0] * (n // 2)])
    se = math.sqrt(0.5 * 0.5 / n)
    assert b.mean == 0.5 and b.stderr == pytest.approx(se, rel=0.03)
    assert b.ci95 == (pytest.approx(0.5 - 1.96 * se, abs=0.005), pytest.approx(0.5 + 1.96 * se, abs=0.005))


def test_seeds_and_phones_both_add_their_variance() -> None:
    # M[s, p] = a_s + b_p: a resample's mean is the mean of the a drawn plus the mean of the b drawn, independent
    rng = np.random.default_rng(7)
    a, b = rng.normal(0.5, 0.1, 20), rng.normal(0.0, 0.2, 50)
    boot = bootstrap_ci(a[:, None] + b[None, :])
    assert boot.stderr ** 2 == pytest.approx(a.var() / 20 + b.var() / 50, rel=0.05)
    # where every phone is the same, only the seeds vary: the bootstrap over seeds alone
    same = bootstrap_ci(np.repeat(a[:, None], 50, axis=1))
    seeds_only = bootstrap_ci(a[:, None])
    assert same.stderr == pytest.approx(seeds_only.stderr, rel=0.03)
    assert same.ci95 == pytest.approx(seeds_only.ci95, abs=0.005)
    assert same.stderr ** 2 == pytest.approx(a.var() / 20, rel=0.05)


def test_the_bootstrap_is_reproducible_and_leaves_missing_cells_out() -> None:
    m = np.random.default_rng(3).random((3, 10))
    assert bootstrap_ci(m) == bootstrap_ci(m) and bootstrap_ci(m, seed=1) != bootstrap_ci(m)
    holes = m.copy()
    holes[0, 2] = holes[1, 5] = np.nan  # a phone where none of the seed's episodes counted
    b = bootstrap_ci(holes)
    assert b.mean == pytest.approx(np.nanmean(holes)) and b.ci95[0] < b.mean < b.ci95[1]
    with_empty_seed = np.vstack([holes, np.full(10, np.nan)])  # a seed with nothing counted is no sample
    assert bootstrap_ci(with_empty_seed).seeds == 3
    with pytest.raises(ValueError, match="observed"):
        bootstrap_ci(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="same phones"):
        bootstrap_difference(m, m[:, :5], paired=False)


def test_bootstrap_differences_paired_and_unpaired() -> None:
    rng = np.random.default_rng(11)
    seeds, phones = rng.normal(0, 0.15, 5), rng.normal(0, 0.2, 30)
    base = 0.5 + seeds[:, None] + phones[None, :]
    # the same policies plus a constant: the paired difference is exactly it, and the smallest p a bootstrap gives
    d = bootstrap_difference(base + 0.125, base, paired=True)
    assert d.difference == pytest.approx(0.125) and d.ci95 == (pytest.approx(0.125), pytest.approx(0.125))
    assert d.stderr == pytest.approx(0, abs=1e-12) and d.p_value == 1 / 10_000
    # unpaired, the seeds' spread is in the difference; the shared phones' is not
    u = bootstrap_difference(base + 0.125, base, paired=False)
    assert u.difference == pytest.approx(0.125) and u.ci95[0] < 0.125 < u.ci95[1]
    assert u.stderr ** 2 == pytest.approx(2 * seeds.var() / 5, rel=0.05)
    # no difference: p is 1 and the interval straddles 0
    same = bootstrap_difference(base, base[::-1], paired=False)
    assert same.ci95[0] < 0 < same.ci95[1] and same.p_value > 0.5


def test_the_t_interval_over_phones_by_hand() -> None:
    # phone means 0.3, 0.5, 0.5, 0.7 (each over the seeds that observed it): mean 0.5, s = sqrt(0.08 / 3),
    # s.e. = s / 2 = 0.0816497, t(0.975, 3 dof) = 3.182446, half-width 0.2598457
    nan = np.nan
    m = [[0.1, 0.5, nan, 0.6, nan],
         [0.3, nan, 0.5, 0.8, nan],  # the last phone: no seed counted an episode there, not a phone of the sample
         [0.5, nan, nan, nan, nan],
         [nan] * 5]  # a seed with nothing counted
    t = phone_t_interval(m)
    assert (t.mean, t.phones, t.level) == (0.5, 4, 0.95) and t.stderr == pytest.approx(0.0816497, abs=1e-7)
    assert (t.low, t.high) == (pytest.approx(0.2401543, abs=1e-7), pytest.approx(0.7598457, abs=1e-7))
    assert np.nanmean(m) == pytest.approx(3.3 / 7)  # every phone weighs alike, not every cell
    narrower = phone_t_interval(m, level=0.9)  # t(0.95, 3 dof) = 2.353363
    assert (narrower.low, narrower.high) == (pytest.approx(0.3078487, abs=1e-7), pytest.approx(0.6921513, abs=1e-7))
    assert (t.low, t.high) == pytest.approx(stats.t.interval(0.95, 3, loc=0.5, scale=t.stderr))


def test_the_t_interval_over_phones_is_clipped_and_needs_two_phones() -> None:
    # phone means 0, 0, 0.1: 0.0333 ± 4.302653 x 0.0333 reaches below 0, which a rate cannot
    t = phone_t_interval([[0.0, 0.0, 0.1]])
    assert (t.low, t.high) == (0.0, pytest.approx(0.1767551, abs=1e-7))
    same = phone_t_interval(np.full((3, 10), 1 / 6))
    assert same.low == same.mean == same.high == 1 / 6 and same.stderr == 0
    assert phone_t_interval([[0.3, np.nan], [0.5, np.nan]]) is None  # one phone observed: no spread across phones
    assert phone_t_interval(np.full((2, 3), np.nan)) is None and phone_t_interval(np.zeros((2, 0))) is None
    with pytest.raises(ValueError, match="seed x phone"):
        phone_t_interval([0.1, 0.2])


@pytest.mark.parametrize(("reference", "executed", "matched"), [
    ("ABA", "A", [0]),  # the agent's A stands for the first A, not the last
    ("BA", "AB", [0]),  # B or A: equally long, the earlier reference step
    ("ABCB", "B", [1]),
    ("AAB", "AAAB", [0, 1, 2]),
    ("ABC", "", []),
])
def test_lcs_ties_take_the_earliest_reference_steps(reference, executed, matched) -> None:
    assert lcs_matches(reference, executed) == matched


def test_an_empty_episode_scores_nothing_and_a_repeating_agent_is_penalised_for_redundancy() -> None:
    empty = adaptive_metrics("ABC", "")
    assert (empty.tr, empty.tr_normalised, empty.tcr, empty.rrr) == (0, 0, 0, 0)
    stuck = adaptive_metrics("ABC", "AAAAAAAA")  # opened the app, then the same tap until the step limit
    assert stuck.tcr == pytest.approx(1 / 3) and stuck.rrr == pytest.approx(3 / 8)
    assert stuck.tr == pytest.approx(0.81) and repeat_ratio(list("AAAAAAAA")) == 1.0
    late = adaptive_metrics("ABC", "AAAABBBC")  # got there, with repeats: full completion, low efficiency
    assert late.tcr == 1.0 and late.tr_normalised == 1.0 and late.rrr == pytest.approx(3 / 8)


def test_repeat_ratio() -> None:
    assert repeat_ratio(["a", "a", "b", "b", "b"]) == 0.75
    assert repeat_ratio(["a"]) == 0.0


# ------------------------------------------------------------------------------- GUIOdyssey's action matching
def tap(y: float, x: float) -> ParsedAction:
    return ParsedAction("tap", (y, x), (y, x))


def swipe(touch: tuple[float, float], lift: tuple[float, float]) -> ParsedAction:
    return ParsedAction("swipe", touch, lift)


def key(name: str) -> ParsedAction:
    return ParsedAction("key", (0.95, 0.5), (0.95, 0.5), name)


def test_a_tap_matches_within_14_percent_of_the_screen() -> None:
    ref = tap(0.5, 0.5)
    assert AMS_TAP_DISTANCE == 0.14  # GUIOdyssey's CLICK_COORD_THRESHOLD
    assert actions_match(tap(0.5, 0.5), ref)  # exact
    assert actions_match(tap(0.5, 0.63), ref)  # 13% of the width away
    assert not actions_match(tap(0.5, 0.65), ref)  # 15%
    assert actions_match(tap(0.37, 0.5), ref) and not actions_match(tap(0.35, 0.5), ref)  # of the height: the same
    # the distance is Euclidean over both fractions: 0.1 and 0.1 is 14.1%
    assert actions_match(tap(0.59, 0.59), ref) and not actions_match(tap(0.6, 0.6), ref)


def test_the_distance_is_a_fraction_of_each_side_whatever_the_orientation() -> None:
    # 150 px to the right of the reference: 11.7% of a landscape tablet's 1280 px width, 18.75% of a portrait
    # phone's 800 px: the same pixels match on one and not on the other, as in GUIOdyssey (coordinates / 1000)
    def moved(width: int, height: int) -> bool:
        ref = (400 / height, 400 / width)
        return actions_match(tap(ref[0], ref[1] + 150 / width), tap(*ref))

    assert moved(1280, 800) and not moved(800, 1280)
    assert actions_match(tap(0.5, 0.63), tap(0.5, 0.5))  # normalised points: no screen size enters


def test_a_tap_far_away_matches_inside_the_element_the_reference_tapped() -> None:
    row = (0.2, 0.0, 0.3, 1.0)  # a full-width settings row (top, left, bottom, right)
    switch = (0.22, 0.85, 0.28, 0.95)  # drawn over it, later in the dump
    other = (0.4, 0.0, 0.5, 1.0)
    ref = tap(0.25, 0.1)  # the row's title
    assert not actions_match(tap(0.25, 0.6), ref)  # 50% away: no element boxes, no match
    assert actions_match(tap(0.25, 0.6), ref, boxes=[row, switch, other])  # the same row
    assert actions_match(tap(0.25, 0.9), ref, boxes=[row, switch, other])  # the switch lies inside the row
    assert not actions_match(tap(0.45, 0.6), ref, boxes=[row, switch, other])  # another row
    # the reference tapped the switch: the rest of the row is another element
    assert not actions_match(tap(0.25, 0.3), tap(0.25, 0.9), boxes=[row, switch, other])
    assert not actions_match(tap(0.9, 0.9), tap(0.7, 0.1), boxes=[row, switch, other])  # the reference hit nothing


def test_swipes_match_by_direction() -> None:
    up = swipe((0.8, 0.5), (0.2, 0.5))
    assert swipe_direction((0.8, 0.5), (0.2, 0.5)) == "up" and swipe_direction((0.5, 0.2), (0.5, 0.9)) == "right"
    assert actions_match(swipe((0.9, 0.1), (0.6, 0.2)), up)  # shorter, elsewhere, slanted: still up
    assert not actions_match(swipe((0.2, 0.5), (0.8, 0.5)), up)  # down
    assert not actions_match(swipe((0.5, 0.2), (0.4, 0.9)), up)  # mostly right


def test_different_kinds_never_match_and_keys_match_by_key() -> None:
    assert not actions_match(tap(0.5, 0.5), swipe((0.5, 0.5), (0.2, 0.5)))
    assert not actions_match(swipe((0.5, 0.5), (0.2, 0.5)), tap(0.5, 0.5))
    assert not actions_match(tap(0.95, 0.5), key("HOME"))  # next to the key, but a tap
    assert actions_match(key("BACK"), key("BACK")) and not actions_match(key("HOME"), key("BACK"))
    assert not actions_match(None, tap(0.5, 0.5))  # no valid action


def test_ams_and_offline_success_rate() -> None:
    s = offline_scores([[True, True], [True, False, True], []])
    assert (s.matched, s.steps, s.ams) == (4, 5, 0.8)
    assert (s.successes, s.episodes, s.success_rate) == (1, 2, 0.5)  # the empty episode is not a success
    empty = offline_scores([[]])
    assert empty.ams is None and empty.success_rate is None and empty.episodes == 0


def test_invalid_actions_are_counted_for_every_agent_and_missed_taps_where_the_ui_tree_was_read() -> None:
    from vlui.eval.report import action_validity

    records = [
        # a text agent's answer with no action in it (None), then a tap on nothing and one on a button
        {"actions": [None, [0.5, 0.5, 0.5, 0.5], [0.1, 0.1, 0.1, 0.1]],
         "tokens": ["invalid", "tap:nothing", "tap:ok|OK|Button"]},
        # a NaN gesture the phone refused: the episode ended there, the refused action is not among its steps
        {"actions": [[0.2, 0.2, 0.8, 0.2]], "tokens": ["swipe:right"], "invalid_action": "NaN in the action"},
        {"actions": [], "tokens": []},  # an episode that took no step
    ]
    assert action_validity(records) == {"actions": 5, "invalid_actions": 2, "invalid_action_rate": 0.4,
                                        "missed_tap_rate": 0.5}
    # without the UI tree (adaptive_metrics=false and an agent that reads pixels) no tap can be placed
    assert action_validity([{"actions": [[0.5] * 4]}])["missed_tap_rate"] is None
    assert action_validity([]) == {"actions": 0, "invalid_actions": 0, "invalid_action_rate": None,
                                   "missed_tap_rate": None}
