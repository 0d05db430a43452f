"""``python -m vlui.study detectors``: how often each task's detector judges an episode right, measured against the
task's truth on the simulated phone (:mod:`vlui.tasks.truth`).

Every task of the paper's 60 and of B-MoCA release 2.5's 131 that the simulated phone can play and that has a truth
runs with the expert, the random agent and, given a checkpoint, a trained policy, on the snapshots asked for. Each
step records the detector's verdict (its logcat line, or its evaluator check, fired on that step) and the truth's
(the goal holds after that step). The benchmark's episode ends when the detector fires; here it runs on until both
have held once, or to the step limit, so that each one's first step is known:

- TP: the detector fired, and the goal had been reached by then (at that step or before);
- FP: the detector fired before the goal was reached (``early`` when the goal came later, on the steps run on);
- FN: the detector never fired within the step limit, though the goal was reached;
- TN: neither.

Precision is TP / (TP + FP), recall TP / (TP + FN). Tasks the benchmark refuses on the simulated phone because their
check is flawed (``sim: false`` with their apps there) run too, so that the flaw is measured: the detector's verdict
stays the benchmark's success, the truth is a column of its own. Episodes are saved as ``evaluate.py`` saves them
(``<out>/<agent>/episodes.jsonl``, ``recipe.json``), so ``python -m vlui.viewer`` opens them; the report
(``report.md``, ``detectors.csv``, ``disagreements.csv``) names each disagreeing episode and how to open it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vlui.agents import make_agent
from vlui.agents.expert import plan_for
from vlui.android.apps import apps
from vlui.backends import resolve_snapshots
from vlui.data.images import IMAGES
from vlui.env.env import open_env
from vlui.env.settings import EnvConfig, env_settings
from vlui.errors import VluiError
from vlui.jobs.evaluate import journal_records, keep_screens, screens_for
from vlui.resources import work_dir
from vlui.rollout import EpisodeRecord, Job, result_line, rollout
from vlui.seeding import substream
from vlui.study import checkout_commit
from vlui.tasks.catalog import Task, release_tasks, task_set
from vlui.tasks.catalog import tasks as paper_tasks
from vlui.tasks.truth import truth_conditions

SETS = {"bmoca": "the paper's 60 tasks", "bmoca25": "B-MoCA release 2.5's 131 tasks"}
AGENTS = ("expert", "random", "policy")
SCREENS = ("none", "disagreements")
LISTED_PER_TASK = 3  # disagreeing episodes the report names per task and agent (disagreements.csv has them all)


def verdict(detector_step: int | None, truth_step: int | None) -> str:
    """An episode's verdict from the first step its detector fired and the first its truth held (None: never within
    the step limit): ``TP``, ``FP``, ``FN`` or ``TN``."""
    if detector_step is not None:
        return "TP" if truth_step is not None and truth_step <= detector_step else "FP"
    return "FN" if truth_step is not None else "TN"


def first(flags: Sequence[bool]) -> int | None:
    """The 1-based step of the first true flag, or None."""
    return next((i + 1 for i, f in enumerate(flags) if f), None)


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass(frozen=True)
class Episode:
    """One judged episode, as the report counts it."""

    agent: str
    set: str
    task: str
    snapshot: str
    key: str
    detector_step: int | None
    truth_step: int | None
    truth_at_start: bool
    steps: int

    @property
    def verdict(self) -> str:
        return verdict(self.detector_step, self.truth_step)


def detector_kind(task: Task) -> str:
    """How the benchmark judges the task, in a few words."""
    if task.log_tag:
        return f"logcat {task.log_tag}"
    if task.evaluator_check:
        return f"evaluator {task.evaluator}" if task.evaluator else "evaluator check"
    return "state check"


def runnable(set_name: str) -> tuple[list[Task], dict[str, str]]:
    """A set's tasks the study runs, and why each other one is left out."""
    chosen = paper_tasks() if set_name == "bmoca" else release_tasks()
    ids = task_set("all") if set_name == "bmoca" else task_set("bmoca25")
    run, left = [], {}
    for task_id in ids:
        task = chosen[task_id]
        lacking = [a for a in task.apps if a not in apps()]
        if lacking:
            left[task_id] = task.unsupported or f"the simulated phone has no {', '.join(lacking)} app"
        elif truth_conditions(task) is None:
            left[task_id] = f"no truth: {task.unsupported or 'none written yet'}"
        else:
            run.append(task)
    return run, left


