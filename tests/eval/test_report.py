"""results.json and results.md of an evaluation made of episodes: the t interval over the phones' means beside the
bootstrap over seeds and phones, and the success of each phone (each seed's where there are several)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vlui.eval.metrics import phone_t_interval
from vlui.eval.report import Inputs, aggregate, publish, seeds_table, write

PHONES = ("100", "101", "102", "103")
# successes of 4 episodes (4 tasks) per seed and phone; seed 1's episodes on phone 103 all failed for infrastructure
# reasons (None): its mean there is seed 0's alone
SUCCESSES = {0: (3, 2, 2, 1), 1: (3, 3, 1, None)}
TASKS = ("open_clock", "airplane_on", "call_911", "alarm_1030")


def records() -> list[dict[str, Any]]:
    out = []
    for seed, counts in SUCCESSES.items():
        for phone, k in zip(PHONES, counts, strict=True):
            for i, task in enumerate(TASKS):
                out.append({"task": task, "snapshot": phone, "run": 0, "episode": 0, "checkpoint": f"/x/bc-seed{seed}",
                            "success": k is not None and i < k, "steps": 3, "actions": [], "tokens": [],
                            **({"infra_failure": "adb went away"} if k is None else {})})
    return out


def test_a_split_reports_the_t_interval_over_its_phones_beside_the_bootstrap(tmp_path: Path) -> None:
    result = aggregate(records(), dict.fromkeys(PHONES, "test"), {"agent": "policy"},
                       {"bc": ["/x/bc-seed0", "/x/bc-seed1"]})
    write(result, tmp_path)
    bc = json.loads((tmp_path / "results.json").read_text())["seeds"]["groups"]["bc"]
    # phone means 0.75, 0.625, 0.375, 0.25: mean 0.5, s.e. 0.1141088, t(0.975, 3 dof) = 3.182446
    t = bc["overall"]["t_interval"]
    assert (t["mean"], t["phones"], t["level"]) == (0.5, 4, 0.95) and t["method"] == "Student t over the phones' means"
    assert (t["low"], t["high"]) == (pytest.approx(0.1368545, abs=1e-6), pytest.approx(0.8631455, abs=1e-6))
    assert bc["per_split"]["test"]["t_interval"] == t and bc["overall"]["ci95"]["phones"] == 4  # the bootstrap stays
    matrix = np.array([[0.75, 0.5, 0.5, 0.25], [0.75, 0.75, 0.25, np.nan]])
    assert t["low"] == pytest.approx(phone_t_interval(matrix).low)
    md = (tmp_path / "results.md").read_text()
    ci = bc["overall"]["ci95"]
    all_row = f"| **all** | {100 * bc['overall']['mean']:.1f}% [{100 * ci['low']:.1f}, {100 * ci['high']:.1f}] "
    assert all_row + "(t over 4 phones [13.7, 86.3]) |" in md
    assert "| open_clock | " in md and "| open_clock | 100.0% [100.0, 100.0] (t over" not in md  # per task: bootstrap
    assert '"t over N phones [ ]", after the cells of all tasks' in md
    # every phone's success, each seed's in ( ) in the order the column's head names them
    assert "## Per phone" in md and "| phone | split | bc: mean (bc-seed0, bc-seed1) |" in md
    assert "| 100 | test | 75.0 (75.0, 75.0) |" in md and "| 101 | test | 62.5 (50.0, 75.0) |" in md
    assert "| 103 | test | 25.0 (25.0, –) |" in md


def test_one_policys_report_has_each_phones_success_and_old_results_render_without_the_t_interval(
        tmp_path: Path) -> None:
    one = [r for r in records() if r["checkpoint"] == "/x/bc-seed0"]
    splits = {"100": "train", "101": "train", "102": "test", "103": "test"}
    write(aggregate(one, splits, {"agent": "policy"}), tmp_path)
    md = (tmp_path / "results.md").read_text()
    assert "| phone | split | success | episodes |" in md
    rows = [line for line in md.splitlines() if line.startswith("| 10")]
    assert rows == ["| 102 | test | 50.0 | 4 |", "| 103 | test | 25.0 | 4 |", "| 100 | train | 75.0 | 4 |",
                    "| 101 | train | 50.0 | 4 |"]
    # results.json of an evaluation made before the t interval: its tables still render, with the bootstrap alone
    seeds = aggregate(records(), dict.fromkeys(PHONES, "test"), {"agent": "policy"}, {"bc": ["/x/bc-seed0"]})["seeds"]
    for s in (seeds["groups"]["bc"]["overall"], *seeds["groups"]["bc"]["per_split"].values()):
        del s["t_interval"]
    assert "| **all** | 50.0% [" in seeds_table(seeds) and "(t over" not in seeds_table(seeds).split("\n\n")[0]


def test_a_report_published_beside_an_earlier_evaluation_says_what_was_evaluated_and_compares_the_two(
        tmp_path: Path) -> None:
    mine = [r for r in records() if r["checkpoint"] == "/x/bc-seed0"]  # 8 of its 16 episodes succeed
    earlier = aggregate([{**r, "success": False} for r in mine], dict.fromkeys(PHONES, "test"), {"agent": "random"})
    inputs = Inputs(name="bc", agent="policy", checkpoint="/x/bc-seed0", config={"name": "bc", "runs": 1},
                    splits=dict.fromkeys(PHONES, "test"), groups=None, constraints={},
                    compare={"random": earlier}, prices=(0.0, 0.0))
    result, paths = publish(mine, inputs, tmp_path)
    saved = json.loads(paths["json"].read_text())
    assert saved == json.loads(json.dumps(result))
    assert (saved["agent"], saved["checkpoint"], saved["config"]) == ("policy", "/x/bc-seed0", {"name": "bc", "runs": 1})
    assert "llm" not in saved  # no episode asked a model
    assert saved["per_split"]["test"]["episodes"] == 16
    overall = saved["compared"]["overall"]
    assert (overall["bc"]["success_rate"], overall["random"]["success_rate"]) == (0.5, 0.0)
    assert saved["compared"]["same_tasks"] and saved["compared"]["same_phones"]
    assert paths["md"].is_file()
