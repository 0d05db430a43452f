"""Every config composes, every option of every group composes, and the schemas reject mistakes."""

from __future__ import annotations

import re
from dataclasses import asdict, fields
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException, MissingConfigException
from omegaconf import OmegaConf

from tests.conftest import run_python
from vlui.cli import CONFIG_DIR, compose
from vlui.config import check_settings
from vlui.agents import make_agent
from vlui.agents.settings import ExpertAgentConfig, MLLMAgentConfig, PolicyAgentConfig, TextAgentConfig
from vlui.errors import VluiError

JOBS = ["train", "collect", "evaluate"]
# The groups each job's defaults list selects; every option in them must compose into that job.
GROUPS = {
    "train": ["algo", "model", "model/vision", "model/text", "data", "env", "trainer", "logger", "callbacks",
              "experiment", "debug"],
    "collect": ["env", "agent"],
    "evaluate": ["env", "agent"],
}


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))


def cases():
    for job in JOBS:
        yield pytest.param(job, [], id=f"{job}")
        for group in GROUPS[job]:
            for option in options(group):
                yield pytest.param(job, [f"{group}={option}"], id=f"{job}:{group}={option}")


@pytest.mark.slow
@pytest.mark.parametrize(("job", "overrides"), list(cases()))
def test_every_config_composes_and_resolves(job: str, overrides: list[str], tmp_path: Path) -> None:
    cfg = compose(job, overrides, output_dir=tmp_path)
    resolved = OmegaConf.to_container(cfg, resolve=True)  # every interpolation resolves
    assert resolved["task_name"] == job
    assert Path(resolved["paths"]["root_dir"]) == CONFIG_DIR.parent
    assert not OmegaConf.missing_keys(cfg)


def test_every_group_has_options() -> None:
    for groups in GROUPS.values():
        for group in groups:
            assert options(group), f"{group} has no options"


def test_experiments_reproduce_the_paper_recipes(tmp_path: Path) -> None:
    bc = compose("train", ["experiment=bmoca_bc"], output_dir=tmp_path)
    assert (bc.algo.name, bc.trainer.max_steps, bc.data.batch_size, bc.algo.optim.lr) == ("bc", 4000, 512, 3e-4)
    assert bc.algo.optim.scheduler == "cosine" and bc.data.success_only  # successful demonstrations, as the paper's
    # an ImageNet-pretrained EfficientNet, fine-tuned (offline: lite0's shipped weights stand in for b0's), and a
    # frozen pretrained text encoder (MiniLM stands in for the paper's Android T5)
    assert (bc.model.vision.name, bc.model.vision.pretrained, bc.model.vision.freeze) == (
        "tf_efficientnet_lite0", "package", False)
    assert bc.model.text.kind == "minilm" and bc.model.head == "mlp" and not bc.model.positions
    # 256x128 screens: the dataset's (collected at env.observation_*), not resized by data.observation_*
    assert (bc.env.observation_height, bc.env.observation_width, bc.model.hidden_dim) == (256, 128, 768)
    assert (bc.data.observation_height, bc.data.observation_width) == (None, None)
    assert list(bc.model.head_dims) == [1024, 1024]
    iql = compose("train", ["experiment=bmoca_iql"], output_dir=tmp_path)
    assert (iql.algo.name, iql.trainer.max_steps, iql.data.batch_size) == ("iql", 20000, 512)
    assert iql.model.vision.pretrained == "package" and not iql.data.success_only  # IQL learns from failures too
    real_b0 = compose("train", ["experiment=bmoca_bc", "model/vision=efficientnet_b0", "model.vision.pretrained=timm"],
                      output_dir=tmp_path)
    assert (real_b0.model.vision.name, real_b0.model.vision.pretrained) == ("efficientnet_b0", "timm")
    # the paper's encoders fine-tuned on shifted screens, not the default's frozen one
    assert not bc.model.vision.freeze and not iql.model.vision.freeze
    assert bc.data.augment.random_shift == iql.data.augment.random_shift == 4


