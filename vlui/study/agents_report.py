"""The report of a study with agent arms (``agents:`` in studies.yaml; ``bmoca_fig5``): each arm's success per task
beside the paper's figure, as the paper reports it (the mean and standard error across runs, or across a policy's
training seeds), and what each agent asked of its model (invalid actions, requests, tokens, estimated cost).

Everything in ``report.md`` comes from the evaluations' episodes, so the study run again, or its evaluations answered
again from the LLM cache, writes the same report; the wall-clock and the requests each run sent go to ``study.json``.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlui.eval.report import USAGE_EXPLAINED, USAGE_ROWS, action_validity, family, usage_cells, usage_summary


@dataclass
class Column:
    """One arm on one split: its success per task (``per_task``: task or ``all`` -> mean, stderr, repeats and
    episodes), over ``repeats`` ("runs" of an agent, "seeds" of a trained policy), and its usage
    (:func:`vlui.eval.report.usage_summary`); ``sent``, what its evaluation's last run sent (requests, retries,
    answers from the cache), for study.json only."""

    arm: str
    agent: str
    repeats: str
    per_task: dict[str, dict[str, Any]]
    usage: dict[str, Any]
    sent: dict[str, Any] | None = None
    failed: int = 0  # episodes that failed for infrastructure reasons (not counted; a rerun runs them again)


def policy_columns(result: dict[str, Any], arms: list[str]) -> list[Column]:
    """The trained (or given) ``arms`` of a study's evaluation of policies (``checkpoint={arm: [seeds]}``), each
    across its training seeds."""
    if "seeds" not in result:  # one arm of one policy: the evaluation's own rates
        (arm,) = arms
        cells = {task: _cell(r["success_rate"], None, 1, result["records"], task)
                 for task, r in [*result["per_family"].items(), ("all", result["overall"])]}
        return [Column(arm, "policy", "seeds", cells, usage_summary({"overall": action_validity(result["records"])}),
                       failed=_failed(result["records"]))]
    out = []
    for arm, g in result["seeds"]["groups"].items():
        mine = [r for r in result["records"] if r.get("checkpoint") in g["checkpoints"]]
        cells = {task: _cell(s["mean"], s["stderr"], s["seeds"], mine, task)
                 for task, s in [*g["per_family"].items(), ("all", g["overall"])]}
        out.append(Column(arm, "policy", "seeds", cells, usage_summary({"overall": action_validity(mine)}),
                          failed=_failed(mine)))
    return out


def agent_column(arm: str, result: dict[str, Any]) -> Column:
    """An agent arm's evaluation (``results.json``), across its runs."""
    cells = {task: _cell(r["mean_over_runs"], r["stderr"], result["runs"], result["records"], task)
             for task, r in [*result["per_family"].items(), ("all", result["overall"])]}
    llm = result.get("llm") or {}
    return Column(arm, result["agent"], "runs", cells, usage_summary(result),
                  {k: llm.get(k) for k in ("requests", "retries", "cached")} if llm else None,
                  _failed(result["records"]))


def _failed(records: list[dict[str, Any]]) -> int:
    return sum(bool(r.get("infra_failure")) for r in records)


def _cell(mean: float | None, stderr: float | None, repeats: int, records: list[dict[str, Any]],
          task: str) -> dict[str, Any]:
    """A task's (or ``all`` tasks') success, with the episodes that counted (not failed for infrastructure reasons)."""
    counted = [r for r in records if not r.get("infra_failure") and task in ("all", family(r["task"]))]
    return {"mean": mean, "stderr": stderr, "repeats": repeats, "episodes": len(counted)}


def _pct(cell: dict[str, Any] | None) -> str:
    """A success cell: the mean in %, ± the standard error across repeats where there are several."""
    if not cell or cell["mean"] is None:
        return "–"
    spread = f" ± {100 * cell['stderr']:.1f}" if cell["stderr"] is not None and cell["repeats"] > 1 else ""
    return f"{100 * cell['mean']:.1f}{spread}"


