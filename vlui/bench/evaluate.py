"""Evaluation speed: the B-MoCA protocol (6 tasks x 10 test snapshots x 3 runs = 180 episodes) with an
EfficientNet-b0 policy, environments side by side and one batched forward per step, against one environment at a
time with a forward per step, measured in the same run (the baseline on a part of the protocol).

The policy is randomly initialised: it fails every episode, so every episode runs to its step limit (the slowest
case).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from vlui.bench import BenchOptions, Record, record
from vlui.cli import compose
from vlui.jobs import evaluate
from vlui.models.policy import VLUIPolicy, export_policy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.spec import ObsActionSpec


def bench_evaluate(opts: BenchOptions) -> Iterator[Record]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        torch.manual_seed(0)
        cfg = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig(size="tiny" if opts.quick else "small"))
        export_policy(VLUIPolicy(cfg, ObsActionSpec()), tmp / "b0" / "policy")
        snaps = "[100,101]" if opts.quick else "test"
        runs = 1 if opts.quick else 3
        common = [f"checkpoint={tmp}/b0", f"env.snapshots={snaps}", "adaptive_metrics=false"]

        def seconds(*overrides: str) -> tuple[float, int]:
            out = tmp / f"out{len(list(tmp.iterdir()))}"
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):  # stdout carries the JSON records alone
                result = evaluate.run(compose("evaluate", [*common, *overrides], output_dir=out))
            return time.perf_counter() - start, result["episodes"]

        fast, n_fast = seconds(f"runs={runs}", "env.num_envs=16")
        slow, n_slow = seconds("runs=1", "env.num_envs=1", "env.snapshots=[100]" if not opts.quick else
                               "env.snapshots=[100]")
    yield record("eval_protocol_seconds", fast, "s", episodes=n_fast, policy="efficientnet_b0, d=768 (random)",
                 note="B-MoCA protocol: representative tasks x test snapshots x 3 runs; 16 environments, batched "
                      "policy forward")
    yield record("eval_episodes_per_s", n_fast / fast, "episodes/s", baseline=n_slow / slow,
                 method="16 environments, one batched forward per step",
                 baseline_method="one environment, one forward per step", baseline_episodes=n_slow)
