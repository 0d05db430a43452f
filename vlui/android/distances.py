"""How far the held-out phones are from training: for each test snapshot and each validation phone, the nearest
training screen (the training snapshots of ``envs/`` and ``random:N`` generated phones), by distance and along each
axis of :data:`~vlui.android.screens.AXES`, and which of its other values the training phones never take.

``python -m vlui.sim snapshots distances`` prints the table docs/generation.md carries; a test holds validation to
being at least as far from training as the test snapshots are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlui.android import generate
from vlui.android.screens import AXES, Nearest, coordinates, nearest
from vlui.android.snapshot import ENVS_DIR, generator_pools, load_snapshot, snapshot_ids, snapshot_refs

VALUE_AXES = ("density", "locale", "wallpaper")  # the held-out axes other than the screen, as in Pools.rates
LABELS = {"width_dp": "width (dp)", "height_dp": "height (dp)", "aspect": "aspect", "dpi": "density (dpi)"}


@dataclass(frozen=True)
class Row:
    """One held-out phone: its id, split (``test`` or ``val``), screen, the held-out region it is in (or ""), its
    :class:`~vlui.android.screens.Nearest` training screen, and the axes of :data:`VALUE_AXES` on which it holds a
    value no training phone takes."""

    phone: str
    split: str
    screen: str
    region: str
    nearest: Nearest
    values: tuple[str, ...]


def rows(train: str = "random:5000", seed: int = 0, envs: str | Path | None = None) -> list[Row]:
    """The rows of the test snapshots and of the validation phones (``val``), measured against the training
    snapshots and ``train`` (training phones of the generator's ``seed``)."""
    pools = generator_pools(str(Path(envs) if envs else ENVS_DIR))
    trained = [load_snapshot(i, envs) for i in snapshot_ids("train", envs)]
    trained += [load_snapshot(i, envs) for i in snapshot_refs(train, seed, envs_dir=envs)]
    train_at = coordinates(generate.geometry(s) for s in trained)
    out = []
    for split, refs in (("test", snapshot_ids("test", envs)), ("val", snapshot_refs("val", envs_dir=envs))):
        for ref in refs:
            snap = load_snapshot(ref, envs)
            geometry = generate.geometry(snap)
            pool = "test_only" if split == "test" else "validation"
            region = pools.region(geometry, pool)
            values = generate.pool_values(snap)
            kept = {a: pools.test_only.get(a, frozenset()) | pools.validation.get(a, frozenset()) for a in values}
            held = tuple(axis for axis in VALUE_AXES
                         if any(values[a] & kept[a] for a in ((axis, "script") if axis == "locale" else (axis,))))
            out.append(Row(snap.id, split, geometry.describe(), region.name if region else "",
                           nearest(geometry, train_at), held))
    return out


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def summary(table: Sequence[Row]) -> dict[str, dict[str, float]]:
    """Per group (``test`` and ``val``, each for its phones on held-out screens and for all): the phones, the mean and
    the least distance to training, and the least distance along each axis; and per axis of :data:`VALUE_AXES`, the
    share of phones with a held-out value there."""
    out = {}
    for split in ("test", "val"):
        every = [r for r in table if r.split == split]
        for name, group in ((f"{split}, held-out screens", [r for r in every if r.region]), (f"{split}, all", every)):
            entry = {"phones": float(len(group)), "mean distance": _mean([r.nearest.distance for r in group]),
                     "least distance": min((r.nearest.distance for r in group), default=math.nan)}
            for axis in AXES:
                entry[f"least along {axis}"] = min((r.nearest.along[axis] for r in group), default=math.nan)
            for axis in VALUE_AXES:
                entry[f"share {axis}"] = _mean([axis in r.values for r in group])
            out[name] = entry
    return out


def _number(value: float) -> str:
    return "beyond 1 on the others" if math.isinf(value) else f"{value:.2f}"


def markdown(table: Sequence[Row]) -> str:
    """The table of every held-out phone on a held-out screen, then the summary of both pools."""
    lines = ["| phone | split | screen | region | distance | " + " | ".join(f"along {LABELS[a]}" for a in AXES)
             + " | other held-out values |", "| --- " * (6 + len(AXES)) + "|"]
    for r in table:
        if r.split == "test" or r.region:
            lines.append(f"| {r.phone} | {r.split} | {r.screen} | {r.region or '–'} | {r.nearest.distance:.2f} | "
                         + " | ".join(_number(r.nearest.along[a]) for a in AXES)
                         + f" | {', '.join(r.values) or '–'} |")
    lines += ["", "| group | phones | mean distance | least distance | "
              + " | ".join(f"least along {LABELS[a]}" for a in AXES) + " | "
              + " | ".join(f"share held out: {a}" for a in VALUE_AXES) + " |",
              "| --- " * (4 + len(AXES) + len(VALUE_AXES)) + "|"]
    for name, e in summary(table).items():
        lines.append(f"| {name} | {e['phones']:.0f} | {e['mean distance']:.2f} | {e['least distance']:.2f} | "
                     + " | ".join(_number(e[f"least along {a}"]) for a in AXES) + " | "
                     + " | ".join(f"{100 * e[f'share {a}']:.0f}%" for a in VALUE_AXES) + " |")
    return "\n".join(lines)
