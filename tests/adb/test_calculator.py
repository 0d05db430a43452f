"""A Calculator task over ADB: the simulated phone served with the Calculator installed, judged by B-MoCA's check of
the formula on the UI tree ``uiautomator dump`` gives, ends at the step it ends in process."""

from __future__ import annotations

from pathlib import Path

from vlui.env.settings import EnvConfig
from vlui.env.env import open_env
from vlui.served.private_adb import PrivateAdb
from vlui.tasks.catalog import release_tasks
from tests.tasks.test_bmoca25 import drive

from .test_device import adb_env
from .test_state import release_snapshots

TASK = "b25_calc_cos_60"  # "c60": a scientific key, and a function's letter in the formula's text


def test_a_calculator_task_ends_over_adb_at_the_step_it_ends_in_process(tmp_path: Path) -> None:
    task = release_tasks()[TASK]
    # the served phone has the release's apps, the Calculator among them, as the release's phones do
    with PrivateAdb("000", envs_dir=release_snapshots(tmp_path, ["000"])) as adb:
        over_adb = open_env(adb_env(adb, snapshots=["000"]), [task], ["000"], include_xml=True)
        in_process = open_env(EnvConfig(snapshots=["000"]), [task], ["000"], include_xml=True)
        try:
            runs = [drive(env, TASK, "000") for env in (over_adb, in_process)]
        finally:
            over_adb.close()
            in_process.close()
    assert runs[0] == runs[1] and runs[0][0] is False and runs[0][1][0] is not None