def _expert_can(task: Task) -> bool:
    try:
        plan_for(task)
    except VluiError:
        return False
    return True


def measure(sets: Sequence[str], snapshots: Any, agents: Sequence[str], out: Path, runs: int = 1,
            checkpoint: str | None = None, screens: str = "none", seed: int = 0, slots: int = 2,
            only: Sequence[str] = ()) -> dict[str, Any]:
    """Run the study's episodes (resuming those already in ``out``) and write its report; returns the report's
    figures. ``only``: these tasks of the sets, not all."""
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        raise VluiError(f"unknown task set {unknown[0]!r}; the detectors study knows {', '.join(SETS)}")
    bad = [a for a in agents if a not in AGENTS]
    if bad:
        raise VluiError(f"unknown agent {bad[0]!r}; choose from {', '.join(AGENTS)}")
    if "policy" in agents and not checkpoint:
        raise VluiError("agent policy needs --checkpoint checkpoints/<experiment>/<run>")
    if screens not in SCREENS:
        raise VluiError(f"--screens is one of {', '.join(SCREENS)}, not {screens!r}")
    known = {t for s in sets for t in (task_set("all") if s == "bmoca" else task_set("bmoca25"))}
    strangers = [t for t in only if t not in known]
    if strangers:
        raise VluiError(f"task {strangers[0]} is not in the sets {', '.join(sets)} (ids: vlui/tasks/data/bmoca.yaml "
                        "and bmoca25.yaml)")
    began = time.monotonic()
    env = env_settings({"backend": "sim", "snapshots": snapshots})
    phones = resolve_snapshots(env)
    episodes: list[Episode] = []
    left: dict[str, dict[str, str]] = {}
    played = 0
    for agent_name in agents:
        folder = out / agent_name
        folder.mkdir(parents=True, exist_ok=True)
        settings = {"name": agent_name, **({"checkpoint": checkpoint} if agent_name == "policy" else {})}
        agent = make_agent(settings, seed)
        agent_env = screens_for(agent, env)
        (folder / "recipe.json").write_text(json.dumps({"agent": settings, "env": asdict(agent_env)}, default=str,
                                                       indent=1), encoding="utf-8")
        done = _done(folder / "episodes.jsonl")
        for set_name in sets:
            tasks, skipped = runnable(set_name)
            if only:
                tasks = [t for t in tasks if t.id in only]
                skipped = {t: why for t, why in skipped.items() if t in only}
            left[set_name] = skipped
            if agent_name == "expert":
                tasks = [t for t in tasks if _expert_can(t)]
            jobs = [Job(t.id, snap, substream(seed, substream(run, i, 10_007)), run=run)
                    for run in range(runs) for i, (t, snap) in enumerate((t, s) for t in tasks for s in phones)]
            todo = [j for j in jobs if j.key not in done]
            played += len(todo)
            if todo:
                _play(todo, tasks, phones, agent_env, settings, seed, folder, screens, slots, done)
            episodes += [_episode(agent_name, set_name, done[j.key]) for j in jobs]
    figures = write_report(out, episodes, left, sets, agents, {
        "command": " ".join(["python -m vlui.study detectors", *sys.argv[2:]]) if sys.argv[1:2] == ["detectors"]
        else "python -m vlui.study detectors", "commit": checkout_commit(), "wall_s": time.monotonic() - began,
        "phones": len(phones), "runs": runs, "played": played})
    return figures