def test_a_newcomers_train_command_learns_offline_in_minutes(tmp_path: Path) -> None:
    # `python train.py algo=iql` as a newcomer types it: both encoders pretrained and shipped on PyPI, the image one
    # frozen with no augmentation (its features are computed once), 1,000 steps (about 8 minutes on 2 cores)
    for cfg in (compose("train", ["algo=iql"], output_dir=tmp_path), compose("train", [], output_dir=tmp_path)):
        vision, text = cfg.model.vision, cfg.model.text
        assert (vision.name, vision.pretrained, vision.freeze, text.kind) == (
            "tf_efficientnet_lite0", "package", True, "minilm")
        assert (cfg.data.augment.random_shift, cfg.data.augment.color_jitter) == (0, 0.0)
        assert cfg.trainer.max_steps == 1000
    # the paper's schedule from random weights is one named experiment
    paper = compose("train", ["experiment=random_init", "algo=iql"], output_dir=tmp_path)
    assert (paper.model.vision.name, paper.model.vision.pretrained, paper.model.vision.freeze) == (
        "efficientnet_b0", None, False)
    assert (paper.model.text.kind, paper.model.text.name_or_path, paper.model.text.size) == ("t5", None, "small")
    assert (paper.data.augment.random_shift, paper.trainer.max_steps, paper.algo.name) == (4, 4000, "iql")


def test_command_line_overrides_win_over_experiments(tmp_path: Path) -> None:
    cfg = compose("train", ["experiment=quickstart", "algo=iql", "trainer.max_steps=7"], output_dir=tmp_path)
    assert cfg.algo.name == "iql" and cfg.trainer.max_steps == 7 and cfg.experiment == "quickstart"


def test_evaluate_defaults_to_the_bmoca_protocol(tmp_path: Path) -> None:
    cfg = compose("evaluate", [], output_dir=tmp_path)
    assert (cfg.tasks, cfg.env.snapshots, cfg.runs, cfg.agent.name) == ("representative", "test", 3, "policy")
    collect = compose("collect", [], output_dir=tmp_path)
    assert (collect.tasks, collect.env.snapshots, collect.agent.name) == ("representative", "train", "expert")


def test_checkpoints_go_to_experiment_and_run(tmp_path: Path) -> None:
    cfg = compose("train", ["experiment=bmoca_bc", "seed=3"], output_dir=tmp_path)
    dirpath = Path(cfg.callbacks.model_checkpoint.dirpath)
    assert dirpath.parts[-3:] == ("checkpoints", "bmoca_bc", "bc-tf_efficientnet_lite0-seed3")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("algo.bogus=1", "Key 'bogus' not in 'BCConfig'"),
        ("algo.optim.lr=fast", "could not be converted to Float"),
        ("model.vision.freeze=maybe", "is not a valid bool"),
        ("trainer.max_step=10", "Key 'max_step' not in 'TrainerConfig'"),
        ("data.batch_size=big", "could not be converted to Integer"),
        ("env.snapshot=test", "Key 'snapshot' not in 'EnvConfig'"),
    ],
)
def test_schema_rejects_unknown_keys_and_wrong_types(override: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigCompositionException) as err:
        compose("train", [override], output_dir=tmp_path)
    assert message in str(err.value.__cause__) or message in str(err.value)


@pytest.mark.parametrize(
    ("job", "override", "message"),
    [
        ("evaluate", "+env.num_env=2", "unknown setting env.num_env: did you mean env.num_envs?"),
        ("evaluate", "+num_envs=2", "unknown setting num_envs: did you mean env.num_envs?"),
        ("train", "+data.batchsize=8", "unknown setting data.batchsize: did you mean data.batch_size?"),
        ("train", "+model.vision.fre=true", "unknown setting model.vision.fre: did you mean model.vision.freeze?"),
        ("collect", "+env.zzz=1", "unknown setting env.zzz: env takes: backend, snapshots,"),
    ],
)
def test_a_key_added_with_plus_must_be_a_setting(job: str, override: str, message: str, tmp_path: Path) -> None:
    # Hydra lets `+key=value` add any key to a structured config; the job refuses it before any work starts
    cfg = compose(job, [override], output_dir=tmp_path)
    with pytest.raises(VluiError, match=re.escape(message)):
        check_settings(cfg)


