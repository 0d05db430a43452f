"""One observation-and-action spec (vlui/spec.py): stored by collect.py in the dataset, read from there by train.py,
stored with the policy, and read from the policy by evaluate.py, DAgger and PPO."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from vlui.agents.expert import ExpertAgent
from vlui.android.i18n import is_rtl
from vlui.cli import compose
from vlui.env.settings import EnvConfig
from vlui.data.format import dataset_spec, read_info
from vlui.device import observe
from vlui.env.actions import ActionParser
from vlui.env.env import make_env
from vlui.errors import VluiError
from vlui.models.policy import load_policy
from vlui.models.settings import ModelConfig, from_dict, to_dict
from vlui.spec import Memory, ObsActionSpec
from vlui.tasks.catalog import task_set

SMALL = ObsActionSpec(48, 24, tap_threshold=0.2, y_scale=1.0)


def test_the_spec_round_trips_through_json() -> None:
    stored = json.loads(json.dumps(SMALL.to_dict()))
    assert ObsActionSpec.from_dict(stored) == SMALL
    assert stored["screen"] == [48, 24, 3] and stored["dtype"] == "uint8" and "dual-gesture" in stored["action"]


@pytest.mark.parametrize(("stored", "message"), [
    ({"screen": [48, 24]}, "screen must be [height, width, 3]"),
    ({"screen": [48, 0, 3]}, "a screen width is a positive whole number of pixels, not 0"),
    ({"screen": [48, 24, 3], "tap_threshold": float("nan")}, "tap_threshold is a finite number >= 0, not nan"),
    ({"screen": [48, 24, 3], "dtype": "float32"}, "describes other screens or actions"),
    ({"screen": [48, 24, 3], "colour": "red"}, "unknown field(s) colour"),
])
def test_a_damaged_spec_is_refused_in_one_line(stored: dict, message: str) -> None:
    with pytest.raises(VluiError, match="^the export") as err:
        ObsActionSpec.from_dict(stored, "the export")
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("landscape", "rtl"), [("rotated", "kept"), ("stacked", "kept"), ("stretched", "mirrored")])
def test_a_view_is_stored_and_earlier_specs_read_as_stretched_and_kept(landscape: str, rtl: str) -> None:
    spec = ObsActionSpec(landscape=landscape, rtl=rtl)
    stored = json.loads(json.dumps(spec.to_dict()))
    assert stored.get("landscape", "stretched") == landscape and stored.get("rtl", "kept") == rtl
    assert ObsActionSpec.from_dict(stored) == spec
    assert "landscape" not in ObsActionSpec().to_dict() and "rtl" not in ObsActionSpec().to_dict()  # as they were
    assert not spec.same_actions(ObsActionSpec())
    assert (f"landscape {landscape}" if landscape != "stretched" else f"rtl {rtl}") in spec.reading()


def test_an_unknown_view_is_refused_naming_the_choices() -> None:
    with pytest.raises(VluiError, match="landscape must be one of stretched, rotated, stacked, not 'sideways'"):
        ObsActionSpec(landscape="sideways")
    with pytest.raises(VluiError, match="rtl must be one of kept, mirrored, not 'flipped'"):
        ObsActionSpec(rtl="flipped")


# a landscape screen with one red block near its top-right corner, one blue block near its bottom-left corner and a
# green one just left of the middle
BLOCKS = {(255, 0, 0): (slice(40, 80), slice(560, 600)), (0, 0, 255): (slice(320, 360), slice(40, 80)),
          (0, 255, 0): (slice(180, 220), slice(270, 310))}


@pytest.mark.parametrize(("landscape", "rtl", "view"), [("rotated", "kept", "rotated"), ("stacked", "kept", "stacked"),
                                                         ("stretched", "mirrored", "mirrored"),
                                                         ("stacked", "mirrored", "mirrored+stacked")])
def test_a_screen_is_observed_in_its_view_and_its_points_map_back_where_it_shows_them(landscape: str, rtl: str,
                                                                                       view: str) -> None:
    spec = ObsActionSpec(128, 64, landscape=landscape, rtl=rtl)
    screen = np.zeros((400, 640, 3), np.uint8)
    for colour, (rows, cols) in BLOCKS.items():
        screen[rows, cols] = colour
    assert spec.view((640, 400), rtl=True) == view
    obs = observe(screen, 128, 64, view)
    assert obs.shape == (128, 64, 3)
    for colour, (rows, cols) in BLOCKS.items():
        centre = ((rows.start + rows.stop) / 2 / 400, (cols.start + cols.stop) / 2 / 640)  # normalised (y, x)
        y, x = spec.from_screen(centre, (640, 400), rtl=True)
        assert obs[int(y * 128), int(x * 64)].tolist() == list(colour), colour  # shown where the point maps
        channel = list(colour).index(255)
        near = obs[int(y * 128) - 8:int(y * 128) + 9, int(x * 64) - 4:int(x * 64) + 5, channel]  # a stretched
        # screen's blocks are taller than wide
        assert (obs[:, :, channel] > 128).sum() == (near > 128).sum()  # and nowhere else
        assert spec.to_screen((y, x), (640, 400), rtl=True) == pytest.approx(centre)
    # a portrait screen is observed as it stands but for the mirror; a left-to-right phone's is never mirrored;
    # every screen under B-MoCA's stretch and kept, as it stands
    assert spec.view((400, 640), rtl=True) == ("mirrored" if rtl == "mirrored" else None)
    assert spec.view((640, 400), rtl=False) == (landscape if landscape != "stretched" else None)
    assert ObsActionSpec().view((640, 400), rtl=True) is None
    assert ObsActionSpec().to_screen((0.2, 0.7), (640, 400), rtl=True) == (0.2, 0.7)


def test_whether_a_locale_is_laid_out_right_to_left() -> None:
    # the simulated phone's locales by locales.yaml; a real phone's others by their language or script
    assert is_rtl("ar-EG") and is_rtl("he-IL") and is_rtl("ur-PK") and not is_rtl("en-US") and not is_rtl("ja-JP")
    assert is_rtl("ar-SA") and is_rtl("fa-AF") and is_rtl("iw-IL") and is_rtl("pa-Arab-PK")
    assert not is_rtl("pa-IN") and not is_rtl("de-CH") and not is_rtl("sr-Latn-RS")


def test_a_stacked_screen_of_odd_width_keeps_every_column() -> None:
    screen = np.arange(3 * 5, dtype=np.uint8).reshape(3, 5, 1).repeat(3, axis=2)  # 5 columns: 3 go left, 2 right
    obs = observe(screen, 6, 3, "stacked")
    assert obs[:3, :, 0].tolist() == screen[:, :3, 0].tolist()
    assert obs[3:, :2, 0].tolist() == screen[:, 3:, 0].tolist() and not obs[3:, 2].any()


@pytest.mark.integration
@pytest.mark.parametrize(("snapshot", "landscape", "rtl", "view"), [
    ("109", "rotated", "kept", "rotated"), ("109", "stacked", "kept", "stacked"),
    ("109", "stacked", "mirrored", "mirrored+stacked"),  # the landscape tablet, in Arabic
    ("030", "stacked", "mirrored", "mirrored"),  # a portrait phone, in Arabic
    ("000", "stacked", "mirrored", None)])  # a portrait phone, in English
def test_in_every_view_the_expert_and_the_environment_agree(snapshot: str, landscape: str, rtl: str,
                                                             view: str | None) -> None:
    # the expert acts in the observation's frame (info["view"]), the environment moves its points back: every
    # representative task is done
    env = make_env(EnvConfig(snapshots=[snapshot], landscape=landscape, rtl=rtl), "representative", include_xml=True)
    for task in task_set("representative"):
        agent = ExpertAgent()
        obs, info = env.reset(seed=0, options={"task": task, "snapshot": snapshot})
        assert info["view"] == view and obs["screen"].shape == (256, 128, 3)
        agent.reset(env.task, info)
        while True:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            if terminated or truncated:
                break
        assert terminated, task
    stretched = make_env(EnvConfig(snapshots=[snapshot]), "representative")
    assert stretched.reset(seed=0, options={"snapshot": snapshot})[1]["view"] is None


def test_the_parser_reads_actions_as_its_spec_says() -> None:
    # touch and lift 0.1 apart in y: with y doubled (the default) 0.2 >= 0.14, a swipe; plain distance under 0.2, a tap
    action = [0.0, 0.0, 0.2, 0.0]
    assert ActionParser.of(ObsActionSpec()).parse(action).kind == "swipe"
    assert ActionParser.of(SMALL).parse(action).kind == "tap"
    assert ObsActionSpec().gesture_distance((0.5, 0.5), (0.6, 0.5)) == pytest.approx(0.2)


def test_policy_settings_of_earlier_versions_read_with_the_default_reading() -> None:
    model, spec = from_dict({"model": {}, "image_size": [64, 32]})
    assert spec == ObsActionSpec(64, 32) and model == ModelConfig()
    # a checkpoint that kept the reading beside its settings (train.py before the spec) keeps it
    assert from_dict({"model": {}, "image_size": [64, 32]}, {"tap_threshold": 0.3, "y_scale": 1.0})[1] == \
        ObsActionSpec(64, 32, 0.3, 1.0)
    assert from_dict(to_dict(ModelConfig(), SMALL))[1] == SMALL


@pytest.mark.integration
def test_the_datasets_spec_reaches_the_policy_and_its_evaluation(tmp_path: Path, caplog) -> None:
    from vlui.jobs import collect, evaluate, train

    data = tmp_path / "data"
    collect.run(compose("collect", [f"paths.data_dir={data}", "dataset=small", "tasks=[airplane_on]",
                                    "env.snapshots=[000,001]", "env.num_envs=1", "env.observation_height=48",
                                    "env.observation_width=24", "env.tap_threshold=0.2", "env.y_distance_scale=1.0"],
                        output_dir=tmp_path / "collect"))
    assert dataset_spec(read_info(data / "small")) == SMALL
    # no screen size or reading given to train: the dataset's
    result = train.run(compose("train", ["debug=tiny", "data.observation_height=null", "data.observation_width=null",
                                         f"paths.data_dir={data}", "data.name=small",
                                         f"paths.checkpoint_dir={tmp_path}/ckpt", "logger=csv"],
                               output_dir=tmp_path / "run"))
    config = json.loads((Path(result["policy"]) / "config.json").read_text())
    assert ObsActionSpec.from_dict(config["policy"]["spec"]) == SMALL
    assert load_policy(result["policy"]).spec == SMALL
    assert load_policy(Path(result["checkpoint_dir"]) / "last.ckpt").spec == SMALL
    # evaluated with env's defaults (256x128, 0.14): its phones show 48x24 screens (the policy refuses any other
    # size) and read its actions as it learnt them
    with caplog.at_level(logging.INFO, logger="vlui.jobs.evaluate"):
        out = evaluate.run(compose("evaluate", [f"checkpoint={result['policy']}", "tasks=[airplane_on]",
                                                "env.snapshots=[000]", "runs=1", "adaptive_metrics=false"],
                                   output_dir=tmp_path / "eval"))
    assert out["episodes"] == 1
    assert "tap_threshold 0.2, y_scale 1.0" in caplog.text


@pytest.mark.integration
def test_training_at_another_size_resizes_the_datasets_screens(tmp_path: Path, tiny_dataset: Path) -> None:
    from vlui.jobs import train

    overrides = ["debug=tiny", f"paths.data_dir={tiny_dataset.parent}", f"data.name={tiny_dataset.name}",
                 f"paths.checkpoint_dir={tmp_path}/ckpt", "logger=csv"]
    result = train.run(compose("train", [*overrides, "data.observation_height=40", "data.observation_width=20"],
                               output_dir=tmp_path / "run"))
    policy = load_policy(result["policy"])
    assert policy.spec == ObsActionSpec(40, 20)
    assert policy.select_action(np.zeros((1, 40, 20, 3), np.uint8), ["turn on airplane mode"]).shape == (1, 4)
    with pytest.raises(VluiError, match="set both to train at another size than the dataset's 256x128, or neither"):
        train.run(compose("train", [*overrides, "data.observation_height=40", "data.observation_width=null",
                                    "run_name=half"], output_dir=tmp_path / "run2"))


def test_an_episodes_memory_keeps_its_last_steps_most_recent_first_and_starts_afresh() -> None:
    memory = Memory(steps=3, screens=True)
    now = np.zeros((1, 4, 2, 3), np.uint8)
    past = Memory.batch([memory], now)
    assert past.actions.shape == (1, 3, 4) and past.screens.shape == (1, 3, 4, 2, 3) and not past.valid.any()
    for i in range(1, 5):  # four steps: screen i, action (i, i, i, i) / 10
        memory.add(np.full((4, 2, 3), i, np.uint8), np.full(4, i / 10))
    past = Memory.batch([memory], now)
    assert past.valid.all() and past.steps == 3
    assert np.allclose(past.actions[0, :, 0], [0.4, 0.3, 0.2])  # the last three, the most recent first
    assert [int(s.max()) for s in past.screens[0]] == [4, 3, 2]
    memory.reset()  # a new episode remembers nothing of the last
    assert not Memory.batch([memory], now).valid.any()


def test_a_batch_of_memories_is_one_past_and_a_step_without_a_gesture_is_missing() -> None:
    fresh, two = Memory(2), Memory(2)
    two.add(np.zeros((4, 2, 3), np.uint8), np.array([0.1, 0.2, 0.3, 0.4]))
    two.add(np.zeros((4, 2, 3), np.uint8), None)  # a malformed text action: the step counts, no dual-gesture
    past = Memory.batch([fresh, two], np.zeros((2, 4, 2, 3), np.uint8))
    assert past.screens is None  # kept only by a memory of screens
    assert past.valid.tolist() == [[False, False], [False, True]]
    assert np.allclose(past.actions[1, 1], [0.1, 0.2, 0.3, 0.4]) and np.isnan(past.actions[0]).all()
    assert Memory.batch([Memory(0), Memory(0)], np.zeros((2, 4, 2, 3), np.uint8)) is None  # a memoryless agent
    with pytest.raises(VluiError, match="must keep the same steps"):
        Memory.batch([Memory(2), Memory(3)], np.zeros((2, 4, 2, 3), np.uint8))


def test_a_memory_of_repeats_knows_every_gesture_taken_on_a_screen_however_long_ago() -> None:
    memory = Memory(steps=1, repeats=True)
    home, app = np.zeros((4, 2, 3), np.uint8), np.ones((4, 2, 3), np.uint8)
    wrong_app, back = np.array([0.1, 0.2, 0.1, 0.2]), np.array([0.9, 0.0, 0.9, 0.0])
    for screen, action in ((home, wrong_app), (app, back), (home, -wrong_app), (app, back)):
        memory.add(screen, action)
    assert np.allclose(memory.tried(home.copy()), [wrong_app, -wrong_app])  # the same pixels are the same screen
    assert np.allclose(memory.tried(app), [back, back]) and memory.tried(np.full((4, 2, 3), 2, np.uint8)).shape == (0, 4)
    past = Memory.batch([memory, Memory(steps=1, repeats=True)], np.stack([home, home]))
    assert np.allclose(past.tried[0], [wrong_app, -wrong_app]) and past.tried[1].shape == (0, 4)
    assert past.valid.tolist() == [[True], [False]]  # the last step as before
    memory.add(home, None)  # a step without a dual-gesture tried nothing
    assert len(memory.tried(home)) == 2
    memory.reset()  # a new episode has tried nothing
    assert memory.tried(home).shape == (0, 4)
    assert Memory.batch([Memory(0, repeats=True)], home[None]).tried[0].shape == (0, 4)  # without past steps too
    assert Memory.batch([Memory(0), Memory(0)], np.stack([home, home])) is None
