"""The simulated phone's shell, called directly (no network): what ADB clients send gets Android 10's answers, quoting
never runs anything, and an episode driven through the shell leaves the same phone as the same calls in process."""

from __future__ import annotations

import io
import shlex
import sqlite3
import struct
import threading
import time

import numpy as np
import pytest
from PIL import Image

from tests import fixture_app
from vlui.adb.state import require_installed
from vlui.android import launcher
from vlui.android.apps import app_uid
from vlui.android.logcat import parse_threadtime
from vlui.served import configure
from vlui.served.phone import ServedPhone
from vlui.errors import VluiError
from vlui.served.shell import Shell
from vlui.served.shell.apps import PACKAGES
from vlui.sim import services
from vlui.sim.apps.dialer import DialerState, dialer_state
from vlui.sim.phone import SimDevice

SYNC = "VluiSync"


@pytest.fixture
def phone() -> ServedPhone:
    return ServedPhone("000")


def sh(phone: ServedPhone, command: str, cancelled: threading.Event | None = None) -> tuple[str, int]:
    out: list[bytes] = []
    status = Shell(phone).run(command, out.append, cancelled or threading.Event())
    return b"".join(out).decode("utf-8", "replace"), status


def sh_bytes(phone: ServedPhone, command: str) -> bytes:
    out: list[bytes] = []
    assert Shell(phone).run(command, out.append, threading.Event()) == 0
    return b"".join(out)


def center(dev: SimDevice, rid_suffix: str) -> tuple[float, float]:
    """The centre of the widget whose resource id ends with ``rid_suffix``, on the screen ``dev`` shows."""
    node = next(n for n in dev.frame().walk() if n.rid.endswith(rid_suffix))
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) / 2, (y1 + y2) / 2


# ---------------------------------------------------------------------------------------------- the language
def test_exit_status_is_echoed_and_steers_and_or(phone) -> None:
    assert sh(phone, "echo 'a  b' \"c $?\"; false; echo X4EXIT:$?") == ("a  b c 0\nX4EXIT:1\n", 0)
    assert sh(phone, "true && echo yes || echo no; false && echo yes || echo no") == ("yes\nno\n", 0)
    assert sh(phone, "echo '$?' \"$?\" \\$?") == ("$? 0 $?\n", 0)  # single quotes and backslashes keep it literal
    assert sh(phone, "exit 3; echo never") == ("", 3)
    assert sh(phone, "sh -c 'exit 4'; echo $?") == ("4\n", 0)


def test_unknown_commands_and_syntax_errors_are_reported_like_sh(phone) -> None:
    assert sh(phone, "frobnicate --now") == ("/system/bin/sh: frobnicate: not found\n", 127)
    out, status = sh(phone, "echo 'unterminated")
    assert status == 2 and out.startswith("/system/bin/sh: ")
    assert sh(phone, "echo a &&")[1] == 2
    assert sh(phone, "; echo a") == ("/system/bin/sh: syntax error: ';' unexpected\n", 2)
    for construct in ("echo $(id)", "echo `id`", "sleep 1 &", "(echo a)"):
        out, status = sh(phone, construct)
        assert status == 2 and "not supported" in out, construct


def test_redirections_and_pipes(phone) -> None:
    assert sh(phone, "echo one > /sdcard/n.txt && echo two >> /sdcard/n.txt && cat /sdcard/n.txt") == ("one\ntwo\n", 0)
    assert sh(phone, "cat /sdcard/missing 2>/dev/null; echo $?") == ("1\n", 0)
    assert sh(phone, "cat /sdcard/missing > /sdcard/err.txt 2>&1; cat /sdcard/err.txt") == (
        "cat: /sdcard/missing: No such file or directory\n", 0)
    assert sh(phone, "echo hi > /nowhere/x") == ("/system/bin/sh: can't create /nowhere/x: No such file or directory\n", 1)
    assert sh(phone, "getprop | grep -E 'ro\\.build\\.version\\.(sdk|release)'") == (
        "[ro.build.version.release]: [10]\n[ro.build.version.sdk]: [29]\n", 0)
    # dev.bootcomplete, sys.boot_completed, sys.bootstat.first_boot_completed
    assert sh(phone, "getprop | grep -v ro. | grep -c boot.*comp") == ("3\n", 0)
    assert sh(phone, "getprop | head -n 2 | wc -l; getprop | tail -n 1") == (
        "2\n[wifi.interface]: [wlan0]\n", 0)
    assert sh(phone, "echo abc | grep -q x")[1] == 1


