"""What the rollout loop (:mod:`vlui.rollout`) asks of an agent. The agents of :mod:`vlui.agents` are these; any object
with the same methods is one too (``typing.Protocol``: nothing to inherit)."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from vlui.spec import Memory, Past
from vlui.tasks.task import Task

# What parts of an observation an agent may read: the screen and the UI tree (uiautomator XML). Drawing the screen
# is most of a simulated step's cost, so an environment leaves out what its agent never reads.
OBSERVATION_PARTS = ("screen", "xml")


def reads(agent: Any) -> tuple[str, ...]:
    """The parts of the observation ``agent`` (an agent or its class) reads: its ``reads``, or all of them for an
    agent that does not say."""
    return tuple(getattr(agent, "reads", OBSERVATION_PARTS))


@runtime_checkable
class Agent(Protocol):
    """Acts on one environment: told the task at the start of each episode, then asked for each step's action. An
    agent may say which parts of the observation it reads (``reads``, a subset of :data:`OBSERVATION_PARTS`); one that
    does not is given them all. An agent that reaches something outside (a model behind an endpoint) may have a
    ``check()`` that an evaluation calls once before its first episode, to fail in one line rather than per episode.

    Optional too, for agents that reach a model over an endpoint (:mod:`vlui.agents.text_agent`): ``sibling()``, another
    agent for another environment of the same run, sharing what must be shared (the endpoint's budget and cache);
    ``observation_size``, the ``(height, width)`` of the screens it wants (an MLLM's screenshot); ``concurrency``, how
    many of the run's agents the rollout may have wait on their answers at once (in threads); and ``transcript()``
    (:class:`Transcribing`). A trained policy has a ``spec`` (:class:`~vlui.spec.ObsActionSpec`): the screens it was
    trained on and how its actions read, which its evaluation gives it whatever the environment's settings say.
    The agents of :mod:`vlui.agents` have every one of these, from ``vlui.agents.base.AgentBase`` where they have
    nothing particular to say, so the jobs ask them without probing."""

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        """A new episode of ``task`` begins (``info``: the environment's reset info)."""

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray | None:
        """The dual-gesture for observation ``obs`` (:mod:`vlui.env.actions`); None for a malformed text action,
        which costs a step and does nothing."""


@runtime_checkable
class BatchAgent(Agent, Protocol):
    """An agent which acts on many environments at once (one forward pass). What it remembers of an episode (a
    policy with ``model.history``) the rollout keeps for it: an agent with a ``memory()`` method (a fresh
    :class:`~vlui.spec.Memory` of the steps it reads) is handed each episode's :class:`~vlui.spec.Past` as ``past``."""

    def act_batch(self, screens: np.ndarray, instructions: list[str]) -> np.ndarray:
        """``(B, H, W, 3)`` uint8 screens and their instructions (and, for an agent with ``memory()``, ``past``: the
        episodes' :class:`~vlui.spec.Past`) -> ``(B, 4)`` actions."""


def reads_past(agent: Any) -> bool:
    """Whether the rollout hands ``agent``'s ``act_batch`` the episodes' past: it has a ``memory()``."""
    return callable(getattr(agent, "memory", None))


class OneEpisodeAtATime:
    """``reset`` and ``act`` for a :class:`BatchAgent` that reads the past (``memory()``, and ``act_batch`` with a
    ``past``) run on one environment: it keeps the episode's :class:`~vlui.spec.Memory` itself, which the rollout
    keeps otherwise."""

    reads: ClassVar[tuple[str, ...]] = ("screen",)
    _memory: Memory | None = None

    def act_batch(self, screens: np.ndarray, instructions: list[str], past: Past | None = None) -> np.ndarray:
        raise NotImplementedError

    def memory(self) -> Memory:
        raise NotImplementedError

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self._memory = self.memory()

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if self._memory is None:
            self._memory = self.memory()
        screens = obs["screen"][None]
        action = np.asarray(self.act_batch(screens, [obs["instruction"]], Memory.batch([self._memory], screens))[0],
                            dtype=np.float32)
        self._memory.add(obs["screen"], action)
        return action


@runtime_checkable
class Transcribing(Protocol):
    """An agent that keeps a record of how it decided (a model's requests and answers): the rollout stores its
    ``transcript()`` with each finished episode, taken before the next ``reset``."""

    def transcript(self) -> dict[str, Any]:
        """The episode's record: JSON-ready values, and under ``images`` the PNGs it names, by content hash."""
