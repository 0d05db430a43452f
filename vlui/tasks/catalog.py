"""The task catalog: B-MoCA's 60 daily tasks as data (``data/bmoca.yaml``), named task sets, and success detectors.

A detector reads logcat ``threadtime`` lines from either backend, keeps those whose tag is the task's
``log_tag`` (AndroidEnv's filter), and reports the first whose message ``re.match``-es the task's regex.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from vlui.adb.state import READERS, SETTERS
from vlui.android.logcat import parse_threadtime
from vlui.android.state import state_paths
from vlui.errors import VluiError
from vlui.resources import read_yaml
from vlui.tasks.task import Task
from vlui.tasks.templates import FAMILIES, instance_from_id

DATA = Path(__file__).resolve().parent / "data" / "bmoca.yaml"
TASK_SETS = ("representative", "open_app", "supported", "all")


@lru_cache(maxsize=1)
def tasks() -> dict[str, Task]:
    """Task id -> Task, in the paper's order."""
    raw = read_yaml(DATA)["tasks"]
    return {t["id"]: Task(**{**t, "apps": tuple(t["apps"])}) for t in raw}


def task_set(name: str) -> list[str]:
    """The ids of a named set: ``representative`` (the paper's six), ``open_app`` (the 14 "open the … app"
    tasks), ``supported`` (those the simulated phone runs) or ``all`` (60)."""
    all_tasks = tasks()
    if name == "representative":
        return [t.id for t in all_tasks.values() if t.representative]
    if name == "open_app":
        return [t.id for t in all_tasks.values() if t.id.startswith("open_")]
    if name == "supported":
        return [t.id for t in all_tasks.values() if t.sim]
    if name == "all":
        return list(all_tasks)
    raise VluiError(f"unknown task set {name!r}; choose from: {', '.join(TASK_SETS)} (or give a list of task ids)")


def resolve_tasks(spec: Any, backend: str = "sim") -> list[Task]:
    """Tasks from a config value: a set name, one task id, or a list of ids. Ids may name parameterized
    instances (``create_alarm@0630``, see :mod:`vlui.tasks.templates`). On the simulated phone, tasks it does not
    support yet are refused with a message that lists them; over ADB, so are tasks whose starting state or state
    check no shell command reaches (:mod:`vlui.adb.state`)."""
    if isinstance(spec, str):
        ids = task_set(spec) if spec in TASK_SETS else [spec]
    elif isinstance(spec, Iterable):
        ids = [str(s) for s in spec]
    else:
        raise VluiError(f"tasks must be a set name ({', '.join(TASK_SETS)}) or a list of task ids, not {spec!r}")
    templated = {i: instance_from_id(i) for i in ids if "@" in i}  # a malformed one fails here, in one line
    unknown = [i for i in ids if i not in tasks() and i not in templated]
    if unknown:
        words = [w for w in unknown[0].lower().split("_") if len(w) >= 3]
        close = ", ".join(sorted(t for t in tasks() if any(w in t for w in words))[:6])
        raise VluiError(f"unknown task id(s) {', '.join(unknown) or repr('')}" + (f"; similar: {close}" if close else "")
                        + f"; sets: {', '.join(TASK_SETS)}; template families: {', '.join(FAMILIES)}; all ids: "
                        "vlui/tasks/data/bmoca.yaml")
    if not ids:
        raise VluiError("the task list is empty")
    chosen = [templated[i] if i in templated else tasks()[i] for i in ids]
    if backend == "sim":
        missing = [t.id for t in chosen if not t.sim]
        if missing:
            raise VluiError(f"the simulated phone does not support task(s) {', '.join(missing)} yet; "
                            f"use tasks=supported, or env=adb with a real device")
    elif backend == "adb":
        out_of_reach = {t.id: sorted(set(state_paths(t.state)) - set(SETTERS))
                        + sorted(set(t.state_check) - set(READERS)) for t in chosen}
        out_of_reach = {task: fields for task, fields in out_of_reach.items() if fields}
        if out_of_reach:
            listed = ", ".join(f"{task} ({', '.join(fields)})" for task, fields in out_of_reach.items())
            raise VluiError(f"over ADB, no shell command reaches the state these tasks start from or are judged "
                            f"by: {listed}. It lives inside an app; leave those tasks out, or run them on the "
                            "simulated phone (env=sim)")
    return chosen


@dataclass
class Detector:
    """The success detector of one task: the first log line (tag filter, then ``re.match`` on the message)."""

    task: Task

    def match(self, lines: Sequence[str]) -> str | None:
        """The first line that signals success, or None. Lines that are not threadtime lines are ignored. A task
        without a ``log_tag`` (one judged by its ``state_check``) never matches."""
        if not self.task.log_tag:
            return None
        for line in lines:
            fields = parse_threadtime(line)
            if fields is None or fields["tag"] != self.task.log_tag:
                continue
            if self.task.pattern.match(fields["message"]):
                return line
        return None
