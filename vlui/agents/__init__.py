"""Agents that act on a PhoneEnv: ``reset(task, info, seed)`` then ``act(obs, info) -> dual-gesture``."""

from __future__ import annotations

from typing import Any

from vlui.errors import VluiError

AGENTS = ("expert", "random", "policy", "text")


def make_agent(cfg: dict[str, Any], seed: int = 0):
    """An agent from the ``agent`` config group."""
    name = cfg.get("name")
    if name == "expert":
        from vlui.agents.expert import ExpertAgent

        return ExpertAgent(tap_jitter=cfg.get("tap_jitter", 0.0), random_action_prob=cfg.get("random_action_prob", 0.0),
                           wrong_action_prob=cfg.get("wrong_action_prob", 0.0), seed=seed)
    if name == "random":
        from vlui.agents.random_agent import RandomAgent

        return RandomAgent(seed)
    if name == "policy":
        from vlui.agents.policy_agent import PolicyAgent

        return PolicyAgent(cfg.get("checkpoint"), cfg.get("device", "auto"))
    if name == "text":
        from vlui.agents.text_agent import TextAgent

        retries = {k: cfg[k] for k in ("max_retries", "retry_delay_s", "retry_max_delay_s") if k in cfg}
        return TextAgent(cfg.get("url"), cfg.get("model"), cfg.get("api_key_env", "OPENAI_API_KEY"),
                         cfg.get("timeout_s", 60.0), **retries)
    raise VluiError(f"unknown agent {name!r}; choose from: {', '.join(AGENTS)}")


def needs_xml(cfg: dict[str, Any]) -> bool:
    """Whether the agent reads the UI tree (the expert and text agents do)."""
    return cfg.get("name") in ("expert", "text")
