"""Agents that act on a PhoneEnv: ``reset(task, info, seed)`` then ``act(obs, info) -> dual-gesture``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlui.agents.expert import ExpertAgent
from vlui.agents.random_agent import RandomAgent
from vlui.agents.settings import AgentConfig, agent_settings
from vlui.errors import VluiError

AGENTS = ("expert", "random", "policy", "text", "mllm")


def agent_class(agent: AgentConfig | Mapping[str, Any]) -> type:
    """The class of the agent the ``agent`` settings name (a mapping is checked against
    :class:`~vlui.agents.settings.AgentConfig`). Each builds itself from the settings (``from_settings``) and says what it
    reads of an observation (``reads``)."""
    name = agent_settings(agent).name
    if name == "policy":  # torch, timm and transformers load only when a policy acts
        from vlui.agents.policy_agent import PolicyAgent

        return PolicyAgent
    if name in ("text", "mllm"):  # the openai client library loads only when a model behind an endpoint acts
        from vlui.agents.text_agent import MLLMAgent, TextAgent

        return MLLMAgent if name == "mllm" else TextAgent
    classes = {"expert": ExpertAgent, "random": RandomAgent}
    if name not in classes:
        raise VluiError(f"unknown agent {name!r}; choose from: {', '.join(AGENTS)}")
    return classes[name]


def make_agent(agent: AgentConfig | Mapping[str, Any], seed: int = 0):
    """An agent from the ``agent`` settings (a mapping is checked against :class:`~vlui.agents.settings.AgentConfig`)."""
    settings = agent_settings(agent)
    return agent_class(settings).from_settings(settings, seed)


def takes_checkpoint(agent: AgentConfig | Mapping[str, Any]) -> bool:
    """Whether the agent is a trained policy, loaded from ``agent.checkpoint`` (or evaluate's ``checkpoint``)."""
    return agent_settings(agent).name == "policy"


def check_early(agent: AgentConfig | Mapping[str, Any]) -> None:
    """What the ``agent`` settings must hold before the work that comes before the agent acts (a study's collecting
    and training), checked without loading a model or a dataset: a model behind an endpoint its URL and its name."""
    settings = agent_settings(agent)
    if settings.name in ("text", "mllm"):
        from vlui.agents.text_agent import TextAgent

        TextAgent.check_settings(settings)
