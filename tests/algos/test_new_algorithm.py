"""docs/architecture.md's recipe for a new algorithm, followed in one file: its settings' dataclass, its LightningModule,
one entry of ALGORITHMS and one YAML. ``python train.py algo=<name>`` then trains and exports it like BC and IQL
(offline) or PPO (online, from its own rollouts on the simulated phone), with nothing else in vlui changed; and every
algorithm vlui ships is registered the same way."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from tests.tapper import SNAPSHOT, TASK, clock_probability, uniform_tapper
from vlui.algos import losses
from vlui.algos.base import PolicyModule, validate
from vlui.algos.online import OnlineModule, episode_steps
from vlui.algos.settings import ALGORITHMS, Algorithm, OnlineConfig, OptimConfig, from_mapping
from vlui.cli import CONFIG_DIR, compose
from vlui.errors import VluiError
from vlui.jobs import train
from vlui.models.policy import load_policy


# ---------------------------------------------------------------------------------------------- the new algorithm
@dataclass
class L1Config:
    """Behaviour cloning with the mean absolute error (robust to the odd mislabelled step)."""

    name: str = "l1"
    optim: OptimConfig = field(default_factory=OptimConfig)
    scale: float = 1.0  # the loss's weight


class L1Module(PolicyModule):
    Settings: ClassVar[type] = L1Config

    def training_step(self, batch, batch_idx):
        text, mask = self.text(batch["instruction"])
        pred = self.policy.head.actions(self.policy.head_output(self.features(batch, text, mask)))
        loss = self.algo.scale * (pred - batch["actions"]).abs().mean()
        self.log("train/l1_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        validate(self, batch)


YAML = """# Behaviour cloning with the mean absolute error.
defaults:
  - /schema/algo/l1@_here_
  - _self_

scale: 2.0
"""


@pytest.fixture
def l1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The new algorithm registered (one entry of ALGORITHMS) and its YAML on Hydra's search path."""
    monkeypatch.setitem(ALGORITHMS, "l1", Algorithm(L1Config, f"{__name__}:L1Module"))
    (tmp_path / "configs" / "algo").mkdir(parents=True)
    (tmp_path / "configs" / "algo" / "l1.yaml").write_text(YAML)
    return f"hydra.searchpath=[file://{tmp_path / 'configs'}]"


@pytest.mark.integration
def test_a_new_algorithm_is_one_module_one_registry_entry_and_one_yaml(l1: str, tmp_path: Path,
                                                                      tiny_dataset: Path) -> None:
    cfg = compose("train", [l1, "algo=l1", "debug=tiny", f"paths.data_dir={tiny_dataset.parent}",
                            f"data.name={tiny_dataset.name}", f"paths.checkpoint_dir={tmp_path}/ckpt",
                            "trainer.max_steps=3"], output_dir=tmp_path / "run")
    assert cfg.algo.scale == 2.0 and cfg.algo.optim.lr == OptimConfig().lr  # the YAML's value, the schema's default
    result = train.run(cfg)
    policy = load_policy(result["policy"])
    assert json.loads((Path(result["policy"]) / "config.json").read_text())["algo"] == "l1"
    assert policy.select_action(np.zeros((1, 64, 32, 3), np.uint8), ["turn on airplane mode"]).shape == (1, 4)
    with pytest.raises(ConfigCompositionException) as err:  # its settings are typed like every other group's
        compose("train", [l1, "algo=l1", "algo.scale=much"], output_dir=tmp_path / "bad")
    assert "could not be converted to Float" in str(err.value.__cause__) + str(err.value)


# ---------------------------------------------------------------------------------------- a new online algorithm
@dataclass
class SelfImitationConfig(OnlineConfig):
    """Self-imitation: the policy's own successful episodes imitated, each iteration (DigiRL's filtered BC)."""

    name: str = "self_imitation"
    passes: int = 2  # passes over each iteration's steps


class SelfImitationModule(OnlineModule):
    Settings: ClassVar[type] = SelfImitationConfig

    def learn_from(self, records: list[Any]) -> dict[str, torch.Tensor]:
        steps = episode_steps(records, self.algo.step_cost)
        if not steps.screens:
            return {}
        return {**self.step_inputs(steps), "actions": torch.as_tensor(np.stack(steps.actions), device=self.device),
                "success": torch.tensor(steps.success, device=self.device)}

    def updates(self, iteration: int, batch: dict[str, torch.Tensor]) -> Iterator[dict[str, torch.Tensor]]:
        for _ in range(self.algo.passes):
            yield batch

    def training_step(self, batch, batch_idx):
        logp = self.distribution(self.fused(batch)).log_prob(batch["actions"])
        loss = losses.filtered_imitation_loss(logp, batch["success"])
        self.log("train/self_imitation_loss", loss)
        return loss


