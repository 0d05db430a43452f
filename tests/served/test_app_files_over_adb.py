"""The apps' own files that B-MoCA's evaluators read, over ADB: the served phone keeps Clock's alarms database and
the apps' shared preferences where an Android 10 phone keeps them, made from its state when they are read and
readable as root only, and the ADB backend reads them as B-MoCA does (a root copy to the shared storage, pulled), so
that each release task judged by them gets the verdict over ADB that it gets on the simulated phone. Both adb
clients (tests/served/conftest.py: adb_client)."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adb.test_device import adb_env
from tests.adb.test_state import release_snapshots
from tests.tasks.test_bmoca25 import drive
from vlui.adb.state import READERS
from vlui.android.app_data import ALARMS_DB, prefs_path
from vlui.android.apps import app_uid
from vlui.android.state import DeviceState
from vlui.backends import make_device
from vlui.env.env import open_env
from vlui.env.settings import EnvConfig
from vlui.env.ui_text import parse_xml
from vlui.served.private_adb import PrivateAdb
from vlui.served.processes import user_name
from vlui.sim.apps.deskclock import Alarm, ClockState, alarm_rows
from vlui.sim.apps.snapseed import SnapseedState
from vlui.sim.apps.wikipedia import WikipediaState
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import release_tasks
from vlui.tasks.checks import check_holds

SNAPSEED_PREFS = prefs_path("com.niksoftware.snapseed", "Preferences.xml")
WIKIPEDIA_PREFS = prefs_path("org.wikipedia", "org.wikipedia_preferences.xml")


@pytest.fixture(scope="module")
def envs(tmp_path_factory) -> Path:
    """Snapshot 000 as the release's phones have it (its five apps installed)."""
    return release_snapshots(tmp_path_factory.mktemp("release"), ["000"])


@pytest.fixture(scope="module")
def served(adb_client, envs):
    """The release's phone 000 behind a private server of each adb client."""
    with PrivateAdb("000", envs_dir=envs, noise=False, adb_path=adb_client) as pa:
        yield pa


def alarms(*times: tuple[int, int]) -> Callable[[DeviceState], None]:
    def put(state: DeviceState) -> None:
        state.app("clock", ClockState).alarms = [Alarm(id=i + 1, hour=h, minute=m, enabled=True)
                                                 for i, (h, m) in enumerate(times)]
    return put


def snapseed_dark(written: bool, dark: bool) -> Callable[[DeviceState], None]:
    def put(state: DeviceState) -> None:
        st = state.app("snapseed", SnapseedState)
        st.use_dark_theme, st.written = dark, ["use_dark_theme"] if written else []
    return put


def wikipedia_text_size(size: int) -> Callable[[DeviceState], None]:
    def put(state: DeviceState) -> None:
        st = state.app("wikipedia", WikipediaState)
        st.text_size, st.written = size, ["textSizeMultiplier"]
    return put


# per app, a release task judged by its file and states of the phone: (how to put it there, the verdict)
CASES = {
    "b25_alarm_1330_and_2h_after": [(alarms((13, 30)), False), (alarms((15, 30), (13, 30)), True)],
    "b25_snapseed_dark_theme": [(snapseed_dark(False, False), False), (snapseed_dark(True, False), False),
                                (snapseed_dark(True, True), True)],
    "b25_wikipedia_text_50": [(wikipedia_text_size(-4), False), (wikipedia_text_size(-5), True)],
}


@pytest.mark.parametrize("task", list(CASES))
def test_a_task_judged_by_an_apps_file_reads_the_same_verdict_over_adb(served, envs, task) -> None:
    """The served phone put in a state, its check read over ADB (the file copied as root and pulled), gives the
    verdict the simulated phone gives in that state, a failure and a success."""
    chosen = release_tasks()[task]
    dev = make_device(adb_env(served, snapshots=["000"]), "000")
    try:
        for put, verdict in CASES[task]:
            local = SimDevice("000", envs)
            put(local.state)
            with served.phone.lock:
                put(served.phone.device.state)
            holds = [check_holds(chosen.evaluator_check, d, lambda d=d: parse_xml(d.ui_xml()), task)
                     for d in (dev, local)]
            assert holds == [verdict, verdict], (task, verdict)
    finally:
        dev.close()


def adb(pa: PrivateAdb, *args: str):
    return pa.adb("-s", pa.serial, *args)


def test_clock_keeps_deskclocks_database_which_root_copies_and_adb_pull_brings_back(served, tmp_path) -> None:
    copy = adb(served, "shell", f"su 0 cp {ALARMS_DB} /sdcard/alarms.db")
    assert copy.returncode == 0, copy.stderr
    assert adb(served, "pull", "/sdcard/alarms.db", str(tmp_path / "alarms.db")).returncode == 0
    con = sqlite3.connect(tmp_path / "alarms.db")
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        assert tables == ["alarm_instances", "alarm_templates", "android_metadata"]
        columns = [r[1] for r in con.execute("PRAGMA table_info(alarm_templates)")]
        assert columns == ["_id", "hour", "minutes", "daysofweek", "enabled", "vibrate", "label", "ringtone",
                           "delete_after_use"]
        rows = [dict(zip(("hour", "minutes", "daysofweek", "enabled"), r, strict=True))
                for r in con.execute("SELECT hour, minutes, daysofweek, enabled FROM alarm_templates")]
        with served.phone.lock:
            assert rows == alarm_rows(served.phone.device.state)
        assert con.execute("PRAGMA user_version").fetchone() == (8,)
        assert con.execute("SELECT locale FROM android_metadata").fetchone() == ("en_US",)
    finally:
        con.close()


