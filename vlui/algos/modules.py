"""BC and IQL as LightningModules over the VLUI policy.

Both take plain, typed hyperparameters (dicts of numbers and strings), so their checkpoints reload without Hydra.
Instruction embeddings are computed once, for the dataset's distinct instructions, when training starts; a batch
carries instruction indices into that table. Grounding examples (``data.grounding``) do the same with their labels,
and their loss (the policy's own loss on the taps at the labelled elements) is added with ``grounding_weight``.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import lightning as L
import torch

from vlui.algos import feature_store, losses
from vlui.algos.augment import color_jitter, random_shift
from vlui.models.policy import Critics, Fused, VLUIPolicy
from vlui.models.settings import from_dict


def lr_schedule(opt: torch.optim.Optimizer, kind: str, warmup: int, total: int) -> torch.optim.lr_scheduler.LRScheduler:
    """The learning rate over ``total`` steps, from torch's schedulers: a linear warm-up over the first ``warmup``
    steps (from lr/warmup to lr), then ``constant`` or ``cosine`` (annealed to 0 at step ``total``)."""
    sched = torch.optim.lr_scheduler
    after = (sched.ConstantLR(opt, factor=1.0, total_iters=0) if kind == "constant"
             else sched.CosineAnnealingLR(opt, T_max=max(1, total - warmup)))
    if warmup <= 0:
        return after
    ramp = (sched.LinearLR(opt, start_factor=1 / warmup, end_factor=1.0, total_iters=warmup - 1) if warmup > 1
            else sched.ConstantLR(opt, factor=1.0, total_iters=0))  # a one-step warm-up is at the full rate
    return sched.SequentialLR(opt, [ramp, after], milestones=[warmup])


class _Base(L.LightningModule):
    def __init__(self, policy: dict[str, Any], algo: dict[str, Any], augment: dict[str, Any], seed: int = 0,
                 channels_last: bool = True, compile: bool = False, grounding_weight: float = 0.0) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.policy = VLUIPolicy(*from_dict(policy))
        self.algo, self.augment = algo, augment
        if channels_last:
            self.policy.encoder.vision.backbone.to(memory_format=torch.channels_last)
        self._encode = torch.compile(self.policy.encoder) if compile else self.policy.encoder
        self.register_buffer("instr_tokens", torch.zeros(0), persistent=False)
        self.register_buffer("feature_cache", torch.zeros(0), persistent=False)
        self.register_buffer("instr_mask", torch.zeros(0, dtype=torch.bool), persistent=False)
        self.register_buffer("label_tokens", torch.zeros(0), persistent=False)  # the grounding labels' embeddings
        self.register_buffer("label_mask", torch.zeros(0, dtype=torch.bool), persistent=False)
        self._last_time: float | None = None
        self._part_features: dict[str, torch.Tensor] = {}  # a dataset's folder -> its frames' backbone features
        self.store_features = True  # keep them in the dataset's feature store for the next run (data.feature_cache)

    # ------------------------------------------------------------------------------------------------ setup
    def setup(self, stage: str) -> None:
        # the trainer has set the data module up (it runs before this hook): it owns the data; the module only
        # embeds the instructions it holds and, with a frozen backbone, caches its screens' features
        dm = self.trainer.datamodule
        tokens, mask = self.policy.text.table(dm.instructions)  # once per distinct instruction
        self.instr_tokens, self.instr_mask = tokens.to(self.device), mask.to(self.device)
        if dm.labels:  # grounding: its labels are instructions too, embedded once
            tokens, mask = self.policy.text.table(dm.labels)
            self.label_tokens, self.label_mask = tokens.to(self.device), mask.to(self.device)
        if self.caches_features:  # per dataset of the mix, kept for the next fit (DAgger adds a dataset a round)
            parts, start = [], 0
            for path, n in dm.parts:
                if path not in self._part_features:
                    self._part_features[path] = self._stored_features(path, dm.frames[start:start + n])
                parts.append(self._part_features[path].to(self.device))
                start += n
            self.feature_cache = torch.cat(parts)

    @property
    def caches_features(self) -> bool:
        """A frozen backbone and no augmentation: every frame's feature map is computed once, before training."""
        return (self.policy.encoder.vision.frozen and not self.augment.get("random_shift", 0)
                and not self.augment.get("color_jitter", 0.0))

    def _stored_features(self, dataset: str, frames: torch.Tensor) -> torch.Tensor:
        """The backbone's features of a dataset's frames: from its feature store when a run has already computed
        them (:mod:`vlui.algos.feature_store`), else computed and stored."""
        if not self.store_features:
            return self._backbone_features(frames)
        vision = self.policy.encoder.vision
        name = feature_store.key(vision, frames)
        features = feature_store.load(dataset, name)
        if features is None:
            features = self._backbone_features(frames)
            feature_store.save(dataset, name, features)
        return features

    @torch.no_grad()
    def _backbone_features(self, frames: torch.Tensor) -> torch.Tensor:
        vision = self.policy.encoder.vision.to(self.device)
        # on a CPU small batches are several times faster: a large batch's activations are fresh memory each time
        batch = 256 if self.device.type == "cuda" else 8
        out = [vision.cached_map(frames[i:i + batch].to(self.device)).half()  # half the memory
               for i in range(0, len(frames), batch)]
        return torch.cat(out).contiguous()  # the layout a stored copy is read back in (not channels-last)

    def features(self, batch: dict[str, torch.Tensor], text, mask, key: str = "images", train: bool = True) -> Fused:
        """The encoder's :class:`Fused` features of the batch's screens (from the feature cache when there is one)."""
        previous = batch.get("previous" if key == "images" else "next_previous")
        if self.feature_cache.numel():
            frame = batch["frame" if key == "images" else "next_frame"].to(self.feature_cache.device)
            return self.policy.encoder.from_cached(self.feature_cache[frame], text, mask, previous)
        return self._encode(self.images(batch, key, train), text, mask, previous)

    def actor_loss(self, features: Fused, actions: torch.Tensor, weights: torch.Tensor | None = None):
        """The policy's loss on demonstrated ``actions`` (weighted per sample for IQL), and its ``(B, 4)``
        predicted actions. The paper's head regresses (mean squared error, or its advantage-weighted sum over the
        four numbers); the pointer head classifies cells (:func:`~vlui.algos.losses.pointer_loss`)."""
        out = self.policy.head_output(features)
        pred = self.policy.head.actions(out)
        if self.policy.cfg.head == "mlp":
            loss = losses.bc_loss(pred, actions) if weights is None else losses.awr_actor_loss(pred, actions, weights)
            return loss, pred
        gesture = self.algo.get("gesture") or {}
        per_sample = losses.pointer_loss(out, actions, gesture.get("threshold", 0.14), gesture.get("y_scale", 2.0))
        return (per_sample.mean() if weights is None else (weights * per_sample).mean()), pred

    def grounding_loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The policy's loss on a batch of grounding examples (a label as the instruction, the tap at its element as
        the action; :meth:`DemoDataModule.grounding_batch`), logged as ``train/grounding_loss`` and returned times
        ``grounding_weight``, to be added to the algorithm's loss."""
        text, mask = self.label_tokens[batch["label"]], self.label_mask[batch["label"]]
        loss, _ = self.actor_loss(self.features(batch, text, mask), batch["actions"])
        self.log("train/grounding_loss", loss)
        return self.hparams.grounding_weight * loss

    def text(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.instr_tokens[index], self.instr_mask[index]

    def images(self, batch: dict[str, torch.Tensor], key: str = "images", train: bool = True) -> torch.Tensor:
        x = batch[key]
        if train:
            g = torch.Generator().manual_seed(self.hparams.seed * 1_000_003 + self.global_step)
            x = random_shift(x, self.augment.get("random_shift", 0), g)
            x = color_jitter(x, self.augment.get("color_jitter", 0.0), g)
        return x

    def configure_optimizers(self):
        optim = self.algo["optim"]
        params = [p for p in self.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=optim["lr"], betas=tuple(optim.get("betas", (0.9, 0.999))),
                               weight_decay=optim.get("weight_decay", 0.0))
        total = max(1, self.trainer.max_steps if self.trainer.max_steps > 0 else 1)
        sched = lr_schedule(opt, optim.get("scheduler", "cosine"), optim.get("warmup_steps", 0), total)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def _throughput(self, batch_size: int) -> None:
        now = time.perf_counter()
        if self._last_time is not None:
            self.log("train/samples_per_s", batch_size / max(now - self._last_time, 1e-9), prog_bar=False)
        self._last_time = now


class BCModule(_Base):
    """Behaviour cloning: mean squared error to the demonstrated dual-gesture."""

    def training_step(self, batch, batch_idx):
        text, mask = self.text(batch["instruction"])
        loss, pred = self.actor_loss(self.features(batch, text, mask), batch["actions"])
        self.log("train/loss", loss, prog_bar=True)
        self._throughput(len(pred))
        return loss + self.grounding_loss(batch["grounding"]) if "grounding" in batch else loss

    def validation_step(self, batch, batch_idx):
        validate(self, batch)


class IQLModule(_Base):
    """Implicit Q-learning (Kostrikov et al. 2022; B-MoCA App. E.3).

    Deviations from the paper, as CORL does them: twin Q heads (the minimum of the target pair is used), a
    Polyak-averaged target Q, advantage weights clipped at ``max_weight``, and the TD target masked by ``done``.
    One Adam optimises the sum of the three losses; each loss only reaches its own heads because every cross-term
    is detached. With ``share_encoders`` the critics read the policy's encoder features (trained by all three
    losses); otherwise they have an encoder of their own.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cfg = self.policy.cfg
        self.critics = Critics(cfg, self.policy.text.dim, list(cfg.head_dims), own_encoder=not self.algo[
            "share_encoders"])
        self.target_critics = copy.deepcopy(self.critics).requires_grad_(False)

    def _features(self, critics: Critics, batch, text, mask, key: str = "images"):
        if critics.encoder is None:
            return self.features(batch, text, mask, key)
        return critics.encoder(self.images(batch, key), text, mask,
                               batch.get("previous" if key == "images" else "next_previous"))

    def training_step(self, batch, batch_idx):
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
        v_loss = losses.value_loss(target_q, v, a["expectile"])
        q1, q2 = self.critics.q(feats, batch["actions"])
        q_loss = losses.q_loss(q1, q2, losses.td_target(batch["rewards"], batch["dones"], next_v, a["discount"]))
        weights = losses.advantage_weights(target_q - v.detach(), a["beta"], a["max_weight"])
        shared = self.critics.encoder is None  # the actor's features are the critics' features
        actor_loss, pred = self.actor_loss(fused if shared else self.features(batch, text, mask), batch["actions"],
                                           weights)
        self.log_dict({"train/v_loss": v_loss, "train/q_loss": q_loss, "train/actor_loss": actor_loss,
                       "train/bc_loss": losses.bc_loss(pred.detach(), batch["actions"])}, prog_bar=True)
        self._throughput(len(pred))
        loss = v_loss + q_loss + actor_loss
        return loss + self.grounding_loss(batch["grounding"]) if "grounding" in batch else loss

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        losses.polyak_update(self.target_critics, self.critics, self.algo["polyak"])

    def validation_step(self, batch, batch_idx):
        validate(self, batch)


def validate(module: _Base, batch: dict[str, torch.Tensor]) -> None:
    """Validation, whatever the algorithm: the policy's own loss, and the mean squared error of the actions it
    would take (comparable across heads)."""
    text, mask = module.text(batch["instruction"])
    loss, pred = module.actor_loss(module.features(batch, text, mask, train=False), batch["actions"])
    module.log_dict({"val/loss": loss, "val/bc_loss": losses.bc_loss(pred, batch["actions"])}, prog_bar=True)


ALGOS = {"bc": BCModule, "iql": IQLModule}
