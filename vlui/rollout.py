"""The one rollout loop: agents acting in environments, episode after episode, recorded as dataclasses.

Collection, evaluation and the expert's reference runs all call :func:`rollout`. It steps several environments side
by side (``slots``), so an agent that acts on a batch (:class:`~vlui.env.agent.BatchAgent`, a policy) makes one
forward pass per step for all of them; other agents act one environment at a time, or, with ``concurrency`` (an
agent that waits on a served model: ``agent.concurrency``), in that many threads at once, each environment waiting on
its own answer. Either way the environments step in their order once every answer of the round is in, so the
episodes, their actions and the order they finish in do not depend on how long each answer took. For a batch agent
that reads the past (a policy with ``model.history``), each environment keeps its episode's :class:`~vlui.spec.Memory`, started
afresh with every episode, and the agent is handed them all as one :class:`~vlui.spec.Past`. Each finished episode becomes an
:class:`EpisodeRecord` handed to ``on_done`` at once, so the caller can save it before anything else can go wrong.

What can go wrong, and what it counts as:

- an action the environment refuses (NaN, out of range: :class:`~vlui.env.actions.ActionError`): the agent's
  failure; the episode ends there (``invalid_action``);
- anything else raised by an environment, or a :class:`ConnectionError` from an agent (an endpoint that went away):
  not the agent's failure; the environment is rebuilt and the episode retried once, then recorded as an
  infrastructure failure (``infra_failure``). An environment that cannot be rebuilt stops the rollout with a
  :class:`~vlui.errors.VluiError` after the episode is recorded.

A ``labeller`` (another agent, e.g. the expert for DAgger-style relabelling) is reset with every episode and asked
for its action on every state the acting agent visits; its answer is kept in :attr:`Step.label` and never acted on.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlui.data.format import encode_png
from vlui.env.actions import ActionError, Command
from vlui.env.agent import Agent, BatchAgent, Transcribing, reads_past
from vlui.env.env import PhoneEnv
from vlui.env.ui_text import Element, parse_xml
from vlui.errors import VluiError
from vlui.spec import Memory

log = logging.getLogger(__name__)
WAIT_REPORT_S = 1.0  # how often ``on_wait`` hears how long the round's answers have been awaited


@dataclass(frozen=True)
class Job:
    """One episode to run: a task on a snapshot from a seed. ``run`` and ``episode`` tell repeats apart (an
    evaluation's runs, several episodes per pair); ``id`` is a collection's episode id; ``policy`` which of several
    policies acts (an evaluation of several checkpoints), None when there is one."""

    task: str
    snapshot: str
    seed: int
    run: int = 0
    episode: int = 0
    id: int = 0
    policy: int | None = None

    @property
    def key(self) -> str:
        head = f"p{self.policy}/" if self.policy is not None else ""
        return f"{head}{self.run}/{self.task}/{self.snapshot}/{self.episode}"


@dataclass
class Step:
    """One step: the observation the agent saw, what it did and what came of it."""

    observation: dict[str, Any] | None  # kept when the rollout keeps observations (collection)
    extra: Any  # what ``observe`` returned for that observation (e.g. a full-resolution screenshot)
    # None: a malformed text action, the step counted and nothing done; a Command: a long press, text typed, an end
    action: np.ndarray | Command | None
    parsed: dict[str, Any] | None  # the environment's reading of the action (tap, swipe, key, ..., and where)
    reward: float
    terminated: bool
    truncated: bool
    token: str | None = None  # a comparable name for the action (see :func:`action_token`), when XML was observed
    label: np.ndarray | None = None  # the labeller's action on the same observation
    acted: np.ndarray | None = None  # the action taken, where ``action`` was replaced by a label (DAgger)
    success_line: str | None = None  # the log line that made the task's detector fire, on the step that succeeded


@dataclass
class EpisodeRecord:
    """A finished episode. ``final_observation`` (and ``final_extra``) is what the last step led to."""

    job: Job
    instruction: str
    steps: list[Step] = field(default_factory=list)
    final_observation: dict[str, Any] | None = None
    final_extra: Any = None
    terminated: bool = False
    truncated: bool = False
    infra_failure: str | None = None
    invalid_action: str | None = None
    frames: list[np.ndarray] | None = None  # the screens, first to last, when frames are recorded
    perturbations: dict[str, Any] | None = None  # what env.stochastic drew for the episode, when it is on
    transcript: dict[str, Any] | None = None  # how the agent decided, when it keeps that (a model's requests, answers)
    # a constrained task's broken constraints (``Violation.as_dict``), [] when none was; None for other tasks
    violations: list[dict[str, Any]] | None = None

    @property
    def declared(self) -> str | None:
        """What the agent declared of its task, ending the episode ("complete", "impossible", or "answer" where it
        answered), or None."""
        last = self.steps[-1].parsed if self.steps else None
        if last and last["kind"] == "answer":
            return "answer"
        return last["text"] if last and last["kind"] == "status" else None

    @property
    def answer(self) -> str | None:
        """The agent's answer to its task (M3A's ``answer``, which ended the episode), or None."""
        last = self.steps[-1].parsed if self.steps else None
        return last["text"] if last and last["kind"] == "answer" else None

    @property
    def success(self) -> bool:
        """The goal was reached (``terminated``) without breaking a constraint."""
        return self.terminated and not self.violations

    @property
    def success_line(self) -> str | None:
        """The log line that decided the episode's success; None when it failed, or when the task is judged by the
        device's state (``state_check``), which no log line says."""
        return next((s.success_line for s in reversed(self.steps) if s.success_line), None)