def test_every_shipped_config_holds_only_settings(tmp_path: Path) -> None:
    for job in ("train", "collect", "evaluate"):
        check_settings(compose(job, [], output_dir=tmp_path))
    for experiment in sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml")):
        check_settings(compose("train", [f"experiment={experiment}"], output_dir=tmp_path))


@pytest.mark.slow
def test_a_misspelt_setting_is_one_line_from_the_command_line(tmp_path: Path) -> None:
    out = run_python("evaluate.py", "agent=random", "+env.num_env=2", f"hydra.run.dir={tmp_path}")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "unknown setting env.num_env: did you mean env.num_envs?" in out.stderr


OLD_NAMES = [("evaluate", "parallel_envs"), ("train", "dagger.envs"), ("train", "algo.envs")]
SIDE_BY_SIDE = "(one name for the environments side by side, in every job)"


@pytest.mark.parametrize(("job", "old"), OLD_NAMES)
@pytest.mark.parametrize("plus", ["", "+", "++"])
def test_an_old_name_for_the_environments_side_by_side_is_refused_with_the_new_one(job: str, old: str, plus: str,
                                                                                    tmp_path: Path) -> None:
    with pytest.raises(VluiError) as err:
        compose(job, [f"{plus}{old}=8"], output_dir=tmp_path)
    assert str(err.value) == f"{old} is now env.num_envs {SIDE_BY_SIDE}: write env.num_envs=8"


@pytest.mark.parametrize("side", ["height", "width"])
def test_the_old_name_of_the_training_screens_size_is_refused_with_the_new_one(side: str, tmp_path: Path) -> None:
    with pytest.raises(VluiError) as err:
        compose("train", [f"data.image_{side}=384"], output_dir=tmp_path)
    assert str(err.value) == (f"data.image_{side} is now data.observation_{side} (one name for a policy's screen size: "
                              f"env.observation_height/width when collecting and evaluating): write "
                              f"data.observation_{side}=384")
    assert getattr(compose("train", [f"data.observation_{side}=384"], output_dir=tmp_path).data,
                   f"observation_{side}") == 384


def test_an_old_name_put_in_a_composed_config_is_refused_too(tmp_path: Path) -> None:
    from omegaconf import open_dict

    cfg = compose("evaluate", [], output_dir=tmp_path)
    with open_dict(cfg):  # as a notebook might, past compose()
        cfg.parallel_envs = 4
    with pytest.raises(VluiError, match=re.escape(f"parallel_envs is now env.num_envs {SIDE_BY_SIDE}: write "
                                                  "env.num_envs=4")):
        check_settings(cfg)


@pytest.mark.parametrize(("job", "n"), [("collect", 2), ("evaluate", 16), ("train", 16)])
def test_each_job_keeps_its_own_number_of_environments_side_by_side(job: str, n: int, tmp_path: Path) -> None:
    assert compose(job, [], output_dir=tmp_path).env.num_envs == n
    assert compose(job, ["env.num_envs=8"], output_dir=tmp_path).env.num_envs == 8


def test_ppo_brings_its_own_number_of_phones_side_by_side_and_the_command_line_wins(tmp_path: Path) -> None:
    assert compose("train", ["algo=ppo"], output_dir=tmp_path).env.num_envs == 32
    assert compose("train", ["experiment=quickstart", "algo=ppo"], output_dir=tmp_path).env.num_envs == 32
    assert compose("train", ["algo=ppo", "env.num_envs=4"], output_dir=tmp_path).env.num_envs == 4
    assert compose("train", ["algo=iql"], output_dir=tmp_path).env.num_envs == 16


@pytest.mark.slow
@pytest.mark.parametrize(("script", "old"), [("evaluate.py", "parallel_envs"), ("train.py", "+dagger.envs"),
                                             ("collect.py", "algo.envs")])