def write(out: Path, head: list[str], splits: dict[str, tuple[str, list[Column]]], paper: dict[str, Any] | None,
          task_names: dict[str, str], tail: list[str], meta: dict[str, Any]) -> Path:
    """``report.md``, ``results.csv`` and ``study.json`` in ``out``: ``head`` (the title and the question), a table per
    split (``splits``: name -> its words and its columns) of success per task with the paper's values (``paper``:
    its figure's entry in paper.yaml) beside each arm it has, the usage table, the paper's source, then ``tail`` (how
    it was made); ``meta`` (the wall-clock, the commit) goes to study.json."""
    values = (paper or {}).get("arms", {})
    models = (paper or {}).get("models", {})

    def stated(arm: str, task: str) -> str:
        return str(values.get(arm, {}).get(task_names.get(task, task), "–"))

    lines = [*head, "Each cell: success in %, the mean ± the standard error across an agent's runs (the paper's "
             "statistic: each run sends every request with its own seed) or a trained policy's training seeds; "
             "the paper's value beside each arm it reports, as it states it (its Fig. 5 prints bars without values: "
             "where the paper's text or tables give none, a dash).", ""]
    rows = []
    for split, (words, columns) in splits.items():
        tasks = list(dict.fromkeys(t for c in columns for t in c.per_task if t != "all")) + ["all"]
        header = ["task"]
        for c in columns:
            model = c.usage["model"]
            header.append(f"{c.arm} ({c.agent}{f', {model}' if model else ''})")
            if c.arm in values:
                header.append(f"paper{f' ({models[c.arm]})' if c.arm in models else ''}")
        lines += [f"## {words[0].upper() + words[1:]} ({split})", "", "| " + " | ".join(header) + " |",
                  "| --- " * len(header) + "|"]
        for task in tasks:
            cells = ["**all**" if task == "all" else f"{task_names[task]} (`{task}`)" if task in task_names
                     else f"`{task}`"]
            for c in columns:
                cell = c.per_task.get(task)
                cells.append(_pct(cell) + (f" ({cell['episodes']})" if cell and cell["episodes"] else ""))
                if c.arm in values:
                    cells.append(stated(c.arm, task))
                rows.append({"arm": c.arm, "split": split, "task": task, "agent": c.agent,
                             "model": c.usage["model"], "repeats": f"{cell['repeats']} {c.repeats}" if cell else "",
                             "mean": cell["mean"] if cell else None, "stderr": cell["stderr"] if cell else None,
                             "episodes": cell["episodes"] if cell else None, "paper": stated(c.arm, task)})
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "In ( ) the episodes counted. What each arm asked:", "",
                  "| arm | " + " | ".join(USAGE_ROWS) + " |", "| --- " * (len(USAGE_ROWS) + 1) + "|"]
        lines += [f"| {c.arm} | " + " | ".join(usage_cells(c.usage)) + " |" for c in columns]
        lines += ["", USAGE_EXPLAINED, ""]
        lines += [f"{c.failed} episode(s) of {c.arm} failed for infrastructure reasons (its model's endpoint, or a "
                  "phone) and are not counted: run the same command again to run them again." for c in columns
                  if c.failed]
        lines += [""] if any(c.failed for c in columns) else []
    if paper:
        lines += ["## The paper", "", f"{paper['what']}. Source: {' '.join(str(paper['source']).split())}", ""]
    lines += tail
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open(out / "results.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["arm", "split", "task", "agent", "model", "repeats", "mean", "stderr", "episodes",
                               "paper"])
        w.writeheader()
        w.writerows(rows)
    usage = {split: {c.arm: {**c.usage, "this_run": c.sent} for c in columns}
             for split, (_, columns) in splits.items()}
    (out / "study.json").write_text(json.dumps({**meta, "rows": rows, "usage": usage}, indent=2), encoding="utf-8")
    return out / "report.md"
