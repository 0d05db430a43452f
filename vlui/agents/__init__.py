"""Agents that act on a PhoneEnv: ``reset(task, info, seed)`` then ``act(obs, info) -> dual-gesture``.

Each agent type is one module: a class (over :class:`vlui.agents.base.AgentBase`) that builds itself from the
``agent`` settings (``from_settings``), says what it reads of an observation (``reads``) and answers the jobs'
questions (``check``, ``sibling``, ``spec``, ...) where its answer differs from the base's; and one entry of
:data:`AGENT_TYPES`. The jobs call no other name of an agent's module.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vlui.agents.settings import AgentConfig, agent_settings
from vlui.errors import VluiError


@dataclass(frozen=True)
class AgentType:
    """An entry of :data:`AGENT_TYPES`: where the agent's class is, and whether it is a trained policy."""

    cls: str  # "package.module:Class", imported when the agent acts
    # a trained policy, loaded from agent.checkpoint (or evaluate's checkpoint=): known before its module loads
    checkpoint: bool = False

    def load(self) -> type:
        module, _, name = self.cls.partition(":")
        return getattr(importlib.import_module(module), name)


# The one explicit map from agent names to agent types (STYLE.md: no registries filled by import side effects). A
# module loads when its agent acts: a policy's torch, timm and transformers (10 s cold) and an LLM agent's openai
# client (0.9 s) only for those agents.
AGENT_TYPES: dict[str, AgentType] = {
    "expert": AgentType("vlui.agents.expert:ExpertAgent"),
    "random": AgentType("vlui.agents.random_agent:RandomAgent"),
    "policy": AgentType("vlui.agents.policy_agent:PolicyAgent", checkpoint=True),
    "text": AgentType("vlui.agents.text_agent:TextAgent"),
    "mllm": AgentType("vlui.agents.text_agent:MLLMAgent"),
}


def agent_type(agent: AgentConfig | Mapping[str, Any]) -> AgentType:
    """The type of the agent the ``agent`` settings name (a mapping is checked against
    :class:`~vlui.agents.settings.AgentConfig`)."""
    name = agent_settings(agent).name
    if name not in AGENT_TYPES:
        raise VluiError(f"unknown agent {name!r}; choose from: {', '.join(AGENT_TYPES)}")
    return AGENT_TYPES[name]


def agent_class(agent: AgentConfig | Mapping[str, Any]) -> type:
    """The class of the agent the ``agent`` settings name. Each builds itself from the settings (``from_settings``)
    and says what it reads of an observation (``reads``)."""
    return agent_type(agent).load()


def make_agent(agent: AgentConfig | Mapping[str, Any], seed: int = 0):
    """An agent from the ``agent`` settings (a mapping is checked against :class:`~vlui.agents.settings.AgentConfig`)."""
    settings = agent_settings(agent)
    return agent_class(settings).from_settings(settings, seed)


def takes_checkpoint(agent: AgentConfig | Mapping[str, Any]) -> bool:
    """Whether the agent is a trained policy, loaded from ``agent.checkpoint`` (or evaluate's ``checkpoint``)."""
    return agent_type(agent).checkpoint


def check_early(agent: AgentConfig | Mapping[str, Any]) -> None:
    """What the ``agent`` settings must hold before the work that comes before the agent acts (a study's collecting
    and training), checked without loading a model or a dataset (``check_settings``: a model behind an endpoint its
    URL and its name). A trained policy's checkpoint is read when it acts: its module (torch) is not loaded here."""
    kind = agent_type(agent)
    if not kind.checkpoint:
        kind.load().check_settings(agent_settings(agent))
