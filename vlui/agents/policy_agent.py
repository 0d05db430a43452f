"""A trained policy as an agent: loads a policy export (JSON + safetensors, no pickle) and acts on screens."""

from __future__ import annotations

import numpy as np
import torch

from vlui.agents.base import AgentBase
from vlui.agents.settings import PolicyAgentConfig
from vlui.env.agent import OneEpisodeAtATime
from vlui.errors import VluiError
from vlui.models.policy import load_policy
from vlui.spec import Memory, ObsActionSpec, Past


class PolicyAgent(OneEpisodeAtATime, AgentBase):
    """A policy export as an agent; one that reads the episode's past steps (``model.history``) gets them from the
    rollout, or keeps them itself when it acts on one phone."""

    def __init__(self, checkpoint: str | None, device: str = "auto", avoid_repeats: bool = False) -> None:
        if not checkpoint:
            raise VluiError("agent=policy needs a checkpoint: add checkpoint=checkpoints/<experiment>/<run>")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.policy = load_policy(checkpoint, device)
        self.avoid_repeats = avoid_repeats
        if avoid_repeats and self.policy.cfg.head != "pointer":
            raise VluiError(f"agent.avoid_repeats needs a policy with the pointer head (model.head=pointer); "
                            f"{checkpoint} has the {self.policy.cfg.head} head: leave agent.avoid_repeats=false")

    @property
    def spec(self) -> ObsActionSpec:
        """The screens the policy was trained on and how its actions read (stored in its export)."""
        return self.policy.spec

    @classmethod
    def from_settings(cls, agent: PolicyAgentConfig, seed: int = 0) -> PolicyAgent:
        return cls(agent.checkpoint, agent.device, agent.avoid_repeats)

    def memory(self) -> Memory:
        """A fresh record of one episode, keeping what the policy reads of it (and, with ``avoid_repeats``, the
        gestures it took on each screen)."""
        return self.policy.memory(self.avoid_repeats)

    def act_batch(self, screens: np.ndarray, instructions: list[str], past: Past | None = None) -> np.ndarray:
        """``(B, H, W, 3)`` uint8 screens (and the episodes' :class:`~vlui.spec.Past`) -> ``(B, 4)`` actions in one
        forward pass."""
        return self.policy.select_action(screens, instructions, past)
