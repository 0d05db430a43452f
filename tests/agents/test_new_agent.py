"""docs/architecture.md's recipe for a new agent type, followed in one file: its class over AgentBase, one entry of
AGENT_TYPES and one YAML. ``python evaluate.py agent=<name>`` then evaluates it like the agents vlui ships, with
nothing else in vlui changed; and every agent vlui ships is registered the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from vlui.agents import AGENT_TYPES, AgentType, agent_class, make_agent
from vlui.agents.base import AgentBase
from vlui.agents.settings import AgentConfig
from vlui.cli import CONFIG_DIR, compose
from vlui.errors import VluiError
from vlui.jobs import evaluate
from vlui.tasks.catalog import Task


# ------------------------------------------------------------------------------------------------- the new agent
class HomeAgent(AgentBase):
    """Presses Home at every step: it reads nothing of the screen, and succeeds at nothing that needs a tap."""

    reads: ClassVar[tuple[str, ...]] = ()
    HOME: ClassVar[np.ndarray] = np.array([1.0, 0.0, 1.0, 0.0], np.float32)  # a press on the bottom edge's centre

    def __init__(self) -> None:
        self.steps = 0

    @classmethod
    def from_settings(cls, agent: AgentConfig, seed: int = 0) -> HomeAgent:
        return cls()

    def reset(self, task: Task, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self.steps = 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        assert "screen" not in obs and "xml" not in obs  # the environment leaves out what it does not read
        self.steps += 1
        return self.HOME


YAML = """# Presses Home at every step.
defaults:
  - /schema/agent@_here_
  - _self_

name: home
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The new agent registered (one entry of AGENT_TYPES) and its YAML on Hydra's search path."""
    monkeypatch.setitem(AGENT_TYPES, "home", AgentType(f"{__name__}:HomeAgent"))
    (tmp_path / "configs" / "agent").mkdir(parents=True)
    (tmp_path / "configs" / "agent" / "home.yaml").write_text(YAML)
    return f"hydra.searchpath=[file://{tmp_path / 'configs'}]"


@pytest.mark.integration
def test_a_new_agent_type_is_one_module_one_registry_entry_and_one_yaml(home: str, tmp_path: Path) -> None:
    cfg = compose("evaluate", [home, "agent=home", "tasks=[open_clock,airplane_on]", "env.snapshots=[000]",
                               "runs=1", "adaptive_metrics=false"], output_dir=tmp_path / "out")
    result = evaluate.run(cfg)
    assert result["episodes"] == 2 and result["success_rate"] == 0.0
    episodes = [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert {e["task"] for e in episodes} == {"open_clock", "airplane_on"}
    assert all(e["steps"] > 0 for e in episodes)  # it acted until each task's step limit
    assert json.loads((tmp_path / "out" / "results.json").read_text())["agent"] == "home"


def test_every_agent_vlui_ships_is_registered_once_with_its_yaml(tmp_path: Path) -> None:
    assert {p.stem for p in (CONFIG_DIR / "agent").glob("*.yaml")} == set(AGENT_TYPES)
    for name in AGENT_TYPES:
        kind = agent_class(AgentConfig(name=name))
        assert issubclass(kind, AgentBase), name
        assert compose("evaluate", [f"agent={name}"], output_dir=tmp_path / name).agent.name == name


def test_an_unknown_agent_lists_the_known_ones() -> None:
    with pytest.raises(VluiError, match="unknown agent 'sage'; choose from: expert, random, policy, text, mllm"):
        make_agent(AgentConfig(name="sage"))
