"""Studies: ``python -m vlui.study NAME`` trains every arm of a named study with several seeds, evaluates them on the
same episodes, and writes a report (markdown, CSV, a plot) with the B-MoCA paper's numbers side by side.

A study (``studies.yaml``) is a set of datasets, each collected once with ``collect.py`` and its overrides, and a set
of arms, each a list of ``train.py`` overrides on top of the study's base. Every step runs the project's own
command-line programs as child processes, so a study is exactly the commands a user would type; each step resumes
(a trained seed is not trained again, a collected dataset is not collected again, an evaluation picks up where it
stopped), so running the same study again after an interruption finishes it.

Where things go: checkpoints in ``checkpoints/study/<name>/<arm>-seed<s>``, evaluations in
``outputs/evaluate/study-<name>-<split>``, the report in ``--out`` (default ``outputs/study/<name>``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vlui.algos.ppo import CURVE_COLUMNS
from vlui.errors import VluiError
from vlui.eval.metrics import paired
from vlui.eval.report import comparison
from vlui.jobs.train import hydra_value
from vlui.resources import checkout, work_dir

HERE = Path(__file__).parent
# the paper's names of the six representative tasks (B-MoCA Sec. 4.1)
PAPER_TASKS = {"airplane_on": "Airplane", "alarm_9am_on": "Alarm1", "alarm_1030": "Alarm2",
               "brightness_down": "Brightness", "call_911": "Call 911", "add_language": "Language"}
TIMINGS = "timings.json"  # each finished step's wall-clock seconds, in the report folder
RUN_REF = re.compile(r"\{run:([^}]+)\}")  # an arm's override naming another arm's run of the same seed
SPLITS = {"test": "the 10 held-out test snapshots", "train": "the 35 training snapshots"}  # env.snapshots -> words


@dataclass
class Study:
    name: str
    title: str
    question: str
    paper: str | None
    size: str
    datasets: dict[str, list[str]]
    base: list[str]
    arms: dict[str, list[str]]
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    # evaluated on: split name -> evaluate.py overrides (a plain value in studies.yaml is env.snapshots)
    splits: dict[str, list[str]] = field(default_factory=lambda: {"test": ["env.snapshots=test"],
                                                                   "train": ["env.snapshots=train"]})
    evaluate: list[str] = field(default_factory=list)  # more evaluate.py overrides (e.g. tasks=...)
    chosen: list[str] = field(default_factory=list)  # --arms: the arms asked for (empty: all of them)


def studies(path: Path | None = None) -> dict[str, dict[str, Any]]:
    return yaml.safe_load((path or HERE / "studies.yaml").read_text(encoding="utf-8"))


def paper_numbers() -> dict[str, Any]:
    return yaml.safe_load((HERE / "paper.yaml").read_text(encoding="utf-8"))


def load(name: str, size: str = "cpu", seeds: int = 3, path: Path | None = None,
         arms: list[str] | None = None) -> Study:
    """Study ``name`` of ``studies.yaml`` (or of the file at ``path``) at ``size``, with seeds 0 to ``seeds - 1``;
    with ``arms``, only those arms and the arms they start from (``{run:ARM}``)."""
    known = studies(path)
    if name not in known:
        raise VluiError(f"unknown study {name!r}; choose from: {', '.join(known)}")
    spec = known[name]
    if size not in ("cpu", "gpu"):
        raise VluiError(f"--size must be cpu or gpu, not {size!r}")
    if seeds < 1:
        raise VluiError("--seeds must be at least 1 (3 or more for an error bar)")
    sized = spec[size]
    every = {str(k): [str(v) for v in vs] for k, vs in sized["arms"].items()}
    return Study(name, spec["title"], " ".join(str(spec["question"]).split()), spec.get("paper"), size,
                 {str(k): [str(v) for v in vs] for k, vs in sized["datasets"].items()}, [str(v) for v in sized["base"]],
                 _with_starts(every, arms) if arms else every, list(range(seeds)),
                 {str(k): _split_overrides(v) for k, v in sized.get("splits", {"test": "test", "train": "train"}).items()},
                 [str(v) for v in sized.get("evaluate", [])], list(arms or []))


def _with_starts(every: dict[str, list[str]], chosen: list[str]) -> dict[str, list[str]]:
    """The arms ``chosen`` and those they start from (``{run:ARM}``, followed back), in the study's order."""
    unknown = [a for a in chosen if a not in every]
    if unknown:
        raise VluiError(f"--arms: the study has no arm {unknown[0]!r}; its arms: {', '.join(every)}")
    keep: set[str] = set()
    todo = list(chosen)
    while todo:
        arm = todo.pop()
        if arm not in keep:
            keep.add(arm)
            todo += _starts(every[arm])
    return {arm: overrides for arm, overrides in every.items() if arm in keep}


