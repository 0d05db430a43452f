"""train.py end to end on tiny models: every experiment, BC and IQL, exports, resume after a kill, sweeps."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from tests.conftest import ROOT, run_python
from vlui.algos.base import PolicyModule
from vlui.cli import CONFIG_DIR, compose
from vlui.data.format import read_info
from vlui.errors import VluiError
from vlui.jobs import split as split_job
from vlui.jobs import train
from vlui.models.policy import load_policy
from vlui.spec import Memory

pytestmark = pytest.mark.integration


def tiny(tmp_path: Path, dataset: Path, *overrides: str) -> list[str]:
    return ["debug=tiny", f"paths.data_dir={dataset.parent}", f"data.name={dataset.name}",
            f"paths.checkpoint_dir={tmp_path}/ckpt", "logger=csv", *overrides]


def metrics(run_dir: Path) -> list[dict]:
    (path,) = run_dir.rglob("metrics.csv")
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
@pytest.mark.parametrize("experiment", sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml")))
def test_every_experiment_trains_and_exports_with_a_tiny_model(tmp_path: Path, tiny_dataset: Path,
                                                               experiment: str) -> None:
    # the experiment's recipe with debug=tiny's model, data and step count on top
    cfg = compose("train", tiny(tmp_path, tiny_dataset, f"experiment={experiment}", "debug=tiny",
                                "model.vision.name=efficientnet_b0", "model.vision.pretrained=null",
                                "model.text.kind=t5", "model.text.size=tiny", "trainer.accelerator=cpu",
                                "trainer.precision=32-true", "data.batch_size=8", "trainer.max_steps=4",
                                "data.steps_per_epoch=2"), output_dir=tmp_path / "run")
    result = train.run(cfg)
    policy = load_policy(result["policy"])
    actions = policy.select_action(np.zeros((1, 64, 32, 3), np.uint8), ["turn on airplane mode"])
    assert actions.shape == (1, 4)
    assert (Path(result["checkpoint_dir"]) / "last.ckpt").exists()


@pytest.mark.slow
def test_a_trained_policy_is_evaluated_on_generated_training_and_validation_phones(tmp_path: Path,
                                                                                   tiny_dataset: Path) -> None:
    from vlui.jobs import evaluate

    result = train.run(compose("train", tiny(tmp_path, tiny_dataset), output_dir=tmp_path / "run"))
    cfg = compose("evaluate", [f"checkpoint={result['policy']}", "tasks=[airplane_on,open_clock]",
                               "env.snapshots=[random:2,val:1]", "runs=1", "adaptive_metrics=false"],
                  output_dir=tmp_path / "eval")
    assert evaluate.run(cfg)["episodes"] == 2 * 3
    lines = (tmp_path / "eval" / "episodes.jsonl").read_text().splitlines()
    phones = {json.loads(x)["snapshot"] for x in lines}
    assert len(phones) == 3 and all(p.startswith(("gen-", "val-")) for p in phones), phones
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert set(results["per_snapshot"]) == phones  # every phone's success is reported
    assert set(results["per_split"]) == {"generated", "val"}  # generated training phones and validation phones apart


def test_a_random_image_encoder_is_said_and_a_pretrained_one_is_not(caplog) -> None:
    import logging

    from omegaconf import OmegaConf

    with caplog.at_level(logging.WARNING, logger="vlui.jobs.train"):
        train.warn_random_image_encoder(OmegaConf.create({"name": "efficientnet_b0", "pretrained": None,
                                                          "freeze": True}))
        train.warn_random_image_encoder(OmegaConf.create({"name": "tf_efficientnet_lite0", "pretrained": "package",
                                                          "freeze": True}))
    (record,) = caplog.records
    assert "efficientnet_b0 starts from RANDOM weights" in record.getMessage()
    assert "FROZEN" in record.getMessage() and "model/vision=efficientnet_lite0" in record.getMessage()


@pytest.mark.fast
def test_iql_logs_its_three_losses(tmp_path: Path, tiny_dataset: Path) -> None:
    train.run(compose("train", tiny(tmp_path, tiny_dataset, "algo=iql"), output_dir=tmp_path / "run"))
    logged = {k for row in metrics(tmp_path / "run") for k, v in row.items() if v}
    assert {"train/q_loss", "train/v_loss", "train/actor_loss", "train/samples_per_s", "val/bc_loss"} <= logged


@pytest.mark.slow
@pytest.mark.parametrize("algo", [["algo=bc", "model.history=true"],
                                  ["algo=iql", "algo.share_encoders=false", "model.history=true"],
                                  ["algo=iql", "algo.share_encoders=false", "model.history=4",
                                   "model.history_screens=true", "model.vision.freeze=false"]])
def test_a_policy_with_memory_trains_with_either_algorithm_and_keeps_it_in_its_export(tmp_path: Path,
                                                                                       tiny_dataset: Path,
                                                                                       algo: list[str]) -> None:
    # IQL's critics read the past too, their own encoder's included; o' was reached by a's action. A trained image
    # encoder (no cache): the past screens' pixels go through it
    result = train.run(compose("train", tiny(tmp_path, tiny_dataset, *algo, "model.head=pointer",
                                             "model.positions=true"), output_dir=tmp_path / "run"))
    policy = load_policy(result["policy"])
    k = policy.cfg.history
    assert k in (1, 4) and policy.encoder.previous is not None and (policy.encoder.past is not None) == (k == 4)
    screens = np.zeros((2, 64, 32, 3), np.uint8)
    past = policy.memory()
    past.add(screens[0], np.array([0.5, 0.0, -0.5, 0.0], np.float32))
    fresh = policy.memory()
    actions = policy.select_action(screens, ["turn on airplane mode"] * 2, Memory.batch([fresh, past], screens))
    assert actions.shape == (2, 4) and np.isfinite(actions).all()


def test_train_py_with_4_past_screens_reads_them_from_the_feature_cache_then_runs_dagger(
        tmp_path: Path, tiny_dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the quickstart's way: a frozen backbone whose features are computed once. A past screen is a row of that cache,
    # never run through the backbone again; DAgger's rollouts hand the policy its episodes' last 4 screens (resized
    # from the dataset's 256x128 as training resized them)
    handed = []
    past = PolicyModule.past

    def spy(self, batch, key="images", images=False, train=True):
        out = past(self, batch, key, images, train)
        handed.append((self.feature_cache.numel() > 0, None if out is None else out.screens))
        return out

    monkeypatch.setattr(PolicyModule, "past", spy)
    result = train.run(compose("train", tiny(tmp_path, tiny_dataset, "model.history=4", "model.history_screens=true",
                                             "model.vision.freeze=true", "model.vision.feature_index=-2",
                                             "data.augment.random_shift=0", "model.head=pointer",
                                             "model.positions=true", "dagger.rounds=1", "dagger.steps=2",
                                             "env.num_envs=4"), output_dir=tmp_path / "run"))
    assert handed and all(cached for cached, _ in handed)
    assert all(s.dtype == torch.float16 and s.dim() == 5 and s.shape[1] == 4 for _, s in handed)  # (B, K, C, h, w)
    assert result["dagger"][0]["labelled_states"] > 0
    policy = load_policy(result["policy"])
    assert (policy.cfg.history, policy.cfg.history_screens) == (4, True)


def test_iql_trains_the_pointer_head_on_success_filtered_and_mixed_data(tmp_path: Path, tiny_dataset: Path,
                                                                        random_dataset: Path) -> None:
    # IQL weighs the pointer head's own loss by the advantages; the random agent's failures are in the mix
    result = train.run(compose("train", tiny(tmp_path, tiny_dataset, "algo=iql", "model.head=pointer",
                                             "model.positions=true", f"data.mix=[{random_dataset}]"),
                               output_dir=tmp_path / "run"))
    logged = {k for row in metrics(tmp_path / "run") for k, v in row.items() if v}
    assert {"train/q_loss", "train/v_loss", "train/actor_loss", "val/loss"} <= logged
    policy = load_policy(result["policy"])
    assert policy.cfg.head == "pointer"
    assert policy.select_action(np.zeros((2, 64, 32, 3), np.uint8), ["call 911", "call 911"]).shape == (2, 4)


def test_a_missing_mixed_dataset_is_a_clear_error(tmp_path: Path, tiny_dataset: Path) -> None:
    with pytest.raises(VluiError, match="data.mix: no dataset at .*nope"):
        train.run(compose("train", tiny(tmp_path, tiny_dataset, "data.mix=[nope]"), output_dir=tmp_path / "run"))


@pytest.mark.slow
def test_bc_loss_goes_down(tmp_path: Path, tiny_dataset: Path) -> None:
    train.run(compose("train", tiny(tmp_path, tiny_dataset, "trainer.max_steps=40", "data.steps_per_epoch=20",
                                    "algo.optim.lr=1e-3", "data.augment.random_shift=0"),
                      output_dir=tmp_path / "run"))
    losses = [float(r["train/loss"]) for r in metrics(tmp_path / "run") if r.get("train/loss")]
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5])


def test_grounding_trains_beside_bc_logs_its_own_loss_and_learns(tmp_path: Path, tiny_xml_dataset: Path) -> None:
    # the quickstart's head and cached features of a frozen backbone; the loss of tapping the element a label names
    # falls as the policy learns to find it
    result = train.run(compose("train", tiny(tmp_path, tiny_xml_dataset, "data.grounding.weight=1.0",
                                             "model.head=pointer", "model.positions=true", "model.vision.freeze=true",
                                             "trainer.max_steps=40", "data.steps_per_epoch=20", "data.batch_size=16",
                                             "algo.optim.lr=3e-3", "data.augment.random_shift=0"),
                               output_dir=tmp_path / "run"))
    rows = metrics(tmp_path / "run")
    grounding = [float(r["train/grounding_loss"]) for r in rows if r.get("train/grounding_loss")]
    assert len(grounding) == 40 and len([r for r in rows if r.get("train/loss")]) == 40  # logged apart from BC's
    assert np.mean(grounding[-10:]) < 0.75 * np.mean(grounding[:5])
    assert load_policy(result["policy"]).select_action(np.zeros((1, 64, 32, 3), np.uint8), ["Clock"]).shape == (1, 4)


@pytest.mark.slow
def test_grounding_on_a_dataset_without_ui_trees_is_one_line_saying_how_to_get_them(tmp_path: Path,
                                                                                     tiny_dataset: Path) -> None:
    out = run_python("train.py", *tiny(tmp_path, tiny_dataset), "data.grounding.weight=0.5",
                     f"hydra.run.dir={tmp_path}/run")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1] == (
        f"error: data.grounding.weight > 0 reads the screens' UI trees, but {tiny_dataset} was collected without them "
        "(save_xml=false): collect it again with save_xml=true (under another data.name), or set "
        "data.grounding.weight=0")


def test_dagger_rounds_keep_the_ui_trees_that_grounding_reads(tmp_path: Path, tiny_xml_dataset: Path) -> None:
    result = train.run(compose("train", tiny(tmp_path, tiny_xml_dataset, "data.grounding.weight=1.0",
                                             "dagger.rounds=1", "dagger.steps=2", "env.num_envs=2", "dagger.pairs=2",
                                             "model.head=pointer", "model.vision.freeze=true", "run_name=grounded"),
                               output_dir=tmp_path / "run"))
    assert result["dagger"][0]["labelled_states"] > 0
    round_dir = tiny_xml_dataset.parent / "tiny_xml.dagger" / "grounded" / "round-1"
    assert read_info(round_dir)["recipe"]["save_xml"] is True
    assert pq.read_table(round_dir / "episodes").column("xml").null_count == 0
    # the round's training read them: its steps logged the grounding loss too
    assert len([r for r in metrics(tmp_path / "run") if r.get("train/grounding_loss")]) == 4 + 2


def test_a_split_trains_on_its_train_part_and_dagger_rolls_out_only_there(tmp_path: Path,
                                                                         tiny_dataset_copy: Path) -> None:
    split = split_job.make(tiny_dataset_copy, "unseen_task", ["open_clock"], val=0.2)
    result = train.run(compose("train", tiny(tmp_path, tiny_dataset_copy, "data.split=unseen_task", "dagger.rounds=1",
                                             "dagger.steps=2", "env.num_envs=2", "run_name=split"),
                               output_dir=tmp_path / "run"))
    round_dir = tiny_dataset_copy.parent / "tiny.dagger" / "split" / "round-1"
    assert {task for task, _ in read_info(round_dir)["recipe"]["pairs"]} == {"airplane_on"}  # not the held-out task
    export = json.loads((Path(result["policy"]) / "config.json").read_text())
    assert export["dataset"] == str(tiny_dataset_copy)
    assert export["split"] == {"name": "unseen_task", "digest": split.digest()}


def test_training_data_that_holds_a_held_out_value_is_refused(tmp_path: Path, tiny_dataset: Path,
                                                               tiny_dataset_copy: Path) -> None:
    split_job.make(tiny_dataset_copy, "unseen_task", ["open_clock"])
    with pytest.raises(VluiError, match=rf"^split 'unseen_task' holds out task open_clock, but data.mix: "
                                        rf"{tiny_dataset} trains on episode 6, which has it: that value would be seen "
                                        r"in training \(a leak\); leave that data out of training, or hold out another "
                                        "task$"):
        train.run(compose("train", tiny(tmp_path, tiny_dataset_copy, "data.split=unseen_task",
                                        f"data.mix=[{tiny_dataset}]"), output_dir=tmp_path / "run"))
    with pytest.raises(VluiError, match=r"has no split 'unseen_app' \(it has: unseen_task\)"):
        train.run(compose("train", tiny(tmp_path, tiny_dataset_copy, "data.split=unseen_app"),
                          output_dir=tmp_path / "run"))


def test_missing_dataset_says_how_to_make_it(tmp_path: Path) -> None:
    cfg = compose("train", ["debug=tiny", f"paths.data_dir={tmp_path}", "data.name=nothing_here"],
                  output_dir=tmp_path / "run")
    with pytest.raises(VluiError, match="create it with `python collect.py dataset=nothing_here`"):
        train.run(cfg)


def _train_cmd(tmp_path: Path, dataset: Path, *extra: str) -> list[str]:
    return [sys.executable, "train.py", *tiny(tmp_path, dataset), "trainer.max_steps=8", "data.steps_per_epoch=2",
            f"hydra.run.dir={tmp_path}/run", *extra]


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_weights(tmp_path: Path, tiny_dataset: Path) -> None:
    whole = tmp_path / "whole"
    out = subprocess.run(_train_cmd(whole, tiny_dataset), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_train_cmd(killed, tiny_dataset), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    ckpts = killed / "ckpt" / "default" / "bc-efficientnet_b0-seed0"
    deadline = time.time() + 300
    while time.time() < deadline and not (ckpts / "step000004.ckpt").exists():
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (ckpts / "policy").exists()  # it really died before the end
    out = subprocess.run(_train_cmd(killed, tiny_dataset), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "resuming from" in out.stdout
    a = load_policy(whole / "ckpt" / "default" / "bc-efficientnet_b0-seed0")
    b = load_policy(ckpts)
    for (name, pa), (_, pb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert np.allclose(pa.numpy(), pb.numpy(), atol=1e-6), name


@pytest.mark.slow
def test_sweep_over_encoders_writes_one_run_each(tmp_path: Path, tiny_dataset: Path) -> None:
    out = run_python("train.py", "-m", *tiny(tmp_path, tiny_dataset), "trainer.max_steps=2",
                     "data.steps_per_epoch=2", "model/vision=efficientnet_b0,efficientnet_b3",
                     f"hydra.sweep.dir={tmp_path}/sweep", timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    runs = sorted(p.name for p in (tmp_path / "ckpt" / "default").iterdir())
    assert runs == ["bc-efficientnet_b0-seed0", "bc-efficientnet_b3-seed0"]
    assert (tmp_path / "sweep" / "0").is_dir() and (tmp_path / "sweep" / "1").is_dir()


@pytest.mark.parametrize(("seconds_a_step", "level", "said"), [
    (0.5, "INFO", "about 33 min of training left on this machine (0.50 s a step on 3 torch threads), then 2 DAgger "
                  "rounds"),
    (2.0, "WARNING", "about 2.2 h of training left on this machine (2.00 s a step on 3 torch threads), then 2 DAgger "
                     "rounds: more "
                     "than 60 min. A GPU (trainer=gpu)"),
])
def test_a_run_says_how_long_it_will_take_and_warns_past_an_hour(monkeypatch, caplog, seconds_a_step: float,
                                                                level: str, said: str) -> None:
    from types import SimpleNamespace

    clock = SimpleNamespace(now=100.0)
    monkeypatch.setattr(train.time, "perf_counter", lambda: clock.now)
    monkeypatch.setattr(train.torch, "get_num_threads", lambda: 3)  # the step's rate names the threads it ran on
    trainer = SimpleNamespace(global_step=0, current_epoch=0)
    timer = train.WallClock(steps_planned=4000, after=", then 2 DAgger rounds")
    with caplog.at_level("INFO", logger="vlui.jobs.train"):
        timer.on_train_start(trainer, None)
        for step in range(1, 30):  # the first five steps (warming up) take 60 s each and are not counted
            clock.now += 60.0 if step <= 5 else seconds_a_step
            trainer.global_step = step
            timer.on_train_batch_end(trainer)
    (record,) = caplog.records
    assert record.levelname == level and said in record.getMessage()
    assert timer.estimate_s == pytest.approx(seconds_a_step * (4000 - 25))


def test_an_online_run_estimates_from_its_first_iteration(monkeypatch, caplog) -> None:
    from types import SimpleNamespace

    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(train.time, "perf_counter", lambda: clock.now)
    trainer = SimpleNamespace(global_step=0, current_epoch=0)
    timer = train.WallClock(epochs_planned=20)
    with caplog.at_level("INFO", logger="vlui.jobs.train"):
        timer.on_train_start(trainer, None)
        clock.now += 300.0
        timer.on_train_epoch_end(trainer, None)
        timer.on_train_epoch_end(trainer, None)  # said once
    (record,) = caplog.records
    assert record.levelname == "WARNING" and "about 1.6 h of training left" in record.getMessage()
