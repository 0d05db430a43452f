"""The Clock tasks' detectors both ways: each fires on its own task's expert trajectories and stays silent on every
other supported task's, on all 45 snapshots. B-MoCA's stopwatch regexes (``^(.*?)Start`` ...) match a word anywhere
in an ``AlarmClock`` message, and its alarm regexes a time anywhere after ``nextUserAlarmTime``, so one careless log
line would make a task succeed on another task's trajectory."""

from __future__ import annotations

import pytest

from vlui.agents.expert import ExpertAgent
from vlui.env.settings import EnvConfig
from vlui.env.env import make_env
from vlui.tasks.catalog import Detector, task_set, tasks

CLOCK_TASKS = [t for t in task_set("supported") if "clock" in tasks()[t].apps and not t.startswith("open_")]


@pytest.fixture(scope="module")
def logs(expert_runs) -> dict[tuple[str, str], list[str]]:
    """(task, snapshot) -> the log of the expert's trajectory, from the reset to the end of the episode."""
    supported = set(task_set("supported"))
    return {key: run.lines for key, run in expert_runs.items() if key[0] in supported}


def test_the_clock_tasks_are_supported() -> None:
    assert {"alarm_9am_delete", "clock_alarm_tab", "clock_stopwatch_tab", "clock_timer_tab", "stopwatch_start",
            "stopwatch_pause", "stopwatch_reset", "alarm_0630", "alarm_1330", "alarm_1730", "alarm_2030",
            "alarm_2330"} <= set(CLOCK_TASKS)


@pytest.mark.integration
@pytest.mark.parametrize("task", CLOCK_TASKS)
def test_detector_fires_on_its_own_trajectories_only(logs, task: str) -> None:
    det = Detector(tasks()[task])
    for (done, snap), lines in logs.items():
        hit = det.match(lines)
        if done == task:
            assert hit is not None, f"{task} on {snap}: not detected after the expert's trajectory"
        else:
            assert hit is None, f"{task} fired on the {done} trajectory on {snap}: {hit}"


def _episode_lines(task: str, snap: str = "000") -> list[str]:
    env = make_env(EnvConfig(snapshots=[snap]), [task], include_xml=True)
    obs, info = env.reset(options={"task": task, "snapshot": snap})
    agent = ExpertAgent()
    agent.reset(env.task, info)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
    return [line.split(": ", 1)[1] for line in env.device.log_lines(tags=[tasks()[task].log_tag])]


def test_each_stopwatch_trajectory_presses_one_button() -> None:
    """The starting states make each trajectory its own: the pause task's stopwatch already runs, the reset task's
    is paused, and Clock opens on the stopwatch (so no Show Tab event either)."""
    for task, word in (("stopwatch_start", "Start"), ("stopwatch_pause", "Pause"), ("stopwatch_reset", "Reset")):
        assert _episode_lines(task) == [f"Events: [Stopwatch] [{word}] [Tap]"], task


def test_new_alarm_logs_its_time_as_the_next_alarm() -> None:
    scp = _episode_lines("alarm_0630")
    assert len(scp) == 1 and scp[0].split("nextUserAlarmTime=")[1].startswith("Tue Nov 24 06:30:00 GMT 2026 (")
