"""The MLLM agent (and what it shares with the text agent) against a local OpenAI-compatible stand-in: the screenshot
sent as a PNG data URL, set-of-mark tags, B-MoCA's and M3A's answers, reflection, few-shot examples from a dataset,
the response cache, the budget, timeouts and settings to fix."""

from __future__ import annotations

import base64
import io
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.agents.openai_stand_in import Failure, StandIn, images_of, text_of
from vlui.agents import make_agent
from vlui.agents.chat import EndpointError
from vlui.agents.fewshot import Demonstrations
from vlui.agents.marks import COLOURS, screenshot_png
from vlui.agents.prompts import read_answer
from vlui.agents.text_agent import MLLMAgent
from vlui.data.format import decode_png
from vlui.data.images import IMAGE_REF
from vlui.device import observe
from vlui.errors import VluiError
from vlui.tasks.catalog import resolve_tasks


def node(index: int, text: str, bounds: str, rid: str = "") -> str:
    return (f'<node index="{index}" text="{text}" resource-id="{rid}" class="android.widget.TextView" '
            f'package="launcher" content-desc="" clickable="true" enabled="true" bounds="{bounds}" />')


XML = ('<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
       'package="launcher" content-desc="" clickable="false" enabled="true" bounds="[0,0][1080,2160]">'
       + node(0, "Clock", "[100,200][400,500]") + node(1, "Camera", "[600,200][900,500]") + "</node></hierarchy>")
OBS = {"instruction": "open the clock app", "xml": XML, "screen": np.zeros((256, 128, 3), np.uint8)}
INFO = {"screen_size": (1080, 2160)}


@pytest.fixture(autouse=True)
def no_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def mllm(llm: StandIn, **settings) -> MLLMAgent:
    agent = make_agent({"name": "mllm", "base_url": llm.url, "model": "stand-in", "screenshot_height": 128,
                        "screenshot_width": 64, "retry_delay_s": 0, **settings})
    agent.reset(resolve_tasks(["open_clock"])[0], {"snapshot": "100"}, seed=7)
    return agent


def png_of(url: str) -> Image.Image:
    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


# ---------------------------------------------------------------------------------------------------- the request
def test_the_screenshot_goes_as_a_png_data_url_beside_the_element_list() -> None:
    with StandIn(answer=lambda prompt: "- Description: a home screen\n- Thought: open Clock\n- Action: tap(1)") as llm:
        action = mllm(llm).act(OBS, INFO)
    (body,) = llm.chat_requests()
    system, user = body["messages"]
    assert "You are an agent that is trained to perform daily tasks" in system["content"]
    assert 'swipe("up")' in system["content"] and "dual-gesture(touch y" in system["content"]
    text = text_of(user["content"])
    assert text.startswith("Goal: open the clock app.") and "[1] TextView Clock (100,200,400,500)" in text
    assert "- Action: <The function call" in text and "Previous steps" not in text
    (url,) = images_of(user["content"])
    image = png_of(url)
    assert image.format == "PNG" and image.size == (64, 128)
    assert body["temperature"] == 0.0 and body["seed"] == 7 and "max_tokens" not in body
    np.testing.assert_allclose(action, [2 * 350 / 2160 - 1, 2 * 250 / 1080 - 1] * 2, atol=1e-6)  # Clock's centre


def test_set_of_marks_draws_the_lists_numbers_on_the_screenshot() -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        mllm(llm).act(OBS, INFO)
        mllm(llm, set_of_marks=True).act(OBS, INFO)
    plain, marked = (llm.chat_requests()[i]["messages"] for i in (0, 1))
    assert "labelled with its numeric tag" in marked[0]["content"] and "labelled" not in plain[0]["content"]
    assert np.asarray(png_of(images_of(plain[1]["content"])[0])).max() == 0  # the black screen as it is
    pixels = np.asarray(png_of(images_of(marked[1]["content"])[0]).convert("RGB"))
    # Clock's box (y 200-500 of 2160, x 100-400 of 1080 -> rows 12-29, columns 6-23 of 128 x 64) in the first colour
    assert (pixels[12:30, 6:24] == COLOURS[0]).all(axis=-1).any() and (pixels[12:30, 36:54] == COLOURS[1]).all(
        axis=-1).any()
    assert not pixels[60:].any()  # nothing drawn where no element is; the full-screen container is not boxed


