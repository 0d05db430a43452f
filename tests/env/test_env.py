"""The gymnasium environment on the simulated phone: the API contract, rewards, limits, bad actions, vectors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tests import fixture_app
from vlui.agents import agent_class, make_agent
from vlui.agents.walkthrough import walkthrough
from vlui.env.settings import EnvConfig
from vlui.env.actions import ActionError, key_action, normalised_to_action
from vlui.env.agent import reads
from vlui.env.env import make_env, make_vector_env
from vlui.env.text_env import TextActions
from vlui.errors import VluiError
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import installs, release_tasks, tasks

SIM = EnvConfig(snapshots=["000", "030", "109"])


@pytest.fixture
def env():
    e = make_env(SIM, "supported", include_xml=True)
    yield e
    e.close()


def test_passes_gymnasiums_env_checker(env) -> None:
    check_env(env, skip_render_check=True)


def test_reset_loads_the_snapshot_goes_home_and_clears_the_log(env) -> None:
    obs, info = env.reset(seed=1, options={"task": "airplane_on", "snapshot": "030"})
    assert obs["screen"].shape == (256, 128, 3) and obs["screen"].dtype == np.uint8
    assert obs["instruction"] == "turn on airplane mode"
    assert (info["task"], info["snapshot"], info["step"], info["locale"]) == ("airplane_on", "030", 0, "ar-AE")
    assert env.device.log_lines() == []
    assert env.device.state.top is None


def test_agents_that_read_only_the_ui_tree_get_no_screen_and_the_same_episode() -> None:
    """The expert reads the UI tree: its environment leaves the screen out (nothing is drawn) and its episode is
    the same gesture for gesture, success included."""
    assert reads(agent_class({"name": "policy", "checkpoint": "x"})) == ("screen",)
    assert reads(agent_class({"name": "expert"})) == ("xml",) and reads(agent_class({"name": "random"})) == ()
    assert reads(object()) == ("screen", "xml")  # an agent that does not say is given everything
    runs = []
    for include_screen in (True, False):
        e = make_env(SIM, ["airplane_on"], include_xml=True, include_screen=include_screen)
        assert ("screen" in e.observation_space.spaces) == include_screen
        check_env(e, skip_render_check=True)
        agent = make_agent({"name": "expert"})
        obs, info = e.reset(seed=0, options={"task": "airplane_on", "snapshot": "109"})
        agent.reset(e.task, info, seed=0)
        assert ("screen" in obs) == include_screen
        actions, done, reward = [], False, 0.0
        while not done:
            action = agent.act(obs, info)
            actions.append(np.asarray(action).tolist())
            obs, reward, terminated, truncated, info = e.step(action)
            done = terminated or truncated
        runs.append((actions, reward))
        e.close()
    assert runs[0] == runs[1] and runs[0][1] == 1.0


def test_reset_samples_task_and_snapshot_reproducibly(env) -> None:
    draws = [env.reset(seed=7)[1] for _ in range(2)]
    assert draws[0]["task"] == draws[1]["task"] and draws[0]["snapshot"] == draws[1]["snapshot"]
    seen = {(env.reset()[1]["task"], env.snapshot) for _ in range(20)}
    assert len(seen) > 3


def test_success_gives_reward_one_and_terminates(env) -> None:
    obs, info = env.reset(options={"task": "open_settings", "snapshot": "000"})
    env.step(normalised_to_action((0.75, 0.5), (0.25, 0.5)))  # open the app drawer
    icon = env.device.frame().find(text="Settings")
    x1, y1, x2, y2 = icon.bounds
    w, h = env.device.size
    obs, reward, terminated, truncated, info = env.step(normalised_to_action(((y1 + y2) / 2 / h, (x1 + x2) / 2 / w)))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert "Start proc" in info["success_line"] and "com.android.settings" in info["success_line"]
    assert info["parsed_action"]["kind"] == "tap" and info["step"] == 2


def test_step_limit_truncates(env) -> None:
    env.reset(options={"task": "call_911", "snapshot": "000"})
    for step in range(1, 10):
        _, reward, terminated, truncated, info = env.step(normalised_to_action((0.5, 0.5)))  # an empty spot
        assert reward == 0.0 and not terminated
        assert truncated == (step == 9)
    with pytest.raises(VluiError, match="call reset"):
        env.step(normalised_to_action((0.5, 0.5)))


def test_env_step_limit_ends_episodes_sooner_never_later() -> None:
    """env.step_limit caps every task's own limit: call_911 (9 steps) ends truncated after 2, open_clock (whose own
    limit is lower than a cap of 50) keeps its own; the cap is part of what an episode is (a dataset or evaluation
    resumes only under the same), named only when set; 0 is refused naming the field."""
    capped = make_env(dataclasses.replace(SIM, step_limit=2), ["call_911"])
    _, info = capped.reset(options={"snapshot": "000"})
    assert info["step_limit"] == 2
    for step in (1, 2):
        _, _, terminated, truncated, info = capped.step(normalised_to_action((0.5, 0.5)))
        assert (terminated, truncated) == (False, step == 2)
    loose = make_env(dataclasses.replace(SIM, step_limit=50), ["open_clock"])
    _, info = loose.reset(options={"snapshot": "000"})
    assert info["step_limit"] == loose.task.step_limit < 50
    assert dataclasses.replace(SIM, step_limit=2).measured()["step_limit"] == 2 and "step_limit" not in SIM.measured()
    with pytest.raises(VluiError, match="env.step_limit must be at least 1, not 0"):
        make_env(dataclasses.replace(SIM, step_limit=0), ["call_911"])


def test_nav_point_actions_press_keys(env) -> None:
    env.reset(options={"task": "open_clock", "snapshot": "109"})  # the tablet: keys work there too
    env.step(normalised_to_action((0.75, 0.5), (0.25, 0.5)))
    assert env.device.state.drawer
    _, _, _, _, info = env.step(key_action("BACK"))
    parsed = info["parsed_action"]
    assert parsed["kind"] == "key" and parsed["key"] == "BACK"
    assert parsed["touch"] == pytest.approx([0.95, 0.22]) and parsed["lift"] == parsed["touch"]
    assert not env.device.state.drawer


@pytest.mark.parametrize("bad", [[np.nan, 0, 0, 0], [0, 0, 0, 2.0], [0, 0, 0], [[0, 0, 0, 0]]])
def test_bad_actions_raise_and_leave_the_device_untouched(env, bad) -> None:
    env.reset(options={"task": "airplane_on", "snapshot": "000"})
    before = env.device.state.copy()
    with pytest.raises(ActionError):
        env.step(np.array(bad, dtype=np.float32))
    assert env.device.state == before
    env.step(normalised_to_action((0.5, 0.5)))  # the episode goes on


def test_clipping_can_be_configured() -> None:
    env = make_env(dataclasses.replace(SIM, clip_actions=True), ["airplane_on"])
    env.reset(options={"snapshot": "000"})
    _, _, _, _, info = env.step(np.array([0.0, 0.0, 0.0, 3.0], dtype=np.float32))
    assert info["parsed_action"]["lift"][1] == 1.0


def test_unknown_and_unsupported_tasks_and_snapshots_are_refused(env, monkeypatch) -> None:
    with pytest.raises(VluiError, match="unknown task id"):
        env.reset(options={"task": "fly_to_the_moon"})
    # every B-MoCA task runs on the simulated phone now: mark one as not supported
    monkeypatch.setitem(tasks(), "files_audio", dataclasses.replace(tasks()["files_audio"], sim=False))
    env.tasks.pop("files_audio", None)
    with pytest.raises(VluiError, match="does not support task"):
        env.reset(options={"task": "files_audio"})
    with pytest.raises(VluiError, match="unknown snapshot '404'"):
        env.reset(options={"task": "airplane_on", "snapshot": "404"})


def test_text_actions_are_parsed_and_malformed_ones_cost_a_step() -> None:
    env = TextActions(make_env(SIM, ["open_settings"], include_xml=True))
    obs, _ = env.reset(options={"snapshot": "000"})
    assert "title weather text" in obs["text"]
    obs, reward, *_, info = env.step("swipe(up)")
    assert info["invalid_action"] is None and env.unwrapped.device.state.drawer
    obs, reward, *_, info = env.step("open the settings please")
    assert info["invalid_action"] and info["step"] == 2 and env.unwrapped.device.state.drawer
    line = next(ln for ln in obs["text"].splitlines() if ln.endswith(" TextView Settings"))
    obs, reward, terminated, *_ = env.step(f"tap({line[1:line.index(']')]})")
    assert reward == 1.0 and terminated


@pytest.mark.integration
def test_vector_env_steps_two_phones_in_subprocesses() -> None:
    venv = make_vector_env(SIM, "representative", num_envs=2)
    try:
        obs, infos = venv.reset(seed=3)
        assert obs["screen"].shape == (2, 256, 128, 3)
        for _ in range(3):
            obs, rewards, terms, truncs, infos = venv.step(venv.action_space.sample())
        assert rewards.shape == (2,) and obs["screen"].dtype == np.uint8
    finally:
        venv.close()


def test_reset_puts_the_device_in_the_tasks_starting_state() -> None:
    import dataclasses

    from vlui.env.env import PhoneEnv
    from vlui.sim.apps.dialer import dialer_state
    from vlui.sim.phone import SimDevice
    from vlui.tasks.catalog import tasks

    base = tasks()["airplane_on"]
    airplane_off = dataclasses.replace(base, id="airplane_off_test", state={"airplane_mode": True})
    in_call = dataclasses.replace(base, id="call_test", state={"phone": {"call": {
        "number": "911", "started_ms": 0, "emergency": True}}})
    env = PhoneEnv(SimDevice("000"), [airplane_off, in_call], ["000", "105"])
    env.reset(options={"task": "airplane_off_test", "snapshot": "105"})
    assert env.device.state.airplane_mode and env.device.log_lines(env._mark) == []
    env.reset(options={"task": "call_test", "snapshot": "000"})
    assert not env.device.state.airplane_mode  # the next episode starts from the snapshot again
    assert dialer_state(env.device).call.number == "911" and env.device.top_screen()["screen"] == "incall"
    with pytest.raises(VluiError, match="unknown state field 'airplane'"):
        env.device.set_state({"airplane": True})


def test_a_run_with_a_release_task_installs_the_releases_apps_and_one_of_the_papers_tasks_none(monkeypatch) -> None:
    """B-MoCA release 2.5's phones have its third-party apps (here the test fixture, as one of them) and AOSP's
    Dialer as their Phone app; the paper's phones have none of the apps and the Google dialer, as before. The expert
    finds its way on a phone with more apps (Settings' "See all N apps")."""
    fixture_app.register(monkeypatch, pinned=True)
    release = [pin.key for pin in installs(list(release_tasks().values()))
               if pin.key != "phone"]  # the Calculator's, the fixture's, ...
    assert fixture_app.KEY in release
    for run, installed, dialer in ((["app_info_list"], [], "google"), (["b25_app_info_list"], release, "aosp"),
                                   (["app_info_list", "b25_app_info_list"], release, "aosp")):
        env = make_env(SIM, run)
        env.reset(options={"task": run[0], "snapshot": "000"})
        assert (env.device.state.installed, env.device.state.dialer) == (installed, dialer), run
        env.reset(options={"task": run[0], "snapshot": "030"})  # after every snapshot load
        assert (env.device.state.installed, env.device.state.dialer) == (installed, dialer), run
        assert env.device.log_lines(env._mark) == []
    episode = walkthrough(SimDevice("000"), "b25_app_info_list", "000")
    assert episode.success


def test_env_settings_given_as_a_mapping_are_checked() -> None:
    """A mapping is read as EnvConfig: a misspelt key or an out-of-range value is an error, never ignored."""
    env = make_env({"snapshots": ["000"], "observation_height": 64, "observation_width": 32}, ["airplane_on"])
    assert env.observation_space["screen"].shape == (64, 32, 3)
    with pytest.raises(VluiError, match="unknown env setting.s. snapshotz; valid: backend, snapshots"):
        make_env({"snapshotz": ["000"]}, ["airplane_on"])
    with pytest.raises(VluiError, match="env.tap_threshold must be at least 0, not -0.1"):
        make_env(EnvConfig(snapshots=["000"], tap_threshold=-0.1), ["airplane_on"])
