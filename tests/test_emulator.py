"""Building snapshots on an emulator: the commands (a golden transcript), their SQL on real SQLite, failures, the
CLI, and the whole build run on the simulated phone, after which it must look exactly like the snapshot loaded
directly."""

from __future__ import annotations

import dataclasses
import io
import shlex
import shutil
import sqlite3
import subprocess

import numpy as np
import pytest
from PIL import Image

from vlui.android import launcher
from vlui.android.snapshot import load_snapshot, snapshot_ids, snapshot_refs
from vlui.emulator.__main__ import main
from vlui.emulator.build import SimTarget, Step, build_steps, not_built, run_steps, transcript
from vlui.errors import VluiError
from vlui.served import device_files
from vlui.served.phone import ServedPhone
from vlui.sim.phone import SimDevice

# What `python -m vlui.emulator build-snapshots 105 --print` prints for snapshot 105 (saved as b105): checked by hand.
GOLDEN_105 = r"""#!/bin/sh
set -e
# restart adbd as root: setprop, the wallpaper files and the launcher database need it
adb -s emulator-5554 root && adb -s emulator-5554 wait-for-device
# the emulator must have the Pixel 3's screen
[ "$(adb -s emulator-5554 shell wm size | tr -d '\r')" = 'Physical size: 1080x2160' ]
# screen density 550 dpi (the Pixel 3's own: 440); applies at once
adb -s emulator-5554 shell wm density 550
# font scale 1.0; applies at once
adb -s emulator-5554 shell settings put system font_scale 1.0
# dark theme on; applies at once
adb -s emulator-5554 shell cmd uimode night yes
# locale ko-KR (Korean (South Korea)); the framework reads it at its restart below
adb -s emulator-5554 shell setprop persist.sys.locale ko-KR
# wallpaper 009, drawn at 1080x2160
adb -s emulator-5554 push vlui-wallpaper-009-1080x2160.png /data/local/tmp/vlui-wallpaper.png
# the wallpaper service's original image
adb -s emulator-5554 shell cp /data/local/tmp/vlui-wallpaper.png /data/system/users/0/wallpaper_orig
# the wallpaper service's shown image; read at the framework restart
adb -s emulator-5554 shell cp /data/local/tmp/vlui-wallpaper.png /data/system/users/0/wallpaper
# the wallpaper files belong to system_server
adb -s emulator-5554 shell chown system:system /data/system/users/0/wallpaper_orig /data/system/users/0/wallpaper
# only system_server reads them
adb -s emulator-5554 shell chmod 600 /data/system/users/0/wallpaper_orig /data/system/users/0/wallpaper
# home-screen layout: 4 hotseat and 9 workspace icons on a 4x5 grid
adb -s emulator-5554 shell sqlite3 /data/data/com.google.android.apps.nexuslauncher/databases/launcher.db <<'SQL'
DELETE FROM favorites;
INSERT INTO favorites (_id, title, intent, container, screen, cellX, cellY, spanX, spanY, itemType, profileId, rank) VALUES
(1, '시계', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.deskclock/com.android.deskclock.DeskClock;end', -101, 0, 0, 0, 1, 1, 0, 0, 0),
(2, '메시지', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.apps.messaging/.ui.ConversationListActivity;end', -101, 1, 1, 0, 1, 1, 0, 0, 0),
(3, 'Play 뮤직', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.music/com.android.music.activitymanagement.TopLevelActivity;end', -101, 2, 2, 0, 1, 1, 0, 0, 0),
(4, '지도', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.apps.maps/com.google.android.maps.MapsActivity;end', -101, 3, 3, 0, 1, 1, 0, 0, 0),
(5, '카메라', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.android.camera2/com.android.camera.CameraLauncher;end', -100, 0, 0, 0, 1, 1, 0, 0, 0),
(6, 'Chrome', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.android.chrome/com.google.android.apps.chrome.Main;end', -100, 0, 1, 0, 1, 1, 0, 0, 0),
(7, '파일', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.documentsui/com.android.documentsui.files.FilesActivity;end', -100, 0, 0, 1, 1, 1, 0, 0, 0),
(8, '설정', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.android.settings/.Settings;end', -100, 0, 2, 1, 1, 1, 0, 0, 0),
(9, '주소록', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.android.contacts/.activities.PeopleActivity;end', -100, 0, 3, 1, 1, 1, 0, 0, 0),
(10, 'YouTube', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.youtube/com.google.android.apps.youtube.app.WatchWhileActivity;end', -100, 0, 0, 2, 1, 1, 0, 0, 0),
(11, '포토', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.apps.photos/.home.HomeActivity;end', -100, 0, 3, 2, 1, 1, 0, 0, 0),
(12, '캘린더', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.calendar/com.android.calendar.AllInOneActivity;end', -100, 0, 1, 4, 1, 1, 0, 0, 0),
(13, 'Gmail', '#Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.google.android.gm/.ConversationListActivityGmail;end', -100, 0, 3, 4, 1, 1, 0, 0, 0);
SQL
# the launcher restarts and loads its database
adb -s emulator-5554 shell am force-stop com.google.android.apps.nexuslauncher
# so that the wait below sees the restarted framework finish booting
adb -s emulator-5554 shell setprop sys.boot_completed 0
# restart the framework: the locale and the wallpaper take effect
adb -s emulator-5554 shell setprop ctl.restart zygote
# wait until the framework has booted
until [ "$(adb -s emulator-5554 shell getprop sys.boot_completed | tr -d '\r')" = 1 ]; do sleep 1; done
# the home screen
adb -s emulator-5554 shell input keyevent 3
# keep network time from resetting the clock
adb -s emulator-5554 shell settings put global auto_time 0
# the snapshot's clock: 2026-11-23 08:00 in the emulator's time zone
adb -s emulator-5554 shell date 112308002026.00
# save emulator snapshot b105
adb -s emulator-5554 emu avd snapshot save b105
"""


