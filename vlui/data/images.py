"""Images kept by content hash beside an evaluation's ``episodes.jsonl``: the contract between what writes them (an
evaluation's kept screens, an LLM agent's request images) and what reads them (the viewer). Light: no imaging or
deep-learning library.

Each image is ``images/<sha256>.png``; an LLM agent's stored request names one as ``sha256:<hash>``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

IMAGES = "images"  # the folder beside episodes.jsonl
IMAGE_REF = "sha256:"  # how a stored request names an image, where the endpoint gets a data URL


def image_hash(png: bytes) -> str:
    """The content hash an image is stored and referred to by."""
    return hashlib.sha256(png).hexdigest()


def keep_images(images: dict[str, bytes], folder: Path) -> None:
    """Images by content hash, each written once as ``<folder>/<hash>.png``, whole or not at all."""
    for digest, png in images.items():
        path = folder / f"{digest}.png"
        if not path.exists():
            folder.mkdir(exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_bytes(png)
            tmp.replace(path)
