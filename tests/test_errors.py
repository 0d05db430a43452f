"""Every bad input is one clear line: each case below damages an input or sets a bad value, runs the job as its
entry point does (:func:`vlui.cli.run_job`), and asserts the whole message, variable parts written ``…``.

``docs/errors.md`` is generated from ``CASES`` (``python -m tests.test_errors``) and a test fails when it differs,
so the table in the docs says exactly what these tests assert.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT, run_python
from vlui import cli
from vlui.cli import INTERRUPTED
from vlui.data import format as fmt
from vlui.env.actions import ActionParser
from vlui.errors import VluiError
from vlui.jobs import collect, evaluate, offline, train
from vlui.jobs import split as split_job
from vlui.viewer.compare import Viewer
from vlui.viewer.episodes import open_folder

pytestmark = pytest.mark.integration

DOC = ROOT / "docs" / "errors.md"
JOBS = {"collect": collect.run, "train": train.run, "evaluate": evaluate.run, "offline": offline.run}
CONFIGS = {"offline": "evaluate"}  # offline evaluation is evaluate.py mode=offline: evaluate's config, its own job


# ------------------------------------------------------------------------------------------------- the inputs
@dataclass
class Inputs:
    """What a case may damage: a fresh copy of the tiny dataset and of a tiny trained run, in its own folder."""

    tmp: Path
    dataset_src: Path
    run_src: Path

    @property
    def dataset(self) -> Path:
        path = self.tmp / "data" / "tiny"
        if not path.exists():
            shutil.copytree(self.dataset_src, path)
        return path

    @property
    def run(self) -> Path:
        """A trained run's checkpoint folder (step000002.ckpt, step000004.ckpt, last.ckpt, policy/)."""
        path = self.tmp / "ckpt" / "default" / "bc-efficientnet_b0-seed0"
        if not path.exists():
            shutil.copytree(self.run_src, path)
        return path

    def train(self, *overrides: str) -> list[str]:
        self.dataset, self.run  # noqa: B018 - copied into place
        return ["debug=tiny", f"paths.data_dir={self.tmp / 'data'}", "data.name=tiny",
                f"paths.checkpoint_dir={self.tmp / 'ckpt'}", "logger=csv", "trainer.max_steps=6", *overrides]

    def evaluate(self, *overrides: str) -> list[str]:
        return ["tasks=[open_clock]", "env.snapshots=[000]", "runs=1", "adaptive_metrics=false", *overrides]

    def snapshot(self, text: str) -> Path:
        path = self.tmp / "mine.yaml"
        path.write_text(text)
        return path


def run_job(name: str, overrides: list[str], tmp: Path) -> Any:
    """Run job ``name`` as its entry point does, in this process."""
    return cli.run_job(JOBS[name], cli.compose(CONFIGS.get(name, name), overrides, output_dir=tmp / "out"))


def rewrite_episode(root: Path, eid: int, change: Callable[[list[dict]], None]) -> None:
    path = fmt.episode_path(root, eid)
    rows = pq.read_table(path).to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=fmt.SCHEMA), path)


def drop_episodes(root: Path, *eids: int) -> None:
    for eid in eids:
        fmt.episode_path(root, eid).unlink()


def damage_line(path: Path, n: int) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[n - 1] = lines[n - 1][: len(lines[n - 1]) // 2] + "\n"
    path.write_text("".join(lines))


def resave(weights: Path, change: Callable[[dict], None]) -> None:
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(weights))
    change(tensors)
    save_file(tensors, str(weights))


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def full_after(count: int, real: Callable, partial: bool = False) -> Callable:
    """``real`` (the function that writes a file), failing as on a full disk from call ``count + 1`` on: ENOSPC
    naming the file, after writing its first bytes when ``partial`` (what the kernel leaves when the filesystem
    runs out mid-write). Standing in for a full filesystem, which a test cannot make without root."""
    calls = {"n": 0}

    def write(obj: Any, where: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] <= count:
            return real(obj, where, *args, **kwargs)
        if partial:
            Path(str(where)).write_bytes(b"PAR1")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))

    return write


# ------------------------------------------------------------------------------------------------- the cases
@dataclass(frozen=True)
class Case:
    id: str
    item: int  # issue 14, part C
    bad_input: str  # what the user did, as the docs say it
    message: str  # the whole one-line message; ``…`` stands for a variable part (a path, a pid, a number)
    act: Callable[[Inputs], Any]  # runs the job on the damaged input; must raise the message

    def pattern(self) -> re.Pattern:
        return re.compile(".*?".join(re.escape(part) for part in self.message.split("…")), re.DOTALL)


def _train_incomplete(x: Inputs) -> Any:
    drop_episodes(x.dataset, 3, 7)
    return run_job("train", x.train(), x.tmp)


def _train_beside_writer(x: Inputs) -> Any:
    lock = fmt._acquire(x.dataset)  # the lock a running collection holds
    try:
        return run_job("train", x.train(), x.tmp)
    finally:
        lock.close()