def test_golden_transcript() -> None:
    assert transcript(build_steps(load_snapshot("105"), name="b105")) == GOLDEN_105


def test_every_snapshot_builds_with_shell_safe_commands_and_valid_sql() -> None:
    for sid in snapshot_ids("all"):
        snap = load_snapshot(sid)
        steps = build_steps(snap)
        assert [s.kind for s in steps].count("console") == 1 and steps[-1].command == f"avd snapshot save {sid}"
        for step in steps:
            if step.kind == "shell":  # the device's sh -c reads back exactly the words
                assert shlex.split(step.command) == list(step.args)
        (sql,) = [s.args[2] for s in steps if s.args[:1] == ("sqlite3",)]
        con = sqlite3.connect(":memory:")
        con.execute(launcher.FAVORITES_SCHEMA)
        for statement in sql.split(";\n"):  # each statement on its own
            con.execute(statement)
        hotseat, workspace = launcher.home_layout(snap.home_layout, *snap.home_grid)
        got = con.execute("SELECT container, screen, cellX, cellY, appWidgetId, itemType FROM favorites").fetchall()
        assert got == [(launcher.HOTSEAT, i, i, 0, -1, 0) for i in range(len(hotseat))] + [
            (launcher.DESKTOP, 0, c, r, -1, 0) for _, r, c in workspace]
        (push,) = [s for s in steps if s.kind == "push"]
        assert push.args[0] == f"vlui-wallpaper-{snap.wallpaper}-{snap.size[0]}x{snap.size[1]}.png"
    with Image.open(io.BytesIO(push.payload())) as img:  # the last one's (each costs a wallpaper drawn as PNG)
        assert img.size == snap.size and img.text[device_files.WALLPAPER_CHUNK] == snap.wallpaper


def test_the_sqlite3_command_and_its_transcript_run_in_a_posix_shell(tmp_path) -> None:
    assert shutil.which("sqlite3"), "no sqlite3 command: bash scripts/setup.sh --tests installs it"
    snap = load_snapshot("030")  # Arabic titles
    steps = build_steps(snap)
    (step,) = [s for s in steps if s.args[:1] == ("sqlite3",)]
    text = transcript(steps)
    heredoc = text[text.index("adb -s emulator-5554 shell sqlite3 "):text.index("\nSQL\n") + 4]
    layout = launcher.home_layout(snap.home_layout, *snap.home_grid)
    for form in ("argument", "transcript"):
        db = tmp_path / f"{form}.db"
        con = sqlite3.connect(db)
        con.execute(launcher.FAVORITES_SCHEMA)
        con.execute("INSERT INTO favorites (_id, title) VALUES (99, 'stale')")
        con.commit()
        con.close()
        if form == "argument":  # as the builder sends it to the device's sh -c
            command = step.command.replace(launcher.LAUNCHER_DB, str(db))
        else:  # as a user runs the printed transcript (adb replaced by a local sqlite3)
            command = heredoc.replace(f"adb -s emulator-5554 shell sqlite3 {launcher.LAUNCHER_DB}", f"sqlite3 {db}")
        subprocess.run(["sh", "-c", command], check=True, timeout=30)
        titles = [t for (t,) in sqlite3.connect(db).execute("SELECT title FROM favorites ORDER BY _id")]
        assert titles == [row[1] for row in launcher.favorites_rows(layout, snap.locale)]


