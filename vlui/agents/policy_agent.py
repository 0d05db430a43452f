"""A trained policy as an agent: loads a policy export (JSON + safetensors, no pickle) and acts on screens."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from vlui.errors import VluiError
from vlui.models.policy import load_policy
from vlui.tasks.catalog import Task


class PolicyAgent:
    def __init__(self, checkpoint: str | None, device: str = "auto") -> None:
        if not checkpoint:
            raise VluiError("agent=policy needs a checkpoint: add checkpoint=checkpoints/<experiment>/<run>")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.policy = load_policy(checkpoint, device)

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        pass  # the policy is memoryless

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        return self.policy.select_action(obs["screen"][None], [obs["instruction"]])[0]

    def act_batch(self, screens: np.ndarray, instructions: list[str]) -> np.ndarray:
        """``(B, H, W, 3)`` uint8 screens -> ``(B, 4)`` actions in one forward pass."""
        return self.policy.select_action(screens, instructions)
