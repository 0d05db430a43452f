"""An LLM agent over an OpenAI-compatible chat endpoint: it reads the XML-parsed screen (B-MoCA's numbered element
list) and answers with one of the paper's text actions, which are converted to dual-gestures.

A malformed answer is counted as a step and does nothing (the paper's rule); the environment is driven through
:class:`vlui.env.text_env.TextActions` semantics by returning ``None`` for the gesture, which the evaluation runner
turns into a skipped step.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

import numpy as np

from vlui.env.text import ACTION_HELP, describe, parse_text_action, parse_xml
from vlui.errors import VluiError
from vlui.tasks.catalog import Task

SYSTEM = ("You operate an Android phone to complete the user's task. Each turn you see the screen as a numbered list "
          "of UI elements and answer with exactly one action.\n" + ACTION_HELP)


class TextAgent:
    def __init__(self, url: str | None, model: str | None, api_key_env: str = "OPENAI_API_KEY",
                 timeout_s: float = 60.0, with_bounds: bool = True) -> None:
        if not url or not model:
            raise VluiError("agent=text needs agent.url (an OpenAI-compatible endpoint, e.g. "
                            "http://127.0.0.1:8000/v1) and agent.model")
        self.url = url.rstrip("/") + "/chat/completions"
        self.model, self.timeout_s, self.with_bounds = model, timeout_s, with_bounds
        self.api_key = os.environ.get(api_key_env, "")
        self.history: list[str] = []
        self.task: Task | None = None
        self.last_error = ""

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self.task, self.history, self.last_error = task, [], ""

    def _chat(self, prompt: str) -> str:
        body = json.dumps({"model": self.model, "temperature": 0.0,
                           "messages": [{"role": "system", "content": SYSTEM},
                                        {"role": "user", "content": prompt}]}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                reply = json.loads(response.read())
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as err:
            raise ConnectionError(f"the text agent's endpoint {self.url} failed: {err}") from None
        try:
            return reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ConnectionError(f"{self.url} did not answer like an OpenAI chat endpoint") from None

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray | None:
        """A dual-gesture, or None for a malformed answer (the step is counted and skipped)."""
        elements = parse_xml(obs["xml"])
        previous = "\n".join(self.history[-8:]) or "(none)"
        prompt = (f"Task: {obs['instruction']}\nPrevious actions:\n{previous}\nScreen:\n"
                  f"{describe(elements, with_bounds=self.with_bounds)}\nYour action:")
        answer = self._chat(prompt).strip()
        parsed = parse_text_action(answer, elements, info["screen_size"])
        self.history.append(answer if parsed.gesture is not None else f"{answer} (invalid: {parsed.error})")
        self.last_error = parsed.error
        return None if parsed.gesture is None else np.asarray(parsed.gesture, dtype=np.float32)
