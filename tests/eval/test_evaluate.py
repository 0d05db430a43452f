"""evaluate.py end to end: the protocol, results people read, resume, policies, an LLM agent over HTTP, failures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from tests.conftest import ROOT, run_python
from vlui.cli import compose
from vlui.errors import VluiError
from vlui.jobs import evaluate
from vlui.models.policy import VLUIPolicy, export_policy
from vlui.models.settings import ModelConfig, TextConfig
from vlui.spec import ObsActionSpec
from vlui.tasks.catalog import task_set

pytestmark = pytest.mark.integration


def cfg(tmp_path: Path, *overrides: str):
    return compose("evaluate", list(overrides), output_dir=tmp_path / "out")


def test_expert_scores_100_percent_and_the_results_are_complete(tmp_path: Path) -> None:
    result = evaluate.run(cfg(tmp_path, "agent=expert", "tasks=supported", "env.snapshots=[000,030,105,109]",
                              "runs=2"))
    assert result["success_rate"] == 1.0 and result["episodes"] == len(task_set("supported")) * 4 * 2
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {"success_rate", "per_task", "per_snapshot", "episodes", "agent", "checkpoint", "config"} <= out.keys()
    assert set(out["per_task"]["airplane_on"]) >= {"success_rate", "stderr", "episodes", "wilson95"}
    rec = out["records"][0]
    assert {"task", "snapshot", "seed", "success", "steps", "actions"} <= rec.keys()
    assert out["overall"]["adaptive"]["tcr"] == 1.0 and out["overall"]["adaptive"]["tr_normalised"] == 1.0
    # every action it took could be carried out, and every tap and long press landed on a clickable element
    o = out["overall"]
    assert o["actions"] == sum(r["steps"] for r in out["records"]) > 0 and o["invalid_actions"] == 0
    assert o["missed_tap_rate"] == 0.0 and out["per_task"]["airplane_on"]["invalid_action_rate"] == 0.0
    assert out["per_split"].keys() == {"train", "test"}
    md = (tmp_path / "out" / "results.md").read_text()
    assert f"Invalid actions (AndroidArena): 0 of {o['actions']} actions (0.0%) could not be carried out; taps" in md
    # the deterministic expert on the deterministic phone: the two runs are the same, and the report says so
    assert out["repeats"] == {"runs": 2, "identical": True, "differing_episodes": 0}
    assert "| task | success (2 identical runs) |" in md and "| airplane_on | 100.0% |" in md
    assert "± 0.0" not in md and "The 2 runs are identical repeats" in md
    assert (tmp_path / "out" / "success_per_task.png").exists() and (tmp_path / "out" / "train_vs_test.png").exists()


def test_template_instances_are_reported_per_instance_in_json_and_pooled_per_template_in_tables(tmp_path) -> None:
    result = evaluate.run(cfg(tmp_path, "agent=expert", "tasks=[template:set_volume,template:call_number,call_911]",
                              "task_count=4", "task_split=all", "env.snapshots=[000,100]", "runs=1"))
    assert result["success_rate"] == 1.0 and result["episodes"] == 9 * 2
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(out["per_task"]) == 9 and all("@" in t for t in out["per_task"] if t != "call_911")
    assert out["per_family"]["set_volume"]["instances"] == 4 and out["per_family"]["set_volume"]["episodes"] == 8
    assert "instances" not in out["per_family"]["call_911"]
    assert out["per_split_family"]["test"]["call_number"]["episodes"] == 4
    assert out["overall"]["adaptive"]["tcr"] == 1.0  # the expert's own episodes are its reference
    md = (tmp_path / "out" / "results.md").read_text()
    assert "| set_volume (4 instances) | 100.0% |" in md and "| call_911 | 100.0% |" in md
    assert "| task | test | train |" in md and "| call_number | 100% | 100% |" in md


def test_constrained_tasks_report_their_violations_per_level(tmp_path: Path) -> None:
    result = evaluate.run(cfg(tmp_path, "agent=expert", "tasks=[template:call_number_no_contacts,"
                              "template:toggle_setting_no_search,template:create_alarm_keep_alarms,airplane_on]",
                              "task_count=2", "env.snapshots=[000,109]", "runs=1", "adaptive_metrics=false"))
    assert result["success_rate"] == 1.0 and result["episodes"] == 7 * 2
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    c = out["constraints"]
    assert (c["episodes"], c["violated"], c["violation_rate"]) == (12, 0, 0.0)
    assert {k: v["episodes"] for k, v in c["per_level"].items()} == {"app": 4, "component": 4, "page": 4}
    lines = [json.loads(x) for x in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    constrained = [r for r in lines if "@" in r["task"]]
    assert all(r["violations"] == [] and r["goal_reached"] for r in constrained)
    assert all("violations" not in r for r in lines if r["task"] == "airplane_on")
    assert "| page | 4 | 0 | 0.0% |" in (tmp_path / "out" / "results.md").read_text()


def test_random_agent_reports_its_low_rate_and_gifs_of_failures(tmp_path: Path) -> None:
    result = evaluate.run(cfg(tmp_path, "agent=random", "env.snapshots=[100,101]", "runs=1", "video=failures",
                              "adaptive_metrics=false"))
    assert result["success_rate"] < 0.2
    assert len(list((tmp_path / "out" / "videos").glob("*.gif"))) >= 10


@pytest.mark.fast
def test_rerunning_resumes_and_other_settings_are_refused(tmp_path: Path) -> None:
    args = ("agent=expert", "tasks=[open_clock,open_phone]", "env.snapshots=[000,001]", "runs=1",
            "adaptive_metrics=false")
    evaluate.run(cfg(tmp_path, *args))
    log = tmp_path / "out" / "episodes.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:2]) + "\n" + lines[2][:20])  # killed while writing the third
    evaluate.run(cfg(tmp_path, *args))
    keys = [json.loads(x)["key"] for x in log.read_text().splitlines() if x.startswith("{") and x.endswith("}")]
    assert sorted(keys) == sorted({json.loads(x)["key"] for x in lines})
    with pytest.raises(VluiError, match="other settings"):
        evaluate.run(cfg(tmp_path, *args[:-1], "runs=2"))


def test_a_trained_policy_export_is_evaluated_in_batches(tmp_path: Path) -> None:
    policy = VLUIPolicy(ModelConfig(text=TextConfig(size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32, 32]),
                        ObsActionSpec(64, 32))
    export_policy(policy, tmp_path / "run" / "policy")
    result = evaluate.run(cfg(tmp_path, f"checkpoint={tmp_path}/run", "env.snapshots=[100]", "runs=1",
                              "env.observation_height=64", "env.observation_width=32", "adaptive_metrics=false"))
    assert result["episodes"] == 6


def test_env_num_envs_is_how_many_environments_run_side_by_side(tmp_path: Path, monkeypatch) -> None:
    import vlui.jobs.executor as executor

    built, open_env = [], executor.open_env

    def counted(*args, **kwargs):
        built.append(args)
        return open_env(*args, **kwargs)

    monkeypatch.setattr(executor, "open_env", counted)
    args = ("agent=random", "tasks=[open_clock]", "env.snapshots=[000,001]", "runs=2",
            "env.observation_height=64", "env.observation_width=32", "adaptive_metrics=false")
    journals = {}
    for n in (1, 3):
        built.clear()
        evaluate.run(compose("evaluate", [*args, f"env.num_envs={n}"], output_dir=tmp_path / str(n)))
        assert len(built) == n  # 4 episodes in n environments, each built once
        journals[n] = _journal(tmp_path / str(n))
    assert len(journals[1]) == 4 and journals[1] == journals[3]  # the same episodes, however many ran together


def test_each_policy_sees_screens_at_the_size_it_was_trained_at(tmp_path: Path) -> None:
    # a policy trained on 64x32 screens next to one trained on 48x24, with no screen size given: each is evaluated
    # at its own (a policy handed another size refuses the batch, so finishing is the check)
    for name, size in (("small", (64, 32)), ("smaller", (48, 24))):
        torch.manual_seed(0)
        export_policy(VLUIPolicy(ModelConfig(text=TextConfig(size="tiny"), hidden_dim=32, num_heads=2,
                                             head_dims=[32, 32]), ObsActionSpec(*size)), tmp_path / name / "policy")
    result = evaluate.run(cfg(tmp_path, f"checkpoint={{a: [{tmp_path}/small], b: [{tmp_path}/smaller]}}",
                              "env.snapshots=[100]", "tasks=[open_clock]", "runs=1", "adaptive_metrics=false"))
    assert result["episodes"] == 2
    records = [json.loads(x) for x in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["group"] for r in records) == ["a", "b"] and not any(r["infra_failure"] for r in records)


def _export_tiny(path: Path, seed: int) -> None:
    torch.manual_seed(seed)
    export_policy(VLUIPolicy(ModelConfig(text=TextConfig(size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32, 32]),
                             ObsActionSpec(64, 32)), path / "policy")


def test_a_policy_trained_again_into_the_same_folder_is_evaluated_afresh(tmp_path: Path, caplog) -> None:
    # the quickstart evaluates checkpoints/quickstart/<run> under one name every time: episodes of the weights that
    # were there before must not be passed off as the new policy's
    args = (f"checkpoint={tmp_path}/run", "tasks=[open_clock]", "env.snapshots=[100,101]", "runs=1",
            "env.observation_height=64", "env.observation_width=32", "adaptive_metrics=false")
    _export_tiny(tmp_path / "run", seed=0)
    evaluate.run(cfg(tmp_path, *args))
    first = (tmp_path / "out" / "episodes.jsonl").read_text()
    evaluate.run(cfg(tmp_path, *args))  # the same weights: resumed, nothing runs again or moves
    assert (tmp_path / "out" / "episodes.jsonl").read_text() == first
    assert not list((tmp_path / "out").glob("earlier-*"))
    _export_tiny(tmp_path / "run", seed=1)  # trained again
    with caplog.at_level("INFO", logger="vlui.jobs.evaluate"):
        evaluate.run(cfg(tmp_path, *args))
    assert "evaluation of its policies' earlier weights" in caplog.text
    (aside,) = (tmp_path / "out").glob("earlier-*")
    assert (aside / "episodes.jsonl").read_text() == first  # kept
    fresh = [json.loads(x) for x in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert len(fresh) == 2 and [r["actions"] for r in fresh] != [json.loads(x)["actions"] for x in first.splitlines()]


def _journal(folder: Path) -> dict[str, dict]:
    return {r["key"]: r for r in map(json.loads, (folder / "episodes.jsonl").read_text().splitlines())}


def test_episodes_of_the_same_policies_are_reused_and_give_what_running_them_gives(tmp_path: Path, caplog) -> None:
    # a study adding a seed to an arm: the seeds evaluated before are taken from that evaluation, not run again
    for seed in range(3):
        _export_tiny(tmp_path / f"s{seed}", seed)
    common = ("tasks=[open_clock,open_phone]", "env.snapshots=[100,101]", "runs=1", "env.observation_height=64",
              "env.observation_width=32", "adaptive_metrics=false")
    runs = ", ".join(f"{tmp_path}/s{i}" for i in range(3))
    evaluate.run(compose("evaluate", [f"checkpoint={{a: [{tmp_path}/s0, {tmp_path}/s1]}}", *common],
                         output_dir=tmp_path / "before"))
    evaluate.run(compose("evaluate", [f"checkpoint={tmp_path}/s2", *common], output_dir=tmp_path / "alone"))
    with caplog.at_level("INFO", logger="vlui.jobs.evaluate"):
        evaluate.run(compose("evaluate", [f"checkpoint={{a: [{runs}]}}", *common,
                                          f"reuse=[{tmp_path}/befo*, {tmp_path}/alone]"], output_dir=tmp_path / "now"))
    assert "12 taken from earlier evaluations of the same policies (reuse)" in caplog.text  # none run here
    evaluate.run(compose("evaluate", [f"checkpoint={{a: [{runs}]}}", *common], output_dir=tmp_path / "fresh"))
    now, fresh = _journal(tmp_path / "now"), _journal(tmp_path / "fresh")
    assert now.keys() == fresh.keys() and len(now) == 12
    # every policy's episodes are what running them gives, under this evaluation's keys and policy indices; the
    # third's came from its own evaluation (one policy, keys without a policy index)
    assert all(now[k]["actions"] == fresh[k]["actions"] and now[k]["policy"] == fresh[k]["policy"]
               and now[k]["checkpoint"] == fresh[k]["checkpoint"] for k in now)
    assert {k.split("/")[0]: now[k].get("reused") for k in now} == {"p0": "before", "p1": "before", "p2": "alone"}
    results = json.loads((tmp_path / "now" / "results.json").read_text())
    assert results["seeds"] == json.loads((tmp_path / "fresh" / "results.json").read_text())["seeds"]


def test_episodes_are_not_reused_from_other_weights_or_other_settings(tmp_path: Path, caplog) -> None:
    for seed in range(2):
        _export_tiny(tmp_path / f"s{seed}", seed)
    common = ("tasks=[open_clock]", "runs=1", "env.observation_height=64", "env.observation_width=32",
              "adaptive_metrics=false")
    group = f"checkpoint={{a: [{tmp_path}/s0, {tmp_path}/s1]}}"
    evaluate.run(compose("evaluate", [group, *common, "env.snapshots=[100,101]"], output_dir=tmp_path / "before"))
    evaluate.run(compose("evaluate", [group, *common, "env.snapshots=[100]"], output_dir=tmp_path / "other"))
    _export_tiny(tmp_path / "s1", seed=5)  # trained again since
    with caplog.at_level("INFO", logger="vlui.jobs.evaluate"):
        evaluate.run(compose("evaluate", [group, *common, "env.snapshots=[100,101]",
                                          f"reuse=[{tmp_path}/other, {tmp_path}/before, {tmp_path}/none-*]"],
                             output_dir=tmp_path / "now"))
    assert "2 taken from earlier evaluations" in caplog.text  # s0's two episodes; not s1's, nor a phone subset's
    now = _journal(tmp_path / "now")
    assert {k: r.get("reused") for k, r in now.items()} == {
        "p0/0/open_clock/100/0": "before", "p0/0/open_clock/101/0": "before",
        "p1/0/open_clock/100/0": None, "p1/0/open_clock/101/0": None}
    with pytest.raises(VluiError, match="holds no evaluation"):
        evaluate.run(compose("evaluate", [group, *common, f"reuse={tmp_path}/s0"], output_dir=tmp_path / "x"))


@pytest.mark.slow  # 10 s: six tiny policies (two recipes, three seeds each) exported and evaluated
def test_several_training_seeds_give_an_error_bar_and_two_recipes_are_compared(tmp_path: Path) -> None:
    for seed in range(3):
        _export_tiny(tmp_path / "exp" / f"bc-seed{seed}", seed)
        _export_tiny(tmp_path / "exp" / f"iql-seed{seed}", 10 + seed)
    small = ("env.snapshots=[100,101]", "tasks=[open_clock,airplane_on]", "runs=2", "env.observation_height=64",
             "env.observation_width=32", "adaptive_metrics=false", "env.num_envs=4")
    result = evaluate.run(cfg(tmp_path, f"checkpoint={{bc: '{tmp_path}/exp/bc-*', iql: '{tmp_path}/exp/iql-*'}}",
                              *small))
    assert result["episodes"] == 6 * 2 * 2 * 2  # 6 policies x 2 tasks x 2 snapshots x 2 runs
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    bc = out["seeds"]["groups"]["bc"]
    assert bc["checkpoints"] == [f"{tmp_path}/exp/bc-seed{s}" for s in range(3)]
    assert bc["overall"]["seeds"] == 3 and set(bc["overall"]["per_policy"]) == set(bc["checkpoints"])
    assert set(bc["per_family"]) == {"open_clock", "airplane_on"}
    rates = list(bc["overall"]["per_policy"].values())
    assert bc["overall"]["mean"] == pytest.approx(sum(rates) / 3)
    # the interval of a bootstrap over the 3 seeds and the 2 phones, overall and per split (that split's phones)
    ci = bc["overall"]["ci95"]
    assert ci["method"] == "bootstrap over seeds and phones" and (ci["seeds"], ci["phones"]) == (3, 2)
    assert ci["low"] - 1e-9 <= bc["overall"]["mean"] <= ci["high"] + 1e-9
    assert {s: g["ci95"]["phones"] for s, g in bc["per_split"].items()} == {"test": 2}
    assert bc["per_phone"].keys() == {"100", "101"} and all(
        set(seeds) == set(bc["checkpoints"]) and all(0 <= v <= 1 for v in seeds.values())
        for seeds in bc["per_phone"].values())
    (comparison,) = out["seeds"]["comparisons"]
    assert comparison["a"] == "bc" and comparison["b"] == "iql"
    a = list(bc["overall"]["per_policy"].values())
    b = list(out["seeds"]["groups"]["iql"]["overall"]["per_policy"].values())
    assert comparison["difference"] == pytest.approx(np.mean(a) - np.mean(b))  # Welch's test of the seeds' rates
    if np.std(a) + np.std(b) > 0:
        assert comparison["p_value"] == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue)
    else:  # both spreads 0: the difference is exact
        assert comparison["p_value"] == (0.0 if comparison["difference"] else 1.0)
    boot = comparison["bootstrap"]  # the same phones for both, each recipe's seeds drawn on their own
    assert boot["ci95"][0] <= boot["difference"] <= boot["ci95"][1] and 1e-4 <= boot["p_value"] <= 1
    assert comparison["p_holm"] >= comparison["p_value"] and boot["p_holm"] >= boot["p_value"]
    # every policy ran the same episodes with the same seeds, and every episode says which policy acted
    by_policy = {}
    for r in out["records"]:
        by_policy.setdefault(r["checkpoint"], set()).add((r["task"], r["snapshot"], r["run"], r["seed"]))
    assert len(by_policy) == 6 and len({frozenset(v) for v in by_policy.values()}) == 1
    md = (tmp_path / "out" / "results.md").read_text()
    assert "| task | bc (3 seeds, mean [95% CI]) | iql (3 seeds, mean [95% CI]) |" in md
    t = bc["overall"]["t_interval"]  # and the t interval over the 2 phones' means beside it
    assert t["phones"] == 2 and t["low"] - 1e-9 <= t["mean"] <= t["high"] + 1e-9
    assert (f"| **all** | {100 * bc['overall']['mean']:.1f}% [{100 * ci['low']:.1f}, {100 * ci['high']:.1f}] "
            f"(t over 2 phones [{100 * t['low']:.1f}, {100 * t['high']:.1f}]) |") in md
    assert "its 95% interval from a bootstrap over seeds and phones (10,000 resamples" in md
    assert "bc − iql: " in md and "Welch's t-test across seeds" in md and "Holm-adjusted for 1 test p = " in md
    # by phone setting: both phones are Pixel 3s, so that group is every seed on every phone, as overall
    pixel3 = {r["axis"]: r for r in out["by_setting"]["bc"] if r["value"] == "Pixel 3"}["device"]
    assert pixel3["phones"] == 2 and pixel3["mean"] == pytest.approx(bc["overall"]["mean"])
    assert "## By phone setting" in md and "| device | Pixel 3 | 2 |" in md
    # resuming with the same policies runs nothing again; other policies in the same folder are refused
    again = evaluate.run(cfg(tmp_path, f"checkpoint={{bc: '{tmp_path}/exp/bc-*', iql: '{tmp_path}/exp/iql-*'}}",
                             *small))
    assert again["episodes"] == result["episodes"]
    with pytest.raises(VluiError, match="other settings"):
        evaluate.run(cfg(tmp_path, f"checkpoint={tmp_path}/exp/bc-*", *small))


def test_stochastic_episodes_make_runs_differ_and_record_what_was_drawn(tmp_path: Path) -> None:
    evaluate.run(cfg(tmp_path, "agent=expert", "tasks=[open_clock,airplane_on,add_language]",
                     "env.snapshots=[100,101,102,103]", "runs=3", "env.stochastic=true", "adaptive_metrics=false"))
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    assert out["repeats"]["runs"] == 3 and not out["repeats"]["identical"]
    draws = [r["perturbations"] for r in out["records"]]
    assert all("clock_minutes" in d for d in draws) and len({json.dumps(d) for d in draws}) > 10
    md = (tmp_path / "out" / "results.md").read_text()
    assert "success (mean ± s.e. over runs)" in md and "identical repeats" not in md


@pytest.mark.slow
def test_a_glob_that_matches_no_policy_is_one_line() -> None:
    out = run_python("evaluate.py", "checkpoint=checkpoints/nothing-here-*/x", "hydra.run.dir=/tmp/vlui-test-glob")
    assert out.returncode == 2 and "matches no policy" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_missing_checkpoint_and_unknown_task_are_one_line_errors(tmp_path: Path) -> None:
    for args, message in ((["checkpoint=nowhere"], "is not a policy export"),
                          (["agent=expert", "tasks=[fly]"], "unknown task id(s) fly"),
                          (["agent=expert", "env.snapshots=[999]"], "unknown snapshot '999'")):
        out = run_python("evaluate.py", *args, f"hydra.run.dir={tmp_path}/out")
        assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr[-500:]


class _StandIn(BaseHTTPRequestHandler):
    """A local stand-in for an LLM endpoint: opens the drawer, then taps the Settings icon; once, it talks nonsense."""

    replies: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        screen = body["messages"][-1]["content"]
        settings = [ln for ln in screen.splitlines() if "TextView Settings" in ln]
        if not _StandIn.replies:
            answer = "I think I should look around first."  # malformed: costs a step
        elif settings:
            answer = f"tap({settings[0][1:settings[0].index(']')]})"
        else:
            answer = 'swipe("up")'
        _StandIn.replies.append(answer)
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the model list, which the agent checks before the run
        data = json.dumps({"object": "list", "data": [{"id": "stand-in", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def test_text_agent_over_a_local_openai_compatible_endpoint(tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _StandIn.replies = []
    try:
        result = evaluate.run(cfg(tmp_path, "agent=text", f"agent.url=http://127.0.0.1:{server.server_port}/v1",
                                  "agent.model=stand-in", "tasks=[open_settings]", "env.snapshots=[000]", "runs=1",
                                  "adaptive_metrics=false"))
    finally:
        server.shutdown()
    assert result["success_rate"] == 1.0
    record = json.loads((tmp_path / "out" / "episodes.jsonl").read_text().splitlines()[0])
    assert record["actions"][0] is None and record["steps"] == 3  # the nonsense counted as a step
    assert _StandIn.replies[1:] == ['swipe("up")', _StandIn.replies[2]] and _StandIn.replies[2].startswith("tap(")


def test_a_broken_environment_is_retried_then_recorded_as_infrastructure(tmp_path: Path, monkeypatch) -> None:
    from vlui.env.env import PhoneEnv

    original = PhoneEnv.step
    calls = {"n": 0}

    def flaky(self, action):
        calls["n"] += 1
        if self.task.id == "open_phone":
            raise RuntimeError("device went away")
        return original(self, action)

    monkeypatch.setattr(PhoneEnv, "step", flaky)
    result = evaluate.run(cfg(tmp_path, "agent=expert", "tasks=[open_clock,open_phone]", "env.snapshots=[000]",
                              "runs=1", "adaptive_metrics=false"))
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    assert out["overall"]["infra_failures"] == 1 and out["overall"]["episodes"] == 1  # not counted against it
    assert result["success_rate"] == 1.0
    assert "device went away" in [r for r in out["records"] if r["task"] == "open_phone"][0]["infra_failure"]


@pytest.mark.slow
def test_an_evaluation_killed_mid_way_resumes_to_the_same_records(tmp_path: Path) -> None:
    """A real SIGKILL to the whole process group (as when a machine dies): the same command finishes the evaluation,
    with every episode once and each as an uninterrupted evaluation records it."""
    def command(root: Path) -> list[str]:
        return [sys.executable, "evaluate.py", f"paths.root_dir={root}", "agent=random", "name=killed",
                "tasks=[open_clock,airplane_on]", "env.snapshots=[000,001,002,003,004,005]", "runs=4",
                "env.observation_height=64", "env.observation_width=32", "env.num_envs=2", "adaptive_metrics=false"]

    def records(root: Path) -> dict[tuple, tuple]:
        lines = (root / "outputs" / "evaluate" / "killed" / "episodes.jsonl").read_text().splitlines()
        rows = [json.loads(x) for x in lines]
        keys = [(r["task"], r["snapshot"], r["run"], r["seed"]) for r in rows]
        assert len(keys) == len(set(keys)), "an episode recorded twice"
        return {k: (r["success"], r["steps"], r["actions"]) for k, r in zip(keys, rows, strict=True)}

    whole = subprocess.run(command(tmp_path / "whole"), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr[-3000:]
    killed = tmp_path / "killed"
    log = killed / "outputs" / "evaluate" / "killed" / "episodes.jsonl"
    proc = subprocess.Popen(command(killed), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 300  # a guard against a hang
    while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 5):
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(log.read_text().splitlines())
    assert 5 <= done_before < 48  # 2 tasks x 6 snapshots x 4 runs: it died mid-way
    again = subprocess.run(command(killed), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "already done, resuming" in again.stdout
    assert records(killed) == records(tmp_path / "whole") and len(records(killed)) == 48
