"""Typed schemas for the Hydra configs that users edit.

Every YAML file under ``configs/`` that users are expected to change extends one of these dataclasses (through a
``/schema/...`` entry in its defaults list), so a misspelt key or a value of the wrong type fails when the config is
composed, with a message naming the field, instead of deep inside a run.

The schemas are registered by :func:`register_configs`, which the entry points call explicitly before Hydra composes
anything; nothing is registered as a side effect of importing this module.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Optional, TypeVar

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf

from vlui.algos.settings import ALGORITHMS, AugmentConfig
from vlui.device import OBSERVATION_VERSION
from vlui.errors import VluiError
from vlui.limits import AT_LEAST_1, FRACTION, NON_NEGATIVE, PORT, POSITIVE, SEED, Range
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.spec import LANDSCAPE, RTL, ObsActionSpec

T = TypeVar("T")


# --------------------------------------------------------------------------------------------------------- paths
@dataclass
class PathsConfig:
    """Where things live. ``root_dir`` is the repository root (set by the entry points)."""

    root_dir: str = MISSING
    data_dir: str = "${paths.root_dir}/data"
    checkpoint_dir: str = "${paths.root_dir}/checkpoints"
    output_dir: str = "${hydra:runtime.output_dir}"


# --------------------------------------------------------------------------------------------------------- data
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
    # the training screens' size; null: the dataset's (its spec, written by collect.py); another size resizes them
    image_height: Optional[int] = None
    image_width: Optional[int] = None
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
                                          "image_height": Range(8, optional=True),
                                          "image_width": Range(8, optional=True), "steps_per_epoch": AT_LEAST_1}


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


# --------------------------------------------------------------------------------------------------------- env
@dataclass
class GeneratorConfig:
    """Generated device configurations (``env.snapshots=random:N`` / ``heldout:N``; docs/generation.md)."""

    seed: int = 0  # which configurations random:N draws: gen-<seed>-<index>
    # axis -> values kept out of random:N (and the only ones heldout:N draws), e.g. {locale: [ja-JP], device: [tablet]};
    # null: none
    holdout: Any = None

    LIMITS: ClassVar[dict[str, Range]] = {"seed": SEED}


@dataclass
class EnvConfig:
    """The device an agent acts on, and how actions and observations are shaped."""

    backend: str = "sim"  # "sim" | "adb"
    snapshots: Any = "train"  # "train" | "test" | "all" | "random:N" | "heldout:N" | ids, files, or a list of these
    generator: GeneratorConfig = field(default_factory=GeneratorConfig)
    # adb backend (docs/adb.md)
    serial: Any = None  # a device serial (emulator-5554, 127.0.0.1:5555) or a list: one per parallel environment
    adb_host: str = "127.0.0.1"
    adb_port: int = 5037
    console_port: Optional[int] = None  # the emulator console; default: from the serial (emulator-5554 -> 5554)
    console_token_file: str = "~/.emulator_console_auth_token"
    snapshot_reset: str = "console"  # "console": avd snapshot load <id> | "none": a phone, episodes start as it is
    screencap: str = "auto"  # "raw" | "png" | "auto": time both once, keep the faster
    log_tags: Any = "tasks"  # logcat tags streamed: "tasks" (those the task detectors read) | "all" | a list
    command_timeout_s: float = 30.0  # a device command that takes longer is an error (a hung device)
    connect_timeout_s: float = 30.0  # how long to wait for a device to come (back) online
    # the screens and how actions read (vlui/spec.py); a trained policy brings its own to DAgger, PPO and evaluate
    observation_height: int = ObsActionSpec.height
    observation_width: int = ObsActionSpec.width
    include_xml: bool = False
    tap_threshold: float = ObsActionSpec.tap_threshold  # B-MoCA App. A.1: touch-to-lift distance under which it is a tap
    y_distance_scale: float = ObsActionSpec.y_scale  # the paper's code doubles the y difference for the 2:1 screen
    # a screen wider than tall in the portrait observation: "stretched" as it stands (B-MoCA's), "rotated" a quarter
    # first, or "stacked", its left half above its right (vlui/spec.py); a policy brings its own to DAgger, PPO and
    # evaluate
    landscape: str = ObsActionSpec.landscape
    # a phone in a right-to-left locale: its screen "kept" as it is (B-MoCA's) or "mirrored" left to right, so that
    # its layouts read as a left-to-right locale's (vlui/spec.py); a policy brings its own to DAgger, PPO and evaluate
    rtl: str = ObsActionSpec.rtl
    clip_actions: bool = False  # clip out-of-range actions instead of raising
    # wait before each observation; null: the device's own (3.0 s on emulators and phones: B-MoCA's 1/3 Hz; 0 on the
    # simulated phone, also when it is served over ADB)
    observation_wait_s: Optional[float] = 0.0
    num_envs: int = 1  # parallel environments (subprocess workers when > 1)
    # episode-level randomness on the simulated phone, seeded per episode (vlui/sim/perturb.py): the clock, a
    # notification arriving, where a list was left, a slow app start, a permission prompt. Off for the B-MoCA protocol.
    stochastic: bool = False  # episode-level randomness (a notification, the clock, a slow app start): environment.md

    LIMITS: ClassVar[dict[str, Range]] = {
        "adb_port": PORT, "console_port": Range(1, 65535, optional=True), "command_timeout_s": POSITIVE,
        "connect_timeout_s": POSITIVE, "observation_height": Range(8), "observation_width": Range(8),
        "tap_threshold": NON_NEGATIVE, "y_distance_scale": POSITIVE, "observation_wait_s": Range(0, optional=True),
        "num_envs": AT_LEAST_1}
    CHOICES: ClassVar[dict[str, tuple]] = {"backend": ("sim", "adb"), "snapshot_reset": ("console", "none"),
                                           "screencap": ("raw", "png", "auto"), "landscape": LANDSCAPE, "rtl": RTL}

    def spec(self) -> ObsActionSpec:
        """The screens these settings show and how they read actions."""
        return ObsActionSpec(self.observation_height, self.observation_width, self.tap_threshold,
                             self.y_distance_scale, self.landscape, self.rtl)

    def with_spec(self, spec: ObsActionSpec) -> EnvConfig:
        """These settings showing ``spec``'s screens and reading actions by it (a trained policy's)."""
        return replace(self, observation_height=spec.height, observation_width=spec.width,
                       tap_threshold=spec.tap_threshold, y_distance_scale=spec.y_scale, landscape=spec.landscape,
                       rtl=spec.rtl)

    def measured(self) -> dict[str, Any]:
        """The settings that change what an episode is (the screens an agent sees, how its actions are read): a
        dataset or an evaluation resumes only under the same."""
        return {**{k: getattr(self, k) for k in ("backend", "observation_height", "observation_width",
                                                 "tap_threshold", "y_distance_scale", "stochastic")},
                # named only when not B-MoCA's, so that earlier datasets and evaluations resume as before
                **({"landscape": self.landscape} if self.landscape != ObsActionSpec.landscape else {}),
                **({"rtl": self.rtl} if self.rtl != ObsActionSpec.rtl else {}),
                "observation_version": OBSERVATION_VERSION}


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


# --------------------------------------------------------------------------------------------------------- agent
@dataclass
class AgentConfig:
    """Who acts during collection and evaluation."""

    name: str = MISSING  # "expert" | "random" | "policy" | "text" | "mllm"
    # expert: imperfection, for realistic and for offline-RL data
    tap_jitter: float = 0.0  # fraction of the target's bounds within which taps land (0 = centre)
    random_action_prob: float = 0.0
    wrong_action_prob: float = 0.0
    # policy: an exported checkpoint folder or a Lightning checkpoint
    checkpoint: Optional[str] = None
    device: str = "auto"
    # policy: on a screen the episode has been on before, not a gesture it already took there (the pointer head's
    # next likeliest touch cell): a deterministic policy otherwise repeats a step that led nowhere forever
    avoid_repeats: bool = False
    # text, mllm: an OpenAI-compatible chat endpoint (docs/agents.md)
    base_url: Optional[str] = None  # e.g. http://127.0.0.1:8000/v1
    url: Optional[str] = None  # the former name of base_url, still read
    model: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"  # the environment variable holding the API key (unset: none sent)
    timeout_s: float = 60.0  # the wait for one answer; each one that does not come is a warning line, then a retry
    max_retries: int = 5  # a request answered 429, 408 or 5xx, or not answered, is sent again up to this many times
    retry_delay_s: float = 1.0  # the first wait before sending it again, doubled each time (or the Retry-After)
    retry_max_delay_s: float = 60.0  # the longest wait; a Retry-After asking for more fails the request at once
    # a request's whole time, retries and waits included: past it the request fails (the episode is an infrastructure
    # failure, run again on resume), so a server that never answers costs minutes, not a quarter of an hour
    request_deadline_s: float = 180.0
    # requests in flight at once, from the run's environments side by side (at most parallel_envs of them): each
    # environment waits on its own answer; the episodes, their actions and their order are those of 1
    concurrency: int = 1
    temperature: float = 0.0  # B-MoCA's for GPT-4 and GPT-4V (App. C.3)
    top_p: Optional[float] = None  # null: not sent (the endpoint's default)
    max_answer_tokens: Optional[int] = None  # the answer's length limit; null: not sent
    seed_requests: bool = True  # send the episode's seed with each request (runs differ, a rerun is cached)
    # the prompt (B-MoCA App. C.1): element bounds in the list, previous steps shown, the answer's format
    with_bounds: bool = True
    history: int = 8  # the last N steps in the prompt; 0: none (B-MoCA's prompt has none)
    answer: str = "bmoca"  # "bmoca": Description, Thought, Action | "json": M3A's reason and JSON action
    # the action options: "bmoca", the paper's six | "extended", and GUIOdyssey's long_press(n), type("text"),
    # complete() and impossible()
    actions: str = "bmoca"
    reflect: bool = False  # M3A: after each step, a summary from the screens before and after, used as history
    few_shot: int = 0  # examples (demonstration transitions) in each prompt
    few_shot_data: Optional[str] = None  # the dataset they are drawn from (a folder)
    few_shot_seed: int = 0
    # mllm: the screenshot sent (PNG), and set-of-mark: the elements' numbers drawn on it
    image_height: int = 1024
    image_width: int = 512
    set_of_marks: bool = False
    # every answer kept by its full request: the same request again is answered from here (null: no cache)
    cache_dir: Optional[str] = None
    budget_requests: Optional[int] = None  # requests this run may send; null: no limit
    budget_tokens: Optional[int] = None  # tokens (in + out, as the endpoint counts them) this run may use
    price_input_per_1m: float = 0.0  # the model's price per million input tokens, for the cost estimate; 0: unknown
    price_output_per_1m: float = 0.0
    # a run stops in one line after this many answers in a row with no valid action (a model that does not follow
    # the answer format: a wrong chat template, a base model); null: never, every answer is measured
    stop_after_invalid: Optional[int] = 50

    # the expert's noise settings are probabilities and a fraction of a target's size
    LIMITS: ClassVar[dict[str, Range]] = {"tap_jitter": FRACTION, "random_action_prob": FRACTION,
                                          "wrong_action_prob": FRACTION, "timeout_s": POSITIVE,
                                          "max_retries": NON_NEGATIVE, "retry_delay_s": NON_NEGATIVE,
                                          "retry_max_delay_s": POSITIVE, "request_deadline_s": POSITIVE,
                                          "concurrency": AT_LEAST_1, "temperature": Range(0, 2),
                                          "top_p": Range(0, 1, optional=True),
                                          "max_answer_tokens": Range(1, optional=True), "history": Range(0),
                                          "few_shot": Range(0), "few_shot_seed": SEED, "image_height": Range(8),
                                          "image_width": Range(8), "budget_requests": Range(0, optional=True),
                                          "budget_tokens": Range(0, optional=True),
                                          "stop_after_invalid": Range(1, optional=True),
                                          "price_input_per_1m": NON_NEGATIVE, "price_output_per_1m": NON_NEGATIVE}
    CHOICES: ClassVar[dict[str, tuple]] = {"answer": ("bmoca", "json"), "actions": ("bmoca", "extended")}
    # settings added after datasets and evaluations first recorded the agent's: a recipe leaves them out at these
    # values (what everything before them did), so what was collected or evaluated before them still resumes
    SINCE: ClassVar[dict[str, Any]] = {"actions": "bmoca", "avoid_repeats": False, "request_deadline_s": 180.0,
                                       "concurrency": 1}
    # how an LLM agent reaches its model, which a resume may change (the model itself, agent.model, it may not); the
    # cache, the budget and the prices change what a run costs, not what it measures
    CONNECTION: ClassVar[tuple[str, ...]] = (
        "url", "base_url", "api_key_env", "timeout_s", "max_retries", "retry_delay_s", "retry_max_delay_s",
        "request_deadline_s", "concurrency", "cache_dir", "budget_requests", "budget_tokens", "price_input_per_1m",
        "price_output_per_1m", "stop_after_invalid")

    @classmethod
    def in_recipe(cls, agent: dict[str, Any]) -> dict[str, Any]:
        """The agent's settings as a dataset's or an evaluation's recipe records them (without :attr:`SINCE`'s at
        their old behaviour)."""
        return {k: v for k, v in agent.items() if not (k in cls.SINCE and v == cls.SINCE[k])}


# --------------------------------------------------------------------------------------------------------- jobs
@dataclass
class DaggerConfig:
    """DAgger after the first training (vlui/jobs/dagger.py): roll out, label with the expert, train on it all."""

    rounds: int = 0  # 0: no DAgger
    episodes_per_pair: int = 1  # policy episodes per (task, snapshot) of the dataset, each round
    pairs: Optional[int] = None  # roll out on this many (task, snapshot) pairs of the dataset, drawn anew each round
    steps: int = 300  # training steps after each round, on the demonstrations and every round so far
    envs: int = 16  # simulated phones stepped side by side (one batched forward pass per step)
    # roll out on these phones instead of the dataset's (env.snapshots references: train, random:N, ids), e.g.
    # [train, random:2000]: phones the demonstrations never had; validation and test phones are refused
    snapshots: Any = None

    LIMITS: ClassVar[dict[str, Range]] = {"rounds": Range(0), "episodes_per_pair": AT_LEAST_1, "steps": AT_LEAST_1,
                                          "envs": AT_LEAST_1, "pairs": Range(1, optional=True)}


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
    parallel_envs: int = 16  # environments stepped side by side (one batched policy forward per step)
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
                                          "episodes_per_pair": AT_LEAST_1, "parallel_envs": AT_LEAST_1,
                                          "gamma": Range(0, 1, open_lo=True)}
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
    "schema/agent": AgentConfig,
}


def register_configs() -> None:
    """Put the schemas in Hydra's ConfigStore so that ``configs/`` can extend them: :data:`SCHEMAS`, and each
    algorithm's settings (:data:`vlui.algos.settings.ALGORITHMS`) as ``schema/algo/<name>``. Safe to call more than
    once."""
    cs = ConfigStore.instance()
    algos = {f"schema/algo/{name}": algorithm.settings for name, algorithm in ALGORITHMS.items()}
    for path, node in (SCHEMAS | algos).items():
        group, _, name = path.rpartition("/")
        cs.store(group=group or None, name=name, node=node)


def check_settings(cfg: DictConfig) -> None:
    """Check every setting a schema bounds (its ``LIMITS`` and ``CHOICES``) before any work starts, so that e.g.
    ``data.batch_size=0`` or ``parallel_envs=0`` is one line naming the key, not a traceback or a NaN much later; and
    that every key is one of its schema's, since Hydra lets ``+key=value`` add any key to a structured config:
    ``+env.paralel_envs=2`` is an error that suggests ``parallel_envs``, not a setting silently ignored."""
    nodes = list(_schema_nodes(cfg, ""))
    for key, schema, node in nodes:
        known = [f.name for f in fields(schema)]
        for name in node:
            if name not in known:
                raise VluiError(f"unknown setting {key}{name}: {_closest(key, str(name), known, nodes)}")
        _check(schema, node, key)


def _closest(key: str, name: str, known: list[str], nodes: list[tuple[str, type, DictConfig]]) -> str:
    """A hint for the unknown setting ``key + name``: the closest setting of the same group, else of any group of
    ``nodes`` (:func:`_schema_nodes`; ``+env.paralel_envs`` -> ``parallel_envs``), else the group's settings."""
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f"did you mean {key}{close[0]}?"
    every = [f"{prefix}{f.name}" for prefix, schema, _ in nodes for f in fields(schema)]
    leaves = {k.rsplit(".", 1)[-1]: k for k in reversed(every)}
    close = difflib.get_close_matches(name, list(leaves), n=1, cutoff=0.8)
    if close:
        return f"did you mean {leaves[close[0]]}?"
    return f"{key.rstrip('.') or 'the job'} takes: {', '.join(known)}"


