"""Agents that act on a PhoneEnv: ``reset(task, info)`` then ``act(obs, info) -> dual-gesture``."""
