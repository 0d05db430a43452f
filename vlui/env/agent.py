"""What the rollout loop (:mod:`vlui.rollout`) asks of an agent. The agents of :mod:`vlui.agents` are these; any object
with the same methods is one too (``typing.Protocol``: nothing to inherit)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from vlui.tasks.task import Task


@runtime_checkable
class Agent(Protocol):
    """Acts on one environment: told the task at the start of each episode, then asked for each step's action."""

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        """A new episode of ``task`` begins (``info``: the environment's reset info)."""

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray | None:
        """The dual-gesture for observation ``obs`` (:mod:`vlui.env.actions`); None for a malformed text action,
        which costs a step and does nothing."""


@runtime_checkable
class BatchAgent(Agent, Protocol):
    """An agent without memory of the episode, which acts on many environments at once (one forward pass)."""

    def act_batch(self, screens: np.ndarray, instructions: list[str]) -> np.ndarray:
        """``(B, H, W, 3)`` uint8 screens and their instructions -> ``(B, 4)`` actions."""
