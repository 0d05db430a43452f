"""The viewer's readers (vlui/viewer/episodes.py) and server, on folders written here: a dataset, evaluations with and
without screens, an MLLM agent's transcript, and the damage a folder can come with. The page in a real browser:
test_page.py."""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import run_python
from vlui.data.format import DatasetWriter, encode_png
from vlui.data.images import IMAGE_REF
from vlui.env.actions import ActionParser, key_action, normalised_to_action
from vlui.errors import VluiError
from vlui.spec import ObsActionSpec
from vlui.viewer.compare import Viewer
from vlui.viewer.episodes import episode_limit, open_folder, success_text, task_of
from vlui.viewer.server import PAGE, make_server

SPEC = ObsActionSpec(16, 8)
LINE = "11-23 08:00:12.015  1210  1247 D PhoneGlobals: Turning radio off - airplane is on"
TAP = normalised_to_action((0.25, 0.75)).tolist()  # x 0.75, y 0.25
SWIPE = normalised_to_action((0.8, 0.5), (0.2, 0.5)).tolist()  # up the middle
BACK = key_action("BACK").tolist()


def png(value: int) -> bytes:
    return encode_png(np.full((16, 8, 3), value, dtype=np.uint8))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------------------------- datasets
def dataset_rows(eid: int, actions: list[list[float]], success: bool, acted: list[list[float]] | None = None,
                 task: str = "airplane_on", line: str | None = LINE) -> list[dict[str, Any]]:
    """An episode's rows as collection writes them (docs/dataset.md), its last action the one that succeeded (on
    ``line`` when its task's detector reads the log)."""
    parser = ActionParser.of(SPEC)
    rows = []
    for t in range(len(actions) + 1):
        last = t == len(actions)
        p = None if last else parser.parse(actions[t])
        won = success and t == len(actions) - 1
        rows.append({"episode_id": eid, "step": t, "task_id": task, "snapshot_id": "000", "seed": eid,
                     "instruction": "turn on airplane mode", "screen": png(10 * t), "screen_full": None, "xml": None,
                     "action": None if last else actions[t], "action_kind": None if last else p.kind,
                     "action_key": (p.key or None) if p else None, "touch": list(p.touch) if p else None,
                     "lift": list(p.lift) if p else None, "reward": float(won), "done": last or won,
                     "terminated": success and (last or won), "truncated": False, "success": success,
                     "is_last": last, "acted": acted[t] if acted and not last else None,
                     "success_line": line if won else None})
    return rows


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "data" / "tiny"
    writer = DatasetWriter(root, {"tasks": ["airplane_on"], "agent": {"name": "expert"}}, SPEC)
    writer.open(resume=False)
    writer.write(0, dataset_rows(0, [SWIPE, BACK, TAP], success=True))
    writer.write(1, dataset_rows(1, [TAP], success=False, acted=[SWIPE]))  # a DAgger round's: label and acted
    writer.write(2, dataset_rows(2, [TAP], success=True))
    writer.close()
    return root


def test_a_datasets_episodes_show_each_screen_gesture_and_the_line_that_decided_success(dataset: Path) -> None:
    folder = open_folder(dataset)
    listing = folder.listing()
    assert listing["kind"] == "dataset" and [e["id"] for e in listing["episodes"]] == ["0", "1", "2"]
    assert listing["episodes"][0] | {"problem": None} == {"id": "0", "task": "airplane_on", "snapshot": "000",
                                                           "seed": 0, "success": True, "steps": 3, "label": "",
                                                           "problem": None}
    ep = folder.episode("0")
    assert ep["instruction"] == "turn on airplane mode" and ep["success_line"] == LINE
    assert ep["detector"].startswith("a log line tagged PhoneGlobals whose message matches")
    swipe, back, tap, final = ep["steps"]
    assert [s["gestures"][0]["kind"] for s in (swipe, back, tap)] == ["swipe", "key", "tap"] and final["final"]
    assert swipe["meaning"] == "swipe up from x 0.500, y 0.800 to x 0.500, y 0.200"
    assert back["meaning"].startswith("press BACK") and back["gestures"][0]["key"] == "BACK"
    assert tap["meaning"] == "tap at x 0.750, y 0.250" and tap["terminated"] and tap["reward"] == 1.0
    assert tap["success_line"] == LINE and swipe["success_line"] is None
    assert swipe["screen"] == "/screen?id=0&step=0" and folder.screen("0", 2, full=False) == png(20)
    assert folder.screen("0", 9, full=False) is None and folder.episode("7") is None


