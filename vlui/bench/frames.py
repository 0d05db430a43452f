"""Frame decoding: per-sample PNG decoding (a naive data loader) versus frames decoded once into a uint8 tensor.

Datasets store each screen as PNG bytes at observation resolution (256x128). A naive pipeline decodes every sample
at every batch; vlui decodes once and gathers batches from a uint8 tensor. This measures both on screen-like images.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import numpy as np
import torch
from PIL import Image

from vlui.bench import BenchOptions, Record, median_seconds, record


def screen_like_pngs(n: int, height: int = 256, width: int = 128, seed: int = 0) -> list[bytes]:
    """``n`` PNG-encoded images with the flat regions and edges of UI screens (not noise, which compresses badly)."""
    rng = np.random.default_rng(seed)
    pngs = []
    for _ in range(n):
        img = np.full((height, width, 3), rng.integers(200, 256), dtype=np.uint8)
        for _ in range(12):  # rectangles: list rows, buttons, icons
            y0, x0 = rng.integers(0, height - 8), rng.integers(0, width - 8)
            y1, x1 = y0 + rng.integers(4, 40), x0 + rng.integers(4, 60)
            img[y0:y1, x0:x1] = rng.integers(0, 256, size=3, dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="PNG")
        pngs.append(buf.getvalue())
    return pngs


def decode_png(data: bytes) -> np.ndarray:
    """PNG bytes -> (H, W, 3) uint8."""
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def bench_frame_decode(opts: BenchOptions) -> Iterator[Record]:
    n, batch = (64, 32) if opts.quick else (1024, 256)
    pngs = screen_like_pngs(n)
    rng = np.random.default_rng(1)
    idx = rng.integers(0, n, size=batch)

    def naive() -> torch.Tensor:
        return torch.from_numpy(np.stack([decode_png(pngs[i]) for i in idx]))

    frames = torch.from_numpy(np.stack([decode_png(p) for p in pngs]))  # (N, H, W, 3) uint8, decoded once
    index = torch.from_numpy(idx)

    def cached() -> torch.Tensor:
        return frames.index_select(0, index)

    assert torch.equal(naive(), cached())
    t_naive = median_seconds(naive, opts.repeats)
    t_cached = median_seconds(cached, opts.repeats)
    yield record(
        "frame_decode",
        batch / t_cached,
        "frames/s",
        baseline=batch / t_naive,
        method="uint8 tensor gather",
        baseline_method="per-sample PNG decode (PIL)",
        batch=batch,
        image="256x128",
    )