# ---------------------------------------------------------------------------------------------- input
def test_input_text_types_the_literal_characters_and_runs_nothing(phone) -> None:
    phone.files["/sdcard/keep.txt"] = b"precious"
    sh(phone, "input swipe 540 1500 540 300")  # the app drawer, with its search box
    with phone.lock:
        x, y = center(phone.device, "search_box_input")
    assert sh(phone, f"input tap {x} {y}") == ("", 0)
    assert phone.device.state.focus == ("launcher", "search")
    nasty = "it's;$(rm -rf /)`reboot`\"q\"&&|>/sdcard/x\\$?*"
    assert sh(phone, f"input text {shlex.quote(nasty)}") == ("", 0)
    assert sh(phone, "input text 'a%sb%%s'") == ("", 0)  # Android turns %s into a space
    assert phone.device.state.fields["launcher.search"] == nasty + "a b% "
    assert phone.files["/sdcard/keep.txt"] == b"precious" and "/sdcard/x" not in phone.files


def test_bad_input_usage_prints_android_usage(phone) -> None:
    before = phone.device.state.copy()
    out, status = sh(phone, "input foo 1 2")
    assert status == 1 and out.startswith("Usage: input [<source>]") and out.endswith("Error: Unknown command: foo\n")
    out, status = sh(phone, "input tap 1.5 y")
    assert status == 1 and out.endswith("Error: Invalid arguments for command: tap\n")
    assert phone.device.state == before


def test_an_episode_over_the_shell_leaves_the_in_process_phone(phone) -> None:
    """Inputs through the shell, each followed by an ADB backend's sync marker, against the same calls in process:
    the same state and the same log once the markers are dropped (markers never move later timestamps)."""
    ref = SimDevice("000")
    assert phone.device.state == ref.state
    boot = phone.device.log_mark()  # the served phone's log starts with its boot log: an in-process phone's is empty
    drawer = SimDevice("000")
    drawer.swipe(540.0, 1500.0, 540.0, 300.0)
    calls = [("swipe", 540.0, 1500.0, 540.0, 300.0), ("tap", *center(drawer, "search_box_input")),
             ("text", "maps"), ("key", "BACK"), ("key", "HOME"), ("tap", 540.25, 1000.5),
             ("swipe", 200.5, 1800.0, 900.0, 1790.0, 800), ("key", "APP_SWITCH"), ("key", "APP_SWITCH"),
             ("key", "HOME"), ("tap", -5.0, 10.0)]
    commands = {"tap": "input tap {} {}", "swipe": "input swipe {} {} {} {}", "text": "input text {}"}
    for i, (name, *args) in enumerate(calls):
        if name == "key":
            line = f"input keyevent {dict(HOME='KEYCODE_HOME', BACK=4, APP_SWITCH=187)[args[0]]}"
        else:
            line = commands[name].format(*args[:4]) + (f" {args[4]}" if len(args) > 4 else "")
        assert sh(phone, f"{line}; log -t {SYNC} token-{i}") == ("", 0)
        getattr(ref, name)(*args)
    served = phone.device.log_lines(boot)
    assert sum(SYNC in line for line in served) == len(calls)
    assert [line for line in served if SYNC not in line] == ref.log_lines()
    assert phone.device.state == ref.state