def test_an_old_name_is_one_line_from_the_command_line(script: str, old: str, tmp_path: Path) -> None:
    out = run_python(script, f"{old}=8", f"hydra.run.dir={tmp_path}")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        f"error: {old.lstrip('+')} is now env.num_envs {SIDE_BY_SIDE}: write env.num_envs=8"]


def test_unknown_group_option_lists_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(MissingConfigException) as err:
        compose("train", ["algo=sac"], output_dir=tmp_path)
    assert all(name in str(err.value) for name in ("bc", "iql", "ppo"))


# Groups whose settings a library reads, not vlui: Lightning's Trainer and loggers and callbacks (instantiated from
# their _target_), and Hydra's own.
READ_BY_LIBRARIES = ("trainer", "logger", "callbacks", "hydra")


def _leaves(node, prefix: str = ""):
    for key, value in node.items():
        if isinstance(value, dict) and value:
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


@pytest.mark.slow
def test_every_setting_is_read_by_the_code(tmp_path: Path) -> None:
    """A setting in configs/ that no code reads is a knob that does nothing: every leaf of every composed config
    (each option of each group) must be read by name somewhere in vlui/ outside the schemas, as an attribute, an
    item or a quoted key."""
    import re

    files = sorted((CONFIG_DIR.parent / "vlui").rglob("*.py"))
    schemas = [p for p in files if p.name == "config.py" or p.parts[-2:] == ("models", "settings.py")]
    source = "\n".join(p.read_text(encoding="utf-8") for p in files if p not in schemas)
    # in the schemas, quoted names are their limits and choices; a method reading a setting is an attribute
    attributes = "\n".join(p.read_text(encoding="utf-8") for p in schemas)
    keys: set[str] = set()
    # a setting other settings interpolate (Hydra's run dir: ${task_name}) is read by them
    interpolated = " ".join(p.read_text(encoding="utf-8") for p in CONFIG_DIR.rglob("*.yaml"))
    for job, overrides in ((c.values[0], c.values[1]) for c in cases()):
        cfg = OmegaConf.to_container(compose(job, overrides, output_dir=tmp_path), resolve=False)
        keys |= {k for k in _leaves(cfg) if not k.startswith(READ_BY_LIBRARIES) and not k.endswith("_target_")}
        interpolated += str(cfg)
    interpolated = set(re.findall(r"\$\{([\w.]+)\}", interpolated))

    def read(key: str) -> bool:
        name = re.escape(key.rsplit(".", 1)[-1])
        return bool(key in interpolated or re.search(rf"\.{name}\b|[\"']{name}[\"']", source)
                    or re.search(rf"self\.{name}\b", attributes))

    unread = sorted(k for k in keys if not read(k))
    assert not unread, f"settings no code reads: {', '.join(unread)}"


def test_config_files_say_only_what_differs_from_their_schema() -> None:
    # a default is written once, in its dataclass: a YAML repeating it would go on saying the old value when the
    # dataclass changes (python train.py --cfg job shows every setting); the jobs' own files (train.yaml, ...) too
    import dataclasses

    from vlui.agents.settings import AGENT_TYPES
    from vlui.algos.settings import ALGORITHMS
    from vlui.config import SCHEMAS

    schemas = (SCHEMAS | {f"schema/algo/{name}": a.settings for name, a in ALGORITHMS.items()}
               | {f"schema/agent/{name}": a.settings for name, a in AGENT_TYPES.items()})
    repeated, checked, jobs = [], 0, set()
    for path in sorted(CONFIG_DIR.rglob("*.yaml")):
        yaml = OmegaConf.load(path)
        extends = [d for d in yaml.get("defaults") or [] if isinstance(d, str) and (d.startswith("/schema/")
                                                                                     or d in SCHEMAS)]
        if not extends:
            continue
        checked += 1
        jobs.add(path.name)
        defaults = schemas[extends[0].split("@")[0].lstrip("/")]()
        for key in yaml:
            if key == "defaults" or not hasattr(defaults, key):
                continue
            node = yaml._get_node(key)
            value = OmegaConf.to_container(node) if OmegaConf.is_config(node) else node._value()
            default = getattr(defaults, key)
            default = dataclasses.asdict(default) if dataclasses.is_dataclass(default) else default
            if value == (list(default) if isinstance(default, tuple) else default):
                repeated.append(f"{path.relative_to(CONFIG_DIR)}: {key}")
    assert checked >= 24 and {"train.yaml", "collect.yaml", "evaluate.yaml", "study.yaml"} <= jobs, jobs
    assert not repeated, repeated


