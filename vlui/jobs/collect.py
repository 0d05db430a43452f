"""The ``collect`` job (``python collect.py``)."""

from __future__ import annotations

from omegaconf import DictConfig

from vlui.errors import NotBuiltError

NOT_BUILT = "collecting demonstrations needs the simulated device and the task catalog, which this version of vlui does not have yet (see the README's roadmap)"


def run(cfg: DictConfig) -> dict:
    """Run the job described by a composed ``configs/collect.yaml``."""
    raise NotBuiltError(f"collect: {NOT_BUILT}")