# ---------------------------------------------------------------------------------------------- screen
def test_screencap_raw_and_png_are_the_frame(phone) -> None:
    frame = phone.device.screenshot()
    h, w, _ = frame.shape
    raw = sh_bytes(phone, "screencap")
    assert struct.unpack_from("<4I", raw) == (w, h, 1, 1)  # width, height, RGBA_8888, sRGB (Android 9 and later)
    pixels = np.frombuffer(raw, np.uint8, offset=16).reshape(h, w, 4)
    assert np.array_equal(pixels[..., :3], frame) and (pixels[..., 3] == 255).all()
    assert sh_bytes(phone, "screencap") is not None and sh_bytes(phone, "screencap") == raw  # cached: same frame
    png = Image.open(io.BytesIO(sh_bytes(phone, "screencap -p")))
    assert png.format == "PNG" and np.array_equal(np.asarray(png)[..., :3], frame)
    assert sh(phone, "screencap -p /sdcard/shot.png") == ("", 0)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(phone.files["/sdcard/shot.png"])))[..., :3], frame)
    sh(phone, "input keyevent 187")  # the overview: a new frame, and a new screencap
    assert np.array_equal(np.frombuffer(sh_bytes(phone, "screencap"), np.uint8, offset=16).reshape(h, w, 4)[..., :3],
                          phone.device.screenshot())


def test_uiautomator_dump_writes_the_window_hierarchy(phone) -> None:
    assert sh(phone, "uiautomator dump") == ("UI hierchary dumped to: /sdcard/window_dump.xml\n", 0)
    assert phone.files["/sdcard/window_dump.xml"].decode() == phone.device.ui_xml()
    out, status = sh(phone, "uiautomator dump --compressed /data/local/tmp/d.xml >/dev/null && cat /data/local/tmp/d.xml")
    assert status == 0 and out == phone.device.ui_xml()


# ---------------------------------------------------------------------------------------------- log
def test_logcat_dump_filters_and_clear(phone) -> None:
    sh(phone, "input keyevent 3; am start -n com.android.settings/.Settings")
    out, status = sh(phone, "logcat -d -v threadtime ActivityTaskManager:I '*:S'")
    lines = out.splitlines()
    assert status == 0 and lines[0] == "--------- beginning of main"
    assert lines[1:] == phone.device.log_lines(tags=["ActivityTaskManager"])
    assert sh(phone, "logcat -d -s Nothing") == ("--------- beginning of main\n", 0)
    assert sh(phone, "logcat -d -b main '*:W'")[0] == ""  # one buffer: no divider; the simulated log has no warnings
    assert sh(phone, "logcat -d -t 2")[0].splitlines()[1:] == phone.device.log_lines()[-2:]
    brief = sh(phone, "logcat -d -v brief -s ActivityTaskManager")[0].splitlines()[1]
    assert brief.startswith("I/ActivityTaskManager( 1210): START u0 {")
    assert sh(phone, "logcat -c && logcat -d") == ("", 0)
    assert phone.device.log_lines() == []


def test_streaming_logcat_gets_later_lines_and_stops_when_cancelled(phone) -> None:
    received: list[bytes] = []
    cancelled = threading.Event()
    done = threading.Event()

    def stream() -> None:
        Shell(phone).run(f"logcat -v threadtime ActivityTaskManager:V {SYNC}:V '*:S'", received.append, cancelled)
        done.set()

    def wait_for(token: str) -> str:
        deadline = time.monotonic() + 5
        while f"{SYNC}: {token}" not in b"".join(received).decode() and time.monotonic() < deadline:
            time.sleep(0.01)
        return b"".join(received).decode()

    sh(phone, f"logcat -c; log -t {SYNC} t0")  # no boot log: its START of the launcher would be there already
    reader = threading.Thread(target=stream, daemon=True)
    reader.start()
    assert "NexusLauncherActivity" not in wait_for("t0")  # the reader has printed what was there: now it waits
    sh(phone, f"input keyevent 3; log -t {SYNC} t1")  # another stream, as the ADB backend's input
    text = wait_for("t1")
    assert "NexusLauncherActivity" in text and f"I {SYNC}: t1" in text
    start = time.monotonic()
    cancelled.set()
    assert done.wait(2) and time.monotonic() - start < 1
    lines = text.splitlines()
    assert lines[0] == "--------- beginning of main"
    assert {parse_threadtime(line)["tag"] for line in lines[1:]} == {"ActivityTaskManager", SYNC}


