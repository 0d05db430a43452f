"""The one rule that turns a run's seed into its parts' seeds: the values the jobs drew before it existed, unchanged
(datasets, evaluations and resumed runs depend on them)."""

from __future__ import annotations

from pathlib import Path

from vlui.cli import compose
from vlui.config import EvaluateJobConfig, job_settings
from vlui.jobs import evaluate
from vlui.seeding import WIDTH, substream


def test_parts_of_different_seeds_never_share_a_seed() -> None:
    seeds = {substream(seed, part) for seed in range(4) for part in (0, 1, 2, WIDTH - 1)}
    assert len(seeds) == 16 and substream(3, 7) == 3 * 1_000_003 + 7
    assert substream(substream(2, 5, 7919), 11) == (2 * 7919 + 5) * 1_000_003 + 11  # DAgger's rounds


def test_evaluation_episodes_keep_the_seeds_they_always_had(tmp_path: Path) -> None:
    cfg = compose("evaluate", ["agent=expert", "seed=3", "runs=2", "tasks=[airplane_on,open_clock]",
                               "env.snapshots=[000,001]"], output_dir=tmp_path)
    jobs = evaluate.plan(job_settings(cfg, EvaluateJobConfig)).jobs
    assert [j.seed for j in jobs if j.run == 1] == [3 * 1_000_003 + 10_007 + i for i in range(4)]
