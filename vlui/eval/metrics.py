"""Statistics and trajectory metrics for evaluation.

- Success rates: mean ± standard error across runs (B-MoCA reports this over 3 seeds) and a 95% Wilson score
  interval over all episodes (honest for small counts and for rates of 0 or 1).
- AndroidArena's adaptive metrics (Xing et al. 2024, Sec. 5.1) against a reference trajectory ``a`` (length L) for
  the executed one ``â`` (length L̂), through their longest common subsequence (LCS):
  Task Reward ``TR = Σ_i γ^(L-i) · 1_i`` (1_i = 1 when the i-th reference action is in the LCS), Task Completion
  Ratio ``TCR = k / L`` (k = position of the last matched reference action), Reversed Redundancy Ratio
  ``RRR = L / L̂``. ``tr_normalised`` divides TR by its maximum ``Σ_i γ^(L-i)`` so that it lies in [0, 1].
- Repeat-action ratio: the share of actions identical to the one before.
- Comparing recipes: Welch's and the paired t-test across training seeds (scipy's t distribution), a bootstrap over
  training seeds and phones for a mean or a difference, a Student t interval over the phones' means (for a split of
  few phones, where the percentile bootstrap's interval is too narrow), and Holm's adjustment where a report runs
  several tests.
- GUIOdyssey's offline scores (Lu et al. 2024, its ``GUIOdyssey_action_matching.py``): whether a predicted action
  matches the demonstrated one (:func:`actions_match`), the action matching score ``AMS = matched steps / steps``
  and the offline success rate ``SR = episodes with every step matched / episodes`` (:func:`offline_scores`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from vlui.env.actions import ParsedAction


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
    ones, the earliest reference positions (an agent's action that could stand for either of two reference steps is
    taken for the earlier one, so TCR never credits progress an earlier match explains)."""
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
        elif table[i + 1][j] > table[i][j + 1]:
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
    return sum(a == b for a, b in zip(actions, actions[1:], strict=False)) / (len(actions) - 1)


# ------------------------------------------------------------------------------------------ comparing two policies
@dataclass(frozen=True)
class Difference:
    """Policy A's mean success minus B's, across training seeds, with a t-test."""

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
    diff, se = mean_stderr([x - y for x, y in zip(a, b, strict=True)])
    return _t_test(diff, se, float(len(a) - 1))


