"""Where a job's environments live: on this machine, or on the workers of a Dask cluster (``executor=dask``).

Collection, evaluation, DAgger's relabelling and PPO's rollouts all run :func:`~vlui.rollout.rollout`, which steps
environments side by side and has the agent act for all of them at once (one batched forward pass of a policy). An
executor decides where those environments are, not how many or in what order: with ``executor=dask`` each one is a
:class:`RemoteEnv`, a :class:`~vlui.env.env.PhoneEnv` built on a cluster worker (a Dask actor) and stepped from here,
so the same jobs, seeds and agent give the same episodes as on this machine.

- Each worker owns its phones: simulated ones it builds, or, with ``env=adb``, the emulators attached to its own
  node's adb server (``env.serial=auto``: whatever ``adb devices`` lists there; or the serials listed, each used on
  the node that has it).
- The rollout loop sends every environment's reset or step before it waits for any, so the workers work in parallel
  while the agent waits once per round.
- A worker that dies, hangs past ``executor.timeout_s`` or whose phone breaks fails only the episodes it was running:
  the rollout loop saves every finished episode as it ends, builds a new environment on a live worker and runs the
  episode again, up to ``executor.retries`` times, then records it as an infrastructure failure (which the same
  command runs again when resumed).

Dask rather than Ray: the tests start the cluster on this machine, and every socket of a Dask ``LocalCluster``
(scheduler, nannies, workers) listens on 127.0.0.1 when asked to (``tests/jobs/test_executor.py`` checks each one),
while Ray's head registers its services at the machine's network address (docs/scaling.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from vlui.adb.device import online_serials
from vlui.backends import adb_serials, max_parallel
from vlui.config import ExecutorConfig
from vlui.env.settings import EnvConfig
from vlui.env.actions import ActionError
from vlui.env.env import open_env
from vlui.errors import VluiError
from vlui.tasks.catalog import Task

log = logging.getLogger(__name__)

EnvFactory = Callable[[], Any]  # a PhoneEnv, or a RemoteEnv that stands for one


class Environments:
    """The environments of one executor: :meth:`factory` makes what :func:`~vlui.rollout.rollout` calls to build
    each, :meth:`slots` says how many can run side by side, :attr:`retries` how many times an episode whose
    environment failed runs again. This one keeps them on this machine (``executor=local``)."""

    retries = 1

    def factory(self, env: EnvConfig, tasks: Sequence[Task], snapshots: Sequence[str], include_xml: bool | None = None,
                include_screen: bool = True) -> EnvFactory:
        tasks, snapshots = list(tasks), list(snapshots)
        return lambda: open_env(env, tasks, snapshots, include_xml, include_screen)

    def slots(self, env: EnvConfig, wanted: int) -> int:
        return max_parallel(env, wanted)

    def close(self) -> None:
        pass


LOCAL = Environments()


@contextlib.contextmanager
def environments(executor: ExecutorConfig) -> Iterator[Environments]:
    """The executor the ``executor`` settings name, closed on leaving."""
    if executor.name == "local":
        yield LOCAL
        return
    if executor.name != "dask":
        raise VluiError(f"executor={executor.name} is not an executor: local or dask")
    cluster = DaskEnvironments(executor)
    try:
        yield cluster
    finally:
        cluster.close()


# ---------------------------------------------------------------------------------------------------- on a worker
class EnvActor:
    """A :class:`~vlui.env.env.PhoneEnv` on a Dask worker (an actor: its methods run there, one call at a time)."""

    def __init__(self, env: EnvConfig, tasks: list[Task], snapshots: list[str], include_xml: bool | None,
                 include_screen: bool) -> None:
        if env.backend == "adb":
            env = replace(env, serial=node_serials(env))
        self.env = open_env(env, tasks, snapshots, include_xml, include_screen)

    def reset(self, seed: int, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], tuple[int, int]]:
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, info, self.env.device.size

    def step(self, action: Any) -> tuple:
        return self.env.skip_step() if action is None else self.env.step(action)

    def close(self) -> None:
        self.env.close()


def node_serials(env: EnvConfig) -> list[str]:
    """The serials of ``env`` this node's adb server has online: every one for ``env.serial=auto``, else those
    listed that are attached here (none: an error naming this node)."""
    if _auto(env):
        return adb_serials(env)
    listed = adb_serials(env)
    here = online_serials(env.adb_host, env.adb_port, listed)
    mine = [s for s in listed if s in here]
    if not mine:
        raise VluiError(f"node {socket.gethostname()} has none of env.serial ({', '.join(listed)}) online; its adb "
                        f"server lists {', '.join(here) or 'no device'}")
    return mine


def _auto(env: EnvConfig) -> bool:
    return isinstance(env.serial, str) and env.serial.strip() == "auto"


# ---------------------------------------------------------------------------------------------------- the driver
@dataclass
class _Worker:
    address: str
    host: str
    envs: int = 0  # environments placed on it, alive
    serials: list[str] = field(default_factory=list)  # env=adb: the devices its node has online


class DaskEnvironments(Environments):
    """Environments on the workers of a Dask cluster: the one at ``cfg.address``, or ``cfg.workers`` processes
    started here on 127.0.0.1. Idle environments are kept for the next rollout with the same settings (PPO's
    iterations, DAgger's rounds), so a worker builds its phones once."""

    def __init__(self, cfg: ExecutorConfig) -> None:
        from distributed import Client, LocalCluster

        self.cfg, self.retries = cfg, cfg.retries
        self._cluster = None
        # a local cluster's nannies live in this process and set variables for their workers in its environment
        # before spawning them (OMP_NUM_THREADS=1, PYTHONHASHSEED, ...): they are put back after each start, or this
        # process's own children (a study's commands, train.py) would inherit them and compute differently
        self._environ = dict(os.environ)
        if cfg.address:
            try:
                self.client = Client(cfg.address, timeout=f"{cfg.connect_timeout_s}s", set_as_default=False)
            except (OSError, TimeoutError) as err:
                raise VluiError(f"no Dask scheduler answers at executor.address={cfg.address} within "
                                f"{cfg.connect_timeout_s:g} s ({str(err).splitlines()[0]}): start one (`dask scheduler`, "
                                "then `dask worker <address>` on each node: docs/scaling.md), or leave "
                                "executor.address unset to start a cluster on this machine") from None
        else:
            # no dashboard; the scheduler's HTTP endpoints (health, metrics) on a free port of 127.0.0.1
            self._cluster = LocalCluster(n_workers=cfg.workers, threads_per_worker=1, processes=True,
                                         host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR,
                                         scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
            self.client = Client(self._cluster, set_as_default=False)
            self._restore_environ()
        workers = self._workers()
        if not workers:
            self.close()
            raise VluiError(f"the Dask cluster at {cfg.address} has no workers: start some with `dask worker "
                            f"{cfg.address}` (docs/scaling.md)")
        log.info(f"executor=dask: {len(workers)} workers at {self.client.scheduler.address}")
        self._idle: dict[Any, list[tuple[Any, str]]] = {}
        self._placed: Counter[str] = Counter()
        self._devices: dict[str, list[str]] | None = None  # env=adb: worker -> the serials its node has online
        # workers that failed to answer: never used again (a worker the nanny restarts comes back at a new address),
        # even while the scheduler still lists them
        self._failed: set[str] = set()

    # ------------------------------------------------------------------------------------------------ the protocol
    def factory(self, env: EnvConfig, tasks: Sequence[Task], snapshots: Sequence[str], include_xml: bool | None = None,
                include_screen: bool = True) -> EnvFactory:
        args = (env, list(tasks), list(snapshots), include_xml, include_screen)
        key = repr((env, [t.id for t in tasks], list(snapshots), include_xml, include_screen))
        return lambda: self._take(key, args)

    def slots(self, env: EnvConfig, wanted: int) -> int:
        if env.backend != "adb":
            return wanted
        host = self._hosts()
        by_host = {host.get(w, w): set(s) for w, s in self._adb_devices(env).items()}
        return max(1, min(wanted, sum(len(s) for s in by_host.values())))

    @property
    def lost(self) -> set[str]:
        """The workers that died or stopped answering during this executor's work (none are used again)."""
        return set(self._failed)

    def close(self) -> None:
        for idle in self._idle.values():
            for actor, _ in idle:
                with contextlib.suppress(Exception):
                    actor.close().result(timeout=10)
        self._idle.clear()
        with contextlib.suppress(Exception):
            self.client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()
            self._cluster = None
        self._restore_environ()

    # ------------------------------------------------------------------------------------------------ internals
    def _restore_environ(self) -> None:
        for name in set(os.environ) - set(self._environ):
            del os.environ[name]
        os.environ.update(self._environ)

    def _take(self, key: Any, args: tuple) -> RemoteEnv:
        self._restore_environ()  # a nanny that restarted a dead worker has set its variables again
        alive = self._alive()
        idle = self._idle.setdefault(key, [])
        while idle:
            actor, worker = idle.pop()
            if worker in alive:
                return RemoteEnv(self, key, actor, worker, args[1])
            self._placed[worker] -= 1
        worker = self._place(args[0], alive)
        try:
            future = self.client.submit(EnvActor, *args, actor=True, workers=[worker], allow_other_workers=False,
                                        pure=False)
            with self.client.as_current():  # the actor's handle binds to the client current when it is made
                actor = future.result(timeout=self.cfg.timeout_s)
        except VluiError:
            raise
        except Exception as err:  # noqa: BLE001 - the worker died while building it, or the phone failed
            raise RuntimeError(f"building an environment on worker {worker} failed: {_last_line(err)}") from None
        self._placed[worker] += 1
        return RemoteEnv(self, key, actor, worker, args[1])

    def _give_back(self, env: RemoteEnv) -> None:
        self._idle.setdefault(env.key, []).append((env.actor, env.worker))

    def _drop(self, env: RemoteEnv) -> None:
        self._placed[env.worker] -= 1
        with contextlib.suppress(Exception):
            env.actor.close()

    def _workers(self) -> dict[str, dict]:
        """The workers the scheduler lists now, asked of it. Not ``client.scheduler_info()``: that returns the client's
        cached identity, which its periodic refresh (every 2 s) overwrites with one that lists no worker, so under load
        a cluster with live workers could read as empty."""
        return self.client.sync(self.client.scheduler.identity, n_workers=-1)["workers"]

    def _alive(self) -> list[str]:
        return sorted(w for w in self._workers() if w not in self._failed)

    def _hosts(self) -> dict[str, str]:
        """Each worker's node (its host), asked of the scheduler once."""
        return {w: info.get("host", w) for w, info in self._workers().items()}

    def _place(self, env: EnvConfig, alive: list[str]) -> str:
        """The live worker with the fewest environments (with env=adb: one whose node has a device left)."""
        if not alive:
            raise RuntimeError("the Dask cluster has no live worker left")
        candidates = alive
        if env.backend == "adb":
            devices = self._adb_devices(env)
            known = self._hosts()
            host = {w: known.get(w, w) for w in alive}
            used: Counter[str] = Counter()
            for w in alive:
                used[host[w]] += self._placed[w]
            room = {host[w]: len(devices.get(w, [])) for w in alive}
            candidates = [w for w in alive if devices.get(w) and used[host[w]] < room[host[w]]]
            if not candidates:
                raise RuntimeError("every device of the cluster's nodes is in use")
        return min(candidates, key=lambda w: (self._placed[w], w))

    def _adb_devices(self, env: EnvConfig) -> dict[str, list[str]]:
        """worker -> the serials of ``env`` online on its node, asked of every worker once; an error when a listed
        serial is on no node, or no node has a device."""
        if self._devices is None:
            found = self.client.run(_node_serials_or_none, env)
            self._devices = {w: s for w, s in found.items() if s}
            every = sorted({s for s in (v for ss in self._devices.values() for v in ss)})
            if not _auto(env):
                missing = [s for s in adb_serials(env) if s not in every]
                if missing:
                    raise VluiError(f"env.serial lists {', '.join(missing)}, which no worker's node has online (the "
                                    f"nodes have: {', '.join(every) or 'no device'}): attach it, or drop it from the "
                                    "list")
            if not every:
                raise VluiError("no worker of the Dask cluster has a device online on its node's adb server "
                                f"({env.adb_host}:{env.adb_port}): start the emulators there, or use env=sim")
        return self._devices


def _node_serials_or_none(env: EnvConfig) -> list[str]:
    """:func:`node_serials` on a worker, [] where its node has none of them (asked of every worker)."""
    try:
        return node_serials(env)
    except VluiError:
        return []


def _lost(err: BaseException) -> bool:
    """Whether ``err`` says the worker is gone or silent (not that its environment raised)."""
    return isinstance(err, (OSError, TimeoutError, asyncio.TimeoutError)) or \
        type(err).__module__.split(".")[0] == "distributed" or "lost" in str(err).lower()


def _last_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[-1]


class RemoteEnv:
    """An environment on a cluster worker, as the rollout loop uses one: ``reset``, ``step``, ``skip_step``,
    ``close``, the episode's ``task`` and the phone's ``device.size``. ``begin(method, ...)`` sends a call without
    waiting; the next call of that method collects its answer. An error from the worker's environment is raised here
    as it was there (an :class:`~vlui.env.actions.ActionError` is the agent's); a dead or silent worker is a
    :class:`RuntimeError`, after which this environment is dropped, not reused."""

    def __init__(self, owner: DaskEnvironments, key: Any, actor: Any, worker: str, tasks: list[Task]) -> None:
        self.owner, self.key, self.actor, self.worker = owner, key, actor, worker
        self.tasks = {t.id: t for t in tasks}
        self.task: Task | None = None
        self.device = _Size((0, 0))
        self._pending: dict[str, Any] = {}
        self._broken = False

    def begin(self, method: str, *args: Any) -> None:
        self._pending[method] = getattr(self.actor, method)(*args)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        options = options or {}
        obs, info, size = self._answer("reset", seed, options)
        self.task = self.tasks.get(str(options.get("task"))) or self.task
        self.device = _Size(tuple(size))
        return obs, info

    def step(self, action: Any) -> tuple:
        return self._answer("step", action)

    def skip_step(self) -> tuple:
        return self._answer("step", None)

    def close(self) -> None:
        if self._broken or self._pending:
            self.owner._drop(self)
        else:
            self.owner._give_back(self)

    def _answer(self, method: str, *args: Any) -> Any:
        future = self._pending.pop(method, None)
        if future is None:
            future = getattr(self.actor, method)(*args)
        try:
            return future.result(timeout=self.owner.cfg.timeout_s)
        except ActionError:  # the agent's: the environment is as it was
            raise
        except VluiError:  # the phone's, in the worker's words (a DeviceError): this environment is not reused
            self._broken = True
            raise
        except Exception as err:  # noqa: BLE001 - the worker died, hung, or its phone broke: not the agent's doing
            self._broken = True
            if _lost(err):
                self.owner._failed.add(self.worker)
            raise RuntimeError(f"worker {self.worker}: {_last_line(err)}") from None


@dataclass(frozen=True)
class _Size:
    size: tuple[int, int]


def worker_pids(cluster: DaskEnvironments) -> dict[str, int]:
    """Each worker's process id (for tests and the benchmark that stop one)."""
    return cluster.client.run(os.getpid)
