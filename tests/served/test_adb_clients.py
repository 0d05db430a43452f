"""What ADB clients nobody here wrote expect of a phone, checked against the served simulated phone with the real adb
CLI (through a private adb server) and adbutils: top-level ``adb logcat``, the shell_v2 protocol (exit statuses,
stderr of its own), and the stream flow control that keeps a host from queueing unbounded input."""

from __future__ import annotations

import re
import time

import pytest

from tests.served.test_adbd import RawHost
from vlui.served import configure
from vlui.served.adbd import A_CNXN, A_OKAY, A_OPEN, A_WRTE, MAX_PAYLOAD, QUEUE_LIMIT, AdbDaemon
from vlui.served.phone import ServedPhone
from vlui.served.private_adb import PrivateAdb


@pytest.fixture(scope="module")
def pa():
    with PrivateAdb("000", noise=False) as pa:
        yield pa


def adb(pa: PrivateAdb, *args: str, **kwargs):
    return pa.adb("-s", pa.serial, *args, **kwargs)


# ---------------------------------------------------------------------------------------------- shell_v2
def test_adb_shell_reports_exit_statuses_and_keeps_stderr_apart(pa):
    assert "shell_v2" in adb(pa, "features").stdout
    assert adb(pa, "shell", "false").returncode == 1
    assert adb(pa, "shell", "true").returncode == 0
    missing = adb(pa, "shell", "no-such-command")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        127, "", "/system/bin/sh: no-such-command: not found\n")
    both = adb(pa, "shell", "echo out; cat /sdcard/missing; exit 3")
    assert (both.returncode, both.stdout, both.stderr) == (3, "out\n", "cat: /sdcard/missing: No such file or "
                                                                        "directory\n")


def test_adbutils_shell2_over_v2(pa):
    device = pa.device()
    result = device.shell2("echo hello; ls /nowhere", v2=True)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "hello\n", "ls: /nowhere: No such file or directory\n")
    assert device.shell2("exit 42", v2=True).returncode == 42
    assert device.shell("echo legacy") == "legacy"  # the legacy shell: service still works


def test_adb_shell_reading_a_script_from_stdin(pa):
    """No terminal: the shell runs the lines it reads, with no prompt and no echo, as ``sh`` reading a pipe."""
    out = adb(pa, "shell", input="cd /sdcard\npwd\necho $?\nexit 5\necho never\n")
    assert (out.returncode, out.stdout) == (5, "/sdcard\n0\n")


