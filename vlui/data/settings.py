"""The ``data`` settings: the demonstration dataset a training reads (:class:`DataConfig`, with its augmentation and
grounding), and the one offline evaluation scores (:class:`OfflineDataConfig`). Plain dataclasses: the job floor
(:mod:`vlui.config`) makes Hydra's schemas of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Optional

from vlui.limits import AT_LEAST_1, FRACTION, NON_NEGATIVE, Range


@dataclass
class AugmentConfig:
    """Augmentation of the training screens (the ``data.augment`` settings), each drawn from the seed and the step."""

    random_shift: int = 4  # pixels of random shift (pad and crop), 0 disables
    color_jitter: float = 0.0  # strength of brightness/contrast jitter, 0 disables
    # magnify the screen up to 1 + zoom times about a random point, as a denser screen draws every element larger,
    # the demonstrated gesture moved with it (a sample whose target it crops out is left as it is); 0 disables
    zoom: float = 0.0
    views: int = 2  # with a frozen backbone: zoomed copies of each screen, their features cached with the screen's

    LIMITS: ClassVar[dict[str, Range]] = {"random_shift": NON_NEGATIVE, "color_jitter": FRACTION, "zoom": FRACTION,
                                          "views": AT_LEAST_1}


@dataclass
class GroundingConfig:
    """Grounding from the UI tree (docs/training.md): besides the demonstrations, the policy learns to tap the
    clickable elements of the stored screens named by their labels (vlui/env/grounding.py). Needs a dataset collected
    with save_xml=true."""

    weight: float = 0.0  # weight of the grounding loss added to the policy's loss; 0 turns it off
    per_screen: int = 4  # labelled elements drawn (with the seed) from each stored screen, at most

    LIMITS: ClassVar[dict[str, Range]] = {"weight": NON_NEGATIVE, "per_screen": AT_LEAST_1}


@dataclass
class DataConfig:
    """A demonstration dataset written by collect.py (format: docs/dataset.md)."""

    name: str = "bmoca_representative"
    path: str = "${paths.data_dir}/${data.name}"
    val_fraction: float = 0.1  # episode-level split
    batch_size: int = 64
    # the training screens' size (what env.observation_height/width are when collecting and evaluating); null: the
    # dataset's (its spec, written by collect.py); another size resizes them
    observation_height: Optional[int] = None
    observation_width: Optional[int] = None
    on_device: bool = True  # keep decoded frames on the accelerator when they fit
    steps_per_epoch: int = 500  # an epoch is this many steps; checkpoints and validation happen at epoch ends
    collect_if_missing: bool = False
    allow_incomplete: bool = False  # train on a dataset whose collection stopped before the end (otherwise refused)
    success_only: bool = False  # leave out the transitions of failed episodes (success-filtered BC)
    mix: list[str] = field(default_factory=list)  # more datasets (names in paths.data_dir, or folders) trained on too
    # a named split of the dataset (python -m vlui.jobs.split): training reads its train part and validates on its val
    # part (data.val_fraction is then not used); offline evaluation scores its test part. null: no split
    split: Optional[str] = None
    # a frozen backbone's features of each dataset are kept in <dataset>/features/ for the next run on the same
    # screens with the same backbone (seeds, study arms, resumes); false: computed in memory each run
    feature_cache: bool = True
    augment: AugmentConfig = field(default_factory=AugmentConfig)
    grounding: GroundingConfig = field(default_factory=GroundingConfig)
    # draw the training batches evenly over the groups of one phone setting (vlui/eval/axes.py: kind, device, density,
    # font_scale, script, dark_theme, clock_dial, home_layout, wallpaper, held_out_count), e.g. kind: tablets as often
    # as phones; null: every sample alike
    balance: Optional[str] = None

    LIMITS: ClassVar[dict[str, Range]] = {"val_fraction": Range(0, 1, open_hi=True), "batch_size": AT_LEAST_1,
                                          "observation_height": Range(8, optional=True),
                                          "observation_width": Range(8, optional=True), "steps_per_epoch": AT_LEAST_1}


@dataclass
class OfflineDataConfig:
    """The demonstrations ``python evaluate.py mode=offline`` scores an agent on, step by step (docs/evaluation.md)."""

    name: str = "bmoca_representative"
    path: str = "${paths.data_dir}/${data.name}"
    split: Optional[str] = None  # a named split of the dataset (python -m vlui.jobs.split) whose `part` is scored
    part: str = "test"  # the split's train | val | test part; all: every episode (a dataset the policy never saw)
    batch_size: int = 64  # steps per forward pass

    LIMITS: ClassVar[dict[str, Range]] = {"batch_size": AT_LEAST_1}
    CHOICES: ClassVar[dict[str, tuple]] = {"part": ("train", "val", "test", "all")}