def _done(journal: Path) -> dict[str, dict[str, Any]]:
    return {r["key"]: r for _, r in journal_records(journal) if "judged" in r}


def _play(jobs: list[Job], tasks: list[Task], phones: list[str], env: EnvConfig, settings: dict[str, Any],
          seed: int, folder: Path, screens: str, slots: int, done: dict[str, dict[str, Any]]) -> None:
    """Run ``jobs`` with the truth measured, appending each episode's line to ``folder/episodes.jsonl``."""
    probe = make_agent(settings, seed)
    reads = getattr(probe, "reads", ("xml", "screen"))
    keep = screens != "none"
    factory = lambda: open_env(env, tasks, phones, include_xml="xml" in reads,  # noqa: E731
                               include_screen="screen" in reads or keep, measure_truth=True)

    with open(folder / "episodes.jsonl", "a", encoding="utf-8") as f:
        def save(record: EpisodeRecord) -> None:
            line = _judged(record)
            if record.frames and line["judged"]["verdict"] in ("FP", "FN"):
                line["screens"] = keep_screens(record.frames, folder / IMAGES)
            f.write(json.dumps(line) + "\n")
            f.flush()
            done[line["key"]] = line

        rollout(jobs, factory, lambda: make_agent(settings, seed), slots, save,
                observe=lambda e, obs: e.verdicts, record_frames=keep)


def _judged(record: EpisodeRecord) -> dict[str, Any]:
    """An episode's line: ``evaluate.py``'s, its ``success`` the detector's (the benchmark's verdict), and
    ``judged``: each step's verdicts and the episode's."""
    line = result_line(record)
    start, *after = [s.extra for s in record.steps] + [record.final_extra]
    detector = [bool(v[0]) for v in after]
    truth = [bool(v[1]) for v in after]
    det_step, truth_step = first(detector), first(truth)
    line["success"] = det_step is not None and not record.infra_failure
    line["judged"] = {"detector": detector, "truth": truth, "truth_at_start": bool(start[1]),
                      "detector_step": det_step, "truth_step": truth_step, "verdict": verdict(det_step, truth_step)}
    return line


def _episode(agent: str, set_name: str, line: dict[str, Any]) -> Episode:
    j = line["judged"]
    return Episode(agent, set_name, line["task"], str(line["snapshot"]), line["key"], j["detector_step"],
                   j["truth_step"], j["truth_at_start"], line["steps"])


# ------------------------------------------------------------------------------------------------------- report
COLUMNS = ("set", "task", "detector", "agent", "episodes", "tp", "fp", "fn", "tn", "precision", "recall",
           "early", "late", "truth_at_start")


