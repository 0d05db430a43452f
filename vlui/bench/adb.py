"""Steps per second through the ADB path: the simulated phone served over the ADB protocol, a private adb server
(adbutils' bundled binary) and the ADB backend, each step a gesture, the log read up to that gesture, and a
full-resolution screenshot resized to the 256x128 observation.

Baseline: the same gestures on the simulated phone in process (what ``env=sim`` does). The main figure is taken after
one untimed pass, with the screens already drawn once on both sides, as over the many episodes of a collection or an
evaluation; the first pass is reported too. Also reported: resets with a task's starting state, a check of Clock's
alarms (its database copied as root and pulled), and raw against PNG ``screencap`` (the backend's ``screencap=auto``
keeps the faster), all through the same server.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator

from vlui.adb.device import AdbDevice
from vlui.agents.walkthrough import walkthrough
from vlui.bench import BenchOptions, Record, median_seconds, record
from vlui.device import Device
from vlui.served.private_adb import PrivateAdb
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import task_set


def replay(dev: Device, snapshot: str, gestures: list[tuple]) -> tuple[int, float]:
    """Reset to ``snapshot`` as an environment does, then time ``gestures`` as environment steps: (steps, seconds)."""
    dev.load_snapshot(snapshot)
    dev.key("HOME")
    dev.clear_log()
    mark = dev.log_mark()
    start = time.perf_counter()
    for g in gestures:
        getattr(dev, g[0])(*g[1:])
        dev.log_lines(mark)
        mark = dev.log_mark()
        dev.observation(256, 128)
    return len(gestures), time.perf_counter() - start


def steps_per_second(dev: Device, trajectories: list[tuple[str, list[tuple]]], repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        steps, seconds = zip(*(replay(dev, s, g) for s, g in trajectories), strict=True)
        rates.append(sum(steps) / sum(seconds))
    return statistics.median(rates)


# a reset as an environment does it for a task with a starting state: the airplane-mode template's, plus volumes
RESET_STATE = {"airplane_mode": True, "wifi": True, "volume": {"media": 12, "call": 4, "ring": 0, "alarm": 1}}
ALARMS_CHECK = {"alarms": {"contains": {"hour": 9, "minutes": 0}}}  # what B-MoCA's Clock evaluators read, each step


def reset_seconds(dev: Device, snapshot: str, repeats: int) -> float:
    """The median time of an environment's reset: load the snapshot, apply :data:`RESET_STATE`, clear the log and
    take the first observation."""
    def reset() -> None:
        dev.load_snapshot(snapshot)
        dev.set_state(RESET_STATE)
        dev.clear_log()
        dev.log_mark()
        dev.observation(256, 128)

    return median_seconds(reset, repeats)


def bench_adb(opts: BenchOptions) -> Iterator[Record]:
    snapshot = "000"  # a Pixel 3: 1080x2160, the size of most B-MoCA snapshots
    sim = SimDevice(snapshot)
    names = task_set("representative")[: 2 if opts.quick else None]
    trajectories = [(snapshot, walkthrough(sim, name, snapshot).gestures) for name in names]
    repeats = 1 if opts.quick else max(1, opts.repeats // 2)
    with PrivateAdb(snapshot, mode="process", noise=True) as server:
        dev = AdbDevice(server.serial, adb_port=server.adb_port, log_tags=None, screencap="raw",
                        console_token_file=str(server.home / ".emulator_console_auth_token"))
        try:
            cold = steps_per_second(dev, trajectories, 1)  # first pass: every screen is drawn for the first time
            over_adb = steps_per_second(dev, trajectories, repeats)
            resets = 1 / reset_seconds(dev, snapshot, opts.repeats)
            alarms = median_seconds(lambda: dev.check_state(ALARMS_CHECK), opts.repeats)
            raw = median_seconds(lambda: dev.screencap_as("raw"), opts.repeats)
            png = median_seconds(lambda: dev.screencap_as("png"), opts.repeats)
        finally:
            dev.close()
    sim = SimDevice(snapshot)
    sim_cold = steps_per_second(sim, trajectories, 1)
    in_process = steps_per_second(sim, trajectories, repeats)
    sim_resets = 1 / reset_seconds(sim, snapshot, opts.repeats)
    sim_alarms = median_seconds(lambda: sim.check_state(ALARMS_CHECK), opts.repeats)
    n = sum(len(g) for _, g in trajectories)
    method = (f"ADB backend -> private adb server -> simulated phone served in a subprocess; {n} steps of "
              f"{len(trajectories)} representative tasks on snapshot {snapshot} (1080x2160), each a gesture, the log "
              "read up to it and a raw screencap resized to 256x128")
    yield record("adb_env_steps", over_adb, "steps/s", baseline=in_process, target=50,
                 method=method + "; screens seen before (frame caches warm, as over many episodes)",
                 baseline_method="the same gestures on the simulated phone in process (env=sim)")
    yield record("adb_env_steps_first_pass", cold, "steps/s", baseline=sim_cold,
                 method=method + "; every screen drawn for the first time",
                 baseline_method="the same on the simulated phone in process, also a first pass")
    yield record("adb_env_resets", resets, "resets/s", baseline=sim_resets,
                 method=f"ADB backend, as above: snapshot {snapshot} loaded through the emulator console, a starting "
                        "state (airplane mode on, Wi-Fi on, four volumes) set with shell commands and read back, the "
                        "log cleared, the first observation",
                 baseline_method="the same reset of the simulated phone in process")
    yield record("adb_alarms_check", 1 / alarms, "checks/s", baseline=1 / sim_alarms,
                 method="ADB backend, as above: a release check of Clock's alarms, alarms.db copied as root (su 0 cp) "
                        "to /sdcard, pulled through the sync protocol, removed, and its alarm_templates read",
                 baseline_method="the same check on the simulated phone in process (its state)")
    yield record("adb_screencap_raw", 1 / raw, "screenshots/s", baseline=1 / png,
                 method="exec:screencap, 1080x2160 RGBA, decoded", baseline_method="exec:screencap -p, PNG decoded")