def _split_overrides(value: Any) -> list[str]:
    """A split of studies.yaml as evaluate.py overrides: ``test`` is ``env.snapshots=test``; a list is overrides as
    typed (``[env.snapshots=random:50, env.generator.seed=2]``: 50 generated phones of a seed nobody trained on)."""
    return [str(v) for v in value] if isinstance(value, list) else [f"env.snapshots={value}"]


def split_words(study: Study, split: str) -> str:
    """What a split evaluates on, in words for the report."""
    overrides = study.splits[split]
    named = overrides[0].removeprefix("env.snapshots=") if len(overrides) == 1 else None
    return SPLITS[named] if named in SPLITS else "`" + " ".join(overrides) + "`"


# ------------------------------------------------------------------------------------------------------ commands
def _job(name: str) -> list[str]:
    """A job as collect.py / train.py / evaluate.py run it (those files are not in an installed package)."""
    return [sys.executable, "-c", f"from vlui.cli import {name}; {name}()"]


def run_dir(study: Study, arm: str, seed: int) -> Path:
    """An arm's seed's run folder, relative to the working directory the jobs run in."""
    return Path("checkpoints") / "study" / f"{study.name}-{study.size}" / f"{arm}-seed{seed}"


def commands(study: Study) -> list[tuple[str, list[str], Path | None]]:
    """Every step of the study in order: (what, command, the file whose presence says the step is done)."""
    steps: list[tuple[str, list[str], Path | None]] = []
    for dataset, overrides in study.datasets.items():
        steps.append((f"collect {dataset}", [*_job("collect"), f"dataset={dataset}", *overrides], None))
    for arm, overrides in study.arms.items():
        for seed in study.seeds:
            out = run_dir(study, arm, seed)
            # {run:ARM} names the same seed's run of an earlier arm (e.g. the policy online RL starts from)
            overrides = [RUN_REF.sub(lambda m: str(run_dir(study, m.group(1), seed)), o)
                         for o in study.arms[arm]]
            steps.append((f"train {arm} seed {seed}", [
                *_job("train"), *study.base, *overrides, f"seed={seed}",
                f"run_name=study-{study.name}-{study.size}-{arm}-seed{seed}",
                f"callbacks.model_checkpoint.dirpath={out}"], work_dir() / out / "policy" / "model.safetensors"))
    for split, split_overrides in study.splits.items():
        steps.append((f"evaluate on {split}", [
            *_job("evaluate"), f"checkpoint={hydra_value(_groups(study))}", *split_overrides, "runs=1",
            *study.evaluate, f"name={evaluation_name(study, split)}"], None))
    return steps


def _groups(study: Study) -> dict[str, list[str]]:
    return {arm: [str(run_dir(study, arm, s)) for s in study.seeds] for arm in study.arms}


def evaluation_name(study: Study, split: str) -> str:
    """The evaluation's folder in outputs/evaluate: named after the study and the split, and a digest of what it
    evaluates (the arms' runs and the overrides), so a study whose arms change evaluates afresh and the evaluation
    of the arms before is kept."""
    what = json.dumps([_groups(study), study.splits[split], study.evaluate], sort_keys=True)
    return f"study-{study.name}-{study.size}-{split}-{hashlib.sha256(what.encode()).hexdigest()[:8]}"