def test_the_text_agent_sends_the_same_prompt_without_the_image() -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        text = make_agent({"name": "text", "url": llm.url, "model": "stand-in"})
        text.reset(None, seed=7)
        text.act(OBS, INFO)
        mllm(llm).act(OBS, INFO)
    a, b = (body["messages"] for body in llm.chat_requests())
    assert isinstance(a[1]["content"], str) and a[1]["content"] == text_of(b[1]["content"]).replace(
        "screenshot and the parsed", "parsed")


# ---------------------------------------------------------------------------------------------------- answers
@pytest.mark.parametrize("answer, form, action, error", [
    ("- Description: home\n- Thought: open it\n- Action: tap(3)", "bmoca", "tap(3)", ""),
    ("**Action:** swipe(\"up\")", "bmoca", 'swipe("up")', ""),
    ('press("HOME")', "bmoca", 'press("HOME")', ""),
    ('Reason: Clock is there.\nAction: {"action_type": "tap", "index": 3}', "json", "tap(3)", ""),
    ('Action: {"action_type": "navigate_back"}', "json", 'press("BACK")', ""),
    ('Action: {"action_type": "dual-gesture", "touch": [0.5, 0.5], "lift": [0.2, 0.5]}', "json",
     "dual-gesture(0.5, 0.5, 0.2, 0.5)", ""),
    ("Action: tap(3)", "json", None, "no JSON action"),
    ('Action: {"action_type": "tap", "index": 3', "json", None, "no JSON action"),
    ('Action: {"action_type": "wave"}', "json", None, "unknown action_type 'wave'"),
    ('Action: {"action_type": "long_press", "index": 3}', "json", "long_press(3)", ""),
    ('Action: {"action_type": "type", "text": "say \\"hi\\""}', "json", 'type("say \\"hi\\"")', ""),
    ('Action: {"action_type": "input_text", "text": "hi", "index": 2}', "json", None, "with no index"),
    ('Action: {"action_type": "status", "goal_status": "complete"}', "json", "complete()", ""),
    ('Action: {"action_type": "status", "goal_status": "infeasible"}', "json", "impossible()", ""),
    ('Action: {"action_type": "status", "goal_status": "maybe"}', "json", None, "not 'maybe'"),
    # AndroidWorld's M3A actions
    ('Action: {"action_type": "open_app", "app_name": "Clock"}', "json", 'open_app("Clock")', ""),
    ('Action: {"action_type": "open_app"}', "json", None, "needs an app_name"),
    ('Action: {"action_type": "scroll", "direction": "down"}', "json", 'scroll("down")', ""),
    ('Action: {"action_type": "scroll", "direction": "up", "index": 4}', "json", 'scroll("up", 4)', ""),
    ('Action: {"action_type": "scroll", "index": 4}', "json", None, "needs a direction"),
    ('Action: {"action_type": "scroll", "direction": "up", "index": [4]}', "json", None, "index is an integer"),
    ('Action: {"action_type": "wait"}', "json", "wait()", ""),
    ('Action: {"action_type": "keyboard_enter"}', "json", "keyboard_enter()", ""),
    ('Action: {"action_type": "answer", "text": "7:30"}', "json", 'answer("7:30")', ""),
    ('Action: {"action_type": "answer"}', "json", None, "needs text"),
])
def test_answers_are_read_as_b_mocas_or_m3as(answer: str, form: str, action: str | None, error: str) -> None:
    reading = read_answer(answer, form)
    assert reading.action == action and error in reading.error


