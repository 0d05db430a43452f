"""The logger configs instantiate real Lightning loggers that write offline: CSV, TensorBoard, wandb (offline mode)."""

from __future__ import annotations

import csv
import re
import time
from pathlib import Path

import pytest
from hydra.utils import instantiate
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

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

    assert _logged(name, tmp_path) == 0.5  # the metric, under its name, with its value


def _logged(name: str, root: Path) -> float:
    """The value of ``train/bc_loss`` at step 1 as the logger wrote it under ``root``, read back with the format's
    own reader."""
    if name == "csv":
        (path,) = root.rglob("metrics.csv")
        with path.open(newline="") as f:
            (row,) = [r for r in csv.DictReader(f) if r.get("train/bc_loss")]
        assert int(row["step"]) == 1
        return float(row["train/bc_loss"])
    if name == "tensorboard":
        (path,) = root.rglob("events.out.tfevents*")
        events = EventAccumulator(str(path))
        events.Reload()
        (scalar,) = events.Scalars("train/bc_loss")
        assert scalar.step == 1
        return scalar.value
    (path,) = root.rglob("*.wandb")  # wandb's offline run file (it ships no reader for it)
    # a history record's item: the key, then its value as JSON in protobuf field 16 (tag 0x82 0x01), length-prefixed
    # (the history record and the run's summary both hold it). wandb's service process writes the file: on a loaded
    # machine its records can land a moment after finish() returns
    deadline, values = time.monotonic() + 60, set()
    while not values and time.monotonic() < deadline:
        data = path.read_bytes()
        items = re.finditer(rb"train/bc_loss\x82\x01([\x00-\x7f])", data)
        values = {float(data[m.end():m.end() + m.group(1)[0]]) for m in items}
        if not values:
            time.sleep(0.2)
    (value,) = values
    return value


def test_default_logger_is_csv(tmp_path: Path) -> None:
    cfg = compose("train", [], output_dir=tmp_path)
    assert list(cfg.logger) == ["csv"]