def _corrupt_png(x: Inputs) -> Any:
    def change(rows: list[dict]) -> None:
        rows[2]["screen"] = rows[2]["screen"][:40]

    rewrite_episode(x.dataset, 1, change)
    return run_job("train", x.train("ckpt_path=null"), x.tmp)


def _wrong_size_png(x: Inputs) -> Any:
    def change(rows: list[dict]) -> None:
        rows[1]["screen"] = fmt.encode_png(np.zeros((100, 50, 3), np.uint8))

    rewrite_episode(x.dataset, 4, change)
    return run_job("train", x.train("ckpt_path=null"), x.tmp)


def _evaluate_export(x: Inputs, damage: Callable[[Path], None]) -> Any:
    damage(x.run / "policy")
    return run_job("evaluate", x.evaluate("agent=policy", f"checkpoint={x.run}"), x.tmp)


def _shape(policy: Path) -> None:
    def change(tensors: dict) -> None:
        key = sorted(k for k in tensors if k.startswith("head."))[0]
        tensors[key] = tensors[key][:1]

    resave(policy / "model.safetensors", change)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _collect_disk_full(x: Inputs) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        # the episode file is written to a temporary name first: the partial file is that one
        mp.setattr(fmt.pq, "write_table", full_after(2, pq.write_table, partial=True))
        return run_job("collect", [f"paths.data_dir={x.tmp / 'data'}", "dataset=full", "tasks=[open_clock]",
                                   "env.snapshots=[000,001,002,003]", "env.num_envs=1"], x.tmp)


def _train_disk_full(x: Inputs) -> Any:
    from lightning.fabric.plugins.io import torch_io

    with pytest.MonkeyPatch.context() as mp:
        # Lightning writes a checkpoint to a temporary file that it drops on an error: nothing partial is left
        mp.setattr(torch_io, "_atomic_save", full_after(2, torch_io._atomic_save))  # step 2 and last.ckpt
        return run_job("train", x.train("ckpt_path=null", f"paths.checkpoint_dir={x.tmp / 'fresh'}"), x.tmp)


def _damaged_index_line(x: Inputs) -> Any:
    damage_line(x.dataset / "meta" / "episodes.jsonl", 5)
    return run_job("train", x.train(), x.tmp)


def _evaluate_twice(x: Inputs, damage: Callable[[Path], None]) -> Any:
    run_job("evaluate", x.evaluate("agent=expert", "tasks=[open_clock,open_phone]", "env.snapshots=[000,001]"), x.tmp)
    damage(x.tmp / "out")
    return run_job("evaluate", x.evaluate("agent=expert", "tasks=[open_clock,open_phone]", "env.snapshots=[000,001]"),
                   x.tmp)


def _lost_info(x: Inputs) -> Any:
    (x.dataset / "meta" / "info.json").unlink()
    return run_job("collect", [f"paths.data_dir={x.tmp / 'data'}", "dataset=tiny", "tasks=[open_clock,airplane_on]",
                               "env.snapshots=[000,001,030]", "episodes_per_pair=2"], x.tmp)


def _snapshot_collect(x: Inputs, text: str) -> Any:
    path = x.snapshot(text)
    return run_job("collect", [f"paths.data_dir={x.tmp / 'data'}", "dataset=s", "tasks=[open_clock]",
                               f"env.snapshots=[{path}]"], x.tmp)


OWN = (ROOT / "envs" / "000.yaml").read_text().replace("id: '000'", "id: mine")


def _offline(x: Inputs, *overrides: str) -> list[str]:
    return ["mode=offline", f"paths.data_dir={x.tmp / 'data'}", "data.name=tiny", *overrides]


def _train_with_a_leak(x: Inputs) -> Any:
    split_job.make(x.dataset, "unseen_task", ["open_clock"])
    return run_job("train", x.train("data.split=unseen_task", f"data.mix=[{x.dataset_src}]"), x.tmp)


def _held_out_dataset(x: Inputs) -> str:
    """A dataset collected on a training snapshot, a test snapshot and a validation phone (the mistake: a list of
    phones written for evaluation, used to collect)."""
    run_job("collect", [f"paths.data_dir={x.tmp / 'data'}", "dataset=held", "tasks=[open_clock]",
                        "env.snapshots=[000,105,val:1]", "env.num_envs=1"], x.tmp)
    return "data.name=held"


def _score_on_training_episodes(x: Inputs) -> Any:
    edit_json(x.run / "policy" / "config.json", lambda c: c.update(dataset=str(x.dataset)))
    return run_job("offline", _offline(x, f"checkpoint={x.run}", "data.part=all"), x.tmp)

