"""The ``collect`` job (``python collect.py``): run an agent over tasks × snapshots × episodes and write a dataset.

Episodes run in ``env.num_envs`` worker processes (on the simulated phone at most one a core: :func:`processes`) and are
written as they finish, each atomically, so a killed collection loses at most the episodes in flight, and running the
same command again resumes it.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import signal
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from tqdm import tqdm

from vlui.agents import agent_class, make_agent
from vlui.android import generate
from vlui.backends import max_parallel, resolve_snapshots
from vlui.agents.settings import AgentConfig, recorded_now
from vlui.config import CollectJobConfig, ExecutorConfig, job_settings
from vlui.env.settings import EnvConfig
from vlui.data.card import update_dataset_card
from vlui.data.format import DatasetWriter, read_info
from vlui.env.env import PhoneEnv, make_env
from vlui.errors import VluiError
from vlui.jobs.executor import environments
from vlui.processes import cores, quiet_resource_tracker, quiet_worker, sigterm_as_interrupt, threads_per_job
from vlui.rollout import EpisodeRecord, Job, dataset_rows, rollout
from vlui.seeding import substream
from vlui.tasks import templates
from vlui.tasks.catalog import Task, resolve_tasks

log = logging.getLogger(__name__)

_worker: dict[str, Any] = {}


def _init_worker(env: EnvConfig, tasks: list[str], agent: AgentConfig, include_xml: bool, options: dict,
                 threads: int = 0) -> None:
    if threads:  # a pool worker (one per core: more torch threads than cores only fight each other)
        quiet_worker()
        import torch

        torch.set_num_threads(threads)
    _worker["make_env"] = lambda: make_env(env, tasks, include_xml=include_xml)
    _worker["env"] = _worker["make_env"]()
    _worker["agent"] = make_agent(agent)
    _worker["options"] = options


def _worker_env() -> PhoneEnv:
    """The worker's environment; a new one when the rollout rebuilds a broken one."""
    env = _worker.pop("env", None) or _worker["make_env"]()
    _worker["current"] = env
    return env


def _run_job(job: Job) -> tuple[int, list[dict[str, Any]] | None, str | None]:
    """One episode in this worker's environment (kept for the next job): (episode id, its dataset rows, None), or
    (episode id, None, why) when the environment failed twice on it (an infrastructure failure, not a demo)."""
    opts = _worker["options"]
    done: list[EpisodeRecord] = []
    full_screen = (lambda env, obs: env.device.screenshot()) if opts["save_full_screen"] else None
    rollout([job], _worker_env, lambda: _worker["agent"], 1, done.append, keep_observations=True,
            observe=full_screen, close_envs=False)
    _worker["env"] = _worker.pop("current")
    record = done[0]
    if record.infra_failure:
        return job.id, None, record.infra_failure
    return job.id, dataset_rows(record, save_xml=opts["save_xml"]), None


@dataclass(frozen=True)
class Collection:
    """A collection resolved once from its settings: the tasks, the phones, every episode with its id and seed, the
    agent, and where the dataset goes. Everything after :func:`plan` reads this, not the settings."""

    tasks: list[Task]
    snapshots: list[str]
    jobs: list[Job]  # in a fixed order, so episode ids and seeds are the same every time the same recipe runs
    env: EnvConfig
    agent: AgentConfig
    root: Path  # the dataset's folder
    recipe: dict[str, Any]  # what makes two collections the same one (a resume checks it)
    options: dict[str, bool]  # save_xml, save_full_screen
    resume: bool

    @property
    def task_ids(self) -> list[str]:
        return [t.id for t in self.tasks]


