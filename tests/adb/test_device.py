"""The ADB backend against the simulated phone served over the ADB protocol, through a real adb server (a private
one on a free port, never the user's 5037) and adbutils: the same episodes as in process, step for step."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.env.test_commands import STATE as MESSAGES_STATE
from tests.env.test_commands import copy_and_paste, long_task
from vlui.adb.device import AdbDevice
from vlui.adb.errors import DeviceError
from vlui.agents import make_agent
from vlui.android.snapshot import snapshot_ids
from vlui.backends import make_device
from vlui.env.settings import EnvConfig
from vlui.env.actions import Command
from vlui.env.env import PhoneEnv, make_env
from vlui.errors import VluiError
from vlui.served.private_adb import PrivateAdb
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import task_set

SNAPSHOTS = ["000", "030", "105", "109"]  # stock Pixel 3; Arabic (right to left); Korean, dark; the tablet


@pytest.fixture(scope="module")
def adb():
    with PrivateAdb("000") as server:
        yield server


def adb_env(adb: PrivateAdb, **extra) -> EnvConfig:
    return EnvConfig(**{"backend": "adb", "serial": adb.serial, "adb_port": adb.adb_port, "observation_wait_s": None,
                        "console_token_file": str(adb.home / ".emulator_console_auth_token"), "snapshots": SNAPSHOTS,
                        "log_tags": "all", "command_timeout_s": 20.0, **extra})


def episode(env, task: str, snapshot: str) -> dict:
    agent = make_agent({"name": "expert"})
    obs, info = env.reset(seed=0, options={"task": task, "snapshot": snapshot})
    agent.reset(env.task, info, seed=0)
    steps, done, reward = [], False, 0.0
    while not done:
        action = agent.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        steps.append((info["parsed_action"]["kind"], info["success_line"]))
        done = terminated or truncated
    return {"success": reward == 1.0, "steps": steps, "log": env.device.log_lines(0), "xml": obs["xml"]}


@pytest.mark.slow
def test_representative_tasks_over_adb_match_the_in_process_phone_step_for_step(adb):
    over_adb = make_env(adb_env(adb), "representative", include_xml=True)
    in_process = make_env(EnvConfig(snapshots=SNAPSHOTS), "representative", include_xml=True)
    try:
        assert isinstance(over_adb.device, AdbDevice)
        assert over_adb.observation_wait_s == 0.0  # the simulated phone needs no time to settle, unlike a real one
        for snapshot in SNAPSHOTS:
            for task in task_set("representative"):
                a, b = episode(over_adb, task, snapshot), episode(in_process, task, snapshot)
                assert a["success"] and b["success"], (task, snapshot)
                assert a["steps"] == b["steps"], (task, snapshot)
                assert a["log"] == b["log"], (task, snapshot)  # every line, timestamps included
                assert a["xml"] == b["xml"], (task, snapshot)
    finally:
        over_adb.close()
        in_process.close()


def test_screen_size_density_locale_and_pixels_come_from_the_device(adb):
    dev = make_device(adb_env(adb), "000")
    try:
        for snapshot in ("105", "109"):
            dev.load_snapshot(snapshot)
            sim = SimDevice(snapshot)
            assert dev.size == sim.size and dev.density == sim.density and dev.locale_id() == sim.locale_id()
            np.testing.assert_array_equal(dev.screenshot(), sim.screenshot())
            assert dev.observation(256, 128).shape == (256, 128, 3)
        assert dev.screencap_mode in ("raw", "png")
    finally:
        dev.close()


@pytest.mark.slow  # 8-10 s: every snapshot served and read over adb
def test_the_observation_over_adb_is_the_in_process_phones_on_every_snapshot(adb):
    """One definition of what a policy sees: over ADB (a screenshot, resized) and in process (the simulated phone's
    own frame, observed alike) within 1 level on average and 0.5% of pixels off by more than 8 levels, on the first
    two screens of every snapshot (the home screen and the app drawer), at the default size and a small one."""
    dev = make_device(adb_env(adb), "000")
    try:
        for snapshot in snapshot_ids("all"):
            dev.load_snapshot(snapshot)
            sim = SimDevice(snapshot)
            w, h = sim.size
            for _ in range(2):
                for height, width in ((256, 128), (64, 32)):
                    diff = np.abs(dev.observation(height, width).astype(int) - sim.observation(height, width))
                    assert diff.mean() <= 1.0, (snapshot, height)
                    assert (diff.max(axis=2) > 8).mean() <= 0.005, (snapshot, height)
                for d in (dev, sim):  # open the app drawer
                    d.swipe(w / 2, h * 0.8, w / 2, h * 0.2)
    finally:
        dev.close()


@pytest.mark.parametrize(("landscape", "rtl", "view"), [("rotated", "kept", "rotated"),
                                                         ("stacked", "mirrored", "mirrored+stacked")])
def test_a_view_over_adb_shows_and_acts_as_in_process(adb, landscape, rtl, view):
    # a policy trained with env.landscape=rotated or stacked, or env.rtl=mirrored, brings it to evaluations over ADB:
    # on the landscape tablet in Arabic its observations there are the in-process phone's, and the same actions do
    # the same things
    over_adb = make_env(adb_env(adb, landscape=landscape, rtl=rtl, snapshots=["109"]), "representative",
                        include_xml=True)
    in_process = make_env(EnvConfig(snapshots=["109"], landscape=landscape, rtl=rtl), "representative",
                          include_xml=True)
    try:
        for task in ("airplane_on", "call_911"):
            screens = []
            for env in (over_adb, in_process):
                obs, info = env.reset(seed=0, options={"task": task, "snapshot": "109"})
                assert info["view"] == view
                screens.append(obs["screen"])
            diff = np.abs(screens[0].astype(int) - screens[1])
            assert diff.mean() <= 1.0 and (diff.max(axis=2) > 8).mean() <= 0.005, task
            a, b = episode(over_adb, task, "109"), episode(in_process, task, "109")
            assert a["success"] and b["success"] and a["steps"] == b["steps"], task
    finally:
        over_adb.close()
        in_process.close()


def test_typed_text_arrives_literally(adb):
    dev = make_device(adb_env(adb), "000")
    try:
        dev.load_snapshot("000")
        with adb.phone.lock:
            adb.phone.device.launch("chrome")
            adb.phone.device.focus_field("chrome", "url")
        text = "it's 100%s; $(reboot) `id` \"ok\" & done > /sdcard/x"
        dev.text(text)
        with adb.phone.lock:
            assert adb.phone.device.state.fields["chrome.url"] == text
            assert "/sdcard/x" not in adb.phone.files
    finally:
        dev.close()


def test_a_hung_command_times_out_with_the_serial_in_the_message(adb):
    dev = AdbDevice(adb.serial, adb_port=adb.adb_port, command_timeout_s=1.0, log_tags=None,
                    console_token_file=str(adb.home / ".emulator_console_auth_token"))
    try:
        start = time.monotonic()
        with pytest.raises(DeviceError, match=f"device {adb.serial}: .*did not finish within 1 s"):
            dev.shell("sleep 30")
        assert time.monotonic() - start < 10
        assert dev.shell("echo still here").strip() == "still here"  # the device itself is fine
    finally:
        dev.close()


def test_a_device_that_goes_away_is_a_clear_error_and_one_that_returns_is_reconnected(tmp_path):
    with PrivateAdb("000", register="connect") as server:
        dev = AdbDevice(server.serial, adb_port=server.adb_port, connect_timeout_s=3.0, command_timeout_s=5.0,
                        console_port=server.console_port, log_tags=None,
                        console_token_file=str(server.home / ".emulator_console_auth_token"))
        try:
            dev.key("HOME")
            assert dev.log_lines(0)
            server.daemon.close()  # the phone vanishes: adb reports it offline, then forgets it
            start = time.monotonic()
            with pytest.raises(DeviceError, match=f"{server.serial}"):
                dev.key("HOME")
                dev.log_lines(0)
            assert time.monotonic() - start < 30
        finally:
            dev.close()


def test_unknown_device_and_missing_serial_are_one_line_errors(adb):
    with pytest.raises(DeviceError, match="emulator-9998 is not connected.*lists: emulator-"):
        AdbDevice("emulator-9998", adb_port=adb.adb_port, connect_timeout_s=0.5)
    with pytest.raises(VluiError, match="env=adb needs the device"):
        make_device(EnvConfig(backend="adb", serial=None), "000")


def run_cli(script: str, *args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, script, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_collect_and_evaluate_run_over_adb_as_on_the_simulated_phone(adb, tmp_path):
    common = ["env=adb", f"env.serial={adb.serial}", f"env.adb_port={adb.adb_port}",
              f"env.console_token_file={adb.home / '.emulator_console_auth_token'}", "env.snapshots=[000,109]",
              "tasks=[airplane_on,open_clock]"]
    out = run_cli(str(ROOT / "evaluate.py"), *common, "agent=expert", "name=adb", f"hydra.run.dir={tmp_path}/ev",
                  f"paths.output_dir={tmp_path}/ev", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(next((tmp_path / "ev").rglob("results.json")).read_text())
    assert results["overall"]["success_rate"] == 1.0
    out = run_cli(str(ROOT / "collect.py"), *common, "agent=expert", f"paths.data_dir={tmp_path}/data",
                  "dataset=adb", f"hydra.run.dir={tmp_path}/col", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "data" / "adb").exists()


def test_a_broken_log_stream_is_reopened_without_losing_or_repeating_lines(adb):
    import socket

    dev = make_device(adb_env(adb), "000")
    try:
        dev.load_snapshot("000")
        dev.clear_log()
        dev.key("APP_SWITCH")
        before = dev.log_lines(0)
        dev.reader._stream.shutdown(socket.SHUT_RDWR)  # the stream dies under the reader
        dev.key("HOME")
        after = dev.log_lines(0)
        with adb.phone.lock:
            truth = [ln for ln in adb.phone.device.log_lines(0) if " VluiSync: " not in ln]
        assert after[:len(before)] == before
        assert after == truth  # everything the phone logged, once
        assert any("category.HOME" in ln for ln in after[len(before):])
    finally:
        dev.close()


def test_evaluation_records_a_vanished_device_as_an_infrastructure_failure_and_stops_resumably():
    from vlui.rollout import Job, rollout

    with PrivateAdb("000", register="connect") as server:
        cfg = EnvConfig(backend="adb", serial=server.serial, adb_port=server.adb_port, snapshots=["000"],
                        console_port=server.console_port, observation_wait_s=None, connect_timeout_s=2.0,
                        command_timeout_s=5.0, console_token_file=str(server.home / ".emulator_console_auth_token"))
        records = []

        def on_done(record):
            records.append(record)
            if len(records) == 1:
                server.daemon.close()  # the phone goes away after the first episode

        jobs = [Job("open_clock", "000", i, episode=i) for i in range(3)]
        with pytest.raises(VluiError, match="could not be rebuilt.*run the same command to resume"):
            rollout(jobs, lambda: make_env(cfg, ["open_clock"], include_xml=True),
                    lambda: make_agent({"name": "expert"}), slots=1, on_done=on_done)
        assert records[0].success and not records[0].infra_failure
        assert len(records) == 2 and not records[1].success
        assert server.serial in records[1].infra_failure  # the episode in flight is not counted against the agent


def test_a_long_press_and_typed_text_over_adb_do_what_they_do_in_process(adb):
    env = PhoneEnv(make_device(adb_env(adb), "000"), [long_task()], ["000"], include_xml=True, backend="adb")
    try:
        env.reset(seed=0)

        def launch_messages() -> None:  # Messages' conversations are state a real phone's shell cannot set
            with adb.phone.lock:
                adb.phone.device.set_state(MESSAGES_STATE)
                adb.phone.device.launch("messages")

        # input swipe x y x y 1000, then input text
        assert copy_and_paste(env, launch_messages) == "Note: Your parcel is on its way"
        with adb.phone.lock:
            assert adb.phone.device.state.clipboard == "Your parcel is on its way"
    finally:
        env.close()


def test_m3a_open_app_and_keyboard_enter_over_adb_do_what_they_do_in_process(adb):
    env = PhoneEnv(make_device(adb_env(adb), "000"), [long_task()], ["000"], include_xml=True, backend="adb")
    try:
        env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(Command("open_app", None, "settings"))  # monkey -p ...
        assert 'package="com.android.settings"' in obs["xml"] and not terminated
        env.step(Command("wait"))
        env.step(Command("open_app", None, "snapseed"))  # not on this phone: monkey finds nothing, nothing changes
        with adb.phone.lock:
            assert adb.phone.device.state.top == "settings"
            adb.phone.device.state.dialer = "aosp"  # a release phone's Phone app: AOSP's dialer, not Google's
        env.step(Command("open_app", None, "phone"))
        with adb.phone.lock:
            assert adb.phone.device.state.top == "phone"
            adb.phone.device.key("HOME")
            adb.phone.device.state.drawer, adb.phone.device.state.focus = True, ("launcher", "search")
            adb.phone.device.state.fields["launcher.search"] = "Clo"
            adb.phone.device.state_changed()
        obs, reward, terminated, truncated, info = env.step(Command("keyboard_enter"))  # input keyevent 66
        assert (reward, terminated) == (1.0, True)  # the drawer's search started Clock: open_clock's goal
        with adb.phone.lock:
            assert adb.phone.device.state.top == "clock"
    finally:
        env.close()
