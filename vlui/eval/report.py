"""Evaluation results: aggregate episode records, write results.json and results.md, print a table, draw plots."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import imageio.v2 as imageio
import numpy as np
from PIL import Image, ImageDraw

from vlui.eval import axes
from vlui.eval.metrics import (
    BOOTSTRAP_RESAMPLES,
    bootstrap_ci,
    bootstrap_difference,
    holm,
    mean_stderr,
    phone_t_interval,
    welch,
    wilson_interval,
)

BOOTSTRAP = "bootstrap over seeds and phones"
T_OVER_PHONES = "Student t over the phones' means"


def _rate(records: list[dict[str, Any]], runs: list[int]) -> dict[str, Any]:
    """Success over ``records``: mean ± stderr across runs, and a Wilson interval over all episodes."""
    counted = [r for r in records if not r.get("infra_failure")]
    per_run = []
    for run in runs:
        rs = [r for r in counted if r["run"] == run]
        if rs:
            per_run.append(sum(r["success"] for r in rs) / len(rs))
    k, n = sum(r["success"] for r in counted), len(counted)
    # no episode counted (all failed for infrastructure reasons): no rate, written as null (JSON has no NaN)
    mean, se = mean_stderr(per_run) if per_run else (None, None)
    steps = [r["steps"] for r in counted if r["success"]]
    out = {"success_rate": k / n if n else None, "mean_over_runs": mean, "stderr": se,
           "wilson95": list(wilson_interval(k, n)) if n else None, "episodes": n, "successes": k,
           "infra_failures": sum(1 for r in records if r.get("infra_failure")),
           "mean_steps_successful": sum(steps) / len(steps) if steps else None}
    out.update(action_validity(counted))
    adaptive = [r["adaptive"] for r in counted if r.get("adaptive")]
    if adaptive:
        out["adaptive"] = {m: sum(a[m] for a in adaptive) / len(adaptive)
                           for m in ("tr", "tr_normalised", "tcr", "rrr", "repeat_ratio")}
    return out


MISSED = ("tap:nothing", "long_press:nothing")  # the action tokens of a gesture on no clickable element


def action_validity(records: list[dict[str, Any]]) -> dict[str, Any]:
    """AndroidArena's invalid-action ratio, for every agent: of the actions the episodes took (``actions``), those
    the phone could not carry out (``invalid_actions``: a NaN or out-of-range gesture, which ends its episode, or a
    text answer with no action in it); and, where the UI tree was read (``tokens``), the share of taps and long
    presses that landed on no clickable element (``missed_tap_rate``), what an action outside the screen's action
    space is for a dual-gesture agent. None where there is nothing to count."""
    refused = sum(bool(r.get("invalid_action")) for r in records)  # that action is not among the steps
    actions = sum(len(r.get("actions") or []) for r in records) + refused
    invalid = sum(a is None for r in records for a in r.get("actions") or []) + refused
    gestures = [t for r in records for t in r.get("tokens") or [] if t and t.startswith(("tap:", "long_press:"))]
    return {"actions": actions, "invalid_actions": invalid,
            "invalid_action_rate": invalid / actions if actions else None,
            "missed_tap_rate": sum(t in MISSED for t in gestures) / len(gestures) if gestures else None}


def family(task: str) -> str:
    """What a task is reported under: its template for a parameterized instance (``create_alarm@0630`` ->
    ``create_alarm``), else itself."""
    return task.split("@", 1)[0]


def repeats(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the evaluation's runs are identical repeats: every (policy, task, snapshot, episode) has the same
    outcome and actions in every run (a deterministic phone and a deterministic agent). Then the standard error
    across runs is 0 by construction and measures nothing; the report says so instead of printing "± 0.0"."""
    outcomes: dict[tuple, set] = defaultdict(set)
    for r in records:
        if not r.get("infra_failure"):
            outcomes[r.get("policy"), r["task"], r["snapshot"], r["episode"]].add(
                (r["success"], json.dumps(r["actions"])))
    runs = len({r["run"] for r in records})
    differing = sum(1 for v in outcomes.values() if len(v) > 1)
    return {"runs": runs, "identical": runs > 1 and differing == 0, "differing_episodes": differing}