# ---------------------------------------------------------------------------------------------- apps, settings
def test_am_start_launches_the_app(phone) -> None:
    out, status = sh(phone, "am start -W -n com.android.settings/.Settings")
    assert status == 0 and out.startswith("Starting: Intent { cmp=com.android.settings/.Settings }\nStatus: ok\n")
    assert phone.device.state.top == "settings"
    assert any("START u0" in line and "cmp=com.android.settings/.Settings" in line for line in phone.device.log_lines())
    out, status = sh(phone, "am start -n com.example/.Nope")
    assert status == 1 and "Error: Activity class {com.example/com.example.Nope} does not exist." in out
    assert sh(phone, "dumpsys window windows | grep mCurrentFocus")[0].strip().endswith(
        "u0 com.android.settings/com.android.settings.Settings}")
    assert sh(phone, "am force-stop com.android.settings") == ("", 0)
    assert phone.device.state.top is None
    assert "package:com.android.settings\n" in sh(phone, "pm list packages")[0]


def test_the_package_manager_lists_the_third_party_apps_installed_and_only_those_start(phone, monkeypatch) -> None:
    """A third-party app (the test fixture) is on the served phone once its simulated phone installs it: pm lists it
    (alone with -3), am start and monkey start it, and the ADB backend's check of a release phone's apps passes."""
    fixture_app.register(monkeypatch)
    package, component = fixture_app.PACKAGE, f"{fixture_app.PACKAGE}/.MainActivity"

    class OverAdb:  # what the ADB backend's check needs of a device: its serial and a shell
        serial = phone.serial

        def shell(self, command: str, timeout_s: float | None = None) -> str:
            return sh(phone, command)[0]

    listed = sh(phone, "pm list packages")[0]
    assert f"package:{package}\n" not in listed and sh(phone, "pm list packages -3") == ("", 0)
    assert sh(phone, f"am start -n {component}") == (
        f"Starting: Intent {{ cmp={component} }}\nError type 3\nError: Activity class {{{package}/{package}"
        ".MainActivity} does not exist.\n", 1)
    assert sh(phone, f"monkey -p {package} 1")[1] == 252 and sh(phone, f"dumpsys package {package}") == ("", 0)
    with pytest.raises(VluiError, match=f"device {phone.serial} lacks Notes .test fixture. .{package}, version 1.0"):
        require_installed(OverAdb(), [fixture_app.PIN])
    phone.device.install_apps([fixture_app.PIN])
    assert sh(phone, "pm list packages")[0] == "".join(sorted(listed.splitlines(True) + [f"package:{package}\n"]))
    assert sh(phone, "pm list packages -3") == (f"package:{package}\n", 0)
    assert sh(phone, "pm list packages -s")[0] == listed
    require_installed(OverAdb(), [fixture_app.PIN])
    assert sh(phone, f"am start -n {component}")[1] == 0 and phone.device.state.top == fixture_app.KEY
    phone.device.key("HOME")
    assert sh(phone, f"monkey -p {package} 1")[1] == 0 and phone.device.state.top == fixture_app.KEY
    monkeypatch.setitem(PACKAGES, package, {"versionCode": 1, "versionName": "1.0",
                                            "codePath": f"/data/app/{package}-1"})
    record = sh(phone, f"dumpsys package {package}")[0]
    assert f"userId={app_uid(fixture_app.KEY)}" in record and "flags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]" in record


