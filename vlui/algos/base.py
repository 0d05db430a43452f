"""What every algorithm's LightningModule shares (:class:`PolicyModule`): the VLUI policy it trains, its instruction
embeddings, the frozen backbone's feature cache, augmentation, the policy's own loss on demonstrated actions and on
grounding examples, and Adam with the learning-rate schedule.

Each algorithm is a subclass in a module of its own (:mod:`vlui.algos.bc`, :mod:`vlui.algos.iql`, :mod:`vlui.algos.ppo`)
with its settings' dataclass in :mod:`vlui.algos.settings`. Modules take plain, typed hyperparameters (dicts of
numbers and strings), so their checkpoints reload without Hydra. Instruction embeddings are computed once, for the
dataset's distinct instructions, when training starts; a batch carries instruction indices into that table.
Grounding examples (``data.grounding``) do the same with their labels, and their loss (the policy's own loss on the
taps at the labelled elements) is added with ``grounding_weight``. A policy with memory (``model.history``) reads each
sample's past steps from the batch's index arrays; with ``model.history_screens`` their screens are the rows of the
feature cache (or of the data module's frames) those steps were, never computed or stored again.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import lightning as L
import torch

from vlui.algos import feature_store, losses
from vlui.algos.augment import (IDENTITY_ZOOM, ZOOM_SEED, color_jitter, random_shift, zoom, zoom_draws, zoom_points,
                                zoom_views)
from vlui.algos.settings import from_mapping
from vlui.data.settings import AugmentConfig
from vlui.models.policy import Fused, VLUIPolicy
from vlui.models.settings import from_dict
from vlui.seeding import substream
from vlui.spec import Past


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


class PolicyModule(L.LightningModule):
    """The policy of ``policy`` (:func:`vlui.models.settings.to_dict`) trained by the algorithm of ``algo`` (a
    mapping of its ``Settings``' fields), with ``augment`` (:class:`AugmentConfig`'s fields; none when None). The
    pointer head's labels tell taps from swipes by the policy's spec, as the environment reads its actions."""

    Settings: ClassVar[type]  # the algorithm's settings (vlui/algos/settings.py), read into ``self.algo``

    def __init__(self, policy: dict[str, Any], algo: dict[str, Any], augment: dict[str, Any] | None = None,
                 seed: int = 0, channels_last: bool = True, compile: bool = False, grounding_weight: float = 0.0) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.policy = VLUIPolicy(*from_dict(policy))
        self.algo = from_mapping(self.Settings, algo)
        self.augment = (from_mapping(AugmentConfig, augment) if augment is not None
                        else AugmentConfig(random_shift=0, color_jitter=0.0))
        if channels_last:
            self.policy.encoder.vision.backbone.to(memory_format=torch.channels_last)
        self._encode = torch.compile(self.policy.encoder) if compile else self.policy.encoder
        self.register_buffer("instr_tokens", torch.zeros(0), persistent=False)
        self.register_buffer("feature_cache", torch.zeros(0), persistent=False)
        # data.augment.zoom with the cache: the zoomed views' features (views, N, ...) and their zooms (views, N, 3)
        self.register_buffer("zoom_cache", torch.zeros(0), persistent=False)
        self.register_buffer("zoom_table", torch.zeros(0), persistent=False)
        self.register_buffer("instr_mask", torch.zeros(0, dtype=torch.bool), persistent=False)
        self.register_buffer("label_tokens", torch.zeros(0), persistent=False)  # the grounding labels' embeddings
        self.register_buffer("label_mask", torch.zeros(0, dtype=torch.bool), persistent=False)
        self._last_time: float | None = None
        self._part_features: dict[str, torch.Tensor] = {}  # a dataset's folder -> its frames' backbone features
        self._part_zoomed: dict[str, torch.Tensor] = {}  # the same of their zoomed views
        self._frames: torch.Tensor | None = None  # the data module's frames, where past screens are read without a cache
        self.store_features = True  # keep them in the dataset's feature store for the next run (data.feature_cache)

    # ------------------------------------------------------------------------------------------------ setup
    def setup(self, stage: str) -> None:
        # the trainer has set the data module up (it runs before this hook): it owns the data; the module only
        # embeds the instructions it holds and, with a frozen backbone, caches its screens' features
        dm = self.trainer.datamodule
        self._frames = dm.frames
        tokens, mask = self.policy.text.table(dm.instructions)  # once per distinct instruction
        self.instr_tokens, self.instr_mask = tokens.to(self.device), mask.to(self.device)
        if dm.labels:  # grounding: its labels are instructions too, embedded once
            tokens, mask = self.policy.text.table(dm.labels)
            self.label_tokens, self.label_mask = tokens.to(self.device), mask.to(self.device)
        if self.caches_features:  # per dataset of the mix, kept for the next fit (DAgger adds a dataset a round)
            self.feature_cache = self._joined(self._part_features, dm)
            if self.augment.zoom:
                self.zoom_cache = self._joined(self._part_zoomed, dm, zoomed=True)
                self.zoom_table = torch.cat([zoom_views(n, self.augment.views, self.augment.zoom) for _, n in dm.parts],
                                            dim=1).to(self.device)

    def _joined(self, kept: dict[str, torch.Tensor], dm, zoomed: bool = False) -> torch.Tensor:
        """The cached maps of every part of ``dm``'s mix, joined in order (along the frames: the first dimension, or
        the second for the ``(views, N, ...)`` zoomed views), computing or reading those ``kept`` lacks; ``kept``
        then holds each part as a view of the joined cache, so its memory is held once."""
        parts, start = [], 0
        for path, n in dm.parts:
            if path not in kept:
                kept[path] = self._stored_features(path, dm.frames[start:start + n], zoomed=zoomed)
            parts.append(kept[path].to(self.device))
            start += n
        dim = 1 if zoomed else 0
        joined = parts[0] if len(parts) == 1 else torch.cat(parts, dim=dim)
        start = 0
        for path, n in dm.parts:
            kept[path] = joined.narrow(dim, start, n)
            start += n
        return joined

    def teardown(self, stage: str) -> None:
        self._frames = None  # the data module's, which may let go of them (DAgger's next round); setup hands them again

    @property
    def caches_features(self) -> bool:
        """A frozen backbone and no random shift or colour jitter: every frame's feature map is computed once, before
        training (with ``data.augment.zoom``, its zoomed views' too)."""
        return self.policy.encoder.vision.frozen and not self.augment.random_shift and not self.augment.color_jitter

    def _stored_features(self, dataset: str, frames: torch.Tensor, zoomed: bool = False) -> torch.Tensor:
        """The backbone's features of a dataset's frames (``zoomed``: of their ``data.augment.views`` zoomed views,
        ``(views, N, ...)``): from its feature store when a run has already computed them
        (:mod:`vlui.algos.feature_store`), else computed and stored."""
        a = self.augment
        views = zoom_views(len(frames), a.views, a.zoom) if zoomed else None
        if not self.store_features:
            return self._backbone_features(frames, views)
        vision = self.policy.encoder.vision
        name = feature_store.key(vision, frames, f"zoom {a.zoom} views {a.views} seed {ZOOM_SEED}" if zoomed else "")
        features = feature_store.load(dataset, name)
        if features is None:
            features = self._backbone_features(frames, views)
            feature_store.save(dataset, name, features)
        return features

    @torch.no_grad()
    def _backbone_features(self, frames: torch.Tensor, views: torch.Tensor | None = None) -> torch.Tensor:
        """The frozen backbone's maps of ``frames``, or with ``views`` ``(V, N, 3)`` of their V zoomed copies."""
        if views is None:
            return self._maps(frames)
        out = None  # filled view by view: no stacked copy of all of them
        for v, zooms in enumerate(views):
            maps = self._maps(frames, zooms)
            if out is None:
                out = maps.new_empty((len(views), *maps.shape))
            out[v] = maps
        return out

    def _maps(self, frames: torch.Tensor, zooms: torch.Tensor | None = None) -> torch.Tensor:
        vision = self.policy.encoder.vision.to(self.device)
        # on a CPU small batches are several times faster: a large batch's activations are fresh memory each time
        batch = 256 if self.device.type == "cuda" else 8
        out = None  # filled in place: one copy of a dataset's maps in memory, not two
        for i in range(0, len(frames), batch):
            x = frames[i:i + batch].to(self.device)
            maps = vision.cached_map(x if zooms is None else zoom(x, zooms[i:i + batch]))
            if out is None:  # in half precision: half the memory
                out = torch.empty((len(frames), *maps.shape[1:]), dtype=torch.half, device=maps.device)
            out[i:i + len(maps)] = maps  # the layout a stored copy is read back in (not channels-last)
        return out if out is not None else torch.zeros(0)

    def features(self, batch: dict[str, torch.Tensor], text, mask, key: str = "images", train: bool = True) -> Fused:
        """The encoder's :class:`Fused` features of the batch's screens (from the feature cache when there is one)."""
        if self.feature_cache.numel():
            frame = batch["frame" if key == "images" else "next_frame"]
            return self.policy.encoder.from_cached(self._cached(frame, batch.get("view")), text, mask,
                                                   self.past(batch, key))
        return self._encode(self.images(batch, key, train), text, mask, self.past(batch, key, images=True, train=train))

    def _cached(self, rows: torch.Tensor, view: torch.Tensor | None) -> torch.Tensor:
        """The feature cache's rows ``rows`` (any shape), of the zoomed view ``view`` (per sample, 0 the screen
        itself) where a batch was zoomed (:meth:`zoomed`)."""
        rows = rows.to(self.feature_cache.device)
        out = self.feature_cache[rows]
        if view is None or not bool((view > 0).any()):
            return out
        view = view.to(rows.device).reshape(-1, *([1] * (rows.dim() - 1))).expand_as(rows)
        pick = view > 0
        out[pick] = self.zoom_cache[view[pick] - 1, rows[pick]]
        return out

    def past(self, batch: dict[str, torch.Tensor], key: str = "images", images: bool = False,
             train: bool = True) -> Past | None:
        """The past steps of the batch's observations (``next_images``: of the next ones) as the policy reads them
        (:class:`~vlui.spec.Past`), None for a memoryless policy. With ``model.history_screens`` the past screens are
        their rows of the feature cache, or with ``images`` (or no cache) their frames, augmented as the screens are."""
        cfg = self.policy.cfg
        if not cfg.history:
            return None
        prefix = "" if key == "images" else "next_"
        rows = batch[f"{prefix}past_frame"]
        screens = None
        if cfg.history_screens:
            if self.feature_cache.numel() and not images:
                screens = self._cached(rows, batch.get("view"))  # seen in the sample's view
            else:
                frames = self._frames[rows.to(self._frames.device)].to(self.device).flatten(0, 1)
                if "zoom" in batch:
                    frames = zoom(frames, batch["zoom"].repeat_interleave(rows.shape[1], dim=0))
                screens = self._augmented(frames, train).unflatten(0, rows.shape)
        return Past(batch[f"{prefix}past_actions"], batch[f"{prefix}past_valid"], screens)

    def actor_loss(self, features: Fused, actions: torch.Tensor, weights: torch.Tensor | None = None):
        """The policy's loss on demonstrated ``actions`` (weighted per sample for IQL), and its ``(B, 4)``
        predicted actions. The paper's head regresses (mean squared error, or its advantage-weighted sum over the
        four numbers); the pointer head classifies cells (:func:`~vlui.algos.losses.pointer_loss`)."""
        out = self.policy.head_output(features)
        pred = self.policy.head.actions(out)
        if self.policy.cfg.head == "mlp":
            loss = losses.bc_loss(pred, actions) if weights is None else losses.awr_actor_loss(pred, actions, weights)
            return loss, pred
        spec = self.policy.spec  # taps and swipes told apart as the environment reads the actions
        per_sample = losses.pointer_loss(out, actions, spec.tap_threshold, spec.y_scale)
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
        x = batch[key] if "zoom" not in batch else zoom(batch[key], batch["zoom"])
        return self._augmented(x, train)

    def training_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        """A training batch of the dataset as an offline algorithm learns from it: with ``data.augment.zoom``, it and
        its grounding examples zoomed (:meth:`zoomed`); validation batches are not."""
        if not self.augment.zoom:
            return batch
        batch = self.zoomed(batch)
        if "grounding" in batch:
            batch["grounding"] = self.zoomed(batch["grounding"])
        return batch

    def zoomed(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The batch with each sample's screen magnified (``data.augment.zoom``) and its gesture and past actions
        moved with the pixels: with a feature cache, one of its zoomed views or the screen itself, drawn uniformly
        (``view``); without, a zoom drawn afresh (``zoom``). A sample whose gesture the zoom would crop off the
        screen keeps its screen as it is. Every draw comes from the seed and the step."""
        actions = batch["actions"]
        n = len(actions)
        g = torch.Generator().manual_seed(substream(substream(self.hparams.seed, self.global_step), 1))
        view = None
        if self.zoom_cache.numel():
            view = torch.randint(0, self.augment.views + 1, (n,), generator=g).to(self.zoom_table.device)
            frame = batch["frame"].to(self.zoom_table.device)
            zooms = torch.tensor(IDENTITY_ZOOM, device=view.device).repeat(n, 1)
            pick = view > 0
            zooms[pick] = self.zoom_table[view[pick] - 1, frame[pick]]
        else:
            zooms = zoom_draws(n, self.augment.zoom, g)
        zooms = zooms.to(actions.device)
        moved = zoom_points(actions, zooms)
        kept = (moved.abs() <= 1).all(dim=-1)
        zooms = torch.where(kept[:, None], zooms, torch.tensor(IDENTITY_ZOOM, device=zooms.device))
        out = dict(batch, actions=torch.where(kept[:, None], moved, actions), zoom=zooms)
        if view is not None:
            out["view"] = torch.where(kept.to(view.device), view, 0)
        for key in ("past_actions", "next_past_actions"):  # what the policy did before, where it did it on this screen
            if key in batch:
                out[key] = zoom_points(batch[key], zooms[:, None].to(batch[key].device)).clamp(-1, 1)
        return out

    def _augmented(self, x: torch.Tensor, train: bool) -> torch.Tensor:
        if train:
            g = torch.Generator().manual_seed(substream(self.hparams.seed, self.global_step))
            x = random_shift(x, self.augment.random_shift, g)
            x = color_jitter(x, self.augment.color_jitter, g)
        return x

    def trainer_settings(self) -> dict[str, Any]:
        """Settings of Lightning's Trainer that the algorithm decides (over the ``trainer`` config's)."""
        return {}

    def configure_optimizers(self):
        optim = self.algo.optim
        params = [p for p in self.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=optim.lr, betas=tuple(optim.betas), weight_decay=optim.weight_decay)
        total = max(1, self.trainer.max_steps if self.trainer.max_steps > 0 else 1)
        sched = lr_schedule(opt, optim.scheduler, optim.warmup_steps, total)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def _throughput(self, batch_size: int) -> None:
        now = time.perf_counter()
        if self._last_time is not None:
            self.log("train/samples_per_s", batch_size / max(now - self._last_time, 1e-9), prog_bar=False)
        self._last_time = now


def validate(module: PolicyModule, batch: dict[str, torch.Tensor]) -> None:
    """Validation, whatever the algorithm: the policy's own loss, and the mean squared error of the actions it
    would take (comparable across heads)."""
    text, mask = module.text(batch["instruction"])
    loss, pred = module.actor_loss(module.features(batch, text, mask, train=False), batch["actions"])
    module.log_dict({"val/loss": loss, "val/bc_loss": losses.bc_loss(pred, batch["actions"])}, prog_bar=True)