def built_and_fresh(start, target: str) -> tuple[SimDevice, SimDevice]:
    phone = ServedPhone(start)
    run_steps(build_steps(load_snapshot(target), name=f"b{target}"), SimTarget(phone))
    phone.load_snapshot(f"b{target}")
    return phone.device, SimDevice(target)


@pytest.mark.parametrize("start, target", [
    ("000", "105"),  # density, dark theme, Korean, wallpaper, random layout
    ("000", "030"),  # right-to-left Arabic
    # the tablet: the build needs an emulator of the same device, so it starts from another tablet configuration
    (dataclasses.replace(load_snapshot("109"), id="tablet", dpi=240, locale="en-US", wallpaper="000",
                         dark_theme=True, home_layout="default"), "109"),
])
def test_a_snapshot_built_on_the_served_phone_looks_exactly_like_the_snapshot(start, target) -> None:
    built, fresh = built_and_fresh(start, target)
    assert built.ui_xml() == fresh.ui_xml()
    assert np.array_equal(built.screenshot(), fresh.screenshot())
    assert built.now() == fresh.now()
    built.tap(*next(n.bounds[:2] for n in built.frame().walk() if n.desc == fresh.locale.t("app.settings")))
    assert built.state.top == "settings"  # and it works as one


def test_a_generated_configuration_builds_with_its_status_bar_as_far_as_a_device_allows() -> None:
    """Battery, charging and signal are built (dumpsys battery, the console's gsm signal-profile); the Wi-Fi bars and
    notifications cannot be, and are listed as not built."""
    snap = next(s for s in (load_snapshot(r) for r in snapshot_refs("random:200", seed=3))
                if s.clock_dial == "circle" and s.wallpaper.startswith("procedural-") and s.state["notifications"])
    assert [w.split(" (")[0] for w in not_built(snap)] == ["wifi_level", "notifications"]
    # an emulator made with the generated phone's screen (a drawn one, as an AVD's custom hardware profile), booted
    # in B-MoCA's stock settings
    phone = ServedPhone(dataclasses.replace(load_snapshot("000"), device=snap.device, screen=snap.screen,
                                            dpi=snap.screen["dpi"]))
    run_steps(build_steps(snap, name="g"), SimTarget(phone))
    phone.load_snapshot("g")
    built = phone.device
    st = snap.state
    assert (built.state.battery_level, built.state.charging, built.state.signal_level) == (
        st["battery_level"], st["charging"], st["signal_level"])
    buildable = {k: v for k, v in st.items() if k not in ("wifi_level", "notifications")}
    fresh = SimDevice(dataclasses.replace(snap, state=buildable))
    assert built.ui_xml() == fresh.ui_xml() and np.array_equal(built.screenshot(), fresh.screenshot())


def test_a_build_refuses_another_screen_size() -> None:
    phone = ServedPhone("000")
    with pytest.raises(VluiError, match=r"build step 2/\d+ \(the emulator must have the Pixel 6's screen\) failed: "
                                        r"wm size: printed 'Physical size: 1080x2160', not 'Physical size: 1080x2400'"):
        run_steps(build_steps(load_snapshot("108")), SimTarget(phone))


class ScriptedTarget:
    """A target whose shell answers from a table (command -> (output, status)); everything else succeeds."""

    def __init__(self, answers: dict[str, tuple[str, int]], console_reply: str = "OK") -> None:
        self.answers, self.console_reply, self.ran = answers, console_reply, []

    def root(self) -> None:
        self.ran.append("root")

    def shell_out(self, cmd: str, timeout: float) -> tuple[str, int]:
        self.ran.append(cmd)
        return self.answers.get(cmd, ("", 0))

    def push_bytes(self, data: bytes, remote: str) -> None:
        self.ran.append(f"push {remote}")

    def console(self, cmd: str) -> str:
        if self.console_reply.startswith("KO"):
            raise VluiError(self.console_reply)
        return self.console_reply


OK_ANSWERS = {"wm size": ("Physical size: 1080x2160\n", 0), "getprop sys.boot_completed": ("1\n", 0)}


