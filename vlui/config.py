"""The job floor's schemas: the Hydra configs that users edit, typed.

Every YAML file under ``configs/`` that users are expected to change extends one of these dataclasses (through a
``/schema/...`` entry in its defaults list), so a misspelt key or a value of the wrong type fails when the config is
composed, with a message naming the field, instead of deep inside a run.

The settings of the packages below the jobs live beside what they configure, free of Hydra (:mod:`vlui.limits` says
how): the env's (:mod:`vlui.env.settings`), the agents' (:mod:`vlui.agents.settings`), the data's
(:mod:`vlui.data.settings`), the models' (:mod:`vlui.models.settings`) and the algorithms' (:mod:`vlui.algos.settings`).
This module holds the job floor's own (paths, the executor, the trainer, DAgger, each job's whole config), assembles them all into Hydra's ConfigStore
(:func:`register_configs`, which the entry points call explicitly before Hydra composes anything; nothing is
registered as a side effect of importing this module), and turns a job's composed config into its typed settings at
the job's door (:func:`job_settings`): nothing below the job floor imports Hydra or OmegaConf
(tests/test_architecture.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Optional, TypeVar

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from vlui.agents.settings import AGENT_TYPES, FORMER_NAMES, AgentConfig, refuse_unknown
from vlui.algos.settings import ALGORITHMS
from vlui.data.settings import DataConfig, OfflineDataConfig
from vlui.env.settings import EnvConfig
from vlui.errors import VluiError
from vlui.limits import AT_LEAST_1, NON_NEGATIVE, POSITIVE, SEED, Range, check_fields
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig

T = TypeVar("T")


# --------------------------------------------------------------------------------------------------------- paths
@dataclass
class PathsConfig:
    """Where things live. ``root_dir`` is the repository root (set by the entry points)."""

    root_dir: str = MISSING
    data_dir: str = "${paths.root_dir}/data"
    checkpoint_dir: str = "${paths.root_dir}/checkpoints"
    output_dir: str = "${hydra:runtime.output_dir}"


# --------------------------------------------------------------------------------------------------------- executor
@dataclass
class ExecutorConfig:
    """Where a job's environments live (docs/scaling.md): on this machine (``executor=local``), or on the workers of
    a Dask cluster (``executor=dask``), each worker owning its phones, the agent acting on this machine."""

    name: str = "local"  # "local" | "dask"
    # a running Dask scheduler (tcp://host:8786) whose workers own the phones; null: start a cluster of `workers`
    # processes on this machine, listening on 127.0.0.1 only
    address: Optional[str] = None
    workers: int = 2  # processes of the cluster started on this machine (each one thread)
    retries: int = 2  # how many times an episode whose worker or phone failed runs again, elsewhere, before it is reported
    timeout_s: float = 120.0  # a worker that answers a reset or a step no sooner than this has failed
    connect_timeout_s: float = 10.0  # how long to wait for the scheduler at `address`

    LIMITS: ClassVar[dict[str, Range]] = {"workers": AT_LEAST_1, "retries": NON_NEGATIVE, "timeout_s": POSITIVE,
                                          "connect_timeout_s": POSITIVE}
    CHOICES: ClassVar[dict[str, tuple]] = {"name": ("local", "dask")}


# --------------------------------------------------------------------------------------------------------- trainer
@dataclass
class TrainerConfig:
    """The subset of ``lightning.Trainer`` arguments that vlui's configs set; others pass through unchanged."""

    _target_: str = "lightning.pytorch.Trainer"
    max_steps: int = 4000
    accelerator: str = "auto"
    devices: Any = 1
    strategy: Any = "auto"
    num_nodes: int = 1
    precision: Any = "32-true"
    log_every_n_steps: int = 10
    val_check_interval: Any = None
    check_val_every_n_epoch: Optional[int] = 1
    num_sanity_val_steps: int = 0
    use_distributed_sampler: bool = False  # vlui's batch sampler shards batches across ranks itself
    gradient_clip_val: Optional[float] = None
    deterministic: bool = False
    fast_dev_run: Any = False
    overfit_batches: Any = 0.0
    limit_val_batches: Any = 1.0
    enable_progress_bar: bool = True
    default_root_dir: str = "${paths.output_dir}"

    LIMITS: ClassVar[dict[str, Range]] = {"max_steps": AT_LEAST_1, "num_nodes": AT_LEAST_1,
                                          "log_every_n_steps": AT_LEAST_1, "check_val_every_n_epoch": Range(
                                              1, optional=True), "num_sanity_val_steps": Range(-1),
                                          "gradient_clip_val": Range(0, optional=True)}