def test_an_answer_with_no_valid_action_is_an_invalid_step_with_its_raw_text_kept() -> None:
    nonsense = "I would rather look at the weather first."
    with StandIn(answer=lambda prompt: nonsense) as llm:
        agent = mllm(llm)
        assert agent.act(OBS, INFO) is None
        assert agent.act(OBS, INFO) is None
    t = agent.transcript()
    assert (t["answers"], t["invalid_answers"], t["requests"], t["cached"]) == (2, 2, 2, 0)
    assert t["steps"][0]["answer"] == nonsense and "cannot read" in t["steps"][0]["error"]
    assert t["input_tokens"] > 0 and t["output_tokens"] == 2 * (len(nonsense) // 4 + 1)  # as the endpoint counted
    # the request is kept with its image named by hash, and the image beside it
    (url,) = images_of(t["steps"][0]["request"]["messages"][1]["content"])
    assert url.startswith(IMAGE_REF) and url[len(IMAGE_REF):] in t["images"]
    assert "Previous steps (oldest first):\n1. I would rather look at the weather first. (invalid: " in text_of(
        llm.chat_requests()[1]["messages"][1]["content"])


def test_reflection_summarises_each_step_from_the_screens_before_and_after_and_is_kept_with_that_step() -> None:
    taps = iter((1, 0))

    def answer(prompt: str) -> str:
        if "concise summary" in prompt:
            return "I tapped Clock; the screen did not change. Try swiping up."
        return f'Reason: Clock is on the screen.\nAction: {{"action_type": "tap", "index": {next(taps)}}}'

    with StandIn(answer=answer) as llm:
        agent = mllm(llm, reflect=True, answer="json")
        agent.act(OBS, INFO)
        agent.act(OBS, INFO)
    first, reflection, second = llm.chat_requests()
    content = reflection["messages"][1]["content"]
    assert len(images_of(content)) == 2 and "Action: tap(1)\nReason given: Clock is on the screen." in text_of(content)
    assert "1. tap(1): I tapped Clock; the screen did not change. Try swiping up." in text_of(
        second["messages"][1]["content"])
    assert '"action_type": "tap", "index": <numeric tag>' in text_of(first["messages"][1]["content"])
    # the reflection on tap(1) is step 1's, beside the action it judges; step 2's outcome has not been seen yet
    steps = agent.transcript()["steps"]
    assert steps[0]["action"] == "tap(1)" and steps[0]["reflection"]["answer"].startswith("I tapped Clock")
    assert steps[1]["action"] == "tap(0)" and "reflection" not in steps[1]
    assert agent.transcript()["requests"] == 3


# ---------------------------------------------------------------------------------------------------- cache, budget
def test_the_cache_answers_the_same_request_again_without_asking(tmp_path: Path) -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        first = mllm(llm, cache_dir=str(tmp_path))
        first.check()  # with a cache, the check waits for the first request the cache cannot answer
        action = first.act(OBS, INFO)
        asked = len(llm.requests)
        again = mllm(llm, cache_dir=str(tmp_path))
        again.check()
        np.testing.assert_array_equal(again.act(OBS, INFO), action)
        assert len(llm.requests) == asked == 2  # the model list (the check) and one chat request; none again
        other = mllm(llm, cache_dir=str(tmp_path))
        other.reset(other.task, {}, seed=8)  # another episode's seed is another request (runs differ)
        other.act(OBS, INFO)
        assert len(llm.chat_requests()) == 2
    assert again.transcript()["steps"][0]["cached"] and again.transcript()["requests"] == 0
    assert again.transcript()["steps"][0]["request"] == first.transcript()["steps"][0]["request"]


def test_a_spent_budget_stops_in_one_line_and_siblings_share_it() -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        agent = mllm(llm, budget_requests=2)
        agent.act(OBS, INFO)
        sibling = agent.sibling()
        sibling.reset(agent.task, {}, seed=1)
        sibling.act(OBS, INFO)
        with pytest.raises(VluiError, match=r"the mllm agent's budget is spent \(2 requests, \d+ tokens this run; "
                                            r"agent.budget_requests=2\): the finished episodes are saved; run the same "
                                            "command again") as err:
            agent.act(OBS, INFO)
    assert not isinstance(err.value, ConnectionError) and len(llm.chat_requests()) == 2


def test_requests_side_by_side_never_overspend_the_budget() -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        llm.delay = lambda prompt: 0.3
        first = mllm(llm, budget_requests=3)
        agents = [first, *(first.sibling() for _ in range(7))]
        for seed, agent in enumerate(agents[1:], 1):
            agent.reset(first.task, {}, seed=seed)
        with ThreadPoolExecutor(8) as threads:
            outcomes = [f.exception() for f in [threads.submit(a.act, OBS, INFO) for a in agents]]
    assert len(llm.chat_requests()) == first.endpoint.usage.requests == 3
    assert sum(isinstance(e, VluiError) and "budget is spent" in str(e) for e in outcomes) == 5


def test_a_token_budget_counts_what_the_endpoint_reports() -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        agent = mllm(llm, budget_tokens=10)
        agent.act(OBS, INFO)  # the first request may use more than the budget: it is checked before each request
        with pytest.raises(VluiError, match="agent.budget_tokens=10"):
            agent.act(OBS, INFO)


# ---------------------------------------------------------------------------------------------------- failures
def test_a_timeout_is_retried_then_the_episodes_infrastructure_failure() -> None:
    with StandIn() as llm:
        llm.failures = [Failure(503, stall_s=1.0), Failure(503, stall_s=1.0)]
        agent = mllm(llm, timeout_s=0.2, max_retries=1)
        with pytest.raises(EndpointError, match=r"failed 2 time\(s\), last with timed out: no answer in 0.2 s "
                                                r"\(agent.timeout_s\)"):
            agent.act(OBS, INFO)
    assert len(llm.chat_requests()) == 2


def test_a_server_that_never_answers_is_said_at_every_retry_and_given_up_at_the_deadline(caplog) -> None:
    with StandIn() as llm:
        llm.fail = lambda prompt: Failure(503, stall_s=30.0)  # never, as far as the client waits
        agent = mllm(llm, timeout_s=0.3, max_retries=100, request_deadline_s=1.5)
        began = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="vlui.agents.chat"), pytest.raises(
                EndpointError, match=r"POST http://127.0.0.1:\d+/v1/chat/completions was given up at "
                                     r"agent.request_deadline_s=1.5 s \(\d attempt\(s\), the last timed out"):
            agent.act(OBS, INFO)
        took = time.monotonic() - began
    assert took < 4.0 and 3 <= len(llm.chat_requests()) <= 5
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == len(llm.chat_requests()) - 1  # each attempt that will be followed by another
    assert said[0].endswith("/v1/chat/completions: timed out: no answer in 0.3 s (agent.timeout_s) (attempt 1 of "
                            "101); sending it again in 0 s") and said[0].startswith("the mllm agent's POST http://")


