"""The B-MoCA success detectors against the simulated phone's log: each supported task's detector fires when (and only
when) it is done, within its step limit, on all 45 snapshots, from the task's starting state."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from vlui.sim.logcat import parse_threadtime
from vlui.sim.phone import SimDevice
from vlui.sim.scripts import FLOWS, Driver
from vlui.sim.snapshot import snapshot_ids
from tests.agents.test_settings_phone_detectors import INHERENT_OVERLAPS

TASKS = Path(__file__).resolve().parents[2] / "vlui" / "tasks" / "data" / "bmoca.yaml"


@lru_cache(maxsize=1)
def tasks() -> dict[str, dict]:
    return {t["id"]: t for t in yaml.safe_load(TASKS.read_text())["tasks"]}


def fired(lines: list[str]) -> set[str]:
    """The supported tasks whose detector matches any of ``lines``."""
    out = set()
    for line in lines:
        f = parse_threadtime(line)
        for tid in FLOWS:
            t = tasks()[tid]
            if f["tag"] == t["log_tag"] and re.match(t["regex"], f["message"]):
                out.add(tid)
    return out


@pytest.fixture(scope="module")
def device() -> SimDevice:
    return SimDevice("000")


@pytest.mark.parametrize("snap", snapshot_ids("all"))
def test_every_supported_task_succeeds_within_its_step_limit(device: SimDevice, snap: str) -> None:
    for tid, flow in FLOWS.items():
        device.load_snapshot(snap)
        device.set_state(tasks()[tid].get("state", {}))  # as the environment's reset does
        steps: list[set[str]] = []
        tap, swipe = device.tap, device.swipe

        def watch(fn):
            def wrapped(*a, **k):
                mark = device.log_mark()
                fn(*a, **k)
                steps.append(fired(device.log_lines(mark)))
            return wrapped

        device.tap, device.swipe = watch(tap), watch(swipe)
        try:
            flow(Driver(device))
        finally:
            del device.tap, device.swipe
        limit = tasks()[tid]["step_limit"]
        assert len(steps) <= limit, f"{tid} on {snap}: {len(steps)} steps > limit {limit}"
        assert tid in steps[-1], f"{tid} on {snap}: the detector did not fire on the final step"
        assert not any(tid in s for s in steps[:-1]), f"{tid} on {snap}: the detector fired before the task was done"
        opened = {f"open_{app}" for app in device.state.recents}
        extra = set().union(*steps) - {tid} - opened - {other for done, other in INHERENT_OVERLAPS if done == tid}
        assert not extra, f"{tid} on {snap}: detectors of tasks not done fired: {sorted(extra)}"
