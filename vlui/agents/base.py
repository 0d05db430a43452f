"""What the jobs may ask of any agent, beyond acting (:class:`AgentBase`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from vlui.agents.settings import AgentConfig
from vlui.env.agent import OBSERVATION_PARTS
from vlui.spec import ObsActionSpec


class AgentBase:
    """The answers of an agent that has nothing particular to say: an agent type overrides those that apply to it
    (a policy's ``spec``, an MLLM's ``observation_size``, an endpoint's ``check`` and ``sibling``, ...), and the jobs
    ask every agent the same questions."""

    # the parts of an observation it reads (vlui.env.agent.OBSERVATION_PARTS): the environment leaves the rest out
    reads: ClassVar[tuple[str, ...]] = OBSERVATION_PARTS
    # a trained policy's screens and reading of actions, which its evaluation gives it whatever env's settings say
    spec: ObsActionSpec | None = None
    observation_size: tuple[int, int] | None = None  # (height, width) of the screens it wants; None: env's
    concurrency: int | None = None  # how many of a run's agents may wait on their answers at once (in threads)

    @classmethod
    def from_settings(cls, agent: AgentConfig, seed: int = 0) -> Any:
        """The agent its type's settings (:mod:`vlui.agents.settings`) describe, acting from ``seed``."""
        raise NotImplementedError

    @classmethod
    def check_settings(cls, agent: AgentConfig) -> None:
        """One line when the settings cannot work, before the work that comes before the agent acts (a study's
        collecting and training), without loading a model or reaching anything."""

    @classmethod
    def prices(cls, agent: AgentConfig) -> tuple[float, float]:
        """What its model costs per million input and output tokens, for an evaluation's cost estimate (0: unknown,
        or nothing to pay)."""
        return 0.0, 0.0

    @classmethod
    def refuse_collecting(cls, agent: AgentConfig) -> None:
        """One line when what the agent does under these settings cannot be kept in a dataset (which holds
        dual-gestures)."""

    def check(self) -> None:
        """One line when what the agent reaches (a model's endpoint) does not answer, before the first episode."""

    def sibling(self) -> Any | None:
        """Another agent for another environment of the same run, sharing what a run shares (an endpoint's budget and
        cache); None: one made from the settings, as this one was."""
        return None

    def refuse_overlap(self, snapshots: Sequence[str]) -> None:
        """One line when what the agent learns from (few-shot examples) comes from the phones it is evaluated on."""
