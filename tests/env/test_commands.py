"""Commands: the actions beyond the dual-gesture that agents naming their actions may take (``agent.actions=extended``),
a long press and text typed. Through the environment on the simulated phone (and over ADB: tests/adb), read by the
constraint watch, refused when malformed, kept in an episode's record and never written into a dataset."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageSequence

from vlui.env.actions import ActionError, ActionParser, Command, ParsedAction, normalised_to_action
from vlui.env.constraints import ConstraintWatch
from vlui.env.env import PhoneEnv
from vlui.env.ui_text import Element, parse_xml
from vlui.errors import VluiError
from vlui.eval.report import gif
from vlui.rollout import EpisodeRecord, Job, Step, dataset_rows, result_line
from vlui.sim.phone import SimDevice
from vlui.tasks import templates
from vlui.tasks.catalog import tasks
from vlui.tasks.task import Constraint

MESSAGES = "com.google.android.apps.messaging:id/"
STATE = {"messages": {"conversations": [
    {"number": "+44 20 7946 0958", "messages": [
        {"text": "Your parcel is on its way", "direction": "in", "time": "2026-11-22 18:00"}]}]}}


def long_task():
    """A task with room for the steps below (open_clock's own limit is 4)."""
    return dataclasses.replace(tasks()["open_clock"], id="hold_and_type_test", step_limit=30)


def copy_and_paste(env: PhoneEnv, launch_messages: Callable[[], None]) -> str:
    """Through ``env.step`` alone, on a phone whose Messages holds :data:`STATE`: open the conversation, long-press
    its message, Copy text, focus the compose field, type "Note: ", long-press the field, Paste. Returns the draft as
    the phone's UI tree shows it."""
    def find(rid: str) -> Element:
        return next(e for e in parse_xml(env.device.ui_xml()) if e.resource_id == rid)

    def point(e: Element) -> tuple[float, float]:
        (x, y), (w, h) = e.center, env.device.size
        return y / h, x / w

    def tap(e: Element) -> dict:
        return env.step(normalised_to_action(point(e)))[-1]

    launch_messages()
    tap(find(MESSAGES + "conversation_name"))
    info = env.step(Command.long_press(*point(find(MESSAGES + "message_text"))))[-1]
    assert info["parsed_action"]["kind"] == "long_press"
    tap(find(MESSAGES + "copy_text"))
    tap(find(MESSAGES + "compose_message_text"))
    info = env.step(Command.type_text("Note: "))[-1]
    assert info["parsed_action"] == {"kind": "type", "touch": None, "lift": None, "key": "", "text": "Note: "}
    env.step(Command.long_press(*point(find(MESSAGES + "compose_message_text"))))
    tap(find("android:id/floating_toolbar_menu_item_text"))  # Paste
    return find(MESSAGES + "compose_message_text").text


def test_a_long_press_copies_a_message_and_typed_text_goes_to_the_field_that_has_focus() -> None:
    env = PhoneEnv(SimDevice("000"), [long_task()], ["000"], include_xml=True)
    env.reset(seed=0)
    env.device.set_state(STATE)
    assert copy_and_paste(env, lambda: env.device.launch("messages")) == "Note: Your parcel is on its way"
    assert env.device.state.clipboard == "Your parcel is on its way"
    env.close()


def test_an_agent_declaring_its_task_ends_the_episode_a_success_only_where_the_goal_holds() -> None:
    volume = templates.instance_from_id("set_volume@media-7")  # judged by the device's state: volume.media == 7
    env = PhoneEnv(SimDevice("000"), [long_task(), volume], ["000"], include_xml=True)
    env.reset(seed=0, options={"task": "hold_and_type_test"})
    obs, reward, terminated, truncated, info = env.step(Command.status("complete"))  # Clock is not open
    assert (reward, terminated, truncated, info["declared"], info["step"]) == (0.0, False, True, "complete", 1)
    assert info["parsed_action"]["kind"] == "status" and "xml" in obs
    with pytest.raises(VluiError, match="the episode is over"):
        env.step(Command.status("complete"))
    env.reset(seed=0, options={"task": volume.id})
    env.device.set_state({"volume": {"media": 7}})  # the goal holds, whatever the agent says
    obs, reward, terminated, truncated, info = env.step(Command.status("impossible"))
    assert (reward, terminated, truncated, info["declared"]) == (1.0, True, False, "impossible")
    env.close()


def test_m3a_actions_open_an_app_wait_scroll_and_press_enter_on_the_simulated_phone() -> None:
    env = PhoneEnv(SimDevice("000"), [long_task()], ["000"], include_xml=True)
    env.reset(seed=0)
    phone = env.device
    obs, reward, terminated, truncated, info = env.step(Command("open_app", None, "settings"))
    assert phone.state.top == "settings" and 'package="com.android.settings"' in obs["xml"]
    assert info["parsed_action"] == {"kind": "open_app", "touch": None, "lift": None, "key": "", "text": "settings"}
    assert "cmp=com.android.settings/.Settings" in "\n".join(phone.log_lines())
    before, screen = phone.state.time_ms, obs["xml"]
    obs, reward, terminated, truncated, info = env.step(Command("wait"))
    assert phone.state.time_ms == before + phone.step_ms and obs["xml"] == screen  # the clock moved, nothing else
    assert info["parsed_action"]["kind"] == "wait" and info["step"] == 2
    assert not phone.state.scroll
    info = env.step(Command.scroll((0.5, 0.5), (0.0, 0.5)))[-1]  # scroll("down"): the list moves up
    assert info["parsed_action"]["kind"] == "swipe" and any(phone.state.scroll.values())
    env.step(Command("open_app", None, "snapseed"))  # not installed on this phone: nothing starts, the step is spent
    assert phone.state.top == "settings"
    env.step(normalised_to_action((0.95, 0.5)))  # HOME
    phone.state.drawer, phone.state.focus = True, ("launcher", "search")  # the drawer's search, "Clo" typed
    phone.state.fields["launcher.search"] = "Clo"
    phone.state_changed()
    obs, reward, terminated, truncated, info = env.step(Command("keyboard_enter"))  # the first app found starts
    assert info["parsed_action"] == {"kind": "key", "touch": None, "lift": None, "key": "ENTER"}
    assert phone.state.top == "clock" and (reward, terminated, info["step"]) == (1.0, True, 6)
    env.close()


def test_an_answer_ends_the_episode_and_is_kept_a_success_only_where_the_goal_holds() -> None:
    env = PhoneEnv(SimDevice("000"), [long_task()], ["000"], include_xml=True)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(Command("answer", None, "The clock says 7:30"))
    assert (reward, terminated, truncated, info["declared"], info["step"]) == (0.0, False, True, "answer", 1)
    assert info["parsed_action"]["text"] == "The clock says 7:30"
    env.reset(seed=0)
    assert env.step(Command("open_app", None, "clock"))[2]  # the goal reached, by name
    env.close()
    volume = templates.instance_from_id("set_volume@media-7")  # judged by the device's state
    env = PhoneEnv(SimDevice("000"), [volume], ["000"], include_xml=True)
    env.reset(seed=0)
    env.device.set_state({"volume": {"media": 7}})
    reward, terminated, truncated, info = env.step(Command("answer", None, "done"))[1:]
    assert (reward, terminated, truncated, info["declared"]) == (1.0, True, False, "answer")
    env.close()


@pytest.mark.parametrize("command, error", [
    (Command("open_app", None, "frobnicator"), "unknown app 'frobnicator'"),
    (Command("answer", None, " "), "an answer is some text"),
    (Command.scroll((0.5, 0.5), (-0.1, 0.5)), r"a scroll's end needs a point \(y, x\) in \[0, 1\]"),
    (Command.type_text(""), "type needs some text"),
    (Command.type_text("\u00e9t\u00e9"), "printable ASCII only"),
    (Command.long_press(1.5, 0.5), r"a long press needs a point \(y, x\) in \[0, 1\]"),
    (Command.long_press(float("nan"), 0.5), "a long press needs a point"),
    (Command("wave"), "unknown command 'wave'"),
    (Command.status("done"), "an agent declares its task one of complete, impossible, not 'done'"),
])
def test_a_malformed_command_is_refused_before_the_device_is_touched(command: Command, error: str) -> None:
    with pytest.raises(ActionError, match=error):
        ActionParser().parse(command)


def test_a_command_touching_a_named_component_breaks_its_constraint() -> None:
    field = Element(1, MESSAGES + "compose_message_text", clickable=True, bounds=(0, 700, 400, 760), focused=True)
    other = Element(2, MESSAGES + "send_message_button_icon", clickable=True, bounds=(300, 700, 400, 760))
    no_typing = Constraint("component", "without typing the link", id=MESSAGES + "compose_message_text")
    screen = [Element(0, bounds=(0, 0, 400, 800)), field, other]
    watch = ConstraintWatch([no_typing])
    typed = ParsedAction("type", None, None, text="https://example.com")
    assert watch.step(1, typed, (400, 800), screen, [], screen)[0].evidence == f"typed into {field.resource_id}"
    unfocused = [screen[0], dataclasses.replace(field, focused=False), other]
    assert ConstraintWatch([no_typing]).step(1, typed, (400, 800), unfocused, [], unfocused) == []
    held = ParsedAction("long_press", (0.91, 0.25), (0.91, 0.25))
    (v,) = ConstraintWatch([no_typing]).step(1, held, (400, 800), screen, [], screen)
    assert v.evidence == f"long-pressed {field.resource_id} at (100, 728)"


def test_an_episode_record_keeps_commands_and_a_dataset_refuses_them(tmp_path: Path) -> None:
    record = EpisodeRecord(Job("open_clock", "000", 0), "open the clock app")
    record.steps = [
        Step(None, None, np.array([0.1, 0.2, 0.1, 0.2], np.float32), {"kind": "tap"}, 0.0, False, False, "tap:x"),
        Step(None, None, Command.long_press(0.25, 0.5), {"kind": "long_press"}, 0.0, False, False, "long_press:y"),
        Step(None, None, Command.type_text("911"), {"kind": "type"}, 0.0, False, False, "type:z|911"),
        Step(None, None, None, None, 0.0, False, False, "invalid"),
        Step(None, None, Command.status("complete"), {"kind": "status", "text": "complete"}, 0.0, False, True,
             "status:complete")]
    line = result_line(record)
    assert line["actions"] == [[0.1, 0.2, 0.1, 0.2], {"long_press": [0.25, 0.5]}, {"type": "911"}, None,
                               {"status": "complete"}]
    assert line["declared"] == "complete" and "declared" not in result_line(EpisodeRecord(Job("a", "0", 0), "x"))
    assert [Command.from_record(a) for a in line["actions"][1:5:3]] == [Command.long_press(0.25, 0.5),
                                                                         Command.status("complete")]
    with pytest.raises(VluiError, match="a dataset holds dual-gestures, not a long_press"):
        dataset_rows(record)
    frames = [np.full((64, 32, 3), 40 * i, np.uint8) for i in range(6)]  # grey, each its own
    gif(frames, line["actions"], tmp_path / "episode.gif", scale=1)  # the video evaluate.py keeps
    drawn = [np.asarray(f.convert("RGB")).astype(int) for f in ImageSequence.Iterator(Image.open(tmp_path /
                                                                                                "episode.gif"))]
    red = [bool(((f[..., 0] - f[..., 1]) > 100).any()) for f in drawn]
    assert red == [True, True, False, False, False, False]  # a tap, a long press; the rest draw nothing


def test_an_episode_record_keeps_m3a_actions_and_the_answer(tmp_path: Path) -> None:
    commands = [Command("open_app", None, "clock"), Command.scroll((0.5, 0.5), (0.0, 0.5)), Command("wait"),
                Command("keyboard_enter"), Command("answer", None, "7:30")]
    record = EpisodeRecord(Job("open_clock", "000", 0), "open the clock app")
    record.steps = [Step(None, None, c, ActionParser().parse(c).as_dict(), 0.0, False, i == 4, "x")
                    for i, c in enumerate(commands)]
    line = result_line(record)
    assert line["actions"] == [{"open_app": "clock"}, {"scroll": [0.5, 0.5, 0.0, 0.5]}, {"wait": True},
                               {"keyboard_enter": True}, {"answer": "7:30"}]
    assert (line["declared"], line["answer"]) == ("answer", "7:30")
    assert [Command.from_record(json.loads(json.dumps(a))) for a in line["actions"]] == commands
    with pytest.raises(VluiError, match="a dataset holds dual-gestures, not a open_app"):
        dataset_rows(record)
    frames = [np.full((64, 32, 3), 40 * i, np.uint8) for i in range(5)]
    gif(frames, line["actions"], tmp_path / "episode.gif", scale=1)
    drawn = [np.asarray(f.convert("RGB")).astype(int) for f in ImageSequence.Iterator(Image.open(tmp_path /
                                                                                                "episode.gif"))]
    assert [bool(((f[..., 0] - f[..., 1]) > 100).any()) for f in drawn] == [False, True, False, False, False]
