"""A policy with memory (``model.history`` = K, ``model.history_screens``): what it reads of the past, what a missing
step changes (nothing), and that policies and exports of ``history: true`` act exactly as they did."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from vlui.errors import VluiError
from vlui.models.policy import VLUIPolicy, export_policy, load_policy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig, from_dict, to_dict
from vlui.models.vision import VisionEncoder
from vlui.spec import Memory, ObsActionSpec, Past

SIZE = ObsActionSpec(64, 32)
TINY = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2,
                   head_dims=[32])
INSTRUCTIONS = ["call 911", "call 911", "open the clock"]


def screens(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 64, 32, 3), dtype=np.uint8)


def policy(seed: int = 0, **settings) -> VLUIPolicy:
    torch.manual_seed(seed)
    return VLUIPolicy(replace(TINY, **settings), SIZE).eval()


def past(k: int, valid: list[list[bool]], seed: int = 1, with_screens: bool = True) -> Past:
    """A past of ``len(valid)`` episodes: random actions and screens in every slot."""
    rng = np.random.default_rng(seed)
    b = len(valid)
    return Past(rng.uniform(-1, 1, (b, k, 4)).astype(np.float32), np.array(valid, bool),
                rng.integers(0, 256, (b, k, 64, 32, 3), dtype=np.uint8) if with_screens else None)


# What the policy of main at e33a4be (the previous action as a bool setting) answered on these inputs, built with
# torch.manual_seed(0): a policy of model.history=true must still answer the same.
BEFORE = np.array([[0.09414799, 0.0110242665, -0.095655076, -0.27758524],
                   [0.15031672, -0.034713954, -0.04398836, -0.25175235],
                   [0.09912311, 0.01518045, -0.10817258, -0.09807645]], np.float32)
PREVIOUS = np.array([[np.nan] * 4, [-0.6, 0.5, -0.6, 0.5], [0.25, -0.75, 0.5, 0.0]], np.float32)


def test_a_policy_exported_with_history_true_loads_and_acts_exactly_as_before(tmp_path: Path) -> None:
    made = policy(history=True)
    assert made.cfg.history == 1 and not made.cfg.history_screens
    assert {k for k in made.state_dict() if k.startswith("encoder.") and not k.startswith(
        ("encoder.vision.", "encoder.text_proj.", "encoder.fusion."))} == {
        "encoder.previous.net.0.weight", "encoder.previous.net.0.bias", "encoder.previous.net.2.weight",
        "encoder.previous.net.2.bias"}  # the modules, and the weights' names, of before
    before = Past(PREVIOUS[:, None], ~np.isnan(PREVIOUS).any(axis=1)[:, None])
    assert np.allclose(made.select_action(screens(3), INSTRUCTIONS, before), BEFORE, atol=1e-6)
    # its export as the vlui of before wrote it: history a bool, no history_screens
    export_policy(made, tmp_path / "policy")
    config = json.loads((tmp_path / "policy" / "config.json").read_text())
    config["policy"]["model"]["history"] = True
    del config["policy"]["model"]["history_screens"]
    (tmp_path / "policy" / "config.json").write_text(json.dumps(config))
    loaded = load_policy(tmp_path / "policy")
    assert loaded.cfg == made.cfg
    assert np.array_equal(loaded.select_action(screens(3), INSTRUCTIONS, before),
                          made.select_action(screens(3), INSTRUCTIONS, before))
    off = json.loads(json.dumps(config))
    off["policy"]["model"]["history"] = False
    assert from_dict(off["policy"])[0].history == 0


@pytest.mark.parametrize(("value", "expected"), [(True, 1), (False, 0), (0, 0), (4, 4)])
def test_history_counts_steps_and_reads_the_old_switch(value, expected) -> None:
    assert replace(TINY, history=value).history == expected
    assert from_dict(to_dict(replace(TINY, history=value), SIZE))[0].history == expected


@pytest.mark.parametrize("value", [-1, 1.5, "four", None])
def test_a_history_that_is_no_count_is_a_one_line_error(value) -> None:
    with pytest.raises(VluiError, match=r"^model.history must be a whole number at least 0 \(or true for 1, false "
                                        r"for 0\), not ") as err:
        replace(TINY, history=value)
    assert "\n" not in str(err.value)


def test_past_screens_without_past_steps_is_a_one_line_error() -> None:
    with pytest.raises(VluiError, match="model.history_screens=true reads the past steps' screens: set model.history"):
        replace(TINY, history_screens=True)


def test_history_0_is_the_policy_without_history() -> None:
    plain, zero = policy(), policy(history=0)
    assert plain.state_dict().keys() == zero.state_dict().keys()
    assert all(torch.equal(v, zero.state_dict()[k]) for k, v in plain.state_dict().items())
    assert zero.memory().steps == 0 and Memory.batch([zero.memory()], screens(1)) is None
    anything = past(4, [[True] * 4] * 3)
    assert np.array_equal(plain.select_action(screens(3), INSTRUCTIONS),
                          zero.select_action(screens(3), INSTRUCTIONS, anything))


@pytest.mark.parametrize("with_screens", [False, True])
@pytest.mark.parametrize("head", ["mlp", "pointer"])
def test_a_step_that_does_not_exist_changes_nothing(with_screens: bool, head: str) -> None:
    model = policy(history=4, history_screens=with_screens, head=head, positions=head == "pointer")
    valid = [[True, True, False, False], [False] * 4, [True, False, False, False]]
    one = past(4, valid, seed=1, with_screens=with_screens)
    # the same steps, other garbage (and NaN, infinities) in every missing slot
    other = past(4, valid, seed=2, with_screens=with_screens)
    missing = ~np.array(valid)
    actions = np.where(missing[..., None], other.actions, one.actions)
    actions[1, 0] = np.nan
    actions[0, 3] = np.inf
    garbage = Past(actions, one.valid, None if not with_screens else
                   np.where(missing[..., None, None, None], other.screens, one.screens))
    acted = model.select_action(screens(3), INSTRUCTIONS, one)
    assert np.array_equal(acted, model.select_action(screens(3), INSTRUCTIONS, garbage))
    # no past at all is an episode's first step (alone in its batch: equal up to the batch's rounding)
    assert np.allclose(model.select_action(screens(3)[1:2], INSTRUCTIONS[1:2]), acted[1:2], atol=1e-6)


@pytest.mark.parametrize("with_screens", [False, True])
def test_a_policy_with_history_reads_it(with_screens: bool) -> None:
    model = policy(history=4, history_screens=with_screens)
    valid = [[True] * 4] * 3
    one = past(4, valid, seed=1, with_screens=with_screens)
    alone = model.select_action(screens(3), INSTRUCTIONS, past(4, [[False] * 4] * 3, with_screens=with_screens))
    acted = model.select_action(screens(3), INSTRUCTIONS, one)
    assert (np.abs(acted - alone).max(axis=1) > 1e-6).all()  # every episode's past changes its action
    older = Past(one.actions.copy(), one.valid, one.screens)
    older.actions[:, 3] = -older.actions[:, 3]  # the step 4 steps ago only, the previous action unchanged
    assert (np.abs(model.select_action(screens(3), INSTRUCTIONS, older) - acted).max(axis=1) > 1e-6).all()


@pytest.mark.parametrize(("k", "with_screens"), [(4, False), (2, True)])
def test_a_policy_learns_what_only_an_older_step_tells_apart(k: int, with_screens: bool) -> None:
    # two moments of an episode with the same screen and the same previous action: only the action 4 steps ago (or,
    # with screens, the screen 2 steps ago: the contact opened before, say) says what to do. A policy that reads
    # the previous action alone can only average the two.
    # a pretrained backbone (shipped on PyPI): a random frozen one maps every screen to nearly the same features
    model = policy(history=k, history_screens=with_screens,
                   vision=VisionConfig("tf_efficientnet_lite0", pretrained="package", freeze=True, feature_index=-2))
    model.train()
    screen = torch.full((2, 64, 32, 3), 120, dtype=torch.uint8)
    text, mask = model.text.lookup(["text Mei Lin the number of Ken Ito"] * 2)
    actions = torch.zeros(2, k, 4)
    actions[1, -1] = 0.0 if with_screens else 0.8  # 4 steps ago; the steps since are the same
    past_screens = torch.as_tensor(screens(2 * k, seed=3)).reshape(2, k, 64, 32, 3)
    past_screens[1, :-1] = past_screens[0, :-1]  # with screens, only the one 2 steps ago differs
    if not with_screens:
        past_screens[1] = past_screens[0]
    wanted = torch.tensor([[-0.6, 0.5, -0.6, 0.5], [0.1, -0.4, 0.1, -0.4]])
    with torch.no_grad():  # the frozen backbone's maps, once, as training caches them
        vision = model.encoder.vision
        cached = vision.cached_map(screen)
        past_cached = vision.cached_map(past_screens.flatten(0, 1)).unflatten(0, (2, k))
    the_past = Past(actions, torch.ones(2, k, dtype=torch.bool), past_cached if with_screens else None)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    for _ in range(150):
        loss = torch.nn.functional.mse_loss(model.act_from_features(model.encoder.from_cached(
            cached, text, mask, the_past)), wanted)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    acted = model.select_action(screen.numpy(), ["text Mei Lin the number of Ken Ito"] * 2,
                                Past(actions.numpy(), np.ones((2, k), bool), past_screens.numpy()))
    assert np.abs(acted - wanted.numpy()).max() < 0.1


def test_the_past_becomes_tokens_beside_the_image_tokens() -> None:
    model = policy(history=4, history_screens=True, head="pointer", positions=True)
    images = torch.as_tensor(screens(3))
    text, mask = model.text.lookup(INSTRUCTIONS)
    p = past(4, [[True] * 4] * 3)
    fused = model.encoder(images, text, mask, Past(*(torch.as_tensor(x) for x in (p.actions, p.valid, p.screens))))
    assert fused.pooled.shape == (3, 32) and fused.tokens.shape == (3, 2 * 1, 32)  # the image grid alone
    assert model.encoder.past.age.shape == (4, 32)
    out = model.head_output(fused)
    assert out["touch_logits"].shape == (3, 2)
    out["touch_logits"].sum().backward()  # the past screens' tokens train the shared image encoder's projection
    assert model.encoder.past.screen.weight.grad is not None and model.encoder.past.age.grad.abs().sum() > 0


def test_past_screens_are_read_from_the_frozen_backbones_cache() -> None:
    # training with a frozen backbone hands the past screens as the feature cache holds them (the rows of the frames
    # those steps were), not their pixels: the policy must read them as if it had run the backbone on them
    model = policy(history=3, history_screens=True, vision=VisionConfig("efficientnet_b0", freeze=True,
                                                                        feature_index=-2))
    frames = torch.as_tensor(screens(6))
    with torch.no_grad():
        cache = model.encoder.vision.cached_map(frames).half()  # what PolicyModule keeps
    rows = torch.tensor([[4, 3, 2], [1, 0, 0], [0, 0, 0]])
    valid = torch.tensor([[True, True, True], [True, True, False], [False, False, False]])
    actions = torch.rand(3, 3, 4) * 2 - 1
    text, mask = model.text.lookup(INSTRUCTIONS)
    now = torch.tensor([5, 2, 1])
    with torch.no_grad():
        cached = model.encoder.from_cached(cache[now], text, mask, Past(actions, valid, cache[rows]))
        pixels = model.encoder(frames[now], text, mask, Past(actions, valid, frames[rows]))
    assert torch.allclose(cached.pooled, pixels.pooled, atol=1e-2)


DETAIL = VisionConfig("efficientnet_b0", freeze=True, feature_index=-2, detail_index=-3)


def test_a_past_screen_is_its_token_map_averaged_and_projected() -> None:
    # the summary of a past screen costs one projection (the finer map's adapter, K more passes a step, is left out):
    # it is exactly the average of the screen's tokens without the adapter's share
    vision = policy(vision=DETAIL).encoder.vision
    with torch.no_grad():
        fmap = vision.feature_map(torch.as_tensor(screens(3)))
        coarse = vision.proj(fmap[:, :vision.channels].flatten(2).transpose(1, 2))
        assert vision.detail is not None and fmap.shape[1] > vision.channels
        assert torch.allclose(vision.pooled(fmap), coarse.mean(dim=1), atol=1e-5)


@pytest.mark.parametrize("detail", [False, True])
def test_past_screens_read_the_finer_map_only_with_history_screen_detail(detail: bool) -> None:
    model = policy(history=2, history_screens=True, history_screen_detail=detail, vision=DETAIL)
    text, mask = model.text.lookup(INSTRUCTIONS)
    p = past(2, [[True, True]] * 3)
    with torch.no_grad():
        vision = model.encoder.vision
        now = vision.cached_map(torch.as_tensor(screens(3)))
        cached = vision.cached_map(torch.as_tensor(p.screens).flatten(0, 1)).unflatten(0, (3, 2))
        finer = cached.clone()
        finer[:, :, vision.channels:] = torch.randn_like(finer[:, :, vision.channels:])  # other fine detail
        actions, valid = torch.as_tensor(p.actions), torch.as_tensor(p.valid)
        one = model.encoder.from_cached(now, text, mask, Past(actions, valid, cached)).pooled
        other = model.encoder.from_cached(now, text, mask, Past(actions, valid, finer)).pooled
    assert torch.allclose(one, other) != detail


def test_a_policy_exported_before_history_screen_detail_reads_past_screens_as_it_was_trained(tmp_path: Path) -> None:
    # exports of before the setting averaged the past screens' tokens, the finer map's adapter included
    made = policy(history=2, history_screens=True, history_screen_detail=True, vision=DETAIL)
    export_policy(made, tmp_path / "policy")
    config = json.loads((tmp_path / "policy" / "config.json").read_text())
    del config["policy"]["model"]["history_screen_detail"]
    (tmp_path / "policy" / "config.json").write_text(json.dumps(config))
    loaded = load_policy(tmp_path / "policy")
    assert loaded.cfg.history_screen_detail and loaded.cfg == made.cfg
    p = past(2, [[True, False], [True, True], [False, False]])
    assert np.allclose(loaded.select_action(screens(3), INSTRUCTIONS, p),
                       made.select_action(screens(3), INSTRUCTIONS, p), atol=1e-6)
    # a new policy keeps the cheaper reading through its export; one without past screens never reads them
    assert not load_policy(export_policy(policy(history=2, history_screens=True), tmp_path / "new")).cfg \
        .history_screen_detail
    del config["policy"]["model"]["history_screens"]
    assert not from_dict(config["policy"])[0].history_screen_detail


def test_an_export_keeps_its_history_and_acts_the_same(tmp_path: Path) -> None:
    model = policy(history=4, history_screens=True)
    export_policy(model, tmp_path / "policy")
    loaded = load_policy(tmp_path)
    assert (loaded.cfg.history, loaded.cfg.history_screens) == (4, True)
    memory = loaded.memory()
    assert (memory.steps, memory.screens) == (4, True)
    p = past(4, [[True, True, True, False], [True] * 4, [False] * 4])
    assert np.allclose(model.select_action(screens(3), INSTRUCTIONS, p),
                       loaded.select_action(screens(3), INSTRUCTIONS, p), atol=1e-6)


def test_a_policy_that_reads_past_screens_refuses_a_past_without_them() -> None:
    with pytest.raises(VluiError, match=r"reads the past steps' screens too \(model.history_screens=true\)"):
        policy(history=2, history_screens=True).select_action(screens(1), ["a"], past(2, [[True, False]],
                                                                                      with_screens=False))
    with pytest.raises(VluiError, match="the policy takes 64x32 screens, and its past screens are 32x16"):
        policy(history=2, history_screens=True).select_action(screens(1), ["a"], Past(
            np.zeros((1, 2, 4), np.float32), np.ones((1, 2), bool), np.zeros((1, 2, 32, 16, 3), np.uint8)))


def test_a_rollout_runs_a_frozen_backbone_once_per_screen_past_screens_included(monkeypatch) -> None:
    model = policy(history=3, history_screens=True, vision=VisionConfig("efficientnet_b0", freeze=True,
                                                                        feature_index=-2))
    ran: list[int] = []
    original = VisionEncoder.cached_map

    def counted(self, images):
        ran.append(len(images))
        return original(self, images)

    monkeypatch.setattr(VisionEncoder, "cached_map", counted)
    memory, frames, handed, acted = model.memory(), screens(5), [], []
    for t in range(5):  # one episode of five steps: its past screens were each the screen of a step before
        past = Memory.batch([memory], frames[t:t + 1])
        handed.append(past)
        acted.append(model.select_action(frames[t:t + 1], ["open the clock"], past)[0])
        memory.add(frames[t], acted[-1])
    assert ran == [1] * 5
    monkeypatch.undo()
    text, mask = model.text.lookup(["open the clock"])
    for t, past in enumerate(handed):  # as if the backbone ran on every past screen
        with torch.no_grad():
            again = model(torch.as_tensor(frames[t:t + 1]), text, mask,
                          Past(*(torch.as_tensor(x) for x in (past.actions, past.valid, past.screens))))
        assert np.allclose(again.numpy()[0], acted[t], atol=1e-5)
