"""Loss functions for behaviour cloning (BC) and implicit Q-learning (IQL).

Small pure functions on tensors, so each one can be tested against hand-computed values. They follow the IQL losses in
B-MoCA (Appendix D, after Kostrikov et al. 2022) and CORL's single-file IQL; where they differ from the paper the
docstring says so.

Shapes: ``B`` is the batch size; actions are dual gestures in ``[-1, 1]^4``, so ``(B, 4)``; values, rewards and
advantages are ``(B,)``.

One IQL update, top to bottom::

    adv     = q_target(o, a*) - v(o)                  # q_target from the target critic, detached
    L_V     = value_loss(q_target, v, tau)
    y       = td_target(r, done, v(o').detach(), gamma)
    L_Q     = q_loss(q1(o, a*), q2(o, a*), y)
    w       = advantage_weights(adv, beta, max_weight)
    L_pi    = awr_actor_loss(pi(o, c), a*, w)
    polyak_update(q_target_net, q_net, alpha)
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from vlui.models.policy import grid_cell

__all__ = [
    "bc_loss",
    "expectile_loss",
    "value_loss",
    "td_target",
    "q_loss",
    "advantage_weights",
    "awr_actor_loss",
    "polyak_update",
    "is_swipe",
    "pointer_loss",
]


def check_same_shape(name_a: str, a: Tensor, name_b: str, b: Tensor) -> None:
    """Refuse ``a`` and ``b`` (named ``name_a`` and ``name_b``) of different shapes, naming both."""
    # Broadcasting (B,) against (B, 1) silently gives (B, B) and a wrong loss, so shapes must match exactly.
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same shape, got {tuple(a.shape)} and {tuple(b.shape)}")


def check_ndim(name: str, x: Tensor, ndim: int) -> None:
    """Refuse ``x`` (named ``name``) unless it has ``ndim`` dimensions."""
    if x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {tuple(x.shape)}")


def _check_actions(name: str, x: Tensor) -> None:
    if x.dim() != 2 or x.shape[-1] != 4:
        raise ValueError(f"{name} must have shape (B, 4) (a dual gesture per row), got {tuple(x.shape)}")


def bc_loss(pred: Tensor, target: Tensor) -> Tensor:
    """Behaviour-cloning loss: mean squared error over all action values.

    Args:
        pred: ``(B, 4)`` predicted actions.
        target: ``(B, 4)`` demonstrated actions ``a*``.

    Returns:
        Scalar: the mean over the batch and the 4 action dimensions (equal to ``F.mse_loss(pred, target)``).
    """
    _check_actions("pred", pred)
    check_same_shape("pred", pred, "target", target)
    return ((pred - target) ** 2).mean()


def expectile_loss(diff: Tensor, tau: float) -> Tensor:
    """Asymmetric squared loss ``L2^tau(u) = |tau - 1(u < 0)| * u^2``, averaged over the batch.

    Sign convention: ``diff = Q - V``. Positive residuals (Q above V) are weighted by ``tau`` and negative ones by
    ``1 - tau``, so with ``tau > 0.5`` V is pushed towards an upper expectile of Q (approaching the max over in-data
    actions as ``tau -> 1``); ``tau = 0.5`` gives half the mean squared error, whose minimiser is the mean.

    Args:
        diff: ``(B,)`` residuals ``Q - V``.
        tau: expectile in ``(0, 1)``.

    Returns:
        Scalar loss.
    """
    if not 0.0 < tau < 1.0:
        raise ValueError(f"expectile tau must be in (0, 1), got {tau}")
    check_ndim("diff", diff, 1)
    weight = torch.abs(tau - (diff < 0).to(diff.dtype))
    return (weight * diff**2).mean()


def value_loss(q_target: Tensor, v: Tensor, tau: float) -> Tensor:
    """IQL value loss ``L_V = E[L2^tau(Q_hat(o, a*) - V(o))]``.

    The caller passes ``q_target`` detached (from the target critic, in CORL the min of the twin targets): only V is
    trained by this loss, and a gradient into Q here would let the critic chase V instead of the TD target.

    Args:
        q_target: ``(B,)`` target-critic values of the dataset actions, detached.
        v: ``(B,)`` values ``V(o)``.
        tau: expectile in ``(0, 1)``.
    """
    check_ndim("q_target", q_target, 1)
    check_same_shape("q_target", q_target, "v", v)
    return expectile_loss(q_target - v, tau)


def td_target(reward: Tensor, done: Tensor, next_v: Tensor, discount: float) -> Tensor:
    """One-step TD target ``y = r + gamma * (1 - done) * V(o')``.

    Deviation: the paper writes ``r_t + gamma * V(o_{t+1})``; like CORL we mask the bootstrap at terminal steps so the
    value of whatever follows the end of an episode does not leak into its last step. The caller passes ``next_v``
    detached (the target is a regression label, not something to optimise).

    Args:
        reward: ``(B,)`` rewards.
        done: ``(B,)`` 1 where the step ended the episode, else 0 (bool or float).
        next_v: ``(B,)`` values ``V(o')``.
        discount: ``gamma`` in ``[0, 1]``.

    Returns:
        ``(B,)`` targets.
    """
    if not 0.0 <= discount <= 1.0:
        raise ValueError(f"discount must be in [0, 1], got {discount}")
    check_ndim("reward", reward, 1)
    check_same_shape("reward", reward, "done", done)
    check_same_shape("reward", reward, "next_v", next_v)
    return reward + discount * (1.0 - done.to(reward.dtype)) * next_v


def q_loss(q1: Tensor, q2: Tensor, target: Tensor) -> Tensor:
    """Critic loss for twin Q-functions: ``mean((q1 - y)^2) + mean((q2 - y)^2)``.

    The paper shows a single Q; CORL trains two critics (and uses their min as ``Q_hat``) and sums their losses, which
    we follow. Summing rather than averaging keeps each critic's gradient the same as if it were trained alone.

    Args:
        q1, q2: ``(B,)`` critic values ``Q(o, a*)``.
        target: ``(B,)`` TD targets from :func:`td_target` (no gradient).
    """
    check_ndim("q1", q1, 1)
    check_same_shape("q1", q1, "target", target)
    check_same_shape("q2", q2, "target", target)
    return ((q1 - target) ** 2).mean() + ((q2 - target) ** 2).mean()


def advantage_weights(advantage: Tensor, beta: float, max_weight: float) -> Tensor:
    """Advantage weights ``min(exp(beta * A), max_weight)`` for the actor loss.

    Deviation: the paper's weight is ``exp(beta * A)`` unclamped; like CORL (``EXP_ADV_MAX = 100``) we clamp it, since
    one large advantage would otherwise dominate a batch or overflow. The weights are labels for the actor, so they
    are computed on the detached advantage: no gradient reaches Q or V through the actor loss.

    Args:
        advantage: ``(B,)`` ``A = Q_hat(o, a*) - V(o)``.
        beta: inverse temperature, ``>= 0`` (0 gives plain BC).
        max_weight: upper clamp, ``> 0``.

    Returns:
        ``(B,)`` weights with no gradient.
    """
    if beta < 0:
        raise ValueError(f"inverse temperature beta must be >= 0, got {beta}")
    if max_weight <= 0:
        raise ValueError(f"max_weight must be > 0, got {max_weight}")
    check_ndim("advantage", advantage, 1)
    return torch.exp(beta * advantage.detach()).clamp(max=max_weight)


def awr_actor_loss(pred: Tensor, target: Tensor, weights: Tensor) -> Tensor:
    """Advantage-weighted BC: ``mean_b(w_b * ||a_b - a*_b||^2)``.

    The squared error is summed over the 4 action dimensions, per the paper's ``||a_t - a*_t||^2`` (so with all
    weights 1 this is 4x :func:`bc_loss`). CORL's deterministic actor does the same.

    Args:
        pred: ``(B, 4)`` actions predicted by the actor.
        target: ``(B, 4)`` demonstrated actions.
        weights: ``(B,)`` from :func:`advantage_weights`.
    """
    _check_actions("pred", pred)
    check_same_shape("pred", pred, "target", target)
    check_ndim("weights", weights, 1)
    if weights.shape[0] != pred.shape[0]:
        raise ValueError(f"weights must have shape ({pred.shape[0]},), got {tuple(weights.shape)}")
    sq_err = ((pred - target) ** 2).sum(dim=-1)  # (B,)
    return (weights * sq_err).mean()


def polyak_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """In place soft update ``t <- (1 - tau) * t + tau * s`` of the target network's parameters.

    Buffers (e.g. normalisation statistics) are not averaged but copied as is: they are statistics, not learned
    weights. ``tau = 1`` makes the target an exact copy. Runs under ``no_grad`` so the update is not recorded.

    Args:
        target: network updated in place (e.g. the target critic).
        source: network being trained, with the same architecture.
        tau: step size in ``(0, 1]``.
    """
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"polyak tau must be in (0, 1], got {tau}")
    t_params, s_params = list(target.parameters()), list(source.parameters())
    t_bufs, s_bufs = list(target.buffers()), list(source.buffers())
    if len(t_params) != len(s_params) or len(t_bufs) != len(s_bufs):
        raise ValueError("target and source must have the same parameters and buffers")
    # Check every shape before touching anything, so a mismatch cannot leave the target half updated.
    for t, s in zip(t_params + t_bufs, s_params + s_bufs, strict=True):
        check_same_shape("target tensor", t, "source tensor", s)
    with torch.no_grad():
        for t, s in zip(t_params, s_params, strict=True):
            t.mul_(1.0 - tau).add_(s, alpha=tau)
        for t, s in zip(t_bufs, s_bufs, strict=True):
            t.copy_(s)


def is_swipe(actions: Tensor, threshold: float, y_scale: float) -> Tensor:
    """``(B,)`` bool: which ``(B, 4)`` dual-gestures the environment reads as swipes (touch and lift at least
    ``threshold`` apart, the y difference scaled by ``y_scale``; :mod:`vlui.env.actions`)."""
    _check_actions("actions", actions)
    p = (actions + 1) / 2
    return torch.hypot(y_scale * (p[:, 2] - p[:, 0]), p[:, 3] - p[:, 1]) >= threshold


def pointer_loss(out: dict[str, Tensor], target: Tensor, threshold: float, y_scale: float,
                 offset_weight: float = 1.0) -> Tensor:
    """Per-sample loss ``(B,)`` of the pointer head (:class:`~vlui.models.policy.PointerHead`) against the
    demonstrated ``(B, 4)`` dual-gestures:

    ``CE(touch cell) + w * |touch offset error|_1 + BCE(swipe) + [swipe] * (CE(lift cell) + w * |lift offset error|_1)``

    Cells are those of the head's ``h x w`` grid that the points fall in; the offset errors are measured in cells,
    at the demonstrated cell. A tap's lift is its touch point, so only swipes train the lift."""
    _check_actions("target", target)
    h, w = (int(v) for v in out["grid"])
    p = (target + 1) / 2
    swipe = is_swipe(target, threshold, y_scale)
    terms = []
    for name, points in (("touch", p[:, :2]), ("lift", p[:, 2:])):
        cell, offset = grid_cell(points, h, w)
        logits, predicted = out[f"{name}_logits"], out[f"{name}_offset"]
        if logits.shape != (target.shape[0], h * w):
            raise ValueError(f"{name}_logits must have shape (B, {h * w}) for a {h}x{w} grid, got {tuple(logits.shape)}")
        at_cell = predicted.gather(1, cell[:, None, None].expand(-1, 1, 2)).squeeze(1)
        terms.append(nn.functional.cross_entropy(logits.float(), cell, reduction="none")
                     + offset_weight * (at_cell.float() - offset).abs().sum(-1))
    gesture = nn.functional.binary_cross_entropy_with_logits(out["swipe_logit"].float(), swipe.float(),
                                                             reduction="none")
    return terms[0] + gesture + swipe.float() * terms[1]


# ------------------------------------------------------------------------------------------------ on-policy RL
def gae(rewards: Tensor, values: Tensor, next_values: Tensor, terminated: Tensor, ends: Tensor, discount: float,
        lam: float) -> tuple[Tensor, Tensor]:
    """Generalised advantage estimation (Schulman et al. 2016) over episodes laid end to end.

    ``delta_t = r_t + gamma * (1 - terminated_t) * V(o_{t+1}) - V(o_t)`` and
    ``A_t = delta_t + gamma * lambda * (1 - end_t) * A_{t+1}``. ``end_t`` marks every episode's last step, whether
    it terminated (success: nothing follows, no bootstrap) or was truncated at the step limit (the episode was cut,
    not finished: ``next_values`` there is ``V`` of the observation it was cut at, and is bootstrapped). Returns are
    ``A + V``, the value function's regression targets.

    Args:
        rewards, values, next_values: ``(T,)`` per step, ``next_values[t] = V(o_{t+1})``.
        terminated: ``(T,)`` 1 where the step ended the episode by the task's success (bool or float).
        ends: ``(T,)`` 1 at each episode's last step (terminated or truncated).
        discount: ``gamma`` in ``[0, 1]``; lam: ``lambda`` in ``[0, 1]``.

    Returns:
        ``(advantages, returns)``, each ``(T,)``, without gradient.
    """
    if not 0.0 <= discount <= 1.0 or not 0.0 <= lam <= 1.0:
        raise ValueError(f"discount and lam must be in [0, 1], got {discount} and {lam}")
    check_ndim("rewards", rewards, 1)
    for name, x in (("values", values), ("next_values", next_values), ("terminated", terminated), ("ends", ends)):
        check_same_shape("rewards", rewards, name, x)
    rewards, values, next_values = rewards.detach().float(), values.detach().float(), next_values.detach().float()
    alive, carry = 1.0 - terminated.float(), 1.0 - ends.float()
    deltas = rewards + discount * alive * next_values - values
    advantages = torch.zeros_like(deltas)
    running = torch.zeros((), dtype=deltas.dtype, device=deltas.device)
    for t in range(len(deltas) - 1, -1, -1):
        running = deltas[t] + discount * lam * carry[t] * running
        advantages[t] = running
    return advantages, advantages + values


def filtered_imitation_loss(logp: Tensor, success: Tensor) -> Tensor:
    """Filtered imitation of the policy's own episodes (self-imitation; DigiRL's filtered BC): the negative mean
    log-probability of the actions taken in episodes that succeeded, ``-sum(s * logp) / max(1, sum(s))``. Failed
    episodes add nothing, so nothing is pushed away from; the reward is only ever 0 or 1 at the end.

    Args:
        logp: ``(B,)`` log-probabilities of the taken actions.
        success: ``(B,)`` 1 where the step belongs to an episode that succeeded, else 0.
    """
    check_ndim("logp", logp, 1)
    check_same_shape("logp", logp, "success", success)
    weight = success.detach().to(logp.dtype)
    return -(weight * logp).sum() / weight.sum().clamp(min=1.0)
