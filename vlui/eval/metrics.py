"""Statistics and trajectory metrics for evaluation.

- Success rates: mean ± standard error across runs (B-MoCA reports this over 3 seeds) and a 95% Wilson score
  interval over all episodes (honest for small counts and for rates of 0 or 1).
- AndroidArena's adaptive metrics (Xing et al. 2024, Sec. 5.1) against a reference trajectory ``a`` (length L) for
  the executed one ``â`` (length L̂), through their longest common subsequence (LCS):
  Task Reward ``TR = Σ_i γ^(L-i) · 1_i`` (1_i = 1 when the i-th reference action is in the LCS), Task Completion
  Ratio ``TCR = k / L`` (k = position of the last matched reference action), Reversed Redundancy Ratio
  ``RRR = L / L̂``. ``tr_normalised`` divides TR by its maximum ``Σ_i γ^(L-i)`` so that it lies in [0, 1].
- Repeat-action ratio: the share of actions identical to the one before.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a success rate (``(0, 1)`` when n = 0)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_stderr(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (sample standard deviation / sqrt(n); 0 for a single value)."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan")
    mean = sum(values) / n
    if n == 1:
        return mean, 0.0
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def lcs_matches(reference: Sequence[Hashable], executed: Sequence[Hashable]) -> list[int]:
    """0-based positions in ``reference`` of one longest common subsequence with ``executed``; among equally long
    ones, the backtrack prefers matching later reference actions."""
    n, m = len(reference), len(executed)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if reference[i] == executed[j] else max(table[i + 1][j],
                                                                                            table[i][j + 1])
    matched, i, j = [], 0, 0
    while i < n and j < m:
        if reference[i] == executed[j] and table[i][j] == table[i + 1][j + 1] + 1:
            matched.append(i)
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return matched


@dataclass(frozen=True)
class Adaptive:
    tr: float
    tr_normalised: float
    tcr: float
    rrr: float


def adaptive_metrics(reference: Sequence[Hashable], executed: Sequence[Hashable], gamma: float = 0.9) -> Adaptive:
    """TR, TCR and RRR of ``executed`` against ``reference`` (AndroidArena Sec. 5.1)."""
    big_l, hat_l = len(reference), len(executed)
    if big_l == 0:
        raise ValueError("the reference trajectory is empty")
    matched = lcs_matches(reference, executed)
    tr = sum(gamma ** (big_l - (i + 1)) for i in matched)
    tr_max = sum(gamma ** (big_l - (i + 1)) for i in range(big_l))
    tcr = (matched[-1] + 1) / big_l if matched else 0.0
    rrr = big_l / hat_l if hat_l else 0.0
    return Adaptive(tr, tr / tr_max, tcr, rrr)


def repeat_ratio(actions: Sequence[Hashable]) -> float:
    """Share of actions equal to the action just before them."""
    if len(actions) < 2:
        return 0.0
    return sum(a == b for a, b in zip(actions, actions[1:])) / (len(actions) - 1)


# ------------------------------------------------------------------------------------------ comparing two policies
def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz's method)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def student_t_two_sided(t: float, dof: float) -> float:
    """P(|T| >= |t|) for Student's t distribution with ``dof`` degrees of freedom."""
    return incomplete_beta(dof / 2.0, 0.5, dof / (dof + t * t))


def student_t_quantile(p: float, dof: float) -> float:
    """The ``p`` quantile (0.5 < p < 1) of Student's t with ``dof`` degrees of freedom, by bisection."""
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1 - student_t_two_sided(mid, dof) / 2 < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True)
class Difference:
    """Policy A's mean success minus B's, across training seeds, with Welch's t-test."""

    difference: float
    stderr: float
    ci95: tuple[float, float]
    t: float
    dof: float
    p_value: float


def welch(a: Sequence[float], b: Sequence[float]) -> Difference | None:
    """Welch's unequal-variance t-test of mean(a) - mean(b) (each value one training seed's success rate); None
    unless both have at least two values. Where both spreads are 0 the difference is exact: p is 0 if it is not 0."""
    if len(a) < 2 or len(b) < 2:
        return None
    (ma, sa), (mb, sb) = mean_stderr(a), mean_stderr(b)
    diff, se = ma - mb, math.hypot(sa, sb)
    if se == 0:
        return _t_test(diff, se, float(len(a) + len(b) - 2))
    dof = se ** 4 / ((sa ** 4 / (len(a) - 1) if sa else 0.0) + (sb ** 4 / (len(b) - 1) if sb else 0.0))
    return _t_test(diff, se, dof)


def paired(a: Sequence[float], b: Sequence[float]) -> Difference | None:
    """Paired t-test of mean(a[i] - b[i]), where a[i] and b[i] belong together (a policy fine-tuned from the same
    training seed's policy b[i]): the seed-to-seed spread they share cancels. None unless there are two pairs."""
    if len(a) != len(b) or len(a) < 2:
        return None
    diff, se = mean_stderr([x - y for x, y in zip(a, b)])
    return _t_test(diff, se, float(len(a) - 1))


def _t_test(diff: float, se: float, dof: float) -> Difference:
    """Student's t-test of a difference with standard error ``se``; where ``se`` is 0 the difference is exact: p is 0
    if it is not 0."""
    if se == 0:
        return Difference(diff, 0.0, (diff, diff), math.inf if diff else 0.0, dof, 0.0 if diff else 1.0)
    t = diff / se
    half = student_t_quantile(0.975, dof) * se
    return Difference(diff, se, (diff - half, diff + half), t, dof, student_t_two_sided(t, dof))
