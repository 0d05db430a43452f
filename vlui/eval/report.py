"""Evaluation results: aggregate episode records, write results.json and results.md, print a table, draw plots."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import imageio.v2 as imageio
import numpy as np
from PIL import Image, ImageDraw

from vlui.eval.metrics import mean_stderr, welch, wilson_interval


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
    adaptive = [r["adaptive"] for r in counted if r.get("adaptive")]
    if adaptive:
        out["adaptive"] = {m: sum(a[m] for a in adaptive) / len(adaptive)
                           for m in ("tr", "tr_normalised", "tcr", "rrr", "repeat_ratio")}
    return out


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


def across_seeds(records: list[dict[str, Any]], groups: dict[str, list[str]],
                 splits: dict[str, str]) -> dict[str, Any]:
    """Success of each policy (a training seed: its episodes pooled over runs), and per group of policies (one recipe)
    the mean ± standard error across them, overall, per task (or template) and per split; then each pair of groups
    compared with Welch's t-test across seeds. This is the spread that says whether a recipe is better, where the
    spread across evaluation runs only measures the phone's and the agent's own randomness."""
    counted = [r for r in records if not r.get("infra_failure")]

    def rate(rs: list[dict[str, Any]]) -> float | None:
        return sum(r["success"] for r in rs) / len(rs) if rs else None

    def summary(per_policy: dict[str, float | None]) -> dict[str, Any]:
        values = [v for v in per_policy.values() if v is not None]
        mean, se = mean_stderr(values) if values else (None, None)
        return {"mean": mean, "stderr": se if len(values) > 1 else None, "seeds": len(values),
                "per_policy": per_policy}

    out: dict[str, Any] = {"groups": {}, "comparisons": []}
    families = list(dict.fromkeys(family(r["task"]) for r in counted))
    split_names = sorted({splits.get(r["snapshot"], "user") for r in counted})
    for group, paths in groups.items():
        mine = {c: [r for r in counted if r.get("checkpoint") == c] for c in paths}
        out["groups"][group] = {
            "checkpoints": paths,
            "overall": summary({c: rate(rs) for c, rs in mine.items()}),
            "per_family": {f: summary({c: rate([r for r in rs if family(r["task"]) == f]) for c, rs in mine.items()})
                           for f in families},
            "per_split": {s: summary({c: rate([r for r in rs if splits.get(r["snapshot"], "user") == s])
                                      for c, rs in mine.items()}) for s in split_names},
        }
    names = list(groups)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            va = [v for v in out["groups"][a]["overall"]["per_policy"].values() if v is not None]
            vb = [v for v in out["groups"][b]["overall"]["per_policy"].values() if v is not None]
            d = welch(va, vb)
            out["comparisons"].append({"a": a, "b": b, **({
                "difference": d.difference, "stderr": d.stderr, "ci95": list(d.ci95), "t": None if math.isinf(d.t) else d.t, "dof": d.dof, "p_value": d.p_value, "test": "Welch's t-test across seeds"}
                if d else {"difference": None, "note": "needs at least two seeds (policies) in each group"})})
    return out


def aggregate(records: list[dict[str, Any]], splits: dict[str, str], meta: dict[str, Any],
              groups: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Success per task, per template, per snapshot, per split and per split and task (or template); whether the
    runs were identical repeats; with several policies (``groups``: name -> checkpoints), the spread across them.

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
        "per_snapshot": {s: _rate(rs, runs) for s, rs in sorted(by_snap.items())},
        "per_split": {s: _rate(rs, runs) for s, rs in sorted(by_split.items())},
        "per_split_task": {s: {t: _rate(by_split_task[s, t], runs) for t in by_task} for s in sorted(by_split)},
        "per_split_family": {s: {f: _rate(by_split_family[s, f], runs) for f in by_family} for s in sorted(by_split)},
        "episodes": len(records),
        "runs": len(runs),
        "repeats": repeats(records),
        **({"seeds": across_seeds(records, groups, splits)} if groups else {}),
        **meta,
        "records": [{k: v for k, v in r.items() if k != "frames"} for r in records],
    }
    return result


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
    return "\n".join(lines)


def _mean_se(s: dict[str, Any]) -> str:
    if s["mean"] is None:
        return "–"
    if s["stderr"] is None:
        return f"{100 * s['mean']:.1f}% (1 seed)"
    return f"{100 * s['mean']:.1f}% ± {100 * s['stderr']:.1f}"


def seeds_table(seeds: dict[str, Any]) -> str:
    """Success per group of policies: mean ± s.e. across its training seeds, per task and overall (and per split when
    there are several), then the comparisons of the groups."""
    groups = seeds["groups"]
    names = [g or "policy" for g in groups]
    counts = [f"{g['overall']['seeds']} seeds" for g in groups.values()]
    lines = ["| task | " + " | ".join(f"{n} ({c}, mean ± s.e. across seeds)" for n, c in zip(names, counts)) + " |",
             "| --- " * (len(names) + 1) + "|"]
    first = next(iter(groups.values()))
    for f in first["per_family"]:
        lines.append(f"| {f} | " + " | ".join(_mean_se(g["per_family"][f]) for g in groups.values()) + " |")
    for s in first["per_split"] if len(first["per_split"]) > 1 else []:
        lines.append(f"| *{s} snapshots* | " + " | ".join(_mean_se(g["per_split"][s]) for g in groups.values())
                     + " |")
    lines.append("| **all** | " + " | ".join(_mean_se(g["overall"]) for g in groups.values()) + " |")
    for c in seeds["comparisons"]:
        lines += ["", comparison(c)]
    return "\n".join(lines)


def comparison(c: dict[str, Any]) -> str:
    """One comparison of two groups of policies (:func:`across_seeds`) as a sentence."""
    if c["difference"] is None:
        return f"{c['a']} vs {c['b']}: {c['note']}."
    verdict = ("a difference unlikely to be noise" if c["p_value"] < 0.05 else
               "not distinguishable from noise at this number of seeds")
    return (f"{c['a']} − {c['b']}: {100 * c['difference']:+.1f} points (95% CI [{100 * c['ci95'][0]:+.1f}, "
            f"{100 * c['ci95'][1]:+.1f}], Welch's t-test across seeds p = {c['p_value']:.3g}): {verdict}.")


def _percent(r: dict[str, Any]) -> str:
    """A success rate as a table cell; a dash where no episode counted."""
    return f"{100 * r['success_rate']:.0f}%" if r["episodes"] else "–"


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
    if o["infra_failures"]:
        md += ["", f"{o['infra_failures']} episode(s) failed for infrastructure reasons and are not counted."]
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


def gif(frames: list, actions: list[list[float]], path: Path, scale: int = 2) -> None:
    """The episode's observations with each gesture drawn: a dot for a tap, an arrow for a swipe."""
    images = []
    for i, frame in enumerate(frames):
        im = Image.fromarray(frame).resize((frame.shape[1] * scale, frame.shape[0] * scale), Image.NEAREST)
        if i < len(actions) and actions[i] is not None:
            draw = ImageDraw.Draw(im)
            h, w = im.height, im.width
            ty, tx, ly, lx = [(v + 1) / 2 for v in actions[i]]
            p, q = (tx * w, ty * h), (lx * w, ly * h)
            r = 5
            if abs(p[0] - q[0]) + abs(p[1] - q[1]) < 6:
                draw.ellipse((p[0] - r, p[1] - r, p[0] + r, p[1] + r), outline=(234, 67, 53), width=3)
            else:
                draw.line((p, q), fill=(234, 67, 53), width=3)
                draw.ellipse((q[0] - r, q[1] - r, q[0] + r, q[1] + r), fill=(234, 67, 53))
        images.append(np.asarray(im))
    imageio.mimsave(path, images, duration=0.8, loop=0)