CASES = [
    Case("train-incomplete-dataset", 1, "train on a dataset whose collection was stopped before the end",
         "… is incomplete: 10 of 12 episodes (its collection stopped before the end); finish it by running the same "
         "collect.py command again, or add data.allow_incomplete=true to train on what is there", _train_incomplete),
    Case("train-beside-a-collection", 1, "train while a collection is still writing the dataset",
         "a collection (pid …) is still writing …: wait for it to finish (or stop it and finish it later), then "
         "train",
         _train_beside_writer),
    Case("resume-changed-model", 2, "change model settings, then run the same training again (auto-resume)",
         "…last.ckpt was trained with other settings (model.hidden_dim 32 in the checkpoint, 64 now; model.num_heads "
         "2 in the checkpoint, 4 now): use the same settings, another run_name=..., or ckpt_path=null to start this "
         "run over", lambda x: run_job("train", x.train("model.hidden_dim=64", "model.num_heads=4"), x.tmp)),
    Case("dataset-corrupt-png", 3, "a dataset screen that is not a readable PNG",
         "…: the screen of episode 1 step 2 is not a readable PNG (…): delete "
         "episodes/chunk-000/episode_000001.parquet and run the same collect.py command again to collect that "
         "episode again", _corrupt_png),
    Case("dataset-wrong-size-png", 3, "a dataset screen of another size than the dataset's",
         "…: the screen of episode 4 step 1 is 100x50, the dataset's screens are 256x128: delete "
         "episodes/chunk-000/episode_000004.parquet and run the same collect.py command again to collect that "
         "episode again", _wrong_size_png),
    Case("export-wrong-shapes", 4, "a policy export whose tensors have the wrong shapes",
         "…model.safetensors has tensors of the wrong shape for its policy settings (head.0.bias (1,) instead of "
         "(32,)): export it again", lambda x: _evaluate_export(x, _shape)),
    Case("export-truncated-weights", 4, "a truncated model.safetensors",
         "…model.safetensors is damaged (…): export the policy again (run the same train.py command; it resumes "
         "from last.ckpt and exports)", lambda x: _evaluate_export(x, lambda p: _truncate(p / "model.safetensors"))),
    Case("export-bad-json", 4, "a policy export's config.json that is not JSON",
         "…config.json is damaged (not JSON: …): export the policy again (run the same train.py command; it "
         "resumes from last.ckpt and exports)", lambda x: _evaluate_export(x, lambda p: _truncate(p / "config.json"))),
    Case("export-unknown-key", 4, "a policy export's config.json with a setting this vlui does not know",
         "…config.json: unknown policy setting(s) colour; this vlui knows: model, spec",
         lambda x: _evaluate_export(x, lambda p: edit_json(p / "config.json", lambda c: c["policy"].update(
             colour="red")))),
    Case("collect-disk-full", 5, "the disk fills up while collecting",
         "no space left on the device writing episode 2 to …full: the 2 episodes written before it are kept; free "
         "some space and run the same command again to collect the rest", _collect_disk_full),
    Case("train-disk-full", 5, "the disk fills up while training (writing a checkpoint)",
         "no space left on the device while training (writing …step000004.ckpt): the 2 checkpoints written before "
         "are kept in … (the newest: step000002.ckpt); free some space and run the same command again to resume",
         _train_disk_full),
    Case("evaluate-renamed-setting", 6, "`parallel_envs=8` (a setting by its old name)",
         "parallel_envs is now env.num_envs (one name for the environments side by side, in every job): write "
         "env.num_envs=8", lambda x: run_job("evaluate", x.evaluate("agent=expert", "parallel_envs=8"), x.tmp)),
    Case("evaluate-renamed-agent-setting", 6, "`agent=mllm agent.image_height=256` (the screenshot's former name)",
         "agent.image_height is now agent.screenshot_height (the MLLM's screenshot; the observation's size is "
         "env.observation_height/width): write agent.screenshot_height=256",
         lambda x: run_job("evaluate", x.evaluate("agent=mllm", "agent.image_height=256"), x.tmp)),
    Case("evaluate-setting-of-another-agent", 6, "`agent=expert agent.model=x` (a setting the agent type does not have)",
         "agent=expert has no setting agent.model; its settings: name, tap_jitter, random_action_prob, "
         "wrong_action_prob", lambda x: run_job("evaluate", x.evaluate("agent=expert", "agent.model=x"), x.tmp)),
    Case("evaluate-avoid-repeats-mlp", 6, "`agent.avoid_repeats=true` with a policy of the paper's MLP head",
         "agent.avoid_repeats needs a policy with the pointer head (model.head=pointer); … has the mlp head: leave "
         "agent.avoid_repeats=false",
         lambda x: run_job("evaluate", x.evaluate("agent=policy", f"checkpoint={x.run}", "agent.avoid_repeats=true"),
                           x.tmp)),
    Case("train-val-fraction-1", 6, "`data.val_fraction=1`",
         "data.val_fraction must be at least 0 and less than 1, not 1.0",
         lambda x: run_job("train", x.train("data.val_fraction=1.0"), x.tmp)),
    Case("train-lr-nan", 6, "`algo.optim.lr=nan`", "algo.optim.lr must be greater than 0, not nan",
         lambda x: run_job("train", x.train("algo.optim.lr=nan"), x.tmp)),
    Case("train-history-negative", 6, "`model.history=-1`",
         "model.history must be a whole number at least 0 (or true for 1, false for 0), not -1",
         lambda x: run_job("train", x.train("model.history=-1"), x.tmp)),
    Case("train-history-not-a-count", 6, "`model.history=1.5`",
         "model.history must be a whole number at least 0 (or true for 1, false for 0), not 1.5",
         lambda x: run_job("train", x.train("model.history=1.5"), x.tmp)),
    Case("train-history-screens-without-steps", 6, "`model.history_screens=true` with `model.history=0`",
         "model.history_screens=true reads the past steps' screens: set model.history to how many (e.g. "
         "model.history=4)", lambda x: run_job("train", x.train("model.history_screens=true"), x.tmp)),
    Case("collect-num-envs-0", 6, "`env.num_envs=0`", "env.num_envs must be at least 1, not 0",
         lambda x: run_job("collect", ["env.num_envs=0"], x.tmp)),
    Case("unreadable-last-ckpt", 7, "a damaged last.ckpt, then the same training again (auto-resume)",
         "checkpoint …last.ckpt cannot be read (…): it is damaged or not a checkpoint; resume from another "
         "checkpoint with ckpt_path=…step000004.ckpt (the newest step checkpoint), or delete last.ckpt",
         lambda x: (_truncate(x.run / "last.ckpt"), run_job("train", x.train(), x.tmp))),
    Case("batch-size-0", 8, "`data.batch_size=0`", "data.batch_size must be at least 1, not 0",
         lambda x: run_job("train", x.train("data.batch_size=0"), x.tmp)),
    Case("dataset-damaged-index-line", 9, "a damaged line in the middle of a dataset's meta/episodes.jsonl",
         "…episodes.jsonl line 5 is damaged: delete that line (or the whole file) and run the same collect.py "
         "command again; it indexes the episode again from its file", _damaged_index_line),
    Case("evaluate-damaged-line", 9, "a damaged line in the middle of an evaluation's episodes.jsonl",
         "…episodes.jsonl line 2 is damaged: delete that line and run the same command again to evaluate that "
         "episode again", lambda x: _evaluate_twice(x, lambda out: damage_line(out / "episodes.jsonl", 2))),
    Case("evaluate-reuse-not-an-evaluation", 9, "`reuse=` naming a folder that holds no evaluation",
         "reuse: … holds no evaluation (no recipe.json): give the folder of an earlier evaluation "
         "(outputs/evaluate/<name>), or leave it out",
         lambda x: run_job("evaluate", x.evaluate("agent=expert", f"reuse={x.tmp}"), x.tmp)),
    Case("evaluate-reuse-with-video", 9, "`reuse=` with `video=failures` (copied episodes have no frames)",
         "reuse= takes earlier episodes without their frames: leave video and screens at none, or leave reuse out",
         lambda x: run_job("evaluate", x.evaluate("agent=expert", f"reuse=[{x.tmp}/earlier-*]", "video=failures"), x.tmp)),
    Case("evaluate-damaged-recipe", 9, "a damaged recipe.json in an evaluation's folder",
         "…recipe.json is damaged (…): restore it, or evaluate into another folder (name=... or hydra.run.dir=...)",
         lambda x: _evaluate_twice(x, lambda out: _truncate(out / "recipe.json"))),
    Case("lost-info-other-recipe", 10, "a dataset's meta/info.json is lost and collect.py runs with another recipe",
         "…tiny has lost its meta/info.json and was collected with another recipe (episode 0 holds airplane_on on "
         "snapshot 000 (seed 0); this recipe has open_clock on snapshot 000 (seed 0)): run the collect.py command "
         "that collected it, or collect into another dataset name", _lost_info),
    Case("agent-probability-above-1", 12, "`agent.random_action_prob=1.5`",
         "agent.random_action_prob must be at least 0 and at most 1, not 1.5",
         lambda x: run_job("collect", ["agent.random_action_prob=1.5"], x.tmp)),
    Case("agent-probabilities-sum", 12, "`agent.random_action_prob=0.7 agent.wrong_action_prob=0.6`",
         "agent.random_action_prob + agent.wrong_action_prob must be at most 1 (they share one roll per step), not 1.3",
         lambda x: run_job("collect", ["agent.random_action_prob=0.7", "agent.wrong_action_prob=0.6"], x.tmp)),
    Case("collect-extended-actions", 12, "`agent=text agent.actions=extended` for collect.py",
         "agent.actions=extended cannot collect a dataset: datasets hold dual-gestures, and a long press, typed text, "
         "open_app, scroll, wait, keyboard_enter or answer is none; collect with agent.actions=bmoca (evaluate.py "
         "takes either)",
         lambda x: run_job("collect", ["agent=text", "agent.actions=extended"], x.tmp)),
    Case("action-boolean", 12, "an agent that outputs booleans as its action",
         "a dual-gesture action has 4 values (touch_y, touch_x, lift_y, lift_x), all real numbers; got [True, False, "
         "True, False]",
         lambda x: ActionParser().parse([True, False, True, False])),
    Case("action-complex", 12, "an agent that outputs complex numbers as its action",
         "a dual-gesture action has 4 values (touch_y, touch_x, lift_y, lift_x), all real numbers; got "
         "array([0.1+1.j, 0. +0.j, 0. +0.j, 0. +0.j])",
         lambda x: ActionParser().parse(np.array([0.1 + 1j, 0, 0, 0]))),
    Case("snapshot-without-locale", 13, "a snapshot file without `locale`",
         "…mine.yaml: the field 'locale' is required; choose from: en-US, …",
         lambda x: _snapshot_collect(x, OWN.replace("locale: en-US\n", ""))),
    Case("snapshot-unsupported-locale", 13, "a snapshot file with an unsupported locale",
         "…mine.yaml: unknown locale 'xx-YY'; choose from: en-US, …",
         lambda x: _snapshot_collect(x, OWN.replace("locale: en-US", "locale: xx-YY"))),
    Case("snapshot-is-a-folder", 13, "a folder given as a snapshot file",
         "… is a folder, not a snapshot file: give a .yaml file (e.g. envs/000.yaml)",
         lambda x: ((x.tmp / "dir.yaml").mkdir(), run_job("collect", [f"env.snapshots=[{x.tmp / 'dir.yaml'}]"],
                                                            x.tmp))),
    Case("snapshot-state-value", 13, "a snapshot's `state` with a value of the wrong type",
         "…mine.yaml: state: airplane_mode must be true or false, not 'yes'",
         lambda x: _snapshot_collect(x, OWN.replace("state: {}", "state: {airplane_mode: 'yes'}"))),
    Case("snapshot-state-key", 13, "a snapshot's `state` with an unknown key",
         "…mine.yaml: state: unknown field 'wifi_on'; fields: adaptive_brightness, …",
         lambda x: _snapshot_collect(x, OWN.replace("state: {}", "state: {wifi_on: true}"))),
    Case("snapshot-app-state-key", 13, "a snapshot's `state` with an unknown field in an app's own state",
         "…mine.yaml: state: clock: unknown field 'tabb'; fields: alarms, expanded, next_alarm_id, picker, stopwatch, tab, timer",
         lambda x: _snapshot_collect(x, OWN.replace("state: {}", "state: {clock: {tabb: stopwatch}}"))),
    Case("snapshot-state-installed", 13, "a snapshot's `state` installing an app that is not a third-party one",
         "…mine.yaml: state: installed: 'clock' is a system app, on every phone; installable (third-party) apps: … "
         "(vlui/android/data/apps.yaml)",
         lambda x: _snapshot_collect(x, OWN.replace("state: {}", "state: {installed: [clock]}"))),
    Case("snapshot-split", 13, "a snapshot's `split` that is not train, test, user, generated, val or leaky",
         "…mine.yaml: split must be one of train, test, user, generated, val, leaky, not 'validation'",
         lambda x: _snapshot_collect(x, OWN.replace("split: train", "split: validation"))),
    Case("snapshot-screen-size", 13, "a snapshot's `screen` out of range (a size, a density)",
         "…mine.yaml: screen.width must be a whole number between 240 and 8192, not 0",
         lambda x: _snapshot_collect(x, OWN.replace("device: Pixel 3", "screen: {width: 0, height: 2400, dpi: 420}"))),
    Case("snapshot-screen-shape", 13, "a snapshot's `screen` that no layout fits",
         "…mine.yaml: screen 600x2400 is more than 3 times as long as it is wide; no Android layout fits it",
         lambda x: _snapshot_collect(x, OWN.replace("device: Pixel 3",
                                                    "screen: {width: 600, height: 2400, dpi: 420}"))),
    Case("snapshot-too-dense", 13, "a snapshot's density that leaves its screen too narrow",
         "…mine.yaml: dpi 900 leaves the 1080x2160 screen 192 dp wide, under the 200 dp Android lays out; give a dpi "
         "of at most 864",
         lambda x: _snapshot_collect(x, OWN.replace("dpi: 330", "dpi: 900"))),
    Case("snapshot-device-and-screen", 13, "a snapshot with both `device` and `screen`",
         "…mine.yaml: give either device (a profile's name) or screen (a screen of its own), not both",
         lambda x: _snapshot_collect(x, OWN.replace("device: Pixel 3", "device: Pixel 3\nscreen: {width: 1080, "
                                                    "height: 2400, dpi: 420}"))),
    Case("env-landscape", 13, "`env.landscape=sideways`", "env.landscape must be one of stretched, rotated, stacked, not "
         "'sideways'", lambda x: run_job("collect", ["env.landscape=sideways"], x.tmp)),
    Case("env-rtl", 13, "`env.rtl=flipped`", "env.rtl must be one of kept, mirrored, not 'flipped'",
         lambda x: run_job("collect", ["env.rtl=flipped"], x.tmp)),
    Case("task-split", 13, "`task_split=valid`", "task_split must be one of train, test, all, not 'valid'",
         lambda x: run_job("collect", ["task_split=valid"], x.tmp)),
    Case("viewer-no-episodes-here", 14, "`python -m vlui.viewer PATH` with a folder that is neither a dataset nor an "
         "evaluation", "…elsewhere is neither a collected dataset (no meta/info.json) nor an evaluation (no "
         "episodes.jsonl): give a collected dataset (data/<dataset>) or an evaluation's folder "
         "(outputs/evaluate/<name>)", lambda x: ((x.tmp / "elsewhere").mkdir(), open_folder(x.tmp / "elsewhere"))),
    Case("viewer-unknown-episode", 14, "`python -m vlui.viewer PATH --episode ID` with an ID the folder lacks",
         "…tiny has no episode '99': give a dataset's episode id or an evaluation's key (e.g. 0, 1, 2)",
         lambda x: open_folder(x.dataset).require("99")),
    Case("viewer-folder-twice", 14, "`python -m vlui.viewer A B` naming the same folder twice",
         "…tiny is named twice: give each dataset or evaluation once",
         lambda x: Viewer.of([x.dataset, x.dataset / "meta" / "episodes.jsonl"])),
    Case("offline-unknown-split", 15, "`python evaluate.py mode=offline data.split=NAME` with a split the dataset lacks",
         "…tiny has no split 'unseen_device' (it has none): make it with `python -m vlui.jobs.split …tiny --by "
         "unseen_device ...` (kinds: random, unseen_task, unseen_device, unseen_app)",
         lambda x: (x.dataset, run_job("offline", _offline(x, "agent=random", "data.split=unseen_device"), x.tmp))),
    Case("train-split-leak", 15, "train on a split (`data.split`) beside data that holds a value it holds out",
         "split 'unseen_task' holds out task open_clock, but data.mix: …tiny trains on episode 6, which has it: that "
         "value would be seen in training (a leak); leave that data out of training, or hold out another task",
         _train_with_a_leak),
    Case("train-held-out-phones", 15, "train on a dataset collected on validation phones or test snapshots",
         "the dataset …held holds validation or test phones (105, val-0-0): a policy trained on them is measured on "
         "phones it has seen. Train on training phones (env.snapshots=[train,random:N]), or add "
         "allow_held_out_phones=true to measure what training on them does",
         lambda x: run_job("train", x.train(_held_out_dataset(x)), x.tmp)),
    Case("offline-training-episodes", 15, "score a policy offline on the episodes it was trained on",
         "…bc-efficientnet_b0-seed0 was trained on every episode of …tiny (no data.split): scoring it on them "
         "measures what it memorised; score it on another dataset, or train it on a split (data.split=...) and score "
         "that split's test part", _score_on_training_episodes),
    Case("executor-no-scheduler", 16, "`executor=dask executor.address=ADDRESS` where no Dask scheduler listens",
         "no Dask scheduler answers at executor.address=tcp://127.0.0.1:… within 1 s (…): start one (`dask "
         "scheduler`, then `dask worker <address>` on each node: docs/scaling.md), or leave executor.address unset "
         "to start a cluster on this machine",
         lambda x: run_job("evaluate", x.evaluate("agent=expert", "executor=dask", "executor.connect_timeout_s=1",
                                                  f"executor.address=tcp://127.0.0.1:{_free_port()}"), x.tmp)),
    Case("executor-serial-on-no-node", 16, "`env=adb executor=dask env.serial=SERIAL` with a device no worker's node has",
         "env.serial lists emulator-5554, which no worker's node has online (the nodes have: no device): attach it, "
         "or drop it from the list",
         lambda x: run_job("evaluate", x.evaluate("agent=expert", "env=adb", "env.serial=emulator-5554",
                                                  f"env.adb_port={_free_port()}", "executor=dask",
                                                  "executor.workers=1"), x.tmp)),
]


