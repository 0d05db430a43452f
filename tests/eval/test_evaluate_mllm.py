"""evaluate.py with agent=mllm end to end on the simulated phone, against the local OpenAI-compatible stand-in: the
prompts and answers kept with the episodes, images once by hash, usage and cost in results.json, a rerun answered
whole by the cache (no request, the same results), a spent budget and an endpoint that is not there in one line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.agents.openai_stand_in import Failure, StandIn, images_of, open_app, text_of
from tests.conftest import run_python
from vlui.cli import compose
from vlui.config import check_settings
from vlui.errors import VluiError
from vlui.jobs import evaluate

pytestmark = pytest.mark.integration


def answer(prompt: str) -> str:
    """Nonsense at an episode's first step (an invalid action), then :func:`open_app` on the current screen (not on
    the few-shot examples' screens)."""
    if "Previous steps" not in prompt:
        return "Let me think about which app this is."
    goal, _, rest = prompt.partition("\n")
    return "- Description: a phone\n- Thought: find the app\n- Action: " + open_app(
        goal + "\n" + rest.rsplit("\nObservation:\n", 1)[1])


def args(llm: StandIn, *more: str) -> list[str]:
    return ["agent=mllm", f"agent.base_url={llm.url}", "agent.model=stand-in", "tasks=[open_clock,open_settings]",
            "env.snapshots=[100,101]", "runs=1", "adaptive_metrics=false", "agent.screenshot_height=256",
            "agent.screenshot_width=128", "agent.retry_delay_s=0", *more]


def run(tmp_path: Path, name: str, overrides: list[str]) -> dict:
    return evaluate.run(compose("evaluate", overrides, output_dir=tmp_path / name))


def lines(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]


def test_prompts_and_answers_are_kept_and_a_rerun_from_the_cache_asks_nothing(tmp_path: Path,
                                                                              tiny_xml_dataset: Path) -> None:
    overrides = ["agent.set_of_marks=true", "agent.few_shot=1", f"agent.few_shot_data={tiny_xml_dataset}",
                 "agent.price_input_per_1m=2.5", "agent.price_output_per_1m=10"]
    with StandIn(answer=answer) as llm:
        result = run(tmp_path, "first", args(llm, *overrides))
        asked = len(llm.requests)
        again = run(tmp_path, "again", args(llm, *overrides))  # another folder, the same cache beside it
        assert len(llm.requests) == asked  # not even the check: the cache answered everything
    assert result["success_rate"] == again["success_rate"] == 1.0 and result["episodes"] == 4
    first, second = lines(tmp_path / "first"), lines(tmp_path / "again")
    assert [(r["key"], r["success"], r["steps"], r["actions"]) for r in first] == [
        (r["key"], r["success"], r["steps"], r["actions"]) for r in second]
    assert [[s["answer"] for s in r["transcript"]["steps"]] for r in first] == [
        [s["answer"] for s in r["transcript"]["steps"]] for r in second]

    # what each episode asked and was answered, images by hash in images/ (no image inline)
    assert "base64" not in (tmp_path / "first" / "episodes.jsonl").read_text()
    for record in first:
        t = record["transcript"]
        assert record["actions"][0] is None and not t["steps"][0]["valid"]  # the nonsense: an invalid, counted step
        assert t["steps"][0]["answer"] == "Let me think about which app this is."
        assert "cannot read" in t["steps"][0]["error"] and t["steps"][-1]["action"].startswith("tap(")
        request = t["steps"][-1]["request"]
        assert request["model"] == "stand-in" and request["seed"] == record["seed"]
        user = request["messages"][1]["content"]
        assert text_of(user).startswith(f"Goal: {'open the clock app' if 'clock' in record['task'] else ''}")
        images = images_of(user)
        assert len(images) == 3 and all(u.startswith("sha256:") for u in images)  # one example (before, after), now
        assert all((tmp_path / "first" / "images" / f"{u[7:]}.png").is_file() for u in images)
    sent = llm.chat_requests()
    assert all(images_of(b["messages"][1]["content"])[0].startswith("data:image/png;base64,") for b in sent)

    # usage, cost and the invalid-action rate in results.json; the transcripts stay in episodes.jsonl
    results = json.loads((tmp_path / "first" / "results.json").read_text())
    llm_use = results["llm"]
    assert llm_use["requests"] == len(sent) and llm_use["cached"] == 0
    assert llm_use["answers"] == sum(r["steps"] for r in first) and llm_use["invalid_answers"] == 4
    assert llm_use["invalid_action_rate"] == pytest.approx(4 / llm_use["answers"])
    assert llm_use["cost"] == pytest.approx((llm_use["input_tokens"] * 2.5 + llm_use["output_tokens"] * 10) / 1e6,
                                            abs=1e-6)
    assert "transcript" not in results["records"][0]
    assert "answered from the cache" in (tmp_path / "first" / "results.md").read_text()
    rerun = json.loads((tmp_path / "again" / "results.json").read_text())["llm"]
    assert (rerun["requests"], rerun["cached"], rerun["input_tokens"]) == (0, llm_use["answers"], 0)
    # what the evaluation takes of the model is the same whether it was asked or answered from the cache
    assert rerun["protocol"] == llm_use["protocol"] and llm_use["protocol"]["requests"] == llm_use["answers"]
    assert llm_use["protocol"]["input_tokens"] == llm_use["input_tokens"] and llm_use["protocol"]["cost"] > 0


