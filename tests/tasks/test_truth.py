"""Each task's truth (``vlui/tasks/data/truths.yaml``): every task the simulated phone runs has one, the expert's
successful episodes reach it by the time the detector fires, and a truth reads the phone's state, not its log."""

from __future__ import annotations

import dataclasses

import pytest

from vlui.agents.expert import ExpertAgent
from vlui.env.settings import env_settings
from vlui.env.env import open_env
from vlui.errors import VluiError
from vlui.sim.apps.chrome import new_tab
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import catalog, release_tasks, tasks
from vlui.tasks.truth import Truth, truth_conditions, truth_problem, truths

SIM = [t for t in catalog().values() if t.sim]


def test_every_task_the_phone_runs_has_a_truth_and_every_truth_a_task():
    assert not [t.id for t in SIM if truth_conditions(t) is None]
    assert set(truths()) <= set(catalog())
    assert not [t.id for t in release_tasks().values() if truth_conditions(t) is None]
    assert len([t for t in tasks().values() if truth_conditions(t)]) == 60


@pytest.mark.parametrize("entry, problem", [
    ([], "non-empty list"),
    ([{"volume.alarm": {"grew": True}}], "a test mapping has one of"),
    ([{"volume.alarm": {"rose": 1}}], "rose takes true"),
    ([{"clock.alarms": {"contains": []}}], "contains takes a mapping"),
    ([{"front.tab": {"in": []}}], "in takes a non-empty list"),
])
def test_a_malformed_truth_is_named(entry, problem):
    assert problem in truth_problem(entry)


def test_a_truth_reads_the_state_and_compares_with_the_start():
    phone = SimDevice("000")
    truth = Truth.of(catalog()["volume_alarm_up"])
    truth.start(phone)
    assert not truth.holds(phone)
    phone.set_state({"volume": {"alarm": phone.state.volume["alarm"] + 1}})
    assert truth.holds(phone)
    assert Truth.of(catalog()["b25_wikipedia_search_tab"]).holds(phone) is False  # the launcher is in front


def test_a_task_without_a_truth_is_refused_in_one_line():
    untold = dataclasses.replace(catalog()["b25_chrome_new_tab"], id="b25_chrome_close_tab")  # a task yet to come
    with pytest.raises(VluiError, match="b25_chrome_close_tab has no truth yet"):
        Truth.of(untold)


def test_a_new_tab_in_chrome_is_a_tab_more_than_at_the_start():
    phone = SimDevice("000")
    truth = Truth.of(catalog()["b25_chrome_new_tab"])
    phone.launch("chrome")
    truth.start(phone)
    assert not truth.holds(phone)
    new_tab(phone)
    assert truth.holds(phone)


@pytest.mark.slow
@pytest.mark.parametrize("snapshot", ["000", "031", "030"])  # en-US; de-DE (a decimal comma); ar-AE (right to left)
def test_the_experts_successful_episodes_reach_the_truth(snapshot):
    """On every task the phone runs, the expert's episode succeeds, and the goal held by the step the detector
    fired: the truth is what the detector is measured against, so it must agree with every correct episode."""
    env = open_env(env_settings({"backend": "sim"}), SIM, [snapshot], include_xml=True, include_screen=False,
                   measure_truth=True)
    wrong = []
    for task in SIM:
        obs, info = env.reset(seed=0, options={"task": task.id, "snapshot": snapshot})
        agent = ExpertAgent()
        agent.reset(env.task, info, seed=0)
        fired = reached = None
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
            detector, truth = env.verdicts
            fired = fired or (info["step"] if detector else None)
            reached = reached or (info["step"] if truth else None)
        if fired is None or reached is None or reached > fired:
            wrong.append((task.id, fired, reached))
    assert not wrong
