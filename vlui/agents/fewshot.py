"""Few-shot examples for the LLM and MLLM agents, drawn from a vlui dataset (docs/dataset.md), as B-MoCA draws them
from its demonstrations (App. D.1): each example is one transition (instruction, observation, action, next
observation, reward) of a successful episode.

The examples of an episode are drawn with ``random.Random`` seeded by the setting's seed and the task: every episode
of a task gets the same ones (the prompts stay comparable, and the response cache answers a run again), preferring
transitions of the same task and filling up from the others, each on a screen no other example of the prompt shows
(a dataset of several episodes per task and phone holds the same transition many times).

The MLLM agent shows an example's screens as it shows the current one: the full-resolution screen observed at
``agent.screenshot_height`` x ``screenshot_width``, from a dataset collected with ``save_full_screen=true``
(:attr:`Transition.screen_full`); a dataset without it holds only the observation it was collected at (256 x 128 by
default), which is stretched to that size and much less legible than the current screen (the agent warns).

A demonstration's action is written as the text action option it is (:func:`text_action`): a tap on a listed element
is ``tap(n)``, a swipe B-MoCA names is ``swipe("up")``, a key is ``press(...)``, anything else ``dual-gesture(...)``.

Held out means held out: examples never come from the phones being evaluated. :meth:`Demonstrations.refuse_overlap`
says so in one line before the run, and an episode on one of the dataset's phones is refused at its start.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlui.data.format import read_dataset
from vlui.env.ui_text import DIRECTIONS, Element
from vlui.errors import VluiError

KEYS = {"BACK": "BACK", "HOME": "HOME", "APP_SWITCH": "OVERVIEW"}
SWIPE_TOLERANCE = 0.1  # how far (normalised) a demonstrated swipe may be from one B-MoCA names to be called by it


@dataclass(frozen=True)
class Transition:
    """One step of a demonstration: the screens (PNG, at the dataset's observation size, and at full resolution when
    it was collected with ``save_full_screen=true``, else None) and UI trees (None when the dataset has none) before
    and after its action, and the action as the dataset stores it."""

    task: str
    snapshot: str
    instruction: str
    screen: bytes
    xml: str | None
    next_screen: bytes
    next_xml: str | None
    kind: str
    key: str | None
    touch: tuple[float, float]
    lift: tuple[float, float]
    reward: float
    screen_full: bytes | None = None
    next_screen_full: bytes | None = None

    @property
    def shown(self) -> bytes:
        """The screen before the action, as sharp as the dataset has it: what tells two examples' screens apart."""
        return self.screen_full if self.screen_full is not None else self.screen


def device_size(elements: list[Element]) -> tuple[int, int]:
    """The screen size (width, height) a UI tree's bounds are in: what its outermost elements reach."""
    return (max((e.bounds[2] for e in elements), default=1), max((e.bounds[3] for e in elements), default=1))


def text_action(t: Transition, elements: list[Element] | None) -> str:
    """The text action option a demonstrated action is, for a screen with ``elements`` (None: no UI tree)."""
    (ty, tx), (ly, lx) = t.touch, t.lift
    if t.kind == "key" and t.key in KEYS:
        return f'press("{KEYS[t.key]}")'
    if t.kind == "swipe":
        for name, d in DIRECTIONS.items():
            if max(abs(a - b) for a, b in zip(d, (ty, tx, ly, lx), strict=True)) <= SWIPE_TOLERANCE:
                return f'swipe("{name}")'
    if t.kind == "tap" and elements:
        width, height = device_size(elements)
        x, y = tx * width, ty * height
        hits = [e for e in elements if e.has_content and e.bounds[0] <= x < e.bounds[2] and e.bounds[1] <= y < e.bounds[3]]
        clickable = [e for e in hits if e.clickable] or hits
        if clickable:
            e = min(clickable, key=lambda e: (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1]))
            return f"tap({e.index})"
    return f"dual-gesture({ty:.2f}, {tx:.2f}, {ly:.2f}, {lx:.2f})"


class Demonstrations:
    """The successful episodes of a dataset, as transitions to draw few-shot examples from."""

    COLUMNS = ("episode_id", "step", "task_id", "snapshot_id", "instruction", "screen", "screen_full", "xml",
               "action_kind", "action_key", "touch", "lift", "reward", "is_last", "success")

    def __init__(self, root: str | Path, need_xml: bool = False) -> None:
        self.root = Path(root)
        _, table = read_dataset(self.root)
        rows = table.select(list(self.COLUMNS)).to_pylist()
        self.snapshots = sorted({str(r["snapshot_id"]) for r in rows})
        episodes: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            if r["success"]:
                episodes[r["episode_id"]].append(r)
        self.transitions: list[Transition] = []
        for steps in episodes.values():
            steps.sort(key=lambda r: r["step"])
            for a, b in zip(steps, steps[1:], strict=False):
                if a["is_last"] or a["action_kind"] is None:
                    continue
                self.transitions.append(Transition(
                    a["task_id"], str(a["snapshot_id"]), a["instruction"], a["screen"], a["xml"], b["screen"],
                    b["xml"], a["action_kind"], a["action_key"], tuple(a["touch"]), tuple(a["lift"]),
                    float(a["reward"]), a["screen_full"], b["screen_full"]))
        if not self.transitions:
            raise VluiError(f"the few-shot dataset {self.root} has no successful episode to draw examples from")
        if need_xml and any(t.xml is None for t in self.transitions):
            raise VluiError(f"the few-shot dataset {self.root} has no UI trees, which agent=text shows as the "
                            "observations: collect it with save_xml=true")

    @property
    def full_screens(self) -> bool:
        """Whether every transition has its screens at full resolution (``save_full_screen=true``)."""
        return all(t.screen_full is not None and t.next_screen_full is not None for t in self.transitions)

    def refuse_overlap(self, snapshots: Iterable[str], what: str = "the evaluated phones") -> None:
        """One line when the dataset holds episodes on any of ``snapshots``: few-shot examples from the phones an
        agent is measured on would make the measure a test on training data."""
        shared = sorted(set(map(str, snapshots)) & set(self.snapshots))
        if shared:
            listed = ", ".join(shared[:8]) + (f" and {len(shared) - 8} more" if len(shared) > 8 else "")
            raise VluiError(f"the few-shot dataset {self.root} has episodes on {what} ({listed}): draw examples from a "
                            "dataset of other phones (agent.few_shot_data=..., e.g. one collected on "
                            "env.snapshots=train)")

    def sample(self, k: int, seed: int, task: str | None) -> list[Transition]:
        """``k`` transitions, seeded by ``seed`` and ``task``: of ``task`` first, then of the other tasks, no two on
        the same screen (fewer when the dataset has fewer screens)."""
        rng = random.Random(f"{seed}/{task}")
        chosen: list[Transition] = []
        seen: set[bytes] = set()
        for mine in (True, False):
            group = [t for t in self.transitions if (t.task == task) == mine]
            for t in rng.sample(group, len(group)):
                if len(chosen) == k:
                    return chosen
                if t.shown not in seen:
                    seen.add(t.shown)
                    chosen.append(t)
        return chosen
