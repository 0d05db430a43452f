"""Agents that act on a PhoneEnv: ``reset(task, info, seed)`` then ``act(obs, info) -> dual-gesture``.

Each agent type is one module: a class (over :class:`vlui.agents.base.AgentBase`) that builds itself from its
settings (``from_settings``), says what it reads of an observation (``reads``) and answers the jobs' questions
(``check``, ``sibling``, ``spec``, ...) where its answer differs from the base's; its settings' dataclass and its entry
of :data:`~vlui.agents.settings.AGENT_TYPES` are in :mod:`vlui.agents.settings`. The jobs call no other name of an
agent's module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlui.agents.settings import AGENT_TYPES, AgentConfig, AgentType, agent_settings, agent_type

__all__ = ["AGENT_TYPES", "AgentType", "agent_class", "check_early", "make_agent", "takes_checkpoint"]


def agent_class(agent: AgentConfig | Mapping[str, Any]) -> type:
    """The class of the agent the ``agent`` settings name. Each builds itself from the settings (``from_settings``)
    and says what it reads of an observation (``reads``)."""
    return agent_type(agent_settings(agent).name).load()


def make_agent(agent: AgentConfig | Mapping[str, Any], seed: int = 0):
    """An agent from the ``agent`` settings (read into its type's dataclass: :func:`~vlui.agents.settings.agent_settings`)."""
    settings = agent_settings(agent)
    return agent_class(settings).from_settings(settings, seed)


def takes_checkpoint(agent: AgentConfig | Mapping[str, Any]) -> bool:
    """Whether the agent is a trained policy, loaded from ``agent.checkpoint`` (or evaluate's ``checkpoint``)."""
    return agent_type(agent_settings(agent).name).checkpoint


def check_early(agent: AgentConfig | Mapping[str, Any]) -> None:
    """What the ``agent`` settings must hold before the work that comes before the agent acts (a study's collecting
    and training), checked without loading a model or a dataset (``check_settings``: a model behind an endpoint its
    URL and its name). A trained policy's checkpoint is read when it acts: its module (torch) is not loaded here."""
    settings = agent_settings(agent)
    kind = agent_type(settings.name)
    if not kind.checkpoint:
        kind.load().check_settings(settings)