def test_another_agent_and_an_llm_agent_side_by_side_in_one_table(tmp_path: Path) -> None:
    with StandIn(answer=answer) as llm:
        run(tmp_path, "mllm", args(llm))
    expert = ["agent=expert", "tasks=[open_clock,open_settings]", "runs=1", "adaptive_metrics=false"]
    run(tmp_path, "expert", [*expert, "env.snapshots=[100,101]", f"compare={{mllm: {tmp_path / 'mllm'}}}"])
    results = json.loads((tmp_path / "expert" / "results.json").read_text())
    side = results["compared"]
    assert list(side["columns"]) == [results["config"]["name"], "mllm"] and side["same_phones"]
    assert side["columns"]["mllm"]["model"] == "stand-in" and side["overall"]["mllm"]["episodes"] == 4
    md = (tmp_path / "expert" / "results.md").read_text()
    assert "## Side by side" in md and "| open_clock | 100.0% (2) | 100.0% (2) |" in md
    assert "mllm (agent=mllm, stand-in)" in md and "did not run the same" not in md
    # beside success, what each agent asked of a model: the expert nothing, the MLLM agent its requests and tokens
    mllm = json.loads((tmp_path / "mllm" / "results.json").read_text())
    asked = mllm["llm"]["protocol"]
    assert asked["requests"] == mllm["llm"]["answers"] == mllm["overall"]["actions"]
    assert side["usage"]["mllm"]["invalid_action_rate"] == pytest.approx(4 / asked["requests"])
    assert "| invalid actions | 0.0% (0 of " in md and f"% (4 of {asked['requests']}) |" in md
    assert f"| requests to the model | – | {asked['requests']} |" in md
    assert f"| tokens in / out | – | {asked['input_tokens']:,} / {asked['output_tokens']:,} |" in md
    assert "| estimated cost | – | unknown (no price set) |" in md
    (test,) = side["tests"]  # the expert against the MLLM agent, on both phones, runs as seeds
    assert (test["b"], test["phones"], test["difference"]) == ("mllm", 2, 0.0)
    assert f"{results['config']['name']} − mllm: +0.0 points on the 2 phone(s) both ran" in md
    run(tmp_path, "elsewhere", [*expert, "env.snapshots=[102]", f"compare=[{tmp_path / 'mllm'}]"])
    assert "did not run the same phones" in (tmp_path / "elsewhere" / "results.md").read_text()
    with pytest.raises(VluiError, match="compare: no evaluation results at .*nowhere/results.json"):
        run(tmp_path, "nowhere", [*expert, f"compare=[{tmp_path / 'nowhere'}]"])