def _t_test(diff: float, se: float, dof: float) -> Difference:
    """Student's t-test of a difference with standard error ``se`` and ``dof`` degrees of freedom (scipy's t
    distribution); where ``se`` is 0 the difference is exact: p is 0 if it is not 0."""
    if se == 0:
        return Difference(diff, 0.0, (diff, diff), math.inf if diff else 0.0, dof, 0.0 if diff else 1.0)
    t = diff / se
    half = float(stats.t.ppf(0.975, dof)) * se
    return Difference(diff, se, (diff - half, diff + half), t, dof, float(2 * stats.t.sf(abs(t), dof)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` tested together (in their order): the i-th smallest p times the
    number of tests not yet passed, made monotone and capped at 1. Rejecting where an adjusted p is below 0.05 keeps
    the chance of any false positive among all of them below 5%, where each raw p only bounds its own."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: p_values[j])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


# ------------------------------------------------------------------ the bootstrap over training seeds and phones
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0  # a fixed generator: the same evaluation gives the same interval in every report


@dataclass(frozen=True)
class Bootstrap:
    """The mean success over a (training seed x phone) matrix, with its bootstrap standard error and 95% percentile
    interval (:func:`bootstrap_ci`)."""

    mean: float
    stderr: float
    ci95: tuple[float, float]
    seeds: int
    phones: int
    resamples: int


@dataclass(frozen=True)
class BootstrapDifference:
    """Recipe A's mean success minus B's over the same phones (:func:`bootstrap_difference`), with its bootstrap
    standard error, 95% percentile interval and two-sided p-value."""

    difference: float
    stderr: float
    ci95: tuple[float, float]
    p_value: float
    paired: bool
    resamples: int


def bootstrap_ci(matrix: np.ndarray | Sequence[Sequence[float]], resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED) -> Bootstrap:
    """The mean of ``matrix[seed, phone]`` (one training seed's success rate on one phone) and how much it would
    change with other seeds and other phones, by a two-way crossed bootstrap.

    Both are samples: the training seeds of the recipe's training randomness, the phones (snapshots) of the
    population of phones a user could have. A claim such as "recipe A reaches 60% on held-out phones" is about both
    populations, so each resample draws the seeds and, independently, the phones with replacement, and takes the
    mean of the cells they cross (a seed or phone drawn twice counts twice). The spread of those means is the error
    bar; the 2.5% and 97.5% quantiles are the interval. For an additive matrix ``a_s + b_p`` its variance is
    ``var(a) / seeds + var(b) / phones`` (population variances): with 3 seeds the seeds' part is that of 3 values,
    which is why the reports keep a t-test across seeds beside it.

    NaN cells (a phone where none of a seed's episodes counted) are left out: a resample averages the observed cells
    among those it drew, and one that drew none is left out; a seed with no observed cell is not a sample and is
    dropped. Where every observed cell is the same value, the interval is exactly that value. Raises ValueError
    for a matrix without an observed cell."""
    m = _observed_rows(matrix)
    rng = np.random.default_rng(seed)
    seeds, phones = _counts(rng, m.shape[0], resamples), _counts(rng, m.shape[1], resamples)
    lo, hi, se = _spread(_resampled_means(m, seeds, phones))
    return Bootstrap(_mean(m), se, (lo, hi), m.shape[0], m.shape[1], resamples)


def bootstrap_difference(a: np.ndarray | Sequence[Sequence[float]], b: np.ndarray | Sequence[Sequence[float]],
                         paired: bool, resamples: int = BOOTSTRAP_RESAMPLES,
                         seed: int = BOOTSTRAP_SEED) -> BootstrapDifference:
    """mean(a) - mean(b) for two recipes' (seed x phone) success matrices over the SAME phones (the same columns in
    the same order), by the bootstrap of :func:`bootstrap_ci`: each resample draws one set of phones for both, since
    both were evaluated on them and a hard phone is hard for both.

    ``paired``: row i of ``a`` belongs with row i of ``b`` (a recipe fine-tuned from the other's policy of the same
    training seed): the seeds are drawn jointly, so the seed-to-seed spread they share cancels, and the difference
    is the mean of the cells ``a - b`` observed in both. Otherwise each recipe's seeds are drawn on their own.

    The p-value is two-sided: twice the smaller share of resampled differences at or below 0 and at or above 0,
    bounded to [1 / resamples, 1] (a bootstrap cannot say less than one in ``resamples``). NaN cells as in
    :func:`bootstrap_ci`; raises ValueError where the matrices do not have the same phones (or, paired, seeds)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or (paired and a.shape != b.shape):
        raise ValueError(f"a bootstrap difference needs matrices of the same phones{' and seeds' if paired else ''}: "
                         f"{a.shape} and {b.shape}")
    rng = np.random.default_rng(seed)
    if paired:
        d = _observed_rows(a - b)
        seeds, phones = _counts(rng, d.shape[0], resamples), _counts(rng, d.shape[1], resamples)
        diffs, difference = _resampled_means(d, seeds, phones), _mean(d)
    else:
        a, b = _observed_rows(a), _observed_rows(b)
        seeds_a, seeds_b = _counts(rng, a.shape[0], resamples), _counts(rng, b.shape[0], resamples)
        phones = _counts(rng, a.shape[1], resamples)
        diffs = _resampled_means(a, seeds_a, phones) - _resampled_means(b, seeds_b, phones)
        difference = _mean(a) - _mean(b)
    lo, hi, se = _spread(diffs)
    drawn = diffs[~np.isnan(diffs)]
    p = 2 * min(np.mean(drawn <= 0), np.mean(drawn >= 0))
    return BootstrapDifference(difference, se, (lo, hi), float(min(1.0, max(1 / resamples, p))), paired, resamples)


def _observed_rows(matrix: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """``matrix`` as a float array without its rows that have no observed (non-NaN) cell."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"a bootstrap over seeds and phones needs a (seed x phone) matrix, not shape {m.shape}")
    m = m[~np.isnan(m).all(axis=1)]
    if m.size == 0:
        raise ValueError("a bootstrap over seeds and phones needs at least one observed (non-NaN) cell")
    return m


def _counts(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in each of ``resamples`` draws of n with replacement: (resamples, n)."""
    drawn = rng.integers(0, n, size=(resamples, n)) + n * np.arange(resamples)[:, None]
    return np.bincount(drawn.ravel(), minlength=resamples * n).reshape(resamples, n).astype(float)


def _mean(m: np.ndarray) -> float:
    """The mean of the observed cells; exactly their value where they are all the same (no rounding)."""
    lo, hi = np.nanmin(m), np.nanmax(m)
    return float(lo) if lo == hi else float(np.nanmean(m))


def _resampled_means(m: np.ndarray, seeds: np.ndarray, phones: np.ndarray) -> np.ndarray:
    """Each resample's mean of the observed cells of the seeds and phones it drew (``seeds``, ``phones``: how often
    each was drawn), weighting a cell by how often its seed times how often its phone was drawn; NaN for a resample
    that drew no observed cell."""
    observed = ~np.isnan(m)
    # sum over seeds s and phones p of seeds[b, s] * m[s, p] * phones[b, p], as one matrix product per resample b
    total = ((seeds @ np.where(observed, m, 0.0)) * phones).sum(axis=1)
    weight = ((seeds @ observed.astype(float)) * phones).sum(axis=1)
    means = np.full(len(weight), np.nan)
    drew = weight > 0
    means[drew] = total[drew] / weight[drew]
    if np.nanmin(m) == np.nanmax(m):  # every observed cell the same: every resample's mean is it, not off by rounding
        means[drew] = _mean(m)
    return means


def _spread(values: np.ndarray) -> tuple[float, float, float]:
    """The 2.5% and 97.5% quantiles and the standard deviation of the resampled values (NaN ones left out)."""
    drawn = values[~np.isnan(values)]
    lo, hi = np.percentile(drawn, [2.5, 97.5])
    return float(lo), float(hi), float(drawn.std(ddof=1)) if drawn.min() < drawn.max() else 0.0


# ------------------------------------------------------------------------- the t interval over the phones' means
@dataclass(frozen=True)
class PhoneInterval:
    """The mean of the phones' mean success over a (training seed x phone) matrix, with its standard error and the
    Student t interval at ``level`` over those phone means (:func:`phone_t_interval`)."""

    mean: float
    stderr: float
    low: float
    high: float
    phones: int
    level: float


def phone_t_interval(matrix: np.ndarray | Sequence[Sequence[float]], level: float = 0.95) -> PhoneInterval | None:
    """The Student t interval over the phones of ``matrix[seed, phone]`` (one training seed's success rate on one
    phone; NaN where none of the seed's episodes on the phone counted): each phone's mean over the seeds that
    observed it, then the mean of those phone means ± t(n - 1) times their standard error, n the phones observed.

    The phones are its sample. A percentile bootstrap over ten phones draws from those ten values alone and
    under-covers (its 95% interval holds the true mean less often than that); the t interval widens by the t quantile
    of n - 1 degrees of freedom, which is why it is the interval to quote for the ten test snapshots
    (docs/evaluation.md). The seeds enter only through the phone means: a seed better on every phone raises them all
    alike and is not in their spread (the t-tests across seeds, :func:`welch`, measure that part). Its mean weights
    every phone alike: the mean of the observed cells of :func:`bootstrap_ci` where every seed observed every phone.

    Clipped to [0, 1], as :func:`wilson_interval` is: a rate cannot leave it (a bound clipped there says the interval
    reaches past what a rate allows, as it does for rates near 0 over few phones). Where every phone's mean is the
    same, the interval is that value. None where fewer than two phones were observed (no spread to measure)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"a t interval over phones needs a (seed x phone) matrix, not shape {m.shape}")
    observed = m[:, ~np.isnan(m).all(axis=0)]
    n = observed.shape[1]
    if n < 2:
        return None
    means = np.nanmean(observed, axis=0)
    mean = _mean(means[None, :])
    stderr = float(means.std(ddof=1) / math.sqrt(n)) if means.min() < means.max() else 0.0
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * stderr
    return PhoneInterval(mean, stderr, max(0.0, mean - half), min(1.0, mean + half), n, level)


# ------------------------------------------------------------------ GUIOdyssey's action matching (offline scores)
AMS_TAP_DISTANCE = 0.14  # GUIOdyssey's CLICK_COORD_THRESHOLD (AITW's _TAP_DISTANCE_THRESHOLD): 14% of the screen

Box = tuple[float, float, float, float]  # an element's bounds, normalised (top, left, bottom, right); bottom, right out


def tap_distance(p: tuple[float, float], q: tuple[float, float]) -> float:
    """The distance between two normalised ``(y, x)`` points, each coordinate a fraction of its own side of the screen
    (GUIOdyssey's coordinates divided by 1000): on a portrait screen a horizontal step of 0.1 is fewer pixels than a
    vertical one. Unlike :func:`vlui.spec.gesture_distance` (taps from swipes), the y difference is not scaled."""
    return math.hypot(p[0] - q[0], p[1] - q[1])


def element_at(point: tuple[float, float], boxes: Sequence[Box]) -> int | None:
    """The index of the element a tap at normalised ``point`` lands on among ``boxes`` (in drawing order: a later
    element is drawn over an earlier one, as a UI dump lists them), or None where no box holds it."""
    y, x = point
    for i in range(len(boxes) - 1, -1, -1):
        top, left, bottom, right = boxes[i]
        if top <= y < bottom and left <= x < right:
            return i
    return None


def swipe_direction(touch: tuple[float, float], lift: tuple[float, float]) -> str:
    """``up``, ``down``, ``left`` or ``right``: the way the finger moves along the axis it moves most on (in
    normalised units; a tie counts as vertical, the axis AITW's ``argmax`` picks first)."""
    dy, dx = lift[0] - touch[0], lift[1] - touch[1]
    if abs(dy) >= abs(dx):
        return "down" if dy > 0 else "up"
    return "right" if dx > 0 else "left"


def actions_match(predicted: ParsedAction | None, reference: ParsedAction, boxes: Sequence[Box] | None = None,
                  threshold: float = AMS_TAP_DISTANCE) -> bool:
    """Whether ``predicted`` does what ``reference`` did, as GUIOdyssey scores a step (its ``action_matching``):

    - the kinds must agree (a tap, a swipe, a navigation key); None (no valid action) never matches;
    - two taps match when the predicted point is within ``threshold`` of the reference point
      (:func:`tap_distance`), or inside the bounds of the element the reference tap lands on (:func:`element_at`
      over ``boxes``, the screen's clickable elements; GUIOdyssey uses the SAM2 box of the reference's element);
    - two swipes match when they go the same way (:func:`swipe_direction`: GUIOdyssey compares SCROLL directions);
    - two key presses match when they press the same key (BACK, HOME, APP_SWITCH: GUIOdyssey compares the type)."""
    if predicted is None or predicted.kind != reference.kind:
        return False
    if reference.kind == "key":
        return predicted.key == reference.key
    if reference.kind == "swipe":
        return swipe_direction(predicted.touch, predicted.lift) == swipe_direction(reference.touch, reference.lift)
    if tap_distance(predicted.touch, reference.touch) <= threshold:
        return True
    target = element_at(reference.touch, boxes or ())
    return target is not None and element_at(predicted.touch, boxes[target:target + 1]) == 0


@dataclass(frozen=True)
class OfflineScores:
    """GUIOdyssey's scores of a policy over demonstrations, step by step: ``ams`` the share of steps whose predicted
    action matched, ``success_rate`` (SR) the share of episodes whose every step matched; None where nothing was
    scored."""

    ams: float | None
    matched: int
    steps: int
    success_rate: float | None
    successes: int
    episodes: int


def offline_scores(episodes: Sequence[Sequence[bool]]) -> OfflineScores:
    """AMS and SR of episodes given as their steps' matches. An episode without a step (no action to predict) is
    left out of both: it would count as a success without a step matched."""
    scored = [list(e) for e in episodes if len(e)]
    matched, steps = sum(sum(e) for e in scored), sum(len(e) for e in scored)
    successes = sum(all(e) for e in scored)
    return OfflineScores(matched / steps if steps else None, matched, steps,
                         successes / len(scored) if scored else None, successes, len(scored))
