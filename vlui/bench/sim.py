"""The simulated phone's speed: steps (a gesture, then the 256x128 observation) per second over the expert's
trajectories of the supported tasks, full-resolution screenshots per second, rollouts over thousands of generated
phones, snapshot loads.

Baseline for steps: the same gestures with the screen drawn directly at the observation's size, as the simulated
phone did before observation version 2 (faster on new screens, but other pixels than a resized screenshot): what
the one definition of the observation costs. Trajectories are replayed from recorded gestures, so only the
device's own work is timed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
from PIL import Image

from vlui.agents.random_agent import RandomAgent
from vlui.agents.walkthrough import walkthrough
from vlui.android.snapshot import snapshot_ids
from vlui.backends import resolve_snapshots
from vlui.bench import BenchOptions, Record, median_seconds, record
from vlui.env.settings import EnvConfig
from vlui.env.env import make_env
from vlui.rollout import Job, rollout
from vlui.sim.phone import SimDevice
from vlui.sim.render import draw_ops, visual_nodes
from vlui.tasks.catalog import task_set, tasks


def drawn_directly(dev: SimDevice, cache: dict, height: int = 256, width: int = 128) -> np.ndarray:
    """The baseline's observation: the screen drawn at ``(height, width)`` (text and icons scaled down), cached by
    drawing content as the renderer caches its own."""
    rend, root = dev.renderer(), dev.frame()
    nodes = visual_nodes(root)
    key = hash(draw_ops(nodes))
    if key not in cache:
        img = Image.new("RGB", (width, height), rend.style.theme.background)
        full_w, full_h = rend.screen
        rend.draw(img, nodes, width / full_w, height / full_h)
        cache[key] = np.asarray(img)
    return cache[key]


def replay(dev: SimDevice, snapshot: str, gestures: list[tuple], direct: dict | None) -> float:
    """Steps per second replaying ``gestures`` (each followed by a 256x128 observation; drawn directly into
    ``direct``, the baseline's cache, when given)."""
    dev.load_snapshot(snapshot)
    start = time.perf_counter()
    for g in gestures:
        getattr(dev, g[0])(*g[1:])
        if direct is not None:
            drawn_directly(dev, direct)
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
    direct_caches: dict[str, dict] = {s: {} for s in snaps}
    warm = [replay(devices[s], s, g, None) for s, g in trajectories]
    direct = [replay(devices[s], s, g, direct_caches[s]) for s, g in trajectories]
    yield record("sim_env_steps", statistics.median(warm), "steps/s", baseline=statistics.median(direct),
                 method="gesture + 256x128 observation (the full screen drawn, then observed as over ADB)",
                 baseline_method="the screen drawn directly at 256x128 (observation version 1)",
                 trajectories=len(trajectories), steps=sum(len(g) for _, g in trajectories),
                 note="median over the expert's trajectories of the supported tasks on every snapshot; one device "
                      "per snapshot, reset between episodes")
    # cold: a fresh device per trajectory, so no frame comes from the render cache
    cold = [replay(SimDevice(s), s, g, None) for s, g in trajectories]
    cold_direct = [replay(SimDevice(s), s, g, {}) for s, g in trajectories]
    yield record("sim_env_steps_cold", statistics.median(cold), "steps/s", baseline=statistics.median(cold_direct),
                 method="as sim_env_steps, with an empty frame cache",
                 baseline_method="the screen drawn directly at 256x128, with an empty cache")

    # full-resolution screenshots of distinct screens (the render cache cleared each time)
    shots, n = [], 0
    for s, gestures in trajectories[: 20 if not opts.quick else 4]:
        d = SimDevice(s)
        for g in gestures:
            getattr(d, g[0])(*g[1:])
            d.renderer().clear_cache()
            t = time.perf_counter()
            d.screenshot()
            shots.append(time.perf_counter() - t)
            n += 1
    yield record("sim_screenshot", 1 / statistics.median(shots), "screenshots/s", screens=n,
                 note="full resolution, nothing cached")

    yield from _rollout_on_generated_phones(opts)

    t_load = median_seconds(lambda: dev.load_snapshot("000"), repeats=opts.repeats * 20)
    yield record("sim_snapshot_load", t_load * 1e3, "ms", note="restore a loaded snapshot's state (in-memory copy)")


def _rollout_steps_per_s(snapshots: list[str], episodes: int, envs: int) -> float:
    """Steps/s of a random agent's rollout of ``episodes`` episodes in ``envs`` phones side by side, each episode on a
    (task, snapshot) pair drawn from ``snapshots``, as online RL and evaluation run them."""
    env = replace(EnvConfig(), snapshots=snapshots)
    names = task_set("representative")
    rng = np.random.default_rng(0)
    jobs = [Job(names[int(rng.integers(len(names)))], snapshots[int(rng.integers(len(snapshots)))], seed=i, id=i)
            for i in range(episodes)]
    steps = []
    start = time.perf_counter()
    rollout(jobs, lambda: make_env(env, names), lambda: RandomAgent(), envs, lambda r: steps.append(len(r.steps)))
    return sum(steps) / (time.perf_counter() - start)


def _rollout_on_generated_phones(opts: BenchOptions) -> Iterator[Record]:
    """A rollout over thousands of generated phones, as ``algo=ppo env.snapshots=random:5000`` runs one: every episode
    on a phone never drawn before. Baseline: the same rollout on the 35 training snapshots."""
    envs, episodes, many = (8, 16, 500) if opts.quick else (32, 96, 5000)
    generated = EnvConfig()
    generated.generator.seed = 7
    phones = resolve_snapshots(replace(generated, snapshots=f"random:{many}"))
    # warm-up on other phones: the locales' strings and the fonts load once per process, as in a long run
    _rollout_steps_per_s(phones[many // 2:], episodes * 2, envs)
    fresh = _rollout_steps_per_s(phones[:many // 2], episodes, envs)
    known = _rollout_steps_per_s(snapshot_ids("train"), episodes, envs)
    yield record("sim_rollout_generated", fresh, "steps/s", baseline=known,
                 method=f"random agent, {episodes} episodes in {envs} phones drawn from {many} generated ones",
                 baseline_method="the same on the 35 training snapshots",
                 note="a generated phone's first screens are rendered on first use; a phone is checked once per "
                      "process however many environments list it")
