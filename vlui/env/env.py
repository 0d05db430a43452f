"""The gymnasium environment: a task on a device, dual-gesture actions, success from the device log.

The environment talks to a :class:`~vlui.device.Device` and never knows which backend it drives.

- Action: ``Box(-1, 1, (4,), float32)`` = (touch_y, touch_x, lift_y, lift_x); see :mod:`vlui.env.actions`. Agents
  that name their actions may also step with a :class:`~vlui.env.actions.Command` (a long press, text typed, an app
  opened, a scroll, a wait, the keyboard's enter key, or their task declared complete or impossible or answered,
  which ends the episode: ``truncated`` unless the goal holds, and ``info["declared"]`` says which).
- Observation: ``{"screen": (H, W, 3) uint8, "instruction": str}``, plus ``"xml"`` (the uiautomator dump) and
  ``"screen_full"`` (full resolution) when asked for.
- ``terminated`` when the task's goal is reached: its detector fires, or, for a task judged by the device's state, its
  ``state_check`` (``set_volume@media-7``) or its B-MoCA evaluator check (:mod:`vlui.tasks.checks`) holds after the
  step, as B-MoCA asks its evaluator after every step; ``truncated`` at the task's step limit. Reward 1 at the
  goal, 0 where a constrained task's constraint was broken on the way (``info["violations"]``; see
  :mod:`vlui.env.constraints`): the task failed even though its goal was reached.
- ``measure_truth``: the episode is also judged by the task's truth (:mod:`vlui.tasks.truth`, the simulated phone
  only) and runs on until both the detector and the truth have held once, or to the step limit, so that
  ``python -m vlui.study detectors`` sees when each first holds; ``verdicts`` is (detector fired, truth holds) after
  the reset or the step just taken. The reward stays the detector's: 1 on the step it first fires.
- ``reset(seed, options={"snapshot": id, "task": id})`` loads the snapshot, installs B-MoCA release 2.5's
  third-party apps where the environment holds a task of the release (:func:`~vlui.tasks.catalog.installs`), with
  the release's home screen for that snapshot (:func:`~vlui.tasks.catalog.release_home`), goes home, sets the task's starting state (a call in progress, airplane mode already on, ...) and clears the log; without
  options, the task and snapshot are drawn from the configured lists with the environment's seeded generator.
"""

from __future__ import annotations

import copy
import functools
import string
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from vlui.android.i18n import is_rtl
from vlui.backends import make_device, resolve_snapshots
from vlui.env.settings import EnvConfig, env_settings
from vlui.device import Device, observe
from vlui.env.actions import LONG_PRESS_MS, ActionParser, ParsedAction
from vlui.env.constraints import ConstraintWatch
from vlui.env.ui_text import Element, parse_xml
from vlui.errors import VluiError
from vlui.spec import ObsActionSpec, from_view
from vlui.tasks.catalog import Detector, Task, installs, release_home, resolve_tasks
from vlui.tasks.truth import Truth

INSTRUCTION_CHARS = string.ascii_letters + string.digits + " '-:,.?!()&/"
# Every character of the Basic Multilingual Plane but the surrogates: the XML carries translated text.
XML_CHARS = frozenset(chr(c) for c in range(0x20, 0x10000) if not 0xD800 <= c <= 0xDFFF) | {"\n", "\t"}


def text_space(max_length: int, min_length: int, charset: str) -> spaces.Text:
    """A text observation's space. Built once per kind and copied: gymnasium indexes the character set when a
    ``Text`` space is made (14 ms for the UI tree's), which was most of the cost of making an environment (the expert's
    walkthroughs make one per episode)."""
    space = copy.copy(_text_space(max_length, min_length, charset))
    space.seed()  # a generator of its own, not the first copy's
    return space


@functools.cache
def _text_space(max_length: int, min_length: int, charset: str) -> spaces.Text:
    return spaces.Text(max_length=max_length, min_length=min_length, charset=charset)