def plan(job: CollectJobConfig) -> Collection:
    """The collection ``job`` asks for, every task, phone and episode resolved once, the agent checked."""
    tasks = resolve_tasks(templates.expand(job.tasks, job.task_seed, job.task_count, job.task_split),
                          backend=job.env.backend)
    snaps = resolve_snapshots(job.env)
    jobs = []
    for task in tasks:
        for snap in snaps:
            for _ in range(job.episodes_per_pair):
                eid = len(jobs)
                jobs.append(Job(task.id, snap, substream(job.seed, eid), id=eid))
    agent_class(job.agent).refuse_collecting(job.agent)
    if job.save_full_screen and job.executor.name != "local":
        raise VluiError("save_full_screen=true reads each full-resolution screen from the phone, which only "
                        "executor=local does: collect with executor=local, or without save_full_screen")
    make_agent(job.agent)  # a bad agent setting fails here, in one line, not inside every worker
    root = Path(job.paths.data_dir) / job.dataset
    recipe = {"tasks": [t.id for t in tasks], "snapshots": snaps, "episodes_per_pair": job.episodes_per_pair,
              "seed": job.seed, "agent": recorded_agent(job.agent, root), "save_xml": job.save_xml,
              "save_full_screen": job.save_full_screen, "env": job.env.measured()}
    if any(generate.parse_generated(s) for s in snaps):  # what gen-<seed>-<index> means depends on it
        recipe["generator_version"] = generate.version()
    return Collection(tasks, snaps, jobs, job.env, job.agent, root, recipe,
                      {"save_xml": job.save_xml, "save_full_screen": job.save_full_screen}, job.resume)


def recorded_agent(agent: AgentConfig, root: Path) -> dict[str, Any]:
    """The agent's settings as the recipe of the dataset at ``root`` records them; where the dataset was collected
    before each agent type had settings of its own and its recipe holds the same settings in that form
    (:func:`~vlui.agents.settings.recorded_now`), that form, so that the dataset resumes as it is."""
    mine = type(agent).in_recipe(asdict(agent))
    if (root / "meta" / "info.json").exists():
        earlier = read_info(root)["recipe"].get("agent")
        if isinstance(earlier, dict) and recorded_now(earlier) == mine:
            return earlier
    return mine


def run(cfg: DictConfig | CollectJobConfig) -> dict[str, Any]:
    """The collection ``cfg`` (a composed config, or its typed settings) asks for."""
    job = job_settings(cfg, CollectJobConfig)
    return collect(plan(job), job.executor)


def collect(c: Collection, executor: ExecutorConfig) -> dict[str, Any]:
    """Run the collection ``c`` on the phones of ``executor``, writing each episode as it ends; a summary."""
    writer = DatasetWriter(c.root, c.recipe, c.env.spec())
    writer.open(c.resume, plan={j.id: (j.task, j.snapshot, j.seed) for j in c.jobs})
    try:
        with sigterm_as_interrupt():
            if executor.name == "local":
                _collect(c, writer)
            else:
                _collect_on_cluster(c, writer, executor)
    finally:
        writer.close()
    update_dataset_card(c.root)
    return summarize(writer.done(), c.root)


def _todo(c: Collection, writer: DatasetWriter, where: str) -> list[Job]:
    """The episodes not yet in the dataset, said in a line."""
    done = writer.done()
    todo = [j for j in c.jobs if j.id not in done]
    log.info(f"{len(c.jobs)} episodes ({len(c.tasks)} tasks x {len(c.snapshots)} snapshots x "
             f"{c.recipe['episodes_per_pair']}) with agent={c.agent.name}{where} into {c.root}"
             + ("; all already collected" if done and not todo else f"; {len(done)} already there, resuming" if done else ""))
    return todo


def processes(env: EnvConfig, episodes: int) -> int:
    """How many worker processes collect ``episodes`` episodes: ``env.num_envs``, one per device over ADB, and on the
    simulated phone no more than this process's cores (a simulated phone keeps its core busy, so more processes only
    take turns, each with its own memory): train.py's default of 16 on a 2-core machine is 2 processes. Each episode
    is seeded by its id, not by the process that runs it, so the dataset is the same with any number."""
    wanted = max_parallel(env, env.num_envs)
    if env.backend == "sim":
        wanted = min(wanted, cores())
    return max(1, min(wanted, episodes))


