"""docs/architecture.md's recipe for a new agent type, followed in one file: its class over AgentBase, its settings'
dataclass, one entry of AGENT_TYPES naming both and one YAML. ``python evaluate.py agent=<name>`` then evaluates it
like the agents vlui ships, with its own settings checked and recorded, and nothing else in vlui changed; and every
agent vlui ships is registered the same way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from omegaconf import OmegaConf

from vlui.agents import AGENT_TYPES, AgentType, agent_class, make_agent
from vlui.agents.base import AgentBase
from vlui.agents.settings import AgentConfig
from vlui.limits import Range
from vlui.cli import CONFIG_DIR, compose
from vlui.errors import VluiError
from vlui.jobs import evaluate
from vlui.tasks.catalog import Task


# ------------------------------------------------------------------------------------------------- the new agent
@dataclass
class HomeAgentConfig(AgentConfig):
    """Where the agent presses."""

    name: str = "home"
    edge_x: float = 0.0  # where along the bottom edge it presses: -1 its left end, 1 its right

    LIMITS: ClassVar[dict[str, Range]] = {"edge_x": Range(-1, 1)}


class HomeAgent(AgentBase):
    """Presses the bottom edge at every step: it reads nothing of the screen, and succeeds at nothing that needs a
    tap."""

    reads: ClassVar[tuple[str, ...]] = ()

    def __init__(self, edge_x: float) -> None:
        self.press = np.array([1.0, edge_x, 1.0, edge_x], np.float32)  # (y, x) where it touches and where it lifts
        self.steps = 0

    @classmethod
    def from_settings(cls, agent: HomeAgentConfig, seed: int = 0) -> HomeAgent:
        return cls(agent.edge_x)

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self.steps = 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        assert "screen" not in obs and "xml" not in obs  # the environment leaves out what it does not read
        self.steps += 1
        return self.press


YAML = """# Presses the bottom edge at every step.
defaults:
  - /schema/agent/home@_here_
  - _self_
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The new agent registered (one entry of AGENT_TYPES, from this module alone: a type needing any other file of
    vlui fails here) and its YAML on Hydra's search path."""
    monkeypatch.setitem(AGENT_TYPES, "home", AgentType(HomeAgentConfig, f"{__name__}:HomeAgent"))
    (tmp_path / "configs" / "agent").mkdir(parents=True)
    (tmp_path / "configs" / "agent" / "home.yaml").write_text(YAML)
    return f"hydra.searchpath=[file://{tmp_path / 'configs'}]"


@pytest.mark.integration
def test_a_new_agent_type_is_one_module_one_registry_entry_and_one_yaml(home: str, tmp_path: Path) -> None:
    cfg = compose("evaluate", [home, "agent=home", "agent.edge_x=0.5", "tasks=[open_clock,airplane_on]",
                               "env.snapshots=[000]", "runs=1", "adaptive_metrics=false"], output_dir=tmp_path / "out")
    result = evaluate.run(cfg)
    assert result["episodes"] == 2 and result["success_rate"] == 0.0
    episodes = [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert {e["task"] for e in episodes} == {"open_clock", "airplane_on"}
    assert all(e["steps"] > 0 for e in episodes)  # it acted until each task's step limit
    assert json.loads((tmp_path / "out" / "results.json").read_text())["agent"] == "home"
    # its own settings, and only those, are what the evaluation records of the agent
    assert json.loads((tmp_path / "out" / "recipe.json").read_text())["agent"] == {"name": "home", "edge_x": 0.5}


def test_a_new_agent_types_settings_are_checked_in_one_line(home: str, tmp_path: Path) -> None:
    with pytest.raises(VluiError, match=r"^agent=home has no setting agent.model; its settings: name, edge_x$"):
        compose("evaluate", [home, "agent=home", "agent.model=x"], output_dir=tmp_path)
    with pytest.raises(VluiError, match=r"^agent.edge_x must be at least -1 and at most 1, not 2.0$"):
        evaluate.run(compose("evaluate", [home, "agent=home", "agent.edge_x=2"], output_dir=tmp_path))
    assert make_agent({"name": "home", "edge_x": -1}).press.tolist() == [1.0, -1.0, 1.0, -1.0]


def test_every_agent_vlui_ships_is_registered_once_with_its_yaml(tmp_path: Path) -> None:
    assert {p.stem for p in (CONFIG_DIR / "agent").glob("*.yaml")} == set(AGENT_TYPES)
    for name in AGENT_TYPES:
        kind = agent_class(AgentConfig(name=name))
        assert issubclass(kind, AgentBase), name
        settings = compose("evaluate", [f"agent={name}"], output_dir=tmp_path / name).agent
        assert settings.name == name and OmegaConf.get_type(settings) is AGENT_TYPES[name].settings


def test_an_unknown_agent_lists_the_known_ones() -> None:
    with pytest.raises(VluiError, match="unknown agent 'sage'; choose from: expert, random, policy, text, mllm"):
        make_agent(AgentConfig(name="sage"))
