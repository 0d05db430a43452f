"""docs/architecture.md's recipe for a new algorithm, followed in one file: its settings' dataclass, its LightningModule,
one entry of ALGORITHMS and one YAML. ``python train.py algo=<name>`` then trains and exports it like BC and IQL,
with nothing else in vlui changed; and every algorithm vlui ships is registered the same way."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from vlui.algos.base import PolicyModule, validate
from vlui.algos.settings import ALGORITHMS, Algorithm, OptimConfig, from_mapping
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


def test_every_algorithm_vlui_ships_is_registered_once_with_its_settings_and_yaml(tmp_path: Path) -> None:
    yamls = {p.stem for p in (CONFIG_DIR / "algo").glob("*.yaml")}
    assert yamls == set(ALGORITHMS)
    for name, algo in ALGORITHMS.items():
        module = algo.load()
        assert issubclass(module, PolicyModule) and module.Settings is algo.settings
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
