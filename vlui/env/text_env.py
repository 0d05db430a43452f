"""Text actions on a PhoneEnv, for LLM agents: observations gain the numbered element list, actions are strings.

A malformed text action is counted as a step and skipped (the device is not touched), as in the B-MoCA paper;
``info["invalid_action"]`` says why. With ``extended``, ``long_press(n)`` and ``type("text")`` are actions too
(:func:`vlui.env.ui_text.parse_text_action`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium import spaces

from vlui.env.env import XML_CHARS, PhoneEnv
from vlui.env.ui_text import describe, parse_text_action, parse_xml


class TextActions(gym.Wrapper):
    def __init__(self, env: PhoneEnv, with_bounds: bool = False, extended: bool = False) -> None:
        if not env.include_xml:
            raise ValueError("TextActions needs an environment created with include_xml=True")
        super().__init__(env)
        self.with_bounds = with_bounds
        self.extended = extended
        self.action_space = spaces.Text(max_length=1024, min_length=0, charset=XML_CHARS)
        self.observation_space = spaces.Dict({**env.observation_space.spaces,
                                              "text": spaces.Text(max_length=4_000_000, min_length=0,
                                                                  charset=XML_CHARS)})
        self._elements = []

    def _augment(self, obs: dict[str, Any]) -> dict[str, Any]:
        self._elements = parse_xml(obs["xml"])
        return {**obs, "text": describe(self._elements, with_bounds=self.with_bounds)}

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._augment(obs), info

    def step(self, action: str):
        parsed = parse_text_action(action, self._elements, self.env.unwrapped.device.size, self.extended)
        if parsed.action is None:
            obs, reward, terminated, truncated, info = self.env.unwrapped.skip_step()
            info["invalid_action"] = parsed.error
        else:
            obs, reward, terminated, truncated, info = self.env.step(parsed.action)
            info["invalid_action"] = None
        info["text_action"] = parsed.kind
        return self._augment(obs), reward, terminated, truncated, info