def counts(episodes: Sequence[Episode]) -> dict[str, Any]:
    """TP, FP, FN, TN, precision, recall, and how many FPs were early (the goal came later), how many TPs late (the
    detector fired after the goal was reached), how many episodes started with the goal already holding."""
    c = Counter(e.verdict for e in episodes)
    return {"episodes": len(episodes), "tp": c["TP"], "fp": c["FP"], "fn": c["FN"], "tn": c["TN"],
            "precision": ratio(c["TP"], c["TP"] + c["FP"]), "recall": ratio(c["TP"], c["TP"] + c["FN"]),
            "early": sum(e.verdict == "FP" and e.truth_step is not None for e in episodes),
            "late": sum(e.verdict == "TP" and e.detector_step > e.truth_step for e in episodes),
            "truth_at_start": sum(e.truth_at_start for e in episodes)}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def write_report(out: Path, episodes: Sequence[Episode], left: dict[str, dict[str, str]], sets: Sequence[str],
                 agents: Sequence[str], meta: dict[str, Any]) -> dict[str, Any]:
    """``report.md``, ``detectors.csv`` (per task, pooled and per agent) and ``disagreements.csv`` in ``out``."""
    catalog = {**paper_tasks(), **release_tasks()}
    rows, under = [], []
    for set_name in sets:
        for task_id in dict.fromkeys(e.task for e in episodes if e.set == set_name):
            mine = [e for e in episodes if e.set == set_name and e.task == task_id]
            kind = detector_kind(catalog[task_id])
            for agent in ("all", *agents):
                chosen = mine if agent == "all" else [e for e in mine if e.agent == agent]
                if chosen:
                    rows.append({"set": set_name, "task": task_id, "detector": kind, "agent": agent, **counts(chosen)})
                    if agent == "all" and (rows[-1]["fp"] or rows[-1]["fn"]):
                        under.append(rows[-1])
    with open(out / "detectors.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    wrong = [e for e in episodes if e.verdict in ("FP", "FN")]
    with open(out / "disagreements.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["set", "task", "agent", "snapshot", "verdict", "detector_step", "truth_step", "steps",
                         "viewer"])
        for e in wrong:
            writer.writerow([e.set, e.task, e.agent, e.snapshot, e.verdict, e.detector_step, e.truth_step, e.steps,
                             _viewer(e)])
    (out / "report.md").write_text(_markdown(rows, under, wrong, left, sets, agents, meta, catalog), encoding="utf-8")
    totals = {agent: counts([e for e in episodes if e.agent == agent]) for agent in agents}
    return {"report": str(out / "report.md"), "episodes": len(episodes), "under": len(under), "totals": totals}


def _viewer(e: Episode) -> str:
    return f"python -m vlui.viewer {e.agent} --episode {e.key}"


