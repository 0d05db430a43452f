"""Shared test fixtures. Tests run on CPU with tiny, randomly initialised models; nothing is downloaded."""

from __future__ import annotations

import os
import subprocess
import sys
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


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory) -> Path:
    """A small collected dataset (2 tasks x 3 snapshots, expert), shared by the training tests."""
    from vlui.cli import compose
    from vlui.jobs import collect

    data_dir = tmp_path_factory.mktemp("data")
    cfg = compose("collect", [f"paths.data_dir={data_dir}", "dataset=tiny", "tasks=[airplane_on,open_clock]",
                              "env.snapshots=[000,001,030]", "episodes_per_pair=2", "env.num_envs=1"],
                  output_dir=data_dir / "run")
    collect.run(cfg)
    return data_dir / "tiny"