def test_a_datasets_actions_are_given_to_4_decimals_as_an_evaluation_keeps_its_own(dataset: Path) -> None:
    swipe, back, tap, _ = open_folder(dataset).episode("0")["steps"]  # float32 in the file: 0.6 is 0.6000000238...
    assert [swipe["action"], back["action"], tap["action"]] == [[0.6, 0.0, -0.6, 0.0], [0.9, -0.56, 0.9, -0.56],
                                                                [-0.5, 0.5, -0.5, 0.5]]
    dagger = open_folder(dataset).episode("1")["steps"][0]
    assert dagger["action"] == [0.6, 0.0, -0.6, 0.0] and dagger["label"] == [-0.5, 0.5, -0.5, 0.5]


def test_a_dagger_rounds_step_draws_what_was_done_and_the_experts_label(dataset: Path) -> None:
    step = open_folder(dataset).episode("1")["steps"][0]
    assert [(g["kind"], g["role"]) for g in step["gestures"]] == [("swipe", "done"), ("tap", "label")]
    assert step["action"] == pytest.approx(SWIPE) and step["label"] == pytest.approx(TAP)
    assert step["meaning"].startswith("the policy did: swipe up") and "the expert's label: tap at" in step["meaning"]


def test_a_damaged_index_line_or_episode_file_is_a_note_and_the_other_episodes_stay_viewable(dataset: Path) -> None:
    index = dataset / "meta" / "episodes.jsonl"
    lines = index.read_text().splitlines(keepends=True)
    index.write_text(lines[0] + '{"episode_id": 1, "fi\n' + lines[2])
    (dataset / "episodes" / "chunk-000" / "episode_000002.parquet").write_bytes(b"PAR1 not parquet")
    folder = open_folder(dataset)
    episodes = {e["id"]: e for e in folder.listing()["episodes"]}
    assert "line 2 of meta/episodes.jsonl is damaged" in episodes["index-line-2"]["problem"]
    assert episodes["1"]["task"] == "airplane_on"  # listed again from its file
    broken = folder.episode("2")
    assert "episode_000002.parquet is corrupted" in broken["problem"] and broken["steps"] == []
    assert folder.episode("0")["success_line"] == LINE and folder.episode("1")["steps"]


def test_a_dataset_written_before_the_success_line_was_kept_says_so(dataset: Path) -> None:
    root = dataset.parent / "old"
    writer = DatasetWriter(root, {"tasks": ["airplane_on", "set_volume@ring-4"]}, SPEC)
    writer.open(resume=False)
    writer.write(0, [{k: v for k, v in r.items() if k != "success_line"} for r in dataset_rows(0, [TAP], True)])
    writer.write(1, dataset_rows(1, [TAP], True, task="set_volume@ring-4", line=None))
    writer.close()
    old, by_state = open_folder(root).episode("0"), open_folder(root).episode("1")
    assert old["success_line"] is None and old["success_note"] == (
        "this dataset does not hold the log line that decided success (it was written before vlui kept it): collect "
        "it again to keep it")
    assert by_state["success_note"] == "judged by the device's state, which no log line says"
    assert by_state["detector"] == 'the device\'s state: {"volume.ring": 4}'


