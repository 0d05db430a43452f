"""The logger configs instantiate real Lightning loggers that write offline: CSV, TensorBoard, wandb (offline mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.utils import instantiate

from vlui.cli import compose

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", ["csv", "tensorboard", "wandb"])
def test_logger_config_writes_metrics_offline(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = compose("train", [f"logger={name}"], output_dir=tmp_path)
    (logger,) = [instantiate(c) for c in cfg.logger.values()]
    logger.log_metrics({"train/bc_loss": 0.5}, step=1)
    logger.finalize("success")
    if name == "wandb":
        logger.experiment.finish()

    written = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    expected = {"csv": "metrics.csv", "tensorboard": "events.out.tfevents", "wandb": ".wandb"}[name]
    assert any(expected in f for f in written), f"{name} wrote {sorted(written)}"


def test_default_logger_is_csv(tmp_path: Path) -> None:
    cfg = compose("train", [], output_dir=tmp_path)
    assert list(cfg.logger) == ["csv"]
