"""PPO's math: advantages and returns, the clipped surrogate, and the stochastic dual-gestures, against values
worked out by hand or by torch.distributions."""

from __future__ import annotations

import math

import pytest
import torch

from vlui.algos.distributions import PointerDistribution, SquashedGaussian
from vlui.algos.losses import filtered_imitation_loss, gae
from vlui.algos.ppo import ppo_policy_loss
from vlui.models.policy import PointerHead


def _t(*values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)


def test_gae_masks_success_and_bootstraps_an_episode_cut_at_the_step_limit() -> None:
    # episode 1: two steps, the second succeeds (reward 1); episode 2: two steps, cut at the step limit
    rewards, values = _t(0, 1, 0, 0), _t(0.5, 0.8, 0.2, 0.4)
    next_values = _t(0.8, 123.0, 0.4, 0.3)  # 123: after a success; must not count. 0.3: V where episode 2 was cut
    terminated, ends = _t(0, 1, 0, 0), _t(0, 1, 0, 1)
    adv, ret = gae(rewards, values, next_values, terminated, ends, discount=0.9, lam=0.5)
    # deltas: 0 + .9*.8 - .5 = .22 | 1 - .8 = .2 | .9*.4 - .2 = .16 | .9*.3 - .4 = -.13
    # A: .22 + .45*.2 = .31 | .2 (its episode ends) | .16 + .45*(-.13) = .1015 | -.13
    assert adv.tolist() == pytest.approx([0.31, 0.2, 0.1015, -0.13])
    assert ret.tolist() == pytest.approx([0.81, 1.0, 0.3015, 0.27])


def test_gae_with_lambda_one_is_the_discounted_return() -> None:
    rewards, values = _t(-0.1, -0.1, 1.0), _t(0.3, 0.1, 0.7)
    next_values = _t(0.1, 0.7, 0.0)  # each state's successor's value: with lambda 1 they telescope away
    _, ret = gae(rewards, values, next_values, _t(0, 0, 1), _t(0, 0, 1), discount=0.5, lam=1.0)
    assert ret.tolist() == pytest.approx([-0.1 + 0.5 * (-0.1) + 0.25 * 1.0, -0.1 + 0.5 * 1.0, 1.0])


def test_gae_refuses_mismatched_shapes_and_out_of_range_factors() -> None:
    with pytest.raises(ValueError, match="same shape"):
        gae(_t(0, 1), _t(0), _t(0, 0), _t(0, 0), _t(0, 1), 0.9, 0.9)
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        gae(_t(0), _t(0), _t(0), _t(0), _t(1), 1.5, 0.9)


def test_clipped_surrogate_by_hand_and_no_gradient_beyond_the_clip() -> None:
    logp = torch.tensor([math.log(1.5), math.log(0.5), math.log(1.1)], requires_grad=True)
    loss, clipped, kl = ppo_policy_loss(logp, _t(0, 0, 0), _t(1, -1, 2), clip=0.2)
    # min(1.5, 1.2) * 1 = 1.2 | min(-0.5, -0.8) = -0.8 | min(2.2, 2.4) = 2.2 -> loss = -(1.2 - 0.8 + 2.2) / 3
    assert loss.item() == pytest.approx(-2.6 / 3)
    assert clipped.item() == pytest.approx(2 / 3)
    assert kl.item() == pytest.approx(((0.5 - math.log(1.5)) + (-0.5 - math.log(0.5)) + (0.1 - math.log(1.1))) / 3)
    loss.backward()
    # the two clipped samples get no gradient; the third gets -A * ratio / n
    assert logp.grad.tolist() == pytest.approx([0.0, 0.0, -2 * 1.1 / 3])


def _pointer_out(batch: int = 3, h: int = 3, w: int = 2, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    n = h * w
    return {"touch_logits": torch.randn(batch, n, generator=g), "lift_logits": torch.randn(batch, n, generator=g),
            "touch_offset": 0.5 * torch.tanh(torch.randn(batch, n, 2, generator=g)),
            "lift_offset": 0.5 * torch.tanh(torch.randn(batch, n, 2, generator=g)),
            "swipe_logit": torch.randn(batch, generator=g), "grid": torch.tensor([h, w])}


def test_pointer_probabilities_of_every_distinct_gesture_sum_to_one() -> None:
    out = _pointer_out()
    dist = PointerDistribution(out)
    n, batch = 6, 3
    total = torch.zeros(batch)
    for touch in range(n):
        cells = torch.full((batch,), touch)
        total += dist.log_prob(dist._points(cells, cells, torch.zeros(batch, dtype=torch.bool))).exp()  # taps
        for lift in range(n):
            if lift != touch:  # a swipe to its own cell is a tap
                swipe = dist._points(cells, torch.full((batch,), lift), torch.ones(batch, dtype=torch.bool))
                total += dist.log_prob(swipe).exp()
    assert total.tolist() == pytest.approx([1.0] * batch, abs=1e-5)


def test_pointer_samples_follow_the_cell_probabilities_and_decode_to_their_cells() -> None:
    out = _pointer_out(batch=1)
    out["swipe_logit"] = torch.tensor([-20.0])  # taps only
    dist = PointerDistribution({k: v.expand(4000, *v.shape[1:]) if v.dim() > 1 or k == "swipe_logit" else v
                                for k, v in out.items()})
    actions = dist.sample(torch.Generator().manual_seed(1))
    touch, lift, swipe = dist.decode(actions)
    assert not swipe.any() and torch.equal(touch, lift)
    freq = torch.bincount(touch, minlength=6).float() / len(touch)
    assert freq.tolist() == pytest.approx(torch.softmax(out["touch_logits"][0], -1).tolist(), abs=0.03)


def test_pointer_mode_is_the_deterministic_policys_action() -> None:
    out = _pointer_out()
    assert torch.equal(PointerDistribution(out).mode(), PointerHead.actions(out))


def test_pointer_entropy_of_uniform_taps_is_log_of_the_cell_count() -> None:
    out = _pointer_out()
    out["touch_logits"] = torch.zeros(3, 6)
    out["swipe_logit"] = torch.full((3,), -30.0)
    assert PointerDistribution(out).entropy().tolist() == pytest.approx([math.log(6)] * 3, abs=1e-4)


def test_squashed_gaussian_log_prob_matches_torch_distributions() -> None:
    mean, log_std = torch.tensor([[0.3, -0.2, 1.0, 0.0]]), torch.tensor([-1.0, -0.5, 0.0, -2.0])
    dist = SquashedGaussian(mean, log_std)
    reference = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(mean, log_std.exp()), [torch.distributions.TanhTransform()])
    actions = dist.sample(torch.Generator().manual_seed(0))
    assert dist.log_prob(actions).item() == pytest.approx(reference.log_prob(actions).sum(-1).item(), rel=1e-4)
    assert torch.equal(dist.mode(), torch.tanh(mean)) and actions.abs().max() < 1


def test_filtered_imitation_pulls_only_toward_successful_episodes_actions() -> None:
    logp = torch.tensor([math.log(0.5), math.log(0.25), math.log(0.1)], requires_grad=True)
    loss = filtered_imitation_loss(logp, _t(1, 1, 0))
    assert loss.item() == pytest.approx(-(math.log(0.5) + math.log(0.25)) / 2)
    loss.backward()
    assert logp.grad.tolist() == pytest.approx([-0.5, -0.5, 0.0])  # the failed episode's step is left alone
    assert filtered_imitation_loss(logp.detach(), _t(0, 0, 0)).item() == 0.0  # no success, no pull
