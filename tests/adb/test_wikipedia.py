"""Wikipedia over ADB: the simulated phone served through a real adb server, with the app installed (a snapshot whose
state installs the release's apps), judges B-MoCA's "go to saved tab" task as the in-process phone does, step for step; what it
reads there (the UI tree's ``nav_tab_reading_lists``) is what ADB reads. The tasks judged by its preferences file
are tested over ADB in tests/served/test_app_files_over_adb.py."""

from __future__ import annotations

from tests.tasks.test_bmoca25 import drive
from vlui.env.settings import EnvConfig
from vlui.env.env import open_env
from vlui.served.private_adb import PrivateAdb
from vlui.tasks.catalog import release_tasks

from .test_device import adb_env
from .test_state import release_snapshots

TASK = "b25_wikipedia_saved_tab"


def test_the_saved_tab_task_ends_over_adb_at_the_step_it_ends_in_process(tmp_path) -> None:
    # the served phone has the release's apps, Wikipedia among them, as the release's phones do
    with PrivateAdb("000", envs_dir=release_snapshots(tmp_path, ["000"])) as adb:
        over_adb = open_env(adb_env(adb, snapshots=["000"]), [release_tasks()[TASK]], ["000"], include_xml=True)
        in_process = open_env(EnvConfig(snapshots=["000"]), [release_tasks()[TASK]], ["000"], include_xml=True)
        try:
            runs = [drive(env, TASK, "000", [TASK]) for env in (over_adb, in_process)]
        finally:
            over_adb.close()
            in_process.close()
    assert runs[0] == runs[1] and runs[0][0] is False and runs[0][1][0] is not None
