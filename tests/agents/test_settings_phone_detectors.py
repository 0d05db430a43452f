"""The Settings and Phone tasks' detectors, both ways, over the expert's trajectories: each fires on its own task's
trajectory and stays silent on every other supported task's, and the other tasks' detectors stay silent on its.

Snapshots: 000 (Pixel 3, en-US), 030 (Arabic, right to left), 105 (Korean, dark theme), 109 (WXGA tablet) and 003.
"""

from __future__ import annotations

import pytest

from tests.conftest import detector_hits
from vlui.tasks.catalog import task_set

SNAPSHOTS = ("000", "030", "105", "109", "003")
SETTINGS_PHONE = ("airplane_off", "wifi_on", "wifi_off", "volume_media_up", "volume_call_up", "volume_ring_up",
                  "volume_alarm_up", "dark_theme_toggle", "vibrate_calls_toggle", "app_info_list",
                  "bluetooth_settings", "dial_call_button", "end_call")
# (trajectory's task, detector that fires on it too), inherent to the paper's regexes: calling 911 presses the dial
# pad's call button, and Telecom logs "EventRecord added as Call" for every call placed, emergency or not.
INHERENT_OVERLAPS = {("call_911", "dial_call_button")}


@pytest.fixture(scope="module")
def fired(expert_runs) -> dict[tuple[str, str], set[str]]:
    """(task, snapshot) -> the supported tasks whose detector matched the expert's whole trajectory."""
    return detector_hits(expert_runs, SNAPSHOTS)


def test_settings_and_phone_tasks_are_supported() -> None:
    assert set(SETTINGS_PHONE) <= set(task_set("supported"))


@pytest.mark.parametrize("task", SETTINGS_PHONE)
def test_detector_fires_exactly_on_its_own_task(fired, task: str) -> None:
    for (traj, snap), hits in fired.items():
        expected = traj == task or (traj, task) in INHERENT_OVERLAPS
        assert (task in hits) == expected, f"{task}'s detector on the {traj} trajectory ({snap}): {sorted(hits)}"


@pytest.mark.parametrize("task", SETTINGS_PHONE)
def test_only_its_own_detector_fires_on_its_trajectory(fired, task: str) -> None:
    for snap in SNAPSHOTS:
        assert fired[task, snap] == {task}, f"{task} on {snap}: {sorted(fired[task, snap])}"
