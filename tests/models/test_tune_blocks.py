"""model.vision.tune_blocks: the last blocks of a frozen backbone train on cached inputs. The cut changes nothing the
policy sees, only the cut's trained side learns, and what a cache holds does not depend on what trains."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from tests.jobs.test_train import tiny
from vlui.algos import feature_store
from vlui.cli import compose
from vlui.errors import VluiError
from vlui.jobs import train
from vlui.models.policy import load_policy
from vlui.models.vision import VisionEncoder

SCREENS = torch.randint(0, 256, (2, 256, 128, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))


def _pair(name: str, feature_index: int | None, detail_index: int | None, n: int):
    torch.manual_seed(0)
    whole = VisionEncoder(name, 16, freeze=True, feature_index=feature_index, detail_index=detail_index).eval()
    cut = VisionEncoder(name, 16, freeze=True, feature_index=feature_index, detail_index=detail_index, tune_blocks=n)
    cut.load_state_dict(whole.state_dict())
    return whole, cut.eval()


@pytest.mark.parametrize(("name", "feature_index", "detail_index", "n"), [
    ("tf_efficientnet_lite0", -2, -3, 1),     # the quickstart's stages; the finer map is cached beside the cut
    ("tf_efficientnet_lite0", -2, -3, 3),     # the whole stride-16 stage
    ("tf_efficientnet_lite0", -2, -3, 6),     # from the stride-8 map itself: the finer map is the cut
    ("tf_efficientnet_lite0", -2, 0, 3),      # a finer map four times the grid's resolution
    ("tf_efficientnet_lite0", None, None, 2),  # the last map, through the head's 1x1 convolution
    ("tf_efficientnet_lite0", None, -2, 5),   # the finer map comes out of the trained blocks
    ("mobilenetv3_small_050", None, -3, 1),   # MobileNetV3: its features end at its blocks
])
def test_the_cut_backbone_reads_screens_exactly_as_the_whole_one(name: str, feature_index: int | None,
                                                                  detail_index: int | None, n: int) -> None:
    whole, cut = _pair(name, feature_index, detail_index, n)
    expected = whole.feature_map(SCREENS)
    assert torch.equal(cut.from_cached(cut.cached_map(SCREENS)), expected)
    assert torch.equal(cut(SCREENS), whole(SCREENS))  # the tokens too: evaluation of an export is unchanged


def test_only_the_trained_blocks_and_the_adapters_learn() -> None:
    _, cut = _pair("tf_efficientnet_lite0", -2, -3, 1)
    cut.train()  # a training step: the backbone stays in eval mode, its BatchNorm statistics fixed
    stats = {k: v.clone() for k, v in cut.backbone.state_dict().items() if "running" in k}
    cached = cut.cached_map(SCREENS)
    assert not cached.requires_grad
    cut.tokens(cut.from_cached(cached)).square().mean().backward()
    learned = {k for k, p in cut.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0}
    backbone = {k for k in learned if k.startswith("backbone.")}
    assert backbone and all(k.startswith("backbone.blocks.4.2.") for k in backbone)  # the last block before the cut
    assert {"proj.weight", "detail.0.weight"} <= learned
    assert all(p.grad is None for k, p in cut.backbone.named_parameters() if not k.startswith("blocks.4.2."))
    assert all(torch.equal(v, cut.backbone.state_dict()[k]) for k, v in stats.items())


def test_what_a_cache_holds_does_not_depend_on_the_trained_blocks() -> None:
    _, cut = _pair("tf_efficientnet_lite0", -2, -3, 1)
    frames = SCREENS[:, :64, :32].contiguous()
    key, cached = feature_store.key(cut, frames), cut.cached_map(frames)
    with torch.no_grad():
        cut.backbone.blocks[4][2].conv_pwl.weight.mul_(2)  # a training step on the trained block
    assert feature_store.key(cut, frames) == key and torch.equal(cut.cached_map(frames), cached)
    with torch.no_grad():
        cut.backbone.blocks[4][1].conv_pwl.weight.mul_(2)  # a frozen block: the stored maps are other maps
    assert feature_store.key(cut, frames) != key
    whole, _ = _pair("tf_efficientnet_lite0", -2, -3, 1)
    assert feature_store.key(whole, frames) != feature_store.key(_pair("tf_efficientnet_lite0", -2, -3, 1)[1], frames)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"freeze": False, "tune_blocks": 1}, "tune_blocks=1 trains the last blocks of a frozen backbone: set "
                                          "model.vision.freeze=true"),
    ({"freeze": True, "tune_blocks": 12, "feature_index": -2}, "tune_blocks=12: tf_efficientnet_lite0 has 11 blocks "
                                                               "before its token stage"),
])
def test_a_cut_that_cannot_be_made_is_a_clear_error(kwargs: dict, message: str) -> None:
    with pytest.raises(VluiError, match=message):
        VisionEncoder("tf_efficientnet_lite0", 16, **kwargs)
    with pytest.raises(VluiError, match="tune_blocks works with timm's EfficientNet and MobileNetV3 families"):
        VisionEncoder("resnet18", 16, freeze=True, tune_blocks=1)


@pytest.mark.slow
@pytest.mark.integration
def test_bc_trains_the_last_block_and_reads_stored_inputs_of_it(tmp_path: Path, tiny_dataset_copy: Path) -> None:
    dataset = tiny_dataset_copy  # without features other tests stored: this one counts what its runs store
    common = ("model.vision.freeze=true", "model.vision.feature_index=-2", "model.vision.tune_blocks=1",
              "data.augment.random_shift=0", "trainer.max_steps=6", "data.steps_per_epoch=3")
    first = train.run(compose("train", tiny(tmp_path / "a", dataset, *common), output_dir=tmp_path / "a" / "out"))
    start = train.run(compose("train", tiny(tmp_path / "b", dataset, *common[:2], *common[3:],),
                              output_dir=tmp_path / "b" / "out"))  # the same run with the whole backbone frozen
    tuned, frozen = (load_file(str(Path(r["policy"]) / "model.safetensors")) for r in (first, start))
    changed = {k for k in tuned if k.startswith("encoder.vision.backbone.") and not torch.equal(tuned[k], frozen[k])}
    assert changed and all(k.startswith("encoder.vision.backbone.blocks.4.2.") for k in changed)
    assert len(list((dataset / "features").glob("*.safetensors"))) == 2  # the cut's inputs, and the whole maps
    policy = load_policy(first["policy"])
    assert policy.cfg.vision.tune_blocks == 1  # an ordinary export: it acts with the trained block
    assert policy.select_action(np.zeros((1, 64, 32, 3), np.uint8), ["turn on airplane mode"]).shape == (1, 4)
    again = train.run(compose("train", tiny(tmp_path / "c", dataset, *common), output_dir=tmp_path / "c" / "out"))
    assert len(list((dataset / "features").glob("*.safetensors"))) == 2  # read back, not stored again
    repeat = load_file(str(Path(again["policy"]) / "model.safetensors"))
    assert all(torch.equal(repeat[k], tuned[k]) for k in tuned)