def run(study: Study, out: Path, plan_only: bool = False) -> dict[str, Any]:
    """Run (or, with ``plan_only``, print) every step, then write the report. Each step's wall-clock is kept in
    ``out/timings.json`` as it finishes, so the report of a resumed study still has the steps done before."""
    timings = _read_timings(out)
    for what, cmd, done in commands(study):
        shown = " ".join(cmd[3:])
        if plan_only:
            print(f"{what}: python {cmd[2].split(';')[0].split()[-1]}.py {shown}")
            continue
        if done is not None and done.exists():
            print(f"study: {what}: done before ({done.parent.parent.relative_to(work_dir())})")
            continue
        print(f"study: {what}", flush=True)
        start = time.perf_counter()
        code = subprocess.call(cmd, cwd=work_dir())
        if code != 0:
            raise VluiError(f"study {study.name}: {what} failed (exit status {code}); its message is above. Run the "
                            "same command again to resume from there")
        timings[what] = round(time.perf_counter() - start, 1)
        out.mkdir(parents=True, exist_ok=True)
        (out / TIMINGS).write_text(json.dumps(timings, indent=1), encoding="utf-8")
    if plan_only:
        return {}
    return report(study, out, recorded_timings(study, out))


def recorded_timings(study: Study, out: Path) -> dict[str, float]:
    """The wall-clock seconds of the study's steps that have run, in the order of the steps (``out/timings.json``)."""
    timings = _read_timings(out)
    return {what: timings[what] for what, _, _ in commands(study) if what in timings}


def _read_timings(out: Path) -> dict[str, float]:
    kept = out / TIMINGS
    return json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {}


# -------------------------------------------------------------------------------------------------------- report
def _results(study: Study, split: str) -> dict[str, Any]:
    path = work_dir() / "outputs" / "evaluate" / evaluation_name(study, split) / "results.json"
    if not path.exists():
        raise VluiError(f"no evaluation at {path}: run the study (without --report-only) first")
    return json.loads(path.read_text(encoding="utf-8"))


def rows(study: Study) -> list[dict[str, Any]]:
    """One row per (arm, split, task or 'all'): mean, standard error and each seed's success."""
    out = []
    for split in study.splits:
        groups = _results(study, split)["seeds"]["groups"]
        for arm in study.arms:
            g = groups[arm]
            for task, s in [*g["per_family"].items(), ("all", g["overall"])]:
                per_seed = [v for v in s["per_policy"].values()]
                out.append({"arm": arm, "split": split, "task": task, "mean": s["mean"], "stderr": s["stderr"],
                            "seeds": s["seeds"], "per_seed": per_seed})
    return out


def _starts(overrides: list[str]) -> list[str]:
    """The arms whose same-seed runs an arm's ``overrides`` name (``{run:ARM}``)."""
    return [m.group(1) for o in overrides for m in RUN_REF.finditer(o)]


def started_from(study: Study, arm: str) -> str | None:
    """The arm whose same-seed run ``arm`` starts from (``{run:ARM}`` in its overrides), if any."""
    found = _starts(study.arms[arm])
    return found[0] if found else None


def paired_comparisons(study: Study, table: list[dict[str, Any]], split: str) -> list[str]:
    """Each arm that starts from another arm's run of the same seed against that arm, seed by seed (paired), per
    task and overall: the seed-to-seed spread both share cancels."""
    out = []
    for arm in study.arms:
        base = started_from(study, arm)
        if base is None:
            continue
        for task in dict.fromkeys(r["task"] for r in table):
            a, b = ([x for x in table if x["arm"] == name and x["split"] == split and x["task"] == task][0]["per_seed"]
                    for name in (arm, base))
            pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
            d = paired([x for x, _ in pairs], [y for _, y in pairs])
            what = PAPER_TASKS.get(task, task) if task != "all" else "**all tasks**"
            if d is None:
                out.append(f"{arm} − {base}, {what}: needs at least two seeds for a paired test")
                continue
            if d.stderr == 0:  # a t-test has nothing to measure against; a few episodes each may be all it is
                out.append(f"{arm} − {base} (paired by seed), {what}: {100 * d.difference:+.1f} points in every seed "
                           "(no spread across seeds to test it against)")
                continue
            verdict = "unlikely to be noise" if d.p_value < 0.05 else "within seed noise"
            out.append(f"{arm} − {base} (paired by seed), {what}: {100 * d.difference:+.1f} ± {100 * d.stderr:.1f} "
                       f"points (95% CI [{100 * d.ci95[0]:+.1f}, {100 * d.ci95[1]:+.1f}], paired t-test p = "
                       f"{d.p_value:.3g}): {verdict}")
    return out


