"""What a phone keeps between resets and steps (``SimDevice(reuse=True)``: its boot states pickled, the UI dump of
a window not rebuilt since) changes nothing a user sees: the expert's episodes, one after another on one phone, give
the same observations (screen and UI dump), log lines, rewards and ends with reuse on and off, on training phones,
RTL, dark and tablet ones and generated ones."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim.driver import one, tap
from vlui.agents.expert import ExpertAgent
from vlui.android.state import DeviceState
from vlui.env.env import PhoneEnv
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import resolve_tasks, task_set, tasks

# a 1080x2160 phone, right to left (Arabic), dark and Korean, the landscape tablet; generated: a landscape tablet in
# Indonesian and a phone in Hindi
PHONES = ["000", "030", "105", "109", "gen-1-26", "gen-1-34"]
# the representative tasks and those that start from a state of their own (set after the boot state is loaded)
NAMES = list(dict.fromkeys(task_set("representative")
                           + [n for n in task_set("supported") if tasks()[n].state][:3]))


def _episodes(snapshot: str, reuse: bool, screens: bool) -> list[tuple]:
    """Every step of the expert's episodes of :data:`NAMES` on ``snapshot``, each task twice, in one environment:
    (screen, UI dump, new log lines, reward, terminated, truncated)."""
    env = PhoneEnv(SimDevice(snapshot, reuse=reuse), resolve_tasks(NAMES), [snapshot], include_xml=True,
                   include_screen=screens)
    agent, out = ExpertAgent(), []
    for task in NAMES * 2:
        obs, info = env.reset(options={"task": task, "snapshot": snapshot})
        agent.reset(env.task, info, seed=0)
        mark, done = env.device.log_mark(), False
        out.append((obs.get("screen"), obs["xml"], [], 0.0, False, False))
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
            out.append((obs.get("screen"), obs["xml"], env.device.log_lines(mark), reward, terminated, truncated))
            mark = env.device.log_mark()
    return out


def _same(snapshot: str, screens: bool) -> int:
    kept, anew = _episodes(snapshot, True, screens), _episodes(snapshot, False, screens)
    assert len(kept) == len(anew), f"{snapshot}: the episodes took {len(kept)} steps with reuse, {len(anew)} without"
    for i, (a, b) in enumerate(zip(kept, anew, strict=True)):
        assert a[1:] == b[1:], f"{snapshot}: step {i} differs (UI dump, log, reward or end) with reuse"
        assert (a[0] is None and b[0] is None) or np.array_equal(a[0], b[0]), f"{snapshot}: screen {i} differs"
    return len(kept)


@pytest.mark.parametrize("snapshot", PHONES)
def test_episodes_without_screens_are_the_same_with_reuse(snapshot: str) -> None:
    assert _same(snapshot, screens=False) > 4 * len(NAMES)


@pytest.mark.parametrize("snapshot", ["030", "109"])
def test_episodes_with_screens_are_the_same_with_reuse(snapshot: str) -> None:
    assert _same(snapshot, screens=True) > 4 * len(NAMES)


def test_a_reset_restores_the_boot_state_whatever_the_episode_changed() -> None:
    """An episode's changes (Wi-Fi off, an app open) are gone after the next load, with reuse on and off alike."""
    states = []
    for reuse in (True, False):
        phone = SimDevice("000", reuse=reuse)
        boot = phone.state.copy()
        phone.set_state({"wifi": False})
        phone.open_app("clock")
        phone.load_snapshot("000")
        states.append(phone.state)
        assert phone.state == boot and isinstance(phone.state, DeviceState)
    assert states[0] == states[1] and states[0] is not states[1]


# changes the system bars or the home screen show (the clock's minute, notifications, the levels, an app in front, the
# date, the theme, the locale's direction, the density), and some only an app's window does (a dialog, the keyboard
# and a field's text), each on the last
BAR_CHANGES = [
    lambda d: d.set_clock(d.state.time_ms + 60_000),
    lambda d: d.set_state({"notifications": ["messages"]}),
    lambda d: d.set_state({"notifications": ["messages", "gmail", "calendar", "photos", "youtube"]}),
    lambda d: d.set_state({"battery_level": 37, "charging": True}),
    lambda d: d.set_state({"wifi": False}),
    lambda d: d.set_state({"airplane_mode": True}),
    lambda d: d.open_app("settings"),
    lambda d: d.set_state({"dialog": "brightness"}),
    lambda d: d.key("HOME"),
    lambda d: d.set_clock(d.state.time_ms + 86_400_000),  # the next day: the home screen's date
    lambda d: d.open_app("files"),
    lambda d: tap(d, one(d, lambda n: n.rid.endswith(":id/search_box"), "Files' search box")),  # the keyboard up
    lambda d: d.text("weather"),
    lambda d: d.set_state({"dark_theme": True}),
    lambda d: d.key("HOME"),
    lambda d: d.reconfigure(locale="ar-EG"),
    lambda d: d.reconfigure(dpi=320),
]


def test_a_kept_part_of_the_screen_is_never_one_of_another_state() -> None:
    """The bars and the home screen a phone keeps (reuse) are taken again only while what they are built from is
    equal: after each change the screen is new and is the one a phone without reuse draws; and parts taken again
    after a reset act on the state of now, not on the one they were built with."""
    kept, anew = SimDevice("000"), SimDevice("000", reuse=False, frames=None)
    last = kept.screenshot()
    for i, change in enumerate(BAR_CHANGES):
        change(kept)
        change(anew)
        screen = kept.screenshot()
        assert not np.array_equal(screen, last), f"change {i} did not change the screen"
        assert np.array_equal(screen, anew.screenshot()), f"change {i}: the screen differs from the one without reuse"
        last = screen
    phone = SimDevice("000")
    before = phone.frame().children
    phone.load_snapshot("000")  # a state of its own, equal to the last: the same home screen and bars are taken again
    assert all(a is b for a, b in zip(phone.frame().children, before, strict=True))
    phone.swipe(540, 20, 540, 1200)  # down from the status bar: the shade
    assert phone.state.shade
    phone.key("BACK")
    phone.swipe(540, 1500, 540, 500)  # up on the home screen: the drawer
    assert phone.state.drawer and not phone.state.shade
