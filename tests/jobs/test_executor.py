"""executor=dask: the environments of collect, evaluate, DAgger and PPO on the workers of a real Dask cluster
started here (two worker processes, one thread each, every socket on 127.0.0.1), giving the same episodes as on
this machine; a worker killed mid-run loses no episode; what cannot work is one line."""

from __future__ import annotations

import json
import os
import signal
import socket
from collections import Counter
from pathlib import Path

import dask
import distributed  # noqa: F401 - loads its configuration defaults, which dask.config.set extends

import psutil
import pytest

from vlui.cli import compose
from vlui.config import ExecutorConfig
from vlui.env.settings import EnvConfig
from vlui.data.format import read_dataset
from vlui.data.training import TrainingData
from vlui.errors import VluiError
from vlui.jobs import collect, evaluate, train
from vlui.jobs.executor import LOCAL, DaskEnvironments, environments, worker_pids
from vlui.rollout import Job, result_line, rollout
from safetensors.torch import load_file

from tests.jobs.test_ppo import metrics, ppo, weak_policy  # noqa: F401 - PPO's tiny policy (a fixture) and helpers
from vlui.agents import make_agent
from vlui.tasks.catalog import resolve_tasks

pytestmark = pytest.mark.integration

TASKS, SNAPSHOTS = ["airplane_on", "open_clock"], ["000", "001", "030"]


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes on 127.0.0.1, shared by the tests that do not stop one."""
    envs = DaskEnvironments(ExecutorConfig(name="dask", workers=2))
    yield envs
    envs.close()


def _listening(pids: set[int]) -> list[tuple[str, int, int]]:
    return [(c.laddr.ip, c.laddr.port, c.pid) for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.pid in pids]


def test_every_socket_of_the_cluster_listens_on_loopback_only(cluster: DaskEnvironments) -> None:
    me = psutil.Process()
    pids = {me.pid} | {p.pid for p in me.children(recursive=True)}
    workers = set(worker_pids(cluster).values())
    assert workers <= pids and len(workers) == 2  # two worker processes, started by this test
    sockets = _listening(pids)
    assert {pid for _, _, pid in sockets} >= workers  # every worker listens (and the scheduler, here)
    assert sockets and all(ip == "127.0.0.1" for ip, _, _ in sockets), sockets


def _episodes(envs, agent: str, seeds=range(6), retries: int | None = None, on_step=None) -> dict[str, dict]:
    tasks = resolve_tasks(TASKS)
    jobs = [Job(t, s, seed, run=seed, id=i) for i, (t, s, seed) in enumerate(
        (t, s, seed) for seed in seeds for t in TASKS for s in SNAPSHOTS)]
    out: dict[str, dict] = {}
    rollout(jobs, envs.factory(EnvConfig(), tasks, SNAPSHOTS, include_xml=True),
            lambda: make_agent({"name": agent}), 4, lambda r: out.__setitem__(r.job.key, result_line(r)),
            retries=envs.retries if retries is None else retries, on_step=on_step)
    return out


def test_a_rollout_on_the_cluster_has_the_same_episodes_as_here(cluster: DaskEnvironments) -> None:
    here, there = _episodes(LOCAL, "random", range(2)), _episodes(cluster, "random", range(2))
    assert len(here) == 12 and here == there  # every action, step count and outcome


def test_collect_on_the_cluster_writes_the_same_dataset(tmp_path: Path) -> None:
    def run(executor: str) -> list[dict]:
        cfg = compose("collect", [f"paths.data_dir={tmp_path}", f"dataset={executor}", f"tasks=[{','.join(TASKS)}]",
                                  f"env.snapshots=[{','.join(SNAPSHOTS)}]", "env.num_envs=2", f"executor={executor}",
                                  "executor.workers=2"], output_dir=tmp_path / executor / "run")
        collect.run(cfg)
        table = read_dataset(tmp_path / executor)[1].to_pylist()
        return sorted(({k: r[k] for k in ("episode_id", "step", "task_id", "snapshot_id", "action", "success", "screen")}
                       for r in table), key=lambda r: (r["episode_id"], r["step"]))

    local, dask = run("local"), run("dask")
    assert len({r["episode_id"] for r in local}) == 6 and local == dask  # the same steps, screens and actions


def test_evaluate_on_the_cluster_gives_the_same_results(tmp_path: Path) -> None:
    def run(executor: str) -> dict[str, dict]:
        cfg = compose("evaluate", [f"paths.root_dir={tmp_path}", "agent=random", f"tasks=[{','.join(TASKS)}]",
                                   f"env.snapshots=[{','.join(SNAPSHOTS)}]", "runs=2", "env.num_envs=4",
                                   f"name={executor}", f"executor={executor}"],
                      output_dir=tmp_path / executor)
        evaluate.run(cfg)
        lines = [json.loads(x) for x in (tmp_path / executor / "episodes.jsonl")
                 .read_text().splitlines()]
        return {r["key"]: {k: v for k, v in r.items() if k != "adaptive"} for r in lines}

    local, dask = run("local"), run("dask")
    assert len(local) == 12 and local == dask


def test_a_worker_killed_mid_run_loses_no_episode(tmp_path: Path) -> None:
    reference = _episodes(LOCAL, "random", range(3))
    with environments(ExecutorConfig(name="dask", workers=2, retries=2)) as envs:
        victim = sorted(worker_pids(envs).values())[0]
        rounds = []

        def kill_once() -> None:
            rounds.append(1)
            if len(rounds) == 3:  # mid-run: episodes are in flight on both workers
                os.kill(victim, signal.SIGKILL)

        survived = _episodes(envs, "random", range(3), on_step=kill_once)
        assert len(envs.lost) == 1  # its episodes in flight failed there, and ran again on the other worker
    assert len(survived) == len(reference) == 18
    assert not [k for k, r in survived.items() if r["infra_failure"]]  # each one run again, elsewhere
    assert survived == reference  # and the same as here: a retried episode starts afresh from its seed


def test_a_local_cluster_leaves_this_processs_environment_as_it_was() -> None:
    # Dask's nannies set OMP_NUM_THREADS=1, PYTHONHASHSEED, ... here before spawning workers; a child process started
    # afterwards (a study's train.py) would otherwise run with one thread and compute other numbers
    before = dict(os.environ)
    with environments(ExecutorConfig(name="dask", workers=1)) as envs:
        envs.factory(EnvConfig(), resolve_tasks(TASKS), SNAPSHOTS)().close()
        assert dict(os.environ) == before
    assert dict(os.environ) == before


def test_no_scheduler_at_the_address_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(VluiError) as err, environments(ExecutorConfig(name="dask", address=f"tcp://127.0.0.1:{port}",
                                                                      connect_timeout_s=1)):
        pass
    assert f"no Dask scheduler answers at executor.address=tcp://127.0.0.1:{port}" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_device_no_node_has_is_one_line(cluster: DaskEnvironments) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # no adb server there: no node has any device
    env = EnvConfig(backend="adb", serial=["emulator-5554"], adb_port=port, snapshots=["000"])
    cluster._devices = None
    with pytest.raises(VluiError) as err:
        cluster.slots(env, 4)
    assert "env.serial lists emulator-5554, which no worker's node has online" in str(err.value)
    assert "\n" not in str(err.value)
    cluster._devices = None


@pytest.mark.slow
def test_episodes_over_adb_run_on_the_node_that_has_the_phone(tmp_path: Path) -> None:
    from vlui.served.private_adb import PrivateAdb

    with PrivateAdb("000") as adb:
        over_adb = ["env=adb", f"env.serial={adb.serial}", f"env.adb_port={adb.adb_port}",
                    f"env.console_token_file={adb.home / '.emulator_console_auth_token'}", "env.log_tags=all"]

        def run(executor: str, serial: str | None = None) -> dict[str, dict]:
            extra = [f"env.serial={serial}"] if serial else []
            cfg = compose("evaluate", [f"paths.root_dir={tmp_path}", "agent=random", "tasks=[airplane_on]",
                                       "env.snapshots=[000]", "runs=2", f"name={executor}", f"executor={executor}",
                                       "adaptive_metrics=false", *over_adb, *extra], output_dir=tmp_path / executor)
            evaluate.run(cfg)
            lines = (tmp_path / executor / "episodes.jsonl").read_text().splitlines()
            return {r["key"]: r for r in map(json.loads, lines)}

        local = run("local")
        on_cluster = run("dask", "auto")  # the worker finds the phone on its node's adb server
        assert len(local) == 2 and local == on_cluster


def test_a_ppo_iteration_on_the_cluster_is_the_same_as_here(weak_policy: Path, tmp_path: Path) -> None:  # noqa: F811
    policy = weak_policy
    common = ["algo.iterations=1", "algo.episodes=8", "algo.eval_every=0", "env.num_envs=4"]
    runs = {}
    for executor in ("local", "dask"):
        result = train.run(compose("train", ppo(tmp_path, policy, *common, f"executor={executor}", run=executor),
                                   output_dir=tmp_path / executor))
        runs[executor] = (metrics(tmp_path / executor)[0], load_file(str(Path(result["policy"]) / "model.safetensors")))
    for key in ("rollout/success", "rollout/episode_steps", "rollout/return"):
        assert runs["local"][0][key] == runs["dask"][0][key], key  # the same episodes, step for step
    local, dask = runs["local"][1], runs["dask"][1]
    assert all((local[k] == dask[k]).all() for k in local)  # and so the same update, to the bit


def test_a_dagger_round_on_the_cluster_labels_the_same_states(cluster: DaskEnvironments, tmp_path: Path,
                                                               tiny_dataset: Path) -> None:
    import pyarrow.parquet as pq
    import torch

    from vlui.jobs import dagger
    from vlui.models.policy import VLUIPolicy
    from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
    from vlui.spec import ObsActionSpec

    torch.manual_seed(0)
    policy = VLUIPolicy(ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32,
                                    num_heads=2, head_dims=[32]), ObsActionSpec(64, 32))  # untrained: it wanders
    env = EnvConfig(observation_height=64, observation_width=32)
    rounds = {}
    for name, envs in (("local", LOCAL), ("dask", cluster)):
        stats = dagger.collect_round(policy, env, TrainingData.read(tiny_dataset), tmp_path / name, 1, 1, seed=0,
                                     slots=4, envs=envs)
        assert stats["complete"] and stats["episodes"] == 6
        table = pq.read_table(tmp_path / name / "episodes").to_pandas().sort_values(["episode_id", "step"])
        rounds[name] = table[["episode_id", "step", "action", "acted", "screen"]].to_dict("records")
    assert len(rounds["local"]) > 6 and str(rounds["local"]) == str(rounds["dask"])  # every label, action and screen


def test_environments_are_built_while_the_client_refreshes_its_view_of_the_cluster() -> None:
    # the client's periodic refresh of its cached scheduler identity lists no worker; a placement that read that cache
    # found no live worker now and then under load ("the Dask cluster has no live worker left" mid-run): refreshed
    # every millisecond here, it would for a few of these 60
    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}), \
            environments(ExecutorConfig(name="dask", workers=2)) as envs:
        make = envs.factory(EnvConfig(), resolve_tasks(TASKS), SNAPSHOTS)
        built = [make() for _ in range(60)]
        assert sorted(Counter(env.worker for env in built).values()) == [30, 30]  # every one built, spread evenly
        for env in built:
            env.close()
