"""Evaluation statistics: Wilson intervals, standard errors, and AndroidArena's adaptive metrics."""

from __future__ import annotations

import math

import pytest

from vlui.eval.metrics import adaptive_metrics, lcs_matches, mean_stderr, paired, repeat_ratio, welch, wilson_interval


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


def test_repeat_ratio() -> None:
    assert repeat_ratio(["a", "a", "b", "b", "b"]) == 0.75
    assert repeat_ratio(["a"]) == 0.0
