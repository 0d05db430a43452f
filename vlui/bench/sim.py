"""The simulated phone's speed: steps (a gesture, then the 256x128 observation) per second over the expert's
trajectories of the supported tasks, the frame cache's hit rate and gain in workloads that see screens again
(a collection, an evaluation run twice), full-resolution screenshots per second, rollouts over thousands of
generated phones, snapshot loads.

Baseline for steps: the same gestures on phones that keep their frames each in their own cache, as the simulated
phone did before its phones shared the process's (``SimDevice(frames=None)``, the same pixels). Trajectories are
replayed from recorded gestures, so only the device's own work is timed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from vlui.agents.expert import ExpertAgent
from vlui.agents.random_agent import RandomAgent
from vlui.agents.walkthrough import walkthrough
from vlui.android.snapshot import snapshot_ids
from vlui.backends import resolve_snapshots
from vlui.bench import BenchOptions, Record, median_seconds, record
from vlui.env.settings import EnvConfig
from vlui.env.env import PhoneEnv, make_env
from vlui.rollout import Job, rollout
from vlui.sim.phone import SimDevice
from vlui.sim.render import SHARED_FRAMES, FrameCache
from vlui.tasks.catalog import resolve_tasks, task_set, tasks


def replay(dev: SimDevice, snapshot: str, gestures: list[tuple]) -> tuple[float, float]:
    """Seconds replaying ``gestures``, each followed by a 256x128 observation: (wall-clock, this process's CPU time,
    which other work on a shared machine disturbs less)."""
    dev.load_snapshot(snapshot)
    start, cpu = time.perf_counter(), time.process_time()
    for g in gestures:
        getattr(dev, g[0])(*g[1:])
        dev.observation(256, 128)
    return time.perf_counter() - start, time.process_time() - cpu


def _steps_record(name: str, lengths: list[int], runs: list[tuple[float, float]], before: list[tuple[float, float]],
                  **extra) -> Record:
    """The median over trajectories (of ``lengths`` steps) of steps per second in ``runs``, against the baseline's
    ``before``; with the same in CPU time (``cpu_value``, ``cpu_baseline``, ``cpu_ratio``)."""
    def rate(times: list[tuple[float, float]], i: int) -> float:
        return statistics.median(n / t[i] for n, t in zip(lengths, times, strict=True))

    return record(name, rate(runs, 0), "steps/s", baseline=rate(before, 0), cpu_value=round(rate(runs, 1), 1),
                  cpu_baseline=round(rate(before, 1), 1), cpu_ratio=round(rate(runs, 1) / rate(before, 1), 3),
                  **extra)


def bench_sim(opts: BenchOptions) -> Iterator[Record]:
    snaps = ["000", "030", "109"] if opts.quick else snapshot_ids("all")
    # tasks that start from a state of their own (a call in progress, ...) are left out: replays start at boot
    names = [name for name in task_set("supported") if not tasks()[name].state]
    names = names[:4] if opts.quick else names
    dev = SimDevice(snaps[0])
    trajectories = [(s, walkthrough(dev, name, s).gestures) for s in snaps for name in names]
    # the labels, icons and wallpapers that the phones of a locale and size share are made once per process, as in a
    # long run, by a pass over the same trajectories on other phones; it leaves their screens in the process's frame
    # cache too, as an earlier episode over the same phones does (a second evaluation, DAgger's next round)
    SHARED_FRAMES.clear()
    for s, g in trajectories:
        replay(SimDevice(s), s, g)
    warm_hits = (SHARED_FRAMES.hits, SHARED_FRAMES.misses)
    # as an environment uses it: one device per snapshot, reset between episodes. Before: each device's own frames
    devices = {s: SimDevice(s) for s in snaps}
    own = {s: SimDevice(s, frames=None) for s in snaps}
    warm, before = [], []
    for s, g in trajectories:  # alternated, so that a change in the machine's load falls on both alike
        warm.append(replay(devices[s], s, g))
        before.append(replay(own[s], s, g))
    lengths = [len(g) for _, g in trajectories]
    hits, misses = SHARED_FRAMES.hits - warm_hits[0], SHARED_FRAMES.misses - warm_hits[1]
    yield _steps_record("sim_env_steps", lengths, warm, before,
                        method="gesture + 256x128 observation, the process's frame cache holding the screens of a "
                               "pass before (a new screen drawn over the last one, then observed as over ADB)",
                        baseline_method="each device its own frame cache, as before the process's was shared",
                        trajectories=len(trajectories), steps=sum(lengths), hit_rate=round(hits / (hits + misses), 3),
                        cache_mb=round(SHARED_FRAMES.size()[1] / 2**20),
                        note="median over the expert's trajectories of the supported tasks on every snapshot; one device "
                             "per snapshot, reset between episodes; a pass before on other devices made the labels, "
                             "icons and wallpapers and left the screens in the process's cache")
    # cold: a fresh device per trajectory, and nothing in its frame cache
    cold, cold_before = [], []
    for s, g in trajectories:
        cold.append(replay(SimDevice(s, frames=FrameCache()), s, g))
        cold_before.append(replay(SimDevice(s, frames=None), s, g))
    yield _steps_record("sim_env_steps_cold", lengths, cold, cold_before,
                        method="as sim_env_steps, with an empty frame cache",
                        baseline_method="each device its own frame cache, empty (the same work: nothing seen before)")
    yield from _workloads(opts)

    # full-resolution screenshots of distinct screens (the render cache cleared each time)
    shots, n = [], 0
    for s, gestures in trajectories[: 20 if not opts.quick else 4]:
        d = SimDevice(s, frames=FrameCache())
        for g in gestures:
            getattr(d, g[0])(*g[1:])
            d.renderer().frames.clear()
            d.renderer().drop_canvas()
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


def _workload(jobs: list[Job], envs: int, frames: FrameCache | None) -> tuple[int, float]:
    """(steps, CPU seconds) of the expert's episodes ``jobs`` in ``envs`` phones side by side, each step observed at
    256x128 as a policy's episode is, on phones whose frames are ``frames`` (None: each its own, as before)."""
    snapshots, names = sorted({j.snapshot for j in jobs}), sorted({j.task for j in jobs})

    def make() -> PhoneEnv:
        return PhoneEnv(SimDevice(snapshots[0], frames=frames), resolve_tasks(names), snapshots, include_xml=True)

    steps = []
    cpu = time.process_time()
    rollout(jobs, make, ExpertAgent, envs, lambda r: steps.append(len(r.steps)))
    return sum(steps), time.process_time() - cpu