def settings(schema: type[T], value: T | DictConfig | Mapping[str, Any], group: str) -> T:
    """The settings of config group ``group`` as their dataclass ``schema``, checked: from a composed config's node, a
    mapping (a key that is no setting is an error, not ignored) or an instance."""
    if isinstance(value, DictConfig):
        value = OmegaConf.to_object(value)
    if isinstance(value, Mapping):
        known = [f.name for f in fields(schema)]
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise VluiError(f"unknown {group} setting(s) {', '.join(map(str, unknown))}; valid: {', '.join(known)}")
        value = schema(**value)
    if not isinstance(value, schema):
        raise VluiError(f"{group} settings must be a mapping or a {schema.__name__}, not {type(value).__name__}")
    _check(schema, vars(value), f"{group}.")
    return value


def env_settings(value: EnvConfig | DictConfig | Mapping[str, Any]) -> EnvConfig:
    """The ``env`` settings as an :class:`EnvConfig` (see :func:`settings`)."""
    return settings(EnvConfig, value, "env")


def agent_settings(value: AgentConfig | DictConfig | Mapping[str, Any]) -> AgentConfig:
    """The ``agent`` settings as an :class:`AgentConfig` (see :func:`settings`)."""
    return settings(AgentConfig, value, "agent")


def _check(schema: type, values: Mapping[str, Any] | DictConfig, key: str) -> None:
    for name, allowed in getattr(schema, "CHOICES", {}).items():
        if name in values and values[name] not in allowed:
            raise VluiError(f"{key}{name} must be one of {', '.join(allowed)}, not {values[name]!r}")
    for name, limit in getattr(schema, "LIMITS", {}).items():
        if name not in values:
            continue
        value = values[name]
        if isinstance(value, ListConfig):  # a list setting (head_dims, betas): every item within the limits
            value = OmegaConf.to_container(value)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            problem = limit.problem(v)
            if problem:
                raise VluiError(f"{key}{name} {problem}, not {value!r}")


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
