"""A task: an instruction, a step limit, how success is detected (a log tag and regex, or a check of the device's
state), and the state the device starts from. :mod:`vlui.tasks.catalog` holds B-MoCA's 60 and
:mod:`vlui.tasks.templates` makes parameterized ones."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vlui.android.state import state_problem
from vlui.errors import VluiError


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
    pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", re.compile(self.regex))
        problem = state_problem(self.state) if self.state else None
        if problem:  # a task file's mistake is found when the catalog is read, before any episode runs
            raise VluiError(f"task {self.id}: state: {problem}")
