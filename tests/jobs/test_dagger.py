"""DAgger: the expert labels the states a policy visits; train.py dagger.rounds=N trains on the labels too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.jobs.test_train import tiny
from vlui.cli import compose
from vlui.config import EnvConfig
from vlui.data.format import read_info
from vlui.env.actions import ActionParser
from vlui.jobs import dagger, train
from vlui.models.policy import VLUIPolicy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.rollout import EpisodeRecord, Job, Step

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
    policy = VLUIPolicy(cfg, (64, 32))  # untrained: it wanders
    env = EnvConfig(observation_height=64, observation_width=32)
    stats = dagger.collect_round(policy, env, tiny_dataset, tmp_path / "round-1", 1, 1, seed=0, slots=4)
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
def test_train_runs_dagger_rounds_and_resumes_past_finished_ones(tmp_path: Path, tiny_dataset: Path, capsys) -> None:
    overrides = tiny(tmp_path, tiny_dataset, "dagger.rounds=1", "dagger.steps=2", "dagger.envs=4",
                     "model.head=pointer", "model.positions=true")
    result = train.run(compose("train", overrides, output_dir=tmp_path / "run"))
    assert [r["round"] for r in result["dagger"]] == [1] and result["dagger"][0]["labelled_states"] > 0
    export = Path(result["checkpoint_dir"]) / "dagger" / "round-1" / "model.safetensors"
    assert export.exists() and (tiny_dataset.parent / "tiny.dagger").is_dir()
    again = train.run(compose("train", overrides, output_dir=tmp_path / "run2"))
    assert again["dagger"] == [] and "DAgger round 1 already done" in capsys.readouterr().out