class PhoneEnv(gym.Env):
    """A B-MoCA task on a phone. ``device`` is any :class:`Device`; ``tasks``/``snapshots`` are what reset samples
    from when not told which."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, device: Device, tasks: Sequence[Task], snapshots: Sequence[str],
                 obs_action: ObsActionSpec = ObsActionSpec(), include_xml: bool = False, include_full_screen: bool = False,
                 clip_actions: bool = False, observation_wait_s: float = 0.0, render_mode: str | None = None,
                 full_screen_size: tuple[int, int] | None = None, backend: str = "sim",
                 stochastic: bool = False, include_screen: bool = True, measure_truth: bool = False,
                 step_limit: int | None = None) -> None:
        if not tasks or not snapshots:
            raise VluiError("an environment needs at least one task and one snapshot")
        self.device = device
        self.backend = backend
        self.stochastic = stochastic
        self.perturbations: dict[str, Any] = {}  # what env.stochastic drew for the current episode
        self.tasks = {t.id: t for t in tasks}
        self.snapshots = list(snapshots)
        self.obs_action = obs_action  # the screens it shows and how it reads actions (gymnasium's `spec` is its id)
        self.include_xml = include_xml
        self.include_screen = include_screen
        self.include_full_screen = include_full_screen
        self.parser = ActionParser.of(obs_action, clip=clip_actions)
        self.observation_wait_s = observation_wait_s
        self.render_mode = render_mode
        self.action_space = spaces.Box(-1.0, 1.0, (4,), np.float32)
        h, w = obs_action.image_size
        obs: dict[str, spaces.Space] = {"instruction": text_space(256, 1, INSTRUCTION_CHARS)}
        if include_screen:
            obs["screen"] = spaces.Box(0, 255, (h, w, 3), np.uint8)
        if include_xml:
            obs["xml"] = text_space(4_000_000, 0, XML_CHARS)
        if include_full_screen:
            if full_screen_size is None:
                raise VluiError("include_full_screen needs one screen size for all snapshots (full_screen_size)")
            fw, fh = full_screen_size
            obs["screen_full"] = spaces.Box(0, 255, (fh, fw, 3), np.uint8)
        self.observation_space = spaces.Dict(obs)
        self.task: Task | None = None
        self.snapshot: str | None = None
        self._detector: Detector | None = None
        self._watch: ConstraintWatch | None = None  # a constrained task's constraints, watched step by step
        self._screen: list[Element] = []  # the UI tree the agent acts on, when constraints are watched
        self._mark = 0
        self._steps = 0
        self._done = True
        self.measure_truth = measure_truth
        self.step_cap = step_limit  # env.step_limit: at most this many steps an episode, under the task's own limit
        self._truth: Truth | None = None
        self.verdicts: tuple[bool, bool | None] = (False, None)  # (detector fired, truth holds) after the last step
        self._fired = self._reached = False  # whether the detector has fired, the truth held, in this episode

    @property
    def step_limit(self) -> int:
        """The steps the current episode may take: its task's limit, or ``env.step_limit`` where that is lower."""
        return self.task.step_limit if self.step_cap is None else min(self.task.step_limit, self.step_cap)

    # ------------------------------------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        task_id = str(options.get("task") or self.np_random.choice(list(self.tasks)))
        if task_id not in self.tasks:  # any catalog task may be asked for; unknown or unsupported ones are refused
            self.tasks[task_id] = resolve_tasks([task_id], backend=self.backend)[0]
        self.snapshot = str(options.get("snapshot") or self.np_random.choice(self.snapshots))
        self.task = self.tasks[task_id]
        self._detector = Detector(self.task)
        self.device.load_snapshot(self.snapshot)
        pinned = installs(self.tasks.values())  # B-MoCA's release phones have its apps; the paper's have none of them
        if pinned:  # and the release's home screens
            self.device.install_apps(pinned, release_home(self.tasks.values(), self.snapshot))
        self.device.key("HOME")
        if self.task.state:
            self.device.set_state(self.task.state)
        if self.stochastic:  # from the episode's seed, so a seeded episode is the same every time
            self.perturbations = self.device.perturb(int(self.np_random.integers(2**31)))
        self.device.clear_log()
        self._mark = self.device.log_mark()
        self._steps = 0
        self._done = False
        self._fired = self._reached = False
        self._truth = Truth.of(self.task) if self.measure_truth else None
        if self._truth is not None:
            self._truth.start(self.device)
        self.verdicts = (False, self._truth.holds(self.device) if self._truth is not None else None)
        self._watch = ConstraintWatch(self.task.constraints) if self.task.constraints else None
        xml = self.device.ui_xml() if self._watch else None
        self._screen = parse_xml(xml) if xml is not None else []
        return self._observation(xml), self._info(None, None)

    def step(self, action):
        if self._done:
            raise VluiError("the episode is over: call reset() before step()")
        parsed = self._on_screen(self.parser.parse(action))  # raises before the device is touched
        if parsed.kind in ("status", "answer"):
            return self._declared(parsed)
        self._apply(parsed)
        if self.observation_wait_s:
            time.sleep(self.observation_wait_s)
        self._steps += 1
        lines = self.device.log_lines(self._mark)
        self._mark = self.device.log_mark()
        matched = self._detector.match(lines)
        # the UI tree after the step, dumped once for the constraints, the goal's check and the observation
        xml = self.device.ui_xml() if self._watch is not None or self._detector.reads_ui else None
        if self._watch is not None:
            after = parse_xml(xml)
            self._watch.step(self._steps, parsed, self.device.size, self._screen, lines, after)
            self._screen = after
        # a task judged by the device's state (a level, an alarm, a UI element) succeeds when the state holds
        fired = matched is not None or self._detector.holds(self.device, lambda: parse_xml(xml))
        terminated = fired
        first = fired and not self._fired
        if self._truth is not None:  # run on until both have held once
            truth = self._truth.holds(self.device)
            self.verdicts = (fired, truth)
            self._fired, self._reached = self._fired or fired, self._reached or truth
            terminated = self._fired and self._reached
        truncated = not terminated and self._steps >= self.step_limit
        self._done = terminated or truncated
        reward = float(first and not (self._watch and self._watch.violations))
        return self._observation(xml), reward, terminated, truncated, self._info(parsed, matched)

    def _declared(self, parsed: ParsedAction) -> tuple:
        """The agent declared its task complete or impossible, or answered it (M3A's ``answer``: no task of the catalog
        is judged on an answer's text, docs/agents.md): the step counts and the episode ends there, a success only if
        the goal holds (a task judged by the device's state is checked once more; a log detector has already read
        every line)."""
        self._steps += 1
        terminated = self._detector.holds(self.device, lambda: parse_xml(self.device.ui_xml()))
        self._done = True
        reward = float(terminated and not (self._watch and self._watch.violations))
        info = self._info(parsed, None)
        info["declared"] = parsed.text if parsed.kind == "status" else "answer"
        return self._observation(), reward, terminated, not terminated, info

    def skip_step(self) -> tuple:
        """Count a step without acting (a malformed text action: the paper penalises it with a step)."""
        if self._done:
            raise VluiError("the episode is over: call reset() before step()")
        self._steps += 1
        truncated = self._steps >= self.step_limit
        self._done = truncated
        info = self._info(None, None)
        info["skipped"] = True
        return self._observation(), 0.0, False, truncated, info

    def render(self):
        return self.device.screenshot() if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        self.device.close()

    # ------------------------------------------------------------------------------------------------ internals
    def _on_screen(self, p: ParsedAction) -> ParsedAction:
        """The parsed action with its points on the screen: an observation of a turned, stacked or mirrored screen (a
        landscape screen under ``landscape: rotated`` or ``stacked``, a right-to-left one under ``rtl: mirrored``)
        is acted on where it shows things. Keys are read on the observation, as B-MoCA's navigation points are."""
        view = self._view()
        if view is None or p.touch is None or p.kind == "key":
            return p
        return replace(p, touch=from_view(p.touch, view), lift=from_view(p.lift, view) if p.lift is not None else None)

    def _view(self) -> str | None:
        """How the phone's screen is observed now (:meth:`ObsActionSpec.view`): by its size and, under
        ``rtl: mirrored``, its locale's direction."""
        rtl = self.obs_action.rtl != "kept" and is_rtl(self.device.locale_id())
        return self.obs_action.view(self.device.size, rtl)

    def _apply(self, p: ParsedAction) -> None:
        w, h = self.device.size
        if p.kind == "key" and p.key == "ENTER":
            self.device.keyboard_enter()
        elif p.kind == "key":
            self.device.key(p.key)
        elif p.kind == "open_app":
            self.device.open_app(p.text)
        elif p.kind == "wait":
            self.device.wait()
        elif p.kind == "type":
            self.device.text(p.text)
        elif p.kind == "long_press":
            x, y = min(p.touch[1] * w, w - 1), min(p.touch[0] * h, h - 1)
            self.device.swipe(x, y, x, y, LONG_PRESS_MS)
        elif p.kind == "tap":
            self.device.tap(min(p.touch[1] * w, w - 1), min(p.touch[0] * h, h - 1))
        else:
            self.device.swipe(min(p.touch[1] * w, w - 1), min(p.touch[0] * h, h - 1),
                              min(p.lift[1] * w, w - 1), min(p.lift[0] * h, h - 1))

    def _observation(self, xml: str | None = None) -> dict[str, Any]:
        h, w = self.obs_action.image_size
        obs: dict[str, Any] = {"instruction": self.task.instruction}
        if self.include_screen:
            view = self._view()
            obs["screen"] = observe(self.device.screenshot(), h, w, view) if view else self.device.observation(h, w)
        if self.include_xml:
            obs["xml"] = xml if xml is not None else self.device.ui_xml()
        if self.include_full_screen:
            obs["screen_full"] = self.device.screenshot()
        return obs

    def _info(self, parsed: ParsedAction | None, matched: str | None) -> dict[str, Any]:
        return {
            "task": self.task.id,
            "snapshot": self.snapshot,
            "step": self._steps,
            "step_limit": self.step_limit,
            "locale": self.device.locale_id(),
            "screen_size": self.device.size,
            # how the screen is observed (None: as it stands): screen-frame agents move their points so (the expert)
            "view": self._view(),
            "parsed_action": parsed.as_dict() if parsed else None,
            "success_line": matched,
            **({"perturbations": self.perturbations} if self.stochastic else {}),
            **({"violations": [v.as_dict() for v in self._watch.violations]} if self._watch is not None else {}),
        }


