"""Every config composes, every option of every group composes, and the schemas reject mistakes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from vlui.cli import CONFIG_DIR, compose

JOBS = ["train", "collect", "evaluate"]
# The groups each job's defaults list selects; every option in them must compose into that job.
GROUPS = {
    "train": ["algo", "model", "model/vision", "model/text", "data", "env", "trainer", "logger", "callbacks",
              "experiment", "debug"],
    "collect": ["env", "agent"],
    "evaluate": ["env", "agent"],
}


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))


def cases():
    for job in JOBS:
        yield pytest.param(job, [], id=f"{job}")
        for group in GROUPS[job]:
            for option in options(group):
                yield pytest.param(job, [f"{group}={option}"], id=f"{job}:{group}={option}")


@pytest.mark.parametrize(("job", "overrides"), list(cases()))
def test_every_config_composes_and_resolves(job: str, overrides: list[str], tmp_path: Path) -> None:
    cfg = compose(job, overrides, output_dir=tmp_path)
    resolved = OmegaConf.to_container(cfg, resolve=True)  # every interpolation resolves
    assert resolved["task_name"] == job
    assert Path(resolved["paths"]["root_dir"]) == CONFIG_DIR.parent
    assert not OmegaConf.missing_keys(cfg)


def test_every_group_has_options() -> None:
    for groups in GROUPS.values():
        for group in groups:
            assert options(group), f"{group} has no options"


def test_experiments_reproduce_the_paper_recipes(tmp_path: Path) -> None:
    bc = compose("train", ["experiment=bmoca_bc"], output_dir=tmp_path)
    assert (bc.algo.name, bc.trainer.max_steps, bc.data.batch_size, bc.algo.optim.lr) == ("bc", 4000, 512, 3e-4)
    assert bc.algo.optim.scheduler == "cosine" and bc.model.vision.name == "efficientnet_b0"
    assert (bc.data.image_height, bc.data.image_width, bc.model.hidden_dim) == (256, 128, 768)
    assert list(bc.model.head_dims) == [1024, 1024]
    iql = compose("train", ["experiment=bmoca_iql"], output_dir=tmp_path)
    assert (iql.algo.name, iql.trainer.max_steps, iql.data.batch_size) == ("iql", 20000, 512)


def test_command_line_overrides_win_over_experiments(tmp_path: Path) -> None:
    cfg = compose("train", ["experiment=quickstart", "algo=iql", "trainer.max_steps=7"], output_dir=tmp_path)
    assert cfg.algo.name == "iql" and cfg.trainer.max_steps == 7 and cfg.experiment == "quickstart"


def test_evaluate_defaults_to_the_bmoca_protocol(tmp_path: Path) -> None:
    cfg = compose("evaluate", [], output_dir=tmp_path)
    assert (cfg.tasks, cfg.env.snapshots, cfg.runs, cfg.agent.name) == ("representative", "test", 3, "policy")
    collect = compose("collect", [], output_dir=tmp_path)
    assert (collect.tasks, collect.env.snapshots, collect.agent.name) == ("representative", "train", "expert")


def test_checkpoints_go_to_experiment_and_run(tmp_path: Path) -> None:
    cfg = compose("train", ["experiment=bmoca_bc", "seed=3"], output_dir=tmp_path)
    dirpath = Path(cfg.callbacks.model_checkpoint.dirpath)
    assert dirpath.parts[-3:] == ("checkpoints", "bmoca_bc", "bc-efficientnet_b0-seed3")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("algo.bogus=1", "Key 'bogus' not in 'BCConfig'"),
        ("algo.optim.lr=fast", "could not be converted to Float"),
        ("model.vision.freeze=maybe", "is not a valid bool"),
        ("trainer.max_step=10", "Key 'max_step' not in 'TrainerConfig'"),
        ("data.batch_size=big", "could not be converted to Integer"),
        ("env.snapshot=test", "Key 'snapshot' not in 'EnvConfig'"),
    ],
)
def test_schema_rejects_unknown_keys_and_wrong_types(override: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigCompositionException) as err:
        compose("train", [override], output_dir=tmp_path)
    assert message in str(err.value.__cause__) or message in str(err.value)


def test_unknown_group_option_lists_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(Exception) as err:
        compose("train", ["algo=ppo"], output_dir=tmp_path)
    assert "bc" in str(err.value) and "iql" in str(err.value)
