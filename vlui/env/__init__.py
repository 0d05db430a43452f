"""Environments for agents: how observations reach an agent and its actions reach the device."""