def env_factory(env: EnvConfig | Mapping[str, Any], tasks: Any, include_xml: bool = False) -> Callable[[], PhoneEnv]:
    """A picklable constructor of environments from the ``env`` settings and a task spec (for gymnasium's vector
    environments and worker processes)."""
    return _Factory(env_settings(env), list(tasks) if not isinstance(tasks, str) else tasks, include_xml)


class _Factory:
    def __init__(self, env: EnvConfig, tasks: Any, include_xml: bool) -> None:
        self.env, self.tasks, self.include_xml = env, tasks, include_xml

    def __call__(self) -> PhoneEnv:
        return make_env(self.env, self.tasks, include_xml=self.include_xml)


def make_env(env: EnvConfig | Mapping[str, Any], tasks: Any, include_xml: bool | None = None,
             include_screen: bool = True) -> PhoneEnv:
    """A :class:`PhoneEnv` for the ``env`` settings (``configs/env/*.yaml``; a mapping is checked against
    :class:`~vlui.env.settings.EnvConfig`) and a task spec. ``include_screen=False`` leaves the screen out of the
    observations, for agents that read only the UI tree (drawing the full screen is most of a step's cost)."""
    env = env_settings(env)
    return open_env(env, resolve_tasks(tasks, backend=env.backend), resolve_snapshots(env), include_xml,
                    include_screen)


