"""Every learning algorithm's typed settings (the ``algo`` config group's schemas) and the one registry of algorithms.

An algorithm is a LightningModule in a module of its own (``vlui/algos/<name>.py``), a dataclass of its settings here,
one line of :data:`ALGORITHMS` and one YAML (``configs/algo/<name>.yaml``, which says only what differs from the
dataclass). The settings live apart from the code because Hydra must know every schema before it composes anything,
and ``train.py --help`` composes without importing torch; the module is imported when an algorithm trains.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Optional, TypeVar

from vlui.errors import VluiError
from vlui.limits import AT_LEAST_1, FRACTION, NON_NEGATIVE, POSITIVE, Range

T = TypeVar("T")


@dataclass
class OptimConfig:
    """Adam with an optional cosine-annealed learning rate (the paper's App. C.4: Adam, 3e-4, cosine)."""

    lr: float = 3e-4
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    scheduler: str = "cosine"  # "cosine" | "constant"
    warmup_steps: int = 0

    LIMITS: ClassVar[dict[str, Range]] = {"lr": POSITIVE, "weight_decay": NON_NEGATIVE,
                                          "betas": Range(0, 1, open_hi=True), "warmup_steps": NON_NEGATIVE}
    CHOICES: ClassVar[dict[str, tuple]] = {"scheduler": ("cosine", "constant")}


@dataclass
class BCConfig:
    """Behaviour cloning: mean squared error to the expert's dual-gesture (vlui/algos/bc.py)."""

    name: str = "bc"
    optim: OptimConfig = field(default_factory=OptimConfig)


@dataclass
class IQLConfig:
    """Implicit Q-learning (Kostrikov et al. 2022; B-MoCA App. E.3; vlui/algos/iql.py)."""

    name: str = "iql"
    optim: OptimConfig = field(default_factory=OptimConfig)
    discount: float = 0.99  # gamma
    expectile: float = 0.7  # tau of the expectile value loss
    beta: float = 3.0  # inverse temperature of the advantage weights
    max_weight: float = 100.0  # clip of exp(beta * A)
    polyak: float = 0.005  # target-network update rate
    share_encoders: bool = True  # critics reuse the actor's encoders (frozen for the critic loss) or own copies

    LIMITS: ClassVar[dict[str, Range]] = {"discount": FRACTION, "expectile": Range(0, 1, open_lo=True, open_hi=True),
                                          "beta": NON_NEGATIVE, "max_weight": POSITIVE,
                                          "polyak": Range(0, 1, open_lo=True)}


@dataclass
class OnlineConfig:
    """What every algorithm that learns from rollouts shares (:mod:`vlui.algos.online` is its code,
    :mod:`vlui.jobs.online` runs its episodes): it fine-tunes the policy that ``init=`` names on episodes of ``tasks``
    on ``env.snapshots``, measures its learning curve on ``eval_snapshots``, and counts its progress in iterations
    (roll out, then update), each one Lightning epoch. Its rollouts step ``env.num_envs`` phones side by side
    (configs/algo/ppo.yaml: 32)."""

    name: str = ""  # each online algorithm's own
    # an online algorithm trains at a constant learning rate: its steps are not known before its rollouts
    optim: OptimConfig = field(default_factory=lambda: OptimConfig(scheduler="constant"))
    tasks: Any = "representative"  # the tasks rolled out (a set name or a list of ids), on env.snapshots
    iterations: int = 20  # rollouts then updates; each is one Lightning epoch
    episodes: int = 96  # episodes per iteration, (task, snapshot) pairs drawn from the seed and the iteration
    eval_every: int = 5  # deterministic success on eval_snapshots every this many iterations (and before the first)
    # the phones of the learning curve: validation phones (choose iterations on them, never on the test snapshots;
    # docs/evaluation.md); 0 eval_every turns it off
    eval_snapshots: Any = "val:20"
    checkpoint_every: int = 5  # iterations between checkpoints (a step*.ckpt and last.ckpt each time)
    # weight of imitating data.name's demonstrations alongside (DAPG): keeps what they taught where the rollouts do
    # not go; 0 turns it off
    bc_coef: float = 0.0
    # the last blocks of the starting policy's frozen backbone that train too (its model.vision.tune_blocks); None
    # keeps the policy's own setting
    tune_blocks: Optional[int] = None
    minibatch: int = 128  # steps per update (and demonstrations per update, with bc_coef)
    step_cost: float = 0.0  # subtracted from the reward at every step (success is 1)
    log_std_init: float = -1.0  # the mlp head's Gaussian spread at the start (the pointer head's is its logits')

    LIMITS: ClassVar[dict[str, Range]] = {
        "iterations": AT_LEAST_1, "episodes": AT_LEAST_1, "eval_every": Range(0),
        "checkpoint_every": AT_LEAST_1, "bc_coef": NON_NEGATIVE, "tune_blocks": Range(0, optional=True),
        "minibatch": AT_LEAST_1, "step_cost": NON_NEGATIVE}


@dataclass
class PPOConfig(OnlineConfig):
    """PPO (Schulman et al. 2017) from a trained policy, rewarded by the tasks' detectors (vlui/algos/ppo.py)."""

    name: str = "ppo"
    # ppo: the clipped surrogate on generalised advantages; filtered: imitate the successful rollouts' steps only
    objective: str = "ppo"
    optim: OptimConfig = field(default_factory=lambda: OptimConfig(lr=3e-5, scheduler="constant"))
    epochs: int = 4  # passes over each iteration's steps
    clip: float = 0.2  # PPO's epsilon
    discount: float = 0.99
    gae_lambda: float = 0.95
    value_coef: float = 0.5
    value_lr: float = 1.0e-3  # the value head is new: it learns faster than the policy it judges
    entropy_coef: float = 0.001
    max_grad_norm: float = 0.5
    target_kl: Optional[float] = 0.02  # stop an iteration's updates once the KL to the acting policy passes 1.5x

    LIMITS: ClassVar[dict[str, Range]] = {
        **OnlineConfig.LIMITS, "epochs": AT_LEAST_1, "clip": Range(0, 1, open_lo=True),
        "discount": FRACTION, "gae_lambda": FRACTION, "value_coef": NON_NEGATIVE, "value_lr": POSITIVE,
        "entropy_coef": NON_NEGATIVE, "max_grad_norm": POSITIVE,
        "target_kl": Range(0, optional=True, open_lo=True)}
    CHOICES: ClassVar[dict[str, tuple]] = {"objective": ("ppo", "filtered")}


# What an algorithm learns from: a dataset collected before (offline: BC, IQL), or its own rollouts on the phones,
# starting from the policy init= names (online: PPO; with algo.bc_coef it imitates the dataset's demonstrations too).
# The training job builds, runs and records each the same way (vlui.jobs.train.LEARNING).
LEARNS_FROM = ("dataset", "rollouts")


@dataclass(frozen=True)
class Algorithm:
    """An entry of :data:`ALGORITHMS`: the algorithm's settings, where its LightningModule is, and what it learns
    from (:data:`LEARNS_FROM`; an algorithm learning from rollouts has :class:`OnlineConfig` settings and an
    :class:`vlui.algos.online.OnlineModule`)."""

    settings: type  # the dataclass of its settings, the schema of configs/algo/<name>.yaml
    module: str  # "package.module:Class", imported when the algorithm trains (torch and Lightning load with it)
    learns_from: str = "dataset"

    def __post_init__(self) -> None:
        if self.learns_from not in LEARNS_FROM:
            raise VluiError(f"{self.settings.__name__} learns_from={self.learns_from!r}: choose from "
                            f"{', '.join(LEARNS_FROM)}")
        if (self.learns_from == "rollouts") != issubclass(self.settings, OnlineConfig):
            raise VluiError(f"{self.settings.__name__}: an algorithm learns from rollouts exactly when its settings "
                            "extend OnlineConfig (the episodes, iterations and policy it starts from)")

    def load(self) -> type:
        """The LightningModule class."""
        path, _, name = self.module.partition(":")
        return getattr(importlib.import_module(path), name)


# The one explicit map from algorithm names to algorithms (STYLE.md: no registries filled by import side effects).
ALGORITHMS: dict[str, Algorithm] = {
    "bc": Algorithm(BCConfig, "vlui.algos.bc:BCModule"),
    "iql": Algorithm(IQLConfig, "vlui.algos.iql:IQLModule"),
    "ppo": Algorithm(PPOConfig, "vlui.algos.ppo:PPOModule", learns_from="rollouts"),
}


def algorithm(name: str) -> Algorithm:
    """The algorithm called ``name``; an unknown name lists the known ones."""
    if name not in ALGORITHMS:
        raise VluiError(f"unknown algo {name!r}; choose from: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def from_mapping(schema: type[T], values: Mapping[str, Any]) -> T:
    """An algorithm's settings (``schema``) from the plain mapping a checkpoint keeps as its hyperparameters: the
    fields it gives, the dataclass's defaults for the others; ``optim`` becomes its :class:`OptimConfig`."""
    known = {f.name for f in fields(schema)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise VluiError(f"unknown {schema.__name__} setting(s): {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    values = dict(values)
    if isinstance(values.get("optim"), Mapping):
        optim = dict(values["optim"])
        if "betas" in optim:
            optim["betas"] = tuple(optim["betas"])
        values["optim"] = OptimConfig(**optim)
    return schema(**values)


# the columns of an online run's learning curve (``curve.csv`` beside its checkpoints), which studies read
CURVE_COLUMNS = ["iteration", "seconds", "episodes", "env_steps", "rollout_success", "rollout_return",
                 "heldout_success"]
