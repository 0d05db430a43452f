"""Evaluations whose infrastructure fails (an LLM endpoint, a device): the check before the run, episodes that fail
for infrastructure reasons counted apart and run again on resume, and a run where nothing could be measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.openai_stand_in import Failure, StandIn
from tests.conftest import run_python
from vlui.cli import compose
from vlui.errors import VluiError
from vlui.jobs import evaluate

pytestmark = pytest.mark.integration


def text_agent(llm: StandIn, *overrides: str) -> list[str]:
    return ["agent=text", f"agent.url={llm.url}", "agent.model=stand-in", "env.snapshots=[000]", "runs=1",
            "adaptive_metrics=false", "agent.retry_delay_s=0", *overrides]


def run(tmp_path: Path, *overrides: str) -> dict:
    return evaluate.run(compose("evaluate", list(overrides), output_dir=tmp_path / "out"))


def episodes(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]


def test_a_flaky_endpoint_costs_retries_not_episodes(tmp_path: Path) -> None:
    with StandIn() as llm:
        llm.failures = [Failure(429, {"Retry-After": "0"}), Failure(503), Failure(502), Failure(429)]
        result = run(tmp_path, *text_agent(llm, "tasks=[open_settings,open_clock]"))
    assert result["success_rate"] == 1.0 and result["episodes"] == 2
    assert not any(r["infra_failure"] for r in episodes(tmp_path))
    assert not llm.failures  # all four were answered, and retried


def reject_non_json(constant: str):
    raise AssertionError(f"results.json holds {constant}, which is not JSON")


def test_infrastructure_failures_are_not_counted_and_run_again_on_resume(tmp_path: Path, capsys, caplog) -> None:
    args = ("tasks=[open_settings,open_clock]", "agent.max_retries=1")
    with StandIn() as llm, caplog.at_level("INFO", logger="vlui.jobs.evaluate"):
        llm.fail = lambda prompt: Failure(503, message="clock model offline") if "the clock app" in prompt else None
        result = run(tmp_path, *text_agent(llm, *args))
    out = capsys.readouterr().out + caplog.text  # the results table is printed, the rest logged
    assert result["success_rate"] == 1.0  # open_settings, 1/1: the clock episode is not the agent's failure
    results = json.loads((tmp_path / "out" / "results.json").read_text(), parse_constant=reject_non_json)
    assert results["overall"]["infra_failures"] == 1 and results["overall"]["episodes"] == 1
    clock = results["per_task"]["open_clock"]  # nothing counted: no rate, and strict JSON (null, not NaN)
    assert (clock["success_rate"], clock["stderr"], clock["wilson95"], clock["episodes"]) == (None, None, None, 0)
    assert "1 of 2 episodes failed for infrastructure reasons and are not counted (the last with: " in out
    assert "clock model offline" in out and "nan" not in out
    assert "| open_clock | – (1 failed for infrastructure reasons) |" in out

    caplog.clear()
    with StandIn() as llm, caplog.at_level("INFO", logger="vlui.jobs.evaluate"):
        # the endpoint works again: the same command runs the clock episode again, and only it
        result = run(tmp_path, *text_agent(llm, *args, "agent.max_retries=3"))  # retry settings may change
    out = caplog.text
    assert "1 already done, resuming; 1 that failed for infrastructure reasons run again" in out
    assert {p.split("\n", 1)[0] for p in (b["messages"][-1]["content"] for b in llm.chat_requests())} == {
        "Goal: open the clock app."}
    assert result["success_rate"] == 1.0 and result["episodes"] == 2
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["overall"]["infra_failures"] == 0 and results["per_task"]["open_clock"]["successes"] == 1


def test_a_run_where_every_episode_failed_for_infrastructure_is_an_error(tmp_path: Path, capsys) -> None:
    with StandIn() as llm:
        llm.fail = lambda prompt: Failure(503, message="overloaded")
        # one episode, two failed requests (it runs again once): fewer than stop the run as an endpoint that is down
        with pytest.raises(VluiError, match=r"all 1 episodes failed for infrastructure reasons, the last with: .*HTTP "
                                            r"503: overloaded; fix that and run the same command again"):
            run(tmp_path, *text_agent(llm, "tasks=[open_settings]", "agent.max_retries=1"))
    assert "nan" not in capsys.readouterr().out
    assert not (tmp_path / "out" / "results.json").exists()
    assert [bool(r["infra_failure"]) for r in episodes(tmp_path)] == [True]  # kept, and run again next time


@pytest.mark.parametrize("envs, concurrency", [(1, 1), (4, 1), (4, 4)])
def test_an_endpoint_that_stays_down_stops_the_run_and_keeps_what_finished(tmp_path: Path, envs: int,
                                                                            concurrency: int) -> None:
    """Counted across the run's environments: 3 failed requests in a row stop it, whichever agents sent them. With 4
    in flight at once the fourth may or may not have gone out when the third failure stops the run (its thread is not
    waited for), so the count is 3 or 4; never more."""
    with StandIn() as llm:
        llm.fail = lambda prompt: Failure(503, message="overloaded")
        with pytest.raises(VluiError, match="failed [34] requests in a row .*; run the same command again when it "
                                            "works"):
            run(tmp_path, *text_agent(llm, "tasks=[open_settings,open_clock,open_phone,open_camera]",
                                      f"env.num_envs={envs}", f"agent.concurrency={concurrency}",
                                      "agent.max_retries=0"))
    sent = len(llm.chat_requests())
    assert 3 <= sent <= max(3, concurrency)  # not every remaining episode, each after its retries
    if envs == 1:
        assert [r["task"] for r in episodes(tmp_path)] == ["open_settings"]  # saved, and run again next time


def test_a_device_that_breaks_in_every_episode_is_an_error_too(tmp_path: Path, monkeypatch) -> None:
    from vlui.env.env import PhoneEnv

    def broken(self, action):
        raise RuntimeError("device offline")

    monkeypatch.setattr(PhoneEnv, "step", broken)
    with pytest.raises(VluiError, match="all 1 episodes failed for infrastructure reasons, the last with: "
                                        "RuntimeError: device offline"):
        run(tmp_path, "agent=expert", "tasks=[open_clock]", "env.snapshots=[000]", "runs=1", "adaptive_metrics=false")


# ---------------------------------------------------------------------------------------------------- the command line
@pytest.mark.slow
def test_every_episode_failing_for_infrastructure_exits_non_zero_in_one_line(tmp_path: Path) -> None:
    with StandIn() as llm:
        llm.fail = lambda prompt: Failure(503, message="overloaded")
        out = run_python("evaluate.py", *text_agent(llm, "tasks=[open_settings]", "agent.max_retries=1"),
                         f"hydra.run.dir={tmp_path}/out", timeout=300)
    assert out.returncode == 2, out.stderr[-2000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "all 1 episodes failed for infrastructure reasons" in errors[0]
    assert "Traceback" not in out.stderr and "nan" not in out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("case", ["wrong key", "unreachable"])
def test_the_check_before_the_run_is_one_line_and_exit_status_2(tmp_path: Path, case: str) -> None:
    with StandIn(key="sk-right") as llm:
        url = llm.url if case == "wrong key" else "http://127.0.0.1:9/v1"
        args = [a if not a.startswith("agent.url=") else f"agent.url={url}" for a in text_agent(llm)]
        out = run_python("evaluate.py", *args, "tasks=[open_settings]", f"hydra.run.dir={tmp_path}/out",
                         env={"OPENAI_API_KEY": "sk-wrong"}, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
    (line,) = [x for x in out.stderr.splitlines() if x.strip() and "%|" not in x]
    assert line.startswith("error: ") and ("refused the API key in $OPENAI_API_KEY" in line if case == "wrong key"
                                           else "Connection refused): start the server or fix agent.url" in line)
    assert not (tmp_path / "out" / "episodes.jsonl").exists() or not (tmp_path / "out" / "episodes.jsonl").read_text()
    assert llm.chat_requests() == []  # nothing ran