def open_env(env: EnvConfig, tasks: list[Task], snapshots: list[str], include_xml: bool | None = None,
             include_screen: bool = True, measure_truth: bool = False) -> PhoneEnv:
    """:func:`make_env` for tasks and snapshots already resolved (:func:`~vlui.tasks.catalog.resolve_tasks`,
    :func:`~vlui.backends.resolve_snapshots`): what a job that opens many environments of one plan calls."""
    if env.stochastic and env.backend != "sim":
        raise VluiError("env.stochastic=true randomises the simulated phone's episodes; a real device brings its own "
                        "randomness: leave it false with env=adb")
    device = make_device(env, snapshots[0])
    wait = device.observation_wait_s if env.observation_wait_s is None else env.observation_wait_s
    return PhoneEnv(device, tasks, snapshots, obs_action=env.spec(), clip_actions=env.clip_actions,
                    include_xml=env.include_xml if include_xml is None else include_xml,
                    observation_wait_s=wait, backend=env.backend, stochastic=env.stochastic,
                    include_screen=include_screen, measure_truth=measure_truth, step_limit=env.step_limit)


def make_vector_env(env: EnvConfig | Mapping[str, Any], tasks: Any, num_envs: int,
                    include_xml: bool = False) -> gym.vector.VectorEnv:
    """``num_envs`` environments in subprocesses (gymnasium's AsyncVectorEnv)."""
    fns = [env_factory(env, tasks, include_xml) for _ in range(num_envs)]
    return gym.vector.AsyncVectorEnv(fns, shared_memory=False, context="spawn")
