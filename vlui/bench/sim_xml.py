"""The expert's episodes on the simulated phone without screens (``include_screen=False``, as the expert, the text
agents and the suite's expert tests run them): episodes and steps per second on the training snapshots and on
generated phones, against the same episodes on phones that make anew what a reset or a step could take again
(``SimDevice(reuse=False)``: the boot state deep-copied at every reset, every UI dump written out again)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

from vlui.agents.expert import ExpertAgent
from vlui.android.snapshot import snapshot_ids
from vlui.backends import resolve_snapshots
from vlui.bench import BenchOptions, Record, record
from vlui.env.env import PhoneEnv
from vlui.env.settings import EnvConfig
from vlui.rollout import Job, rollout
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import resolve_tasks, task_set


def _env(snapshots: list[str], names: list[str], reuse: bool) -> PhoneEnv:
    """One environment over ``snapshots`` that observes the UI dump only, on a phone with ``reuse`` on or off."""
    return PhoneEnv(SimDevice(snapshots[0], reuse=reuse), resolve_tasks(names), snapshots, include_xml=True,
                    include_screen=False)


def _episodes(env: PhoneEnv, jobs: list[Job]) -> tuple[int, float]:
    """(steps, CPU seconds) of the expert's episodes ``jobs`` in ``env``."""
    steps: list[int] = []
    cpu = time.process_time()
    rollout(jobs, lambda: env, ExpertAgent, 1, lambda r: steps.append(len(r.steps)), close_envs=False)
    return sum(steps), time.process_time() - cpu


def _paired(name: str, phones: list[str], names: list[str], what: str) -> Record:
    """The expert's episodes of ``names`` on ``phones``, phone by phone, alternating reuse on and off (and which goes
    first), so that a change in the machine's load falls on both alike."""
    envs = {reuse: _env(phones, names, reuse) for reuse in (True, False)}
    totals = {True: [0, 0.0], False: [0, 0.0]}
    episodes = 0
    for i, phone in enumerate(phones):
        jobs = [Job(task, phone, seed=k, id=k) for k, task in enumerate(names)]
        episodes += len(jobs)
        for reuse in ((True, False) if i % 2 == 0 else (False, True)):
            steps, cpu = _episodes(envs[reuse], jobs)
            totals[reuse][0] += steps
            totals[reuse][1] += cpu
    (steps, cpu), (steps_before, cpu_before) = totals[True], totals[False]
    if steps != steps_before:
        raise RuntimeError(f"{name}: the episodes took {steps} steps with reuse and {steps_before} without")
    return record(name, steps / cpu, "steps/s", baseline=steps_before / cpu_before,
                  episodes_per_s=round(episodes / cpu, 2), baseline_episodes_per_s=round(episodes / cpu_before, 2),
                  episodes=episodes, steps=steps,
                  method=f"the expert's episodes of {what}, one environment, UI dump only (CPU time)",
                  baseline_method="the same on a phone with reuse=False: the boot state deep-copied at every reset, "
                                  "every UI dump written anew")


def bench_sim_xml(opts: BenchOptions) -> Iterator[Record]:
    names = task_set("supported")
    names = names[:6] if opts.quick else names
    count = 2 if opts.quick else 6
    train = snapshot_ids("train")[:count]
    generated = EnvConfig()
    generated.generator.seed = 11
    phones = resolve_snapshots(replace(generated, snapshots=f"random:{count}"))
    # the strings, fonts and expert plans load once per process, as in a long run
    _episodes(_env(train[-1:], names, True), [Job(t, train[-1], seed=0, id=k) for k, t in enumerate(names)])
    yield _paired("sim_xml_train", train, names, f"{len(names)} supported tasks x {len(train)} training "
                                                          "snapshots")
    yield _paired("sim_xml_generated", phones, names, f"{len(names)} supported tasks x {len(phones)} "
                                                               "generated phones")
