"""Stochastic dual-gestures for on-policy RL: the policy's head output as a distribution over ``(B, 4)`` actions.

Each head has one whose *mode* is exactly the action the deterministic policy takes (what evaluation and DAgger
use), so a policy fine-tuned online is evaluated as it was before:

- ``pointer`` (:class:`PointerDistribution`): the touch cell ~ softmax(touch logits); tap or swipe ~ Bernoulli(swipe
  logit); for a swipe, the lift cell ~ softmax(lift logits) over the other cells (a swipe to its own cell is a tap).
  The point inside a cell is the head's regressed offset. The spread is learned: it is the logits' own.
- ``mlp`` (:class:`SquashedGaussian`): ``tanh(u)``, ``u ~ N(mu, sigma)`` with ``tanh(mu)`` the head's output and a
  learned, state-independent ``log sigma`` per coordinate.

``log_prob`` takes the executed ``(B, 4)`` actions themselves (what the rollout recorded), so an episode needs no
record of how its actions were drawn.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from vlui.models.policy import PointerHead, grid_cell

OFFSET_LIMIT = 0.49  # offsets stay inside their cell (tanh saturates to +-0.5 in float32, the next cell's edge)


def _sample_index(logits: Tensor, generator: torch.Generator | None) -> Tensor:
    probs = torch.softmax(logits.float(), dim=-1)
    return torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1).to(logits.device)


def _entropy(logits: Tensor) -> Tensor:
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * torch.where(torch.isfinite(logp), logp, torch.zeros_like(logp))).sum(-1)


class PointerDistribution:
    """Over the pointer head's cells (:class:`~vlui.models.policy.PointerHead`); ``out`` is its raw output."""

    def __init__(self, out: dict[str, Tensor]) -> None:
        self.out = out
        self.h, self.w = (int(v) for v in out["grid"])

    def _points(self, touch: Tensor, lift: Tensor, swipe: Tensor) -> Tensor:
        def point(cell: Tensor, offsets: Tensor) -> Tensor:
            off = offsets.gather(1, cell[:, None, None].expand(-1, 1, 2)).squeeze(1).clamp(-OFFSET_LIMIT, OFFSET_LIMIT)
            p = torch.stack([(cell // self.w).to(off.dtype), (cell % self.w).to(off.dtype)], dim=-1) + 0.5 + off
            return p / torch.tensor([self.h, self.w], device=p.device, dtype=p.dtype)

        t = point(touch, self.out["touch_offset"])
        lft = torch.where(swipe[:, None], point(lift, self.out["lift_offset"]), t)
        return (torch.cat([t, lft], dim=-1) * 2 - 1).clamp(-1, 1)

    def _lift_logits(self, touch: Tensor) -> Tensor:
        """The lift logits with the touch cell ruled out."""
        logits = self.out["lift_logits"].float()
        return logits.scatter(1, touch[:, None], float("-inf"))

    def mode(self) -> Tensor:
        """The deterministic policy's actions (the head's :meth:`~vlui.models.policy.PointerHead.actions`)."""
        return PointerHead.actions(self.out)

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        touch = _sample_index(self.out["touch_logits"], generator)
        p_swipe = torch.sigmoid(self.out["swipe_logit"].float())
        swipe = torch.rand(p_swipe.shape, generator=generator).to(p_swipe.device) < p_swipe
        lift = _sample_index(self._lift_logits(touch), generator)
        return self._points(touch, lift, swipe)

    def decode(self, actions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Executed ``(B, 4)`` actions -> (touch cell, lift cell, swipe). A tap lifts exactly where it touched."""
        p = (actions.float() + 1) / 2
        touch, _ = grid_cell(p[:, :2], self.h, self.w)
        lift, _ = grid_cell(p[:, 2:], self.h, self.w)
        swipe = (actions[:, :2] != actions[:, 2:]).any(-1)
        return touch, lift, swipe

    def log_prob(self, actions: Tensor) -> Tensor:
        touch, lift, swipe = self.decode(actions)
        logp = torch.log_softmax(self.out["touch_logits"].float(), -1).gather(1, touch[:, None]).squeeze(1)
        s = self.out["swipe_logit"].float()
        logp = logp + torch.where(swipe, torch.nn.functional.logsigmoid(s), torch.nn.functional.logsigmoid(-s))
        lift_logp = torch.log_softmax(self._lift_logits(touch), -1).gather(1, lift[:, None]).squeeze(1)
        return logp + torch.where(swipe, lift_logp, torch.zeros_like(lift_logp))

    def entropy(self) -> Tensor:
        """``H(touch) + H(swipe) + P(swipe) * E_touch[H(lift | touch)]``, the last term at the likeliest touch."""
        s = self.out["swipe_logit"].float()
        p = torch.sigmoid(s)
        h_swipe = -(p * torch.nn.functional.logsigmoid(s) + (1 - p) * torch.nn.functional.logsigmoid(-s))
        touch = self.out["touch_logits"].argmax(-1)
        return _entropy(self.out["touch_logits"]) + h_swipe + p * _entropy(self._lift_logits(touch))


class SquashedGaussian:
    """``tanh(u)``, ``u ~ N(mean, exp(log_std))``, over ``(B, 4)`` actions in ``(-1, 1)``."""

    EPS = 1e-6

    def __init__(self, mean: Tensor, log_std: Tensor) -> None:
        self.mean, self.log_std = mean.float(), log_std.float().expand_as(mean)

    def mode(self) -> Tensor:
        return torch.tanh(self.mean)

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        noise = torch.randn(self.mean.shape, generator=generator).to(self.mean.device)
        return torch.tanh(self.mean + self.log_std.exp() * noise).clamp(-1 + self.EPS, 1 - self.EPS)

    def log_prob(self, actions: Tensor) -> Tensor:
        a = actions.float().clamp(-1 + self.EPS, 1 - self.EPS)
        u = torch.atanh(a)
        normal = -0.5 * ((u - self.mean) / self.log_std.exp()) ** 2 - self.log_std - 0.5 * math.log(2 * math.pi)
        return (normal - torch.log1p(-a * a)).sum(-1)

    def entropy(self) -> Tensor:
        """The Gaussian's entropy (before the squash, which has no closed form), per sample."""
        return (self.log_std + 0.5 * math.log(2 * math.pi * math.e)).sum(-1)