# ---------------------------------------------------------------------------------------------- adb logcat
def test_top_level_adb_logcat(pa):
    adb(pa, "logcat", "-c")
    assert adb(pa, "shell", "input keyevent 3; am start -n com.android.settings/.Settings").returncode == 0
    dump = adb(pa, "logcat", "-d")
    assert dump.returncode == 0
    assert re.search(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ I ActivityTaskManager: START u0 .*"
                     r"cmp=com\.android\.settings/\.Settings", dump.stdout, re.M)
    last = adb(pa, "logcat", "-d", "-t", "1").stdout.splitlines()
    assert len([line for line in last if not line.startswith("-----")]) == 1
    brief = adb(pa, "logcat", "-d", "-s", "ActivityTaskManager:I", "-v", "brief").stdout.splitlines()
    lines = [line for line in brief if not line.startswith("-----")]
    assert lines and all(line.startswith("I/ActivityTaskManager(") for line in lines)
    epoch = [line for line in adb(pa, "logcat", "-d", "-v", "epoch", "-t", "2").stdout.splitlines()
             if not line.startswith("-----")]
    assert all(re.match(r"^\d{10}\.\d{3} +\d+ +\d+ [VDIWEF] ", line) for line in epoch), epoch
    timed = [line for line in adb(pa, "logcat", "-d", "-v", "time", "-t", "2").stdout.splitlines()
             if not line.startswith("-----")]
    assert all(re.match(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [VDIWEF]/", line) for line in timed), timed
    assert adb(pa, "logcat", "-c").returncode == 0
    assert [line for line in adb(pa, "logcat", "-d").stdout.splitlines() if not line.startswith("-----")] == []


def test_adb_logcat_takes_the_hosts_log_tags(pa):
    adb(pa, "logcat", "-c")
    adb(pa, "shell", "log -t Mine hello; log -t Other noise")
    out = adb(pa, "logcat", "-d", "-v", "tag", env_extra={"ANDROID_LOG_TAGS": "*:S Mine:I"})
    lines = [line for line in out.stdout.splitlines() if not line.startswith("-----")]
    version = int(re.search(r"Version (\d+)", pa.adb("version").stdout).group(1))
    if version >= 30:  # adb quotes the tags once: ANDROID_LOG_TAGS='*:S Mine:I'
        assert lines == ["I/Mine    : hello"]
    else:  # adb 29 quotes them twice ("'*:S Mine:I'"): the device reads tags "'*" and "Mine", so *:S is lost, as
        # a real phone driven by that adb loses it
        assert lines == ["I/Mine    : hello", "I/Other   : noise"]
    bad = adb(pa, "logcat", "-d", "-v", "nonsense")
    assert bad.returncode != 0 and 'Invalid parameter "nonsense" to -v' in bad.stderr


# ---------------------------------------------------------------------------------------------- flow control
def test_a_host_cannot_queue_unbounded_input_on_a_stream_that_does_not_read():
    phone = ServedPhone("000", noise=False)
    with AdbDaemon(phone) as daemon:
        host = RawHost(daemon.port)
        try:
            assert host.recv()[0] == A_CNXN
            host.send(A_OPEN, 1, 0, b"shell:sleep 1\0")
            command, stream, _, _ = host.recv()
            assert command == A_OKAY
            chunk = bytes(MAX_PAYLOAD)
            okays = 0
            host.sock.settimeout(0.3)
            for _ in range(4):  # a host sends its next WRTE only after the OKAY of the last
                host.send(A_WRTE, 1, stream, chunk)
                try:
                    okays += host.recv()[0] == A_OKAY
                except TimeoutError:
                    break
            held = max(len(s.inbox) for c in daemon._connections for s in c.streams.values())
            assert okays < 4 and held <= QUEUE_LIMIT + MAX_PAYLOAD
        finally:
            host.close()
        time.sleep(0.1)


# ---------------------------------------------------------------------------------------------- what tools read
def test_adbutils_device_helpers(pa):
    device = pa.device()
    assert tuple(device.window_size()) == (1080, 2160)
    assert device.rotation() == 0
    assert device.is_screen_on() is True
    adb(pa, "shell", "input keyevent 3; am start -n com.android.settings/.Settings")
    current = device.app_current()
    assert (current.package, current.activity) == ("com.android.settings", "com.android.settings.Settings")
    assert device.prop.get("ro.build.version.sdk") == "29"


def test_build_properties_of_an_emulator_image(pa):
    props = dict(re.findall(r"^\[([^\]]+)\]: \[([^\]]*)\]$", adb(pa, "shell", "getprop").stdout, re.M))
    fingerprint = props["ro.build.fingerprint"]
    assert re.fullmatch(r"google/sdk_gphone_x86/generic_x86:10/[A-Z0-9.]+/\d+:userdebug/dev-keys", fingerprint)
    assert props["ro.build.id"] in fingerprint and props["ro.build.version.incremental"] in fingerprint
    assert props["ro.build.version.release"] == "10" and props["ro.product.cpu.abi"] == "x86"
    assert props["ro.hardware"] == "ranchu" and props["ro.build.type"] == "userdebug"


def test_dumpsys_services_tools_read(pa):
    physical, override = configure.density(pa.phone)  # snapshot 000 runs at another density than the Pixel 3's
    assert adb(pa, "shell", "wm density").stdout == f"Physical density: {physical}\nOverride density: {override}\n"
    display = adb(pa, "shell", "dumpsys display").stdout
    assert "orientation=0" in display and "real 1080 x 2160" in display and f"density {override} " in display
    power = adb(pa, "shell", "dumpsys power").stdout
    assert "mWakefulness=Awake" in power and "Display Power: state=ON" in power
    battery = adb(pa, "shell", "dumpsys battery").stdout
    assert "  level: 100\n" in battery and "  AC powered: false\n" in battery and "  status: 3\n" in battery
    # BatteryService's shell commands set what the battery reports, and the status bar shows it
    assert adb(pa, "shell", "dumpsys battery set level 42").returncode == 0
    assert adb(pa, "shell", "dumpsys battery set ac 1").returncode == 0
    battery = adb(pa, "shell", "dumpsys battery").stdout
    assert "  level: 42\n" in battery and "  AC powered: true\n" in battery and "  status: 2\n" in battery
    assert "mBatteryLevel=42" in adb(pa, "shell", "dumpsys power").stdout
    assert pa.phone.device.state.battery_level == 42 and pa.phone.device.state.charging
    assert adb(pa, "shell", "dumpsys battery set colour 1").returncode == 255
    assert "mInputShown=false" in adb(pa, "shell", "dumpsys input_method").stdout
    package = adb(pa, "shell", "dumpsys package com.android.settings").stdout
    assert "versionName=10\n" in package and "versionCode=29 minSdk=29 targetSdk=29" in package
    assert "userId=1000" in package  # Settings runs as the system user, as its log lines say
    assert adb(pa, "shell", "dumpsys package com.example.none").stdout == ""
    unknown = adb(pa, "shell", "dumpsys nosuchservice")
    assert unknown.returncode == 0 and unknown.stderr == "Can't find service: nosuchservice\n"


def test_power_key_puts_the_display_to_sleep_for_the_tools_that_ask(pa):
    device = pa.device()
    try:
        adb(pa, "shell", "input keyevent POWER")
        assert device.is_screen_on() is False
        power = adb(pa, "shell", "dumpsys power").stdout
        assert "mWakefulness=Asleep" in power and "Display Power: state=OFF" in power
        assert "mGlobalDisplayState=OFF" in adb(pa, "shell", "dumpsys display").stdout
    finally:
        adb(pa, "shell", "input keyevent 26")
    assert device.is_screen_on() is True


def test_media_volume_from_the_shell_is_heard_by_systemui(pa):
    """SystemUI's volume controller records every change of a stream's level, whoever made it."""
    adb(pa, "logcat", "-c")
    adb(pa, "shell", "media volume --stream 3 --set 4")
    lines = adb(pa, "logcat", "-d", "-s", "vol.Events", "-v", "tag").stdout.splitlines()
    assert "I/vol.Events: writeEvent level_changed STREAM_MUSIC 4" in lines
