"""What a training reads, read once (vlui/data/training.py): the dataset, its mix and its split, at the size asked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vlui.data.datamodule import DemoDataModule
from vlui.data.settings import DataConfig
from vlui.data.splits import Split, write_split
from vlui.data.training import TrainingData
from vlui.errors import VluiError


def test_a_training_reads_its_dataset_mix_and_split_once_at_the_size_it_asks(tmp_path: Path, tiny_dataset: Path,
                                                                                random_dataset: Path) -> None:
    data_dir = Path(shutil.copytree(tiny_dataset, tmp_path / "tiny", ignore=shutil.ignore_patterns("features")))
    episodes = sorted(json.loads(line)["episode_id"] for line in (data_dir / "meta" / "episodes.jsonl").open())
    parts = {"train": tuple(episodes[:8]), "val": tuple(episodes[8:10]), "test": tuple(episodes[10:])}
    write_split(data_dir, Split("mine", "random", (), 0, 0.2, 0.2, parts))
    settings = DataConfig(path=str(data_dir), split="mine", observation_height=64,
                          observation_width=32)
    data = TrainingData.read(data_dir, settings, mix=[str(random_dataset)])
    assert data.stored.image_size == (256, 128) and data.spec.image_size == (64, 32)  # collected, trained
    assert data.split_episodes == (parts["train"], parts["val"]) and len(data.index) == len(episodes)
    assert data.training_pairs() == {(data.index[e]["task_id"], str(data.index[e]["snapshot_id"]))
                                     for e in parts["train"]}
    dm = DemoDataModule.of(data, seed=0)
    dm.setup("fit")
    assert dm.frames.shape[1:3] == (64, 32) and len(dm.parts) == 2  # the dataset and its mix, resized
    assert dm.training is data


def test_one_of_the_two_training_sizes_is_one_line_naming_both(tiny_dataset: Path) -> None:
    with pytest.raises(VluiError, match=r"^data.observation_height=32, data.observation_width=None: set both to train "
                                        r"at another size than the dataset's 256x128, or neither$"):
        TrainingData.read(tiny_dataset, DataConfig(path=str(tiny_dataset), observation_height=32))
