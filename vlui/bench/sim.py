"""The simulated phone's speed: steps (a gesture, then the 256x128 observation) per second over the expert's
trajectories of the supported tasks, full-resolution screenshots per second, snapshot loads.

Baseline for steps: the same gestures with the observation made the naive way, by rendering the full screen and
resizing it. Trajectories are replayed from recorded gestures, so only the device's own work is timed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator

import numpy as np
from PIL import Image

from vlui.agents.walkthrough import walkthrough
from vlui.android.snapshot import snapshot_ids
from vlui.bench import BenchOptions, Record, median_seconds, record
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import task_set, tasks


def replay(dev: SimDevice, snapshot: str, gestures: list[tuple], naive: bool) -> float:
    """Steps per second replaying ``gestures`` (each followed by a 256x128 observation)."""
    dev.load_snapshot(snapshot)
    start = time.perf_counter()
    for g in gestures:
        getattr(dev, g[0])(*g[1:])
        if naive:
            np.asarray(Image.fromarray(dev.screenshot()).resize((128, 256), Image.BILINEAR))
        else:
            dev.observation(256, 128)
    return len(gestures) / (time.perf_counter() - start)


def bench_sim(opts: BenchOptions) -> Iterator[Record]:
    snaps = ["000", "030", "109"] if opts.quick else snapshot_ids("all")
    # tasks that start from a state of their own (a call in progress, ...) are left out: replays start at boot
    names = [name for name in task_set("supported") if not tasks()[name].state]
    names = names[:4] if opts.quick else names
    dev = SimDevice(snaps[0])
    trajectories = [(s, walkthrough(dev, name, s).gestures) for s in snaps for name in names]
    # as an environment uses it: one device per snapshot, reset between episodes (its render cache persists)
    devices = {s: SimDevice(s) for s in snaps}
    warm = [replay(devices[s], s, g, naive=False) for s, g in trajectories]
    naive = [replay(devices[s], s, g, naive=True) for s, g in trajectories]
    yield record("sim_env_steps", statistics.median(warm), "steps/s", baseline=statistics.median(naive),
                 method="gesture + observation drawn at 256x128", baseline_method="full-resolution render + resize",
                 trajectories=len(trajectories), steps=sum(len(g) for _, g in trajectories),
                 note="median over the expert's trajectories of the supported tasks on every snapshot; one device "
                      "per snapshot, reset between episodes")
    # cold: a fresh device per trajectory, so no frame comes from the render cache
    cold = [replay(SimDevice(s), s, g, naive=False) for s, g in trajectories]
    yield record("sim_env_steps_cold", statistics.median(cold), "steps/s", baseline=statistics.median(naive),
                 method="as sim_env_steps, with an empty frame cache", baseline_method="full-resolution render + resize")

    # full-resolution screenshots of distinct screens (the render cache cleared each time)
    shots, n = [], 0
    for s, gestures in trajectories[: 20 if not opts.quick else 4]:
        d = SimDevice(s)
        for g in gestures:
            getattr(d, g[0])(*g[1:])
            d._renderer()._cache.clear()
            t = time.perf_counter()
            d.screenshot()
            shots.append(time.perf_counter() - t)
            n += 1
    yield record("sim_screenshot", 1 / statistics.median(shots), "screenshots/s", screens=n,
                 note="full resolution, nothing cached")

    t_load = median_seconds(lambda: dev.load_snapshot("000"), repeats=opts.repeats * 20)
    yield record("sim_snapshot_load", t_load * 1e3, "ms", note="restore a loaded snapshot's state (in-memory copy)")
