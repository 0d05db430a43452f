"""Agents that act on a PhoneEnv: ``reset(task, info, seed)`` then ``act(obs, info) -> dual-gesture``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlui.agents.expert import ExpertAgent
from vlui.agents.random_agent import RandomAgent
from vlui.agents.text_agent import TextAgent
from vlui.config import AgentConfig, agent_settings
from vlui.errors import VluiError

AGENTS = ("expert", "random", "policy", "text")


def make_agent(agent: AgentConfig | Mapping[str, Any], seed: int = 0):
    """An agent from the ``agent`` settings (a mapping is checked against :class:`~vlui.config.AgentConfig`)."""
    agent = agent_settings(agent)
    if agent.name == "expert":
        return ExpertAgent(tap_jitter=agent.tap_jitter, random_action_prob=agent.random_action_prob,
                           wrong_action_prob=agent.wrong_action_prob, seed=seed)
    if agent.name == "random":
        return RandomAgent(seed)
    if agent.name == "policy":  # torch, timm and transformers load only when a policy acts
        from vlui.agents.policy_agent import PolicyAgent

        return PolicyAgent(agent.checkpoint, agent.device)
    if agent.name == "text":
        return TextAgent(agent.url, agent.model, agent.api_key_env, agent.timeout_s, max_retries=agent.max_retries,
                         retry_delay_s=agent.retry_delay_s, retry_max_delay_s=agent.retry_max_delay_s)
    raise VluiError(f"unknown agent {agent.name!r}; choose from: {', '.join(AGENTS)}")


def takes_checkpoint(agent: AgentConfig | Mapping[str, Any]) -> bool:
    """Whether the agent is a trained policy, loaded from ``agent.checkpoint`` (or evaluate's ``checkpoint``)."""
    return agent_settings(agent).name == "policy"


def needs_screen(agent: AgentConfig | Mapping[str, Any]) -> bool:
    """Whether the agent looks at the screen (a policy does; the expert and text agents read the UI tree, the random
    agent reads nothing)."""
    return agent_settings(agent).name == "policy"


def needs_xml(agent: AgentConfig | Mapping[str, Any]) -> bool:
    """Whether the agent reads the UI tree (the expert and text agents do)."""
    return agent_settings(agent).name in ("expert", "text")
