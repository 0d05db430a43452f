"""Scaling past one process: episodes/s of the same rollouts (the expert on the representative tasks) with their
environments on 1, 2 and 4 workers of a Dask cluster started here (``executor=dask``), against the local executor
(every environment in this process) measured in the same run. The agent acts in this process in both.

Two kinds of phone: the simulated one as it is (a step is milliseconds of this machine's CPU: what the executor
costs), and the simulated one waiting 50 ms before each observation, as an emulator waits for its screen to settle
(B-MoCA waits 3 s): the work the executor spreads over workers. On a machine with fewer cores than workers the first
stops rising at the core count (the workers and the driver share them); docs/scaling.md has this machine's figures.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from vlui.agents import make_agent
from vlui.android.snapshot import snapshot_ids
from vlui.bench import BenchOptions, Record, record
from vlui.config import ExecutorConfig
from vlui.env.settings import EnvConfig
from vlui.jobs.executor import LOCAL, Environments, environments
from vlui.rollout import Job, rollout
from vlui.tasks.catalog import resolve_tasks


def _episodes_per_s(envs: Environments, jobs: list[Job], tasks, snapshots: list[str], slots: int,
                    wait_s: float) -> float:
    factory = envs.factory(EnvConfig(observation_wait_s=wait_s), tasks, snapshots, include_xml=True)
    warm = jobs[:slots]  # builds the environments (and their workers' first renderings) before the clock starts
    rollout(warm, factory, lambda: make_agent({"name": "expert"}), slots, lambda r: None, retries=envs.retries)
    done = []
    start = time.perf_counter()
    rollout(jobs, factory, lambda: make_agent({"name": "expert"}), slots, done.append, retries=envs.retries)
    seconds = time.perf_counter() - start
    assert all(r.success for r in done), "the expert failed an episode: the benchmark measures nothing"
    return len(done) / seconds


def bench_executor(opts: BenchOptions) -> Iterator[Record]:
    tasks = resolve_tasks("representative")
    slots = 8
    for wait_s, count in ((0.0, 4 if opts.quick else 20), (0.05, 2 if opts.quick else 8)):
        snapshots = snapshot_ids("train")[:count]
        jobs = [Job(t.id, s, i) for i, (t, s) in enumerate((t, s) for s in snapshots for t in tasks)]
        phone = "simulated phone" if not wait_s else f"simulated phone waiting {wait_s * 1000:.0f} ms a step"
        local = _episodes_per_s(LOCAL, jobs, tasks, snapshots, slots, wait_s)
        yield record("executor_local_episodes_per_s", local, "episodes/s", episodes=len(jobs), environments=slots,
                     phone=phone, method="executor=local: every environment in this process")
        for workers in (1, 2) if opts.quick else (1, 2, 4):
            with environments(ExecutorConfig(name="dask", workers=workers)) as envs:
                rate = _episodes_per_s(envs, jobs, tasks, snapshots, slots, wait_s)
            yield record("executor_dask_episodes_per_s", rate, "episodes/s", baseline=local, workers=workers,
                         episodes=len(jobs), environments=slots, phone=phone,
                         method=f"executor=dask: {slots} environments on {workers} worker process(es) on 127.0.0.1",
                         baseline_method="executor=local, the same episodes")
