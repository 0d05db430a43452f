"""The ``agent`` settings, one dataclass per agent type, and the one registry of agent types (:data:`AGENT_TYPES`).

An agent type is a class over :class:`vlui.agents.base.AgentBase` in a module of its own, a dataclass of its settings
here (over :class:`AgentConfig`, the ``name`` every type has), one entry of :data:`AGENT_TYPES` and one YAML
(``configs/agent/<name>.yaml``, whose defaults list names its schema, ``/schema/agent/<name>``). The settings live
apart from the agents because Hydra must know every schema before it composes anything, and ``evaluate.py --help``
composes without importing torch or openai; an agent's module is imported when it acts. Code below the job floor
takes a type's dataclass or a plain mapping (:func:`agent_settings`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Optional

from vlui.errors import VluiError
from vlui.limits import AT_LEAST_1, FRACTION, MISSING, NON_NEGATIVE, POSITIVE, SEED, Range, check_fields


@dataclass
class AgentConfig:
    """What every agent type's settings have: its name (a key of :data:`AGENT_TYPES`)."""

    name: str = MISSING

    LIMITS: ClassVar[dict[str, Range]] = {}
    CHOICES: ClassVar[dict[str, tuple]] = {}
    # settings added after datasets and evaluations first recorded the agent's: a recipe leaves them out at these
    # values (what everything before them did), so what was collected or evaluated before them still resumes
    SINCE: ClassVar[dict[str, Any]] = {}
    # how the agent reaches its model, which a resume may change (the model itself it may not)
    CONNECTION: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def in_recipe(cls, agent: Mapping[str, Any]) -> dict[str, Any]:
        """The agent's settings as a dataset's or an evaluation's recipe records them (without :attr:`SINCE`'s at
        their old behaviour)."""
        return {k: v for k, v in agent.items() if not (k in cls.SINCE and v == cls.SINCE[k])}


@dataclass
class ExpertAgentConfig(AgentConfig):
    """The scripted expert (vlui/agents/expert.py), and its imperfection, for realistic and for offline-RL data."""

    name: str = "expert"
    tap_jitter: float = 0.0  # fraction of the target's bounds within which taps land (0 = centre)
    random_action_prob: float = 0.0
    wrong_action_prob: float = 0.0

    # probabilities and a fraction of a target's size
    LIMITS: ClassVar[dict[str, Range]] = {"tap_jitter": FRACTION, "random_action_prob": FRACTION,
                                          "wrong_action_prob": FRACTION}


@dataclass
class RandomAgentConfig(AgentConfig):
    """Uniformly random dual-gestures (vlui/agents/random_agent.py): nothing to set."""

    name: str = "random"


@dataclass
class PolicyAgentConfig(AgentConfig):
    """A trained policy (vlui/agents/policy_agent.py): an exported checkpoint folder or a Lightning checkpoint."""

    name: str = "policy"
    checkpoint: Optional[str] = None
    device: str = "auto"
    # on a screen the episode has been on before, not a gesture it already took there (the pointer head's next
    # likeliest touch cell): a deterministic policy otherwise repeats a step that led nowhere forever
    avoid_repeats: bool = False

    SINCE: ClassVar[dict[str, Any]] = {"avoid_repeats": False}


@dataclass
class TextAgentConfig(AgentConfig):
    """An LLM agent over an OpenAI-compatible chat endpoint (vlui/agents/text_agent.py; docs/agents.md)."""

    name: str = "text"
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
    # every answer kept by its full request: the same request again is answered from here (null: no cache)
    cache_dir: Optional[str] = None
    budget_requests: Optional[int] = None  # requests this run may send; null: no limit
    budget_tokens: Optional[int] = None  # tokens (in + out, as the endpoint counts them) this run may use
    price_input_per_1m: float = 0.0  # the model's price per million input tokens, for the cost estimate; 0: unknown
    price_output_per_1m: float = 0.0
    # a run stops in one line after this many answers in a row with no valid action (a model that does not follow
    # the answer format: a wrong chat template, a base model); null: never, every answer is measured
    stop_after_invalid: Optional[int] = 50

    LIMITS: ClassVar[dict[str, Range]] = {"timeout_s": POSITIVE, "max_retries": NON_NEGATIVE,
                                          "retry_delay_s": NON_NEGATIVE, "retry_max_delay_s": POSITIVE,
                                          "request_deadline_s": POSITIVE, "concurrency": AT_LEAST_1,
                                          "temperature": Range(0, 2), "top_p": Range(0, 1, optional=True),
                                          "max_answer_tokens": Range(1, optional=True), "history": Range(0),
                                          "few_shot": Range(0), "few_shot_seed": SEED,
                                          "budget_requests": Range(0, optional=True),
                                          "budget_tokens": Range(0, optional=True),
                                          "stop_after_invalid": Range(1, optional=True),
                                          "price_input_per_1m": NON_NEGATIVE, "price_output_per_1m": NON_NEGATIVE}
    CHOICES: ClassVar[dict[str, tuple]] = {"answer": ("bmoca", "json"), "actions": ("bmoca", "extended")}
    SINCE: ClassVar[dict[str, Any]] = {"actions": "bmoca", "request_deadline_s": 180.0, "concurrency": 1}
    # the cache, the budget and the prices change what a run costs, not what it measures
    CONNECTION: ClassVar[tuple[str, ...]] = (
        "url", "base_url", "api_key_env", "timeout_s", "max_retries", "retry_delay_s", "retry_max_delay_s",
        "request_deadline_s", "concurrency", "cache_dir", "budget_requests", "budget_tokens", "price_input_per_1m",
        "price_output_per_1m", "stop_after_invalid")