def test_a_spent_budget_stops_in_one_line_and_the_same_command_goes_on(tmp_path: Path) -> None:
    with StandIn(answer=answer) as llm:
        with pytest.raises(VluiError, match=r"budget is spent \(3 requests, .*run the same command again to go on"):
            run(tmp_path, "out", args(llm, "env.num_envs=1", "env.snapshots=[100]", "agent.budget_requests=3"))
        kept = lines(tmp_path / "out")
        assert len(kept) == 1 and kept[0]["success"]  # the finished episode is kept
        sent = len(llm.chat_requests())
        result = run(tmp_path, "out", args(llm, "env.num_envs=1", "env.snapshots=[100]"))
    assert result["episodes"] == 2 and result["success_rate"] == 1.0
    second = lines(tmp_path / "out")[-1]
    # the interrupted episode's answers so far come from the cache, free
    assert second["transcript"]["cached"] == sent - kept[0]["steps"]
    assert len(llm.chat_requests()) == sent + second["transcript"]["requests"]


def test_a_model_that_answers_nonsense_stops_in_one_line_and_can_be_measured_anyway(tmp_path: Path) -> None:
    def nonsense_after_the_first_episode(prompt: str) -> str:
        return answer(prompt) if "open the clock app" in prompt.splitlines()[0] else "I am a helpful assistant."

    overrides = ["env.num_envs=1", "tasks=[open_clock,open_chrome]", "env.snapshots=[100]"]
    with StandIn(answer=nonsense_after_the_first_episode) as llm:
        with pytest.raises(VluiError, match=r"the mllm agent's last 4 answers held no valid action \(the last: 'I am a "
                                            r"helpful assistant.': .*agent.stop_after_invalid=null measures"):
            run(tmp_path, "out", args(llm, *overrides, "agent.stop_after_invalid=4"))
        kept = lines(tmp_path / "out")
        assert [(r["task"], r["success"]) for r in kept] == [("open_clock", True)]  # the finished episode is kept
        asked = len(llm.chat_requests())
        # the same command measures the model anyway, its four answers so far from the cache
        result = run(tmp_path, "out", args(llm, *overrides, "agent.stop_after_invalid=null"))
    assert result["episodes"] == 2 and result["success_rate"] == 0.5
    last = lines(tmp_path / "out")[-1]
    assert last["task"] == "open_chrome" and not last["success"]
    assert last["transcript"]["invalid_answers"] == last["steps"] and last["transcript"]["cached"] == 4
    assert len(llm.chat_requests()) == asked + last["steps"] - 4


