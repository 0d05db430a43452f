"""Offline evaluation results (``python evaluate.py mode=offline``): GUIOdyssey's AMS and SR per task, per phone and
per kind of action, the spread across training seeds and phones, results.json and results.md.

Each scored episode is a record ``{"checkpoint", "group", "episode", "task", "snapshot", "matches": [bool per step],
"kinds": [the reference action's kind per step]}``; :func:`aggregate` turns them into the report.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from vlui.eval import report
from vlui.eval.metrics import AMS_TAP_DISTANCE, offline_scores, wilson_interval

DEFINITION = (f"a step matches when the agent's action does what the demonstration did: two taps within "
              f"{AMS_TAP_DISTANCE:.0%} of the screen (each coordinate a fraction of its side) or the predicted one "
              "inside the element the demonstrated one reached, two swipes in the same direction, or the same "
              "navigation key (GUIOdyssey's action matching). AMS = matched steps / steps; SR = episodes with every "
              "step matched / episodes")


def _scores(records: list[dict[str, Any]]) -> dict[str, Any]:
    """AMS and SR over ``records`` (their steps pooled), with SR's 95% Wilson interval over episodes."""
    s = offline_scores([r["matches"] for r in records])
    return {"ams": s.ams, "matched": s.matched, "steps": s.steps, "success_rate": s.success_rate,
            "successes": s.successes, "episodes": s.episodes,
            "wilson95": list(wilson_interval(s.successes, s.episodes)) if s.episodes else None}


def _by_kind(records: list[dict[str, Any]]) -> dict[str, Any]:
    """AMS over the steps whose demonstrated action was a tap, a swipe or a key press."""
    matched, steps = defaultdict(int), defaultdict(int)
    for r in records:
        for kind, match in zip(r["kinds"], r["matches"], strict=True):
            matched[kind] += match
            steps[kind] += 1
    return {k: {"ams": matched[k] / steps[k], "matched": matched[k], "steps": steps[k]} for k in sorted(steps)}


def _as_outcomes(records: list[dict[str, Any]], steps: bool) -> list[dict[str, Any]]:
    """The records as the online report's outcomes (:func:`vlui.eval.report.across_seeds`): one per step, its
    success whether it matched (for AMS), or one per episode, its success whether every step matched (for SR)."""
    keep = ("checkpoint", "task", "snapshot")
    if steps:
        return [{**{k: r[k] for k in keep}, "success": m} for r in records for m in r["matches"]]
    return [{**{k: r[k] for k in keep}, "success": all(r["matches"])} for r in records if r["matches"]]


def aggregate(records: list[dict[str, Any]], groups: dict[str, list[str]], part: str,
              meta: dict[str, Any]) -> dict[str, Any]:
    """AMS and SR overall, per task (template instances pooled per template), per snapshot and per kind of
    demonstrated action, pooled over the agents scored; and per group of agents (``groups``: name -> checkpoints,
    one recipe's training seeds) the mean across them with a 95% interval from the online report's bootstrap over
    seeds and phones (the phones of the part scored, ``part``), and the groups compared."""
    by_task, by_snap = defaultdict(list), defaultdict(list)
    for r in records:
        by_task[report.family(r["task"])].append(r)
        by_snap[r["snapshot"]].append(r)
    overall = _scores(records)
    splits = {r["snapshot"]: part for r in records}
    return {
        "mode": "offline",
        "ams": overall["ams"],
        "success_rate": overall["success_rate"],
        "overall": overall,
        "per_task": {t: _scores(rs) for t, rs in by_task.items()},
        "per_snapshot": {s: _scores(rs) for s, rs in sorted(by_snap.items())},
        "per_kind": _by_kind(records),
        "episodes": overall["episodes"],
        "steps": overall["steps"],
        "seeds": {"ams": report.across_seeds(_as_outcomes(records, True), groups, splits),
                  "success_rate": report.across_seeds(_as_outcomes(records, False), groups, splits)},
        "definition": DEFINITION,
        **meta,
        "records": records,
    }


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def table(result: dict[str, Any]) -> str:
    """Markdown tables: AMS and SR per task and overall, then per snapshot; a line on each kind of action; the spread
    across seeds and phones of each (the online report's tables)."""
    head = "| {} | AMS | steps | SR | SR 95% Wilson | episodes |"

    def row(name: str, s: dict[str, Any]) -> str:
        wilson = "–" if s["wilson95"] is None else f"[{100 * s['wilson95'][0]:.0f}, {100 * s['wilson95'][1]:.0f}]"
        return (f"| {name} | {_percent(s['ams'])} | {s['steps']} | {_percent(s['success_rate'])} | {wilson} | "
                f"{s['episodes']} |")

    lines = [head.format("task"), "| --- " * 6 + "|"]
    lines += [row(t, s) for t, s in result["per_task"].items()]
    lines += [row("**all**", result["overall"]), "", head.format("snapshot"), "| --- " * 6 + "|"]
    lines += [row(n, s) for n, s in result["per_snapshot"].items()]
    kinds = ", ".join(f"{k}s {_percent(s['ams'])} of {s['steps']}" for k, s in result["per_kind"].items())
    lines += ["", f"AMS by the demonstrated action's kind: {kinds}."]
    for metric, title in (("ams", "AMS"), ("success_rate", "SR")):
        lines += ["", f"{title} across training seeds and phones:", "", report.seeds_table(result["seeds"][metric])]
    return "\n".join(lines)


def write(result: dict[str, Any], out: Path) -> dict[str, Path]:
    """results.json and results.md in ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "md": out / "results.md"}
    paths["json"].write_text(json.dumps(result, indent=2, allow_nan=False))
    scored = result["agent"] + (f", checkpoint {result['checkpoint']}" if result.get("checkpoint") else "")
    split = result["split"]
    what = f"split {split['name']} ({split['by']}), its {split['part']} part" if split else "every episode"
    o = result["overall"]
    md = [f"# Offline evaluation: agent={scored}", "",
          f"{o['episodes']} episodes ({o['steps']} steps) of {result['dataset']}, {what}. AMS {_percent(o['ams'])}, "
          f"SR {_percent(o['success_rate'])}.", "", f"Definition: {result['definition']}.", "",
          ("Element bounds from each step's UI tree were used." if result["elements"] else
           "The dataset holds no UI trees (collected without save_xml=true): taps matched by distance alone."),
          "", table(result)]
    paths["md"].write_text("\n".join(md) + "\n")
    return paths
