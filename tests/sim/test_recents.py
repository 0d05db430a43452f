"""Apps a task's starting state leaves open (``tasks``, ``recents``, ``top``): they go together or the task is refused
in one line, each app's process is alive, and the recents screen (APP_SWITCH, then a card) switches between them
without starting anything."""

from __future__ import annotations

import re

import pytest

from tests.sim.driver import nodes

from vlui.errors import VluiError
from vlui.sim.phone import SimDevice
from vlui.tasks.task import Task


OPEN = {"tasks": {"calendar": [{"screen": "main"}, {"screen": "event", "event": 0}], "clock": [{"screen": "main"}]},
        "recents": ["clock", "calendar"], "top": "clock"}


def test_a_starting_state_leaves_apps_open_and_the_recents_screen_switches_between_them() -> None:
    dev = SimDevice("000", noise=False)
    dev.key("HOME")
    dev.set_state(OPEN)
    assert dev.state.top == "clock" and set(dev.state.running) >= {"calendar", "clock"}
    assert dev.state.pids["calendar"] != dev.state.pids["clock"]
    mark = dev.log_mark()
    dev.key("APP_SWITCH")
    cards = nodes(dev, lambda n: n.rid == "com.android.systemui:id/snapshot")
    assert [c.desc for c in cards] == ["Clock", "Calendar"] and cards[1].bounds[2] > dev.size[0]  # past the edge
    x1, y1, x2, y2 = cards[1].bounds
    dev.tap((x1 + dev.size[0]) / 2, (y1 + y2) / 2)
    assert dev.state.top == "calendar" and dev.top_screen() == {"screen": "event", "event": 0}
    assert not [line for line in dev.log_lines(mark) if "START u0" in line or "Start proc" in line]
    dev.key("APP_SWITCH")
    dev.key("APP_SWITCH")  # twice: back to the app before
    assert dev.state.top == "clock" and dev.state.recents == ["clock", "calendar"]


@pytest.mark.parametrize(("state", "message"), [
    ({"tasks": {"clock": [{"screen": "main"}]}}, "tasks and recents go together"),
    ({**OPEN, "recents": ["clock"]}, "recents must list the apps of tasks once each, the most recent first, not "
                                     "['clock']"),
    ({**OPEN, "top": "calendar"}, "top must be the first of recents (clock) or null, not 'calendar'"),
    ({**OPEN, "tasks": {**OPEN["tasks"], "clock": []}}, "tasks.clock must be a list of screens"),
    ({"tasks": {"notes": [{"screen": "main"}]}, "recents": ["notes"]}, "tasks: unknown app 'notes'; apps: calendar, "),
])
def test_apps_left_open_that_do_not_fit_together_are_one_line(state: dict, message: str) -> None:
    with pytest.raises(VluiError, match="^task t: state: " + re.escape(message)):
        Task("t", "do it", 10, "", "", ("clock",), state=state)


def test_a_screen_its_app_does_not_draw_is_refused_when_the_state_is_set() -> None:
    dev = SimDevice("000", noise=False)
    with pytest.raises(VluiError, match="the task's starting state: tasks: the clock app has no screen 'alarms'; "
                                        "its screens: main, chooser"):
        dev.set_state({"tasks": {"clock": [{"screen": "alarms"}]}, "recents": ["clock"]})
