"""What a training reads from disk, read once: the dataset (its folder, ``meta/info.json``, its index of episodes),
the datasets mixed in, the named split whose train and val parts it learns from, and the screens and actions the
policy learns (:class:`~vlui.spec.ObsActionSpec`).

The training job makes one at its door (:func:`vlui.jobs.train.training_data`: it also checks what this layer
cannot know, such as a split's leaks and held-out phones); the data module (:meth:`DemoDataModule.of
<vlui.data.datamodule.DemoDataModule.of>`), DAgger's rounds and the policy's export read it, so nothing below the
door opens the dataset's metadata or its splits again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlui.data.format import dataset_spec, read_index, read_info
from vlui.data.settings import DataConfig
from vlui.data.splits import Split, read_split
from vlui.errors import VluiError
from vlui.spec import ObsActionSpec


@dataclass(frozen=True)
class TrainingData:
    """A dataset as a training reads it. ``stored`` is what the dataset holds (its screens' size, its reading of
    actions); ``spec`` is what the policy learns: ``stored``, resized when ``data.observation_height/width`` ask."""

    path: Path
    info: Mapping[str, Any]  # meta/info.json: the format, the recipe, the spec
    index: Mapping[int, Mapping[str, Any]]  # episode id -> its entry in meta/episodes.jsonl
    stored: ObsActionSpec
    spec: ObsActionSpec
    settings: DataConfig
    mix: tuple[str, ...] = ()  # the folders of data.mix, trained on too
    split: Split | None = None  # data.split, read and checked against the dataset's episodes

    @classmethod
    def read(cls, path: str | Path, settings: DataConfig | None = None, mix: Sequence[str] = ()) -> TrainingData:
        """The dataset at ``path`` with the datasets of ``mix`` (folders), as ``settings`` (``data.*``) ask: its
        split ``data.split`` read (and checked against the dataset's episodes), its screens resized to
        ``data.observation_height/width`` when set. Every dataset of ``mix`` must read actions as the dataset does."""
        settings = settings or DataConfig(path=str(path))
        info = read_info(path)
        stored = dataset_spec(info, path)
        for other in mix:
            stored.require_same_actions(dataset_spec(read_info(other), other), str(path), f"data.mix: {other}",
                                        "mix datasets collected with the same env.tap_threshold and "
                                        "env.y_distance_scale")
        index = read_index(path)
        split = read_split(path, settings.split, index) if settings.split is not None else None
        return cls(Path(path), info, index, stored, _training_size(stored, settings), settings, tuple(mix), split)

    @property
    def recipe(self) -> Mapping[str, Any]:
        return self.info["recipe"]

    @property
    def split_episodes(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """The train and val parts' episode ids of :attr:`split`, or None (a random ``val_fraction`` split)."""
        return (self.split.parts["train"], self.split.parts["val"]) if self.split else None

    def read_episodes(self) -> list[int]:
        """The episodes training reads of the dataset itself: the split's train and val parts, or every one."""
        return [*self.split.parts["train"], *self.split.parts["val"]] if self.split else list(self.index)

    def training_pairs(self) -> set[tuple[str, str]] | None:
        """With a split, the (task, snapshot) pairs of its train part (where DAgger rolls out: the held-out ones
        stay held out); None: every pair of the dataset."""
        if self.split is None:
            return None
        return {(self.index[e]["task_id"], str(self.index[e]["snapshot_id"])) for e in self.split.parts["train"]}


def _training_size(stored: ObsActionSpec, settings: DataConfig) -> ObsActionSpec:
    """``stored`` at ``data.observation_height/width`` when they are set (both, or neither)."""
    size = (settings.observation_height, settings.observation_width)
    if size == (None, None):
        return stored
    if None in size:
        raise VluiError(f"data.observation_height={size[0]}, data.observation_width={size[1]}: set both to train at "
                        f"another size than the dataset's {stored.height}x{stored.width}, or neither")
    return stored.resized(*size)
