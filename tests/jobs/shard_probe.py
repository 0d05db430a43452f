"""A Lightning callback for the DDP test: each rank writes down the samples it trained on and the weights it ends
with, so the test can check what the ranks did from the outside (they run in separate processes)."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import torch


class RecordShards(L.Callback):
    """Writes ``rank<r>.pt`` to ``out_dir``: the world size, the dataset rows of every training batch
    (``frames``: one list per step), the policy's weights when training starts and when it ends."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = Path(out_dir)
        self.frames: list[list[int]] = []
        self.initial: dict[str, torch.Tensor] = {}

    @staticmethod
    def _weights(module: L.LightningModule) -> dict[str, torch.Tensor]:
        return {k: v.detach().cpu().clone() for k, v in module.policy.state_dict().items()}

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.initial = self._weights(pl_module)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self.frames.append(batch["frame"].tolist())

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        torch.save({"rank": trainer.global_rank, "world_size": trainer.world_size, "frames": self.frames,
                    "initial": self.initial, "final": self._weights(pl_module)},
                   self.out_dir / f"rank{trainer.global_rank}.pt")
