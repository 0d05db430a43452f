"""DAgger: the expert labels the states a policy visits; train.py dagger.rounds=N trains on the labels too."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import ROOT
from tests.jobs.test_train import tiny
from vlui.cli import compose
from vlui.env.settings import EnvConfig
from vlui.data.datamodule import DemoDataModule
from vlui.data.format import read_info
from vlui.data.training import TrainingData
from vlui.env.actions import ActionParser
from vlui.errors import VluiError
from vlui.jobs import dagger, train
from vlui.models.policy import VLUIPolicy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.rollout import EpisodeRecord, Job, Step
from vlui.spec import ObsActionSpec

TAP = np.array([0.0, 0.0, 0.0, 0.0], np.float32)
SWIPE = np.array([0.5, 0.0, -0.5, 0.0], np.float32)


def _step(action, label, name: str) -> Step:
    return Step({"screen": name}, None, action, {"kind": "tap"}, 0.0, False, False, label=label)


def test_relabelling_puts_the_experts_actions_on_the_policys_states() -> None:
    record = EpisodeRecord(Job("airplane_on", "000", 0), "turn on airplane mode",
                           [_step(TAP, SWIPE, "a"), _step(SWIPE, TAP, "b")], final_observation={"screen": "c"})
    out = dagger.relabelled(record, ActionParser())
    assert [s.observation["screen"] for s in out.steps] == ["a", "b"]  # the states the policy visited
    assert np.array_equal(out.steps[0].action, SWIPE) and out.steps[0].parsed["kind"] == "swipe"  # the labels
    assert np.array_equal(out.steps[1].action, TAP) and out.steps[1].parsed["kind"] == "tap"
    assert out.final_observation == {"screen": "c"}
    # what the policy did is kept: the next state's previous action for a policy with model.history
    assert np.array_equal(out.steps[0].acted, TAP) and np.array_equal(out.steps[1].acted, SWIPE)


def test_a_state_the_expert_cannot_label_ends_the_relabelled_episode() -> None:
    record = EpisodeRecord(Job("airplane_on", "000", 0), "x", [_step(TAP, SWIPE, "a"), _step(TAP, None, "b"),
                                                                _step(TAP, TAP, "c")], final_observation={"screen": "d"})
    out = dagger.relabelled(record, ActionParser())
    assert [s.observation["screen"] for s in out.steps] == ["a"] and out.final_observation == {"screen": "b"}
    assert out.truncated and not out.terminated
    assert dagger.relabelled(EpisodeRecord(Job("a", "0", 0), "x", [_step(TAP, None, "a")]), ActionParser()) is None


@pytest.mark.integration
def test_a_round_labels_every_visited_state_with_the_experts_action(tmp_path: Path, tiny_dataset: Path) -> None:
    cfg = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2,
                      head_dims=[32])
    policy = VLUIPolicy(cfg, ObsActionSpec(64, 32))  # untrained: it wanders
    env = EnvConfig(observation_height=64, observation_width=32)
    stats = dagger.collect_round(policy, env, TrainingData.read(tiny_dataset), tmp_path / "round-1", 1, 1, seed=0,
                                 slots=4)
    assert stats["complete"] and stats["episodes"] == 6  # 2 tasks x 3 snapshots of the dataset, one each
    assert read_info(tmp_path / "round-1")["recipe"]["relabelled_by"] == "expert"
    rounds = pq.read_table(tmp_path / "round-1" / "episodes").to_pandas()
    demos = pq.read_table(tiny_dataset / "episodes").to_pandas()
    for (task, snap), episode in rounds.groupby(["task_id", "snapshot_id"]):
        first = episode.sort_values("step").iloc[0]
        demo = demos[(demos.task_id == task) & (demos.snapshot_id == snap) & (demos.step == 0)].iloc[0]
        # on the first screen (the same for both) the label is what the expert did in its demonstration
        assert np.allclose(first.action, demo.action), (task, snap)
    # the policy acted, not the labeller (who finishes these tasks): the untrained policy wanders to the step limit
    assert not rounds.success.any() and rounds[rounds.is_last].truncated.all() and demos.success.all()
    # and what it did is kept beside the labels
    acted = rounds[~rounds.is_last]
    assert acted.acted.notna().all() and rounds[rounds.is_last].acted.isna().all()
    assert any(not np.allclose(a, b) for a, b in zip(acted.acted, acted.action, strict=True))


@pytest.mark.integration
def test_a_round_rolls_out_on_phones_the_demonstrations_never_had(tmp_path: Path, tiny_dataset: Path) -> None:
    cfg = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2,
                      head_dims=[32])
    policy = VLUIPolicy(cfg, ObsActionSpec(64, 32))
    env = EnvConfig(observation_height=64, observation_width=32)
    run = compose("train", tiny(tmp_path, tiny_dataset, "dagger.snapshots=[random:2]"), output_dir=tmp_path / "run")
    phones = train.dagger_phones(run, env)
    assert phones == ["gen-0-0", "gen-0-1"]
    stats = dagger.collect_round(policy, env, TrainingData.read(tiny_dataset), tmp_path / "round-1", 1, 1, seed=0,
                                 slots=4, snapshots=phones)
    assert stats["complete"] and stats["episodes"] == 4  # the dataset's 2 tasks x the 2 phones given
    rounds = pq.read_table(tmp_path / "round-1" / "episodes").to_pandas()
    assert sorted(set(rounds.snapshot_id)) == phones and read_info(tmp_path / "round-1")["recipe"]["snapshots"] == phones


@pytest.mark.parametrize("phones, message", [
    ("[val:5]", "dagger.snapshots=val:5: DAgger trains on the phones it rolls out on, so they must be training phones"),
    ("[train,test]", "dagger.snapshots=test: DAgger trains"),
    ("[000,105]", "dagger.snapshots holds 105, a validation or test phone"),
    ("[val-0-3]", "dagger.snapshots holds val-0-3, a validation or test phone"),
])
def test_dagger_never_rolls_out_on_validation_or_test_phones(tmp_path: Path, phones: str, message: str) -> None:
    run = compose("train", tiny(tmp_path, tmp_path / "data", f"dagger.snapshots={phones}"), output_dir=tmp_path / "r")
    with pytest.raises(VluiError, match=re.escape(message)):
        train.dagger_phones(run, EnvConfig())


def test_dagger_phones_and_a_dataset_split_are_one_line_error(tmp_path: Path) -> None:
    run = compose("train", tiny(tmp_path, tmp_path / "data", "dagger.snapshots=[random:5]", "data.split=task"),
                  output_dir=tmp_path / "r")
    with pytest.raises(VluiError, match="dagger.snapshots cannot be used with data.split"):
        train.dagger_phones(run, EnvConfig())


@pytest.mark.integration
def test_train_runs_dagger_rounds_and_resumes_past_finished_ones(tmp_path: Path, tiny_dataset: Path, caplog) -> None:
    overrides = tiny(tmp_path, tiny_dataset, "dagger.rounds=1", "dagger.steps=2", "env.num_envs=4",
                     "model.head=pointer", "model.positions=true")
    result = train.run(compose("train", overrides, output_dir=tmp_path / "run"))
    assert [r["round"] for r in result["dagger"]] == [1] and result["dagger"][0]["labelled_states"] > 0
    export = Path(result["checkpoint_dir"]) / "dagger" / "round-1" / "model.safetensors"
    assert export.exists() and (tiny_dataset.parent / "tiny.dagger").is_dir()
    with caplog.at_level("INFO", logger="vlui.jobs.train"):
        again = train.run(compose("train", overrides, output_dir=tmp_path / "run2"))
    assert again["dagger"] == [] and "DAgger round 1 already done" in caplog.text


@pytest.mark.slow
def test_a_run_killed_between_dagger_rounds_resumes_to_the_same_policy(tmp_path: Path, tiny_dataset: Path) -> None:
    # a real SIGKILL to the process group once round 1 is exported; the same command finishes round 2 from there and
    # ends with the weights of a run that was never interrupted (each run on its own copy of the dataset, since the
    # rounds' demonstrations are kept beside it)
    def command(name: str) -> list[str]:  # called once per run: it copies the dataset
        data = Path(shutil.copytree(tiny_dataset, tmp_path / name / "data" / "tiny",
                                    ignore=shutil.ignore_patterns("features")))
        return [sys.executable, "train.py", *tiny(tmp_path / name, data, "dagger.rounds=2", "dagger.steps=2",
                                                   "env.num_envs=4", "model.head=pointer", "model.positions=true"),
                f"hydra.run.dir={tmp_path / name}/run"]

    def final(name: str) -> dict:
        (path,) = (tmp_path / name / "ckpt").rglob("dagger/round-2/model.safetensors")
        return load_file(str(path))

    whole = subprocess.run(command("whole"), cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert whole.returncode == 0, whole.stderr[-3000:]
    args = command("killed")
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 900  # a guard against a hang
    while time.time() < deadline and proc.poll() is None and not list(  # config.json: the export's last file
            (tmp_path / "killed" / "ckpt").rglob("dagger/round-1/config.json")):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not list((tmp_path / "killed" / "ckpt").rglob("dagger/round-2/model.safetensors"))  # died in between
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "DAgger round 1 already done" in out.stdout
    a, b = final("whole"), final("killed")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.integration
def test_each_round_decodes_its_screens_after_the_last_round_let_go_of_theirs(tmp_path: Path, tiny_dataset: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # a round's data module decodes every screen again (the demonstrations' and each round's): a dataset's frames
    # are the largest thing training holds, so two copies at once were what ran a 1,500-phone run out of memory
    modules, held = [], []
    setup = DemoDataModule.setup

    def counting(self, stage=None):
        held.append(sum(m.frames is not None for m in modules if m is not self))
        modules.append(self)
        return setup(self, stage)

    monkeypatch.setattr(DemoDataModule, "setup", counting)
    result = train.run(compose("train", tiny(tmp_path, tiny_dataset, "dagger.rounds=2", "dagger.steps=2",
                                             "env.num_envs=4"), output_dir=tmp_path / "run"))
    assert [r["round"] for r in result["dagger"]] == [1, 2]
    assert len(set(map(id, modules))) == 3 and held[0] == 0 and not any(held)
