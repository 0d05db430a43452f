"""The one rollout loop on the simulated phone: side-by-side environments, batched agents, the labeller, and what a
broken environment or a bad action counts as."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlui.agents import make_agent
from vlui.agents.policy_agent import PolicyAgent
from vlui.env.settings import EnvConfig
from vlui.env.agent import Agent, BatchAgent
from vlui.env.env import PhoneEnv, make_env
from vlui.errors import VluiError
from vlui.models.policy import VLUIPolicy, export_policy, grid_cell
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.rollout import EpisodeRecord, Job, dataset_rows, result_line, rollout
from vlui.spec import Memory, ObsActionSpec, Past

ENV = EnvConfig(snapshots=["000", "030"], observation_height=64, observation_width=32)
TASKS = ["airplane_on", "open_clock"]


def env() -> PhoneEnv:
    return make_env(ENV, TASKS, include_xml=True)


def expert() -> Agent:
    return make_agent({"name": "expert"})


class Home:
    """A batch agent that presses HOME everywhere, counting the batches it is asked for."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def reset(self, task, info=None, seed=None) -> None:
        pass

    def act(self, obs, info):
        return self.act_batch(obs["screen"][None], [obs["instruction"]])[0]

    def act_batch(self, screens, instructions):
        self.batches.append(len(screens))
        return np.tile(np.array([0.9, 0.0, 0.9, 0.0], np.float32), (len(screens), 1))  # the HOME point


def test_every_job_runs_once_and_a_batch_agent_acts_for_all_environments_at_once() -> None:
    jobs = [Job(task, snap, seed=i, episode=i) for i, (task, snap) in enumerate(
        (t, s) for t in TASKS for s in ENV.snapshots)]
    agent, done = Home(), []
    assert isinstance(agent, BatchAgent)
    rollout(jobs, env, lambda: agent, slots=3, on_done=done.append)
    assert sorted(r.job.key for r in done) == sorted(j.key for j in jobs)
    assert max(agent.batches) == 3 and agent.batches[0] == 3  # three environments, one forward pass per round
    for r in done:  # HOME until the step limit: a failure, never an infrastructure one
        assert not r.success and r.truncated and not r.infra_failure
        assert all(s.parsed["kind"] == "key" and s.parsed["key"] == "HOME" for s in r.steps)


class Wanderer(Home):
    """A batch agent that reads the previous action (a past of one step): it taps a point of its own per step, and
    remembers what it was handed."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[np.ndarray] = []

    def memory(self) -> Memory:
        return Memory(1)

    def act_batch(self, screens, instructions, past=None):
        self.handed.append(np.where(past.valid[:, :1], past.actions[:, 0], np.nan))
        n = len(self.handed)
        return np.tile(np.array([0.1 * (n % 5), 0.2, 0.1 * (n % 5), 0.2], np.float32), (len(screens), 1))


def test_a_batch_agent_that_reads_the_previous_action_is_handed_each_episodes_own() -> None:
    jobs = [Job("open_clock", snap, seed=i, episode=i) for i, snap in enumerate(["000", "030", "000"])]
    agent, done = Wanderer(), []
    rollout(jobs, env, lambda: agent, slots=2, on_done=done.append)
    assert len(done) == 3 and all(len(r.steps) >= 2 for r in done)
    assert agent.handed[0].shape == (2, 4) and np.isnan(agent.handed[0]).all()  # both episodes start with none
    starts = sum(int(np.isnan(h).all(axis=1).sum()) for h in agent.handed)
    assert starts == 3  # none at each episode's first step, the third's included ...
    for n, handed in enumerate(agent.handed[1:], start=1):  # ... and otherwise what that episode did last round
        went_on = ~np.isnan(handed).all(axis=1)
        assert np.allclose(handed[went_on], [0.1 * (n % 5), 0.2, 0.1 * (n % 5), 0.2])


class Recording(PolicyAgent):
    """A policy's agent that keeps what it was handed: each call's screens and past."""

    handed: list[tuple[np.ndarray, Past | None]]

    def act_batch(self, screens, instructions, past=None):
        self.handed.append((screens.copy(), past))
        return super().act_batch(screens, instructions, past)


class OnePhone:
    """A policy's agent as an agent that acts on one phone at a time (``act``, no ``act_batch``): it keeps its
    episode's memory itself."""

    def __init__(self, agent: PolicyAgent) -> None:
        self.agent = agent

    def reset(self, task, info=None, seed=None) -> None:
        self.agent.reset(task, info, seed)

    def act(self, obs, info):
        return self.agent.act(obs, info)


