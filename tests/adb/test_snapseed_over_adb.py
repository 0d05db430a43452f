"""Snapseed over ADB: the served simulated phone with Snapseed installed ends "open image and apply noir S03 filter"
at the step the in-process phone ends it, its check read on the UI tree ``uiautomator dump`` gives."""

from __future__ import annotations

from vlui.env.settings import EnvConfig
from vlui.env.env import open_env
from vlui.served.private_adb import PrivateAdb
from vlui.tasks.catalog import release_tasks
from tests.tasks.test_bmoca25 import drive

from .test_device import adb_env
from .test_state import release_snapshots


def test_a_snapseed_task_ends_over_adb_at_the_step_it_ends_in_process(tmp_path) -> None:
    # the served phone's snapshot 000 has the release's apps installed: the ADB backend's check of them passes, and
    # the in-process phone installs them at the reset
    task = release_tasks()["b25_snapseed_s03"]
    with PrivateAdb("000", envs_dir=release_snapshots(tmp_path)) as adb:
        over_adb = open_env(adb_env(adb, snapshots=["000"]), [task], ["000"], include_xml=True)
        in_process = open_env(EnvConfig(snapshots=["000"]), [task], ["000"], include_xml=True)
        try:
            runs = [drive(env, task.id, "000", [task.id]) for env in (over_adb, in_process)]
        finally:
            over_adb.close()
            in_process.close()
    assert runs[0] == runs[1] and runs[0][0] is False and runs[0][1][0] is not None