@pytest.mark.slow
@pytest.mark.parametrize("case", ["no server", "budget"])
def test_bad_input_ends_in_one_line_from_the_command_line(tmp_path: Path, case: str) -> None:
    with StandIn(answer=answer) as llm:
        overrides = args(llm, "tasks=[open_clock]", "env.snapshots=[100]")
        if case == "no server":
            overrides = [a if not a.startswith("agent.base_url=") else "agent.base_url=http://127.0.0.1:9/v1"
                         for a in overrides]
        out = run_python("evaluate.py", *overrides, "agent.budget_requests=1", f"hydra.run.dir={tmp_path}/out",
                         timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
    (line,) = [x for x in out.stderr.splitlines() if x.strip() and "%|" not in x]
    assert line.startswith("error: the mllm agent's ") and (
        "Connection refused): start the server or fix agent.base_url" in line if case == "no server"
        else "budget is spent (1 requests" in line)


def test_extended_actions_are_offered_taken_and_kept_and_refused_without_the_setting(tmp_path: Path) -> None:
    def types_first(prompt: str) -> str:
        if "Previous steps" not in prompt:  # nothing has focus on the home screen: typing changes nothing
            return '- Description: home\n- Thought: note it down\n- Action: type("hello, world")'
        return answer(prompt)

    one = ["tasks=[open_clock]", "env.snapshots=[100]"]
    with StandIn(answer=types_first) as llm:
        extended = run(tmp_path, "extended", args(llm, *one, "agent.actions=extended", "video=all"))
        system = llm.chat_requests()[-1]["messages"][0]["content"]
        run(tmp_path, "bmoca", args(llm, *one))
    assert "7. long_press(numeric tag: int)" in system and '8. type(text: str)' in system
    assert extended["success_rate"] == 1.0
    (record,) = lines(tmp_path / "extended")
    assert record["actions"][0] == {"type": "hello, world"} and record["tokens"][0] == "type:nothing|hello, world"
    assert record["transcript"]["invalid_answers"] == 0
    assert len(list((tmp_path / "extended" / "videos").glob("*.gif"))) == 1  # drawn with the typing step in it
    (record,) = lines(tmp_path / "bmoca")  # B-MoCA's six options: the same answer holds no action
    assert record["actions"][0] is None and record["transcript"]["invalid_answers"] == 1
    assert "unknown action option 'type'" in record["transcript"]["steps"][0]["error"]
    # the setting is part of what makes an evaluation resumable only where it changes something (older ones lack it)
    recipes = [json.loads((tmp_path / n / "recipe.json").read_text())["agent"] for n in ("extended", "bmoca")]
    assert recipes[0]["actions"] == "extended" and "actions" not in recipes[1]


def test_an_agent_that_declares_its_task_complete_ends_the_episode_and_the_report_counts_it(tmp_path: Path) -> None:
    with StandIn(answer=lambda prompt: "- Action: complete()") as llm:  # before anything is done
        result = run(tmp_path, "declares", args(llm, "tasks=[open_clock]", "env.snapshots=[100]",
                                                "agent.actions=extended"))
    (record,) = lines(tmp_path / "declares")
    assert (record["steps"], record["success"], record["declared"]) == (1, False, "complete")
    assert record["actions"] == [{"status": "complete"}] and record["tokens"] == ["status:complete"]
    assert result["success_rate"] == 0.0
    usage = json.loads((tmp_path / "declares" / "results.json").read_text())["llm"]
    assert (usage["declared_complete"], usage["declared_complete_but_failed"], usage["declared_impossible"]) == (1, 1, 0)
    assert "Episodes the agent ended: 1 declared complete (1 of them not), 0 declared impossible." in (
        tmp_path / "declares" / "results.md").read_text()


def test_requests_counted_are_the_requests_the_server_received_retries_included(tmp_path: Path) -> None:
    """A server that answers 429 to every other request: the report's count of requests, the budget's and the
    server's agree, and the retries are said apart."""
    with StandIn(answer=answer) as llm:
        posts = iter(range(10**6))
        llm.fail = lambda prompt: Failure(429, {"Retry-After": "0"}) if next(posts) % 2 == 0 else None
        assert run(tmp_path, "out", args(llm, "env.num_envs=1", "env.snapshots=[100]"))["success_rate"] == 1.0
        received = len(llm.chat_requests())
    usage = json.loads((tmp_path / "out" / "results.json").read_text())["llm"]
    answered = sum(r["transcript"]["requests"] - r["transcript"]["retries"] for r in lines(tmp_path / "out"))
    assert usage["requests"] == received == 2 * answered and usage["retries"] == answered
    assert f"{received} requests sent ({answered} of them sent again after a 429" in (
        tmp_path / "out" / "results.md").read_text()


def test_another_model_or_option_gets_a_folder_of_its_own_and_a_failed_check_leaves_it_to_the_fixed_command(tmp_path: Path) -> None:
    def name(*overrides: str) -> str:
        return compose("evaluate", ["agent=mllm", "agent.base_url=http://127.0.0.1:9/v1", *overrides]).name

    first = name("agent.model=one")
    assert first.startswith("mllm-one-") and first == name("agent.model=one", "agent.budget_requests=5")
    assert len({first, name("agent.model=two"), name("agent.model=one", "agent.set_of_marks=true"),
                name("agent.model=one", "agent.few_shot=2", "agent.few_shot_data=data/x")}) == 4
    assert compose("evaluate", ["checkpoint=checkpoints/quickstart/bc-seed0"]).name == "policy-quickstart-bc-seed0"
    # a run refused at its check has no episode: the same folder takes the fixed command (another URL)
    with StandIn(answer=answer) as llm:
        wrong = [a if not a.startswith("agent.base_url=") else "agent.base_url=http://127.0.0.1:9/v1"
                 for a in args(llm)]
        with pytest.raises(VluiError, match="start the server or fix agent.base_url"):
            run(tmp_path, "out", wrong)
        assert not (tmp_path / "out" / "episodes.jsonl").read_text()
        assert run(tmp_path, "out", args(llm))["success_rate"] == 1.0


def test_requests_side_by_side_give_the_episodes_of_one_at_a_time(tmp_path: Path) -> None:
    """agent.concurrency=4 against a server whose answers come back in another order than asked: the episodes,
    their actions, their answers and their order in episodes.jsonl are those of agent.concurrency=1 (answered from
    the cache the first run filled, without a request)."""
    late = random.Random(0)
    with StandIn(answer=answer) as llm:
        llm.delay = lambda prompt: late.uniform(0.0, 0.3)
        together = run(tmp_path, "together", args(llm, "agent.concurrency=4", "env.num_envs=4"))
        assert llm.most_at_once > 1
        asked = len(llm.requests)
        alone = run(tmp_path, "alone", args(llm, "agent.concurrency=1", "env.num_envs=4"))
        assert len(llm.requests) == asked
    assert together["success_rate"] == alone["success_rate"] == 1.0
    first, second = lines(tmp_path / "together"), lines(tmp_path / "alone")
    assert [(r["key"], r["actions"], [s["answer"] for s in r["transcript"]["steps"]]) for r in first] == [
        (r["key"], r["actions"], [s["answer"] for s in r["transcript"]["steps"]]) for r in second]
    assert sum(r["transcript"]["requests"] for r in first) == len(llm.chat_requests())


@pytest.mark.slow
def test_eight_requests_at_once_take_the_time_of_one(tmp_path: Path) -> None:
    """A model that answers after 1 s: 8 one-step episodes ask for 8 s one at a time, about 1 s with
    agent.concurrency=8 (bounds generous for a loaded machine)."""
    eight = ["tasks=[open_clock]", "env.snapshots=[100]", "episodes_per_pair=8", "env.num_envs=8",
             "agent.actions=extended", "agent.cache_dir=null"]
    spans = {}
    for n in (1, 8):
        with StandIn(answer=lambda prompt: "- Action: complete()") as llm:
            llm.delay = lambda prompt: 1.0
            result = run(tmp_path, f"n{n}", args(llm, *eight, f"agent.concurrency={n}"))
        assert result["episodes"] == 8 and len(llm.answered) == 8 and llm.most_at_once == n
        spans[n] = max(end for _, end in llm.answered) - min(came for came, _ in llm.answered)
    assert spans[1] >= 8.0 and spans[8] < 4.0, spans


def test_concurrency_and_the_request_deadline_are_checked_settings() -> None:
    for setting, message in (("agent.concurrency=0", "agent.concurrency must be at least 1, not 0"),
                             ("agent.request_deadline_s=0", "agent.request_deadline_s must be greater than 0, not 0")):
        cfg = compose("evaluate", ["agent=mllm", "agent.base_url=http://127.0.0.1:9/v1", "agent.model=m", setting])
        with pytest.raises(VluiError, match=message):
            check_settings(cfg)


def by_step(*plan: str):
    """A stand-in LLM that answers M3A's way with one action of ``plan`` after another, by the steps the prompt
    lists as done."""
    def answer_step(prompt: str) -> str:
        done = prompt.partition("Previous steps (oldest first):\n")[2].split("\n\n")[0]
        return "Reason: the plan\nAction: " + plan[len([x for x in done.splitlines() if x[:1].isdigit()])]
    return answer_step


def test_m3a_actions_are_taken_on_the_simulated_phone_counted_and_an_answer_is_kept(tmp_path: Path) -> None:
    m3a_args = ["env.snapshots=[100]", "agent.actions=extended", "agent.answer=json"]
    with StandIn(answer=by_step('{"action_type": "wait"}', '{"action_type": "scroll", "direction": "down"}',
                                '{"action_type": "open_app", "app_name": "Frobnicator"}',
                                '{"action_type": "open_app", "app_name": "Settings"}')) as llm:
        result = run(tmp_path, "m3a", args(llm, "tasks=[open_settings]", *m3a_args))
    (record,) = lines(tmp_path / "m3a")
    assert result["success_rate"] == 1.0 and record["steps"] == 4
    assert [next(iter(a)) if a else a for a in record["actions"]] == ["wait", "scroll", None, "open_app"]
    assert record["actions"][-1] == {"open_app": "settings"} and record["tokens"][-1] == "open_app:settings"
    assert "no app named 'Frobnicator'" in record["transcript"]["steps"][2]["error"]  # invalid, the step spent
    usage = json.loads((tmp_path / "m3a" / "results.json").read_text())["llm"]
    assert usage["commands"] == {"open_app": 1, "scroll": 1, "wait": 1} and usage["invalid_answers"] == 1

    with StandIn(answer=by_step('{"action_type": "keyboard_enter"}',
                                '{"action_type": "answer", "text": "7:30"}')) as llm:
        run(tmp_path, "answers", args(llm, "tasks=[open_clock]", *m3a_args))
    (record,) = lines(tmp_path / "answers")
    assert (record["steps"], record["success"], record["declared"], record["answer"]) == (2, False, "answer", "7:30")
    assert record["actions"] == [{"keyboard_enter": True}, {"answer": "7:30"}]
    usage = json.loads((tmp_path / "answers" / "results.json").read_text())["llm"]
    assert (usage["answered"], usage["answered_but_failed"]) == (1, 1)
    assert "0 declared impossible, 1 answered (1 of them failed)." in (tmp_path / "answers" / "results.md").read_text()


# what an evaluation of args()'s MLLM recorded of its agent before each agent type had settings of its own: every
# agent's settings but how to reach the model, the screenshot's size as image_height/width
RECORDED_BEFORE = {
    "name": "mllm", "tap_jitter": 0.0, "random_action_prob": 0.0, "wrong_action_prob": 0.0, "checkpoint": None,
    "device": "auto", "model": "stand-in", "temperature": 0.0, "top_p": None, "max_answer_tokens": None,
    "seed_requests": True, "with_bounds": True, "history": 8, "answer": "bmoca", "reflect": False, "few_shot": 0,
    "few_shot_data": None, "few_shot_seed": 0, "image_height": 256, "image_width": 128, "set_of_marks": False}


def test_an_evaluation_begun_before_each_agent_type_had_its_own_settings_resumes_in_its_folder(
        tmp_path: Path) -> None:
    # the default folders are named as they were (a text agent's too, which never had a screenshot)
    base = ["agent.base_url=http://127.0.0.1:9/v1", "agent.model=stand-in"]
    assert compose("evaluate", ["agent=mllm", *base, "agent.screenshot_height=256", "agent.screenshot_width=128",
                                "agent.retry_delay_s=0"]).name == "mllm-stand-in-d525c3"
    assert compose("evaluate", ["agent=text", *base, "agent.history=0"]).name == "text-stand-in-0201b9"
    with StandIn(answer=answer) as llm:
        run(tmp_path, "out", args(llm))
        out = tmp_path / "out"
        recipe = json.loads((out / "recipe.json").read_text())
        assert recipe["agent"] == {k: v for k, v in RECORDED_BEFORE.items() if k not in (
            "tap_jitter", "random_action_prob", "wrong_action_prob", "checkpoint", "device", "image_height",
            "image_width")} | {"screenshot_height": 256, "screenshot_width": 128}
        (out / "recipe.json").write_text(json.dumps({**recipe, "agent": RECORDED_BEFORE}))
        kept = (out / "episodes.jsonl").read_text().splitlines()[:3]
        (out / "episodes.jsonl").write_text("".join(f"{line}\n" for line in kept))  # one episode still to run
        result = run(tmp_path, "out", args(llm))
    assert result["episodes"] == 4 and (out / "episodes.jsonl").read_text().splitlines()[:3] == kept
    assert json.loads((out / "recipe.json").read_text())["agent"] == RECORDED_BEFORE
    # another setting than it recorded is another evaluation, as before
    with pytest.raises(VluiError, match="holds an evaluation with other settings"):
        run(tmp_path, "out", args(llm, "agent.screenshot_height=512"))