def _workloads(opts: BenchOptions) -> Iterator[Record]:
    """How often the process's frame cache has a step's screen in workloads that see screens again, and what it
    saves against each phone drawing its own: a collection (the six representative tasks on 20 training phones,
    task after task in one environment, as ``collect`` orders them) and an evaluation of the expert run twice over
    the test phones in two environments (as a policy's evaluation over two seeds draws its screens)."""
    names = task_set("representative")
    phones = snapshot_ids("train")[: 4 if opts.quick else 20]
    test = snapshot_ids("test")[: 2 if opts.quick else None]
    collection = [Job(t, s, seed=i, id=i) for i, (t, s) in enumerate((t, s) for t in names for s in phones)]
    evaluation = [Job(t, s, seed=run, run=run, id=i) for run in (0, 1)
                  for i, (t, s) in enumerate((t, s) for s in test for t in names)]
    for name, jobs, envs, what in (("sim_collection", collection, 1, f"6 tasks x {len(phones)} training phones"),
                                   ("sim_evaluation_twice", evaluation, 2, f"6 tasks x {len(test)} test phones, "
                                                                           "twice")):
        _workload(jobs, envs, None)  # the labels, icons and wallpapers of these phones made first, for both sides
        SHARED_FRAMES.clear()
        hits, misses = SHARED_FRAMES.hits, SHARED_FRAMES.misses
        steps, cpu = _workload(jobs, envs, SHARED_FRAMES)
        hits, misses = SHARED_FRAMES.hits - hits, SHARED_FRAMES.misses - misses
        steps_before, cpu_before = _workload(jobs, envs, None)
        yield record(name, steps / cpu, "steps/s", baseline=steps_before / cpu_before, steps=steps,
                     hit_rate=round(hits / (hits + misses), 3),
                     method=f"the expert's episodes, {what}, observed at 256x128, the process's frame cache (CPU time)",
                     baseline_method="each phone its own frame cache, as before the process's was shared")