# --------------------------------------------------------------------------------------------------------- jobs
@dataclass
class DaggerConfig:
    """DAgger after the first training (vlui/jobs/dagger.py): roll out (``env.num_envs`` phones side by side, one
    batched forward pass per step), label with the expert, train on it all."""

    rounds: int = 0  # 0: no DAgger
    episodes_per_pair: int = 1  # policy episodes per (task, snapshot) of the dataset, each round
    pairs: Optional[int] = None  # roll out on this many (task, snapshot) pairs of the dataset, drawn anew each round
    steps: int = 300  # training steps after each round, on the demonstrations and every round so far
    # roll out on these phones instead of the dataset's (env.snapshots references: train, random:N, ids), e.g.
    # [train, random:2000]: phones the demonstrations never had; validation and test phones are refused
    snapshots: Any = None

    LIMITS: ClassVar[dict[str, Range]] = {"rounds": Range(0), "episodes_per_pair": AT_LEAST_1, "steps": AT_LEAST_1,
                                          "pairs": Range(1, optional=True)}


@dataclass
class TrainJobConfig:
    task_name: str = "train"
    experiment: str = "default"
    run_name: str = MISSING
    seed: int = 0
    compile: bool = False
    channels_last: bool = True
    ckpt_path: Optional[str] = "auto"  # auto: resume from the run's last.ckpt if any | last | a path | null
    init: Optional[str] = None  # algo=ppo: the trained policy it starts from (an export or a run's folder)
    export: bool = True  # write a safetensors policy export next to the checkpoints
    # train on validation phones or test snapshots (refused otherwise): only to measure what that does
    allow_held_out_phones: bool = False
    paths: PathsConfig = field(default_factory=PathsConfig)
    algo: Any = MISSING
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    dagger: DaggerConfig = field(default_factory=DaggerConfig)
    logger: Any = None
    callbacks: Any = None

    LIMITS: ClassVar[dict[str, Range]] = {"seed": SEED}

    @property
    def checkpoint_dir(self) -> str:
        """Where the run's checkpoints go: the folder of its ``model_checkpoint`` callback."""
        return self.callbacks["model_checkpoint"]["dirpath"]


@dataclass
class CollectJobConfig:
    task_name: str = "collect"
    seed: int = 0
    dataset: str = "bmoca_representative"  # written to data/<dataset>/
    tasks: Any = "representative"  # a named set, a list of task ids, or template:<name> entries (below)
    task_seed: int = 0  # template:<name> entries: the seed that draws their instances (vlui/tasks/templates.py)
    task_count: int = 10  # instances drawn per template
    task_split: str = "train"  # train | test | all: the parameter values they are drawn from
    episodes_per_pair: int = 1  # episodes per (task, snapshot)
    resume: bool = True
    save_xml: bool = False
    save_full_screen: bool = False
    paths: PathsConfig = field(default_factory=PathsConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)

    LIMITS: ClassVar[dict[str, Range]] = {"seed": SEED, "task_seed": SEED, "task_count": AT_LEAST_1,
                                          "episodes_per_pair": AT_LEAST_1}
    CHOICES: ClassVar[dict[str, tuple]] = {"task_split": ("train", "test", "all")}


