"""The ``train`` job (``python train.py``)."""

from __future__ import annotations

from omegaconf import DictConfig

from vlui.errors import NotBuiltError

NOT_BUILT = "training needs the VLUI policy and the BC/IQL modules, which this version of vlui does not have yet (see the README's roadmap)"


def run(cfg: DictConfig) -> dict:
    """Run the job described by a composed ``configs/train.yaml``."""
    raise NotBuiltError(f"train: {NOT_BUILT}")
