"""The viewer in a real headless browser: a tiny real evaluation (screens kept) and a tiny real collection, served by
``python -m vlui.viewer``, opened in Chromium through Playwright; each test picks an episode, steps through it and
checks what is drawn: the screen loaded, the gesture where the action touched, the instruction, the log line that
decided success, the actions over time; and what the page says of a damaged line, a missing screen, an evaluation
without screens and an MLLM agent's transcript. Two agents' evaluations open side by side, played step by step.

Chromium is Debian's (``/usr/bin/chromium``, installed by ``bash scripts/setup.sh --tests``), driven by the
``playwright`` package (the dev group); nothing is downloaded. Without either the tests fail, they do not skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from tests.agents.openai_stand_in import StandIn, open_app
from tests.conftest import ROOT
from vlui.cli import compose
from vlui.data.images import IMAGE_REF
from vlui.env.actions import ActionParser
from vlui.jobs import collect, evaluate

pytestmark = pytest.mark.integration  # 2 to 6 s each on the 2-core machine: not slow

expect.set_options(timeout=20_000)  # the first episode read loads the task catalog: seconds on a busy machine
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[BrowserContext]:
    """Chromium with a fresh profile."""
    assert CHROMIUM.is_file(), f"no {CHROMIUM}: install Debian's chromium (bash scripts/setup.sh --tests does)"
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=ARGS, viewport={"width": 1400, "height": 1000})
        yield context
        context.close()


def evaluated(out: Path, agent: str) -> Path:
    """``agent`` evaluated on two tasks on one phone, each step's screen kept."""
    evaluate.run(compose("evaluate", [f"agent={agent}", "tasks=[open_clock,airplane_on]", "env.snapshots=[000]",
                                      "runs=1", "adaptive_metrics=false", "screens=all"], output_dir=out))
    return out


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory) -> Path:
    return evaluated(tmp_path_factory.mktemp("evaluate") / "out", "expert")


@pytest.fixture(scope="module")
def random_evaluation(tmp_path_factory) -> Path:
    return evaluated(tmp_path_factory.mktemp("evaluate") / "random", "random")


def lines(folder: Path) -> dict[str, dict[str, Any]]:
    return {r["task"]: r for r in map(json.loads, (folder / "episodes.jsonl").read_text().splitlines())}


