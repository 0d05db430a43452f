"""evaluate's compare=: evaluations side by side, and the first against each other one with a bootstrap over seeds
(policies, else runs) and the phones both ran, Holm-adjusted over the comparisons."""

from __future__ import annotations

from typing import Any

from vlui.eval.report import aggregate, side_by_side, side_by_side_table


def evaluation(agent: str, success: dict[str, float], runs: int = 3, phones: tuple[str, ...] = ("100", "101", "102",
                                                                                                   "103")) -> dict:
    """results.json of an evaluation of ``agent`` on open_clock and airplane_on: on each phone, ``success[phone]``
    of its runs succeed (rounded down), every task alike."""
    records: list[dict[str, Any]] = []
    for phone in phones:
        for run in range(runs):
            for task in ("open_clock", "airplane_on"):
                records.append({"key": f"{task}|{phone}|{run}|0", "task": task, "snapshot": phone, "run": run,
                                "episode": 0, "success": run < int(success.get(phone, 0.0) * runs), "steps": 3,
                                "actions": [], "tokens": []})
    return aggregate(records, {p: "test" for p in phones}, {"agent": agent, "checkpoint": None})


def test_a_clear_difference_is_found_and_equal_agents_are_not_told_apart() -> None:
    good = evaluation("policy", {"100": 1, "101": 1, "102": 1, "103": 1})
    bad = evaluation("mllm", {"100": 0, "101": 1 / 3, "102": 0, "103": 0})
    same = evaluation("expert", {"100": 1, "101": 1, "102": 1, "103": 1})
    c = side_by_side({"policy": good, "mllm": bad, "expert": same})
    (vs_bad, vs_same) = c["tests"]
    assert (vs_bad["a"], vs_bad["b"], vs_bad["phones"]) == ("policy", "mllm", 4)
    assert abs(vs_bad["difference"] - (1 - 1 / 12)) < 1e-9 and vs_bad["ci95"][0] > 0.5
    assert vs_bad["p_holm"] < 0.05 and vs_bad["holm_tests"] == 2
    assert vs_same["difference"] == 0 and vs_same["p_value"] == 1
    text = side_by_side_table(c)
    assert "policy − mllm: +91.7 points on the 4 phone(s) both ran" in text and "a difference unlikely to be noise" in text
    assert "policy − expert: +0.0 points" in text and "not distinguishable from noise" in text


def test_only_the_phones_both_ran_are_compared_and_other_tasks_are_not() -> None:
    a = evaluation("policy", {"100": 1, "101": 1}, phones=("100", "101"))
    b = evaluation("mllm", {"101": 0, "102": 0}, phones=("101", "102"))
    c = side_by_side({"a": a, "b": b})
    assert not c["same_phones"] and c["tests"][0]["phones"] == 1
    other = evaluation("text", {"100": 1})
    other["per_task"] = {"open_clock": other["per_task"]["open_clock"]}  # ran one task only
    assert side_by_side({"a": a, "text": other})["tests"] == []
