"""The ``collect`` job (``python collect.py``): run an agent over tasks × snapshots × episodes and write a dataset.

Episodes run in ``env.num_envs`` worker processes and are written as they finish, each atomically, so a killed
collection loses at most the episodes in flight, and running the same command again resumes it.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from vlui.agents import agent_class, make_agent
from vlui.android import generate
from vlui.backends import max_parallel, resolve_snapshots
from vlui.config import check_settings, settings
from vlui.agents.settings import AgentConfig
from vlui.env.settings import EnvConfig
from vlui.data.card import update_dataset_card
from vlui.data.format import DatasetWriter
from vlui.env.agent import reads
from vlui.env.env import PhoneEnv, make_env
from vlui.errors import VluiError
from vlui.jobs.executor import environments
from vlui.processes import quiet_resource_tracker, quiet_worker, sigterm_as_interrupt, threads_per_job
from vlui.rollout import EpisodeRecord, Job, dataset_rows, rollout
from vlui.seeding import substream
from vlui.tasks import templates
from vlui.tasks.catalog import Task, resolve_tasks

log = logging.getLogger(__name__)

_worker: dict[str, Any] = {}


def _init_worker(env: EnvConfig, tasks: list[str], agent_cfg: dict, include_xml: bool, options: dict,
                 threads: int = 0) -> None:
    if threads:  # a pool worker (one per core: more torch threads than cores only fight each other)
        quiet_worker()
        import torch

        torch.set_num_threads(threads)
    _worker["make_env"] = lambda: make_env(env, tasks, include_xml=include_xml)
    _worker["env"] = _worker["make_env"]()
    _worker["agent"] = make_agent(agent_cfg)
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


def plan(cfg: DictConfig) -> tuple[list[str], list[str], list[Job]]:
    """(task ids, snapshots, jobs) in a fixed order, so episode ids and seeds are the same every time the same
    recipe runs."""
    tasks = [t.id for t in _tasks(cfg)]
    snaps = resolve_snapshots(settings(EnvConfig, cfg.env, "env"))
    if cfg.episodes_per_pair < 1:
        raise VluiError(f"episodes_per_pair must be at least 1, not {cfg.episodes_per_pair}")
    jobs = []
    for task in tasks:
        for snap in snaps:
            for _ in range(cfg.episodes_per_pair):
                eid = len(jobs)
                jobs.append(Job(task, snap, substream(cfg.seed, eid), id=eid))
    return tasks, snaps, jobs


def _tasks(cfg: DictConfig) -> list[Task]:
    """The tasks ``cfg.tasks`` names, templates' instances drawn."""
    spec = OmegaConf.to_object(cfg.tasks) if OmegaConf.is_config(cfg.tasks) else cfg.tasks
    return resolve_tasks(templates.expand(spec, cfg.task_seed, cfg.task_count, cfg.task_split),
                         backend=cfg.env.backend)


def run(cfg: DictConfig) -> dict[str, Any]:
    check_settings(cfg)
    tasks, snaps, jobs = plan(cfg)
    env = settings(EnvConfig, cfg.env, "env")
    agent_cfg = OmegaConf.to_container(cfg.agent, resolve=True)
    if agent_cfg.get("actions") == "extended":
        raise VluiError("agent.actions=extended cannot collect a dataset: datasets hold dual-gestures, and a long press, "
                        "typed text, open_app, scroll, wait, keyboard_enter or answer is none; collect with "
                        "agent.actions=bmoca (evaluate.py takes either)")
    make_agent(agent_cfg)  # a bad agent setting fails here, in one line, not inside every worker
    root = Path(cfg.paths.data_dir) / cfg.dataset
    recipe = {"tasks": tasks, "snapshots": snaps, "episodes_per_pair": cfg.episodes_per_pair, "seed": cfg.seed,
              "agent": AgentConfig.in_recipe(agent_cfg), "save_xml": cfg.save_xml,
              "save_full_screen": cfg.save_full_screen,
              "env": env.measured()}
    if any(generate.parse_generated(s) for s in snaps):  # what gen-<seed>-<index> means depends on it
        recipe["generator_version"] = generate.version()
    writer = DatasetWriter(root, recipe, env.spec())
    writer.open(cfg.resume, plan={j.id: (j.task, j.snapshot, j.seed) for j in jobs})
    try:
        with sigterm_as_interrupt():
            if cfg.executor.name == "local":
                _collect(cfg, writer, tasks, snaps, jobs, env, agent_cfg, root)
            else:
                _collect_on_cluster(cfg, writer, tasks, snaps, jobs, env, agent_cfg, root)
    finally:
        writer.close()
    update_dataset_card(root)
    return summarize(writer.done(), root)


