"""The learning-rate schedule (torch's schedulers, composed in vlui.algos.base.lr_schedule) against the formula
the configs describe: a linear warm-up from lr/warmup to lr, then constant or cosine annealing to 0 at the last step."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from vlui.algos.base import lr_schedule


def expected(step: int, kind: str, warmup: int, total: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    if kind == "constant":
        return 1.0
    return 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))


@pytest.mark.parametrize("kind", ["cosine", "constant"])
@pytest.mark.parametrize(("warmup", "total"), [(0, 10), (1, 10), (3, 10), (50, 400), (0, 1)])
def test_schedule_follows_the_formula(kind: str, warmup: int, total: int) -> None:
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.Adam([param], lr=0.1)
    with warnings.catch_warnings():  # SequentialLR's deprecation notes about step(epoch) in some torch versions
        warnings.simplefilter("ignore")
        sched = lr_schedule(opt, kind, warmup, total)
        rates = []
        for _ in range(total):
            rates.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
    assert rates == pytest.approx([0.1 * expected(t, kind, warmup, total) for t in range(total)], abs=1e-12)


def test_cosine_ends_near_zero_and_warmup_starts_small() -> None:
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=1.0)
    sched = lr_schedule(opt, "cosine", 10, 100)
    first = opt.param_groups[0]["lr"]
    for _ in range(99):
        opt.step()
        sched.step()
    assert first == pytest.approx(0.1) and opt.param_groups[0]["lr"] < 1e-3