# ---------------------------------------------------------------------------------------------------- evaluations
def write_evaluation(out: Path, records: list[dict[str, Any]], images: dict[str, bytes] | None = None,
                     agent: dict[str, Any] | None = None) -> Path:
    """An evaluation's folder as evaluate.py writes it: recipe.json, episodes.jsonl, images/<sha256>.png."""
    out.mkdir(parents=True)
    (out / "recipe.json").write_text(json.dumps({
        "tasks": sorted({r["task"] for r in records}), "snapshots": ["000"], "runs": 1, "episodes_per_pair": 1,
        "seed": 0, "agent": agent or {"name": "expert"},
        "env": {"backend": "sim", "observation_height": 16, "observation_width": 8, "tap_threshold": 0.14,
                "y_distance_scale": 2.0, "stochastic": False, "observation_version": 2}}))
    (out / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for name, data in (images or {}).items():
        (out / "images").mkdir(exist_ok=True)
        (out / "images" / f"{name}.png").write_bytes(data)
    return out


def record(task: str, actions: list[Any], success: bool, **more: Any) -> dict[str, Any]:
    return {"key": f"0/{task}/000/0", "run": 0, "task": task, "snapshot": "000", "episode": 0, "seed": 3,
            "success": success, "steps": len(actions), "actions": actions, "tokens": [], "infra_failure": None,
            "invalid_action": None, **({"success_line": LINE} if success else {}), **more}


def test_an_evaluations_lines_are_read_with_its_action_reading_and_derived_outcomes(tmp_path: Path) -> None:
    screens = [png(1), png(2), png(3), png(4)]
    out = write_evaluation(tmp_path / "eval", [
        record("airplane_on", [SWIPE, BACK, TAP], True, screens=[digest(s) for s in screens]),
        record("open_clock", [TAP, None], False, key="0/open_clock/000/0"),
    ], {digest(s): s for s in screens})
    folder = open_folder(out / "episodes.jsonl")  # the file names its folder
    listing = folder.listing()
    assert listing["kind"] == "evaluation" and listing["notes"] == []
    assert [e["label"] for e in listing["episodes"]] == ["run 0, episode 0"] * 2
    ep = folder.episode("0/airplane_on/000/0")
    assert ep["instruction"] == "turn on airplane mode" and ep["success_line"] == LINE
    kinds = [s["gestures"][0]["kind"] if s["gestures"] else None for s in ep["steps"]]
    assert kinds == ["swipe", "key", "tap", None]
    assert [s["screen"] for s in ep["steps"]] == [f"/images/{digest(s)}.png" for s in screens]
    assert [s["reward"] for s in ep["steps"]] == [0.0, 0.0, 1.0, None] and ep["steps"][2]["terminated"]
    assert ep["steps"][2]["success_line"] == LINE and "no reward per step" in ep["outcome_note"]
    assert folder.image(digest(screens[0])) == screens[0] and folder.image("../recipe") is None
    failed = folder.episode("0/open_clock/000/0")
    assert failed["steps"][1]["meaning"].startswith("no action: the agent's answer held none")
    assert failed["success_note"] == "no log line decided success in 2 steps (its step limit is 4)"
    assert "this episode's screens were not kept" in failed["notes"][0]


def test_an_evaluation_without_screens_says_how_to_keep_them_and_still_draws_the_gestures(tmp_path: Path) -> None:
    out = write_evaluation(tmp_path / "eval", [record("airplane_on", [TAP], True)])
    folder = open_folder(out)
    assert folder.listing()["notes"] == [
        "this evaluation kept no screens: evaluate again with screens=all (or screens=failures) into another folder "
        "(name=...) to see each step's screen; here the gestures are drawn on a blank screen (or, for an MLLM agent, "
        "on the screenshot it was sent)"]
    step = folder.episode("0/airplane_on/000/0")["steps"][0]
    assert step["screen"] is None and step["gestures"][0]["touch"] == pytest.approx([0.25, 0.75])


def test_damaged_lines_missing_images_and_infrastructure_failures_are_notes_in_the_page(tmp_path: Path) -> None:
    kept = png(5)
    out = write_evaluation(tmp_path / "eval", [
        record("airplane_on", [TAP], True, screens=[digest(kept), digest(png(6))]),
        record("open_clock", [], False, key="0/open_clock/000/1", steps=0, infra_failure="ConnectionError: gone"),
        record("open_phone", [TAP], False, key="0/open_phone/000/0", steps="two"),
    ], {digest(kept): kept})
    journal = out / "episodes.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text(lines[0] + '{"key": "0/call_911/000/0", "ta\n' + "".join(lines[1:]) + '{"key": "cut sh')
    folder = open_folder(out)
    episodes = {e["id"]: e for e in folder.listing()["episodes"]}
    assert len(episodes) == 4  # the line a writer is still writing (no newline yet) is not one
    assert episodes["line-2"]["problem"].startswith("line 2 of episodes.jsonl is damaged (not JSON")
    assert folder.episode("line-2")["problem"] == episodes["line-2"]["problem"]
    assert episodes["0/open_clock/000/1"]["success"] is None
    assert "infrastructure failure" in episodes["0/open_clock/000/1"]["problem"]
    assert "infrastructure reasons" in folder.episode("0/open_clock/000/1")["notes"][0]
    assert "incomplete or malformed" in folder.episode("0/open_phone/000/0")["problem"]
    ok = folder.episode("0/airplane_on/000/0")
    assert ok["steps"][0]["screen_note"] is None
    assert ok["steps"][1]["screen_note"] == (f"this screen's file images/{digest(png(6))}.png is missing from the "
                                             "evaluation's folder")


def transcript_step(screen: str, answer: str, action: str | None, valid: bool, error: str = "",
                    **more: Any) -> dict[str, Any]:
    """One step of an LLM agent's transcript (docs/viewer.md): the request as stored (images named by hash), the
    raw answer and what was read from it."""
    return {"request": {"model": "m", "temperature": 0.0, "messages": [
        {"role": "system", "content": "You are an agent that operates an Android phone."},
        {"role": "user", "content": [{"type": "text", "text": "Goal: turn on airplane mode.\nObservation:\n[0] Settings"},
                                     {"type": "image_url", "image_url": {"url": f"{IMAGE_REF}{screen}"}},
                                     {"type": "text", "text": "Answer with Description, Thought and Action."}]}]},
            "answer": answer, "cached": False, "input_tokens": 900, "output_tokens": 40, "action": action,
            "valid": valid, "error": error, **more}


def test_an_mllm_agents_prompt_marked_screenshot_and_raw_answer_are_shown_per_step(tmp_path: Path) -> None:
    marked, gone = png(7), digest(b"an image never written")
    steps = [transcript_step(digest(marked), "Description: home.\nThought: open settings.\nAction: tap(0)", "tap(0)",
                             True, reflection={"request": {"messages": [{"role": "user", "content": "Reflect."}]},
                                               "answer": "Settings opened.", "cached": True, "input_tokens": 0,
                                               "output_tokens": 0}),
             transcript_step(gone, "I am not sure.", "I am not sure.", False, "no action could be read")]
    transcript = {"model": "m", "steps": steps, "requests": 2, "cached": 1, "input_tokens": 1800, "output_tokens": 80,
                  "answers": 2, "invalid_answers": 1}
    out = write_evaluation(tmp_path / "mllm", [record("airplane_on", [TAP, None], False, transcript=transcript)],
                           {digest(marked): marked}, agent={"name": "mllm", "set_of_marks": True})
    ep = open_folder(out).episode("0/airplane_on/000/0")
    assert ep["agent"]["model"] == "m" and ep["agent"]["invalid_answers"] == 1
    first, second, final = (s["llm"] for s in ep["steps"])
    assert final is None
    assert first["answer"].endswith("Action: tap(0)") and first["action"] == "tap(0)" and first["valid"]
    assert first["image"] == {"image": f"/images/{digest(marked)}.png", "missing": False}
    assert first["image_title"] == "the screenshot sent, with its set-of-mark tags"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert [list(p) for p in first["messages"][1]["parts"]] == [["text"], ["image", "missing"], ["text"]]
    assert first["reflection"]["answer"] == "Settings opened." and first["tokens"] == [900, 40]
    assert second["valid"] is False and second["error"] == "no action could be read"
    assert second["image"] == {"image": f"/images/{gone}.png", "missing": True}
    assert ep["steps"][1]["meaning"].startswith("no action")


def test_an_mllm_evaluation_without_screens_shows_each_step_on_the_screenshot_the_agent_was_sent(
        tmp_path: Path) -> None:
    sent, gone = png(8), digest(b"an image never written")
    steps = [transcript_step(digest(sent), "Action: tap(0)", "tap(0)", True),
             transcript_step(gone, "Action: tap(1)", "tap(1)", True)]
    out = write_evaluation(tmp_path / "mllm", [record("airplane_on", [TAP, TAP], False,
                                                      transcript={"model": "m", "steps": steps})],
                           {digest(sent): sent}, agent={"name": "mllm", "set_of_marks": False})
    first, second, final = open_folder(out).episode("0/airplane_on/000/0")["steps"]
    assert first["screen"] == f"/images/{digest(sent)}.png" and first["gestures"]
    assert first["screen_note"] == "the screenshot sent to the agent (the evaluation kept no screens of its own)"
    assert second["screen"] is None and final["screen"] is None  # its image is not in images/; the end sent nothing


def test_a_transcript_in_another_layout_is_a_note(tmp_path: Path) -> None:
    out = write_evaluation(tmp_path / "eval", [record("airplane_on", [TAP], True, transcript=["not", "a", "dict"])])
    ep = open_folder(out).episode("0/airplane_on/000/0")
    assert any("not in the layout the viewer reads" in n for n in ep["notes"])
    assert ep["steps"][0]["llm"] is None and ep["steps"][0]["gestures"]


# ------------------------------------------------------------------------------------------------------ bad paths
def test_a_path_that_is_no_dataset_or_evaluation_is_one_line(tmp_path: Path, dataset: Path) -> None:
    with pytest.raises(VluiError, match=r"does not exist: give a collected dataset \(data/<dataset>\) or an "):
        open_folder(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(VluiError, match=r"empty is neither a collected dataset \(no meta/info.json\) nor an "
                                        r"evaluation \(no episodes.jsonl\)"):
        open_folder(tmp_path / "empty")
    with pytest.raises(VluiError, match=r"data holds 1 datasets or evaluations \(tiny\), not one: give one of them"):
        open_folder(dataset.parent)
    (dataset / "meta" / "info.json").write_text("{")
    with pytest.raises(VluiError, match="info.json is corrupted"):
        open_folder(dataset)


@pytest.mark.integration
def test_the_command_says_a_bad_path_in_one_line(tmp_path: Path) -> None:
    out = run_python("-m", "vlui.viewer", str(tmp_path / "nowhere"), "--no-browser")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nowhere'} does not exist: give a collected dataset (data/<dataset>) or an evaluation's "
        "folder (outputs/evaluate/<name>)"]


# --------------------------------------------------------------------------------------------------------- server
@pytest.fixture
def served(dataset: Path) -> Iterator[str]:
    server = make_server(Viewer.of([dataset]), 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as res:
            return res.status, dict(res.headers), res.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_the_server_answers_the_page_the_episodes_and_their_screens_and_nothing_else(served: str) -> None:
    status, headers, body = get(served + "/")
    assert status == 200 and body == PAGE.read_bytes() and "default-src 'none'" in headers["Content-Security-Policy"]
    assert json.loads(get(served + "/api/episodes")[2])["episodes"][0]["id"] == "0"
    assert json.loads(get(served + "/api/episode?id=0")[2])["steps"][0]["screen"] == "/0/screen?id=0&step=0"
    status, headers, body = get(served + "/0/screen?id=0&step=1")
    assert status == 200 and headers["Content-Type"] == "image/png" and body == png(10)
    assert get(served + "/api/episode?id=9")[0] == 404 and get(served + "/api/episode?source=1&id=0")[0] == 404
    for path in ("/0/images/..%2Fmeta%2Finfo.json.png", "/meta/info.json", "/0/screen?id=0&step=x",
                 "/0/images/ab.png", "/1/screen?id=0&step=1", "/screen?id=0&step=1"):
        assert get(served + path)[0] == 404, path


def test_the_page_loads_nothing_from_elsewhere() -> None:
    text = PAGE.read_text()
    assert [u for u in ("http://", "https://", "//cdn", "<link rel=\"stylesheet\"") if u in text.replace(
        'SVG = "http://www.w3.org/2000/svg"', "")] == []


def test_an_llm_agents_long_press_typed_text_and_declared_end_are_shown_as_it_did_them(tmp_path: Path) -> None:
    out = write_evaluation(tmp_path / "eval", [
        record("open_clock", [{"long_press": [0.25, 0.75]}, {"type": "911"}, {"wave": 1}, TAP,
                              {"status": "complete"}], False)], {})
    ep = open_folder(out).episode("0/open_clock/000/0")
    held, typed, odd, tap, said = ep["steps"][:5]
    assert held["gestures"][0]["kind"] == "long_press" and held["gestures"][0]["touch"] == [0.25, 0.75]
    assert held["meaning"] == "long press at x 0.750, y 0.250 (held 1000 ms)"
    assert typed["gestures"] == [] and typed["meaning"] == 'type "911" into the field that has focus'
    assert odd["gestures"] == [] and odd["meaning"].startswith("an action the viewer cannot read")
    assert tap["meaning"] == "tap at x 0.750, y 0.250"
    assert said["gestures"] == [] and said["meaning"] == "declare the task complete: the episode ends"


# ----------------------------------------------------------------------------------------------------- comparison
def test_two_evaluations_episodes_of_the_same_task_and_phone_are_matched_in_order(tmp_path: Path) -> None:
    a = write_evaluation(tmp_path / "a", [record("airplane_on", [TAP], True),
                                          record("airplane_on", [SWIPE, TAP], False, key="1/airplane_on/000/0", run=1),
                                          record("open_clock", [TAP], True, key="0/open_clock/000/0")])
    b = write_evaluation(tmp_path / "b", [record("airplane_on", [SWIPE, TAP], True, key="1/airplane_on/000/0", run=1),
                                          record("airplane_on", [BACK], False)])
    listing = Viewer.of([a, b]).listing()
    assert [x["name"] for x in listing["agents"]] == ["a", "b"] and listing["title"] == "2 agents compared: a, b"
    matches = {m["id"]: [(e["source"], e["id"], e["success"]) if e else None for e in m["episodes"]]
               for m in listing["matches"]}
    assert matches == {"airplane_on/000/0": [(0, "0/airplane_on/000/0", True), (1, "0/airplane_on/000/0", False)],
                       "airplane_on/000/1": [(0, "1/airplane_on/000/0", False), (1, "1/airplane_on/000/0", True)],
                       "open_clock/000/0": [(0, "0/open_clock/000/0", True), None]}
    assert Viewer.of([a, b]).episode(1, "0/airplane_on/000/0")["steps"][0]["gestures"][0]["kind"] == "key"
    with pytest.raises(VluiError, match="is named twice: give each dataset or evaluation once"):
        Viewer.of([a, a / "episodes.jsonl"])


def test_an_evaluation_of_several_checkpoints_compares_its_policies(tmp_path: Path) -> None:
    records = [record("airplane_on", actions, won, key=f"p{p}/0/airplane_on/000/0", policy=p, group=group,
                      checkpoint=f"checkpoints/study/{group}-seed0")
               for p, group, actions, won in [(0, "bc", [TAP], True), (1, "iql", [SWIPE], False)]]
    listing = Viewer.of([write_evaluation(tmp_path / "seeds", records)]).listing()
    assert [x["name"] for x in listing["agents"]] == ["seeds: bc bc-seed0", "seeds: iql iql-seed0"]
    (match,) = listing["matches"]
    assert [e["id"] for e in match["episodes"]] == ["p0/0/airplane_on/000/0", "p1/0/airplane_on/000/0"]


def test_an_evaluation_made_with_compare_says_how_to_view_the_one_it_was_compared_with(tmp_path: Path) -> None:
    mllm = write_evaluation(tmp_path / "mllm", [record("airplane_on", [BACK], False)])
    bc = write_evaluation(tmp_path / "bc", [record("airplane_on", [TAP], True)])
    gone = tmp_path / "gone"
    (bc / "results.json").write_text(json.dumps({"config": {"compare": {"mllm": str(mllm / "results.json"),
                                                                        "old": str(gone)}}}))
    assert Viewer.of([bc]).listing()["notes"][-2:] == [
        f"bc was compared with mllm ({mllm}) when it was evaluated: python -m vlui.viewer {bc} {mllm} shows their "
        "episodes side by side",
        f"bc was compared with old ({gone}) when it was evaluated; its episodes are not there to show beside it"]
    assert Viewer.of([bc, mllm]).listing()["notes"][-1:] == [
        f"bc was compared with old ({gone}) when it was evaluated; its episodes are not there to show beside it"]


def test_an_llm_agents_m3a_actions_are_shown_as_it_did_them(tmp_path: Path) -> None:
    out = write_evaluation(tmp_path / "eval", [
        record("open_clock", [{"open_app": "clock"}, {"scroll": [0.5, 0.5, 0.0, 0.5]}, {"wait": True},
                              {"keyboard_enter": True}, {"answer": "7:30 — the alarm"}], False)], {})
    opened, scrolled, waited, entered, answered = open_folder(out).episode("0/open_clock/000/0")["steps"][:5]
    assert opened["gestures"] == [] and opened["meaning"] == "open the app clock"
    assert scrolled["gestures"][0]["kind"] == "swipe" and scrolled["gestures"][0]["lift"] == [0.0, 0.5]
    assert scrolled["meaning"] == "swipe up from x 0.500, y 0.500 to x 0.500, y 0.000"
    assert waited["gestures"] == [] and waited["meaning"] == "wait: a step with no input"
    assert entered["gestures"] == [] and entered["meaning"] == "press the keyboard's ENTER key"
    assert answered["meaning"] == 'answer "7:30 — the alarm": the episode ends'


def test_an_episode_run_under_env_step_limit_shows_that_limit() -> None:
    """A dataset or evaluation recorded under env.step_limit=2: its failed episodes ran out of 2 steps, not of the
    task's 9; a recipe without it (or without an env) gives the task's own."""
    task = task_of("call_911")
    assert episode_limit(task, {"env": {"step_limit": 2}}) == 2
    assert episode_limit(task, {"env": {"step_limit": 50}}) == episode_limit(task, {}) == task.step_limit == 9
    assert episode_limit(None, {"env": {"step_limit": 2}}) is None
    said = success_text(task, False, None, 2, "this dataset", "collect it again", 2)[1]
    assert said == "no log line decided success in 2 steps (its step limit is 2)"
