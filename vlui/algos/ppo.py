"""PPO (Schulman et al. 2017) on the phone: it fine-tunes a trained policy from the tasks' success detectors.

``python train.py algo=ppo init=<policy>``. Each iteration (one Lightning epoch, :class:`vlui.algos.online.OnlineModule`
runs them) goes, in the order of this file:

1. **Roll out** (:meth:`OnlineModule.roll_out <vlui.algos.online.OnlineModule.roll_out>`): ``algo.episodes``
   episodes of (task, snapshot) pairs drawn from the seed and the iteration, in ``env.num_envs`` phones stepped side
   by side by the one rollout loop, the policy *sampling* its dual-gestures (:mod:`vlui.algos.distributions`). The
   reward is 1 when the task's detector fires, minus ``algo.step_cost`` per step. A policy with memory
   (``model.history``) reads its episode's past steps, screens included.
2. **Estimate** (:meth:`PPOModule.learn_from`): values of every state, and generalised advantages
   (:func:`~vlui.algos.losses.gae`); an episode cut at the task's step limit is bootstrapped from the value of where
   it was cut, one that succeeded is not.
3. **Update** (:meth:`PPOModule.updates`, :meth:`PPOModule.training_step`): ``algo.epochs`` passes of minibatches over
   the iteration's steps, each one optimiser step of the clipped surrogate
   (:func:`ppo_policy_loss`), the value loss and an entropy bonus, and with ``algo.bc_coef`` the
   demonstrations' BC loss; the iteration stops early once the KL to the acting policy passes 1.5 x
   ``algo.target_kl``.

The deterministic policy (the distributions' mode) is what evaluation uses, so the exported policy is evaluated by
``evaluate.py`` as any other. Everything is seeded by ``seed`` and the iteration: a run resumed from a checkpoint
goes on exactly as it would have.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor, nn

from vlui.algos import losses
from vlui.algos.online import OnlineModule, Steps, episode_steps
from vlui.algos.settings import PPOConfig
from vlui.models.policy import Fused, mlp
from vlui.seeding import substream


def ppo_policy_loss(logp: Tensor, old_logp: Tensor, advantages: Tensor, clip: float) -> tuple[Tensor, Tensor, Tensor]:
    """PPO's clipped surrogate (Schulman et al. 2017), as a loss to minimise:
    ``-mean(min(rho * A, clip(rho, 1 - eps, 1 + eps) * A))`` with ``rho = exp(logp - old_logp)``.

    Args:
        logp: ``(B,)`` log-probabilities of the taken actions under the policy being trained.
        old_logp: ``(B,)`` the same under the policy that acted (no gradient).
        advantages: ``(B,)`` advantage estimates (no gradient).
        clip: ``eps > 0``.

    Returns:
        ``(loss, clip_fraction, approx_kl)``: the fraction of samples whose ratio was clipped and the
        ``mean((rho - 1) - log rho)`` estimate of KL(old || new) (Schulman's k3; both without gradient).
    """
    if clip <= 0:
        raise ValueError(f"clip must be > 0, got {clip}")
    losses.check_ndim("logp", logp, 1)
    losses.check_same_shape("logp", logp, "old_logp", old_logp)
    losses.check_same_shape("logp", logp, "advantages", advantages)
    log_ratio = logp - old_logp.detach()
    ratio = log_ratio.exp()
    adv = advantages.detach()
    loss = -torch.minimum(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
    with torch.no_grad():
        clipped = ((ratio - 1).abs() > clip).float().mean()
        kl = ((ratio - 1) - log_ratio).mean()
    return loss, clipped, kl


def minibatch_indices(n: int, epochs: int, size: int, generator: torch.Generator) -> Iterator[torch.Tensor]:
    """``epochs`` passes over ``n`` steps in minibatches of at most ``size``, each pass in a new order drawn from
    ``generator``."""
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator)
        for i in range(0, n, size):
            yield order[i:i + size]


class PPOModule(OnlineModule):
    """PPO on the policy of ``policy`` (the settings of the policy it starts from), with a value head on the
    encoder's pooled features (detached: the value learns to judge, it does not reshape what the policy sees)."""

    Settings: ClassVar[type] = PPOConfig

    def __init__(self, policy: dict[str, Any], algo: dict[str, Any], seed: int = 0, channels_last: bool = True,
                 compile: bool = False) -> None:
        super().__init__(policy, algo, seed, channels_last, compile)
        self.value = mlp(self.policy.cfg.hidden_dim, [256, 256], 1)
        self._kl_exceeded = False

    def values(self, fused: Fused) -> torch.Tensor:
        return self.value(fused.pooled.detach()).squeeze(-1)

    # ------------------------------------------------------------------------------------------------ estimate
    def learn_from(self, records: list[Any]) -> dict[str, torch.Tensor]:
        return self.estimate(episode_steps(records, self.algo.step_cost))

    @torch.no_grad()
    def estimate(self, steps: Steps) -> dict[str, torch.Tensor]:
        """The batch of ``steps`` the updates read: the policy's inputs, the actions and their log-probabilities
        under the acting policy, normalised generalised advantages and the value targets."""
        a = self.algo
        if not steps.screens:
            return {}
        inputs = self.step_inputs(steps)
        position = np.asarray(steps.position)
        values, old_logp = [], []
        act = torch.as_tensor(np.stack(steps.actions), device=self.device)
        for i in range(0, len(steps.screens), 256):
            part = {k: v[i:i + 256] for k, v in inputs.items()}
            fused = self.fused(part)
            values.append(self.values(fused))
            old_logp.append(self.distribution(fused).log_prob(act[i:i + 256]))
        values_t = torch.cat(values).float()
        next_values = torch.zeros_like(values_t)
        next_values[:-1] = values_t[1:]
        if steps.cut:
            cut = steps.cut
            last = np.array([c[0] for c in cut])
            final = self.inputs([c[1] for c in cut], [c[2] for c in cut])
            final |= self.windows(steps, last, position[last] + 1)  # the episode's last steps
            idx = torch.tensor(last, device=self.device)
            next_values[idx] = self.values(self.fused(final)).float()
        rewards_t = torch.tensor(steps.rewards, dtype=torch.float32, device=self.device)
        adv, returns = losses.gae(rewards_t, values_t, next_values, torch.tensor(steps.terminated, device=self.device),
                                  torch.tensor(steps.ends, device=self.device), a.discount, a.gae_lambda)
        if len(adv) > 1 and adv.std() > 0:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        return {**inputs, "actions": act, "old_logp": torch.cat(old_logp), "advantages": adv, "returns": returns,
                "success": torch.tensor(steps.success, device=self.device)}

    # ------------------------------------------------------------------------------------------------ update
    def updates(self, iteration: int, batch: dict[str, torch.Tensor]) -> Iterator[dict[str, torch.Tensor]]:
        """``algo.epochs`` shuffled passes of minibatches over the iteration's steps, until the KL passes its
        bound."""
        g = torch.Generator().manual_seed(substream(self.hparams.seed, iteration))
        self._kl_exceeded = False
        for idx in minibatch_indices(len(batch["actions"]), self.algo.epochs, self.algo.minibatch, g):
            if self._kl_exceeded:
                return
            idx = idx.to(batch["actions"].device)
            yield {k: v[idx] for k, v in batch.items()}

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        a = self.algo
        fused = self.fused(batch)
        dist = self.distribution(fused)
        logp = dist.log_prob(batch["actions"])
        pg_loss, clipped, kl = ppo_policy_loss(logp, batch["old_logp"], batch["advantages"], a.clip)
        if a.objective == "filtered":  # imitate the successful episodes' steps only
            pg_loss = losses.filtered_imitation_loss(logp, batch["success"])
        v_loss = nn.functional.mse_loss(self.values(fused).float(), batch["returns"])
        entropy = dist.entropy().mean()
        if a.target_kl is not None and kl > 1.5 * a.target_kl:
            self._kl_exceeded = True
        self.log_dict({"train/policy_loss": pg_loss, "train/value_loss": v_loss, "train/entropy": entropy,
                       "train/approx_kl": kl, "train/clip_fraction": clipped}, prog_bar=False)
        self.log_dict({k.removeprefix("rollout/"): v for k, v in self.stats.items()
                       if k in ("rollout/success", "rollout/return", "rollout/episodes_per_s")}, prog_bar=True)
        self._throughput(len(batch["actions"]))
        loss = pg_loss + a.value_coef * v_loss - a.entropy_coef * entropy
        if a.bc_coef > 0 and self.demos is not None:
            bc = self.imitation_loss(batch_idx)
            self.log("train/bc_loss", bc, prog_bar=False)
            loss = loss + a.bc_coef * bc
        return loss

    def trainer_settings(self) -> dict[str, Any]:
        return super().trainer_settings() | {"gradient_clip_val": self.algo.max_grad_norm}

    def configure_optimizers(self):
        optim = self.algo.optim
        value = list(self.value.parameters())
        own = {id(p) for p in value}
        policy = [p for p in self.parameters() if p.requires_grad and id(p) not in own]
        groups = [{"params": policy, "lr": optim.lr}, {"params": value, "lr": self.algo.value_lr}]
        return torch.optim.Adam(groups, betas=tuple(optim.betas), weight_decay=optim.weight_decay)
