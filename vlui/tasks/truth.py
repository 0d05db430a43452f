"""Each task's goal as a check on the simulated phone's own state (``data/truths.yaml``): the truth that a task's
detector (its logcat regex, or B-MoCA's evaluator check on the UI tree) is measured against by
``python -m vlui.study detectors`` (:mod:`vlui.study.detectors`).

A truth reads the state the apps keep through :meth:`vlui.device.Device.state_value`, which only the simulated phone
has: never the log, never the UI tree, so it cannot share a detector's mistakes. Relative tests (``rose``, ``fell``,
``changed``) compare with the value at the episode's start, which :meth:`Truth.start` reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from vlui.device import Device, item_meets
from vlui.errors import VluiError
from vlui.resources import read_yaml
from vlui.tasks.task import Task

TRUTHS = Path(__file__).resolve().parent / "data" / "truths.yaml"
RELATIVE = ("rose", "fell", "changed")
TESTS = ("in", "not", "about", "contains", "lacks", *RELATIVE)


def truth_problem(conditions: Any) -> str | None:
    """Why ``conditions`` (a task's entry in ``truths.yaml``) is not a truth, or None."""
    if not isinstance(conditions, list) or not conditions:
        return f"a truth is a non-empty list of conditions (path: test), not {conditions!r}"
    for cond in conditions:
        if not isinstance(cond, dict) or not cond:
            return f"a condition is a mapping of path: test, not {cond!r}"
        for path, test in cond.items():
            if not isinstance(path, str) or not path:
                return f"a path is a dotted name (volume.alarm, front.app), not {path!r}"
            if not isinstance(test, dict):
                continue
            if len(test) == 2 and set(test) == {"about", "within"}:
                continue
            if len(test) != 1 or next(iter(test)) not in TESTS:
                return f"{path}: a test mapping has one of {', '.join(TESTS)} (or about with within), not {test!r}"
            name, want = next(iter(test.items()))
            if name in RELATIVE and want is not True:
                return f"{path}: {name} takes true"
            if name in ("contains", "lacks") and not (isinstance(want, dict) and want):
                return f"{path}: {name} takes a mapping of an item's fields"
            if name == "in" and not (isinstance(want, list) and want):
                return f"{path}: in takes a non-empty list"
    return None


@lru_cache(maxsize=1)
def truths() -> dict[str, list[dict[str, Any]]]:
    """Task id -> its truth's conditions, as ``truths.yaml`` has them, each checked."""
    raw = read_yaml(TRUTHS)["truths"]
    for task_id, conditions in raw.items():
        problem = truth_problem(conditions)
        if problem:
            raise VluiError(f"{TRUTHS.name}: {task_id}: {problem}")
    return raw


def truth_conditions(task: Task) -> list[dict[str, Any]] | None:
    """The task's truth: its own, or, for a release task with the goal of one of the paper's, that task's; None
    where ``truths.yaml`` has none."""
    known = truths()
    if task.id in known:
        return known[task.id]
    return known.get(task.paper) if task.paper else None


@dataclass
class Truth:
    """Whether a task's goal holds on the simulated phone, read after each step. :meth:`start` once the episode's
    starting state is set; :meth:`holds` after every step."""

    task: Task
    conditions: list[dict[str, Any]]
    started: dict[str, Any] = field(default_factory=dict)  # the relative tests' values at the episode's start

    @classmethod
    def of(cls, task: Task) -> Truth:
        conditions = truth_conditions(task)
        if conditions is None:
            raise VluiError(f"task {task.id} has no truth yet: add its goal to vlui/tasks/data/truths.yaml")
        return cls(task, conditions)

    def start(self, device: Device) -> None:
        self.started = {path: device.state_value(path) for cond in self.conditions for path, test in cond.items()
                        if isinstance(test, dict) and next(iter(test)) in RELATIVE}

    def holds(self, device: Device) -> bool:
        return all(self._passes(path, test, device.state_value(path))
                   for cond in self.conditions for path, test in cond.items())

    def _passes(self, path: str, test: Any, have: Any) -> bool:
        if not isinstance(test, dict):
            return _plain(have) == _plain(test)
        name, want = next(iter(test.items()))
        if name == "in":
            return _plain(have) in [_plain(w) for w in want]
        if name == "not":
            return _plain(have) != _plain(want)
        if name == "about":
            return isinstance(have, (int, float)) and abs(have - want) <= test["within"]
        if name in ("contains", "lacks"):
            found = any(item_meets(item, want) for item in have or ())
            return found if name == "contains" else not found
        before = self.started[path]
        if name == "rose":
            return have > before
        if name == "fell":
            return have < before
        return have != before  # changed


def _plain(value: Any) -> Any:
    """A value compared as YAML writes it: a tuple (the focused field) as a list."""
    return list(value) if isinstance(value, tuple) else value