def test_settings_night_mode_and_density_round_trip_through_configure(phone) -> None:
    assert sh(phone, "settings put system font_scale 1.15; settings get system font_scale") == ("1.15\n", 0)
    assert configure.get_setting(phone, "system", "font_scale") == "1.15"
    assert sh(phone, "settings get secure nothing_here") == ("null\n", 0)
    assert sh(phone, "settings delete system font_scale") == ("Deleted 1 rows\n", 0)
    assert sh(phone, "cmd uimode night yes") == ("Night mode: yes\n", 0)
    assert phone.device.state.dark_theme and configure.night_mode(phone) == "yes"
    assert sh(phone, "cmd uimode night") == ("Night mode: yes\n", 0)
    assert sh(phone, "wm density 320 && wm density") == ("Physical density: 440\nOverride density: 320\n", 0)
    assert configure.density(phone) == (440, 320)
    assert sh(phone, "wm density reset && wm density; wm size") == ("Physical density: 440\nPhysical size: 1080x2160\n", 0)
    assert sh(phone, "setprop persist.sys.test 7; getprop persist.sys.test; getprop nope.nope") == ("7\n\n", 0)
    assert sh(phone, "id") == ("uid=0(root) gid=0(root) groups=0(root) context=u:r:su:s0\n", 0)


def test_airplane_mode_takes_the_setting_and_the_broadcast_as_on_android_10(phone) -> None:
    st = phone.device.state
    assert sh(phone, "settings put global airplane_mode_on 1; settings get global airplane_mode_on") == ("1\n", 0)
    assert not st.airplane_mode  # writing the setting alone turns no radio off
    out, status = sh(phone, "am broadcast -a android.intent.action.AIRPLANE_MODE")
    assert status == 0 and out == ("Broadcasting: Intent { act=android.intent.action.AIRPLANE_MODE flg=0x400000 }\n"
                                   "Broadcast completed: result=0\n")
    assert st.airplane_mode and sh(phone, "settings get global wifi_on") == ("2\n", 0)  # Wi-Fi held off
    assert phone.device.log_lines()[-1].endswith("D PhoneGlobals: Turning radio off - airplane is on")
    sh(phone, "am broadcast -a android.intent.action.AIRPLANE_MODE --ez state false")
    assert not st.airplane_mode and sh(phone, "settings get global airplane_mode_on") == ("0\n", 0)
    # a value written but never broadcast gives way once the mode changes another way (Settings' switch)
    sh(phone, "settings put global airplane_mode_on 1")
    with phone.lock:
        services.set_airplane_mode(phone.device, True)
        services.set_airplane_mode(phone.device, False)
    assert sh(phone, "settings get global airplane_mode_on") == ("0\n", 0)


def test_radios_volumes_brightness_and_calls_from_the_shell_change_the_phone(phone) -> None:
    st = phone.device.state
    assert sh(phone, "svc wifi disable; settings get global wifi_on") == ("0\n", 0) and not st.wifi
    assert sh(phone, "service call bluetooth_manager 6") == ("Result: Parcel(00000000 00000001   '........')\n", 0)
    assert st.bluetooth and sh(phone, "settings get global bluetooth_on") == ("1\n", 0)
    assert sh(phone, "media volume --stream 2 --set 3 --get") == (
        "[V] will control stream=2 (STREAM_RING)\n[V] will set volume to index=3\n[V] will get volume\n"
        "[V] Connecting to AudioService\n[V] volume is 3 in range [0..7]\n", 0)
    assert st.volume["ring"] == 3
    out, status = sh(phone, "media volume --stream 0 --set 0")
    assert status == 1 and "Error: invalid volume index 0 for stream 0 (should be in [1..7])" in out
    assert sh(phone, "settings put system screen_brightness 23; settings get system screen_brightness") == ("23\n", 0)
    assert st.brightness == 23 and SimDevice.check_state(phone.device, {"brightness_percent": 40})
    assert sh(phone, "settings put system vibrate_when_ringing 1") == ("", 0) and st.vibrate_for_calls
    # changes from the shell name the shell, so B-MoCA's detectors (which name Settings) stay silent
    shell_lines = "\n".join(phone.device.log_lines())
    assert "package=com.android.shell uid=0 enable=false" in shell_lines and "com.android.settings" not in shell_lines
    out, status = sh(phone, "am start -a android.intent.action.CALL -d tel:6505550123")
    assert (out, status) == ("Starting: Intent { act=android.intent.action.CALL dat=tel:xxxxxxxxxx }\n", 0)
    assert dialer_state(phone.device).call.number == "6505550123" and st.top == "phone" and st.tasks["phone"][-1]["screen"] == "incall"


