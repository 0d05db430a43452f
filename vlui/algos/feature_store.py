"""A frozen image backbone's features of a dataset's screens, kept on disk next to the dataset.

Training with a frozen backbone computes every screen's feature map once, before the first step
(:class:`vlui.algos.base.PolicyModule`). Every run on the same screens with the same backbone gets the same maps: the
seeds of a sweep, the arms of a study that share a dataset, a resumed run, the next DAgger round. So the maps are
stored in ``<dataset>/features/<key>.safetensors`` and read back instead of recomputed.

The key is a hash of everything the maps depend on: the screens' pixels, the backbone's weights and buffers, the
stages read, and torch's version. A dataset that grows (a resumed collection), other weights (a randomly initialised
backbone of another seed) or another stage give another key, so a stored file is never used for other screens or
another backbone. Files are written whole or not at all (a temporary file renamed), and are safetensors: reading
one runs no code. ``data.feature_cache=false`` turns the store off; deleting ``features/`` is always safe.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_bytes
from safetensors.torch import save_file

from vlui.models.vision import VisionEncoder

log = logging.getLogger(__name__)

FORMAT = 1  # bump when what a stored map means changes
FOLDER = "features"


def key(vision: VisionEncoder, frames: torch.Tensor, variant: str = "") -> str:
    """The hash naming the feature maps of ``frames`` (``(N, H, W, 3)`` uint8) under ``vision``'s backbone;
    ``variant`` names maps of other images made from them (zoomed views: ``data.augment.zoom``)."""
    h = hashlib.sha256()
    h.update(repr((FORMAT, torch.__version__, vision.name, vision.feature_index, vision.detail_index,
                   tuple(frames.shape)) + ((vision.tune_blocks,) if vision.tune_blocks else ())
                  + ((variant,) if variant else ())).encode())
    state = vision.cache_state()  # the backbone's frozen part (trained blocks change during training)
    for name in sorted(state):
        t = state[name].detach().cpu().contiguous()
        h.update(name.encode() + str(t.dtype).encode() + str(tuple(t.shape)).encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy())
    h.update(frames.detach().cpu().contiguous().numpy())  # hashed in place: no copy of a dataset's screens
    return h.hexdigest()[:32]


def path(dataset: str | Path, name: str) -> Path:
    return Path(dataset) / FOLDER / f"{name}.safetensors"


def load(dataset: str | Path, name: str) -> torch.Tensor | None:
    """The stored maps of key ``name``, or None when there are none (or the file cannot be read: it is recomputed)."""
    file = path(dataset, name)
    if not file.is_file():
        return None
    try:
        return load_bytes(file.read_bytes())["features"]  # read whole, not mapped: the file may be replaced
    except (OSError, SafetensorError, KeyError) as err:
        log.warning("feature store: %s is unreadable (%s); computing the features again", file, err)
        return None


def save(dataset: str | Path, name: str, features: torch.Tensor) -> Path | None:
    """Store ``features`` under key ``name``; a dataset folder that cannot be written to is left as it is."""
    file = path(dataset, name)
    tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        file.parent.mkdir(exist_ok=True)
        save_file({"features": features.detach().cpu().contiguous()}, str(tmp))
        os.replace(tmp, file)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        log.warning("feature store: could not write %s (%s); features are not kept for the next run", file, err)
        return None
    return file
