"""Behaviour cloning (B-MoCA App. C.4): the policy's own loss on the demonstrated dual-gestures."""

from __future__ import annotations

from typing import ClassVar

from vlui.algos.base import PolicyModule, validate
from vlui.algos.settings import BCConfig


class BCModule(PolicyModule):
    """Behaviour cloning: the policy's loss on the demonstrated dual-gesture (mean squared error for the paper's
    head, :func:`~vlui.algos.losses.pointer_loss` for the pointer head)."""

    Settings: ClassVar[type] = BCConfig

    def training_step(self, batch, batch_idx):
        batch = self.training_batch(batch)
        text, mask = self.text(batch["instruction"])
        loss, pred = self.actor_loss(self.features(batch, text, mask), batch["actions"])
        self.log("train/loss", loss, prog_bar=True)
        self._throughput(len(pred))
        return loss + self.grounding_loss(batch["grounding"]) if "grounding" in batch else loss

    def validation_step(self, batch, batch_idx):
        validate(self, batch)