def test_a_call_intent_for_an_emergency_number_only_opens_the_dial_pad(phone) -> None:
    sh(phone, "am start -a android.intent.action.CALL -d tel:911")
    st = phone.device.state
    assert dialer_state(phone.device) == DialerState("911") and st.tasks["phone"][-1]["screen"] == "keypad"
    assert not any("Emergency number detected" in line for line in phone.device.log_lines())


# ---------------------------------------------------------------------------------------------- files, sqlite
def test_sqlite3_runs_sql_on_a_database_file(phone) -> None:
    db = "/data/local/tmp/t.db"
    out, status = sh(phone, f"sqlite3 {db} \"CREATE TABLE t (a INTEGER, b TEXT, c REAL); "
                            f"INSERT INTO t VALUES (1, 'x;y', 2.0), (2, NULL, 0.5);\"")
    assert (out, status) == ("", 0)
    assert sh(phone, f"sqlite3 {db} 'SELECT * FROM t ORDER BY a'") == ("1|x;y|2.0\n2||0.5\n", 0)
    con = sqlite3.connect(":memory:")
    con.deserialize(phone.files[db])
    assert con.execute("SELECT count(*) FROM t").fetchone() == (2,)
    assert sh(phone, f"sqlite3 {db} 'SELEC nothing'") == ('Error: near "SELEC": syntax error\n', 1)
    assert "favorites" in sh(phone, f"sqlite3 {launcher.LAUNCHER_DB} .tables")[0]
    schema = "CREATE TABLE t (a INTEGER, b TEXT, c REAL);\n"
    assert sh(phone, f"sqlite3 {db} .schema") == (schema, 0)
    assert sh(phone, f"sqlite3 {db} '.schema t'") == (schema, 0) and sh(phone, f"sqlite3 {db} '.schema u'") == ("", 0)


def test_file_commands(phone) -> None:
    assert sh(phone, "mkdir -p /sdcard/a/b && touch /sdcard/a/b/f && ls /sdcard/a/b") == ("f\n", 0)
    assert sh(phone, "mkdir /sdcard/a") == ("mkdir: '/sdcard/a': File exists\n", 1)
    assert sh(phone, "mkdir /sdcard/e && ls -l /sdcard/ | grep -c ' e$'") == ("1\n", 0)  # an empty directory stays
    assert sh(phone, "echo hi > /sdcard/a/f.txt; cp /sdcard/a/f.txt /sdcard/g.txt && cat /sdcard/g.txt") == ("hi\n", 0)
    assert sh(phone, "mv /sdcard/g.txt /data/local/tmp/ && ls /data/local/tmp; ls /sdcard/g.txt") == (
        "g.txt\nls: /sdcard/g.txt: No such file or directory\n", 1)
    assert sh(phone, "cd /sdcard/a && ls *.txt && cat f.txt") == ("f.txt\nhi\n", 0)
    assert sh(phone, "chmod 600 /sdcard/a/f.txt && chown system:system /sdcard/a/f.txt") == ("", 0)
    assert sh(phone, "cat /sdcard/nope") == ("cat: /sdcard/nope: No such file or directory\n", 1)
    assert sh(phone, "rm /sdcard/a") == ("rm: /sdcard/a: Is a directory\n", 1)
    assert sh(phone, "rm -r /sdcard/a && ls /sdcard/a; rm -f /sdcard/nope") == (
        "ls: /sdcard/a: No such file or directory\n", 0)
    assert not any(p.startswith("/sdcard/a/") for p in phone.files)


def test_sleep_stops_when_cancelled(phone) -> None:
    cancelled = threading.Event()
    threading.Timer(0.1, cancelled.set).start()
    start = time.monotonic()
    assert sh(phone, "sleep 30; echo never", cancelled)[0] == ""
    assert time.monotonic() - start < 2
