"""The acceptance test of B-MoCA's 60 success detectors on the simulated phone, both ways, on all 45 snapshots:
each detector fires on its own task's expert trajectory and stays silent over every other task's.

Opening an app is part of many tasks, so ``open_<app>`` detectors of the apps a trajectory opens are not counted
against it. The one other overlap is inherent to the paper's regexes (see INHERENT_OVERLAPS).
"""

from __future__ import annotations

import pytest

from tests.conftest import detector_hits
from vlui.android.snapshot import snapshot_ids

# (trajectory's task, detector that fires on it too): calling 911 presses the dial pad's call button, and Telecom
# logs "EventRecord added as Call" for every call placed, emergency or not.
INHERENT_OVERLAPS = {("call_911", "dial_call_button")}


@pytest.fixture(scope="module")
def fired(expert_runs) -> dict[tuple[str, str], set[str]]:
    """(task, snapshot) -> the tasks whose detector matched the expert's whole trajectory."""
    return detector_hits(expert_runs, snapshot_ids("all"))


@pytest.mark.slow
def test_every_detector_fires_on_its_own_task_and_on_no_other(fired) -> None:
    wrong = []
    for (task, snap), hits in fired.items():
        expected = {task} | {other for traj, other in INHERENT_OVERLAPS if traj == task}
        if hits != expected:
            wrong.append(f"{task} on {snap}: {sorted(hits - expected)} fired, {sorted(expected - hits)} did not")
    assert not wrong, "\n".join(wrong[:20])
    assert len(fired) == 60 * 45
