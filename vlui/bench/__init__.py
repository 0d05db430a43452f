"""Benchmarks: ``python -m vlui.bench [NAME ...]``.

Each benchmark yields records printed as one JSON object per line::

    {"name": "frame_decode", "value": 51234.0, "unit": "frames/s", "baseline": 2311.0, "ratio": 22.2, ...}

A record that claims a speed-up carries the baseline it was measured against in the same run (``baseline`` and
``ratio``), never a figure from elsewhere. Timings are medians over repeats, after a warm-up.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Record = dict[str, Any]


@dataclass(frozen=True)
class BenchOptions:
    quick: bool = False  # smaller inputs and fewer repeats, for smoke tests
    repeats: int = 5


def median_seconds(fn: Callable[[], Any], repeats: int, warmup: int = 1) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeats`` calls, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def record(name: str, value: float, unit: str, baseline: float | None = None, **extra: Any) -> Record:
    """A benchmark record; with ``baseline`` (same unit, same run) it also carries ``ratio = value / baseline``."""
    rec: Record = {"name": name, "value": round(value, 3), "unit": unit}
    if baseline is not None:
        rec["baseline"] = round(baseline, 3)
        rec["ratio"] = round(value / baseline, 3) if baseline > 0 else None
    rec.update(extra)
    return rec


def registry() -> dict[str, Callable[[BenchOptions], Iterator[Record]]]:
    """The one explicit map of benchmark names to functions."""
    from vlui.bench import adb, evaluate, executor, frames, side_by_side, sim, sim_xml, train

    return {
        "adb": adb.bench_adb,
        "eval": evaluate.bench_evaluate,
        "executor": executor.bench_executor,
        "frame_decode": frames.bench_frame_decode,
        "side_by_side": side_by_side.bench_side_by_side,
        "sim": sim.bench_sim,
        "sim_xml": sim_xml.bench_sim_xml,
        "train": train.bench_train,
    }