def test_b_mocas_own_way_of_copying_a_file_works_on_the_served_phone(served, tmp_path) -> None:
    """B-MoCA's evaluators open ``adb shell``, write ``su`` and the ``cp`` to its standard input, leave it open, wait
    half a second and pull the copy: the copy is there by then."""
    shell = subprocess.Popen([served.adb_path, "-P", str(served.adb_port), "-s", served.serial, "shell"],
                             env=served.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        shell.stdin.write("su\n")
        shell.stdin.flush()
        shell.stdin.write(f"cp {WIKIPEDIA_PREFS} /sdcard/org.wikipedia_preferences.xml\n")
        shell.stdin.flush()
        time.sleep(0.5)
        pulled = adb(served, "pull", "/sdcard/org.wikipedia_preferences.xml", str(tmp_path / "prefs.xml"))
    finally:
        shell.kill()
        shell.wait()
    assert pulled.returncode == 0, pulled.stderr
    with served.phone.lock:
        kept = served.phone.device.shared_prefs("wikipedia", "org.wikipedia_preferences.xml")
    assert (tmp_path / "prefs.xml").read_text(encoding="utf-8") == kept


def test_the_apps_files_are_the_apps_and_run_as_refuses_a_release_build(served) -> None:
    listing = adb(served, "shell", f"ls -l {ALARMS_DB} {SNAPSEED_PREFS}").stdout.splitlines()
    users = [user_name(app_uid(key)) for key in ("clock", "snapseed")]
    assert [line.split()[:4] for line in listing] == [["-rw-rw----", "1", u, u] for u in users]
    prefs = adb(served, "shell", f"cat {SNAPSEED_PREFS}").stdout
    assert prefs.startswith("<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map")
    refused = adb(served, "shell", "run-as com.niksoftware.snapseed cat shared_prefs/Preferences.xml")
    assert (refused.returncode, refused.stderr) == (1, "run-as: package not debuggable: com.niksoftware.snapseed\n")
    names = adb(served, "shell", "ls /data/data/org.wikipedia/shared_prefs").stdout.split()
    assert names == ["org.wikipedia_preferences.xml"]
    query = adb(served, "shell", f"sqlite3 {ALARMS_DB} 'SELECT hour, minutes FROM alarm_templates ORDER BY _id'")
    with served.phone.lock:
        by_id = sorted(served.phone.device.state.app("clock", ClockState).alarms, key=lambda a: a.id)
        assert query.stdout == "".join(f"{a.hour}|{a.minute}\n" for a in by_id)
        assert ALARMS_DB not in served.phone.files  # a query leaves the app's database the app's
    removed = adb(served, "shell", f"rm {ALARMS_DB}")  # a deviation, in one line: a device would let root remove it
    assert (removed.returncode, removed.stderr) == (
        1, f"rm: {ALARMS_DB}: the simulated phone makes this file from the clock app's state, so it stays\n")


@pytest.mark.slow
@pytest.mark.parametrize("task, parts, file", [
    ("b25_alarm_1330_and_2h_after", None, ALARMS_DB),
    ("b25_snapseed_dark_theme", ["b25_snapseed_dark_theme"], SNAPSEED_PREFS),
    ("b25_wikipedia_text_50", ["b25_wikipedia_text_50"], WIKIPEDIA_PREFS),
])
def test_the_expert_meets_a_task_judged_by_an_apps_file_at_the_same_step_over_adb(served, task, parts, file) -> None:
    """Driven by the expert through the adb client: not met at the reset, then met at the same step over ADB as on
    the simulated phone, the file read over ADB then holding what the simulated phone's app holds (Clock's rows in
    the database's order, by ``_id``, where the app's list has its own)."""
    chosen = release_tasks()[task]
    over_adb = open_env(adb_env(served, snapshots=["000"]), [chosen], ["000"], include_xml=True)
    in_process = open_env(EnvConfig(snapshots=["000"]), [chosen], ["000"], include_xml=True)
    try:
        runs = [drive(env, task, "000", parts) for env in (over_adb, in_process)]
        assert runs[0] == runs[1] and runs[0][0] is False and runs[0][1][-1] is not None
        if file == ALARMS_DB:
            rows = [sorted(r.items()) for r in READERS["alarms"](over_adb.device)]
            assert sorted(rows) == sorted(sorted(r.items()) for r in alarm_rows(in_process.device.state))
        else:
            app = chosen.apps[0]
            name = file.rpartition("/")[2]
            assert over_adb.device.shared_prefs(app, name) == in_process.device.shared_prefs(app, name)
    finally:
        over_adb.close()
        in_process.close()