@dataclass
class EvaluateJobConfig:
    task_name: str = "evaluate"
    # online: episodes on phones (the B-MoCA protocol) | offline: the agent's action at every step of a dataset's
    # held-out demonstrations against the demonstrated one (GUIOdyssey's AMS and SR; reads `data`, no phone)
    mode: str = "online"
    seed: int = 0
    # a policy (an export folder, a run folder or a .ckpt); a glob or a list of them: the same recipe trained with
    # different seeds (mean ± s.e. across them); a mapping name -> any of these: policies to compare
    checkpoint: Any = None
    tasks: Any = "representative"  # a named set, a list of task ids, or template:<name> entries (below)
    task_seed: int = 0  # template:<name> entries: the seed that draws their instances (vlui/tasks/templates.py)
    task_count: int = 10  # instances drawn per template
    task_split: str = "test"  # train | test | all: the parameter values they are drawn from
    runs: int = 3  # independent runs with different seeds (the paper reports mean ± stderr over 3)
    episodes_per_pair: int = 1  # episodes per (task, snapshot) in each run
    video: str = "none"  # "none" | "failures" | "all"
    screens: str = "none"  # "none" | "failures" | "all": each step's screen kept, for the viewer (images/<hash>.png)
    resume: bool = True
    # how many environments side by side (one batched policy forward per step): env.num_envs, 16 (configs/evaluate.yaml)
    adaptive_metrics: bool = True  # AndroidArena's TR/TCR/RRR against the expert's trajectory (runs the expert)
    gamma: float = 0.9  # TR's discount
    name: str = "eval"  # names the output folder outputs/evaluate/<name>
    # earlier evaluations (their folders; a mapping name -> folder, or a list) shown beside this one in one table,
    # e.g. a trained policy beside an LLM agent (docs/agents.md)
    compare: Any = None
    # earlier evaluations (a folder or a glob of folders, or a list) whose episodes of the same policies (the same
    # checkpoint, the same weights) under the same settings are taken instead of run again: a study adding seeds
    reuse: Any = None
    paths: PathsConfig = field(default_factory=PathsConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    data: OfflineDataConfig = field(default_factory=OfflineDataConfig)  # mode=offline's demonstrations

    LIMITS: ClassVar[dict[str, Range]] = {"seed": SEED, "task_seed": SEED, "task_count": AT_LEAST_1, "runs": AT_LEAST_1,
                                          "episodes_per_pair": AT_LEAST_1, "gamma": Range(0, 1, open_lo=True)}
    CHOICES: ClassVar[dict[str, tuple]] = {"mode": ("online", "offline"), "task_split": ("train", "test", "all"),
                                           "video": ("none", "failures", "all"),
                                           "screens": ("none", "failures", "all")}


@dataclass
class StudyStepConfig:
    """One step of a study (``python -m vlui.study.launch``), what ``python -m vlui.study`` runs through a Hydra
    launcher: the study as ``vlui.study.load`` reads it, and the index of the step in its commands."""

    task_name: str = "study"
    study: str = MISSING
    size: str = "cpu"
    seeds: int = 3
    arms: Any = None  # the arms asked for (--arms), or null: all
    splits: Any = None  # the splits evaluated (--splits), or null: all of the study's
    sets: Any = None  # the agent arms' settings from the command line (--set [ARM:]KEY=VALUE), or null: none
    checkpoints: Any = None  # trained arms' policies given (--checkpoint ARM=PATH), or null: none
    studies: Optional[str] = None  # a studies file of the user's own
    out: str = MISSING  # the report folder, where each step's wall-clock is kept
    step: int = MISSING
    plan: Optional[str] = None  # the digest of the study's steps when it was launched (vlui.study.plan_digest)
    threads: int = 0  # torch threads for the step's process (0: torch's default); set for steps run side by side here
    paths: PathsConfig = field(default_factory=PathsConfig)

    LIMITS: ClassVar[dict[str, Range]] = {"seeds": AT_LEAST_1, "step": Range(0), "threads": Range(0)}
    CHOICES: ClassVar[dict[str, tuple]] = {"size": ("cpu", "gpu")}


def hydra_value(value: Any) -> str:
    """``value`` (a string, number, list or mapping) written as a Hydra command-line override's value."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


# --------------------------------------------------------------------------------------------------------- renamed
# Settings that have a new name: the old name -> (the new one, why). Wherever a user writes a setting (the command
# line of train.py, evaluate.py and collect.py, compose(), a study's overrides, a config's keys), an old name is
# refused in one line that gives the new one (:func:`check_renamed`), rather than Hydra's screen of advice or, where a
# job took no such setting, a value silently ignored.
SIDE_BY_SIDE = "one name for the environments side by side, in every job"
SCREENSHOT = "the MLLM's screenshot; the observation's size is env.observation_height/width"
SCREEN_SIZE = "one name for a policy's screen size: env.observation_height/width when collecting and evaluating"
RENAMED: dict[str, tuple[str, str]] = {
    "parallel_envs": ("env.num_envs", SIDE_BY_SIDE),  # evaluate.py's
    "dagger.envs": ("env.num_envs", SIDE_BY_SIDE),  # DAgger's rollouts in train.py
    "algo.envs": ("env.num_envs", SIDE_BY_SIDE),  # PPO's rollouts in train.py
    **{f"agent.{old}": (f"agent.{new}", SCREENSHOT) for old, new in FORMER_NAMES.items()},
    "data.image_height": ("data.observation_height", SCREEN_SIZE),  # train.py's screens at another size
    "data.image_width": ("data.observation_width", SCREEN_SIZE),
}


def _refuse_renamed(key: str, value: Any) -> None:
    if key in RENAMED:
        new, why = RENAMED[key]
        raise VluiError(f"{key} is now {new} ({why}): write {new}={value}")


def check_renamed(overrides: Sequence[str]) -> None:
    """Refuse, in one line giving the new name, a command-line override (``key=value``, ``+key=value``,
    ``++key=value`` or ``~key``) of a setting by its old name (:data:`RENAMED`)."""
    for override in overrides:
        key, eq, value = override.partition("=")
        _refuse_renamed(key.lstrip("+~"), value if eq else "...")


def check_agent_overrides(overrides: Sequence[str], default: str | None) -> None:
    """Refuse, in one line naming the agent type and its settings, a command-line override of a setting that the
    chosen agent type (the last ``agent=NAME``, else ``default``, the job's) does not have (``agent=expert
    agent.model=x``), which Hydra would answer with a screen of its advice."""
    name, keys = default, []
    for override in overrides:
        key, _, value = override.partition("=")
        key = key.lstrip("+~")
        if key == "agent":
            name = value
        elif key.startswith("agent."):
            keys.append(key.removeprefix("agent.").split(".")[0])
    if keys and name in AGENT_TYPES:
        refuse_unknown(name, keys)


# The one explicit map from schema names to dataclasses (STYLE.md: no registries filled by import side effects).
SCHEMAS: dict[str, type] = {
    "train_schema": TrainJobConfig,
    "collect_schema": CollectJobConfig,
    "evaluate_schema": EvaluateJobConfig,
    "study_schema": StudyStepConfig,
    "schema/paths": PathsConfig,
    "schema/model/vlui": ModelConfig,
    "schema/model/vision": VisionConfig,
    "schema/model/text": TextConfig,
    "schema/data": DataConfig,
    "schema/env": EnvConfig,
    "schema/executor": ExecutorConfig,
    "schema/trainer": TrainerConfig,
}


def register_configs() -> None:
    """Put the schemas in Hydra's ConfigStore so that ``configs/`` can extend them: :data:`SCHEMAS`, each
    algorithm's settings (:data:`vlui.algos.settings.ALGORITHMS`) as ``schema/algo/<name>`` and each agent type's
    (:data:`vlui.agents.settings.AGENT_TYPES`) as ``schema/agent/<name>``. Safe to call more than once."""
    cs = ConfigStore.instance()
    algos = {f"schema/algo/{name}": algorithm.settings for name, algorithm in ALGORITHMS.items()}
    agents = {f"schema/agent/{name}": kind.settings for name, kind in AGENT_TYPES.items()}
    for path, node in (SCHEMAS | algos | agents).items():
        group, _, name = path.rpartition("/")
        cs.store(group=group or None, name=name, node=node)


def check_settings(cfg: DictConfig) -> None:
    """Check every setting a schema bounds (its ``LIMITS`` and ``CHOICES``) before any work starts, so that e.g.
    ``data.batch_size=0`` or ``env.num_envs=0`` is one line naming the key, not a traceback or a NaN much later; and
    that every key is one of its schema's, since Hydra lets ``+key=value`` add any key to a structured config:
    ``+env.num_env=2`` is an error that suggests ``env.num_envs``, not a setting silently ignored (and an old name,
    :data:`RENAMED`, one that gives the new)."""
    nodes = list(_schema_nodes(cfg, ""))
    for key, schema, node in nodes:
        known = [f.name for f in fields(schema)]
        for name in node:
            if name not in known:
                _refuse_renamed(f"{key}{name}", node[name])
                raise VluiError(f"unknown setting {key}{name}: {_closest(key, str(name), known, nodes)}")
        check_fields(schema, node, key)


def _closest(key: str, name: str, known: list[str], nodes: list[tuple[str, type, DictConfig]]) -> str:
    """A hint for the unknown setting ``key + name``: the closest setting of the same group, else of any group of
    ``nodes`` (:func:`_schema_nodes`; ``+num_envs`` -> ``env.num_envs``), else the group's settings."""
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f"did you mean {key}{close[0]}?"
    every = [f"{prefix}{f.name}" for prefix, schema, _ in nodes for f in fields(schema)]
    leaves = {k.rsplit(".", 1)[-1]: k for k in reversed(every)}
    close = difflib.get_close_matches(name, list(leaves), n=1, cutoff=0.8)
    if close:
        return f"did you mean {leaves[close[0]]}?"
    return f"{key.rstrip('.') or 'the job'} takes: {', '.join(known)}"


def job_settings(cfg: DictConfig | T, schema: type[T]) -> T:
    """A job's whole config as its schema's dataclass (``schema``: :class:`EvaluateJobConfig`, ...), every setting
    checked (:func:`check_settings`) and every interpolation resolved: what a job's door turns its composed config
    into, once. Settings already typed (the entry points check and type them before the job's module loads) are
    taken as they are."""
    if isinstance(cfg, schema):
        return cfg
    check_settings(cfg)
    job = OmegaConf.to_object(cfg)
    if not isinstance(job, schema):
        raise VluiError(f"the config is {type(job).__name__}'s, not {schema.__name__}'s: compose the job's own config")
    return job


def _schema_nodes(node: DictConfig, prefix: str):
    """(dotted key prefix, schema dataclass, node) for ``node`` and every config below it that has a schema."""
    schema = OmegaConf.get_type(node)
    if schema is not None and schema is not dict:
        yield prefix, schema, node
    for name in node:
        if OmegaConf.is_missing(node, name) or OmegaConf.is_interpolation(node, name):
            continue
        child = node[name]
        if isinstance(child, DictConfig):
            yield from _schema_nodes(child, f"{prefix}{name}.")