def _free_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed again)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def trained_run(tiny_dataset: Path, tmp_path_factory) -> Path:
    """A tiny run trained for 4 steps (checkpoints at steps 2 and 4, last.ckpt, a policy export)."""
    tmp = tmp_path_factory.mktemp("trained")
    cfg = cli.compose("train", ["debug=tiny", f"paths.data_dir={tiny_dataset.parent}", f"data.name={tiny_dataset.name}",
                                f"paths.checkpoint_dir={tmp / 'ckpt'}", "logger=csv"], output_dir=tmp / "run")
    result = train.run(cfg)
    return Path(result["checkpoint_dir"])


@pytest.fixture
def inputs(tmp_path: Path, tiny_dataset: Path, trained_run: Path) -> Inputs:
    return Inputs(tmp_path, tiny_dataset, trained_run)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_clear_line(case: Case, inputs: Inputs) -> None:
    with pytest.raises(VluiError) as err:
        case.act(inputs)
    message = str(err.value)
    assert "\n" not in message
    assert case.pattern().fullmatch(message), f"\n  got: {message}\n want: {case.message}"


# ------------------------------------------------------------------------------------------------- nothing lost
def test_a_full_disk_while_collecting_keeps_the_episodes_and_the_same_command_resumes(inputs: Inputs) -> None:
    with pytest.raises(VluiError):
        _collect_disk_full(inputs)
    root = inputs.tmp / "data" / "full"
    assert sorted(fmt.read_index(root)) == [0, 1] and not list(root.rglob(".*.tmp"))
    summary = run_job("collect", [f"paths.data_dir={inputs.tmp / 'data'}", "dataset=full", "tasks=[open_clock]",
                                  "env.snapshots=[000,001,002,003]", "env.num_envs=1"], inputs.tmp)
    assert summary["episodes"] == 4 and len(fmt.read_dataset(root)[1].column("episode_id").unique()) == 4


