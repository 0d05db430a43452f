"""Shared test fixtures. Tests run on CPU with tiny, randomly initialised models; nothing is downloaded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Nothing in the suite may reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")


def run_python(*args: str, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``python <args>`` from the repository root, as a user would, capturing its output."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def root() -> Path:
    return ROOT


def _collect_tiny(tmp_path_factory, name: str, *overrides: str) -> Path:
    """A small dataset of the expert (airplane_on and open_clock on snapshots 000, 001 and 030) collected into a fresh
    folder, with more collect.py ``overrides``."""
    from vlui.cli import compose
    from vlui.jobs import collect

    data_dir = tmp_path_factory.mktemp("data")
    cfg = compose("collect", [f"paths.data_dir={data_dir}", f"dataset={name}", "tasks=[airplane_on,open_clock]",
                              "env.snapshots=[000,001,030]", "env.num_envs=1", *overrides],
                  output_dir=data_dir / "run")
    collect.run(cfg)
    return data_dir / name


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory) -> Path:
    """A small collected dataset (2 tasks x 3 snapshots x 2 episodes, expert), shared by the training tests."""
    return _collect_tiny(tmp_path_factory, "tiny", "episodes_per_pair=2")


@pytest.fixture(scope="session")
def tiny_xml_dataset(tmp_path_factory) -> Path:
    """``tiny_dataset``'s tasks and snapshots, one episode each, with every screen's UI tree (``save_xml=true``):
    what grounding (``data.grounding``) reads."""
    return _collect_tiny(tmp_path_factory, "tiny_xml", "save_xml=true")


@pytest.fixture(scope="session")
def tiny_full_screen_dataset(tmp_path_factory) -> Path:
    """open_clock on snapshots 000 and 001 with every screen's UI tree and its full-resolution screen
    (``save_full_screen=true``): what an MLLM agent's few-shot examples show."""
    return _collect_tiny(tmp_path_factory, "tiny_full", "save_xml=true", "save_full_screen=true",
                         "tasks=[open_clock]", "env.snapshots=[000,001]")


@pytest.fixture
def tiny_dataset_copy(tmp_path: Path, tiny_dataset: Path) -> Path:
    """A copy of ``tiny_dataset`` for a test that writes into the dataset's folder, without the features other tests
    stored there (``<tmp_path>/data/tiny``)."""
    return Path(shutil.copytree(tiny_dataset, tmp_path / "data" / "tiny", ignore=shutil.ignore_patterns("features")))


@dataclass(frozen=True)
class ExpertRun:
    """One expert episode on the simulated phone: its log from the reset on, whether it succeeded, and the
    ``open_<app>`` tasks of the apps it opened (opening an app is part of many tasks)."""

    lines: list[str]
    terminated: bool
    opened: frozenset[str]


@pytest.fixture(scope="session")
def random_dataset(tmp_path_factory) -> Path:
    """Episodes of the random agent (they fail, cut off by the step limit) on one of tiny_dataset's pairs."""
    from vlui.cli import compose
    from vlui.jobs import collect

    data_dir = tmp_path_factory.mktemp("data")
    cfg = compose("collect", [f"paths.data_dir={data_dir}", "dataset=random", "tasks=[airplane_on]",
                              "env.snapshots=[000]", "episodes_per_pair=2", "env.num_envs=1", "agent=random"],
                  output_dir=data_dir / "run")
    collect.run(cfg)
    return data_dir / "random"


EXPERT_RUN_PARTS = 2  # the expert episodes are split by snapshot between the workers that need them


