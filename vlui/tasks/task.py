"""A task: an instruction, a step limit, how success is detected (a log tag and regex, or a check of the device's
state), the state the device starts from, and the user's constraints on how it is done. :mod:`vlui.tasks.catalog` holds
B-MoCA's 60, and its release 2.5's 131, and :mod:`vlui.tasks.templates` makes parameterized ones."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

from vlui.android.apps import apps
from vlui.android.state import state_problem
from vlui.errors import VluiError
from vlui.tasks.checks import check_problem

Level = Literal["app", "page", "component"]
LEVELS: tuple[str, ...] = get_args(Level)


@dataclass(frozen=True)
class Constraint:
    """A user's constraint on how a task is done, at one of AndroidArena's three levels (Xing et al. 2024, Sec. 4.2):

    - ``app``: an app the user prefers not to use (``app``: its key): broken when the app's window comes to the front
      or one of its activities starts;
    - ``page``: a page not to enter: broken when an element with resource id ``id`` (and text ``text``, where given)
      is on the screen after a step;
    - ``component``: an element not to tap: broken when a tap lands inside an element with resource id ``id`` (and
      text ``text``, where given) on the screen the agent saw.

    ``words`` is how the instruction states it ("without using the search bar"): a template puts it in the
    instruction; the results name it. A constrained task fails when a constraint is broken, even if its goal is
    reached (:class:`vlui.env.env.PhoneEnv` records which)."""

    level: Level
    words: str
    app: str = ""
    id: str = ""
    text: str = ""

    def problem(self) -> str | None:
        """Why this constraint cannot be checked, or None."""
        if self.level not in LEVELS:
            return f"level must be one of {', '.join(LEVELS)}, not {self.level!r}"
        if self.level == "app" and self.app not in apps():
            return f"app level needs app: one of {', '.join(apps())} (not {self.app!r})"
        if self.level != "app" and not (self.id or self.text):
            return f"{self.level} level needs the element's id or text"
        if not self.words.strip():
            return "words (how the instruction states the constraint) is empty"
        return None

    @staticmethod
    def read(entry: Any) -> Constraint:
        """A constraint from a task file's entry (a mapping of the fields), checked."""
        known = [f.name for f in fields(Constraint)]
        if not isinstance(entry, Mapping):
            raise ValueError(f"a constraint is a mapping of {', '.join(known)}, not {entry!r}")
        unknown = sorted(set(entry) - set(known))
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}; fields: {', '.join(known)}")
        missing = [k for k in ("level", "words") if k not in entry]
        if missing:
            raise ValueError(f"missing {missing[0]!r}")
        made = Constraint(**{k: str(v) for k, v in entry.items()})
        problem = made.problem()
        if problem:
            raise ValueError(problem)
        return made

    def describe(self) -> dict[str, str]:
        """The constraint as a results line shows it."""
        return {"level": self.level, "words": self.words}


@dataclass(frozen=True)
class Task:
    id: str
    instruction: str
    step_limit: int
    log_tag: str
    regex: str
    apps: tuple[str, ...]
    sim: bool = False  # supported by the simulated phone
    representative: str = ""  # the paper's short name for its six representative tasks
    regex_note: str = ""
    state: dict = field(default_factory=dict, compare=False)  # the device's starting state, set at reset
    # success read from the device's state where the log cannot say it (``{"volume.media": 7}``); see templates.py
    state_check: dict = field(default_factory=dict, compare=False)
    template: str = ""  # the template a parameterized task was generated from (``create_alarm``), else ""
    params: dict = field(default_factory=dict, compare=False)  # its parameters (``{"time": [6, 30]}``)
    constraints: tuple[Constraint, ...] = ()  # how the user wants it done (a constrained task); see Constraint
    # B-MoCA release 2.5's tasks (data/bmoca25.yaml): the task file (asset/tasks/...), the paper's task with the same
    # goal, the evaluator script that judges it there (bmoca/environment/evaluator_script/...) and what that script
    # checks, as data (vlui/tasks/checks.py), which judges the task after each step on either backend
    source: str = ""
    paper: str = ""
    evaluator: str = ""
    evaluator_check: list = field(default_factory=list, compare=False)
    unsupported: str = ""  # why the simulated phone does not run it yet, where it does not (sim false)
    pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", re.compile(self.regex))
        problem = state_problem(self.state) if self.state else None
        if problem:  # a task file's mistake is found when the catalog is read, before any episode runs
            raise VluiError(f"task {self.id}: state: {problem}")
        problem = check_problem(self.evaluator_check) if self.evaluator_check else None
        if problem:
            raise VluiError(f"task {self.id}: evaluator_check: {problem}")