class PhoneTable:
    """Successes and counted episodes per policy (checkpoint), phone (snapshot) and task family: the cells of the
    bootstrap over training seeds and phones (:func:`vlui.eval.metrics.bootstrap_ci`). Episodes that failed for
    infrastructure reasons do not count, and a phone appears only where some policy counted an episode on it."""

    def __init__(self, records: list[dict[str, Any]], checkpoints: list[str],
                 value: Callable[[dict[str, Any]], float | None] | None = None) -> None:
        """``value``: what an episode counts instead of its success (e.g. its TCR), None for an episode that has
        none (left out of its cell); ``successes`` then holds the cells' sums of it."""
        self.checkpoints = list(checkpoints)
        at_checkpoint = {c: i for i, c in enumerate(self.checkpoints)}
        values = ((r, bool(r["success"]) if value is None else value(r)) for r in records
                  if not r.get("infra_failure") and r.get("checkpoint") in at_checkpoint)
        counted = [(r, v) for r, v in values if v is not None]
        self.phones = sorted({r["snapshot"] for r, _ in counted})
        self.families = list(dict.fromkeys(family(r["task"]) for r, _ in counted))
        shape = (len(self.checkpoints), len(self.phones), len(self.families))
        self.successes = np.zeros(shape, dtype=np.int64 if value is None else np.float64)
        self.episodes = np.zeros(shape, dtype=np.int64)
        at_phone = {p: i for i, p in enumerate(self.phones)}
        at_family = {f: i for i, f in enumerate(self.families)}
        for r, v in counted:
            cell = at_checkpoint[r.get("checkpoint")], at_phone[r["snapshot"]], at_family[family(r["task"])]
            self.successes[cell] += v
            self.episodes[cell] += 1

    def cells(self, checkpoints: list[str], families: list[str] | None = None,
              phones: Collection[str] | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The phones (of ``phones``, all by default) where any policy of the table counted an episode of
        ``families`` (all by default), and the successes and episodes [checkpoint, phone] there."""
        which = [self.families.index(f) for f in families] if families is not None else slice(None)
        successes, episodes = self.successes[:, :, which].sum(axis=2), self.episodes[:, :, which].sum(axis=2)
        keep = (episodes.sum(axis=0) > 0) & np.array([phones is None or p in phones for p in self.phones], dtype=bool)
        rows = [self.checkpoints.index(c) for c in checkpoints]
        phones = [p for p, k in zip(self.phones, keep, strict=True) if k]
        return phones, successes[rows][:, keep], episodes[rows][:, keep]

    def matrix(self, checkpoints: list[str], families: list[str] | None = None,
               phones: Collection[str] | None = None) -> tuple[list[str], np.ndarray]:
        """The phones of :meth:`cells` and the success rate [checkpoint, phone] on them: NaN where the policy counted
        no episode on the phone."""
        names, successes, episodes = self.cells(checkpoints, families, phones)
        with np.errstate(invalid="ignore", divide="ignore"):
            return names, np.where(episodes > 0, successes / episodes, np.nan)


def bootstrap_summary(matrix: np.ndarray) -> dict[str, Any] | None:
    """The bootstrap over training seeds and phones of a (seed x phone) success matrix, for results.json: its 95%
    interval, standard error and the mean of the cells it is about; None where no cell was observed."""
    if np.isnan(matrix).all():  # also an empty matrix: no policy counted an episode
        return None
    b = bootstrap_ci(matrix)
    return {"low": b.ci95[0], "high": b.ci95[1], "mean": b.mean, "stderr": b.stderr, "seeds": b.seeds,
            "phones": b.phones, "resamples": b.resamples, "method": BOOTSTRAP}


def phone_t_summary(matrix: np.ndarray) -> dict[str, Any] | None:
    """The 95% t interval over the phone means of a (seed x phone) success matrix (:func:`phone_t_interval`), for
    results.json: its bounds, the mean of the phone means it is about, its standard error and the phones; None under
    two observed phones."""
    t = phone_t_interval(matrix)
    if t is None:
        return None
    return {"low": t.low, "high": t.high, "mean": t.mean, "stderr": t.stderr, "phones": t.phones, "level": t.level,
            "method": T_OVER_PHONES}


def bootstrap_comparison(a: np.ndarray, b: np.ndarray, paired: bool) -> dict[str, Any] | None:
    """The bootstrap difference of two recipes' (seed x phone) success matrices over the same phones, for
    results.json; None where either has no observed cell."""
    if np.isnan(a).all() or np.isnan(b).all():
        return None
    d = bootstrap_difference(a, b, paired)
    return {"difference": d.difference, "stderr": d.stderr, "ci95": list(d.ci95), "p_value": d.p_value,
            "resamples": d.resamples,
            "method": BOOTSTRAP + (" (paired by seed)" if paired else " (seeds drawn per recipe, phones shared)")}


def holm_adjust(tests: list[dict[str, Any]]) -> None:
    """Adds to each of ``tests`` (dicts with a "p_value"), in place, "p_holm": its p adjusted by Holm's method over
    all of them, and "holm_tests": how many they are. A report that runs several tests adjusts over all of them, so
    that one of many coming out below 0.05 by chance is not read as a finding."""
    for test, p in zip(tests, holm([t["p_value"] for t in tests]), strict=True):
        test.update(p_holm=p, holm_tests=len(tests))


def group_comparison(a: str, b: str, seeds_a: list[float], seeds_b: list[float], rates_a: np.ndarray,
                     rates_b: np.ndarray) -> dict[str, Any]:
    """Group ``a`` of policies (a recipe's training seeds) against group ``b``, for results.json: Welch's t-test of
    their seeds' success (``seeds_a``, ``seeds_b``) and the bootstrap difference of their (seed x phone) success
    matrices ``rates_a``, ``rates_b`` over the same phones, each group's seeds drawn on their own, the phones shared.
    The p-values are not yet Holm-adjusted: that is over the family of tests they are part of (:func:`holm_adjust`)."""
    d = welch(seeds_a, seeds_b)
    return {"a": a, "b": b, **({
        "difference": d.difference, "stderr": d.stderr, "ci95": list(d.ci95),
        "t": None if math.isinf(d.t) else d.t, "dof": d.dof, "p_value": d.p_value,
        "test": "Welch's t-test across seeds"}
        if d else {"difference": None, "note": "needs at least two seeds (policies) in each group for a "
                                              "t-test across seeds"}),
        "bootstrap": bootstrap_comparison(rates_a, rates_b, False)}


def across_seeds(records: list[dict[str, Any]], groups: dict[str, list[str]],
                 splits: dict[str, str], pooled: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Success of each policy (a training seed: its episodes pooled over runs), and per group of policies (one recipe)
    the mean ± standard error across them, a 95% interval from a bootstrap over seeds and phones (``ci95``) and the
    95% t interval over the phones' means (``t_interval``, the one to quote for a split of few phones), overall, per
    task (or template) and per split (the phones of that split), with each seed's success on each phone
    (``per_phone``: snapshot -> checkpoint -> rate); then each pair of groups compared with Welch's t-test across
    seeds and the bootstrap difference over seeds and phones (each group's seeds drawn on their own, the phones
    shared), their p-values Holm-adjusted over all the comparisons. The spread across seeds and phones is what says
    whether a recipe is better, where the spread across evaluation runs only measures the phone's and the agent's own
    randomness. ``pooled``: tasks (or templates) pooled under a name (an app -> its tasks), each pool summarised the
    same way (``per_pool``; pools of tasks none of the episodes ran are left out)."""
    table = PhoneTable(records, [c for paths in groups.values() for c in paths])
    pools = {name: [f for f in fs if f in table.families] for name, fs in (pooled or {}).items()}
    pools = {name: fs for name, fs in pools.items() if fs}

    def summary(paths: list[str], families: list[str] | None = None, split: str | None = None) -> dict[str, Any]:
        phones = None if split is None else {p for p in table.phones if splits.get(p, "user") == split}
        _, successes, episodes = table.cells(paths, families, phones)
        totals, counts = successes.sum(axis=1), episodes.sum(axis=1)
        per_policy = {c: int(k) / int(n) if n else None for c, k, n in zip(paths, totals, counts, strict=True)}
        values = [v for v in per_policy.values() if v is not None]
        mean, se = mean_stderr(values) if values else (None, None)
        _, rates = table.matrix(paths, families, phones)
        return {"mean": mean, "stderr": se if len(values) > 1 else None, "seeds": len(values),
                "per_policy": per_policy, "ci95": bootstrap_summary(rates), "t_interval": phone_t_summary(rates)}

    out: dict[str, Any] = {"groups": {}, "comparisons": []}
    split_names = sorted({splits.get(p, "user") for p in table.phones})
    for group, paths in groups.items():
        phones, rates = table.matrix(paths)
        out["groups"][group] = {
            "checkpoints": paths,
            "overall": summary(paths),
            "per_family": {f: summary(paths, [f]) for f in table.families},
            **({"per_pool": {name: {**summary(paths, fs), "tasks": len(fs)} for name, fs in pools.items()}}
               if pools else {}),
            "per_split": {s: summary(paths, split=s) for s in split_names},
            "per_phone": {p: {c: None if math.isnan(v) else float(v) for c, v in zip(paths, rates[:, j], strict=True)}
                          for j, p in enumerate(phones)},
        }
    names = list(groups)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            va, vb = ([v for v in out["groups"][g]["overall"]["per_policy"].values() if v is not None] for g in (a, b))
            out["comparisons"].append(group_comparison(a, b, va, vb, table.matrix(groups[a])[1],
                                                       table.matrix(groups[b])[1]))
    holm_adjust([c for c in out["comparisons"] if c["difference"] is not None])
    holm_adjust([c["bootstrap"] for c in out["comparisons"] if c["bootstrap"]])
    return out


def aggregate(records: list[dict[str, Any]], splits: dict[str, str], meta: dict[str, Any],
              groups: dict[str, list[str]] | None = None,
              constraints: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Success per task, per template, per snapshot, per split and per split and task (or template); whether the
    runs were identical repeats; with several policies (``groups``: name -> checkpoints), the spread across them;
    with constrained tasks (``constraints``: task -> its constraints' levels), how often they were broken
    (:func:`violations`).

    ``per_family`` is the unit of the tables and plots: B-MoCA tasks one by one, template instances pooled per
    template, so an evaluation over hundreds of sampled instances stays readable."""
    runs = sorted({r["run"] for r in records})
    by_task, by_family, by_snap, by_split = defaultdict(list), defaultdict(list), defaultdict(list), defaultdict(list)
    by_split_task, by_split_family = defaultdict(list), defaultdict(list)
    for r in records:
        split = splits.get(r["snapshot"], "user")
        by_task[r["task"]].append(r)
        by_family[family(r["task"])].append(r)
        by_snap[r["snapshot"]].append(r)
        by_split[split].append(r)
        by_split_task[split, r["task"]].append(r)
        by_split_family[split, family(r["task"])].append(r)
    overall = _rate(records, runs)
    result = {
        "success_rate": overall["success_rate"],
        "overall": overall,
        "per_task": {t: _rate(rs, runs) for t, rs in by_task.items()},
        "per_family": {f: {**_rate(rs, runs), **({"instances": len({r["task"] for r in rs})}
                                                 if any("@" in r["task"] for r in rs) else {})}
                       for f, rs in by_family.items()},
        "per_snapshot": {s: {**_rate(rs, runs), "split": splits.get(s, "user")} for s, rs in sorted(by_snap.items())},
        "per_split": {s: _rate(rs, runs) for s, rs in sorted(by_split.items())},
        "per_split_task": {s: {t: _rate(by_split_task[s, t], runs) for t in by_task} for s in sorted(by_split)},
        "per_split_family": {s: {f: _rate(by_split_family[s, f], runs) for f in by_family} for s in sorted(by_split)},
        "episodes": len(records),
        "runs": len(runs),
        "repeats": repeats(records),
        **({"seeds": across_seeds(records, groups, splits)} if groups else {}),
        "by_setting": by_setting(records, groups),
        **({"constraints": violations(records, constraints)} if constraints else {}),
        **meta,
        # an LLM agent's transcripts stay in episodes.jsonl: here, their counts (``llm``)
        "records": [{k: v for k, v in r.items() if k not in ("frames", "transcript")} for r in records],
    }
    return result


def by_setting(records: list[dict[str, Any]], groups: dict[str, list[str]] | None = None
               ) -> dict[str, list[dict[str, Any]]]:
    """Success by phone setting (:func:`vlui.eval.axes.breakdown`) of each group of policies (``groups``: name ->
    checkpoints; without them, every policy evaluated), over the phones with settings; empty where fewer than two
    phones have any (one snapshot, or phones known only to a device)."""
    described = axes.describe_all(sorted({r["snapshot"] for r in records}))
    if len(described) < 2:
        return {}
    groups = groups or {"success": list(dict.fromkeys(r.get("checkpoint") for r in records))}
    phones = PhoneTable(records, [c for checkpoints in groups.values() for c in checkpoints])
    return {name or "policy": axes.breakdown(*phones.matrix(checkpoints), described)
            for name, checkpoints in groups.items()}


def violations(records: list[dict[str, Any]], constraints: dict[str, list[str]]) -> dict[str, Any]:
    """How the constrained tasks' episodes (``constraints``: task -> its constraints' levels) kept their constraints:
    the share of episodes that broke one, of those that reached the goal all the same, and per level (AndroidArena's
    Table 5: app, page, component) the share of the episodes of tasks with a constraint of that level that broke
    one of that level. Infrastructure failures are left out."""
    mine = [r for r in records if r["task"] in constraints and not r.get("infra_failure")]
    broken = [r for r in mine if r.get("violations")]
    per_level = {}
    for level in sorted({lv for levels in constraints.values() for lv in levels}):
        held = [r for r in mine if level in constraints[r["task"]]]
        hit = [r for r in held if any(v["level"] == level for v in r.get("violations") or ())]
        per_level[level] = {"episodes": len(held), "violated": len(hit),
                            "violation_rate": len(hit) / len(held) if held else None}
    return {"episodes": len(mine), "violated": len(broken),
            "violation_rate": len(broken) / len(mine) if mine else None,
            "goal_reached_but_violated": sum(bool(r.get("goal_reached")) for r in broken), "per_level": per_level}


def agent_usage(records: list[dict[str, Any]], price_input_per_1m: float = 0.0,
                price_output_per_1m: float = 0.0) -> dict[str, Any] | None:
    """What an LLM agent's episodes asked of its endpoint (their transcripts), None for another agent: requests
    sent and answers read from the cache, the tokens of the requests sent, the estimated cost in the prices' unit
    (None when a price is 0, unknown), the invalid-action rate (AndroidArena): the share of answers from which
    no valid action could be read, and how often the agent ended an episode itself (``agent.actions=extended``):
    declared complete (and of those, how many were not), declared impossible, answered (M3A's ``answer``; and of
those, how many failed); ``commands``: how many of each action beyond the dual-gesture the episodes took
(``long_press``, ``type``, ``open_app``, ``scroll``, ...). ``protocol``: every request the
    episodes made, sent in this run or answered from the cache, with its answer's tokens and their cost: what the
    evaluation takes of a model, the same in a run answered from the cache as in the run that asked."""
    kept = [r["transcript"] for r in records if r.get("transcript")]
    if not kept:
        return None
    total = {k: sum(t.get(k, 0) for t in kept) for k in ("requests", "retries", "cached", "input_tokens",
                                                         "output_tokens", "answers", "invalid_answers")}

    def cost(tokens_in: int, tokens_out: int) -> float | None:
        if price_input_per_1m <= 0 or price_output_per_1m <= 0:
            return None
        return round((tokens_in * price_input_per_1m + tokens_out * price_output_per_1m) / 1e6, 6)

    asked = [e for t in kept for s in t.get("steps", []) for e in (s, s.get("reflection")) if e]
    protocol = {"requests": len(asked), "input_tokens": sum(e.get("input_tokens", 0) for e in asked),
                "output_tokens": sum(e.get("output_tokens", 0) for e in asked)}
    protocol["cost"] = cost(protocol["input_tokens"], protocol["output_tokens"])
    declared = [r for r in records if r.get("transcript") and r.get("declared")]
    total.update(declared_complete=sum(r["declared"] == "complete" for r in declared),
                 declared_complete_but_failed=sum(r["declared"] == "complete" and not r["success"] for r in declared),
                 declared_impossible=sum(r["declared"] == "impossible" for r in declared),
                 answered=sum(r["declared"] == "answer" for r in declared),
                 answered_but_failed=sum(r["declared"] == "answer" and not r["success"] for r in declared),
                 commands=dict(sorted(Counter(next(iter(a)) for r in records if r.get("transcript")
                                              for a in r.get("actions") or [] if isinstance(a, dict)).items())))
    return {**total, "invalid_action_rate": total["invalid_answers"] / total["answers"] if total["answers"] else None,
            "price_per_1m": {"input": price_input_per_1m, "output": price_output_per_1m},
            "cost": cost(total["input_tokens"], total["output_tokens"]), "protocol": protocol,
            "model": kept[0].get("model")}


def side_by_side(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Several evaluations' results (name -> results.json), e.g. a trained policy's and an LLM agent's, as one
    comparison: each one's agent, success per task (template instances pooled) and overall, and whether they ran the
    same tasks on the same phones (only then do their rates measure the same thing)."""
    keep = ("success_rate", "mean_over_runs", "stderr", "wilson95", "episodes")
    columns = {name: {"agent": r.get("agent"), "checkpoint": r.get("checkpoint"),
                      "model": (r.get("llm") or {}).get("model"), "runs": r.get("runs"),
                      "episodes": r.get("episodes"), "tasks": sorted(r["per_task"]),
                      "snapshots": sorted(r["per_snapshot"])} for name, r in results.items()}
    families = list(dict.fromkeys(f for r in results.values() for f in r["per_family"]))
    same_tasks = len({tuple(c["tasks"]) for c in columns.values()}) == 1
    return {"columns": columns,
            "per_family": {f: {name: {k: r["per_family"][f].get(k) for k in keep} if f in r["per_family"] else None
                               for name, r in results.items()} for f in families},
            "overall": {name: {k: r["overall"].get(k) for k in keep} for name, r in results.items()},
            "usage": {name: usage_summary(r) for name, r in results.items()},
            "same_tasks": same_tasks,
            "same_phones": len({tuple(c["snapshots"]) for c in columns.values()}) == 1,
            "tests": side_by_side_tests(results) if same_tasks else []}


def usage_summary(result: dict[str, Any]) -> dict[str, Any]:
    """An evaluation's (its results.json) invalid actions, counted for every agent, and for an LLM agent what its
    episodes asked of the model: the requests, their tokens and the estimated cost of every one, sent or answered
    from the cache (:func:`agent_usage`'s ``protocol``; None for an agent that asks no model, or an evaluation made
    before it was counted), ``priced`` whether prices were set."""
    o, llm = result["overall"], result.get("llm") or {}
    asked = llm.get("protocol") or {}
    prices = llm.get("price_per_1m") or {}
    return {"model": llm.get("model"), "actions": o.get("actions"), "invalid_actions": o.get("invalid_actions"),
            "invalid_action_rate": o.get("invalid_action_rate"), "requests": asked.get("requests"),
            "input_tokens": asked.get("input_tokens"), "output_tokens": asked.get("output_tokens"),
            "cost": asked.get("cost"), "priced": bool(prices.get("input")) and bool(prices.get("output"))}


USAGE_ROWS = ("invalid actions", "requests to the model", "tokens in / out", "estimated cost")
USAGE_EXPLAINED = ("Invalid actions: actions the phone could not carry out, an answer with no valid action among them "
                   "(AndroidArena's invalid-action rate). Requests and tokens: every request the episodes made of "
                   "the model, sent or answered from the cache, as the endpoint counted its tokens; the cost is "
                   "estimated from agent.price_input_per_1m and agent.price_output_per_1m (unknown where they are "
                   "not set).")


def usage_cells(u: dict[str, Any]) -> list[str]:
    """:func:`usage_summary` as the cells of :data:`USAGE_ROWS`."""
    invalid = ("–" if u["invalid_action_rate"] is None else
               f"{100 * u['invalid_action_rate']:.1f}% ({u['invalid_actions']} of {u['actions']})")
    if u["requests"] is None:
        return [invalid, "–", "–", "–"]
    cost = f"{u['cost']:.4f}" if u["cost"] is not None else "unknown (no price set)"
    return [invalid, f"{u['requests']:,}", f"{u['input_tokens']:,} / {u['output_tokens']:,}", cost]


def side_by_side_tests(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The first evaluation against each other one (which ran the same tasks): the difference in success with its
    bootstrap over seeds and phones on the phones both ran, Holm-adjusted over the comparisons. An evaluation's
    seeds are its policies where it has several (training seeds), else its runs; the seeds are drawn per
    evaluation, the phones jointly (a hard phone is hard for both). Evaluations of older vlui versions without their
    records in results.json are left out."""

    def table(r: dict[str, Any]) -> tuple[PhoneTable, list[str]] | None:
        if "records" not in r:
            return None
        rows = [{**x, "checkpoint": x.get("checkpoint") or f"run {x['run']}"} for x in r["records"]]
        seeds = sorted({x["checkpoint"] for x in rows})
        return PhoneTable(rows, seeds), seeds

    names = list(results)
    tables = {name: table(results[name]) for name in names}
    first = tables[names[0]]
    tests = []
    for name in names[1:]:
        other = tables[name]
        if first is None or other is None:
            continue
        phones = set(first[0].phones) & set(other[0].phones)
        _, a = first[0].matrix(first[1], phones=phones)
        _, b = other[0].matrix(other[1], phones=phones)
        test = bootstrap_comparison(a, b, paired=False) if phones else None
        if test is not None:
            tests.append({"a": names[0], "b": name, "phones": len(phones), **test})
    if tests:
        holm_adjust(tests)
    return tests


def side_by_side_table(c: dict[str, Any]) -> str:
    """A markdown table of :func:`side_by_side`: a row per task, a column per evaluation, success as mean ± s.e.
    over runs (or the rate of one run) with the number of episodes; under the tasks each evaluation's invalid-action
    rate and, for an LLM agent, the requests, tokens and estimated cost of its episodes (:data:`USAGE_ROWS`)."""
    names = list(c["columns"])

    def cell(r: dict[str, Any] | None) -> str:
        if not r or not r["episodes"]:
            return "–"
        rate = r["mean_over_runs"] if r["mean_over_runs"] is not None else r["success_rate"]
        spread = f" ± {100 * r['stderr']:.1f}" if r.get("stderr") else ""
        return f"{100 * rate:.1f}%{spread} ({r['episodes']})"

    def head(name: str) -> str:
        col = c["columns"][name]
        what = col["model"] or (Path(col["checkpoint"]).name if col["checkpoint"] else None)
        return f"{name} (agent={col['agent']}{f', {what}' if what else ''})"

    lines = ["| task | " + " | ".join(head(n) for n in names) + " |", "| --- " * (len(names) + 1) + "|"]
    lines += [f"| {f} | " + " | ".join(cell(row[n]) for n in names) + " |" for f, row in c["per_family"].items()]
    lines.append("| **all** | " + " | ".join(cell(c["overall"][n]) for n in names) + " |")
    if "usage" in c:  # compared before usage was kept: success only
        cells = [usage_cells(c["usage"][n]) for n in names]
        lines += [f"| {what} | " + " | ".join(col[i] for col in cells) + " |" for i, what in enumerate(USAGE_ROWS)]
        lines += ["", USAGE_EXPLAINED]
    if not (c["same_tasks"] and c["same_phones"]):
        lines += ["", "These evaluations did not run the same " + " and ".join(
            w for w, same in (("tasks", c["same_tasks"]), ("phones", c["same_phones"])) if not same)
                  + ": only rows they share compare, and the overall rates do not."]
    for t in c.get("tests", []):
        lines += ["", f"{t['a']} − {t['b']}: {100 * t['difference']:+.1f} points on the {t['phones']} phone(s) both ran "
                  f"({t['method']}: 95% CI {ci_points(t['ci95'])}, {p_text(t)}): {verdict([t])}."]
    return "\n".join(lines)


def usage_line(u: dict[str, Any]) -> str:
    """A sentence on an LLM agent's use of its endpoint and its invalid actions, for the report."""
    rate = f"{100 * u['invalid_action_rate']:.1f}%" if u["invalid_action_rate"] is not None else "–"
    cost = f"estimated cost {u['cost']:.4f}" if u["cost"] is not None else "cost unknown (no prices set)"
    ended = ""
    if u.get("declared_complete") or u.get("declared_impossible") or u.get("answered"):
        answered = (f", {u['answered']} answered ({u['answered_but_failed']} of them failed)" if u.get("answered")
                    else "")
        ended = (f" Episodes the agent ended: {u['declared_complete']} declared complete "
                 f"({u['declared_complete_but_failed']} of them not), {u['declared_impossible']} declared "
                 f"impossible{answered}.")
    if u.get("commands"):
        ended += " Actions beyond the dual-gesture: " + ", ".join(f"{k} {n}" for k, n in u["commands"].items()) + "."
    retries = f" ({u['retries']} of them sent again after a 429, 408 or 5xx, or no answer)" if u.get("retries") else ""
    return (f"Model {u['model']}: {u['requests']} requests sent{retries}, {u['cached']} answered from the cache; "
            f"{u['input_tokens']} input and {u['output_tokens']} output tokens; {cost}. Invalid actions: "
            f"{u['invalid_answers']} of {u['answers']} answers ({rate}).{ended}")


def _label(name: str, r: dict[str, Any]) -> str:
    """A table label: a template's name with its number of instances."""
    return f"{name} ({r['instances']} instances)" if "instances" in r else name


def table(result: dict[str, Any]) -> str:
    """Markdown tables of success per task (template instances pooled per template), and per task and split when
    there are several splits: a row per task, a column per split."""
    splits = list(result["per_split"])
    families = result["per_family"]
    rep = result.get("repeats", {})
    identical = rep.get("identical", False)
    spread = (f"success ({rep['runs']} identical runs)" if identical else
              "success (mean ± s.e. over runs)" if result["runs"] > 1 else "success (1 run)")
    head = f"| task | {spread} | 95% Wilson | episodes | mean steps (successes) |"
    lines = [head, "| --- | --- | --- | --- | --- |"]

    def row(name: str, r: dict[str, Any]) -> str:
        if not r["episodes"]:  # every episode failed for infrastructure reasons: no rate to show
            return f"| {name} | – ({r['infra_failures']} failed for infrastructure reasons) | – | 0 | – |"
        steps = f"{r['mean_steps_successful']:.1f}" if r["mean_steps_successful"] is not None else "–"
        rate = (f"{100 * r['success_rate']:.1f}%" if identical or result["runs"] == 1
                else f"{100 * r['mean_over_runs']:.1f}% ± {100 * r['stderr']:.1f}")
        return (f"| {name} | {rate} | "
                f"[{100 * r['wilson95'][0]:.0f}, {100 * r['wilson95'][1]:.0f}] | {r['episodes']} | {steps} |")

    for name, r in families.items():
        lines.append(row(_label(name, r), r))
    lines.append(row("**all**", result["overall"]))
    if len(splits) > 1:
        by_split = result["per_split_family"]
        lines += ["", "| task | " + " | ".join(splits) + " |", "| --- " * (len(splits) + 1) + "|"]
        for name in families:
            lines.append(f"| {name} | " + " | ".join(_percent(by_split[s][name]) for s in splits) + " |")
        lines.append("| **all** | " + " | ".join(_percent(result["per_split"][s]) for s in splits) + " |")
    if identical:
        lines += ["", f"The {rep['runs']} runs are identical repeats (the simulated phone and the agent are "
                  "deterministic): the spread across runs is 0 by construction and is not an error bar. Evaluate "
                  "several training seeds (checkpoint=<glob>) for one, or env.stochastic=true for episode-level "
                  "randomness."]
    if "seeds" in result:
        lines += ["", seeds_table(result["seeds"])]
    if "constraints" in result:
        lines += ["", constraints_table(result["constraints"])]
    return "\n".join(lines)


def constraints_table(c: dict[str, Any]) -> str:
    """The constrained tasks' violations (:func:`violations`) as a Markdown table."""
    def rate(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.1f}%"

    lines = [f"Constrained tasks: {c['violated']} of {c['episodes']} episodes broke a constraint "
             f"({rate(c['violation_rate'])}), {c['goal_reached_but_violated']} of them reaching the goal all the same "
             "(failures).", "", "| constraint level | episodes | violated | violation rate |", "| --- | --- | --- | --- |"]
    lines += [f"| {level} | {v['episodes']} | {v['violated']} | {rate(v['violation_rate'])} |"
              for level, v in c["per_level"].items()]
    return "\n".join(lines)


def _mean_ci(s: dict[str, Any], t: bool = False) -> str:
    """A group's success as a table cell: the mean across seeds and the bootstrap interval over seeds and phones;
    with ``t``, also the t interval over the phones' means (absent from results.json written before it was added)."""
    if s["mean"] is None:
        return "–"
    ci = s["ci95"]
    return (f"{100 * s['mean']:.1f}% [{100 * ci['low']:.1f}, {100 * ci['high']:.1f}]"
            + (f" {t_text(s['t_interval'])}" if t and s.get("t_interval") else "")
            + (" (1 seed)" if s["seeds"] == 1 else ""))


def t_text(t: dict[str, Any]) -> str:
    """The t interval over the phones' means (:func:`phone_t_summary`) as it follows a mean in a table cell."""
    return f"(t over {t['phones']} phones [{100 * t['low']:.1f}, {100 * t['high']:.1f}])"


T_EXPLAINED = ("\"t over N phones [ ]\", after the cells of all tasks: the 95% Student t interval over the N phones' "
               "means (each phone's success averaged over the seeds, then t with N - 1 degrees of freedom around their "
               "mean, the cell's mean where every seed counted as many episodes on every phone), the interval to quote "
               "for a split of few phones such as the 10 test snapshots, where the percentile bootstrap's is too "
               "narrow (docs/evaluation.md).")


def seeds_table(seeds: dict[str, Any]) -> str:
    """Success per group of policies: the mean across its training seeds with a 95% bootstrap interval over seeds and
    phones, per task and overall (and per split when there are several) and, overall and per split, the t interval
    over the phones' means beside it; then the comparisons of the groups."""
    groups = seeds["groups"]
    names = [g or "policy" for g in groups]
    counts = [f"{g['overall']['seeds']} seed{'s' if g['overall']['seeds'] != 1 else ''}" for g in groups.values()]
    lines = ["| task | " + " | ".join(f"{n} ({c}, mean [95% CI])" for n, c in zip(names, counts, strict=True)) + " |",
             "| --- " * (len(names) + 1) + "|"]
    first = next(iter(groups.values()))
    for f in first["per_family"]:
        lines.append(f"| {f} | " + " | ".join(_mean_ci(g["per_family"][f]) for g in groups.values()) + " |")
    for s in first["per_split"] if len(first["per_split"]) > 1 else []:
        lines.append(f"| *{s} snapshots* | "
                     + " | ".join(_mean_ci(g["per_split"][s], t=True) for g in groups.values()) + " |")
    lines.append("| **all** | " + " | ".join(_mean_ci(g["overall"], t=True) for g in groups.values()) + " |")
    lines += ["", f"Each cell: the mean across training seeds of each seed's success, in [ ] its 95% interval from a "
              f"{BOOTSTRAP} ({BOOTSTRAP_RESAMPLES:,} resamples, each drawing the seeds and, independently, the "
              "phones with replacement: both are samples, of the training randomness and of the phones users have). "
              + T_EXPLAINED]
    for c in seeds["comparisons"]:
        lines += ["", comparison(c)]
    return "\n".join(lines)


def phones_table(result: dict[str, Any]) -> str:
    """Success on each phone as a Markdown table, a row per phone (by split): with several policies, per group
    :func:`seeds_phones_table`'s cells; else the phone's success over its episodes and how many counted."""
    split_of = {p: r["split"] for p, r in result["per_snapshot"].items() if "split" in r}
    if "seeds" in result:
        return seeds_phones_table(result["seeds"]["groups"], split_of)
    rows = sorted(result["per_snapshot"].items(), key=lambda item: (split_of.get(item[0], ""), _in_order(item[0])))
    lines = ["| phone | split | success | episodes |", "| --- | --- | --- | --- |"]
    lines += [f"| {p} | {split_of.get(p, '–')} | {_rate_text(r['success_rate'])} | {r['episodes']} |" for p, r in rows]
    return "\n".join(lines)


def seeds_phones_table(groups: dict[str, Any], split_of: dict[str, str] | None = None) -> str:
    """Each phone's success per group of policies (:func:`across_seeds`'s ``groups``) as a Markdown table, a row per
    phone: the mean over the seeds that counted an episode on it and, in ( ), each seed's success in the order the
    column's head names them ("–" where the seed counted none); with ``split_of`` (phone -> split), the phone's
    split beside it, the rows in order of it."""
    phones = sorted({p for g in groups.values() for p in g["per_phone"]},
                    key=lambda p: (split_of.get(p, "") if split_of else "", _in_order(p)))

    def head(name: str, checkpoints: list[str]) -> str:
        seeds = ", ".join(Path(c).name or c for c in checkpoints)
        return f"{name or 'policy'}: mean ({seeds})" if len(checkpoints) > 1 else f"{name or 'policy'} ({seeds})"

    def cell(g: dict[str, Any], phone: str) -> str:
        if phone not in g["per_phone"]:
            return "–"
        rates = [g["per_phone"][phone][c] for c in g["checkpoints"]]
        seen = [v for v in rates if v is not None]
        mean = _rate_text(sum(seen) / len(seen) if seen else None)
        return mean if len(rates) == 1 else f"{mean} ({', '.join(_rate_text(v) for v in rates)})"

    heads = ["phone", *(["split"] if split_of else []), *(head(n, g["checkpoints"]) for n, g in groups.items())]
    lines = ["| " + " | ".join(heads) + " |", "| --- " * len(heads) + "|"]
    for p in phones:
        cells = [p, *([split_of.get(p, "–")] if split_of else []), *(cell(g, p) for g in groups.values())]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _in_order(phone: str) -> list[str | int]:
    """A phone's sort key that puts ``val-0-2`` before ``val-0-10``: its runs of digits compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", phone)]


def _rate_text(v: float | None) -> str:
    """A success rate in % as a table cell, without the % sign; a dash where none counted."""
    return "–" if v is None else f"{100 * v:.1f}"


def ci_points(ci: list[float]) -> str:
    """A 95% interval of a difference in points."""
    return f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def p_text(test: dict[str, Any]) -> str:
    """A test's p and its Holm-adjusted p, saying over how many tests."""
    if "p_holm" not in test:
        return f"p = {test['p_value']:.3g}, exploratory (not adjusted)"
    n = test["holm_tests"]
    return f"p = {test['p_value']:.3g}, Holm-adjusted for {n} test{'s' if n > 1 else ''} p = {test['p_holm']:.3g}"


def verdict(tests: list[dict[str, Any]]) -> str:
    """What the tests of one difference (with Holm-adjusted p-values, :func:`holm_adjust`) say together: unlikely to be
    noise where every one is below 0.05 after Holm's adjustment; where every one is only below 0.05 on its own, that
    it does not survive the adjustment for the other tests of the report."""
    if tests and any("p_holm" not in t for t in tests):
        return ("below 0.05, an exploratory test" if max(t["p_value"] for t in tests) < 0.05 else
                "not distinguishable from noise at this number of seeds and phones")
    if tests and max(t["p_holm"] for t in tests) < 0.05:
        return "a difference unlikely to be noise"
    if tests and max(t["p_value"] for t in tests) < 0.05:
        return "below 0.05 on its own, not after adjusting for the other tests"
    return "not distinguishable from noise at this number of seeds and phones"


def comparison(c: dict[str, Any]) -> str:
    """One comparison of two groups of policies (:func:`across_seeds`, with Holm-adjusted p-values) as a sentence."""
    boot = c.get("bootstrap")
    if c["difference"] is None and boot is None:
        return f"{c['a']} vs {c['b']}: {c['note']}."
    tests, words = [], []
    if c["difference"] is not None:
        tests.append(c)
        words.append(f"Welch's t-test across seeds: 95% CI {ci_points(c['ci95'])}, {p_text(c)}")
    else:
        words.append(f"no t-test: {c['note']}")
    if boot is not None:
        tests.append(boot)
        words.append(f"{BOOTSTRAP}: 95% CI {ci_points(boot['ci95'])}, {p_text(boot)}")
    return (f"{c['a']} − {c['b']}: {100 * tests[0]['difference']:+.1f} points ({'; '.join(words)}): "
            f"{verdict(tests)}.")


def _percent(r: dict[str, Any]) -> str:
    """A success rate as a table cell; a dash where no episode counted."""
    return f"{100 * r['success_rate']:.0f}%" if r["episodes"] else "–"


@dataclass(frozen=True)
class Inputs:
    """What an evaluation's report says beside its episodes, resolved before the first one runs."""

    name: str  # the evaluation's name: its column beside the earlier evaluations of ``compare``
    agent: str  # the agent type's name
    checkpoint: str | None  # the policy evaluated, when there is one policy
    config: dict[str, Any]  # all the evaluation's settings
    splits: dict[str, str]  # snapshot -> its split (train, val, test, user)
    groups: dict[str, list[str]] | None  # with several policies: the checkpoints of each recipe
    constraints: dict[str, list[str]]  # task -> the levels of its constraints, for the constrained tasks
    compare: dict[str, dict[str, Any]]  # earlier evaluations' results, by name
    prices: tuple[float, float]  # the agent's model's price per 1M tokens in and out (0 for a local agent)


def publish(records: list[dict[str, Any]], inputs: Inputs, out: Path) -> tuple[dict[str, Any], dict[str, Path]]:
    """The report of the episodes ``records`` (with the agent's usage of a model, and beside ``inputs.compare``),
    written to ``out`` (:func:`write`): the result and its files' paths."""
    usage = agent_usage(records, *inputs.prices)
    meta = {"agent": inputs.agent, "checkpoint": inputs.checkpoint, **({"llm": usage} if usage else {}),
            "config": inputs.config}
    result = aggregate(records, inputs.splits, meta, inputs.groups, inputs.constraints)
    if inputs.compare:
        result["compared"] = side_by_side({inputs.name: result, **inputs.compare})
    return result, write(result, out)


def write(result: dict[str, Any], out: Path) -> dict[str, Path]:
    """results.json, results.md and the plots; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "md": out / "results.md"}
    paths["json"].write_text(json.dumps(result, indent=2, allow_nan=False))
    o = result["overall"]
    tasks = ", ".join(_label(name, r) for name, r in result["per_family"].items())
    md = [f"# Evaluation: agent={result['agent']}" + (f", checkpoint {result['checkpoint']}" if result.get(
        "checkpoint") else ""),
          "", f"{result['episodes']} episodes: tasks {tasks}; {len(result['per_snapshot'])} snapshots; "
          f"{result['runs']} run(s). Overall success {100 * o['success_rate']:.1f}% (95% Wilson "
          f"[{100 * o['wilson95'][0]:.1f}, {100 * o['wilson95'][1]:.1f}]).", "", table(result)]
    if o.get("adaptive"):
        a = o["adaptive"]
        md += ["", "Adaptive metrics against the expert's trajectory (AndroidArena): "
               f"TR {a['tr_normalised']:.3f} (normalised), TCR {a['tcr']:.3f}, RRR {a['rrr']:.3f}; "
               f"repeated actions {100 * a['repeat_ratio']:.1f}%."]
    if o.get("actions"):
        missed = (f"; taps and long presses on no clickable element {100 * o['missed_tap_rate']:.1f}%"
                  if o.get("missed_tap_rate") is not None else "")
        md += ["", f"Invalid actions (AndroidArena): {o['invalid_actions']} of {o['actions']} actions "
               f"({100 * o['invalid_action_rate']:.1f}%) could not be carried out{missed}."]
    if o["infra_failures"]:
        md += ["", f"{o['infra_failures']} episode(s) failed for infrastructure reasons and are not counted."]
    if result.get("llm"):
        md += ["", usage_line(result["llm"])]
    md += ["", "## Per phone", "", "Success on each phone, in %" + (
        ": per group of policies, the mean over its training seeds and, in ( ), each seed's." if "seeds" in result
        else ", over its episodes (all runs)."), "", phones_table(result)]
    if result.get("by_setting"):
        md += ["", "## By phone setting", "", axes.EXPLAINED, "", *axes.table(result["by_setting"])]
    if result.get("compared"):
        md += ["", "## Side by side", "", side_by_side_table(result["compared"])]
    paths.update(plots(result, out))
    md += ["", *(f"![{name}]({p.name})" for name, p in paths.items() if p.suffix == ".png")]
    paths["md"].write_text("\n".join(md) + "\n")
    return paths


MAX_PLOT_INCHES = 80  # the widest plot: 80 B-MoCA tasks' bars (wider images take gigabytes to draw)


def plots(result: dict[str, Any], out: Path) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = {}
    families = result["per_family"]
    tasks = list(families)
    width = min(MAX_PLOT_INCHES, max(4, 1.1 * len(tasks)))
    fig, ax = plt.subplots(figsize=(width, 3.2))
    means = [100 * (families[t]["mean_over_runs"] or 0) for t in tasks]  # no bar where nothing counted
    errs = [100 * (families[t]["stderr"] or 0) for t in tasks]
    ax.bar(range(len(tasks)), means, yerr=errs, capsize=4, color="#1a73e8")
    ax.set_xticks(range(len(tasks)), tasks, rotation=30, ha="right")
    ax.set_ylabel("success rate (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{result['agent']}: success per task (mean ± s.e. over {result['runs']} runs)")
    fig.tight_layout()
    made["success_per_task"] = out / "success_per_task.png"
    fig.savefig(made["success_per_task"], dpi=120)
    plt.close(fig)
    splits = [s for s in ("train", "test") if s in result["per_split"]]
    if len(splits) == 2:
        by_split = result["per_split_family"]
        fig, ax = plt.subplots(figsize=(min(MAX_PLOT_INCHES, max(4, 1.3 * len(tasks))), 3.2))
        width = 0.4
        for k, s in enumerate(splits):
            vals = [100 * (by_split[s][t]["success_rate"] or 0) for t in tasks]
            ax.bar([i + (k - 0.5) * width for i in range(len(tasks))], vals, width, label=s,
                   color="#9aa0a6" if s == "train" else "#1a73e8")
        ax.set_xticks(range(len(tasks)), tasks, rotation=30, ha="right")
        ax.set_ylabel("success rate (%)")
        ax.set_ylim(0, 100)
        ax.legend()
        ax.set_title("train vs test snapshots")
        fig.tight_layout()
        made["train_vs_test"] = out / "train_vs_test.png"
        fig.savefig(made["train_vs_test"], dpi=120)
        plt.close(fig)
    return made


def gif(frames: list, actions: list, path: Path, scale: int = 2) -> None:
    """The episode's observations with each gesture drawn: a dot for a tap (two for a long press), an arrow for a
    swipe or a scroll; text typed and the commands that touch nothing draw nothing."""
    images = []
    for i, frame in enumerate(frames):
        im = Image.fromarray(frame).resize((frame.shape[1] * scale, frame.shape[0] * scale), Image.NEAREST)
        action = actions[i] if i < len(actions) else None
        if isinstance(action, dict) and "long_press" in action:  # a stored command: {"long_press": [y, x]}
            y, x = action["long_press"]
            draw = ImageDraw.Draw(im)
            p, r = (x * im.width, y * im.height), 9
            draw.ellipse((p[0] - r, p[1] - r, p[0] + r, p[1] + r), outline=(234, 67, 53), width=3)
            action = [2 * y - 1, 2 * x - 1] * 2
        if isinstance(action, dict) and "scroll" in action:  # {"scroll": [y1, x1, y2, x2]}: drawn as a swipe
            action = [2 * v - 1 for v in action["scroll"]]
        if action is not None and not isinstance(action, dict):
            draw = ImageDraw.Draw(im)
            h, w = im.height, im.width
            ty, tx, ly, lx = [(v + 1) / 2 for v in action]
            p, q = (tx * w, ty * h), (lx * w, ly * h)
            r = 5
            if abs(p[0] - q[0]) + abs(p[1] - q[1]) < 6:
                draw.ellipse((p[0] - r, p[1] - r, p[0] + r, p[1] + r), outline=(234, 67, 53), width=3)
            else:
                draw.line((p, q), fill=(234, 67, 53), width=3)
                draw.ellipse((q[0] - r, q[1] - r, q[0] + r, q[1] + r), fill=(234, 67, 53))
        images.append(np.asarray(im))
    imageio.mimsave(path, images, duration=0.8, loop=0)