def _collect(c: Collection, writer: DatasetWriter) -> None:
    todo = _todo(c, writer, "")
    include_xml = "xml" in agent_class(c.agent).reads or c.options["save_xml"]
    workers = processes(c.env, len(todo))
    if workers < min(c.env.num_envs, len(todo)):
        log.info(f"env.num_envs={c.env.num_envs}: {workers} worker process(es), each collecting its share (at most "
                 f"one a {'core' if c.env.backend == 'sim' else 'device'})")
    with _progress(len(c.jobs), len(c.jobs) - len(todo), writer, c.root) as bar:
        if workers == 1:
            _init_worker(c.env, c.task_ids, c.agent, include_xml, c.options)
            failed = _consume(map(_run_job, todo), writer, bar)
        else:
            ctx = mp.get_context("spawn")
            threads = threads_per_job(workers)
            quiet_resource_tracker()
            # Ctrl-C while the workers start would cut a worker's start-up data short (it then dies printing a
            # traceback): it is held until the pool is up, and the workers start with it blocked
            held: list[int] = []
            handler = signal.signal(signal.SIGINT, lambda *_: held.append(1))
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                pool = ctx.Pool(workers, initializer=_init_worker,
                                initargs=(c.env, c.task_ids, c.agent, include_xml, c.options, threads))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                signal.signal(signal.SIGINT, handler)
            with pool:
                if held:
                    raise KeyboardInterrupt
                failed = _consume(pool.imap_unordered(_run_job, todo), writer, bar)
    _say_failed(failed, "twice")


def _collect_on_cluster(c: Collection, writer: DatasetWriter, executor: ExecutorConfig) -> None:
    """The episodes on ``env.num_envs`` environments of a cluster's workers (vlui/jobs/executor.py), the agent acting
    here; each is written here as it ends, as on this machine."""
    todo = _todo(c, writer, f" on executor={executor.name}")
    if not todo:
        return
    include_xml = "xml" in agent_class(c.agent).reads or c.options["save_xml"]
    failed: list[str] = []
    with _progress(len(c.jobs), len(c.jobs) - len(todo), writer, c.root) as bar:

        def save(record: EpisodeRecord) -> None:
            rows = None if record.infra_failure else dataset_rows(record, save_xml=c.options["save_xml"])
            failed.extend(_consume([(record.job.id, rows, record.infra_failure)], writer, bar))

        with environments(executor) as envs:
            rollout(todo, envs.factory(c.env, c.tasks, c.snapshots, include_xml), lambda: make_agent(c.agent),
                    envs.slots(c.env, c.env.num_envs), save, keep_observations=True, retries=envs.retries)
    _say_failed(failed, f"{executor.retries + 1} times")


@contextlib.contextmanager
def _progress(total: int, done: int, writer: DatasetWriter, root: Path) -> Iterator[tqdm]:
    """The collection's progress bar; Ctrl-C (or SIGTERM) becomes one line saying what is saved."""
    bar = tqdm(total=total, initial=done, unit="episode", dynamic_ncols=True, mininterval=0.5)
    try:
        yield bar
    except KeyboardInterrupt:
        bar.close()
        raise VluiError(f"interrupted: {len(writer.done())} of {total} episodes are saved in {root}; run the same "
                        "command again to collect the rest") from None
    finally:
        bar.close()


def _say_failed(failed: list[str], times: str) -> None:
    if failed:
        log.info(f"{len(failed)} episode(s) not collected: the environment failed {times} on each (the last: "
                 f"{failed[-1]}); run the same command again to collect them")


def _consume(results, writer: DatasetWriter, bar: tqdm) -> list[str]:
    """Write each episode as it arrives; the reasons of those that failed for infrastructure reasons."""
    failed = []
    for episode_id, rows, infra_failure in results:
        bar.update(1)
        if infra_failure:
            failed.append(infra_failure)
            continue
        entry = writer.write(episode_id, rows)
        bar.set_postfix_str(f"{entry['task_id']} on {entry['snapshot_id']}: "
                            f"{'success' if entry['success'] else 'failure'}", refresh=False)
    return failed


def summarize(index: dict[int, dict[str, Any]], root: Path) -> dict[str, Any]:
    """Print successes and failures per task; return them."""
    ok, total = Counter(), Counter()
    for entry in index.values():
        total[entry["task_id"]] += 1
        ok[entry["task_id"]] += entry["success"]
    width = max((len(t) for t in total), default=4)
    print(f"\n{'task':<{width}}  successes")
    for task in total:
        print(f"{task:<{width}}  {ok[task]:>4}/{total[task]:<4}")
    n_ok, n = sum(ok.values()), sum(total.values())
    print(f"{'total':<{width}}  {n_ok:>4}/{n:<4} ({100 * n_ok / max(n, 1):.1f}%), "
          f"{n - n_ok} failed episode(s) kept and flagged (success=false)")
    print(f"dataset: {root}")
    return {"episodes": n, "successes": n_ok, "failures": n - n_ok, "per_task": {t: [ok[t], total[t]] for t in total},
            "path": str(root)}
