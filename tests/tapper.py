"""A policy for the online algorithms' tests to improve: a tiny one that taps a uniformly random cell of its 4x2
grid, one of which opens the Clock on snapshot 030, and how likely a policy is to touch that cell."""

from __future__ import annotations

from pathlib import Path

import torch

from vlui.env.env import make_env
from vlui.env.settings import EnvConfig
from vlui.models.policy import VLUIPolicy, export_policy, load_policy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.spec import ObsActionSpec

TASK, SNAPSHOT, CLOCK_CELL = "open_clock", "030", 1 * 2 + 1  # the Clock icon is under cell (1, 1) of the 4x2 grid


def uniform_tapper(folder: Path) -> Path:
    """A deliberately weak policy exported to ``folder/policy``: a tiny random one whose pointer scores are zeroed,
    so it taps a uniformly random cell (one of which opens the Clock on snapshot 030) and rarely swipes."""
    torch.manual_seed(0)
    cfg = ModelConfig(VisionConfig("efficientnet_b0", pretrained=None, freeze=True, feature_index=-2),
                      TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32], head="pointer",
                      positions=True, pointer_layers=0)
    policy = VLUIPolicy(cfg, ObsActionSpec(64, 32))
    with torch.no_grad():
        policy.head.cells[1].weight.zero_()
        policy.head.cells[1].bias.zero_()
        policy.head.gesture[-1].weight.zero_()
        policy.head.gesture[-1].bias.fill_(-3.0)
    return export_policy(policy, folder / "policy")


def clock_probability(policy_dir: Path) -> float:
    """How likely the policy is to touch the Clock's cell on the first screen."""
    policy = load_policy(policy_dir)
    env = make_env(EnvConfig(snapshots=[SNAPSHOT], observation_height=64, observation_width=32), [TASK])
    obs, _ = env.reset(seed=0, options={"task": TASK, "snapshot": SNAPSHOT})
    text, mask = policy.text.lookup([obs["instruction"]])
    with torch.no_grad():
        out = policy.head(policy.encoder(torch.as_tensor(obs["screen"][None]), text, mask))
    return float(torch.softmax(out["touch_logits"], -1)[0, CLOCK_CELL])