@pytest.mark.slow
def test_a_full_disk_while_training_keeps_the_checkpoints_and_the_same_command_resumes(inputs: Inputs,
                                                                                       caplog) -> None:
    from vlui.models.policy import read_checkpoint

    with pytest.raises(VluiError):
        _train_disk_full(inputs)
    run = inputs.tmp / "fresh" / "default" / "bc-efficientnet_b0-seed0"
    assert read_checkpoint(run / "last.ckpt")["global_step"] == 2 and not (run / "step000004.ckpt").exists()
    with caplog.at_level("INFO", logger="vlui.jobs.train"):
        result = run_job("train", inputs.train(f"paths.checkpoint_dir={inputs.tmp / 'fresh'}"), inputs.tmp)
    assert "resuming from" in caplog.text and Path(result["policy"]).is_dir()


def test_a_lost_info_json_is_rebuilt_for_the_same_recipe_without_duplicates(inputs: Inputs) -> None:
    root = inputs.dataset
    info = json.loads((root / "meta" / "info.json").read_text())
    (root / "meta" / "info.json").unlink()
    index = root / "meta" / "episodes.jsonl"
    index.write_text(index.read_text() + index.read_text().splitlines(keepends=True)[0])  # a line twice
    summary = run_job("collect", [f"paths.data_dir={inputs.tmp / 'data'}", "dataset=tiny",
                                  "tasks=[airplane_on,open_clock]", "env.snapshots=[000,001,030]",
                                  "episodes_per_pair=2", "env.num_envs=1"], inputs.tmp)
    assert summary["episodes"] == 12 and len(index.read_text().splitlines()) == 12
    assert json.loads((root / "meta" / "info.json").read_text())["recipe"] == info["recipe"]


