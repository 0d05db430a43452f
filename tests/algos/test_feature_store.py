"""The feature store: a frozen backbone's features of a dataset are computed by the first run and read back, exactly,
by the next runs on the same screens and backbone, and never used for other screens or another backbone."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.jobs.test_train import tiny
from vlui.algos import feature_store
from vlui.algos.base import PolicyModule
from vlui.cli import compose
from vlui.jobs import train
from vlui.models.policy import load_policy
from vlui.models.vision import VisionEncoder


def _vision(seed: int = 0, **kw) -> VisionEncoder:
    torch.manual_seed(seed)
    return VisionEncoder("efficientnet_b0", 16, None, True, **kw)


def test_the_key_names_the_screens_the_weights_and_the_stage() -> None:
    frames = torch.randint(0, 255, (3, 64, 32, 3), dtype=torch.uint8)
    same = feature_store.key(_vision(), frames)
    assert feature_store.key(_vision(), frames.clone()) == same  # another process, the same backbone and screens
    other = frames.clone()
    other[1, 5, 5, 0] += 1
    assert feature_store.key(_vision(), other) != same  # one pixel
    assert feature_store.key(_vision(), frames[:2]) != same  # a dataset that grew or shrank
    assert feature_store.key(_vision(seed=1), frames) != same  # a randomly initialised backbone of another seed
    assert feature_store.key(_vision(feature_index=-2), frames) != same  # another stage


def _frozen(tmp_path: Path, dataset: Path, run: str, *extra: str):
    return compose("train", tiny(tmp_path / run, dataset, "model.vision.freeze=true", "data.augment.random_shift=0",
                                 *extra), output_dir=tmp_path / run / "out")


@pytest.mark.slow
def test_a_second_run_reads_the_features_instead_of_computing_them(tmp_path: Path, tiny_dataset_copy: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    first = train.run(_frozen(tmp_path, tiny_dataset_copy, "first"))
    (stored,) = (tiny_dataset_copy / "features").glob("*.safetensors")

    def no_backbone(self, *args):
        raise AssertionError("the backbone ran although its features are stored")

    monkeypatch.setattr(PolicyModule, "_backbone_features", no_backbone)
    second = train.run(_frozen(tmp_path, tiny_dataset_copy, "second"))
    a, b = load_policy(first["policy"]).state_dict(), load_policy(second["policy"]).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)  # the same seed trains the same policy from stored features
    assert list((tiny_dataset_copy / "features").glob("*.safetensors")) == [stored]


def test_an_unreadable_store_is_recomputed_and_replaced(tmp_path: Path, tiny_dataset_copy: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    train.run(_frozen(tmp_path, tiny_dataset_copy, "first"))
    (stored,) = (tiny_dataset_copy / "features").glob("*.safetensors")
    good = feature_store.load(tiny_dataset_copy, stored.stem)
    stored.write_bytes(stored.read_bytes()[:100])  # a run killed while another wrote it, a full disk
    train.run(_frozen(tmp_path, tiny_dataset_copy, "second"))
    assert "unreadable" in caplog.text
    assert torch.equal(feature_store.load(tiny_dataset_copy, stored.stem), good)


@pytest.mark.slow
def test_the_store_can_be_turned_off(tmp_path: Path, tiny_dataset_copy: Path) -> None:
    train.run(_frozen(tmp_path, tiny_dataset_copy, "run", "data.feature_cache=false"))
    assert not (tiny_dataset_copy / "features").exists()