def test_an_answer_that_is_no_chat_completion_is_the_endpoints_failure() -> None:
    with StandIn(answer=lambda prompt: {"result": "tap(1)"}) as llm:
        with pytest.raises(EndpointError, match="did not answer like an OpenAI chat endpoint"):
            mllm(llm).act(OBS, INFO)


@pytest.mark.parametrize("case, message", [
    ("wrong model", "answered HTTP 404 to POST /chat/completions: The model `nope` does not exist.: agent.base_url "
                    "must be the API's base URL (e.g. http://127.0.0.1:8000/v1) and agent.model='nope' a model it "
                    "serves; the finished episodes are saved"),
    ("wrong key", "refused the API key in $OPENAI_API_KEY (HTTP 401 to POST /chat/completions: Incorrect API key "
                  "provided): set a valid key; the finished episodes are saved"),
])
def test_a_setting_to_fix_stops_the_run_in_one_line(monkeypatch, case: str, message: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with StandIn(key="sk-right" if case == "wrong key" else None) as llm:
        with pytest.raises(VluiError) as err:
            mllm(llm, model="nope" if case == "wrong model" else "stand-in").act(OBS, INFO)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_former_setting_name_url_still_works_and_both_names_must_agree() -> None:
    assert make_agent({"name": "mllm", "url": "http://h/v1", "model": "m"}).endpoint.base == "http://h/v1"
    with pytest.raises(VluiError, match="agent.url is the former name of agent.base_url"):
        make_agent({"name": "mllm", "url": "http://h/v1", "base_url": "http://other/v1", "model": "m"})
    with pytest.raises(VluiError, match="agent=mllm needs agent.base_url"):
        make_agent({"name": "mllm", "model": "m"})


# ---------------------------------------------------------------------------------------------------- few-shot
def test_few_shot_examples_come_from_the_dataset_seeded_never_from_the_evaluated_phones(tiny_xml_dataset) -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        agent = mllm(llm, few_shot=2, few_shot_data=str(tiny_xml_dataset))
        agent.act(OBS, INFO)
        same = mllm(llm, few_shot=2, few_shot_data=str(tiny_xml_dataset))
        same.act(OBS, INFO)
        text = make_agent({"name": "text", "url": llm.url, "model": "stand-in", "few_shot": 2,
                           "few_shot_data": str(tiny_xml_dataset)})
        text.reset(agent.task, {}, seed=7)
        text.act(OBS, INFO)
    a, b, c = (body["messages"][1]["content"] for body in llm.chat_requests())
    assert a == b  # the same examples for every episode of a task
    prompt = text_of(a)
    assert "Below illustrates exemplary human demonstration(s), with format:" in prompt
    assert prompt.count("- Instruction: open the clock app") == 2  # of the same task first
    assert len(images_of(a)) == 2 * 2 + 1  # each example's screens before and after, then the current one
    assert "- Action: tap(" in prompt or '- Action: swipe("up")' in prompt
    assert isinstance(c, str) and c.count("- Instruction: ") == 1 + 2 and "- Reward: 0" in c  # the format, 2 examples
    with pytest.raises(VluiError, match=r"the few-shot dataset .* has episodes on the evaluated phones \(000, 030\): "
                                        "draw examples from a dataset of other phones"):
        agent.refuse_overlap(["000", "030", "100"])
    with pytest.raises(VluiError, match=r"has episodes on the phone of this episode \(001\)"):
        agent.reset(agent.task, {"snapshot": "001"}, seed=1)
    assert Demonstrations(tiny_xml_dataset).snapshots == ["000", "001", "030"]


def test_few_shot_screenshots_are_drawn_from_the_full_resolution_screen_where_the_dataset_has_it(
        tiny_full_screen_dataset, tiny_xml_dataset, caplog) -> None:
    size = {"screenshot_height": 512, "screenshot_width": 256}
    with StandIn(answer=lambda prompt: "tap(1)") as llm, caplog.at_level(logging.WARNING):
        agent = mllm(llm, few_shot=1, few_shot_data=str(tiny_full_screen_dataset), **size)
        agent.act(OBS, INFO)
        assert not caplog.records
        mllm(llm, few_shot=1, few_shot_data=str(tiny_xml_dataset), **size)
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "holds its screens at 256x128 only, not at full resolution" in warning
    assert warning.endswith("collect the examples with save_full_screen=true")
    (shown,) = agent.demonstrations.sample(1, 0, "open_clock")
    before, after, _current = (np.asarray(png_of(u)) for u in images_of(llm.chat_requests()[0]["messages"][1]["content"]))
    # as the current screen is: the full-resolution screen observed at the screenshot's size, not 256x128 stretched
    np.testing.assert_array_equal(before, observe(decode_png(shown.screen_full), 512, 256))
    np.testing.assert_array_equal(after, observe(decode_png(shown.next_screen_full), 512, 256))
    stretched = np.asarray(png_of("data:image/png;base64," + base64.b64encode(
        screenshot_png(decode_png(shown.screen), (512, 256))).decode()))
    assert np.abs(before.astype(int) - stretched).mean() > 1.0


def test_the_examples_of_a_prompt_are_on_distinct_screens(tiny_dataset) -> None:
    demonstrations = Demonstrations(tiny_dataset)  # two episodes of each task on each phone: each transition twice
    assert len({t.screen for t in demonstrations.transitions}) < len(demonstrations.transitions)
    for seed in range(20):
        for task in ("open_clock", "airplane_on"):
            drawn = demonstrations.sample(3, seed, task)
            assert len(drawn) == 3 and len({t.screen for t in drawn}) == 3, (seed, task)


def test_few_shot_needs_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(VluiError, match="agent.few_shot=2 needs agent.few_shot_data"):
        make_agent({"name": "mllm", "base_url": "http://h/v1", "model": "m", "few_shot": 2})
    with pytest.raises(VluiError, match="no dataset at"):
        make_agent({"name": "mllm", "base_url": "http://h/v1", "model": "m", "few_shot": 2,
                    "few_shot_data": str(tmp_path)})


def test_the_transcript_is_json() -> None:
    with StandIn(answer=lambda prompt: "tap(1)") as llm:
        agent = mllm(llm)
        agent.act(OBS, INFO)
    kept = {k: v for k, v in agent.transcript().items() if k != "images"}
    assert json.loads(json.dumps(kept)) == kept