@dataclass
class _Slot:
    env: PhoneEnv
    agent: Agent
    labeller: Agent | None = None
    job: Job | None = None
    obs: dict | None = None
    info: dict | None = None
    extra: Any = None
    record: EpisodeRecord | None = None
    retried: int = 0
    memory: Memory | None = None  # the episode's past, for a batch agent that reads it


def action_token(parsed: dict[str, Any], elements: list[Element], size: tuple[int, int]) -> str:
    """A comparable name for an action: the UI element tapped (or long-pressed), the swipe's direction, the key
    pressed, the field typed into and the text."""
    if parsed["kind"] == "key":
        return f"key:{parsed['key']}"
    if parsed["kind"] in ("status", "open_app"):
        return f"{parsed['kind']}:{parsed['text']}"
    if parsed["kind"] in ("wait", "answer"):  # an answer's text is kept apart (result_line)
        return parsed["kind"]
    if parsed["kind"] == "type":
        field = next((e for e in elements if e.focused), None)
        return f"type:{field.resource_id if field is not None else 'nothing'}|{parsed['text']}"
    (ty, tx), (ly, lx) = parsed["touch"], parsed["lift"]
    if parsed["kind"] == "swipe":
        dy, dx = ly - ty, lx - tx
        return "swipe:" + (("down" if dy > 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left"))
    x, y = tx * size[0], ty * size[1]
    hits = [e for e in elements if e.clickable and e.bounds[0] <= x < e.bounds[2] and e.bounds[1] <= y < e.bounds[3]]
    verb = "long_press" if parsed["kind"] == "long_press" else "tap"
    if not hits:
        return f"{verb}:nothing"
    e = min(hits, key=lambda e: (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1]))
    return f"{verb}:{e.resource_id}|{e.content_desc or e.text}|{e.cls.rsplit('.', 1)[-1]}"


def rollout(jobs: Sequence[Job], make_env: Callable[[], PhoneEnv], make_agent: Callable[[], Agent], slots: int,
            on_done: Callable[[EpisodeRecord], None], *, keep_observations: bool = False,
            observe: Callable[[PhoneEnv, dict[str, Any]], Any] | None = None, record_frames: bool = False,
            labeller: Callable[[], Agent] | None = None, on_step: Callable[[], None] | None = None,
            close_envs: bool = True, retries: int = 1, concurrency: int | None = None,
            on_wait: Callable[[int, float], None] | None = None) -> None:
    """Run ``jobs`` in up to ``slots`` environments side by side and hand each finished episode to ``on_done``.

    ``keep_observations`` keeps every observation in the record; ``observe(env, obs)`` is called on each one as it
    arrives and its result kept alongside; ``labeller`` makes the agent whose action on every visited state goes in
    :attr:`Step.label`; ``on_step`` is called after each round of steps; ``close_envs`` closes the environments at
    the end (a caller that made them keeps them otherwise); ``retries`` is how many times an episode whose
    environment failed runs again, in a rebuilt one, before it is recorded as an infrastructure failure.
    ``concurrency``: the agents (one per environment, not a batch agent) act in a pool of that many threads (None:
    one after another in this one); ``on_wait(awaited, seconds)`` hears every second how many of the round's answers
    are still awaited and for how long, and ``(0, seconds)`` once they are all in.

    An environment that stands for one elsewhere (a cluster worker's: :class:`vlui.jobs.executor.RemoteEnv`) has a
    ``begin(method, *args)``: every environment's reset or step is sent before any answer is awaited, so they run in
    parallel, and the episodes are the same as with environments here."""
    queue = deque(jobs)
    pool = [_Slot(make_env(), None) for _ in range(min(slots, len(jobs)))]  # type: ignore[arg-type]
    if not pool:
        return
    probe = make_agent()
    batch_agent = probe if isinstance(probe, BatchAgent) else None  # one agent, one forward pass for every env
    hand_past = batch_agent is not None and reads_past(batch_agent)  # the episodes' past steps, for one that reads them
    for slot in pool:
        slot.agent = batch_agent or (probe if slot is pool[0] else make_agent())
        slot.labeller = labeller() if labeller is not None else None
        slot.memory = batch_agent.memory() if hand_past else None

    def observed(slot: _Slot) -> None:
        slot.extra = observe(slot.env, slot.obs) if observe is not None else None
        if record_frames:
            slot.record.frames.append(slot.obs["screen"])

    def start(slot: _Slot, sent: Job | None = None) -> bool:
        """Start ``slot``'s next episode (``sent``: the one whose reset was already sent to its environment)."""
        while sent is not None or queue:
            slot.job, sent = sent or queue.popleft(), None
            try:
                slot.obs, slot.info = slot.env.reset(seed=slot.job.seed, options={"task": slot.job.task,
                                                                                  "snapshot": slot.job.snapshot})
                slot.agent.reset(slot.env.task, slot.info, seed=slot.job.seed)
                if slot.memory is not None:
                    slot.memory.reset()
                if slot.labeller is not None:
                    slot.labeller.reset(slot.env.task, slot.info, seed=slot.job.seed)
                slot.record = EpisodeRecord(slot.job, slot.env.task.instruction, frames=[] if record_frames else None,
                                            perturbations=slot.info.get("perturbations"))
                observed(slot)
            except Exception:  # noqa: BLE001 - the environment broke, not the agent
                recover(slot, traceback.format_exc())
                continue
            return True
        slot.job = None
        return False

    def start_all(slots: list[_Slot]) -> list[_Slot]:
        """Start the next episode in each of ``slots`` (in order), their resets sent first: the slots started."""
        sent = []
        for slot in slots:
            job = queue.popleft() if queue else None
            if job is not None:
                _send(slot.env, "reset", job.seed, {"task": job.task, "snapshot": job.snapshot})
            sent.append(job)
        return [slot for slot, job in zip(slots, sent, strict=True) if job is not None and start(slot, job)]

    def finish(slot: _Slot, **outcome: Any) -> None:
        record = slot.record if slot.record is not None and slot.record.job == slot.job else EpisodeRecord(
            slot.job, slot.env.task.instruction if slot.env.task else "")
        for name, value in outcome.items():
            setattr(record, name, value)
        if outcome.get("infra_failure"):
            record.steps, record.frames = [], [] if record_frames else None
        elif isinstance(slot.agent, Transcribing) and record.job == slot.job:
            record.transcript = slot.agent.transcript()
        slot.record, slot.retried = None, 0
        on_done(record)

    def recover(slot: _Slot, error: str) -> None:
        """Rebuild a broken environment; retry the episode ``retries`` times, then record an infrastructure failure."""
        reason = error.strip().splitlines()[-1]
        try:
            slot.env.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            slot.env = make_env()
        except Exception as err:  # noqa: BLE001 - e.g. a device that is gone for good: save this episode, stop
            finish(slot, infra_failure=reason)
            raise VluiError(f"the environment could not be rebuilt ({str(err).strip().splitlines()[-1]}); the "
                            "finished episodes are saved: fix the device and run the same command to resume") \
                from None
        if slot.retried < retries:
            slot.retried += 1
            log.warning(f"episode {slot.job.key} failed for infrastructure reasons ({reason}); running it again")
            queue.appendleft(slot.job)
        else:
            log.warning(f"episode {slot.job.key} failed for infrastructure reasons ({reason}); recorded as an "
                        "infrastructure failure (run again on resume)")
            finish(slot, infra_failure=reason)

    def act(active: list[_Slot]) -> list[Any]:
        if batch_agent is not None:
            screens, instructions = np.stack([s.obs["screen"] for s in active]), [s.obs["instruction"] for s in active]
            if hand_past:
                return list(batch_agent.act_batch(screens, instructions,
                                                  past=Memory.batch([s.memory for s in active], screens)))
            return list(batch_agent.act_batch(screens, instructions))
        if threads is None:
            return [_act(s) for s in active]
        # each environment waits on its own answer, up to ``concurrency`` of them at once, asked in the environments'
        # order; the round's actions are taken in that order once all are in
        waiting, asked, answers = deque(active), {}, {}
        began = said = time.monotonic()
        heard = False
        while waiting or asked:
            while waiting and len(asked) < concurrency:
                slot = waiting.popleft()
                asked[threads.submit(_act, slot)] = slot
            for f in wait(asked, timeout=WAIT_REPORT_S, return_when=FIRST_COMPLETED)[0]:
                answers[id(asked.pop(f))] = f.result()  # an error (a budget spent) stops the run: no more is asked
            if on_wait is not None and time.monotonic() - said >= WAIT_REPORT_S and (waiting or asked):
                said = time.monotonic()
                on_wait(len(asked) + len(waiting), said - began)
                heard = True
        if heard:
            on_wait(0, time.monotonic() - began)
        return [answers[id(s)] for s in active]

    threads = ThreadPoolExecutor(concurrency, thread_name_prefix="agent") if concurrency is not None else None
    try:
        active = start_all(pool)
        while active:
            going, ended = [], []
            actions = act(active)
            for slot, action in zip(active, actions, strict=True):
                if not isinstance(action, ConnectionError):
                    _send(slot.env, "step", action)
            for slot, action in zip(active, actions, strict=True):
                if isinstance(action, ConnectionError):
                    recover(slot, str(action))
                elif _step(slot, action, keep_observations, observed, finish, recover):
                    going.append(slot)
                    continue
                ended.append(slot)
            kept = {id(s) for s in going} | {id(s) for s in start_all(ended)}
            active = [s for s in pool if id(s) in kept]
            if on_step is not None:
                on_step()
    finally:
        if threads is not None:  # an error or an interrupt: the requests in flight are not waited for
            threads.shutdown(wait=False, cancel_futures=True)
    if close_envs:
        for slot in pool:
            slot.env.close()


def _act(slot: _Slot) -> Any:
    """``slot``'s agent's action, or the :class:`ConnectionError` of an endpoint that went away (not the agent's
    failure)."""
    try:
        return slot.agent.act(slot.obs, slot.info)
    except ConnectionError as err:
        return err


def _send(env: Any, method: str, *args: Any) -> None:
    """Send ``method(*args)`` to an environment that runs elsewhere, without waiting (nothing for one here)."""
    begin = getattr(env, "begin", None)
    if begin is not None:
        begin(method, *args)


def _step(slot: _Slot, action: Any, keep_observations: bool, observed: Callable[[_Slot], None],
          finish: Callable[..., None], recover: Callable[[_Slot, str], None]) -> bool:
    """Apply one action; True while the episode goes on."""
    before, extra = slot.obs, slot.extra
    label = slot.labeller.act(before, slot.info) if slot.labeller is not None else None
    try:
        if action is None:  # a malformed text action: the step counts, nothing happens
            slot.obs, reward, terminated, truncated, slot.info = slot.env.skip_step()
        else:
            slot.obs, reward, terminated, truncated, slot.info = slot.env.step(action)
    except ActionError as err:  # the agent's fault: the episode ends as a failure
        finish(slot, invalid_action=str(err), final_observation=before if keep_observations else None,
               final_extra=extra)
        return False
    except Exception:  # noqa: BLE001
        recover(slot, traceback.format_exc())
        return False
    if slot.memory is not None:
        slot.memory.add(before["screen"], action)
    parsed = slot.info["parsed_action"]
    xml = before.get("xml")
    token = None
    if xml is not None:
        token = "invalid" if parsed is None else action_token(parsed, parse_xml(xml), slot.env.device.size)
    slot.record.steps.append(Step(
        before if keep_observations else None, extra,
        action if action is None or isinstance(action, Command) else np.asarray(action), parsed,
        float(reward), terminated, truncated, token, None if label is None else np.asarray(label),
        success_line=slot.info.get("success_line")))
    observed(slot)
    if terminated or truncated:
        finish(slot, terminated=terminated, truncated=truncated, violations=slot.info.get("violations"),
               final_observation=slot.obs if keep_observations else None, final_extra=slot.extra)
        return False
    return True


# -------------------------------------------------------------------------------------------------------- records
def dataset_rows(record: EpisodeRecord, save_xml: bool = False) -> list[dict[str, Any]]:
    """The rows a collected episode is written as (docs/dataset.md): one per step, then the final observation, with
    the UI tree when ``save_xml``. Needs ``keep_observations``; ``extra`` is the full-resolution screen when
    collection keeps it."""
    job = record.job
    base = {"episode_id": job.id, "task_id": job.task, "snapshot_id": str(job.snapshot), "seed": job.seed,
            "instruction": record.instruction}

    def observation_row(obs: dict[str, Any], extra: Any, step: int) -> dict[str, Any]:
        return {**base, "step": step, "screen": encode_png(obs["screen"]),
                "screen_full": encode_png(extra) if extra is not None else None,
                "xml": obs.get("xml") if save_xml else None}

    command = next((s.action for s in record.steps if isinstance(s.action, Command)), None)
    if command is not None:
        raise VluiError(f"episode {job.id}: a dataset holds dual-gestures, not a {command.kind} (collect with "
                        "agent.actions=bmoca)")
    rows = []
    for i, s in enumerate(record.steps):
        row = observation_row(s.observation, s.extra, i)
        row.update(action=[float(v) for v in s.action], action_kind=s.parsed["kind"], action_key=s.parsed["key"] or None,
                   touch=s.parsed["touch"], lift=s.parsed["lift"], reward=s.reward, done=s.terminated or s.truncated,
                   terminated=s.terminated, truncated=s.truncated, is_last=False,
                   acted=None if s.acted is None else [float(v) for v in s.acted], success_line=s.success_line)
        rows.append(row)
    final = observation_row(record.final_observation, record.final_extra, len(record.steps))
    final.update(action=None, action_kind=None, action_key=None, touch=None, lift=None, reward=0.0, done=True,
                 terminated=record.terminated, truncated=record.truncated, is_last=True, acted=None,
                 success_line=None)
    rows.append(final)
    for r in rows:
        r["success"] = record.success
    return rows


def stored_action(action: np.ndarray | Command | None) -> list[float] | dict | None:
    """An action as ``episodes.jsonl`` keeps it: a dual-gesture's four numbers, a command's record
    (``{"long_press": [y, x]}``, ``{"type": text}``, ``{"status": "complete"}``, ``{"open_app": "settings"}``,
    ``{"scroll": [y1, x1, y2, x2]}``, ``{"wait": true}``, ``{"keyboard_enter": true}``, ``{"answer": text}``), or None for a step with no valid
    action."""
    if action is None:
        return None
    if isinstance(action, Command):
        return action.record()
    return [round(float(v), 4) for v in action]


def result_line(record: EpisodeRecord) -> dict[str, Any]:
    """An evaluated episode as a line of ``episodes.jsonl``."""
    job = record.job
    return {"key": job.key, "run": job.run, "task": job.task, "snapshot": job.snapshot, "episode": job.episode,
            "seed": job.seed, "success": record.success, "steps": len(record.steps),
            "actions": [stored_action(s.action) for s in record.steps],
            "tokens": [s.token for s in record.steps if s.token is not None],
            "infra_failure": record.infra_failure, "invalid_action": record.invalid_action,
            **({"success_line": record.success_line} if record.success_line else {}),
            **({"goal_reached": record.terminated, "violations": record.violations}
               if record.violations is not None else {}),
            **({"declared": record.declared} if record.declared else {}),
            **({"answer": record.answer} if record.answer is not None else {}),
            **({"perturbations": record.perturbations} if record.perturbations is not None else {}),
            **({"transcript": {k: v for k, v in record.transcript.items() if k != "images"}}
               if record.transcript is not None else {})}
