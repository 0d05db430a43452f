"""Snapseed over ADB: the served simulated phone with Snapseed installed ends "open image and apply noir S03 filter"
at the step the in-process phone ends it, its check read on the UI tree ``uiautomator dump`` gives."""

from __future__ import annotations

from vlui.android.snapshot import ENVS_DIR
from vlui.config import EnvConfig
from vlui.env.env import open_env
from vlui.served.private_adb import PrivateAdb
from vlui.tasks.catalog import release_tasks
from tests.tasks.test_bmoca25 import drive

from .test_device import adb_env


def test_a_snapseed_task_ends_over_adb_at_the_step_it_ends_in_process(tmp_path) -> None:
    # the served phone's snapshot 000 has Snapseed installed, as a release phone has: the ADB backend's check of
    # the release's apps passes, and the in-process phone installs it at the reset
    envs = tmp_path / "envs"
    envs.mkdir()
    (envs / "000.yaml").write_text((ENVS_DIR / "000.yaml").read_text().replace("state: {}",
                                                                              "state: {installed: [snapseed]}"))
    task = release_tasks()["b25_snapseed_s03"]
    with PrivateAdb("000", envs_dir=envs) as adb:
        over_adb = open_env(adb_env(adb, snapshots=["000"]), [task], ["000"], include_xml=True)
        in_process = open_env(EnvConfig(snapshots=["000"]), [task], ["000"], include_xml=True)
        try:
            runs = [drive(env, task.id, "000", [task.id]) for env in (over_adb, in_process)]
        finally:
            over_adb.close()
            in_process.close()
    assert runs[0] == runs[1] and runs[0][0] is False and runs[0][1][0] is not None