def test_agent_settings_added_later_leave_the_recipes_of_earlier_datasets_as_they_were() -> None:
    policy, text = asdict(PolicyAgentConfig()), asdict(TextAgentConfig())
    # at their old behaviour they are not recorded, so a dataset collected before them resumes
    assert "avoid_repeats" not in PolicyAgentConfig.in_recipe(policy)
    assert "actions" not in TextAgentConfig.in_recipe(text) and TextAgentConfig.in_recipe(text)["name"] == "text"
    assert PolicyAgentConfig.in_recipe({**policy, "avoid_repeats": True})["avoid_repeats"] is True  # set: recorded


@pytest.mark.parametrize(("job", "overrides", "message"), [
    ("collect", ["agent.model=x"], "agent=expert has no setting agent.model; its settings: name, tap_jitter, "
                                   "random_action_prob, wrong_action_prob"),
    ("evaluate", ["agent=expert", "+agent.model=x"], "agent=expert has no setting agent.model; its settings: name,"),
    ("evaluate", ["agent.avoid_repeats=true", "agent=random"], "agent=random has no setting agent.avoid_repeats; "
                                                               "its settings: name"),
    ("evaluate", ["agent=text", "agent.set_of_marks=true"], "agent=text has no setting agent.set_of_marks; its "
                                                            "settings: name, base_url, url, model,"),
])
def test_a_setting_the_chosen_agent_type_does_not_have_is_one_line_naming_its_settings(
        job: str, overrides: list[str], message: str, tmp_path: Path) -> None:
    with pytest.raises(VluiError) as err:
        compose(job, overrides, output_dir=tmp_path)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_each_agent_type_has_only_its_own_settings() -> None:
    assert [f.name for f in fields(ExpertAgentConfig)] == ["name", "tap_jitter", "random_action_prob",
                                                           "wrong_action_prob"]
    assert [f.name for f in fields(PolicyAgentConfig)] == ["name", "checkpoint", "device", "avoid_repeats"]
    text = [f.name for f in fields(TextAgentConfig)]
    assert [f.name for f in fields(MLLMAgentConfig)] == [*text, "screenshot_height", "screenshot_width",
                                                         "set_of_marks"]
    with pytest.raises(VluiError, match=r"^agent=expert has no setting agent.checkpoint; its settings: name, "):
        make_agent({"name": "expert", "checkpoint": "checkpoints/x"})


@pytest.mark.parametrize(("old", "new"), [("image_height", "screenshot_height"), ("image_width", "screenshot_width")])
@pytest.mark.parametrize("plus", ["", "+"])
def test_the_mllms_former_image_size_is_refused_with_the_screenshots_name(old: str, new: str, plus: str,
                                                                          tmp_path: Path) -> None:
    with pytest.raises(VluiError) as err:
        compose("evaluate", ["agent=mllm", f"{plus}agent.{old}=256"], output_dir=tmp_path)
    assert str(err.value) == (f"agent.{old} is now agent.{new} (the MLLM's screenshot; the observation's size is "
                              f"env.observation_height/width): write agent.{new}=256")
    assert getattr(compose("evaluate", ["agent=mllm", f"agent.{new}=256"], output_dir=tmp_path).agent, new) == 256


@pytest.mark.slow
def test_a_setting_the_agent_does_not_have_is_one_line_from_the_command_line(tmp_path: Path) -> None:
    out = run_python("evaluate.py", "agent=expert", "agent.model=x", f"hydra.run.dir={tmp_path}")
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "error: agent=expert has no setting agent.model; its settings: name, tap_jitter, random_action_prob, "
        "wrong_action_prob"]
