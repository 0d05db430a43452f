"""Agents over an OpenAI-compatible chat endpoint, as B-MoCA's LLM and MLLM agents (Sec. 3.1, App. C): the text
agent (``agent=text``) reads the XML-parsed screen, B-MoCA's numbered element list; the MLLM agent (``agent=mllm``)
reads the screenshot too, optionally with the elements' numbers drawn on it (set-of-mark). Both answer with the
paper's text action options, which are converted to dual-gestures, and share everything but the image: the prompt
(:mod:`vlui.agents.prompts`), few-shot examples from a dataset (:mod:`vlui.agents.fewshot`), the endpoint with its
retries, cache and budget (:mod:`vlui.agents.chat`), and what they keep of an episode.

An answer from which no valid action can be read is counted as a step and does nothing (the paper's rule): ``act``
returns None, which the rollout turns into a skipped step, and the episode's transcript counts it as an invalid
action (AndroidArena's invalid-action rate) with the raw answer kept.

What an agent keeps of an episode (:meth:`TextAgent.transcript`, stored with the episode by the evaluation): every
request as sent, its images named by content hash (their PNGs alongside, written once by the evaluation), every raw
answer, whether it came from the cache, the tokens the endpoint counted, the action read and why an answer was
invalid.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from vlui.agents.base import AgentBase
from vlui.agents.chat import (STOP_AFTER_FAILED_REQUESTS, Answer, Endpoint, EndpointError, check_address,
                             retry_after_seconds)
from vlui.agents.fewshot import Demonstrations, Transition, device_size, text_action
from vlui.agents.marks import screenshot_png
from vlui.agents.prompts import Example, Screen, Style, read_answer, reflection_messages, step_messages
from vlui.agents.settings import MLLMAgentConfig, TextAgentConfig
from vlui.data.format import decode_png
from vlui.data.images import image_hash
from vlui.device import observe
from vlui.env.actions import Command
from vlui.env.ui_text import Element, app_names, describe, parse_text_action, parse_xml
from vlui.errors import VluiError
from vlui.tasks.catalog import Task

log = logging.getLogger(__name__)

__all__ = ["STOP_AFTER_FAILED_REQUESTS", "EndpointError", "MLLMAgent", "TextAgent", "retry_after_seconds"]


class TextAgent(AgentBase):
    """An LLM agent: the numbered element list in, a text action out. ``settings`` holds the prompt's settings (the
    endpoint's come as arguments, as before there were others); ``endpoint`` and ``demonstrations``, when given,
    are shared with the agent this one is a sibling of (:meth:`sibling`)."""

    reads: ClassVar[tuple[str, ...]] = ("xml",)  # the UI tree, described to the model as text
    name: ClassVar[str] = "text"
    image: ClassVar[bool] = False
    Settings: ClassVar[type[TextAgentConfig]] = TextAgentConfig  # its settings when none are given

    def __init__(self, url: str | None, model: str | None, api_key_env: str = "OPENAI_API_KEY",
                 timeout_s: float = 60.0, with_bounds: bool = True, max_retries: int = 5, retry_delay_s: float = 1.0,
                 retry_max_delay_s: float = 60.0, sleep: Callable[[float], None] = time.sleep, *,
                 settings: TextAgentConfig | None = None, url_setting: str = "agent.url",
                 endpoint: Endpoint | None = None, demonstrations: Demonstrations | None = None) -> None:
        self.settings = settings if settings is not None else self.Settings()
        s = self.settings
        self.endpoint = endpoint or Endpoint(
            url, model, who=self.name, url_setting=url_setting, api_key_env=api_key_env, timeout_s=timeout_s,
            max_retries=max_retries, retry_delay_s=retry_delay_s, retry_max_delay_s=retry_max_delay_s, sleep=sleep,
            cache_dir=s.cache_dir, budget_requests=s.budget_requests, budget_tokens=s.budget_tokens,
            stop_after_invalid=s.stop_after_invalid, request_deadline_s=s.request_deadline_s)
        self.with_bounds = with_bounds
        self.style = Style(s.answer, self.image, self.image and s.set_of_marks, s.actions)
        if demonstrations is None and s.few_shot:
            if not s.few_shot_data:
                raise VluiError(f"agent.few_shot={s.few_shot} needs agent.few_shot_data: the dataset the examples "
                                "are drawn from (a folder, e.g. data/bmoca_representative)")
            demonstrations = Demonstrations(s.few_shot_data, need_xml=not self.image)
            if self.image and not demonstrations.full_screens:
                height, width = decode_png(demonstrations.transitions[0].screen).shape[:2]
                log.warning(f"the few-shot dataset {demonstrations.root} holds its screens at {height}x{width} only, "
                            "not at full resolution: the examples' screenshots are stretched to "
                            f"{s.screenshot_height}x{s.screenshot_width}, much less legible than the current screen; collect "
                            "the examples with save_full_screen=true")
        self.demonstrations = demonstrations
        self.task: Task | None = None
        self.seed: int | None = None
        self.history: list[str] = []
        self.examples: list[Example] = []
        self.steps: list[dict[str, Any]] = []
        self.images: dict[str, bytes] = {}
        self.previous: tuple[Screen, str, str] | None = None  # the last step's screen, action and reasoning
        self.last_error = ""

    @staticmethod
    def address(agent: TextAgentConfig) -> tuple[str | None, str]:
        """The endpoint's URL and the setting that gave it: ``agent.base_url``, or ``agent.url``, its former name."""
        if agent.base_url and agent.url and agent.base_url != agent.url:
            raise VluiError("agent.url is the former name of agent.base_url and says another URL: set only "
                            "agent.base_url")
        return (agent.base_url, "agent.base_url") if agent.base_url or not agent.url else (agent.url, "agent.url")

    @classmethod
    def check_settings(cls, agent: TextAgentConfig) -> None:
        """One line unless the settings name an endpoint's URL and a model: checked before the work that comes before
        the agent's first request (a study's collecting and training), without sending one."""
        url, setting = cls.address(agent)
        check_address(url, agent.model, agent.name, setting)

    @classmethod
    def prices(cls, agent: TextAgentConfig) -> tuple[float, float]:
        return agent.price_input_per_1m, agent.price_output_per_1m

    @classmethod
    def refuse_collecting(cls, agent: TextAgentConfig) -> None:
        """A dataset holds dual-gestures: ``agent.actions=extended``'s other actions have none."""
        if agent.actions == "extended":
            raise VluiError("agent.actions=extended cannot collect a dataset: datasets hold dual-gestures, and a long "
                            "press, typed text, open_app, scroll, wait, keyboard_enter or answer is none; collect with "
                            "agent.actions=bmoca (evaluate.py takes either)")

    @classmethod
    def from_settings(cls, agent: TextAgentConfig, seed: int = 0) -> TextAgent:
        url, setting = cls.address(agent)
        return cls(url, agent.model, agent.api_key_env, agent.timeout_s, agent.with_bounds, agent.max_retries,
                   agent.retry_delay_s, agent.retry_max_delay_s, settings=agent, url_setting=setting)

    def sibling(self) -> TextAgent:
        """Another agent of the same settings for another environment of the run, sharing the endpoint (its cache,
        its budget, its count of failures) and the demonstrations."""
        return type(self)(None, None, with_bounds=self.with_bounds, settings=self.settings, endpoint=self.endpoint,
                          demonstrations=self.demonstrations)

    @property
    def concurrency(self) -> int:
        """How many of the run's agents may wait on an answer at once (``agent.concurrency``): the rollout asks
        them in that many threads, sharing :attr:`endpoint`."""
        return self.settings.concurrency

    @property
    def api_key(self) -> str:
        return self.endpoint.api_key

    def check(self) -> None:
        """Before a run: the endpoint works, takes the key and serves the model (one line otherwise). With a response
        cache the check waits for the first request the cache cannot answer: a run the cache answers whole needs no
        endpoint at all."""
        self.endpoint.check_when_asking()

    def refuse_overlap(self, snapshots: list[str]) -> None:
        """One line when the few-shot examples would come from the phones the agent is evaluated on."""
        if self.demonstrations is not None:
            self.demonstrations.refuse_overlap(snapshots)

    def reset(self, task: Task | None, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self.task, self.seed, self.history, self.last_error = task, seed, [], ""
        self.steps, self.images, self.previous = [], {}, None
        self.examples = []
        if self.demonstrations is not None:
            snapshot = (info or {}).get("snapshot")
            if snapshot is not None:
                self.demonstrations.refuse_overlap([snapshot], f"the phone of this episode ({snapshot})")
            drawn = self.demonstrations.sample(self.settings.few_shot, self.settings.few_shot_seed,
                                               task.id if task is not None else None)
            self.examples = [self._example(t) for t in drawn]

    # ------------------------------------------------------------------------------------------------ screens
    def screen(self, obs: dict[str, Any], elements: list[Element], size: tuple[int, int]) -> Screen:
        """The current screen as the prompt shows it (the MLLM agent adds the screenshot)."""
        return Screen(describe(elements, with_bounds=self.with_bounds))

    def _picture(self, screen: np.ndarray, elements: list[Element] | None, size: tuple[int, int]) -> str:
        """The screenshot's content hash, its PNG kept for the transcript (marks drawn under set-of-mark)."""
        marks = elements if self.style.marks else None
        png = screenshot_png(screen, (self.settings.screenshot_height, self.settings.screenshot_width), marks, size)
        digest = image_hash(png)
        self.images[digest] = png
        return digest

    def _example(self, t: Transition) -> Example:
        before = parse_xml(t.xml) if t.xml else None
        after = parse_xml(t.next_xml) if t.next_xml else None

        def shown(elements: list[Element] | None, png: bytes, full: bytes | None) -> Screen:
            text = describe(elements, with_bounds=self.with_bounds) if elements is not None else "(see the screenshot)"
            if not self.image:
                return Screen(text)
            # as the current screen: the full-resolution one observed at the screenshot's size, where the dataset has it
            screen = (observe(decode_png(full), self.settings.screenshot_height, self.settings.screenshot_width)
                      if full is not None else decode_png(png))
            return Screen(text, self._picture(screen, elements, device_size(elements or [])))

        return Example(t.instruction, shown(before, t.screen, t.screen_full), text_action(t, before),
                       shown(after, t.next_screen, t.next_screen_full), t.reward)

    # ------------------------------------------------------------------------------------------------ acting
    def _ask(self, messages: list[dict[str, Any]]) -> Answer:
        """The endpoint's answer; after :data:`STOP_AFTER_FAILED_REQUESTS` requests in a row that failed after all
        their retries, the endpoint is down and the run stops in one line."""
        s = self.settings
        try:
            answer = self.endpoint.complete(messages, self.images, temperature=s.temperature, top_p=s.top_p,
                                            max_tokens=s.max_answer_tokens,
                                            seed=self.seed if s.seed_requests else None)
        except EndpointError as err:
            failed = self.endpoint.failed(err.down)
            if failed >= STOP_AFTER_FAILED_REQUESTS:
                raise VluiError(f"the {self.name} agent's endpoint failed {failed} requests in a row "
                                f"({err}): the finished episodes are saved; run the same command again when it works "
                                "(episodes that failed for infrastructure reasons run again)") from None
            raise
        self.endpoint.failed(False)
        return answer

    @staticmethod
    def _exchange(answer: Answer) -> dict[str, Any]:
        return {"request": answer.request, "answer": answer.text, "cached": answer.cached,
                "input_tokens": answer.input_tokens, "output_tokens": answer.output_tokens,
                "attempts": answer.attempts}

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray | Command | None:
        """A dual-gesture (or with ``agent.actions=extended`` a long press, text typed or the task declared ended: a
        :class:`~vlui.env.actions.Command`), or None for an answer with no valid action (the step is counted and
        skipped). Raises
        :class:`EndpointError` when the endpoint fails (an infrastructure failure)."""
        elements = parse_xml(obs["xml"])
        size = info["screen_size"]
        screen = self.screen(obs, elements, size)
        goal = obs["instruction"]
        step: dict[str, Any] = {}
        if self.settings.reflect and self.previous is not None:
            # M3A's reflection on the previous step, once its outcome (this screen) shows: recorded on that step
            before, action, reasoning = self.previous
            summary = self._ask(reflection_messages(self.style, goal, before, action, reasoning, screen))
            self.steps[-1]["reflection"] = self._exchange(summary)
            self.history[-1] = f"{action}: {' '.join(summary.text.split())}"
        shown = self.history[-self.settings.history:] if self.settings.history else []
        answer = self._ask(step_messages(self.style, goal, screen, self.examples, shown))
        reading = read_answer(answer.text, self.settings.answer)
        parsed = (parse_text_action(reading.action, elements, size, self.style.extended,
                                    app_names(info["locale"]) if self.style.extended else None)
                  if reading.action is not None else None)
        error = reading.error or (parsed.error if parsed is not None else "")
        valid = parsed is not None and parsed.valid
        step.update(self._exchange(answer), action=reading.action, valid=valid, error=error)
        self.steps.append(step)
        self.endpoint.judged(valid, answer.text, error)
        said = reading.action if reading.action is not None else " ".join(answer.text.split())[:200]
        self.history.append(said if valid else f"{said} (invalid: {error})")
        self.previous = (screen, said, reading.reasoning)
        self.last_error = error
        return parsed.action if valid else None

    def transcript(self) -> dict[str, Any]:
        """What the episode asked and was answered (module docstring), with its counts; ``images`` holds the PNGs
        the requests name, by hash."""
        exchanges = [e for s in self.steps for e in (s, s.get("reflection")) if e]
        live = [e for e in exchanges if not e["cached"]]
        sent = sum(e["attempts"] for e in live)  # what the server received: retries included
        return {"model": self.endpoint.model, "steps": self.steps, "requests": sent, "retries": sent - len(live),
                "cached": len(exchanges) - len(live), "input_tokens": sum(e["input_tokens"] for e in live),
                "output_tokens": sum(e["output_tokens"] for e in live), "answers": len(self.steps),
                "invalid_answers": sum(not s["valid"] for s in self.steps), "images": dict(self.images)}


class MLLMAgent(TextAgent):
    """An MLLM agent: the screenshot (PNG of ``agent.screenshot_height`` x ``screenshot_width``, with set-of-mark tags under
    ``agent.set_of_marks``) and the numbered element list in, a text action out. It asks the evaluation for screens
    at that size (``observation_size``), drawn from the full-resolution screen."""

    reads: ClassVar[tuple[str, ...]] = ("screen", "xml")
    name: ClassVar[str] = "mllm"
    image: ClassVar[bool] = True
    Settings: ClassVar[type[TextAgentConfig]] = MLLMAgentConfig

    @property
    def observation_size(self) -> tuple[int, int]:
        return self.settings.screenshot_height, self.settings.screenshot_width

    def screen(self, obs: dict[str, Any], elements: list[Element], size: tuple[int, int]) -> Screen:
        return Screen(describe(elements, with_bounds=self.with_bounds), self._picture(obs["screen"], elements, size))