def test_a_policy_with_4_past_steps_acts_on_the_phone_with_its_episodes_last_screens_and_actions(tmp_path) -> None:
    torch.manual_seed(0)
    export_policy(VLUIPolicy(ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32,
                                         num_heads=2, head_dims=[32], head="pointer", history=4, history_screens=True),
                             ObsActionSpec(64, 32)), tmp_path / "policy")
    agent = Recording(str(tmp_path / "policy"), device="cpu")
    agent.handed = []
    cross_app = "call_contact@elena-4158764"  # Contacts, then Phone: 30 steps for the wandering policy
    jobs = [Job(cross_app, "000", seed=0), Job("airplane_on", "030", seed=1)]

    def phones() -> PhoneEnv:
        return make_env(ENV, [cross_app, "airplane_on"])

    done: list[EpisodeRecord] = []
    rollout(jobs, phones, lambda: agent, slots=1, on_done=done.append)
    assert [r.job.task for r in done] == [cross_app, "airplane_on"] and len(done[0].steps) > 4
    assert all(r.steps and not r.infra_failure and not r.invalid_action for r in done)
    calls = iter(agent.handed)
    for r in done:  # each episode starts with no past, then remembers its own last 4 steps, the most recent first
        seen = []
        for t in range(len(r.steps)):
            screens, past = next(calls)
            assert past.valid[0].tolist() == [j < t for j in range(4)]
            for j in range(min(t, 4)):
                assert np.array_equal(past.actions[0, j], r.steps[t - 1 - j].action)
                assert np.array_equal(past.screens[0, j], seen[t - 1 - j])
            seen.append(screens[0])
    # the same policy acting on one phone at a time (act, keeping its episode's memory itself) takes the same actions
    alone: list[EpisodeRecord] = []
    rollout(jobs, phones, lambda: OnePhone(agent), slots=1, on_done=alone.append)
    for a, b in zip(done, alone, strict=True):
        assert len(a.steps) == len(b.steps)
        assert all(np.array_equal(x.action, y.action) for x, y in zip(a.steps, b.steps, strict=True))
    # and two phones side by side: one batch, each episode its own past
    agent.handed = []
    both: list[EpisodeRecord] = []
    rollout(jobs, phones, lambda: agent, slots=2, on_done=both.append)
    assert sorted(r.job.task for r in both) == sorted(j.task for j in jobs)
    assert agent.handed[0][1].valid.shape == (2, 4) and not agent.handed[0][1].valid.any()
    assert agent.handed[1][1].valid.tolist() == [[True, False, False, False]] * 2


def test_the_labeller_is_asked_on_every_state_the_agent_visits() -> None:
    # the agent presses HOME until the step limit; the expert labels every state it leaves the phone in
    done: list[EpisodeRecord] = []
    rollout([Job("airplane_on", "000", 0)], env, lambda: Home(), 1, done.append, labeller=expert)
    (record,) = done
    assert not record.success and len(record.steps) >= 2
    e, teacher = env(), expert()
    obs, info = e.reset(seed=0, options={"task": "airplane_on", "snapshot": "000"})
    teacher.reset(e.task, info, seed=0)
    first = teacher.act(obs, info)  # what the expert does on the episode's first state, asked on its own
    assert np.allclose(record.steps[0].label, first)
    for step in record.steps:  # a label on every step: the expert's move, not the agent's HOME
        assert step.label is not None and np.shape(step.label) == (4,)
        assert not np.allclose(step.label, step.action)


def test_a_broken_environment_is_retried_once_then_counted_as_infrastructure(monkeypatch) -> None:
    original, resets = PhoneEnv.step, []

    def flaky(self, action):
        if self.task.id == "open_clock":
            raise RuntimeError("device went away")
        return original(self, action)

    original_reset = PhoneEnv.reset

    def counting_reset(self, **kwargs):
        resets.append(kwargs["options"]["task"])
        return original_reset(self, **kwargs)

    monkeypatch.setattr(PhoneEnv, "step", flaky)
    monkeypatch.setattr(PhoneEnv, "reset", counting_reset)
    done: list[EpisodeRecord] = []
    rollout([Job("open_clock", "000", 0), Job("airplane_on", "000", 1)], env, expert, 1, done.append)
    assert resets == ["open_clock", "open_clock", "airplane_on"]
    clock, airplane = done
    assert "device went away" in clock.infra_failure and clock.steps == [] and not clock.success
    assert airplane.success and airplane.infra_failure is None
    assert result_line(clock)["infra_failure"] == clock.infra_failure


