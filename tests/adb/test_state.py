"""Task starting states and state checks over ADB (``vlui/adb/state.py``), against the simulated phone served over
the ADB protocol through a real adb server: the shell commands reach the same state that the in-process phone sets
directly, the checks read what the in-process phone reads (B-MoCA's evaluator checks too), and the tasks that need
them succeed over ADB."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vlui.adb.device import AdbDevice
from vlui.adb.errors import DeviceError
from vlui.adb.state import READERS, SETTERS
from vlui.android.launcher import explicit_layout, fit_layout, launchable
from vlui.android.snapshot import ENVS_DIR, load_snapshot
from vlui.android.state import state_paths
from vlui.backends import make_device
from vlui.env.settings import EnvConfig
from vlui.env.env import make_env, open_env
from vlui.env.ui_text import parse_xml
from vlui.errors import VluiError
from vlui.served.private_adb import PrivateAdb
from vlui.sim.apps.dialer import DialerState, dialer_state
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import RELEASE_DIALER, installs, release_homes, release_tasks, resolve_tasks, tasks
from vlui.tasks.checks import check_holds
from tests.tasks.test_bmoca25 import drive

from .test_device import adb_env, episode

TEMPLATE_INSTANCES = ["toggle_setting@on-airplane", "toggle_setting@off-airplane", "toggle_setting@on-wifi",
                      "toggle_setting@off-wifi", "toggle_setting@on-bluetooth", "toggle_setting@off-bluetooth",
                      "set_volume@ring-4", "set_brightness@40"]
SNAPSHOTS = ["000", "109"]  # a phone and the tablet


@pytest.fixture(scope="module")
def adb():
    with PrivateAdb("000") as server:
        yield server


@pytest.fixture
def dev(adb):
    device = make_device(adb_env(adb), "000")
    assert isinstance(device, AdbDevice)
    yield device
    device.close()


def settable_tasks() -> list:
    """Every catalog task and template instance with a starting state that ADB can set."""
    chosen = [t for t in tasks().values() if t.state] + resolve_tasks(TEMPLATE_INSTANCES)
    return [t for t in chosen if set(state_paths(t.state)) <= set(SETTERS)]


def test_every_starting_state_adb_can_set_matches_the_in_process_phone(adb, dev) -> None:
    chosen = settable_tasks()
    assert {"airplane_off", "wifi_on", "end_call", "toggle_setting@off-bluetooth"} <= {t.id for t in chosen}
    for task in chosen:
        for snapshot in SNAPSHOTS:
            dev.load_snapshot(snapshot)
            dev.set_state(task.state)
            local = SimDevice(snapshot)
            local.set_state(task.state)
            with adb.phone.lock:
                served = adb.phone.device.state.copy()
            for field in task.state:
                if field == "phone":  # a call placed over ADB starts now; the number and the screen are the same
                    served_call, local_call = served.app("phone", DialerState).call, dialer_state(local).call
                    assert served_call.number == local_call.number, task.id
                    assert served.top == local.state.top == "phone", task.id
                    assert served.tasks["phone"][-1] == local.state.tasks["phone"][-1] == {"screen": "incall"}
                else:
                    assert getattr(served, field) == getattr(local.state, field), (task.id, snapshot, field)


def test_the_texts_sent_read_over_adb_as_on_the_in_process_phone(adb, dev) -> None:
    conversations = {"conversations": [
        {"name": "Mei Lin", "number": "+1 646-555-0175", "messages": [
            {"text": "Where is it?", "direction": "in", "time": "2026-11-22 18:30"},
            {"text": "town hall, at 7, see you", "direction": "out", "time": "2026-11-22 18:32"}]},
        {"number": "8085550142", "messages": [{"text": "ok", "direction": "out", "time": "2026-11-22 17:00"}]}]}
    dev.load_snapshot("000")
    with adb.phone.lock:
        adb.phone.device.set_state({"messages": conversations})
    local = SimDevice("000")
    local.set_state({"messages": conversations})
    specs = [{"sms_sent": {"contains": {"address": {"number": "6465550175"}, "body": {"includes": "Town Hall"}}}},
             {"sms_sent": {"contains": {"address": {"number": "6465550175"}, "body": {"includes": "where"}}}},
             {"sms_sent": {"contains": {"address": {"number": "5550142"}, "body": "ok"}}},
             {"sms_sent": {"contains": {"address": {"number": "6465550199"}}}}]
    answers = [dev.check_state(spec) for spec in specs]
    assert answers == [local.check_state(spec) for spec in specs] == [True, False, True, False]


def test_state_checks_over_adb_read_what_the_in_process_phone_reads(adb, dev) -> None:
    states = [{"volume": {"media": 7, "call": 2, "ring": 0, "alarm": 6}, "brightness": 23, "airplane_mode": True},
              {"volume": {"media": 25, "call": 7, "ring": 4, "alarm": 1}, "brightness": 153, "wifi": False,
               "bluetooth": True, "dark_theme": True, "vibrate_for_calls": True, "adaptive_brightness": True}]
    specs = [{"volume.media": 7}, {"volume.call": 2}, {"volume.ring": 4}, {"volume.alarm": 1}, {"airplane_mode": True},
             {"wifi": True}, {"bluetooth": True}, {"dark_theme": False}, {"vibrate_for_calls": True},
             {"adaptive_brightness": True}, {"brightness": 153},
             {"brightness_percent": {"value": 40, "tolerance": 2}}, {"brightness_percent": {"value": 87, "tolerance": 2}},
             {"brightness_percent": {"value": 90, "tolerance": 0}}, {"volume.media": 25, "wifi": False}]
    for fields in states:
        dev.load_snapshot("000")
        dev.set_state(fields)
        local = SimDevice("000")
        local.set_state(fields)
        answers = [dev.check_state(spec) for spec in specs]
        assert answers == [local.check_state(spec) for spec in specs], fields
        assert True in answers and False in answers
    assert set(READERS) >= {"volume.media", "brightness_percent", "airplane_mode", "wifi", "bluetooth"}


def test_tasks_with_starting_states_and_state_checks_succeed_over_adb_as_in_process(adb) -> None:
    ids = ["end_call", "airplane_off", "wifi_on", "wifi_off", "toggle_setting@on-bluetooth",
           "toggle_setting@off-airplane", "set_volume@alarm-6", "set_brightness@15", "set_brightness@85"]
    over_adb = make_env(adb_env(adb, snapshots=SNAPSHOTS), ids, include_xml=True)
    in_process = make_env(EnvConfig(snapshots=SNAPSHOTS), ids, include_xml=True)
    try:
        for task in ids:
            for snapshot in SNAPSHOTS:
                a, b = episode(over_adb, task, snapshot), episode(in_process, task, snapshot)
                assert a["success"] and b["success"], (task, snapshot)
                assert [kind for kind, _ in a["steps"]] == [kind for kind, _ in b["steps"]], (task, snapshot)
    finally:
        over_adb.close()
        in_process.close()


def test_state_no_shell_command_reaches_is_refused_by_name(dev) -> None:
    with pytest.raises(VluiError, match=r"stopwatch_pause \(clock.stopwatch, clock.tab\)"):
        resolve_tasks(["open_clock", "stopwatch_pause"], backend="adb")
    with pytest.raises(DeviceError, match="cannot set clock.alarms .*It can set: airplane_mode, wifi"):
        dev.set_state({"clock": {"alarms": []}, "wifi": True})
    with pytest.raises(DeviceError, match="wifi must be true or false, not 'yes'"):
        dev.set_state({"wifi": "yes"})
    with pytest.raises(DeviceError, match="setting the media volume to 40 failed"):
        dev.set_state({"volume": {"media": 40}})
    with pytest.raises(DeviceError, match="cannot read clock.stopwatch.running"):
        dev.check_state({"clock.stopwatch.running": True})


@pytest.mark.slow
def test_every_task_whose_state_a_shell_reaches_succeeds_over_adb(adb) -> None:
    reachable = [t.id for t in tasks().values() if set(state_paths(t.state)) <= set(SETTERS)]
    env = make_env(adb_env(adb, snapshots=SNAPSHOTS), reachable, include_xml=True)
    try:
        failed = [(task, snapshot) for task in reachable for snapshot in SNAPSHOTS
                  if not episode(env, task, snapshot)["success"]]
    finally:
        env.close()
    assert len(reachable) == 56 and not failed


# B-MoCA's check of "call 223-4458" as the release writes it (the AOSP dialer's in-call screen), and the same on the
# Pixel dialer of vlui's other phones
AOSP_CALL = release_tasks()["b25_call_2234458"].evaluator_check
PIXEL_CALL = [{"ui": "com.google.android.dialer:id/incall_end_call"},
              {"ui": "com.google.android.dialer:id/contactgrid_contact_name", "text": {"spaceless": "2234458"}}]
CALL = {"phone": {"call": {"number": "2234458", "started_ms": 1795420740000}}}


def test_evaluator_checks_read_over_adb_what_the_in_process_phone_reads(dev) -> None:
    checks = [AOSP_CALL, PIXEL_CALL, [{"any": [{"ui": "com.google.android.dialer:id/digits"}, *PIXEL_CALL[:1]]}],
              [{"ui_text": "2234458"}], [{"volume": "alarm", "above": 1}], [{"volume": "ring", "above": 4}]]
    for fields in ({}, CALL, {"volume": {"alarm": 1, "ring": 5}}):
        dev.load_snapshot("000")
        dev.set_state(fields)
        local = SimDevice("000")
        local.set_state(fields)
        answers = [check_holds(c, dev, lambda: parse_xml(dev.ui_xml())) for c in checks]
        assert answers == [check_holds(c, local, lambda: parse_xml(local.ui_xml())) for c in checks], fields
        assert answers[0] is False  # the release's ids are the AOSP dialer's, never on a Pixel dialer's screen
        assert answers[1] is (fields == CALL) and answers[3] is (fields == CALL), fields
        assert answers[4] is ("volume" not in fields), fields


def release_snapshots(tmp_path: Path, snapshots: list[str] = SNAPSHOTS) -> Path:
    """A folder of ``snapshots`` as the release's phones have them: the release's apps vlui has installed, AOSP's
    Dialer as their Phone app and each snapshot's home screen from the release's launcher database (the ADB backend
    checks that a phone of a release run has the apps and leaves its home screen as built; the in-process phone
    installs them and lays the home screen out at the reset)."""
    envs = tmp_path / "envs"
    envs.mkdir()
    pins = installs(release_tasks().values())
    installed = [pin.key for pin in pins if pin != RELEASE_DIALER]
    for snapshot in snapshots:
        data = yaml.safe_load((ENVS_DIR / f"{snapshot}.yaml").read_text())
        data["state"] = {"installed": installed, "dialer": "aosp" if RELEASE_DIALER in pins else "google"}
        home = fit_layout(release_homes()[snapshot], *load_snapshot(snapshot).home_grid, launchable(installed))
        data["home_layout"] = explicit_layout(home)
        (envs / f"{snapshot}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True))
    return envs


def test_a_task_judged_on_the_ui_tree_ends_over_adb_at_the_step_it_ends_in_process(tmp_path) -> None:
    """"call 223-4458" on the release's phones, served over ADB and in process: the AOSP Dialer's in-call screen,
    "223-4458", ends it at the same step on both."""
    task = release_tasks()["b25_call_2234458"]
    with PrivateAdb("000", envs_dir=release_snapshots(tmp_path)) as adb:
        over_adb = open_env(adb_env(adb), [task], SNAPSHOTS, include_xml=True)
        in_process = open_env(EnvConfig(snapshots=SNAPSHOTS), [task], SNAPSHOTS, include_xml=True)
        try:
            for snapshot in SNAPSHOTS:
                runs = [drive(env, task.id, snapshot, ["call_number@2234458"]) for env in (over_adb, in_process)]
                assert runs[0] == runs[1] and runs[0][0] is False and runs[0][1][0] is not None, snapshot
        finally:
            over_adb.close()
            in_process.close()


def test_a_check_of_an_apps_file_on_a_phone_without_root_is_one_line_naming_the_task_and_why() -> None:
    """A phone without su whose adbd is not root (a Google Play image) cannot copy an app's file: the task's check
    is refused in one line that names it, the file and that it needs root."""
    def shell(command: str, timeout_s: float | None = None) -> str:
        if command.startswith("su "):
            return "/system/bin/sh: su: inaccessible or not found\n__vlui_exit__127"
        return "2000\n" if command == "id -u" else ""

    phone = object.__new__(AdbDevice)  # the shell alone: no adb server needed
    phone.serial, phone.shell = "emulator-5554", shell
    for task_id, what in (("b25_alarm_9am_delete_and_1030", "Clock's alarms (/data/user_de/0/"),
                          ("b25_snapseed_dark_theme", "the snapseed app's shared preferences (/data/data/")):
        task = release_tasks()[task_id]
        with pytest.raises(VluiError) as e:
            check_holds(task.evaluator_check, phone, lambda: [], task.id)
        assert str(e.value).startswith(f"task {task_id}: device emulator-5554: reading {what}")
        assert "needs root" in str(e.value) and "\n" not in str(e.value)
