"""Helpers for the tests of B-MoCA release 2.5's apps on the simulated phone (tests/sim/test_<app>.py): a phone with
the app installed and open, the app's tasks whose evaluator check holds, and the same taps on the phone served over
ADB and in process, with the check's verdict on each."""

from __future__ import annotations

from tests.adb.test_device import adb_env
from tests.sim.driver import centre, one, tap
from vlui.adb.device import AdbDevice
from vlui.android.apps import apps
from vlui.backends import make_device
from vlui.env.ui_text import parse_xml
from vlui.served.private_adb import PrivateAdb
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import release_pins, release_tasks
from vlui.tasks.checks import check_holds


def opened(key: str, snapshot: str = "000", state: dict | None = None) -> SimDevice:
    """Snapshot ``snapshot`` with app ``key`` installed (as a release run's phone has it), its state set, open past
    its starting window."""
    dev = SimDevice(snapshot, noise=False)
    dev.install_apps([release_pins()[key]])
    if state:
        dev.set_state({key: state})
    dev.launch(key)
    dev.state.starting = None
    dev.state_changed()
    return dev


def by_rid(dev: SimDevice, rid: str):
    return one(dev, lambda n: n.rid == rid, rid)


def holding(dev, key: str) -> list[str]:
    """App ``key``'s release tasks whose evaluator check holds on ``dev``'s screen now (either backend)."""
    return [t.id for t in release_tasks().values() if key in t.apps
            and check_holds(t.evaluator_check, dev, lambda: parse_xml(dev.ui_xml()))]


def verdicts_over_adb(key: str, rids: list[str]) -> list[tuple[list[str], list[str]]]:
    """Snapshot 000 served over ADB (a real adb server, the phone served in this process) and in process, app
    ``key`` installed on both and started (over ADB with ``am start``); before each tap on ``rids`` and after the
    last, the app's tasks whose check holds: (over ADB, in process)."""
    local = opened(key)
    info = apps()[key]
    seen = []
    with PrivateAdb("000") as server:
        dev = make_device(adb_env(server), "000")
        assert isinstance(dev, AdbDevice)
        try:
            server.phone.device.install_apps([release_pins()[key]])
            dev.shell(f"am start -n {info.package}/{info.activity}")
            server.phone.device.state.starting = None  # its first frame drawn, as in ``opened``
            server.phone.device.state_changed()
            for rid in [*rids, None]:
                seen.append((holding(dev, key), holding(local, key)))
                if rid is not None:
                    node = by_rid(local, rid)
                    dev.tap(*centre(node))
                    tap(local, node)
        finally:
            dev.close()
    return seen
