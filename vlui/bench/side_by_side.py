"""Jobs side by side on one machine: as many processes as it has cores (two at least), each running the quickstart's
image backbone (EfficientNet-Lite0 on 256x128 screens, batches of 8) over the same screens, every process with torch's
default thread count (one thread a core, what a job started alone takes) against every process with its share of the
cores (:func:`vlui.processes.threads_per_job`, what ``python -m vlui.study --launcher submitit_local`` gives its
jobs), measured in the same run. Frames/s counts every process's frames over the wall-clock until the last one ends.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Iterator

import timm
import torch

from vlui.bench import BenchOptions, Record, record
from vlui.processes import cores, threads_per_job


def _frames(threads: int, batches: int, size: tuple[int, int], start, done) -> None:
    """A job: ``batches`` forward passes of the backbone on ``threads`` torch threads, after a warm-up, once every job
    is ready."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = timm.create_model("tf_efficientnet_lite0", pretrained=False, num_classes=0, global_pool="").eval()
    x = torch.rand(8, 3, *size).contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        model(x)  # warm-up
        start.wait()
        for _ in range(batches):
            model(x)
    done.put(8 * batches)


def _frames_per_s(jobs: int, threads: int, batches: int, size: tuple[int, int]) -> float:
    ctx = mp.get_context("spawn")  # fresh interpreters: no thread pool inherited from this one
    start, done = ctx.Barrier(jobs + 1), ctx.Queue()
    procs = [ctx.Process(target=_frames, args=(threads, batches, size, start, done)) for _ in range(jobs)]
    for p in procs:
        p.start()
    start.wait()  # every job built and warmed up
    begin = time.perf_counter()
    frames = sum(done.get(timeout=900) for _ in procs)
    seconds = time.perf_counter() - begin
    for p in procs:
        p.join()
    return frames / seconds


def bench_side_by_side(opts: BenchOptions) -> Iterator[Record]:
    available = cores()
    jobs = max(2, available)
    size, batches = ((64, 32), 4) if opts.quick else ((256, 128), 40)
    shared = threads_per_job(jobs, available)
    crowded = _frames_per_s(jobs, available, batches, size)
    fair = _frames_per_s(jobs, shared, batches, size)
    yield record("side_by_side_frames_per_s", fair, "frames/s", baseline=crowded, jobs=jobs, cores=available,
                 method=f"{jobs} processes of {shared} torch thread(s) each (the cores shared out)",
                 baseline_method=f"{jobs} processes of {available} torch threads each (torch's default)",
                 model="tf_efficientnet_lite0 (random weights), batches of 8", image=f"{size[0]}x{size[1]}")
