"""collect.py end to end on tiny recipes: the dataset users get, resuming after a kill, noisy experts, errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT
from vlui.cli import compose
from vlui.data.format import FORMAT_VERSION, read_dataset
from vlui.env.settings import EnvConfig
from vlui.errors import VluiError
from vlui.jobs import collect

pytestmark = pytest.mark.integration


def cfg(tmp_path: Path, *overrides: str):
    return compose("collect", [f"paths.data_dir={tmp_path}", *overrides], output_dir=tmp_path / "run")


@pytest.mark.slow
def test_collects_the_recipe_into_a_dataset_pandas_can_read(tmp_path: Path) -> None:
    summary = collect.run(cfg(tmp_path, "dataset=demo", "tasks=[airplane_on,call_911]", "env.snapshots=[000,030,109]",
                              "save_xml=true"))
    assert (summary["episodes"], summary["successes"]) == (6, 6)
    df = pd.read_parquet(tmp_path / "demo" / "episodes")  # plain pandas, no vlui needed
    assert df.episode_id.nunique() == 6 and set(df.task_id) == {"airplane_on", "call_911"}
    last = df[df.is_last]
    assert len(last) == 6 and last.action.isna().all() and df[~df.is_last].action.notna().all()
    assert df.xml.str.startswith("<?xml").all()
    info = json.loads((tmp_path / "demo" / "meta" / "info.json").read_text())
    assert info["format_version"] == FORMAT_VERSION and info["image"] == {"height": 256, "width": 128,
                                                                          "format": "png"}
    # the screens and how their actions read, for training to take from the dataset
    assert info["spec"]["screen"] == [256, 128, 3] and (info["spec"]["tap_threshold"], info["spec"]["y_scale"]) == (
        0.14, 2.0)
    _, table = read_dataset(tmp_path / "demo")
    assert table.num_rows == len(df)


def test_noisy_expert_failures_are_kept_and_reported(tmp_path: Path, capsys) -> None:
    summary = collect.run(cfg(tmp_path, "dataset=noisy", "tasks=representative", "env.snapshots=[000,001,002,003]",
                              "agent.random_action_prob=0.3", "agent.wrong_action_prob=0.2", "env.num_envs=1"))
    assert summary["failures"] > 0 and summary["episodes"] == 24
    out = capsys.readouterr().out
    assert f"{summary['failures']} failed episode(s) kept and flagged" in out
    df = pd.read_parquet(tmp_path / "noisy" / "episodes")
    assert (~df.groupby("episode_id").success.first()).sum() == summary["failures"]


def test_a_collection_of_first_steps_holds_each_episode_up_to_env_step_limit(tmp_path: Path) -> None:
    """env.step_limit=2: the expert's first two steps of every episode (opening the task's app), kept as episodes
    that ran out of steps; the recipe records the cap, so the same dataset asked without it is another dataset."""
    summary = collect.run(cfg(tmp_path, "dataset=first2", "tasks=[airplane_on,call_911]", "env.snapshots=[000,109]",
                              "env.step_limit=2", "env.num_envs=1"))
    assert (summary["episodes"], summary["successes"]) == (4, 0)
    df = pd.read_parquet(tmp_path / "first2" / "episodes")
    assert (df.groupby("episode_id").size() == 3).all()  # two actions and the screen they led to
    assert df[df.is_last].truncated.all() and df.action.notna().sum() == 4 * 2
    info = json.loads((tmp_path / "first2" / "meta" / "info.json").read_text())
    assert info["recipe"]["env"]["step_limit"] == 2
    with pytest.raises(VluiError, match=r"different recipe \(differs in: env\)"):
        collect.run(cfg(tmp_path, "dataset=first2", "tasks=[airplane_on,call_911]", "env.snapshots=[000,109]",
                        "env.num_envs=1"))


@pytest.mark.fast
def test_existing_dataset_is_refused_without_resume_and_with_another_recipe(tmp_path: Path) -> None:
    collect.run(cfg(tmp_path, "dataset=d", "tasks=[open_clock]", "env.snapshots=[000]"))
    with pytest.raises(VluiError, match="already holds a dataset"):
        collect.run(cfg(tmp_path, "dataset=d", "tasks=[open_clock]", "env.snapshots=[000]", "resume=false"))
    with pytest.raises(VluiError, match="different recipe .*tasks"):
        collect.run(cfg(tmp_path, "dataset=d", "tasks=[open_phone]", "env.snapshots=[000]"))


def test_a_dataset_collected_before_an_agent_setting_was_added_still_resumes(tmp_path: Path) -> None:
    collect.run(cfg(tmp_path, "dataset=d", "tasks=[open_clock]", "env.snapshots=[000,001]", "episodes_per_pair=1"))
    info_file = tmp_path / "d" / "meta" / "info.json"
    info = json.loads(info_file.read_text())
    # agent.actions came after datasets were first written: at its old behaviour it is not part of the recipe, so
    # the recipe is what an older vlui wrote and the same command goes on where it stopped
    assert "actions" not in info["recipe"]["agent"] and info["recipe"]["agent"]["name"] == "expert"
    (tmp_path / "d" / "episodes" / "chunk-000" / "episode_000001.parquet").unlink()
    index = tmp_path / "d" / "meta" / "episodes.jsonl"
    index.write_text(index.read_text().splitlines(keepends=True)[0])
    summary = collect.run(cfg(tmp_path, "dataset=d", "tasks=[open_clock]", "env.snapshots=[000,001]"))
    assert summary["episodes"] == 2 and json.loads(info_file.read_text())["recipe"] == info["recipe"]


# what a dataset collected by a noisy expert recorded of its agent before each agent type had settings of its own:
# every agent's settings, the MLLM's screenshot size as image_height/width
RECORDED_BEFORE = {
    "name": "expert", "tap_jitter": 0.0, "random_action_prob": 0.2, "wrong_action_prob": 0.0, "checkpoint": None,
    "device": "auto", "base_url": None, "url": None, "model": None, "api_key_env": "OPENAI_API_KEY", "timeout_s": 60.0,
    "max_retries": 5, "retry_delay_s": 1.0, "retry_max_delay_s": 60.0, "temperature": 0.0, "top_p": None,
    "max_answer_tokens": None, "seed_requests": True, "with_bounds": True, "history": 8, "answer": "bmoca",
    "reflect": False, "few_shot": 0, "few_shot_data": None, "few_shot_seed": 0, "image_height": 1024,
    "image_width": 512, "set_of_marks": False, "cache_dir": None, "budget_requests": None, "budget_tokens": None,
    "price_input_per_1m": 0.0, "price_output_per_1m": 0.0, "stop_after_invalid": 50}


def test_a_dataset_collected_before_each_agent_type_had_its_own_settings_still_resumes(tmp_path: Path) -> None:
    recipe = ("dataset=d", "tasks=[open_clock]", "env.snapshots=[000,001]", "agent.random_action_prob=0.2")
    collect.run(cfg(tmp_path, *recipe))
    info_file = tmp_path / "d" / "meta" / "info.json"
    info = json.loads(info_file.read_text())
    assert info["recipe"]["agent"] == {"name": "expert", "tap_jitter": 0.0, "random_action_prob": 0.2,
                                       "wrong_action_prob": 0.0}  # the expert's own settings, and only those
    info_file.write_text(json.dumps({**info, "recipe": {**info["recipe"], "agent": RECORDED_BEFORE}}))
    (tmp_path / "d" / "episodes" / "chunk-000" / "episode_000001.parquet").unlink()
    index = tmp_path / "d" / "meta" / "episodes.jsonl"
    index.write_text(index.read_text().splitlines(keepends=True)[0])
    summary = collect.run(cfg(tmp_path, *recipe))
    assert summary["episodes"] == 2 and json.loads(info_file.read_text())["recipe"]["agent"] == RECORDED_BEFORE
    # the expert with other noise is another recipe, as before
    with pytest.raises(VluiError, match="different recipe .*agent"):
        collect.run(cfg(tmp_path, *recipe, "agent.random_action_prob=0.3"))


@pytest.mark.fast
def test_a_collection_starts_no_more_processes_than_cores_on_the_simulated_phone(monkeypatch) -> None:
    monkeypatch.setattr(collect, "cores", lambda: 2)
    assert collect.processes(EnvConfig(num_envs=16), episodes=100) == 2  # train.py's 16 on a 2-core machine
    assert collect.processes(EnvConfig(num_envs=16), episodes=1) == 1
    assert collect.processes(EnvConfig(num_envs=1), episodes=100) == 1
    # over ADB the phones do the work: one process a device, whatever the cores
    assert collect.processes(EnvConfig(backend="adb", serial=["a", "b", "c"], num_envs=16), episodes=100) == 3


@pytest.mark.slow
def test_more_environments_than_cores_collect_the_same_dataset(tmp_path: Path, monkeypatch, caplog) -> None:
    monkeypatch.setattr(collect, "cores", lambda: 2)
    recipe = ("tasks=[airplane_on,alarm_9am_on]", "env.snapshots=[000,105,random:2]", "env.observation_height=64",
              "env.observation_width=32", "agent.random_action_prob=0.2")
    with caplog.at_level("INFO", logger="vlui.jobs.collect"):
        for n in (1, 8):
            collect.run(cfg(tmp_path, f"dataset=n{n}", *recipe, f"env.num_envs={n}"))
    assert "env.num_envs=8: 2 worker process(es), each collecting its share (at most one a core)" in caplog.text
    (info_1, one), (info_8, eight) = read_dataset(tmp_path / "n1"), read_dataset(tmp_path / "n8")
    order = [("episode_id", "ascending"), ("step", "ascending")]
    assert info_1 == info_8 and len(set(one.column("episode_id").to_pylist())) == 8
    assert one.sort_by(order).equals(eight.sort_by(order))  # every step: screens, actions, rewards


@pytest.mark.slow
def test_corrupted_episode_file_is_a_clear_error(tmp_path: Path) -> None:
    collect.run(cfg(tmp_path, "dataset=c", "tasks=[open_clock]", "env.snapshots=[000,001]"))
    victim = next((tmp_path / "c" / "episodes").glob("chunk-*/episode_*.parquet"))
    victim.write_bytes(victim.read_bytes()[:100])
    with pytest.raises(VluiError, match=f"episode file .*{victim.name} is corrupted"):
        read_dataset(tmp_path / "c")


@pytest.mark.slow
def test_a_killed_collection_resumes_without_losing_or_duplicating_episodes(tmp_path: Path) -> None:
    args = [sys.executable, "collect.py", f"paths.data_dir={tmp_path}", "dataset=k", "tasks=open_app",
            "env.snapshots=[000,001,002,003,004,005,006]", "env.num_envs=1", f"hydra.run.dir={tmp_path}/run"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    index = tmp_path / "k" / "meta" / "episodes.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not index.exists() or len(index.read_text().splitlines()) < 15):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # no chance to clean up, as when a machine dies
    proc.wait()
    before = len(index.read_text().splitlines())
    assert 15 <= before < 98  # 14 tasks x 7 snapshots
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "already there, resuming" in out.stdout  # at least the indexed episodes (files written just before
    # the kill but not yet indexed are recovered too, so the count can be higher than `before`)
    df = pd.read_parquet(tmp_path / "k" / "episodes")
    assert sorted(df.episode_id.unique()) == list(range(98))
    assert not df.duplicated(["episode_id", "step"]).any()
    assert not list((tmp_path / "k").rglob(".*.tmp"))


def test_unknown_task_and_unknown_template_are_one_line_errors() -> None:
    for override, message in (("tasks=[fly]", "unknown task id(s) fly"),
                              ("tasks=template:nope", "unknown task template 'nope'; choose from: create_alarm")):
        out = subprocess.run([sys.executable, "collect.py", override, "hydra.run.dir=/tmp/vlui-test-collect"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
