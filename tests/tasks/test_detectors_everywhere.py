"""The acceptance test of B-MoCA's 60 success detectors on the simulated phone, both ways, on all 45 snapshots:
each detector fires on its own task's expert trajectory and stays silent over every other task's.

Opening an app is part of many tasks, so ``open_<app>`` detectors of the apps a trajectory opens are not counted
against it. The one other overlap is inherent to the paper's regexes (see INHERENT_OVERLAPS).
"""

from __future__ import annotations

import pytest

from vlui.agents.expert import ExpertAgent
from vlui.env.env import make_env
from vlui.sim.snapshot import snapshot_ids
from vlui.tasks.catalog import Detector, task_set, tasks

# (trajectory's task, detector that fires on it too): calling 911 presses the dial pad's call button, and Telecom
# logs "EventRecord added as Call" for every call placed, emergency or not.
INHERENT_OVERLAPS = {("call_911", "dial_call_button")}


@pytest.fixture(scope="module")
def fired() -> dict[tuple[str, str], set[str]]:
    """(task, snapshot) -> the tasks whose detector matched the expert's whole trajectory."""
    snapshots = snapshot_ids("all")
    env = make_env({"backend": "sim", "snapshots": snapshots}, "all", include_xml=True)
    detectors = {t: Detector(tasks()[t]) for t in task_set("all")}
    out = {}
    for task in task_set("all"):
        for snap in snapshots:
            obs, info = env.reset(seed=0, options={"task": task, "snapshot": snap})
            mark = env.device.log_mark()
            agent = ExpertAgent()
            agent.reset(env.task, info, seed=0)
            done = terminated = False
            while not done:
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                done = terminated or truncated
            assert terminated, f"{task} on {snap}: the expert failed"
            lines = env.device.log_lines(mark)
            opened = {f"open_{app}" for app in env.device.state.recents}
            out[task, snap] = {t for t, d in detectors.items() if d.match(lines) is not None} - (opened - {task})
    env.close()
    return out


def test_every_detector_fires_on_its_own_task_and_on_no_other(fired) -> None:
    wrong = []
    for (task, snap), hits in fired.items():
        expected = {task} | {other for traj, other in INHERENT_OVERLAPS if traj == task}
        if hits != expected:
            wrong.append(f"{task} on {snap}: {sorted(hits - expected)} fired, {sorted(expected - hits)} did not")
    assert not wrong, "\n".join(wrong[:20])
    assert len(fired) == 60 * 45
