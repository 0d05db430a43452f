"""Where a policy export's files are, and which weights they hold, without loading torch: an evaluation tells
policies apart by their weights before it loads any of them (an error in its settings is one line in a second, not
after the deep-learning libraries load).

A policy export is a folder with ``config.json`` and ``model.safetensors``; a training run's checkpoint folder holds
one under ``policy/``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
EXPORT_DIR = "policy"  # the export inside a training run's checkpoint folder


def export_dir(path: str | Path) -> Path:
    """The export folder ``path`` names: a run's checkpoint folder's ``policy/``, or ``path`` itself."""
    path = Path(path)
    return path / EXPORT_DIR if path.is_dir() and (path / EXPORT_DIR).is_dir() else path


def weights_digest(checkpoint: str | Path) -> str:
    """A short digest of a policy's weights file (an export's ``model.safetensors``, or a ``.ckpt`` file): what
    tells a policy from one trained again into the same folder. ``missing`` when there is no such file (loading it
    says why)."""
    path = Path(checkpoint)
    if not path.is_file():
        path = export_dir(path) / WEIGHTS
    if not path.is_file():
        return "missing"
    digest = hashlib.blake2b(digest_size=8)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