def test_an_environment_that_cannot_be_rebuilt_stops_the_rollout_after_recording_the_episode(monkeypatch) -> None:
    monkeypatch.setattr(PhoneEnv, "step", lambda self, action: (_ for _ in ()).throw(RuntimeError("gone")))
    made, done = [], []

    def once() -> PhoneEnv:
        if made:
            raise RuntimeError("no device")
        made.append(env())
        return made[-1]

    with pytest.raises(VluiError, match="could not be rebuilt"):
        rollout([Job("open_clock", "000", 0), Job("airplane_on", "000", 1)], once, expert, 1, done.append)
    assert [r.job.task for r in done] == ["open_clock"] and done[0].infra_failure


def test_a_refused_action_ends_the_episode_as_the_agents_failure() -> None:
    class Broken:
        def reset(self, task, info=None, seed=None) -> None:
            self.n = 0

        def act(self, obs, info):
            self.n += 1
            return [0.0, 0.0, 0.0, 0.0] if self.n == 1 else [float("nan")] * 4

    done: list[EpisodeRecord] = []
    rollout([Job("open_clock", "000", 0), Job("open_clock", "030", 1)], env, Broken, 1, done.append,
            keep_observations=True)
    assert [len(r.steps) for r in done] == [1, 1]
    assert all("NaN" in r.invalid_action and not r.success and not r.infra_failure for r in done)
    rows = dataset_rows(done[0])  # kept as a failed episode: its step, then the screen it was refused on
    assert [r["is_last"] for r in rows] == [False, True] and not rows[-1]["success"]


def test_dataset_rows_follow_the_episode() -> None:
    done: list[EpisodeRecord] = []
    rollout([Job("airplane_on", "030", 7, id=5)], env, expert, 1, done.append, keep_observations=True,
            observe=lambda e, obs: e.device.screenshot())
    rows = dataset_rows(done[0], save_xml=True)
    assert len(rows) == len(done[0].steps) + 1 and [r["step"] for r in rows] == list(range(len(rows)))
    assert all(r["episode_id"] == 5 and r["seed"] == 7 and r["success"] for r in rows)
    assert rows[-1]["is_last"] and rows[-1]["action"] is None and rows[-2]["terminated"]
    assert rows[0]["xml"].startswith("<?xml") and rows[0]["screen_full"][:4] == b"\x89PNG"
    assert all(r["xml"] is None for r in dataset_rows(done[0]))  # not saved unless asked for


def test_a_policy_that_avoids_repeats_never_takes_a_gesture_twice_on_the_same_screen(tmp_path) -> None:
    torch.manual_seed(0)
    export_policy(VLUIPolicy(ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32,
                                         num_heads=2, head_dims=[32], head="pointer", history=1),
                             ObsActionSpec(64, 32)), tmp_path / "policy")
    jobs = [Job("airplane_on", "000", seed=0), Job("open_clock", "030", seed=1)]

    def repeats(avoid: bool) -> int:
        """Steps that took a touch cell the episode had already taken on an identical screen, while it had not
        taken them all there."""
        agent = Recording(str(tmp_path / "policy"), device="cpu", avoid_repeats=avoid)
        agent.handed = []
        done: list[EpisodeRecord] = []
        rollout(jobs, env, lambda: agent, slots=1, on_done=done.append)
        text, mask = agent.policy.text.lookup(["x"])
        h, w = agent.policy.head(agent.policy.encoder(torch.zeros(1, 64, 32, 3, dtype=torch.uint8), text, mask))["grid"]
        calls, count = iter(agent.handed), 0
        for r in done:
            taken: dict[bytes, set[int]] = {}
            for step in r.steps:
                on = taken.setdefault(next(calls)[0][0].tobytes(), set())
                cell = grid_cell(torch.as_tensor((step.action[None, :2] + 1) / 2), int(h), int(w))[0].item()
                count += cell in on and len(on) < h * w
                on.add(cell)
        return count

    assert repeats(avoid=False) > 0  # the untrained policy goes round in circles
    assert repeats(avoid=True) == 0
    mlp = tmp_path / "mlp"
    export_policy(VLUIPolicy(ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32,
                                         num_heads=2, head_dims=[32]), ObsActionSpec(64, 32)), mlp / "policy")
    with pytest.raises(VluiError, match=r"agent.avoid_repeats needs a policy with the pointer head .* has the mlp "
                                        r"head: leave agent.avoid_repeats=false$"):
        PolicyAgent(str(mlp / "policy"), device="cpu", avoid_repeats=True)
