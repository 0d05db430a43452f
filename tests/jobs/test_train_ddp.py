"""train.py with Lightning's DDP: two real CPU processes (gloo), each on its own shard, ending with the same weights."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.conftest import ROOT
from tests.jobs.test_train import tiny
from vlui.cli import compose
from vlui.data.datamodule import DemoDataModule
from vlui.models.policy import load_policy

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_ddp_trains_two_processes_on_disjoint_shards_that_end_with_the_same_weights(tmp_path: Path,
                                                                                     tiny_dataset: Path) -> None:
    steps = 2
    overrides = tiny(tmp_path, tiny_dataset, "trainer=ddp", f"trainer.max_steps={steps}",
                     f"data.steps_per_epoch={steps}")
    data_cfg = compose("train", overrides, output_dir=tmp_path / "run").data
    data = DemoDataModule(str(tiny_dataset), val_fraction=data_cfg.val_fraction,
                          image_height=data_cfg.observation_height, image_width=data_cfg.observation_width,
                          on_device=False, seed=0)
    data.setup()
    train_rows = sorted(data.frame_of[data.train_set.obs].tolist())  # the samples' screens, as batches name them
    batch = math.ceil(len(train_rows) / (2 * steps))  # the two ranks' batches of one epoch cover the training set
    probe = tmp_path / "probe"
    # debug=tiny (one CPU process by default) with trainer=ddp: the trainer group's two devices are what runs
    out = subprocess.run([sys.executable, "train.py", *overrides, f"data.batch_size={batch}",
                          f"hydra.run.dir={tmp_path}/run", f"+callbacks.shards.out_dir={probe}",
                          "+callbacks.shards._target_=tests.jobs.shard_probe.RecordShards"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "distributed_backend=gloo" in out.stdout + out.stderr
    ranks = [torch.load(probe / f"rank{r}.pt", weights_only=True) for r in (0, 1)]
    assert [r["rank"] for r in ranks] == [0, 1] and all(r["world_size"] == 2 for r in ranks)

    # different shards: step by step, rank 0's batch then rank 1's go through the training set once, no sample twice
    # (the same screens, as many times as the training set has them)
    assert all(len(r["frames"]) == steps and all(len(b) == batch for b in r["frames"]) for r in ranks)
    seen = [row for step in range(steps) for r in ranks for row in r["frames"][step]]
    first_pass = seen[:len(train_rows)]
    assert sorted(first_pass) == train_rows

    # the same weights on both ranks at the end (gradients were averaged), moved by training, and exported by rank 0
    final0, final1 = ranks[0]["final"], ranks[1]["final"]
    assert final0.keys() == final1.keys()
    assert all(torch.equal(final0[k], final1[k]) for k in final0), [k for k in final0 if not torch.equal(
        final0[k], final1[k])]
    assert any(not torch.equal(final0[k], ranks[0]["initial"][k]) for k in final0)
    exported = load_policy(tmp_path / "ckpt" / "default" / "bc-efficientnet_b0-seed0").state_dict()
    assert all(torch.equal(exported[k].cpu(), final0[k]) for k in exported)
    assert out.stdout.count("policy exported") == 1
