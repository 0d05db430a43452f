"""A study with agent arms (``bmoca_fig5``): a trained policy, an LLM agent and an MLLM agent against the local
OpenAI-compatible stand-in in one command, their success per task beside the paper's values, with the invalid-action
rate, requests, tokens and cost; the same command again, and again with its evaluations answered from the LLM cache,
sends no request and writes the same report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.agents.openai_stand_in import StandIn, open_app
from tests.conftest import run_python
from vlui.cli import compose
from vlui.errors import VluiError
from vlui.eval.report import aggregate
from vlui.jobs import train
from vlui.study import PAPER_TASKS, agent_evaluation_name, agents_report, commands, load, paper_numbers, studies

pytestmark = pytest.mark.integration

def fig5(examples: Path) -> dict:
    """A tiny agent comparison: a policy (given on the command line), an LLM agent with one example from
    ``examples`` and an MLLM agent with set-of-mark, on two tasks and two test phones, 2 runs."""
    return {"fig5": {"title": "Tiny Fig. 5", "question": "Do the agents compare?", "paper": "fig5_agents",
                     "chooses": False, "cpu": {
        "datasets": {},
        "base": ["debug=tiny"],
        "arms": {"vlui": []},
        "agent_base": ["runs=2", "agent.history=0", "agent.retry_delay_s=0", "agent.stop_after_invalid=null"],
        "agents": {"llm": ["agent=text", "agent.few_shot=1", f"agent.few_shot_data={examples}"],
                   "mllm-som": ["agent=mllm", "agent.set_of_marks=true", "agent.screenshot_height=256",
                                "agent.screenshot_width=128"]},
        "splits": {"test": "[100,101]"},
        "evaluate": ["tasks=[airplane_on,open_clock]", "env.num_envs=1", "adaptive_metrics=false"]}}}


def answer(prompt: str) -> str:
    """No action at all for the airplane task (every answer an invalid action), and :func:`open_app` on the current
    screen (not the examples') for the others."""
    goal, _, rest = prompt.partition("\n")
    if "airplane" in goal:
        return "I am not sure what to do."
    return "- Action: " + open_app(goal + "\n" + ("\n" + rest).rsplit("\nObservation:\n", 1)[1])


def row(report: str, start: str) -> list[str]:
    line = next(x for x in report.splitlines() if x.startswith(start))
    return [c.strip() for c in line.strip("|").split("|")]


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_agents_side_by_side_with_the_paper_in_one_command_and_again_from_the_cache(tmp_path: Path,
                                                                                   tiny_xml_dataset: Path) -> None:
    spec = tmp_path / "studies.yaml"
    spec.write_text(yaml.safe_dump(fig5(tiny_xml_dataset), sort_keys=False))
    cfg = compose("train", ["debug=tiny", f"paths.data_dir={tiny_xml_dataset.parent}",
                            f"data.name={tiny_xml_dataset.name}", f"paths.checkpoint_dir={tmp_path / 'vlui'}",
                            "logger=csv"], output_dir=tmp_path / "train")
    policy = train.run(cfg)["checkpoint_dir"]
    env = {"VLUI_ROOT": str(tmp_path)}
    with StandIn(answer=answer) as llm:
        command = ["-m", "vlui.study", "fig5", "--studies", str(spec), "--checkpoint", f"vlui={policy}",
                   "--set", f"agent.base_url={llm.url}", "--set", "agent.model=stand-in",
                   "--set", "llm:agent.price_input_per_1m=2.5", "--set", "llm:agent.price_output_per_1m=10"]
        first = run_python(*command, env=env, timeout=1800)
        assert first.returncode == 0, first.stderr[-3000:]
        asked = len(llm.chat_requests())
        out = tmp_path / "outputs" / "study" / "fig5-cpu"
        report, table = (out / "report.md").read_text(), (out / "results.csv").read_text()

        # success per task, each arm beside the paper's value for it (Table 2's GPT-4 and GPT-4V columns)
        assert row(report, "| task |") == ["task", "vlui (policy)", "paper", "llm (text, stand-in)", "paper (GPT-4)",
                                           "mllm-som (mllm, stand-in)", "paper (GPT-4V)"]
        airplane = row(report, "| Airplane (`airplane_on`)")
        assert airplane[2:] == [">50", "0.0 ± 0.0 (4)", "73 ± 12", "0.0 ± 0.0 (4)", "83 ± 3"]
        assert row(report, "| `open_clock`")[3:] == ["100.0 ± 0.0 (4)", "–", "100.0 ± 0.0 (4)", "–"]
        assert row(report, "| **all**")[3] == "50.0 ± 0.0 (8)" and "infrastructure" not in report

        # what each arm asked of its model: the policy nothing, the agents every answer counted, priced where set
        study = load("fig5", path=spec, sets=command[command.index("--set"):][1::2],
                     checkpoints=[f"vlui={policy}"])
        results = {arm: json.loads((tmp_path / "outputs" / "evaluate" / agent_evaluation_name(study, arm, "test")
                                    / "results.json").read_text()) for arm in ("llm", "mllm-som")}
        assert asked >= sum(r["llm"]["requests"] for r in results.values()) > 0  # (and the endpoint's check)
        for arm, r in results.items():
            used, o = r["llm"]["protocol"], r["overall"]
            assert used["requests"] == o["actions"] and o["invalid_actions"] == sum(
                x["steps"] for x in r["records"] if x["task"] == "airplane_on") > 0
            cells = row(report, f"| {arm} |")
            assert cells[1:4] == [f"{100 * o['invalid_action_rate']:.1f}% ({o['invalid_actions']} of {o['actions']})",
                                  f"{used['requests']:,}", f"{used['input_tokens']:,} / {used['output_tokens']:,}"]
        price = results["llm"]["llm"]["protocol"]
        assert row(report, "| llm |")[4] == f"{(price['input_tokens'] * 2.5 + price['output_tokens'] * 10) / 1e6:.4f}"
        assert row(report, "| mllm-som |")[4] == "unknown (no price set)" and row(report, "| vlui |")[2:] == ["–"] * 3
        assert "Sec. 4.1-4.3, Fig. 5 and Table 2" in report and "--set llm:agent.price_input_per_1m=2.5" in report

        # the same command again: every evaluation finds its episodes, no request is sent, the same report
        sent = len(llm.requests)
        again = run_python(*command, env=env, timeout=1800)
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(llm.requests) == sent
        assert (out / "report.md").read_text() == report and (out / "results.csv").read_text() == table
        # the agents' evaluations gone, the cache kept: answered from it, still no request, the same report
        for arm in ("llm", "mllm-som"):
            shutil.rmtree(tmp_path / "outputs" / "evaluate" / agent_evaluation_name(study, arm, "test"))
        cached = run_python(*command, env=env, timeout=1800)
        assert cached.returncode == 0, cached.stderr[-3000:]
        assert len(llm.requests) == sent
    assert (out / "report.md").read_text() == report and (out / "results.csv").read_text() == table
    usage = json.loads((out / "study.json").read_text())["usage"]["test"]
    assert usage["llm"]["this_run"]["requests"] == 0 and usage["llm"]["this_run"]["cached"] > 0


def test_the_shipped_agent_comparison_is_b_mocas_protocol_and_takes_its_model_and_policies_from_the_command_line(
        tmp_path: Path) -> None:
    assert studies()["bmoca_fig5"]["paper"] == "fig5_agents"
    study = load("bmoca_fig5", sets=["agent.base_url=http://127.0.0.1:8000/v1", "agent.model=m",
                                     "mllm:agent.model=v", "mllm:agent.few_shot=1"])
    assert list(study.splits) == ["test"] and list(study.arms) == ["vlui"]
    steps = {what: cmd[3:] for what, cmd, _ in commands(study)}
    assert [w for w in steps if w.startswith("evaluate ")] == [
        "evaluate on test", *(f"evaluate {a} on test" for a in ("llm-zero-shot", "llm", "mllm-zero-shot", "mllm",
                                                                 "mllm-som"))]
    mllm = steps["evaluate mllm on test"]
    # the paper's protocol, then the command line's settings, a setting for one arm replacing that arm's own
    assert {"env.snapshots=test", "runs=3", "agent.history=0", "agent.temperature=0", "agent=mllm",
            "agent.few_shot_data=data/bmoca_demos", "agent.base_url=http://127.0.0.1:8000/v1"} <= set(mllm)
    assert [o for o in mllm if o.startswith(("agent.model=", "agent.few_shot="))] == ["agent.model=v",
                                                                                      "agent.few_shot=1"]
    assert "agent.model=m" in steps["evaluate llm on test"]
    # another endpoint or price is the same evaluation; another model is another one
    moved = load("bmoca_fig5", sets=["agent.base_url=http://elsewhere/v1", "agent.model=m",
                                     "agent.price_input_per_1m=3", "mllm:agent.model=v", "mllm:agent.few_shot=1"])
    assert agent_evaluation_name(moved, "llm", "test") == agent_evaluation_name(study, "llm", "test")
    other = load("bmoca_fig5", sets=["agent.model=n"])
    assert agent_evaluation_name(other, "llm", "test") != agent_evaluation_name(study, "llm", "test")

    # policies given: the arm is not trained and its dataset not collected; the examples' dataset still is
    for seed in (0, 1):
        (tmp_path / f"run-seed{seed}").mkdir()
    given = load("bmoca_fig5", checkpoints=[f"vlui={tmp_path}/run-seed*"], sets=["agent.model=m"])
    steps = {what: cmd[3:] for what, cmd, _ in commands(given)}
    assert not [w for w in steps if w.startswith("train ")] and list(given.datasets) == ["bmoca_demos"]
    assert f"checkpoint={{vlui:['{tmp_path}/run-seed*']}}" in steps["evaluate on test"]

    for kwargs, message in [
            ({"sets": ["agent.model"]}, r"^--set agent.model: give KEY=VALUE \(every agent arm\) or ARM:KEY=VALUE"),
            ({"sets": ["gpt:agent.model=x"]}, r"^--set gpt:agent.model=x: the study has no agent arm 'gpt'; its "
                                              r"agent arms: llm-zero-shot, llm, mllm-zero-shot, mllm, mllm-som$"),
            ({"checkpoints": ["llm=x"]}, r"^--checkpoint llm=x: the study trains no arm 'llm'; its trained arms: "
                                         r"vlui$"),
            ({"checkpoints": [f"vlui={tmp_path}/none-*"]}, r"^--checkpoint vlui=.*: no policy at "),
            ({"arms": ["gpt"]}, r"^--arms: the study has no arm 'gpt'; its arms: vlui, llm-zero-shot, llm,")]:
        with pytest.raises(VluiError, match=message):
            load("bmoca_fig5", **kwargs)
    with pytest.raises(VluiError, match=r"^--set agent.model=x: study quickstart has no agent arms to set"):
        load("quickstart", sets=["agent.model=x"])


def test_episodes_that_failed_for_infrastructure_reasons_are_named_in_the_report_and_not_counted(tmp_path: Path) -> None:
    def episode(run: int, snapshot: str, success: bool, failure: str | None = None) -> dict:
        return {"task": "airplane_on", "snapshot": snapshot, "run": run, "episode": 0, "success": success, "steps": 3,
                "actions": [[0.1, 0.2, 0.1, 0.2]] * 3, **({"infra_failure": failure} if failure else {})}

    # one policy given (no training seeds) and an agent whose endpoint went away for one episode of four
    policy = aggregate([episode(0, "100", True), episode(0, "101", False)], {}, {"agent": "policy"})
    agent = aggregate([episode(0, "100", True), episode(0, "101", True), episode(1, "100", False),
                       episode(1, "101", False, "the model's endpoint did not answer")], {}, {"agent": "text"})
    columns = [*agents_report.policy_columns(policy, ["vlui"]), agents_report.agent_column("llm", agent)]
    agents_report.write(tmp_path, ["# Tiny"], {"test": ("the test snapshots", columns)},
                        paper_numbers()["fig5_agents"], PAPER_TASKS, [], {})
    report = (tmp_path / "report.md").read_text()
    # the policy over its one seed, no spread; the agent's runs 100% and 0% (the failed episode not counted)
    assert row(report, "| Airplane (`airplane_on`)") == ["Airplane (`airplane_on`)", "50.0 (2)", ">50",
                                                         "50.0 ± 50.0 (3)", "73 ± 12"]
    assert ("1 episode(s) of llm failed for infrastructure reasons (its model's endpoint, or a phone) and are not "
            "counted: run the same command again to run them again.") in report
    assert "of vlui failed" not in report


def test_an_agent_arm_without_its_model_or_with_a_misspelt_setting_is_one_line_before_any_step_runs(
        tmp_path: Path) -> None:
    env = {"VLUI_ROOT": str(tmp_path)}
    for sets, message in [
            ([], "error: study bmoca_fig5, agent arm llm-zero-shot: agent=text needs agent.base_url (an "
                 "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1) and agent.model (--set KEY=VALUE for "
                 "every agent arm, --set llm-zero-shot:KEY=VALUE for this one)"),
            (["agent.base_url=http://127.0.0.1:8000/v1", "agent.model=m", "mllm:agent.base_url=localhost:8000"],
             "error: study bmoca_fig5, agent arm mllm: agent.base_url must be an http:// or https:// URL"),
            (["agent.base_url=http://127.0.0.1:8000/v1", "agent.modle=m"],
             "error: study bmoca_fig5, agent arm llm-zero-shot: agent=text has no setting agent.modle; its settings: "
             "name, base_url, url, model,")]:
        result = run_python("-m", "vlui.study", "bmoca_fig5", *(a for s in sets for a in ("--set", s)), env=env)
        assert result.returncode == 2 and result.stderr.startswith(message), result.stderr[-2000:]
        assert len(result.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing collected, trained or written