@dataclass
class MLLMAgentConfig(TextAgentConfig):
    """A multimodal LLM agent: the text agent's settings, and the screenshot it is sent (vlui/agents/text_agent.py)."""

    name: str = "mllm"
    # the screenshot sent (PNG), drawn from the full-resolution screen: not the observation (env.observation_height)
    screenshot_height: int = 1024
    screenshot_width: int = 512
    set_of_marks: bool = False  # set-of-mark: the elements' numbers drawn on the screenshot

    LIMITS: ClassVar[dict[str, Range]] = {**TextAgentConfig.LIMITS, "screenshot_height": Range(8),
                                          "screenshot_width": Range(8)}


@dataclass(frozen=True)
class AgentType:
    """An entry of :data:`AGENT_TYPES`: the agent's settings, where its class is, and whether it is a trained
    policy."""

    settings: type[AgentConfig]  # the dataclass of its settings, the schema of configs/agent/<name>.yaml
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
    "expert": AgentType(ExpertAgentConfig, "vlui.agents.expert:ExpertAgent"),
    "random": AgentType(RandomAgentConfig, "vlui.agents.random_agent:RandomAgent"),
    "policy": AgentType(PolicyAgentConfig, "vlui.agents.policy_agent:PolicyAgent", checkpoint=True),
    "text": AgentType(TextAgentConfig, "vlui.agents.text_agent:TextAgent"),
    "mllm": AgentType(MLLMAgentConfig, "vlui.agents.text_agent:MLLMAgent"),
}

# Settings the agents had under another name: the MLLM's screenshot size was agent.image_height/width, which read as
# the observation's size (env.observation_height/width)
FORMER_NAMES: dict[str, str] = {"image_height": "screenshot_height", "image_width": "screenshot_width"}


def agent_type(name: str) -> AgentType:
    """The agent type called ``name``; an unknown name lists the known ones."""
    if name not in AGENT_TYPES:
        raise VluiError(f"unknown agent {name!r}; choose from: {', '.join(AGENT_TYPES)}")
    return AGENT_TYPES[name]


def refuse_unknown(name: str, keys: list[str]) -> None:
    """One line when ``keys`` are settings that agent type ``name`` does not have, naming those it has."""
    known = [f.name for f in fields(agent_type(name).settings)]
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise VluiError(f"agent={name} has no setting {', '.join(f'agent.{k}' for k in unknown)}; its settings: "
                        f"{', '.join(known)}")


def agent_settings(value: AgentConfig | Mapping[str, Any]) -> AgentConfig:
    """The ``agent`` settings as the dataclass of the type they name (a mapping, or another type's dataclass, is
    read into it: a setting that type does not have is an error), checked (``LIMITS``, ``CHOICES``)."""
    values = value if isinstance(value, Mapping) else asdict(value) if isinstance(value, AgentConfig) else None
    if values is None:
        raise VluiError(f"agent settings must be a mapping or an AgentConfig, not {type(value).__name__}")
    name = values.get("name", MISSING)
    if name == MISSING:
        raise VluiError(f"the agent settings name no agent type: set agent.name, one of {', '.join(AGENT_TYPES)}")
    schema = agent_type(name).settings
    if type(value) is not schema:
        refuse_unknown(name, list(values))
        value = schema(**values)
    check_fields(schema, vars(value), "agent.")
    return value


def recorded_now(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """An agent's settings as a recipe records them now, from what a recipe recorded (whatever version wrote it).
    Before each agent type had its own settings, a recipe held every agent's (the expert's noise beside an LLM's
    prompt, the MLLM's screenshot size as ``image_height``/``image_width``): its type's own are what its agent read,
    so only those are kept, by their names now. An unknown type's are kept as they are."""
    kind = AGENT_TYPES.get(str(recorded.get("name")))
    if kind is None:
        return dict(recorded)
    own = {f.name for f in fields(kind.settings)}
    now = {FORMER_NAMES.get(k, k): v for k, v in recorded.items()}
    return kind.settings.in_recipe({k: v for k, v in now.items() if k in own})
