"""Training throughput (samples/s) of vlui's pipeline against a naive one, measured in the same run.

vlui: screens decoded once into a uint8 tensor (on the GPU when there is one), instruction embeddings computed once,
channels-last, bf16 autocast on a GPU. Naive: a DataLoader whose workers decode every sample's PNG, the text encoder
run on every batch, fp32. Both train the paper's model (EfficientNet-b0, 256x128 screens, d = 768, head (1024, 1024),
BC loss, Adam) for the same number of steps; on a CPU the batch is smaller than the paper's 512.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from vlui.algos.losses import bc_loss
from vlui.bench import BenchOptions, Record, record
from vlui.bench.frames import decode_png, screen_like_pngs
from vlui.models.policy import VLUIPolicy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.spec import ObsActionSpec

INSTRUCTIONS = ["turn on airplane mode", "turn on alarm at 9 am", "create alarm at 10:30 am",
                "decrease screen brightness in setting", "call 911", "go to 'add a language' page in setting"]


class PngDataset(Dataset):
    def __init__(self, pngs: list[bytes], actions: np.ndarray) -> None:
        self.pngs, self.actions = pngs, actions

    def __len__(self) -> int:
        return len(self.pngs)

    def __getitem__(self, i: int):
        return torch.from_numpy(decode_png(self.pngs[i]).copy()), torch.from_numpy(self.actions[i]), \
            INSTRUCTIONS[i % len(INSTRUCTIONS)]


def _steps(policy, optimizer, batches, device, text_fn, autocast: bool) -> float:
    """Seconds for the given batches (data loading included)."""
    start = time.perf_counter()
    for images, actions, instr in batches:
        images, actions = images.to(device, non_blocking=True), actions.to(device, non_blocking=True)
        text, mask = text_fn(instr)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            loss = bc_loss(policy(images, text, mask).float(), actions)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def bench_train(opts: BenchOptions) -> Iterator[Record]:
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    batch = (512 if cuda else 16) if not opts.quick else 4
    steps = (20 if cuda else 3) if not opts.quick else 2
    h, w = (256, 128) if not opts.quick else (64, 32)
    n = batch * (steps + 1)
    pngs = screen_like_pngs(min(n, 1024), h, w)
    pngs = [pngs[i % len(pngs)] for i in range(n)]
    actions = np.random.default_rng(0).uniform(-1, 1, (n, 4)).astype(np.float32)
    cfg = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="small" if not opts.quick else "tiny"),
                      hidden_dim=768 if not opts.quick else 32, num_heads=8 if not opts.quick else 2,
                      head_dims=[1024, 1024] if not opts.quick else [32, 32])
    results = {}
    for name in ("naive", "vlui"):
        torch.manual_seed(0)
        policy = VLUIPolicy(cfg, ObsActionSpec(h, w)).to(device)
        optimizer = torch.optim.Adam([p for p in policy.parameters() if p.requires_grad], lr=3e-4)
        if name == "naive":
            loader = DataLoader(PngDataset(pngs, actions), batch_size=batch, shuffle=True, num_workers=2,
                                drop_last=True)

            def text_fn(instr):  # the encoder runs on every batch
                tokens, mask = policy.text.encoder.encode(list(instr))
                return tokens.to(device), mask.to(device)

            batches = iter(loader)
            _steps(policy, optimizer, [next(batches)], device, text_fn, False)  # warm-up
            seconds = _steps(policy, optimizer, [next(batches) for _ in range(steps)], device, text_fn, False)
        else:
            policy.encoder.vision.backbone.to(memory_format=torch.channels_last)
            frames = torch.from_numpy(np.stack([decode_png(p) for p in pngs])).to(device)  # decoded once
            acts = torch.from_numpy(actions).to(device)
            table, table_mask = policy.text.table(INSTRUCTIONS)
            table, table_mask = table.to(device), table_mask.to(device)
            instr_idx = torch.arange(n, device=device) % len(INSTRUCTIONS)
            g = torch.Generator(device="cpu").manual_seed(0)

            def make_batches(k):
                out = []
                for _ in range(k):
                    idx = torch.randint(0, n, (batch,), generator=g).to(device)
                    out.append((frames[idx], acts[idx], instr_idx[idx]))
                return out

            def text_fn(idx):  # a gather from the table computed once
                return table[idx], table_mask[idx]

            _steps(policy, optimizer, make_batches(1), device, text_fn, cuda)  # warm-up
            start = time.perf_counter()
            built = make_batches(steps)  # gathering is part of the cost
            gather = time.perf_counter() - start
            seconds = _steps(policy, optimizer, built, device, text_fn, cuda) + gather
        results[name] = batch * steps / seconds
    yield record("train_throughput", results["vlui"], "samples/s", baseline=results["naive"],
                 method="decoded-once uint8 frames, cached instruction embeddings, channels-last"
                        + (", bf16 autocast" if cuda else ", fp32 (CPU)"),
                 baseline_method="DataLoader workers decoding PNGs per sample, text encoder per batch, fp32",
                 batch=batch, steps=steps, image=f"{h}x{w}", model="efficientnet_b0 + T5 (untrained, small) d=768"
                 if not opts.quick else "tiny", device=str(device))
