"""Watching a constrained task's constraints while an episode runs (:class:`vlui.tasks.task.Constraint`).

What is watched is what any device gives, the simulated phone or a real one over ADB: the UI tree the agent acted on
(a tap's element), the UI tree after the step (the app in front, the page shown) and the log lines of the step
(``ActivityTaskManager: START u0 {... cmp=<package>/<activity> ...}``, which Android prints for every activity
started, so an app opened and left within one step is seen too). A constraint is broken once, at the first step that
breaks it: :class:`Violation` says where and on what evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from vlui.android.apps import apps
from vlui.android.logcat import parse_threadtime
from vlui.env.actions import ParsedAction
from vlui.env.ui_text import Element
from vlui.tasks.task import Constraint


@dataclass(frozen=True)
class Violation:
    """A broken constraint: its level and words, the step that broke it (1-based) and what showed it."""

    level: str
    words: str
    step: int
    evidence: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _matches(e: Element, c: Constraint) -> bool:
    return (not c.id or e.resource_id == c.id) and (not c.text or e.text == c.text or e.content_desc == c.text)


def _inside(e: Element, x: float, y: float) -> bool:
    x1, y1, x2, y2 = e.bounds
    return x1 <= x < x2 and y1 <= y < y2


class ConstraintWatch:
    """The constraints of one episode: :meth:`step` is told each step's action, log lines and UI trees and returns
    the constraints it broke."""

    def __init__(self, constraints: Sequence[Constraint]) -> None:
        self.constraints = list(constraints)
        self.violations: list[Violation] = []
        self._started = {c: re.compile(rf"^START u0 .*\bcmp={re.escape(apps()[c.app].package)}/")
                         for c in self.constraints if c.level == "app"}

    def step(self, step: int, action: ParsedAction | None, size: tuple[int, int], before: Sequence[Element],
             lines: Sequence[str], after: Sequence[Element]) -> list[Violation]:
        """The constraints broken by step ``step``: ``action`` (None: nothing was done) on the screen ``before`` of
        ``size`` (width, height), which printed ``lines`` and led to the screen ``after``."""
        broken = {v.words for v in self.violations}
        new = []
        for c in self.constraints:
            if c.words in broken:
                continue
            evidence = self._evidence(c, action, size, before, lines, after)
            if evidence:
                new.append(Violation(c.level, c.words, step, evidence))
        self.violations += new
        return new

    def _evidence(self, c: Constraint, action: ParsedAction | None, size: tuple[int, int],
                  before: Sequence[Element], lines: Sequence[str], after: Sequence[Element]) -> str | None:
        if c.level == "app":
            package = apps()[c.app].package
            for line in lines:
                fields = parse_threadtime(line)
                if fields and fields["tag"] == "ActivityTaskManager" and self._started[c].match(fields["message"]):
                    return line
            if after and after[0].package == package:
                return f"{package} in front"
            return None
        if c.level == "page":
            shown = next((e for e in after if _matches(e, c)), None)
            return None if shown is None else f"page shown: {shown.resource_id or shown.text}"
        if action is None or action.kind not in ("tap", "long_press", "type"):
            return None
        if action.kind == "type":  # text goes to the field that has focus
            hit = next((e for e in before if e.focused), None)
            done = "typed into {}"
        else:
            w, h = size
            x, y = action.touch[1] * w, action.touch[0] * h
            # the element the touch lands on: the last clickable under it in the dump's (drawing) order, so a dialog
            # over a list takes it, not the list's row beneath it
            hit = next((e for e in reversed(before) if e.clickable and e.enabled and _inside(e, x, y)), None)
            done = ("tapped" if action.kind == "tap" else "long-pressed") + f" {{}} at ({x:.0f}, {y:.0f})"
        if hit is None:
            return None
        by_index = {e.index: e for e in before}

        def chain(e: Element) -> list[int]:  # the element and its ancestors
            out = [e.index]
            while out[-1] in by_index and by_index[out[-1]].parent in by_index:
                out.append(by_index[out[-1]].parent)
            return out

        # the tapped element is the named one, holds it (a row around the named title) or is inside it
        named = next((e for e in before if _matches(e, c) and (hit.index in chain(e) or e.index in chain(hit))), None)
        return None if named is None else done.format(named.resource_id or named.text)
