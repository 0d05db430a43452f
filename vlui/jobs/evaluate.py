"""The ``evaluate`` job (``python evaluate.py``)."""

from __future__ import annotations

from omegaconf import DictConfig

from vlui.errors import NotBuiltError

NOT_BUILT = "evaluation needs the environment, the agents and the metrics, which this version of vlui does not have yet (see the README's roadmap)"


def run(cfg: DictConfig) -> dict:
    """Run the job described by a composed ``configs/evaluate.yaml``."""
    raise NotBuiltError(f"evaluate: {NOT_BUILT}")