def _pct(mean: float | None, se: float | None) -> str:
    if mean is None:
        return "–"
    return f"{100 * mean:.1f}" + (f" ± {100 * se:.1f}" if se is not None else "")


def _paper(study: Study, arm: str, task: str, split: str) -> str:
    if not study.paper:
        return ""
    fig = paper_numbers().get(study.paper, {})
    values = fig.get("train" if split == "train" else "arms", {}).get(arm, {})
    return str(values.get(PAPER_TASKS.get(task, task), ""))


def report(study: Study, out: Path, timings: dict[str, float] | None = None) -> dict[str, Any]:
    """``report.md``, ``results.csv``, ``success.png`` and ``study.json`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    table = rows(study)
    with open(out / "results.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["arm", "split", "task", "mean", "stderr", "seeds", *[f"seed{s}" for s in study.seeds]])
        for r in table:
            w.writerow([r["arm"], r["split"], r["task"], r["mean"], r["stderr"], r["seeds"], *r["per_seed"]])
    tasks = list(dict.fromkeys(r["task"] for r in table))
    has_paper = any(_paper(study, arm, t, s) for arm in study.arms for t in tasks for s in study.splits)
    lines = [f"# Study: {study.title}", "", study.question, "",
             f"{len(study.seeds)} training seeds per arm; mean ± standard error across seeds, in %. Evaluated on "
             + "; ".join(f"{split}: {split_words(study, split)}" for split in study.splits)
             + " (one run each: the phone and the policies are deterministic).", ""]
    for split in study.splits:
        head = [" task"] + [f" {arm}" for arm in study.arms]
        if has_paper:
            head += [f" paper: {arm}" for arm in study.arms if any(_paper(study, arm, t, split) for t in tasks)]
        words = split_words(study, split)
        lines += [f"## {words[0].upper() + words[1:]} ({split})", "",
                  "|" + " |".join(head) + " |", "|" + " --- |" * len(head)]
        for task in tasks:
            cells = [f" {PAPER_TASKS.get(task, task) if task != 'all' else '**all**'}"]
            for arm in study.arms:
                r = next(x for x in table if x["arm"] == arm and x["split"] == split and x["task"] == task)
                cells.append(f" {_pct(r['mean'], r['stderr'])}")
            if has_paper:
                cells += [f" {_paper(study, arm, task, split) or '–'}" for arm in study.arms
                          if any(_paper(study, arm, t, split) for t in tasks)]
            lines.append("|" + " |".join(cells) + " |")
        comparisons = [comparison(c) for c in _results(study, split)["seeds"].get("comparisons", [])]
        comparisons += paired_comparisons(study, table, split)
        if comparisons:
            lines += ["", "Differences (Welch's t-test across seeds, overall; where an arm starts from another's "
                      "policy, also a paired t-test by seed):", "", *[f"- {c}" for c in comparisons]]
        lines.append("")
    if study.paper:
        fig = paper_numbers()[study.paper]
        lines += ["## The paper", "", f"{fig['what']}. Source: {' '.join(str(fig['source']).split())}", ""]
    curves = learning_curves(study)
    if curves:
        lines += ["## Learning curves", "", "Success of the deterministic policy on the held-out snapshots (before the "
                  "first update, then as it trains) and of the sampling policy in its own rollouts, per seed: "
                  "`learning_curve.png`, `learning_curve.csv` (each run's `curve.csv`).", "",
                  "![learning curves](learning_curve.png)", ""]
    chosen = f" --arms {','.join(study.chosen)}" if study.chosen else ""
    lines += ["## How it was made", "", f"`python -m vlui.study {study.name} --size {study.size} --seeds "
              f"{len(study.seeds)}{chosen}`, which ran:", "", "```"]
    for _, cmd, _ in commands(study):
        lines.append(f"python {cmd[2].split(';')[0].split()[-1]}.py {' '.join(cmd[3:])}")
    lines += ["```", ""]
    meta = {"study": study.name, "size": study.size, "seeds": study.seeds, "commit": _commit(),
            "machine": f"{platform.machine()}, {_cores()} cores", "timings_s": timings or {}}
    if timings:
        lines += [f"Wall-clock on this machine ({meta['machine']}): " + "; ".join(
            f"{k} {v / 60:.1f} min" for k, v in timings.items()) + "."]
    lines += [f"Commit: `{meta['commit']}`.", ""]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "study.json").write_text(json.dumps({**meta, "rows": table}, indent=2), encoding="utf-8")
    _plot(study, table, out / "success.png")
    if curves:
        _plot_curves(study, curves, out / "learning_curve.png")
        with open(out / "learning_curve.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["arm", "seed", *CURVE_COLUMNS])
            for (arm, seed), curve in curves.items():
                w.writerows([arm, seed, *(r[c] for c in CURVE_COLUMNS)] for r in curve)
    return {"report": str(out / "report.md"), **meta}


def learning_curves(study: Study) -> dict[tuple[str, int], list[dict[str, str]]]:
    """The ``curve.csv`` of every (arm, seed) run that wrote one (online RL runs)."""
    found = {}
    for arm in study.arms:
        for seed in study.seeds:
            path = work_dir() / run_dir(study, arm, seed) / "curve.csv"
            if path.exists():
                with open(path, newline="", encoding="utf-8") as f:
                    found[(arm, seed)] = list(csv.DictReader(f))
    return found


def _plot_curves(study: Study, curves: dict[tuple[str, int], list[dict[str, str]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for (arm, seed), curve in curves.items():
        for ax, column in zip(axes, ("heldout_success", "rollout_success")):
            points = [(float(r["iteration"]), 100 * float(r[column])) for r in curve if r[column] != ""]
            if points:
                ax.plot(*zip(*points), marker="o", markersize=3, label=f"{arm} seed {seed}")
    for ax, title in zip(axes, ("held-out snapshots (deterministic policy)", "its own rollouts (sampling policy)")):
        ax.set_xlabel("iteration (the CSV has the wall-clock)")
        ax.set_ylabel("success (%)")
        ax.set_ylim(0, 100)
        ax.set_title(title, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{study.title}: learning curves", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot(study: Study, table: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(r["task"] for r in table))
    fig, axes = plt.subplots(1, len(study.splits), figsize=(5.5 * len(study.splits), 3.6), squeeze=False)
    width = 0.8 / max(1, len(study.arms))
    for ax, split in zip(axes[0], study.splits):
        for i, arm in enumerate(study.arms):
            rs = [next(x for x in table if x["arm"] == arm and x["split"] == split and x["task"] == t) for t in tasks]
            xs = [j + (i - (len(study.arms) - 1) / 2) * width for j in range(len(tasks))]
            ax.bar(xs, [100 * (r["mean"] or 0) for r in rs], width, label=arm,
                   yerr=[100 * (r["stderr"] or 0) for r in rs], capsize=2)
            for x, t in zip(xs, tasks):
                value = _paper(study, arm, t, split).lstrip("~>")
                if value and not math.isnan(float(value)):
                    ax.plot([x], [float(value)], marker="*", color="black", markersize=8)
        ax.set_xticks(range(len(tasks)), [PAPER_TASKS.get(t, t) for t in tasks], rotation=30, fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_ylabel("success (%)")
        ax.set_title(split_words(study, split).strip("`"), fontsize=9)
    axes[0][0].legend(fontsize=7, title="arm (★ paper)", title_fontsize=7)
    fig.suptitle(f"{study.title} (mean ± s.e., {len(study.seeds)} seeds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _commit() -> str:
    """The commit of the vlui checkout that ran the study (with ``+changes`` when it had uncommitted ones)."""
    root = checkout()
    if root is None:
        return "an installed vlui package"
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True).stdout.strip()
        return head + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def _cores() -> int:
    return os.cpu_count() or 1