def test_a_lightning_checkpoint_loads_as_a_policy(inputs: Inputs) -> None:
    from vlui.models.policy import load_policy

    a, b = load_policy(inputs.run / "last.ckpt"), load_policy(inputs.run / "policy")
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert np.array_equal(x.numpy(), y.numpy()), name
    result = run_job("evaluate", inputs.evaluate("agent=policy", f"checkpoint={inputs.run / 'last.ckpt'}",
                                                 "env.observation_height=64", "env.observation_width=32"), inputs.tmp)
    assert result["episodes"] == 1


@pytest.mark.slow
def test_an_incomplete_dataset_trains_with_allow_incomplete(inputs: Inputs) -> None:
    drop_episodes(inputs.dataset, 3)
    result = run_job("train", inputs.train("data.allow_incomplete=true", "ckpt_path=null"), inputs.tmp)
    assert Path(result["policy"]).is_dir()


def test_held_out_phones_train_when_asked_with_a_warning(inputs: Inputs, caplog) -> None:
    held = _held_out_dataset(inputs)
    with caplog.at_level("WARNING"):
        result = run_job("train", inputs.train(held, "allow_held_out_phones=true", "ckpt_path=null"), inputs.tmp)
    assert Path(result["policy"]).is_dir()
    assert "holds validation or test phones (105, val-0-0), trained on as allow_held_out_phones=true asks" in caplog.text


