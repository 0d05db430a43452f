"""Implicit Q-learning (Kostrikov et al. 2022; B-MoCA App. E.3) on a dataset of demonstrations."""

from __future__ import annotations

import copy
from typing import ClassVar

import torch

from vlui.algos import losses
from vlui.algos.base import PolicyModule, validate
from vlui.algos.settings import IQLConfig
from vlui.models.policy import Critics


class IQLModule(PolicyModule):
    """Implicit Q-learning (Kostrikov et al. 2022; B-MoCA App. E.3).

    Deviations from the paper, as CORL does them: twin Q heads (the minimum of the target pair is used), a
    Polyak-averaged target Q, advantage weights clipped at ``max_weight``, and the TD target masked by ``done``.
    One Adam optimises the sum of the three losses; each loss only reaches its own heads because every cross-term
    is detached. With ``share_encoders`` the critics read the policy's encoder features (trained by all three
    losses); otherwise they have an encoder of their own.
    """

    Settings: ClassVar[type] = IQLConfig

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cfg = self.policy.cfg
        self.critics = Critics(cfg, self.policy.text.dim, list(cfg.head_dims),
                               own_encoder=not self.algo.share_encoders)
        self.target_critics = copy.deepcopy(self.critics).requires_grad_(False)

    def _features(self, critics: Critics, batch, text, mask, key: str = "images"):
        if critics.encoder is None:
            return self.features(batch, text, mask, key)
        return critics.encoder(self.images(batch, key), text, mask, self.past(batch, key, images=True))

    def training_step(self, batch, batch_idx):
        batch = self.training_batch(batch)
        a = self.algo
        text, mask = self.text(batch["instruction"])
        fused = self._features(self.critics, batch, text, mask)
        feats = fused.pooled
        with torch.no_grad():
            target_feats = self._features(self.target_critics, batch, text, mask).pooled
            tq1, tq2 = self.target_critics.q(target_feats, batch["actions"])
            target_q = torch.minimum(tq1, tq2)
            next_v = self.critics.value(self._features(self.critics, batch, text, mask, "next_images").pooled)
        v = self.critics.value(feats)
        v_loss = losses.value_loss(target_q, v, a.expectile)
        q1, q2 = self.critics.q(feats, batch["actions"])
        q_loss = losses.q_loss(q1, q2, losses.td_target(batch["rewards"], batch["dones"], next_v, a.discount))
        weights = losses.advantage_weights(target_q - v.detach(), a.beta, a.max_weight)
        shared = self.critics.encoder is None  # the actor's features are the critics' features
        actor_loss, pred = self.actor_loss(fused if shared else self.features(batch, text, mask), batch["actions"],
                                           weights)
        self.log_dict({"train/v_loss": v_loss, "train/q_loss": q_loss, "train/actor_loss": actor_loss,
                       "train/bc_loss": losses.bc_loss(pred.detach(), batch["actions"])}, prog_bar=True)
        self._throughput(len(pred))
        loss = v_loss + q_loss + actor_loss
        return loss + self.grounding_loss(batch["grounding"]) if "grounding" in batch else loss

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        losses.polyak_update(self.target_critics, self.critics, self.algo.polyak)

    def validation_step(self, batch, batch_idx):
        validate(self, batch)
