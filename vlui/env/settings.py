"""The ``env`` settings: the device an agent acts on, and how actions and observations are shaped
(:class:`EnvConfig`). Plain dataclasses: the job floor (:mod:`vlui.config`) makes Hydra's schema of them; code below
it takes an :class:`EnvConfig` or a plain mapping (:func:`env_settings`). The backends that make the devices
(:mod:`vlui.backends`, a layer below the environments) read them too: the one import of :mod:`vlui.env` below it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Optional

from vlui.device import OBSERVATION_VERSION
from vlui.limits import AT_LEAST_1, NON_NEGATIVE, PORT, POSITIVE, SEED, Range, typed
from vlui.spec import LANDSCAPE, RTL, ObsActionSpec


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
    # environments side by side, the one name in every job: collect.py's worker processes (on the simulated phone at
    # most one a core), the environments evaluate.py, DAgger and PPO step together (one batched forward pass per
    # step); each job's config sets its own default (docs/configuration.md)
    num_envs: int = 1
    # episode-level randomness on the simulated phone, seeded per episode (vlui/sim/perturb.py): the clock, a
    # notification arriving, where a list was left, a slow app start, a permission prompt. Off for the B-MoCA protocol.
    stochastic: bool = False  # episode-level randomness (a notification, the clock, a slow app start): environment.md
    # the simulated phone: MB of frames and observations a process keeps, shared by its phones; null: the simulator's
    # default, 512 (docs/simulator.md, "Speed")
    frame_cache_mb: Optional[int] = None
    # episodes end after at most this many steps, under each task's own limit (null: the task's): demonstrations of
    # a task's first steps only (opening its app) on many phones, or success within N steps
    step_limit: Optional[int] = None

    LIMITS: ClassVar[dict[str, Range]] = {
        "adb_port": PORT, "console_port": Range(1, 65535, optional=True), "command_timeout_s": POSITIVE,
        "connect_timeout_s": POSITIVE, "observation_height": Range(8), "observation_width": Range(8),
        "tap_threshold": NON_NEGATIVE, "y_distance_scale": POSITIVE, "observation_wait_s": Range(0, optional=True),
        "num_envs": AT_LEAST_1, "frame_cache_mb": Range(0, optional=True), "step_limit": Range(1, optional=True)}
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
                **({"step_limit": self.step_limit} if self.step_limit is not None else {}),
                "observation_version": OBSERVATION_VERSION}


def env_settings(value: EnvConfig | Mapping[str, Any]) -> EnvConfig:
    """The ``env`` settings as an :class:`EnvConfig`, checked (:func:`vlui.limits.typed`)."""
    return typed(EnvConfig, value, "env")