SELF_IMITATION_YAML = """# Self-imitation of the policy's successful episodes.
defaults:
  - /schema/algo/self_imitation@_here_
  - _self_

optim:
  lr: 1.0e-2
"""

@pytest.fixture
def self_imitation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The online algorithm registered (one entry of ALGORITHMS, learning from rollouts) and its YAML on Hydra's
    search path."""
    monkeypatch.setitem(ALGORITHMS, "self_imitation", Algorithm(SelfImitationConfig, f"{__name__}:SelfImitationModule",
                                                                learns_from="rollouts"))
    (tmp_path / "configs" / "algo").mkdir(parents=True)
    (tmp_path / "configs" / "algo" / "self_imitation.yaml").write_text(SELF_IMITATION_YAML)
    return f"hydra.searchpath=[file://{tmp_path / 'configs'}]"


@pytest.mark.integration
def test_a_new_online_algorithm_trains_from_its_own_rollouts_on_the_simulated_phone(self_imitation: str,
                                                                                     tmp_path: Path) -> None:
    start = uniform_tapper(tmp_path / "start")
    cfg = compose("train", [self_imitation, "algo=self_imitation", f"init={start}", f"algo.tasks=[{TASK}]",
                            f"env.snapshots=[{SNAPSHOT}]", f"algo.eval_snapshots=[{SNAPSHOT}]", "algo.iterations=3",
                            "algo.episodes=16", "env.num_envs=8", "algo.eval_every=1", "algo.checkpoint_every=1",
                            f"paths.root_dir={tmp_path}", f"paths.checkpoint_dir={tmp_path}/ckpt", "run_name=new",
                            "trainer.enable_progress_bar=false", "logger=csv"], output_dir=tmp_path / "run")
    assert cfg.algo.optim.lr == 1e-2 and cfg.algo.optim.scheduler == "constant"  # the YAML's, OnlineConfig's
    result = train.run(cfg)
    config = json.loads((Path(result["policy"]) / "config.json").read_text())
    assert (config["algo"], config["init"], config["iterations"]) == ("self_imitation", str(start), 3)
    assert config["recipe"]["env"]["snapshots"] == [SNAPSHOT]  # the phones it learnt on
    with open(Path(result["checkpoint_dir"]) / "curve.csv", newline="") as f:  # each rollout, then the final one
        assert [r["iteration"] for r in csv.DictReader(f)] == ["0", "1", "2", "3"]
    assert (Path(result["checkpoint_dir"]) / "last.ckpt").exists()  # a checkpoint every iteration, to resume from
    # it learnt from the episodes in which the detector fired: the Clock's cell is likelier than the uniform 1/8
    before = clock_probability(start)
    assert before == pytest.approx(1 / 8) and clock_probability(Path(result["policy"])) > 2 * before


def test_an_algorithm_learns_from_rollouts_exactly_when_its_settings_are_online_ones() -> None:
    with pytest.raises(VluiError, match="SelfImitationConfig: an algorithm learns from rollouts exactly when"):
        Algorithm(SelfImitationConfig, f"{__name__}:SelfImitationModule")
    with pytest.raises(VluiError, match="learns_from='demonstrations': choose from dataset, rollouts"):
        Algorithm(L1Config, f"{__name__}:L1Module", learns_from="demonstrations")


def test_every_algorithm_vlui_ships_is_registered_once_with_its_settings_and_yaml(tmp_path: Path) -> None:
    yamls = {p.stem for p in (CONFIG_DIR / "algo").glob("*.yaml")}
    assert yamls == set(ALGORITHMS)
    for name, algo in ALGORITHMS.items():
        module = algo.load()
        assert issubclass(module, PolicyModule) and module.Settings is algo.settings
        assert issubclass(module, OnlineModule) == (algo.learns_from == "rollouts")  # what it learns from, its base
        assert algo.settings().name == name
        # the YAML says only what differs from the dataclass (nothing, for these), so they cannot disagree
        composed = compose("train", [f"algo={name}"], output_dir=tmp_path / name).algo
        assert from_mapping(algo.settings, OmegaConf.to_container(composed, resolve=True)) == algo.settings()
        # besides, an algorithm learning online may say how many phones it steps side by side (ppo: env.num_envs)
        assert set(OmegaConf.load(CONFIG_DIR / "algo" / f"{name}.yaml")) <= {"defaults", "env"}


def test_an_unknown_algorithm_name_lists_the_known_ones() -> None:
    from vlui.algos.settings import algorithm

    with pytest.raises(VluiError, match="unknown algo 'sac'; choose from: bc, iql, ppo"):
        algorithm("sac")