@pytest.mark.parametrize("answers, console, message", [
    ({"wm density 550": ("", 255)}, "OK", r"^build step 3/20 \(screen density 550 dpi .*\) failed: wm density 550: "
                                          "exit status 255$"),
    ({"cmd uimode night yes": ("Error: not allowed\n", 0)}, "OK", "cmd uimode night yes: exit status 0, Error: not"),
    ({}, "KO: snapshot storage is full", r"step 20/20 .* avd snapshot save b105: KO: snapshot storage is full$"),
])
def test_a_failed_step_stops_the_build_with_one_line_naming_it(answers, console, message) -> None:
    target = ScriptedTarget({**OK_ANSWERS, **answers}, console)
    with pytest.raises(VluiError, match=message) as err:
        run_steps(build_steps(load_snapshot("105"), name="b105"), target)
    assert "\n" not in str(err.value)


def test_a_failed_sql_step_names_its_first_line() -> None:
    steps = build_steps(load_snapshot("105"))
    (sql,) = [s for s in steps if s.args[:1] == ("sqlite3",)]
    target = ScriptedTarget({**OK_ANSWERS, sql.command: ("Error: near line 2: no such table: favorites\n", 1)})
    with pytest.raises(VluiError, match=r"step 12/20 .* failed: sqlite3 /data/data/com.google.android.apps."
                                        r"nexuslauncher/databases/launcher.db 'DELETE FROM favorites; …: exit status 1, "
                                        r"Error: near line 2: no such table: favorites$"):
        run_steps(steps, target)
    assert target.ran[-1] == sql.command  # nothing ran after it


def test_waiting_for_boot_gives_up_after_its_time() -> None:
    step = Step("shell", ("getprop", "sys.boot_completed"), "wait", expect="1", retry_s=0.2)
    target = ScriptedTarget({"getprop sys.boot_completed": ("0\n", 0)})
    with pytest.raises(VluiError, match=r"^build step 1/1 \(wait\) failed: getprop sys.boot_completed: printed '0', "
                                        r"not '1' after 0.2 s$"):
        run_steps([step], target)
    assert len(target.ran) == 2  # asked again once the time was up


def test_build_refuses_initial_app_state() -> None:
    snap = dataclasses.replace(load_snapshot("000"), state={"airplane_mode": True})
    with pytest.raises(VluiError, match=r"initial app state \(airplane_mode\) cannot be built"):
        build_steps(snap)


def test_cli_prints_the_commands_and_writes_the_pushed_files(tmp_path, capsys) -> None:
    assert main(["build-snapshots", "105", "--print", "--files", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ---- snapshot 105 (Pixel 3, 1080x2160) -> emulator snapshot 105\n#!/bin/sh\n")
    assert "adb -s emulator-5554 shell wm density 550\n" in out and out.endswith("emu avd snapshot save 105\n\n")
    with Image.open(tmp_path / "vlui-wallpaper-009-1080x2160.png") as img:
        assert img.text == {"vlui.wallpaper": "009"}


@pytest.mark.parametrize("argv, message", [
    (["105"], "--serial is required"),
    (["105", "--split", "test", "--print"], "ids or --split, not both"),
    (["nope", "--print"], "unknown snapshot 'nope'"),
    (["105", "--files", "x", "--serial", "emulator-5554"], "--files goes with --print"),
])
def test_cli_errors_are_one_line(argv, message, capsys) -> None:
    assert main(["build-snapshots", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_the_cli_builds_over_a_real_adb_server_on_the_served_phone(monkeypatch, capsys) -> None:
    """The whole path a user takes: the CLI, AdbDevice, a real adb server, the phone's adbd and emulator console."""
    from vlui.served.private_adb import PrivateAdb

    with PrivateAdb("000") as pa:
        monkeypatch.setenv("HOME", str(pa.home))  # where the served console keeps its auth token
        assert main(["build-snapshots", "105", "--serial", pa.serial, "--adb-port", str(pa.adb_port)]) == 0
        out = capsys.readouterr().out
        assert "105 [20/20] save emulator snapshot 105: avd snapshot save 105\n" in out
        assert out.endswith("saved emulator snapshot 105\n")
        pa.phone.load_snapshot("000")
        pa.adb("-s", pa.serial, "emu", "avd", "snapshot", "load", "105")
        with pa.phone.lock:
            built = pa.phone.device
            fresh = SimDevice("105")
            assert built.ui_xml() == fresh.ui_xml() and np.array_equal(built.screenshot(), fresh.screenshot())