def _session_processes(sid: int) -> list[str]:
    out = subprocess.run(["ps", "-eo", "sid=,pid=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.split()[0] == str(sid)]


def _wait_for_episodes(index: Path, n: int, timeout: float = 180) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and (not index.exists() or len(index.read_text().splitlines()) < n):
        time.sleep(0.05)
    assert index.exists() and len(index.read_text().splitlines()) >= n


@pytest.mark.slow
def test_a_killed_collection_leaves_no_workers_and_prints_no_noise(tmp_path: Path) -> None:
    for n, how in enumerate(("SIGKILL to the collection", "Ctrl-C to the process group")):
        args = [sys.executable, "collect.py", f"paths.data_dir={tmp_path}", f"dataset=k{n}", "tasks=open_app",
                "env.snapshots=[000,001,002,003]", "env.num_envs=2", f"hydra.run.dir={tmp_path}/run"]
        with open(tmp_path / "stderr.txt", "w") as err:
            proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
            _wait_for_episodes(tmp_path / f"k{n}" / "meta" / "episodes.jsonl", 5)
            if how.startswith("SIGKILL"):
                os.kill(proc.pid, signal.SIGKILL)  # the workers are not signalled: they must go by themselves
            else:
                os.killpg(proc.pid, signal.SIGINT)
            proc.wait()
            deadline = time.time() + 20
            while time.time() < deadline and _session_processes(proc.pid):
                time.sleep(0.2)
            left = _session_processes(proc.pid)
            if left:
                os.killpg(proc.pid, signal.SIGKILL)
        stderr = (tmp_path / "stderr.txt").read_text()
        assert not left, f"{how}: {left}"
        for noise in ("BrokenPipe", "Traceback", "leaked", "SpawnPoolWorker", "KeyboardInterrupt"):
            assert noise not in stderr, f"{how}: {stderr[-2000:]}"
    assert proc.returncode == 2 and "error: interrupted: " in stderr


@pytest.mark.slow
def test_a_killed_train_stops_the_collection_it_started(tmp_path: Path) -> None:
    args = [sys.executable, "train.py", "debug=tiny", f"paths.data_dir={tmp_path}", "data.name=auto",
            "data.collect_if_missing=true", f"paths.checkpoint_dir={tmp_path}/ckpt", f"hydra.run.dir={tmp_path}/run"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        _wait_for_episodes(tmp_path / "auto" / "meta" / "episodes.jsonl", 2)
        os.kill(proc.pid, signal.SIGKILL)  # train only: its collect.py child must stop by itself
        proc.wait()
        deadline = time.time() + 20
        while time.time() < deadline and _session_processes(proc.pid):
            time.sleep(0.2)
        assert not _session_processes(proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    out = run_python("train.py", *args[2:5], f"paths.checkpoint_dir={tmp_path}/ckpt", f"hydra.run.dir={tmp_path}/run")
    assert out.returncode == 2 and "is incomplete:" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("script", "override", "message"), [
    ("train.py", "data.batch_size=0", "error: data.batch_size must be at least 1, not 0"),
    ("evaluate.py", "env.num_envs=0", "error: env.num_envs must be at least 1, not 0"),
    ("collect.py", "agent.random_action_prob=1.5", "error: agent.random_action_prob must be at least 0 and at most 1"),
])
def test_entry_points_print_one_line_and_exit_2(tmp_path: Path, script: str, override: str, message: str) -> None:
    out = run_python(script, override, f"hydra.run.dir={tmp_path}/run")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert [line for line in out.stderr.splitlines() if line.startswith("error:")] == [
        line for line in out.stderr.splitlines() if message in line]


@pytest.mark.parametrize(("script", "delay"), [("train.py", 0.3), ("train.py", 0.8), ("train.py", 1.5),
                                              ("collect.py", 0.3), ("collect.py", 1.0), ("evaluate.py", 1.0)])
def test_ctrl_c_while_a_job_starts_is_one_line(tmp_path: Path, script: str, delay: float) -> None:
    """Ctrl-C while a job starts is one line and no traceback: while torch, numpy and the job load (a signal that
    lands inside an import must not surface as that import's failure) it is status 130; a job that loads fast (the
    expert's collection needs no torch) may already have begun, and then says what it kept, with status 2."""
    extra = ["agent=expert"] if script == "evaluate.py" else []  # a job with work to do, not a missing checkpoint
    # Ctrl-C as at a terminal: a test run started in the background by a non-interactive shell (`cmd &`) passes
    # SIGINT on ignored, and a signal before the job's own handler would then be lost, not the job's to handle
    proc = subprocess.Popen([sys.executable, script, f"hydra.run.dir={tmp_path}/run", f"paths.data_dir={tmp_path}/data",
                             f"paths.checkpoint_dir={tmp_path}/ckpt", *extra], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(delay)  # Python is up; the job's modules are loading, or (collect) the job has just begun
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    if last == INTERRUPTED:
        assert proc.returncode == 130
    else:
        assert script != "train.py" and proc.returncode == 2 and last.startswith("error: interrupted: "), err


# ------------------------------------------------------------------------------------------------- the docs
def render() -> str:
    """docs/errors.md, from ``CASES``."""
    rows = "\n".join(f"| {c.item} | {c.bad_input} | `error: {c.message}` |".replace("\n", " ") for c in CASES)
    return f"""# Errors

A mistake the user can fix is one line on stderr, `error: <what happened>: <what to do>`, and exit status 2, without a
traceback; what was already written (episodes, checkpoints, evaluated episodes) is kept, and the same command
resumes. Anything else is a bug and keeps its traceback.

Every setting that a schema bounds (its `LIMITS` and `CHOICES`, in `vlui/config.py` and the packages' `settings.py`)
is checked before any work starts, and so is every snapshot file named by `env.snapshots`.

The table lists bad inputs and the exact message each gives; `…` stands for a path, a number or a list. It is
generated from the cases in `tests/test_errors.py`, which assert each message (`python -m tests.test_errors`
writes this file; a test fails when it is out of date). The first column numbers the kinds of bad input.

| item | bad input | message |
| --- | --- | --- |
{rows}
"""


def test_docs_table_is_generated_from_these_cases() -> None:
    assert DOC.read_text() == render(), "docs/errors.md is out of date: run `python -m tests.test_errors`"


if __name__ == "__main__":
    DOC.write_text(render())
    print(f"wrote {DOC}")