@pytest.fixture(scope="session")
def expert_runs(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> dict[tuple[str, str], ExpertRun]:
    """(task, snapshot) -> the expert's episode, for every task on every snapshot (2,700 episodes, 10 to 20 s), run
    once for all the detector tests. Under pytest-xdist the snapshots are split in parts: a worker that needs the
    episodes runs each part no other worker has claimed, leaves it in the run's shared temporary folder, and reads
    the others' parts from there (two workers run half each, side by side)."""
    from vlui.android.snapshot import snapshot_ids

    snapshots = snapshot_ids("all")
    if worker_id == "master":  # not distributed
        return _expert_runs(snapshots)
    shared = tmp_path_factory.getbasetemp().parent  # this run's, common to its workers
    parts = [shared / f"expert_runs.{k}.json" for k in range(EXPERT_RUN_PARTS)]
    for k, part in enumerate(parts):
        try:
            os.close(os.open(part.with_suffix(".claimed"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue  # another worker runs this part
        tmp = part.with_suffix(".tmp")
        tmp.write_text(json.dumps([[task, snap, run.lines, run.terminated, sorted(run.opened)] for (task, snap), run
                                   in _expert_runs(snapshots[k::EXPERT_RUN_PARTS]).items()]))
        tmp.replace(part)
    deadline = time.monotonic() + 600
    while not all(part.exists() for part in parts):
        assert time.monotonic() < deadline, f"another worker claimed a part of the expert episodes in {shared} and " \
                                            "never wrote it (did it crash?)"
        time.sleep(0.1)
    return {(task, snap): ExpertRun(lines, terminated, frozenset(opened)) for part in parts
            for task, snap, lines, terminated, opened in json.loads(part.read_text())}


def _expert_runs(snapshots: list[str]) -> dict[tuple[str, str], ExpertRun]:
    """The expert on every task on each of ``snapshots``, on one simulated phone."""
    from vlui.agents.walkthrough import walkthrough
    from vlui.sim.phone import SimDevice
    from vlui.tasks.catalog import task_set

    dev = SimDevice(snapshots[0])
    out = {}
    for task in task_set("all"):
        for snap in snapshots:
            walk = walkthrough(dev, task, snap)
            out[task, snap] = ExpertRun(walk.lines, walk.terminated,
                                        frozenset(f"open_{app}" for app in dev.state.recents))
    return out


def detector_hits(runs: dict[tuple[str, str], ExpertRun], snapshots) -> dict[tuple[str, str], set[str]]:
    """(task, snapshot) -> the tasks whose detector matched the expert's trajectory, not counting the ``open_<app>``
    detectors of the apps the trajectory opened (unless that is its own task). Fails if the expert failed."""
    from vlui.tasks.catalog import Detector, task_set, tasks

    detectors = {t: Detector(tasks()[t]) for t in task_set("all")}
    out = {}
    for (task, snap), run in runs.items():
        if snap in snapshots:
            assert run.terminated, f"{task} on {snap}: the expert failed"
            out[task, snap] = {t for t, d in detectors.items() if d.match(run.lines) is not None} - (run.opened - {task})
    return out


# ---------------------------------------------------------------------------------------------- test order
# pytest-xdist hands tests to the workers in collection order, so a long test collected last (tests/test_study.py)
# starts when the others are done and the suite waits for it alone. The longest tests go first instead: each test's
# duration in the last run (kept in pytest's cache), else a guess from its markers; the order is otherwise kept.
# scripts/test.sh runs the workers with --dist worksteal: a worker that runs out takes queued tests from the other.
DURATIONS_KEY = "vlui/durations"
GUESS_S = {"slow": 60.0, "integration": 10.0}
# The tests that take over a minute (measured at 2d5cbff on 2 cores), for a fresh clone that has no cache yet.
LONGEST_S = {
    "tests/test_study.py::test_a_study_trains_every_arm_and_seed_evaluates_them_and_reports_with_the_paper": 165.0,
    "tests/agents/test_expert.py::test_the_expert_solves_every_task_on_five_hundred_generated_configurations": 100.0,
    "tests/bench/test_bench.py::test_every_benchmark_runs_quick_and_prints_json_lines": 70.0,
}


def expected_seconds(item: pytest.Item, durations: dict[str, float]) -> float:
    if item.nodeid in durations:
        return durations[item.nodeid]
    if item.nodeid in LONGEST_S:
        return LONGEST_S[item.nodeid]
    return max((s for name, s in GUESS_S.items() if item.get_closest_marker(name)), default=0.0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    durations = cache.get(DURATIONS_KEY, {}) if cache is not None else {}
    items.sort(key=lambda item: -expected_seconds(item, durations))  # stable: ties keep their order
    for item in items:  # the fast tier leaves them out: the episodes take a worker 10 to 20 s before the first test
        if "expert_runs" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.episodes)


_durations: dict[str, float] = {}  # this run's, by test id: setup, call and teardown together


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    cache = getattr(config, "cache", None)
    if cache is None or hasattr(config, "workerinput") or not _durations:
        return  # no cache, or a worker: the controller, which hears every report, keeps them
    kept = cache.get(DURATIONS_KEY, {})
    cache.set(DURATIONS_KEY, {**kept, **{k: round(v, 2) for k, v in _durations.items()}})
