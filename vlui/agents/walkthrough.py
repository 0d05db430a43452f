"""The expert walked through one task on a device, step by step: its gestures, the log and (when asked) every screen.

The expert's plans (:mod:`vlui.agents.expert`) are the one place that says how each task is done. Whatever else
needs a phone driven through a task uses them through this module instead of writing the recipe again: the gallery
of task screens (``python -m vlui.agents task-sheet``), the benchmarks' trajectories (:mod:`vlui.bench`) and the
tests that need a phone in a task's end state.

An episode here is the environment's: the snapshot is loaded, the task's starting state set and the log cleared
(:meth:`vlui.env.env.PhoneEnv.reset`), and the walk ends when the task's detector fires or its step limit is reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from vlui.agents.expert import ExpertAgent
from vlui.device import Device
from vlui.env.env import PhoneEnv
from vlui.pictures import sheet
from vlui.tasks.catalog import resolve_tasks, task_set

Gesture = tuple  # ("tap", x, y) | ("swipe", x1, y1, x2, y2) | ("key", name), in device pixels: Device's own calls


@dataclass(frozen=True)
class Walkthrough:
    """One expert episode: ``gestures`` replay it on the snapshot (``getattr(device, g[0])(*g[1:])``), ``lines`` is
    the log from the reset on, ``screens`` the full-resolution screens after the reset and after each step (empty
    unless asked for), ``terminated`` whether the goal was reached and ``violations`` the constraints broken on the
    way (a constrained task's)."""

    task: str
    snapshot: str
    gestures: list[Gesture]
    lines: list[str]
    screens: list[np.ndarray]
    terminated: bool
    violations: tuple[dict, ...] = ()

    @property
    def success(self) -> bool:
        return self.terminated and not self.violations


class _Recording:
    """``device`` with a record of the gestures made on it."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.gestures: list[Gesture] = []

    def __getattr__(self, name: str):
        return getattr(self.device, name)

    def tap(self, x: float, y: float) -> None:
        self.gestures.append(("tap", x, y))
        self.device.tap(x, y)

    def swipe(self, x1: float, y1: float, x2: float, y2: float) -> None:
        self.gestures.append(("swipe", x1, y1, x2, y2))
        self.device.swipe(x1, y1, x2, y2)

    def key(self, name: str) -> None:
        self.gestures.append(("key", name))
        self.device.key(name)


def walkthrough(device: Device, task: str, snapshot: str, seed: int = 0, screens: bool = False) -> Walkthrough:
    """The expert's episode of ``task`` (an id, or a template instance's) from ``snapshot`` on ``device``, which is
    left in the state the episode ends in."""
    recording = _Recording(device)
    env = PhoneEnv(recording, resolve_tasks([task]), [snapshot], include_xml=True, include_screen=False)  # drawn below
    obs, info = env.reset(seed=seed, options={"task": task, "snapshot": snapshot})
    recording.gestures.clear()  # the reset's HOME is not the expert's
    mark = device.log_mark()
    agent = ExpertAgent()
    agent.reset(env.task, info, seed=seed)
    shots = [device.screenshot()] if screens else []
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        if screens:
            shots.append(device.screenshot())
    return Walkthrough(task, snapshot, recording.gestures, device.log_lines(mark), shots, terminated,
                       tuple(info.get("violations", ())))


def task_sheet(dev: Device, snapshot: str, tasks: Sequence[str] | None = None, columns: int = 7) -> Image.Image:
    """Every screen of the expert's episodes of ``tasks`` (default: the six representative ones) on ``snapshot``,
    on the device ``dev``."""
    shots = []
    for task in tasks or task_set("representative"):
        walk = walkthrough(dev, task, snapshot, screens=True)
        shots += [(f"{task} {i}", im) for i, im in enumerate(walk.screens)]
    return sheet(shots, columns=columns)