def _collect(cfg: DictConfig, writer: DatasetWriter, tasks: list[str], snaps: list[str],
             jobs: list[Job], env: EnvConfig, agent_cfg: dict, root: Path) -> None:
    done = writer.done()
    todo = [j for j in jobs if j.id not in done]
    log.info(f"{len(jobs)} episodes ({len(tasks)} tasks x {len(snaps)} snapshots x {cfg.episodes_per_pair}) "
             f"with agent={agent_cfg['name']} into {root}"
             + ("; all already collected" if done and not todo else f"; {len(done)} already there, resuming" if done else ""))
    include_xml = "xml" in reads(agent_class(agent_cfg)) or cfg.save_xml
    options = {"save_xml": cfg.save_xml, "save_full_screen": cfg.save_full_screen}
    workers = max(1, min(max_parallel(env, env.num_envs), len(todo)))
    with _progress(len(jobs), len(done), writer, root) as bar:
        if workers == 1:
            _init_worker(env, tasks, agent_cfg, include_xml, options)
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
                                initargs=(env, tasks, agent_cfg, include_xml, options, threads))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                signal.signal(signal.SIGINT, handler)
            with pool:
                if held:
                    raise KeyboardInterrupt
                failed = _consume(pool.imap_unordered(_run_job, todo), writer, bar)
    _say_failed(failed, "twice")


def _collect_on_cluster(cfg: DictConfig, writer: DatasetWriter, tasks: list[str], snaps: list[str],
                        jobs: list[Job], env: EnvConfig, agent_cfg: dict, root: Path) -> None:
    """The episodes on ``env.num_envs`` environments of a cluster's workers (vlui/jobs/executor.py), the agent acting
    here; each is written here as it ends, as on this machine."""
    if cfg.save_full_screen:
        raise VluiError("save_full_screen=true reads each full-resolution screen from the phone, which only "
                        "executor=local does: collect with executor=local, or without save_full_screen")
    done = writer.done()
    todo = [j for j in jobs if j.id not in done]
    log.info(f"{len(jobs)} episodes ({len(tasks)} tasks x {len(snaps)} snapshots x {cfg.episodes_per_pair}) "
             f"with agent={agent_cfg['name']} on executor={cfg.executor.name} into {root}"
             + (f"; {len(done)} already there, resuming" if done else ""))
    if not todo:
        return
    include_xml = "xml" in reads(agent_class(agent_cfg)) or cfg.save_xml
    task_objects = _tasks(cfg)
    failed: list[str] = []
    with _progress(len(jobs), len(done), writer, root) as bar:

        def save(record: EpisodeRecord) -> None:
            rows = None if record.infra_failure else dataset_rows(record, save_xml=cfg.save_xml)
            failed.extend(_consume([(record.job.id, rows, record.infra_failure)], writer, bar))

        with environments(cfg.executor) as envs:
            rollout(todo, envs.factory(env, task_objects, snaps, include_xml), lambda: make_agent(agent_cfg),
                    envs.slots(env, env.num_envs), save, keep_observations=True, retries=envs.retries)
    _say_failed(failed, f"{cfg.executor.retries + 1} times")


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
