"""The ``agent`` settings: who acts during collection and evaluation (:class:`AgentConfig`). A plain dataclass: the
job floor (:mod:`vlui.config`) makes Hydra's schema of it; code below it takes an :class:`AgentConfig` or a plain
mapping (:func:`agent_settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Optional

from vlui.limits import AT_LEAST_1, FRACTION, MISSING, NON_NEGATIVE, POSITIVE, SEED, Range, typed


@dataclass
class AgentConfig:
    """Who acts during collection and evaluation."""

    name: str = MISSING  # "expert" | "random" | "policy" | "text" | "mllm"
    # expert: imperfection, for realistic and for offline-RL data
    tap_jitter: float = 0.0  # fraction of the target's bounds within which taps land (0 = centre)
    random_action_prob: float = 0.0
    wrong_action_prob: float = 0.0
    # policy: an exported checkpoint folder or a Lightning checkpoint
    checkpoint: Optional[str] = None
    device: str = "auto"
    # policy: on a screen the episode has been on before, not a gesture it already took there (the pointer head's
    # next likeliest touch cell): a deterministic policy otherwise repeats a step that led nowhere forever
    avoid_repeats: bool = False
    # text, mllm: an OpenAI-compatible chat endpoint (docs/agents.md)
    base_url: Optional[str] = None  # e.g. http://127.0.0.1:8000/v1
    url: Optional[str] = None  # the former name of base_url, still read
    model: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"  # the environment variable holding the API key (unset: none sent)
    timeout_s: float = 60.0  # the wait for one answer; each one that does not come is a warning line, then a retry
    max_retries: int = 5  # a request answered 429, 408 or 5xx, or not answered, is sent again up to this many times
    retry_delay_s: float = 1.0  # the first wait before sending it again, doubled each time (or the Retry-After)
    retry_max_delay_s: float = 60.0  # the longest wait; a Retry-After asking for more fails the request at once
    # a request's whole time, retries and waits included: past it the request fails (the episode is an infrastructure
    # failure, run again on resume), so a server that never answers costs minutes, not a quarter of an hour
    request_deadline_s: float = 180.0
    # requests in flight at once, from the run's environments side by side (at most env.num_envs of them): each
    # environment waits on its own answer; the episodes, their actions and their order are those of 1
    concurrency: int = 1
    temperature: float = 0.0  # B-MoCA's for GPT-4 and GPT-4V (App. C.3)
    top_p: Optional[float] = None  # null: not sent (the endpoint's default)
    max_answer_tokens: Optional[int] = None  # the answer's length limit; null: not sent
    seed_requests: bool = True  # send the episode's seed with each request (runs differ, a rerun is cached)
    # the prompt (B-MoCA App. C.1): element bounds in the list, previous steps shown, the answer's format
    with_bounds: bool = True
    history: int = 8  # the last N steps in the prompt; 0: none (B-MoCA's prompt has none)
    answer: str = "bmoca"  # "bmoca": Description, Thought, Action | "json": M3A's reason and JSON action
    # the action options: "bmoca", the paper's six | "extended", and GUIOdyssey's long_press(n), type("text"),
    # complete() and impossible(), and AndroidWorld M3A's open_app, scroll, wait, keyboard_enter and answer
    actions: str = "bmoca"
    reflect: bool = False  # M3A: after each step, a summary from the screens before and after, used as history
    few_shot: int = 0  # examples (demonstration transitions) in each prompt
    few_shot_data: Optional[str] = None  # the dataset they are drawn from (a folder)
    few_shot_seed: int = 0
    # mllm: the screenshot sent (PNG), and set-of-mark: the elements' numbers drawn on it
    image_height: int = 1024
    image_width: int = 512
    set_of_marks: bool = False
    # every answer kept by its full request: the same request again is answered from here (null: no cache)
    cache_dir: Optional[str] = None
    budget_requests: Optional[int] = None  # requests this run may send; null: no limit
    budget_tokens: Optional[int] = None  # tokens (in + out, as the endpoint counts them) this run may use
    price_input_per_1m: float = 0.0  # the model's price per million input tokens, for the cost estimate; 0: unknown
    price_output_per_1m: float = 0.0
    # a run stops in one line after this many answers in a row with no valid action (a model that does not follow
    # the answer format: a wrong chat template, a base model); null: never, every answer is measured
    stop_after_invalid: Optional[int] = 50

    # the expert's noise settings are probabilities and a fraction of a target's size
    LIMITS: ClassVar[dict[str, Range]] = {"tap_jitter": FRACTION, "random_action_prob": FRACTION,
                                          "wrong_action_prob": FRACTION, "timeout_s": POSITIVE,
                                          "max_retries": NON_NEGATIVE, "retry_delay_s": NON_NEGATIVE,
                                          "retry_max_delay_s": POSITIVE, "request_deadline_s": POSITIVE,
                                          "concurrency": AT_LEAST_1, "temperature": Range(0, 2),
                                          "top_p": Range(0, 1, optional=True),
                                          "max_answer_tokens": Range(1, optional=True), "history": Range(0),
                                          "few_shot": Range(0), "few_shot_seed": SEED, "image_height": Range(8),
                                          "image_width": Range(8), "budget_requests": Range(0, optional=True),
                                          "budget_tokens": Range(0, optional=True),
                                          "stop_after_invalid": Range(1, optional=True),
                                          "price_input_per_1m": NON_NEGATIVE, "price_output_per_1m": NON_NEGATIVE}
    CHOICES: ClassVar[dict[str, tuple]] = {"answer": ("bmoca", "json"), "actions": ("bmoca", "extended")}
    # settings added after datasets and evaluations first recorded the agent's: a recipe leaves them out at these
    # values (what everything before them did), so what was collected or evaluated before them still resumes
    SINCE: ClassVar[dict[str, Any]] = {"actions": "bmoca", "avoid_repeats": False, "request_deadline_s": 180.0,
                                       "concurrency": 1}
    # how an LLM agent reaches its model, which a resume may change (the model itself, agent.model, it may not); the
    # cache, the budget and the prices change what a run costs, not what it measures
    CONNECTION: ClassVar[tuple[str, ...]] = (
        "url", "base_url", "api_key_env", "timeout_s", "max_retries", "retry_delay_s", "retry_max_delay_s",
        "request_deadline_s", "concurrency", "cache_dir", "budget_requests", "budget_tokens", "price_input_per_1m",
        "price_output_per_1m", "stop_after_invalid")

    @classmethod
    def in_recipe(cls, agent: dict[str, Any]) -> dict[str, Any]:
        """The agent's settings as a dataset's or an evaluation's recipe records them (without :attr:`SINCE`'s at
        their old behaviour)."""
        return {k: v for k, v in agent.items() if not (k in cls.SINCE and v == cls.SINCE[k])}


def agent_settings(value: AgentConfig | Mapping[str, Any]) -> AgentConfig:
    """The ``agent`` settings as an :class:`AgentConfig`, checked (:func:`vlui.limits.typed`)."""
    return typed(AgentConfig, value, "agent")