def _markdown(rows: list[dict[str, Any]], under: list[dict[str, Any]], wrong: list[Episode],
              left: dict[str, dict[str, str]], sets: Sequence[str], agents: Sequence[str], meta: dict[str, Any],
              catalog: dict[str, Task]) -> str:
    minutes = meta["wall_s"] / 60
    total = sum(r["episodes"] for r in rows if r["agent"] == "all")
    lines = ["# How often the detectors judge right", "",
             f"`{meta['command']}` at `{meta['commit']}`: {meta['phones']} phones, {meta['runs']} run(s), agents "
             f"{', '.join(agents)}. This invocation played {meta['played']} of the {total} episodes in "
             f"{minutes:.1f} min wall-clock" + (", the others read from an earlier one in this folder (resumed)"
                                                 if meta["played"] < total else "") + ".",
             "", "Each task's detector (the benchmark's: its logcat regex or B-MoCA's evaluator check) against its "
             "truth, the goal read from the simulated phone's own state (`vlui/tasks/data/truths.yaml`). An episode "
             "runs on past the detector until the truth has held too, or to the step limit. **TP** the detector "
             "fired and the goal had been reached by then; **FP** it fired first (*early*: the goal came later); "
             "**FN** the goal was reached and the detector never fired; **TN** neither. *late*: TPs whose detector "
             "fired steps after the goal was reached; *at start*: episodes whose goal held before the first step. "
             "docs/environment.md, \"How often the detectors judge right\", says why each detector under 100% is "
             "so.", ""]
    for set_name in sets:
        mine = [r for r in rows if r["set"] == set_name and r["agent"] == "all"]
        summed = {key: sum(r[key] for r in mine) for key in ("episodes", "tp", "fp", "fn", "tn")}
        exact = sum(not r["fp"] and not r["fn"] for r in mine)
        lines += [f"## {SETS[set_name]}", "",
                  f"{len(mine)} tasks run, {summed['episodes']} episodes: TP {summed['tp']}, FP {summed['fp']}, FN "
                  f"{summed['fn']}, TN {summed['tn']}; precision "
                  f"{_pct(ratio(summed['tp'], summed['tp'] + summed['fp']))}, "
                  f"recall {_pct(ratio(summed['tp'], summed['tp'] + summed['fn']))}. {exact} of the {len(mine)} "
                  "detectors judged every episode right.", "",
                  "| task | detector | agent | episodes | TP | FP | FN | TN | precision | recall | early | late | "
                  "at start |", "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
                  "---: |"]
        for r in (r for r in rows if r["set"] == set_name):
            refused = "" if catalog[r["task"]].sim else " (refused: flawed check)"
            lines.append(f"| {r['task']}{refused} | {r['detector']} | {r['agent']} | {r['episodes']} | {r['tp']} | "
                         f"{r['fp']} | {r['fn']} | {r['tn']} | {_pct(r['precision'])} | {_pct(r['recall'])} | "
                         f"{r['early']} | {r['late']} | {r['truth_at_start']} |")
        if left.get(set_name):
            why: dict[str, list[str]] = {}
            for task, reason in left[set_name].items():
                why.setdefault(reason, []).append(f"`{task}`")
            lines += ["", f"Not run ({len(left[set_name])}):", ""]
            lines += [f"- {', '.join(ids)}: {reason}" for reason, ids in why.items()]
        lines.append("")
    lines += ["## Detectors under 100%", "",
              "| set | task | detector | precision | recall | FP | FN |", "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['set']} | {r['task']} | {r['detector']} | {_pct(r['precision'])} | {_pct(r['recall'])} | "
              f"{r['fp']} | {r['fn']} |" for r in under]
    lines += ["", "## Disagreeing episodes", "",
              f"{len(wrong)} in all, each in `disagreements.csv`; the first {LISTED_PER_TASK} per task and agent here. "
              "Open one from this folder with the command shown (the folder of each agent is an evaluation's).", ""]
    shown: Counter = Counter()
    for e in wrong:
        shown[(e.set, e.task, e.agent)] += 1
        if shown[(e.set, e.task, e.agent)] <= LISTED_PER_TASK:
            lines.append(f"- {e.task}, {e.agent}, phone {e.snapshot}: {e.verdict} (detector step "
                         f"{e.detector_step or '–'}, truth step {e.truth_step or '–'}): `{_viewer(e)}`")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.study detectors", description=(
        "Measure each task's detector against the task's truth on the simulated phone: precision and recall per "
        "task over expert, random and (with --checkpoint) policy episodes. Running it again resumes."))
    parser.add_argument("--sets", default="bmoca,bmoca25", help=f"task sets, comma-separated ({', '.join(SETS)})")
    parser.add_argument("--snapshots", default="all", help="env.snapshots: all (the 45), test, train, random:N, or "
                        "ids, comma-separated")
    parser.add_argument("--tasks", default="", help="only these task ids of the sets, comma-separated")
    parser.add_argument("--agents", default="expert,random", help=f"comma-separated, of {', '.join(AGENTS)}")
    parser.add_argument("--checkpoint", help="the policy's checkpoint, for agent policy")
    parser.add_argument("--runs", type=int, default=1, help="runs of every task on every phone (default 1)")
    parser.add_argument("--screens", default="none", help="none, or disagreements: keep the screens of the episodes "
                        "where detector and truth disagree, for the viewer (draws every screen: slower)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="report folder (default outputs/study/detectors)")
    args = parser.parse_args(argv)
    try:
        out = Path(args.out) if args.out else work_dir() / "outputs" / "study" / "detectors"
        phones = [p.strip() for p in args.snapshots.split(",")] if "," in args.snapshots else args.snapshots
        figures = measure([s.strip() for s in args.sets.split(",") if s.strip()], phones,
                          [a.strip() for a in args.agents.split(",") if a.strip()], out, args.runs, args.checkpoint,
                          args.screens, args.seed, only=[t.strip() for t in args.tasks.split(",") if t.strip()])
    except VluiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"detectors: {figures['episodes']} episodes, {figures['under']} detectors under 100%; report in "
          f"{figures['report']}")
    return 0
