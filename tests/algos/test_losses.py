"""Loss functions against hand-computed values (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from vlui.algos.losses import (
    advantage_weights,
    awr_actor_loss,
    bc_loss,
    expectile_loss,
    is_swipe,
    pointer_loss,
    polyak_update,
    q_loss,
    td_target,
    value_loss,
)


def t(*xs: float) -> torch.Tensor:
    return torch.tensor(xs, dtype=torch.float32)


# --- bc_loss -------------------------------------------------------------------------------------------------------


def test_bc_loss_hand_example():
    pred = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    target = torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, -1.0]])
    # squared errors: 1 (row 0) + 1 (row 1) over 8 values -> 2/8 = 0.25
    assert bc_loss(pred, target).item() == pytest.approx(0.25)


def test_bc_loss_equals_mse_loss():
    g = torch.Generator().manual_seed(0)
    pred, target = torch.rand(5, 4, generator=g) * 2 - 1, torch.rand(5, 4, generator=g) * 2 - 1
    torch.testing.assert_close(bc_loss(pred, target), F.mse_loss(pred, target))


# --- expectile / value loss ----------------------------------------------------------------------------------------


def test_expectile_hand_example():
    # diff = [2, -1], tau = 0.7: weights [0.7, 0.3] -> (0.7*4 + 0.3*1) / 2 = (2.8 + 0.3) / 2 = 1.55
    assert expectile_loss(t(2.0, -1.0), 0.7).item() == pytest.approx(1.55)


def test_expectile_tau_half_is_half_mse():
    diff = t(2.0, -1.0, 0.5)
    # mse = (4 + 1 + 0.25) / 3 = 1.75; tau = 0.5 weights every residual by 0.5 -> 0.875
    assert expectile_loss(diff, 0.5).item() == pytest.approx(0.875)
    assert expectile_loss(diff, 0.5).item() == pytest.approx(0.5 * (diff**2).mean().item())


def test_expectile_zero_residual_gets_tau_weight_but_zero_loss():
    # 1(0 < 0) = 0, weight tau, times 0^2 -> 0
    assert expectile_loss(t(0.0), 0.9).item() == 0.0


def _fit_scalar_v(q: torch.Tensor, tau: float, steps: int = 500, lr: float = 0.5) -> float:
    v = torch.zeros((), requires_grad=True)
    opt = torch.optim.SGD([v], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        value_loss(q, v.expand_as(q), tau).backward()
        opt.step()
    return v.item()


def test_expectile_pushes_v_above_mean_for_high_tau():
    q = t(0.0, 1.0, 2.0, 3.0)  # mean 1.5
    v_half = _fit_scalar_v(q, 0.5)
    v_high = _fit_scalar_v(q, 0.9)
    assert v_half == pytest.approx(1.5, abs=1e-3)
    # The 0.9-expectile solves 0.9 * sum_{q>v}(q - v) = 0.1 * sum_{q<v}(v - q). For v in (2, 3):
    # 0.9 * (3 - v) = 0.1 * (3v - 3) -> 2.7 - 0.9v = 0.3v - 0.3 -> v = 3.0 / 1.2 = 2.5
    assert v_high > 1.5
    assert v_high == pytest.approx(2.5, abs=1e-3)


def test_value_loss_is_expectile_of_q_minus_v():
    q, v = t(3.0, 0.0), t(1.0, 1.0)
    # diff = [2, -1] -> same as the hand example: 1.55
    assert value_loss(q, v, 0.7).item() == pytest.approx(1.55)


def test_value_loss_gradient_reaches_only_v():
    q = t(3.0, 0.0).requires_grad_()
    v = t(1.0, 1.0).requires_grad_()
    value_loss(q.detach(), v, 0.7).backward()
    # d/dv of mean(w * (q - v)^2) = -2 w (q - v) / B: [-2*0.7*2/2, -2*0.3*(-1)/2] = [-1.4, 0.3]
    torch.testing.assert_close(v.grad, t(-1.4, 0.3))
    assert q.grad is None


# --- td_target / q_loss --------------------------------------------------------------------------------------------


def test_td_target_masks_done():
    reward, done, next_v = t(1.0, 1.0, 0.0), t(0.0, 1.0, 0.0), t(10.0, 10.0, -2.0)
    # [1 + 0.9*1*10, 1 + 0.9*0*10, 0 + 0.9*1*(-2)] = [10, 1, -1.8]
    torch.testing.assert_close(td_target(reward, done, next_v, 0.9), t(10.0, 1.0, -1.8))


def test_td_target_accepts_bool_done():
    out = td_target(t(1.0, 1.0), torch.tensor([False, True]), t(2.0, 2.0), 0.5)
    # [1 + 0.5*2, 1] = [2, 1]
    torch.testing.assert_close(out, t(2.0, 1.0))


def test_q_loss_sums_both_critics():
    q1, q2, y = t(1.0, 2.0), t(0.0, 0.0), t(1.0, 0.0)
    # mse(q1, y) = (0 + 4) / 2 = 2; mse(q2, y) = (1 + 0) / 2 = 0.5; sum = 2.5
    assert q_loss(q1, q2, y).item() == pytest.approx(2.5)


# --- advantage weights / actor loss --------------------------------------------------------------------------------


def test_advantage_weights_clamp_and_exp():
    adv = t(-1.0, 0.0, 1.0, 10.0)
    w = advantage_weights(adv, beta=2.0, max_weight=100.0)
    # exp(2 * [-1, 0, 1, 10]) = [e^-2, 1, e^2 ~ 7.39, e^20 -> clamped to 100]
    torch.testing.assert_close(w, t(math.exp(-2.0), 1.0, math.exp(2.0), 100.0))


def test_advantage_weights_have_no_gradient():
    adv = t(0.5, -0.5).requires_grad_()
    w = advantage_weights(adv, beta=1.0, max_weight=10.0)
    assert not w.requires_grad


def test_advantage_weights_beta_zero_is_bc():
    torch.testing.assert_close(advantage_weights(t(5.0, -5.0), 0.0, 10.0), t(1.0, 1.0))


def test_awr_actor_loss_hand_example():
    pred = torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.5]])
    target = torch.zeros(2, 4)
    w = t(2.0, 4.0)
    # ||.||^2 per row: [1 + 1, 0.25] = [2, 0.25]; weighted: [4, 1]; mean = 2.5
    assert awr_actor_loss(pred, target, w).item() == pytest.approx(2.5)


def test_awr_with_unit_weights_is_four_times_bc():
    g = torch.Generator().manual_seed(1)
    pred, target = torch.rand(3, 4, generator=g), torch.rand(3, 4, generator=g)
    torch.testing.assert_close(awr_actor_loss(pred, target, torch.ones(3)), 4 * bc_loss(pred, target))


# --- polyak_update -------------------------------------------------------------------------------------------------


def _linear(weight: float, bias: float) -> nn.Linear:
    m = nn.Linear(2, 1)
    with torch.no_grad():
        m.weight.fill_(weight)
        m.bias.fill_(bias)
    return m


def test_polyak_half_gives_midpoint():
    target, source = _linear(0.0, 2.0), _linear(1.0, 4.0)
    polyak_update(target, source, 0.5)
    # 0.5*0 + 0.5*1 = 0.5; 0.5*2 + 0.5*4 = 3
    torch.testing.assert_close(target.weight, torch.full((1, 2), 0.5))
    torch.testing.assert_close(target.bias, t(3.0))
    # source untouched
    torch.testing.assert_close(source.weight, torch.full((1, 2), 1.0))


def test_polyak_tau_one_copies_and_records_no_graph():
    target, source = _linear(0.0, 0.0), _linear(-1.5, 0.25)
    polyak_update(target, source, 1.0)
    torch.testing.assert_close(target.weight, source.weight)
    torch.testing.assert_close(target.bias, source.bias)
    for p in target.parameters():
        assert p.grad is None
        assert p.grad_fn is None  # still a leaf: the update was not recorded by autograd


def test_polyak_copies_buffers():
    target, source = nn.BatchNorm1d(2), nn.BatchNorm1d(2)
    source.running_mean.fill_(4.0)
    source.num_batches_tracked.fill_(7)
    polyak_update(target, source, 0.1)
    torch.testing.assert_close(target.running_mean, t(4.0, 4.0))
    assert target.num_batches_tracked.item() == 7


# --- argument errors -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tau", [0.0, 1.0, -0.1, 1.5])
def test_expectile_rejects_tau_outside_open_interval(tau):
    with pytest.raises(ValueError, match="tau"):
        expectile_loss(t(1.0), tau)


def test_shape_mismatches_raise():
    with pytest.raises(ValueError, match="same shape"):
        value_loss(t(1.0, 2.0), torch.zeros(2, 1), 0.7)  # would broadcast to (2, 2)
    with pytest.raises(ValueError, match="same shape"):
        q_loss(t(1.0), t(1.0, 2.0), t(1.0))
    with pytest.raises(ValueError, match="same shape"):
        td_target(t(1.0, 2.0), t(0.0), t(1.0, 2.0), 0.9)
    with pytest.raises(ValueError, match=r"\(B, 4\)"):
        bc_loss(torch.zeros(2, 3), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="same shape"):
        bc_loss(torch.zeros(2, 4), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="weights"):
        awr_actor_loss(torch.zeros(2, 4), torch.zeros(2, 4), torch.ones(3))
    with pytest.raises(ValueError, match="dimension"):
        expectile_loss(torch.zeros(2, 1), 0.7)


def test_bad_scalars_raise():
    with pytest.raises(ValueError, match="discount"):
        td_target(t(1.0), t(0.0), t(1.0), 1.1)
    with pytest.raises(ValueError, match="beta"):
        advantage_weights(t(1.0), -1.0, 10.0)
    with pytest.raises(ValueError, match="max_weight"):
        advantage_weights(t(1.0), 1.0, 0.0)
    with pytest.raises(ValueError, match="polyak"):
        polyak_update(_linear(0.0, 0.0), _linear(1.0, 1.0), 0.0)


def test_polyak_mismatched_modules_raise_without_partial_update():
    target, source = _linear(0.0, 0.0), nn.Linear(3, 1)
    with pytest.raises(ValueError, match="same shape"):
        polyak_update(target, source, 0.5)
    torch.testing.assert_close(target.weight, torch.zeros(1, 2))
    with pytest.raises(ValueError, match="same parameters"):
        polyak_update(nn.Linear(2, 1), nn.Linear(2, 1, bias=False), 0.5)


# --- the pointer head's loss ---------------------------------------------------------------------------------------


def test_is_swipe_reads_gestures_as_the_environment_does():
    # normalised (y, x): (0.5, 0.5) -> (0.5, 0.5) a tap; 0.1 of height apart is 0.2 with y scaled by 2: a swipe;
    # 0.1 of width apart is 0.1 < 0.14: still a tap
    actions = t(0, 0, 0, 0, 0, 0, 0.2, 0, 0, 0, 0, 0.2).view(3, 4)
    assert is_swipe(actions, 0.14, 2.0).tolist() == [False, True, False]
    assert is_swipe(actions, 0.14, 1.0).tolist() == [False, False, False]  # 0.1 apart, unscaled


def _pointer_out(h: int, w: int, b: int = 1) -> dict[str, torch.Tensor]:
    return {"touch_logits": torch.zeros(b, h * w), "lift_logits": torch.zeros(b, h * w),
            "touch_offset": torch.zeros(b, h * w, 2), "lift_offset": torch.zeros(b, h * w, 2),
            "swipe_logit": torch.zeros(b), "grid": torch.tensor([h, w])}


def test_pointer_loss_of_a_tap_by_hand():
    # 2x2 grid. A tap at normalised (0.375, 0.875): row floor(0.75) = 0, column floor(1.75) = 1 -> cell 1; in cell
    # units it is at (0.75, 1.75), the cell's centre at (0.5, 1.5): offset (0.25, 0.25).
    out = _pointer_out(2, 2)
    out["touch_logits"][0] = t(0, math.log(3), 0, 0)  # softmax p(cell 1) = 3 / 6
    out["touch_offset"][0, 1] = t(0.25, 0.0)  # off by 0.25 in x
    target = t(0.375, 0.875, 0.375, 0.875).view(1, 4) * 2 - 1
    # CE = -log(1/2); L1 offset = 0.25; BCE(logit 0, not a swipe) = log 2; a tap's lift is not trained
    expected = math.log(2) + 0.25 + math.log(2)
    assert pointer_loss(out, target, 0.14, 2.0).item() == pytest.approx(expected, rel=1e-5)


def test_pointer_loss_of_a_swipe_trains_the_lift_too():
    # 2x1 grid: touch at y 0.9 (cell 1, offset 0.3), lift at y 0.1 (cell 0, offset -0.3); all logits 0
    out = _pointer_out(2, 1)
    target = t(0.9, 0.5, 0.1, 0.5).view(1, 4) * 2 - 1
    ce = math.log(2)  # two equally likely cells
    bce = math.log(2)  # logit 0 for a swipe
    expected = (ce + 0.3) + bce + (ce + 0.3)
    assert pointer_loss(out, target, 0.14, 2.0).item() == pytest.approx(expected, rel=1e-5)


def test_points_on_the_screen_edge_fall_in_the_last_cell():
    out = _pointer_out(4, 2)
    out["touch_logits"][0, 7] = 100.0  # the bottom-right cell, certain
    out["touch_offset"][0, 7] = t(0.5, 0.5)
    target = torch.ones(1, 4)  # touch and lift at (1, 1): the corner
    assert pointer_loss(out, target, 0.14, 2.0).item() == pytest.approx(math.log(2), abs=1e-4)  # only the BCE


def test_pointer_loss_refuses_logits_of_another_grid():
    out = _pointer_out(2, 2)
    out["grid"] = torch.tensor([3, 2])
    with pytest.raises(ValueError, match="3x2 grid"):
        pointer_loss(out, torch.zeros(1, 4), 0.14, 2.0)