@contextmanager
def viewer(path: Path, *more: str) -> Iterator[str]:
    """``python -m vlui.viewer path`` on a free port; its page's address."""
    proc = subprocess.Popen([sys.executable, "-m", "vlui.viewer", str(path), "--port", "0", "--no-browser", *more],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith("viewing "), first + (proc.stderr.read() if proc.poll() is not None else "")
        yield first.split(" at ", 1)[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def opened(browser: BrowserContext, url: str) -> Page:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.errors = errors  # type: ignore[attr-defined]
    page.goto(url)
    return page


def drawn(page: Page, episode: str, step: int, screen: bool = True, where: str = "") -> None:
    """Wait until the page has drawn ``step`` of ``episode``, its screen loaded (with a nonzero size); ``where``: a
    pane of the comparison (its selector), else the single episode's screen."""
    overlay, img = (f"{where} .overlay", f"{where} img.screen") if where else ("#overlay", "#screen")
    page.wait_for_selector(f'{overlay}[data-episode="{episode}"][data-step="{step}"]', state="attached")
    if screen:
        size = page.eval_on_selector(img, "i => [i.complete, i.naturalWidth, i.naturalHeight]")
        assert size[0] and size[1] > 0 and size[2] > 0, size


def centre(box: dict[str, float]) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_an_evaluations_episode_is_shown_step_by_step_with_each_gesture_where_it_touched(
        evaluation: Path, browser: BrowserContext) -> None:
    r = lines(evaluation)["airplane_on"]
    assert r["success"] and r["success_line"].endswith("Turning radio off - airplane is on")
    assert len(r["screens"]) == r["steps"] + 1 and all((evaluation / "images" / f"{h}.png").is_file()
                                                        for h in r["screens"])
    parser = ActionParser()
    with viewer(evaluation) as url:
        page = opened(browser, url)
        rows = page.locator("#episodes tbody tr")
        expect(rows).to_have_count(2)
        page.select_option("#task-filter", "airplane_on")
        expect(rows).to_have_count(1)
        rows.first.click()
        expect(page.locator("#instruction")).to_have_text("turn on airplane mode")
        expect(page.locator("#success-line")).to_have_text(r["success_line"])
        taps = 0
        for i, action in enumerate(r["actions"]):
            drawn(page, r["key"], i)
            expect(page.locator("#step-label")).to_have_text(f"step {i + 1} of {r['steps']}")
            assert page.get_attribute("#screen", "src") == f"/0/images/{r['screens'][i]}.png"
            parsed = parser.parse(action)
            shape = page.locator(f"#overlay .gesture.{parsed.kind}")
            expect(shape).to_have_count(1)
            if parsed.kind == "tap":  # the circle's centre is where the action touched the screen
                taps += 1
                screen = page.locator("#screen").bounding_box()
                x, y = centre(shape.bounding_box())
                assert x == pytest.approx(screen["x"] + parsed.touch[1] * screen["width"], abs=1.5)
                assert y == pytest.approx(screen["y"] + parsed.touch[0] * screen["height"], abs=1.5)
                expect(page.locator("#meaning")).to_have_text(
                    f"tap at x {parsed.touch[1]:.3f}, y {parsed.touch[0]:.3f}")
            last = i == r["steps"] - 1
            expect(page.locator("#step-success")).to_have_text(r["success_line"] if last else "–")
            expect(page.locator("#outcome")).to_contain_text("terminated: the task succeeded" if last else "reward 0")
            page.click("#next")
        drawn(page, r["key"], r["steps"])
        expect(page.locator("#step-label")).to_have_text(f"final screen (after {r['steps']} steps)")
        expect(page.locator("#overlay .gesture")).to_have_count(0)
        page.keyboard.press("ArrowLeft")  # the keys step too
        drawn(page, r["key"], r["steps"] - 1)
        touches = page.locator('#plot circle.touch[data-axis="x"]')  # the actions over time: a dot per action
        expect(touches).to_have_count(r["steps"])
        assert [float(v) for v in touches.evaluate_all("cs => cs.map(c => c.dataset.value)")] == pytest.approx(
            [parser.parse(a).touch[1] for a in r["actions"]])
        page.fill("#step-slider", "0")  # the slider goes to a step, play shows the others in turn
        drawn(page, r["key"], 0)
        page.click("#play")
        expect(page.locator("#play")).to_have_attribute("data-playing", "yes")
        expect(page.locator("#step-label")).to_have_text(f"final screen (after {r['steps']} steps)", timeout=20_000)
        expect(page.locator("#play")).to_have_attribute("data-playing", "no")  # it stops at the end
        page.click("#screen")  # the screen as large as the window, the gesture drawn on it; at its own pixels; larger
        expect(page.locator("#zoom")).to_be_visible()
        size = page.eval_on_selector("#screen", "i => [i.naturalWidth, i.naturalHeight]")
        window = page.locator("#zoom .view").bounding_box()
        box = page.locator("#zoom-box").bounding_box()
        assert box["height"] == pytest.approx(window["height"], abs=2) and box["height"] > 2 * size[1]
        expect(page.locator("#zoom-box .overlay .gesture")).to_have_count(0)  # the final screen: no gesture
        page.click("#zoom-full")
        box = page.locator("#zoom-box").bounding_box()
        assert [box["width"], box["height"]] == pytest.approx(size, abs=1)
        page.click("#zoom-in")
        assert page.locator("#zoom-box").bounding_box()["width"] == pytest.approx(1.5 * size[0], abs=1)
        page.keyboard.press("Escape")
        expect(page.locator("#zoom")).to_be_hidden()
        assert taps and page.errors == []  # type: ignore[attr-defined]


def test_a_damaged_line_a_missing_screen_and_an_evaluation_without_screens_are_said_in_the_page(
        evaluation: Path, browser: BrowserContext, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(evaluation, tmp_path / "damaged"))
    r = lines(folder)["airplane_on"]
    gone = r["screens"][1]
    (folder / "images" / f"{gone}.png").unlink()
    with open(folder / "episodes.jsonl", "a", encoding="utf-8") as f:
        f.write('{"key": "0/call_911/000/0", "task": \n')
    with viewer(folder) as url:
        page = opened(browser, url)
        broken = page.locator('#episodes tbody tr[data-outcome="none"]')
        expect(broken).to_have_count(1)
        broken.click()
        expect(page.locator("#problem")).to_contain_text("line 3 of episodes.jsonl is damaged")
        page.locator("#episodes tbody tr", has_text="airplane_on").click()
        drawn(page, r["key"], 0)
        page.click("#next")
        drawn(page, r["key"], 1, screen=False)
        expect(page.locator("#screen-note")).to_have_text(
            f"this screen's file images/{gone}.png is missing from the evaluation's folder")
        expect(page.locator("#overlay .gesture")).to_have_count(1)  # the gesture is drawn all the same

    plain = Path(shutil.copytree(evaluation, tmp_path / "plain"))
    records = [{k: v for k, v in x.items() if k != "screens"} for x in lines(plain).values()]
    (plain / "episodes.jsonl").write_text("".join(json.dumps(x) + "\n" for x in records))
    with viewer(plain, "--episode", r["key"]) as url:
        page = opened(browser, url)
        expect(page.locator("#folder-notes")).to_contain_text("this evaluation kept no screens: evaluate again with "
                                                              "screens=all")
        drawn(page, r["key"], 0, screen=False)
        expect(page.locator("#screen")).to_be_hidden()
        expect(page.locator("#overlay .gesture")).to_have_count(1)


def competent(prompt: str) -> str:
    """A model that opens the app its goal names, from the element list of the current observation."""
    goal = prompt.partition("\n")[0]
    return "- Description: a phone\n- Thought: find the app\n- Action: " + open_app(
        goal + "\n" + prompt.rsplit("Observation:\n", 1)[1])


def test_an_mllm_agents_episode_is_shown_with_its_prompt_marked_screenshot_and_raw_answer(browser: BrowserContext,
                                                                                          tmp_path: Path) -> None:
    out = tmp_path / "mllm"
    with StandIn(answer=competent) as llm:  # agent=mllm against the local OpenAI-compatible stand-in
        evaluate.run(compose("evaluate", [
            "agent=mllm", f"agent.base_url={llm.url}", "agent.model=stand-in", "tasks=[open_chrome]",
            "env.snapshots=[100]", "runs=1", "adaptive_metrics=false", "agent.set_of_marks=true",
            "agent.screenshot_height=256", "agent.screenshot_width=128", "agent.retry_delay_s=0", "screens=all"],
            output_dir=out))
    r = lines(out)["open_chrome"]  # in the app drawer: a swipe, then a tap
    steps = r["transcript"]["steps"]
    assert r["success"] and len(steps) == r["steps"] >= 2
    sent = [part["image_url"]["url"].removeprefix(IMAGE_REF) for part in steps[0]["request"]["messages"][-1]["content"]
            if part.get("type") == "image_url"]
    assert sent and sent[-1] != r["screens"][0]  # the screenshot sent carries the marks: not the kept screen
    with viewer(out, "--episode", r["key"]) as url:
        page = opened(browser, url)
        drawn(page, r["key"], 0)
        expect(page.locator("#llm")).to_be_visible()
        expect(page.locator("#llm-answer")).to_have_text(steps[0]["answer"])
        expect(page.locator("#llm-action")).to_have_text(steps[0]["action"])
        page.wait_for_function("() => document.querySelector('#llm-image').naturalWidth > 0")
        assert page.get_attribute("#llm-image", "src") == f"/0/images/{sent[-1]}.png"
        page.click("#prompt summary")
        expect(page.locator("#messages .msg")).to_have_count(len(steps[0]["request"]["messages"]))
        expect(page.locator("#messages")).to_contain_text("open the chrome app")
        page.click("#llm-image")  # as large as the window, or at its own pixels: not capped by the page's column
        expect(page.locator("#zoom")).to_be_visible()
        shown, zoomed = (page.locator(x).bounding_box()["height"] for x in ("#llm-image", "#zoom-box"))
        assert zoomed == pytest.approx(page.locator("#zoom .view").bounding_box()["height"], abs=2) and zoomed > shown
        page.click("#zoom-full")
        width = page.eval_on_selector("#llm-image", "i => i.naturalWidth")
        assert page.locator("#zoom-box").bounding_box()["width"] == pytest.approx(width, abs=1)
        page.click("#zoom-close")
        page.click("#next")
        drawn(page, r["key"], 1)
        expect(page.locator("#llm-answer")).to_have_text(steps[1]["answer"])
        assert not page.errors  # type: ignore[attr-defined]

    plain = Path(shutil.copytree(out, tmp_path / "plain"))  # evaluated without screens=all
    (plain / "episodes.jsonl").write_text(json.dumps({k: v for k, v in r.items() if k != "screens"}) + "\n")
    with viewer(plain, "--episode", r["key"]) as url:
        page = opened(browser, url)
        drawn(page, r["key"], 0)  # not a blank box: the screenshot the agent was sent
        assert page.get_attribute("#screen", "src") == f"/0/images/{sent[-1]}.png"
        expect(page.locator("#screen-note")).to_have_text("the screenshot sent to the agent (the evaluation kept no "
                                                          "screens of its own)")


def test_a_collected_episode_is_shown_with_its_screens_gestures_and_success_line(browser: BrowserContext,
                                                                                 tmp_path: Path) -> None:
    data = tmp_path / "data"
    collect.run(compose("collect", [f"paths.data_dir={data}", "dataset=one", "tasks=[open_clock]",
                                    "env.snapshots=[000]", "env.num_envs=1"], output_dir=data / "run"))
    (file,) = (data / "one" / "episodes").rglob("episode_*.parquet")
    rows = pq.read_table(file).to_pylist()
    (line,) = [x["success_line"] for x in rows if x["success_line"]]
    assert "com.android.deskclock" in line and rows[-2]["terminated"] and rows[-2]["success_line"] == line
    with viewer(data / "one") as url:
        page = opened(browser, url)
        page.locator("#episodes tbody tr").first.click()
        expect(page.locator("#instruction")).to_have_text("open the clock app")
        expect(page.locator("#success-line")).to_have_text(line)
        for step, row in enumerate(rows):
            drawn(page, "0", step)
            assert page.get_attribute("#screen", "src").startswith(f"/0/screen?id=0&step={step}")
            expect(page.locator("#overlay .gesture")).to_have_count(0 if row["is_last"] else 1)
            if row["action_kind"] == "tap":
                screen = page.locator("#screen").bounding_box()
                x, y = centre(page.locator("#overlay .gesture.tap").bounding_box())
                assert x == pytest.approx(screen["x"] + row["touch"][1] * screen["width"], abs=1.5)
                assert y == pytest.approx(screen["y"] + row["touch"][0] * screen["height"], abs=1.5)
            if not row["is_last"]:  # float32 in the file, given as the evaluation gives its own: 4 decimals
                numbers = page.text_content("#action").split("= [")[1].rstrip("]").split(", ")
                assert [float(v) for v in numbers] == pytest.approx(row["action"], abs=5e-5)
                assert all(len(v.partition(".")[2]) <= 4 for v in numbers), numbers
            page.keyboard.press("ArrowRight")
        assert page.errors == []  # type: ignore[attr-defined]


def test_the_page_opens_on_the_first_failed_episode(random_evaluation: Path, browser: BrowserContext) -> None:
    failed = [x for x in lines(random_evaluation).values() if not x["success"]]
    assert failed
    with viewer(random_evaluation) as url:
        page = opened(browser, url)
        drawn(page, failed[0]["key"], 0)
        expect(page.locator("#episodes tbody tr.current")).to_have_attribute("data-id", failed[0]["key"])
        assert page.errors == []  # type: ignore[attr-defined]


def test_two_agents_episodes_of_the_same_task_and_phone_are_shown_side_by_side_and_played(
        evaluation: Path, random_evaluation: Path, browser: BrowserContext) -> None:
    expert, rand = lines(evaluation), lines(random_evaluation)
    task = next(t for t in ("airplane_on", "open_clock") if not rand[t]["success"])  # where the agents differ
    runs = [expert[task], rand[task]]
    parser = ActionParser()
    with viewer(evaluation, random_evaluation) as url:
        page = opened(browser, url)
        expect(page.locator("#title")).to_have_text(f"2 agents compared: {evaluation.name}, {random_evaluation.name}")
        expect(page.locator("#matches tbody tr")).to_have_count(2)
        page.locator("#matches tbody tr", has_text=task).click()
        panes = page.locator("#panes .pane")
        expect(panes).to_have_count(2)
        for step in (0, 1):
            for agent, r in enumerate(runs):
                k = min(step, r["steps"])
                drawn(page, r["key"], k, where=f'#panes .pane[data-agent="{agent}"]')
                pane = panes.nth(agent)
                assert pane.locator("img.screen").get_attribute("src") == f"/{agent}/images/{r['screens'][k]}.png"
                if k == r["steps"]:
                    expect(pane.locator(".overlay .gesture")).to_have_count(0)
                    continue
                parsed = parser.parse(r["actions"][k])
                shape = pane.locator(f".overlay .gesture.{parsed.kind}")
                expect(shape).to_have_count(1)
                expect(pane.locator(".numbers")).to_contain_text(", ".join(
                    f"{v:.4f}".rstrip("0").rstrip(".") for v in r["actions"][k]))
                if parsed.kind == "tap":  # where it touched, on that agent's screen
                    screen = pane.locator("img.screen").bounding_box()
                    x, y = centre(shape.bounding_box())
                    assert x == pytest.approx(screen["x"] + parsed.touch[1] * screen["width"], abs=1.5)
                    assert y == pytest.approx(screen["y"] + parsed.touch[0] * screen["height"], abs=1.5)
            page.click("#next")
        for agent, r in enumerate(runs):  # both agents' actions over time, one colour each
            expect(page.locator(f'#c-plot circle.touch[data-agent="{agent}"][data-axis="y"]')).to_have_count(r["steps"])
        longest = max(r["steps"] for r in runs)
        page.click("#play")
        expect(page.locator("#step-label")).to_have_text(f"the last step ({longest + 1})", timeout=40_000)
        for agent, r in enumerate(runs):  # the shorter episode waits on its final screen
            drawn(page, r["key"], r["steps"], where=f'#panes .pane[data-agent="{agent}"]')
        page.uncheck('#agent-picks input[data-agent="1"]')  # which agents are shown
        expect(panes).to_have_count(1)
        page.select_option("#mode", "single")  # and every episode, each alone
        expect(page.locator("#episodes tbody tr")).to_have_count(4)
        assert page.errors == []  # type: ignore[attr-defined]
