"""Uniformly random dual-gestures: the floor every policy must beat."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from vlui.agents.base import AgentBase
from vlui.agents.settings import RandomAgentConfig
from vlui.tasks.catalog import Task


class RandomAgent(AgentBase):
    reads: ClassVar[tuple[str, ...]] = ()  # it looks at nothing

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_settings(cls, agent: RandomAgentConfig, seed: int = 0) -> RandomAgent:
        return cls(seed)

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        return self.rng.uniform(-1.0, 1.0, 4).astype(np.float32)
