"""The Settings and Phone tasks' detectors, both ways, over the expert's trajectories: each fires on its own task's
trajectory and stays silent on every other supported task's, and the other tasks' detectors stay silent on its.

Snapshots: 000 (Pixel 3, en-US), 030 (Arabic, right to left), 105 (Korean, dark theme), 109 (WXGA tablet) and 003.
"""

from __future__ import annotations

import pytest

from tests.conftest import detector_hits
from vlui.agents.walkthrough import walkthrough
from vlui.sim import services
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import Detector, release_tasks, task_set, tasks

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


def _settings_lines(dev, mark) -> list[str]:
    return [line.split(" SettingsProvider: ", 1)[1] for line in dev.log_lines(mark, tags=["SettingsProvider"])
            if " V SettingsProvider: " in line]


def test_dark_theme_detectors_fire_on_the_first_turn_on_only_as_on_android_10() -> None:
    """Settings' first turn-on of the dark theme writes dark_mode_dialog_seen (its dialog acknowledged), then
    ui_night_mode; later toggles write ui_night_mode alone. Both detectors, the paper's and the release's, match the
    first line only: on a phone whose dark theme is on, the task takes a toggle off and one on."""
    detectors = [Detector(tasks()["dark_theme_toggle"]), Detector(release_tasks()["b25_dark_theme_toggle"])]
    dev = SimDevice("000")
    toggle = ["secure/dark_mode_dialog_seen", "secure/ui_night_mode"], ["secure/ui_night_mode"], ["secure/ui_night_mode"]
    for written in toggle:  # on (the dialog's first acknowledgement), off, on again
        mark = dev.log_mark()
        if not dev.state.dark_theme and not dev.state.dark_mode_dialog_seen:
            services.acknowledge_dark_theme(dev)
        else:
            services.set_dark_theme(dev, not dev.state.dark_theme)
        assert _settings_lines(dev, mark) == [f"Notifying for 0: content://settings/{w}" for w in written]
        fired = [d.match(dev.log_lines(mark)) is not None for d in detectors]
        assert fired == [written != ["secure/ui_night_mode"]] * 2, written
    assert dev.state.dark_theme and dev.state.dark_mode_dialog_seen
    mark = dev.log_mark()
    services.set_dark_theme(dev, True)  # no change: nothing written, nothing notified
    services.set_vibrate_for_calls(dev, True)
    assert _settings_lines(dev, mark) == ["Notifying for 0: content://settings/system/vibrate_when_ringing"]


def test_on_a_dark_phone_the_expert_toggles_the_dark_theme_off_and_on() -> None:
    dev = SimDevice("105")  # Korean, dark theme on (B-MoCA sets it with `cmd uimode night yes`: no dialog seen)
    assert dev.state.dark_theme and not dev.state.dark_mode_dialog_seen
    for task in ("dark_theme_toggle", "b25_dark_theme_toggle"):
        walk = walkthrough(dev, task, "105")
        lines = [line.split(": ", 1)[1] for line in walk.lines if " V SettingsProvider: " in line]
        assert walk.success and lines == [f"Notifying for 0: content://settings/secure/{name}"
                                          for name in ("ui_night_mode", "dark_mode_dialog_seen", "ui_night_mode")]
