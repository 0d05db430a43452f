"""Running evaluation episodes: many environments side by side, one batched policy forward per step.

Each finished episode becomes a record (task, snapshot, run, seed, success, steps, actions, action tokens) handed to
``on_done`` at once, so the caller can save it before anything else can go wrong. An environment that raises
something other than a bad action is rebuilt and its episode retried once, then recorded as an infrastructure
failure (``infra_failure``), never as the agent's failure.
"""

from __future__ import annotations

import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlui.env.actions import ActionError
from vlui.env.env import PhoneEnv
from vlui.env.text import Element, parse_xml
from vlui.errors import VluiError


@dataclass
class Job:
    run: int
    task: str
    snapshot: str
    episode: int
    seed: int

    @property
    def key(self) -> str:
        return f"{self.run}/{self.task}/{self.snapshot}/{self.episode}"


@dataclass
class _Slot:
    env: PhoneEnv
    agent: Any
    job: Job | None = None
    obs: dict | None = None
    info: dict | None = None
    actions: list = field(default_factory=list)
    tokens: list = field(default_factory=list)
    frames: list = field(default_factory=list)
    retried: bool = False


def action_token(parsed: dict[str, Any], elements: list[Element], size: tuple[int, int]) -> str:
    """A comparable name for an action: the UI element tapped, the swipe's direction, the key pressed."""
    if parsed["kind"] == "key":
        return f"key:{parsed['key']}"
    (ty, tx), (ly, lx) = parsed["touch"], parsed["lift"]
    if parsed["kind"] == "swipe":
        dy, dx = ly - ty, lx - tx
        return "swipe:" + (("down" if dy > 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left"))
    x, y = tx * size[0], ty * size[1]
    hits = [e for e in elements if e.clickable and e.bounds[0] <= x < e.bounds[2] and e.bounds[1] <= y < e.bounds[3]]
    if not hits:
        return "tap:nothing"
    e = min(hits, key=lambda e: (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1]))
    return f"tap:{e.resource_id}|{e.content_desc or e.text}|{e.cls.rsplit('.', 1)[-1]}"


def run_jobs(jobs: list[Job], make_env: Callable[[], PhoneEnv], make_agent: Callable[[], Any], slots: int,
             on_done: Callable[[dict[str, Any]], None], record_frames: bool = False,
             on_step: Callable[[], None] | None = None) -> None:
    queue = deque(jobs)
    batch_agent = None
    pool = [_Slot(make_env(), None) for _ in range(min(slots, len(jobs)))]
    probe = make_agent()
    if hasattr(probe, "act_batch"):  # a memoryless policy: one agent, one forward pass for every environment
        batch_agent = probe
    for slot in pool:
        slot.agent = batch_agent or (probe if slot is pool[0] else make_agent())

    def start(slot: _Slot) -> bool:
        while queue:
            slot.job = queue.popleft()
            try:
                slot.obs, slot.info = slot.env.reset(seed=slot.job.seed, options={"task": slot.job.task,
                                                                                  "snapshot": slot.job.snapshot})
                slot.agent.reset(slot.env.task, slot.info, seed=slot.job.seed)
            except Exception:  # noqa: BLE001 - the environment broke, not the agent
                if not _recover(slot, traceback.format_exc()):
                    continue
            slot.actions, slot.tokens, slot.frames = [], [], [slot.obs["screen"]] if record_frames else []
            return True
        slot.job = None
        return False

    def finish(slot: _Slot, success: bool, infra: str | None = None, invalid: str | None = None) -> None:
        job = slot.job
        on_done({"key": job.key, "run": job.run, "task": job.task, "snapshot": job.snapshot, "episode": job.episode,
                 "seed": job.seed, "success": bool(success), "steps": len(slot.actions), "actions": slot.actions,
                 "tokens": slot.tokens, "infra_failure": infra, "invalid_action": invalid,
                 "frames": slot.frames if record_frames else None})
        slot.retried = False

    def _recover(slot: _Slot, error: str) -> bool:
        """Rebuild a broken environment; retry the episode once, then record an infrastructure failure."""
        try:
            slot.env.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            slot.env = make_env()
        except Exception as err:  # noqa: BLE001 - e.g. a device that is gone for good: save this episode, stop
            slot.actions, slot.tokens = [], []
            finish(slot, False, infra=error.strip().splitlines()[-1])
            raise VluiError(f"the environment could not be rebuilt ({str(err).strip().splitlines()[-1]}); the "
                            "finished episodes are saved: fix the device and run the same command to resume") \
                from None
        if not slot.retried:
            slot.retried = True
            queue.appendleft(slot.job)
        else:
            slot.actions, slot.tokens = [], []
            finish(slot, False, infra=error.strip().splitlines()[-1])
        return False

    active = [s for s in pool if start(s)]
    while active:
        if batch_agent is not None:
            actions = list(batch_agent.act_batch(np.stack([s.obs["screen"] for s in active]),
                                                 [s.obs["instruction"] for s in active]))
        else:
            actions = []
            for s in active:
                try:
                    actions.append(s.agent.act(s.obs, s.info))
                except ConnectionError as err:  # e.g. an LLM endpoint that went away: not the agent's failure
                    actions.append(err)
        still = []
        for slot, action in zip(active, actions):
            xml = slot.obs.get("xml")
            if isinstance(action, ConnectionError):
                _recover(slot, str(action))
                if start(slot):
                    still.append(slot)
                continue
            try:
                if action is None:  # a malformed text action: the step counts, nothing happens
                    slot.obs, reward, terminated, truncated, slot.info = slot.env.skip_step()
                else:
                    slot.obs, reward, terminated, truncated, slot.info = slot.env.step(action)
            except ActionError as err:  # the agent's fault: the episode ends as a failure
                finish(slot, False, invalid=str(err))
                if start(slot):
                    still.append(slot)
                continue
            except Exception:  # noqa: BLE001
                _recover(slot, traceback.format_exc())
                if start(slot):
                    still.append(slot)
                continue
            parsed = slot.info["parsed_action"]
            slot.actions.append(None if action is None else [round(float(v), 4) for v in action])
            if xml is not None:
                slot.tokens.append("invalid" if parsed is None else action_token(parsed, parse_xml(xml),
                                                                                  slot.env.device.size))
            if record_frames:
                slot.frames.append(slot.obs["screen"])
            if terminated or truncated:
                finish(slot, terminated)
                if start(slot):
                    still.append(slot)
            else:
                still.append(slot)
        active = still
        if on_step is not None:
            on_step()
    for slot in pool:
        slot.env.close()
