"""Online RL (train.py algo=ppo): it improves a policy from the success detectors alone, resumes exactly, runs over
ADB unchanged, and refuses what it cannot do in one line."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import ROOT
from tests.tapper import SNAPSHOT, TASK, clock_probability, uniform_tapper
from vlui.cli import compose
from vlui.env.settings import EnvConfig
from vlui.env.env import make_env
from vlui.errors import VluiError
from vlui.jobs import train
from vlui.models.policy import VLUIPolicy, export_policy, load_policy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.spec import ObsActionSpec

@pytest.fixture(scope="module")
def weak_policy(tmp_path_factory) -> Path:
    """A deliberately weak policy: it taps a uniformly random cell of its 4x2 grid (tests/tapper.py)."""
    return uniform_tapper(tmp_path_factory.mktemp("weak"))


def ppo(tmp_path: Path, init: Path, *extra: str, run: str = "run") -> list[str]:
    return [f"paths.root_dir={tmp_path}", f"paths.checkpoint_dir={tmp_path}/ckpt", "algo=ppo", f"init={init}",
            f"algo.tasks=[{TASK}]", f"env.snapshots=[{SNAPSHOT}]", f"algo.eval_snapshots=[{SNAPSHOT}]",
            "algo.eval_every=1", "algo.episodes=32", "env.num_envs=16", "algo.minibatch=32", "algo.optim.lr=3e-3",
            "algo.checkpoint_every=1", f"run_name={run}", "trainer.enable_progress_bar=false", "logger=csv", *extra]


def demo_loss(policy_dir: Path, dataset: Path) -> float:
    """The policy's BC loss (the pointer head's) on every step of a dataset's demonstrations."""
    from vlui.algos.losses import pointer_loss
    from vlui.data.datamodule import DemoDataModule

    policy = load_policy(policy_dir)
    demos = DemoDataModule(str(dataset), val_fraction=0.0, image_height=64, image_width=32, on_device=False)
    demos.setup()
    steps = demos.train_set
    text, mask = policy.text.lookup([demos.instructions[i] for i in steps.instruction])
    with torch.no_grad():
        out = policy.head(policy.encoder(demos.frames[demos.frame_of[steps.obs]], text, mask))
        return float(pointer_loss(out, steps.actions, 0.14, 2.0).mean())


def metrics(run_dir: Path) -> list[dict[str, str]]:
    with open(next(run_dir.rglob("metrics.csv")), newline="") as f:
        return list(csv.DictReader(f))


def read_curve(run: Path) -> list[dict[str, str]]:
    with open(run / "curve.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def trained(weak_policy: Path, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("ppo")
    result = train.run(compose("train", ppo(tmp, weak_policy, "algo.iterations=4"), output_dir=tmp / "out"))
    return {"result": result, "dir": tmp, "metrics": metrics(tmp / "out")}


@pytest.mark.integration
@pytest.mark.slow
def test_ppo_teaches_a_weak_policy_an_easy_task_from_the_detector_alone(weak_policy: Path, trained: dict) -> None:
    evals = [float(r["eval/success"]) for r in trained["metrics"] if r.get("eval/success")]
    # before any update the deterministic policy taps cell (0, 0), which opens nothing; after, it opens the Clock
    assert evals[0] == 0.0 and evals[-1] == 1.0
    before, after = clock_probability(weak_policy), clock_probability(Path(trained["result"]["policy"]))
    assert before == pytest.approx(1 / 8) and after > 2 * before
    rollouts = [float(r["rollout/success"]) for r in trained["metrics"] if r.get("rollout/success")]
    assert len(rollouts) == 4 and rollouts[-1] > rollouts[0]  # the sampling policy succeeds more often too
    config = load_policy(trained["result"]["policy"])  # an ordinary export: evaluate.py loads it
    assert config.cfg.head == "pointer"
    curve = read_curve(Path(trained["result"]["checkpoint_dir"]))
    assert [r["iteration"] for r in curve] == ["0", "1", "2", "3", "4"]  # each rollout, then the final evaluation
    assert curve[0]["heldout_success"] == "0.0" and curve[-1]["heldout_success"] == "1.0"
    assert [float(r["seconds"]) for r in curve] == sorted(float(r["seconds"]) for r in curve)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_ppo_raises_the_chance_of_success_in_every_seed_with_a_margin(weak_policy: Path, tmp_path: Path) -> None:
    # the first action decides the episode: the chance of touching the Clock's cell is the chance of success, exactly
    # (no sampled episode's 0 or 1); three training seeds, each well above the weak policy's 1 in 8
    before = clock_probability(weak_policy)
    assert before == pytest.approx(1 / 8)
    after = []
    for seed in (1, 2, 3):
        run = tmp_path / f"seed{seed}"
        result = train.run(compose("train", ppo(run, weak_policy, "algo.iterations=6", f"seed={seed}"),
                                   output_dir=run / "out"))
        after.append(clock_probability(Path(result["policy"])))
    assert min(after) > 2 * before and float(np.mean(after)) > 3 * before, after


@pytest.mark.integration
@pytest.mark.slow
def test_the_filtered_objective_imitates_its_successes(weak_policy: Path, tmp_path: Path) -> None:
    result = train.run(compose("train", ppo(tmp_path, weak_policy, "algo.iterations=3", "algo.objective=filtered",
                                            "algo.eval_every=0"), output_dir=tmp_path / "out"))
    assert clock_probability(Path(result["policy"])) > 2 * clock_probability(weak_policy)


@pytest.mark.integration
@pytest.mark.slow
def test_ppo_resumed_from_a_checkpoint_ends_with_the_same_weights(weak_policy: Path, trained: dict,
                                                                   tmp_path: Path) -> None:
    first = train.run(compose("train", ppo(tmp_path, weak_policy, "algo.iterations=2"), output_dir=tmp_path / "a"))
    assert (Path(first["checkpoint_dir"]) / "last.ckpt").exists()
    resumed = train.run(compose("train", ppo(tmp_path, weak_policy, "algo.iterations=4"), output_dir=tmp_path / "b"))
    ran = [r["iteration"] for r in metrics(tmp_path / "b") if r.get("rollout/success")]
    assert ran == ["2.0", "3.0"]  # only the iterations the first run had not done
    # the first run's final evaluation (iteration 2, before the resumed run redid it) is not in the curve twice
    assert [r["iteration"] for r in read_curve(Path(resumed["checkpoint_dir"]))] == ["0", "1", "2", "3", "4"]
    a = load_file(str(Path(resumed["policy"]) / "model.safetensors"))
    b = load_file(str(Path(trained["result"]["policy"]) / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.integration
@pytest.mark.slow
def test_ppo_killed_mid_way_resumes_to_the_same_weights_in_a_new_process(weak_policy: Path, trained: dict,
                                                                        tmp_path: Path) -> None:
    # a real SIGKILL to the process group after two iterations' checkpoints; the same command in a new process ends
    # bit for bit where the uninterrupted run (in this process) ended
    args = [sys.executable, "train.py", *ppo(tmp_path, weak_policy, "algo.iterations=4"),
            f"hydra.run.dir={tmp_path}/out"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    ckpts = tmp_path / "ckpt"
    deadline = time.time() + 600  # a guard against a hang
    while time.time() < deadline and len(list(ckpts.rglob("step*.ckpt"))) < 2 and proc.poll() is None:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not list(ckpts.rglob("model.safetensors"))  # it died before the end
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "resuming from" in out.stdout
    (policy,) = ckpts.rglob("policy/model.safetensors")
    a, b = load_file(str(policy)), load_file(str(Path(trained["result"]["policy"]) / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow  # 8 s: PPO iterations over a served phone
def test_ppo_runs_over_adb_as_on_the_simulated_phone(weak_policy: Path, tmp_path: Path) -> None:
    from vlui.served.private_adb import PrivateAdb

    with PrivateAdb("000") as adb:
        over_adb = ["env=adb", f"env.serial={adb.serial}", f"env.adb_port={adb.adb_port}",
                    f"env.console_token_file={adb.home / '.emulator_console_auth_token'}", "env.log_tags=all"]
        # one device over ADB, so one phone in process too: the episodes draw the same samples in the same order
        common = ["algo.iterations=1", "algo.episodes=4", "algo.eval_every=0", "env.num_envs=1"]
        via_adb = train.run(compose("train", ppo(tmp_path, weak_policy, *common, *over_adb, run="adb"),
                                    output_dir=tmp_path / "adb"))
    in_process = train.run(compose("train", ppo(tmp_path, weak_policy, *common, run="sim"), output_dir=tmp_path / "sim"))
    rows = {name: metrics(tmp_path / name)[0] for name in ("adb", "sim")}
    for key in ("rollout/success", "rollout/episode_steps", "rollout/return"):
        assert rows["adb"][key] == rows["sim"][key], key  # the same episodes, step for step
    # both updated the policy; not to the same weights, since the screens' pixels differ: the simulated phone renders
    # its observations at their size, over ADB the full screenshot is downscaled
    start = load_file(str(weak_policy / "model.safetensors"))
    for run in (via_adb, in_process):
        trained = load_file(str(Path(run["policy"]) / "model.safetensors"))
        assert not torch.equal(trained["head.cells.1.weight"], start["head.cells.1.weight"])


@pytest.mark.parametrize(("overrides", "message"), [
    (["algo=ppo"], "algo=ppo fine-tunes a trained policy online: add init="),
    (["algo=bc", "init=somewhere"], "init= starts online RL from a trained policy (algo=ppo)"),
    (["algo=ppo", "init=somewhere", "dagger.rounds=2"], "dagger.rounds=2 with algo=ppo"),
    (["algo=ppo", "init=nowhere/at/all"], "is not a policy export"),
    (["algo=ppo", "init=x", "algo.clip=0"], "algo.clip must be greater than 0"),
    (["algo=ppo", "init=x", "data.augment.zoom=0.3"], "data.augment.zoom zooms the dataset's screens for BC or IQL"),
    (["data.augment.zoom=1.5"], "data.augment.zoom must be"),
    (["algo=ppo", "init=x", "data.balance=kind"], "data.balance balances BC or IQL's batches"),
    (["data.balance=colour"], "data.balance must be a phone setting, one of held_out_count, device, kind,"),
])
def test_what_ppo_cannot_do_is_refused_in_one_line(overrides: list[str], message: str, tmp_path: Path) -> None:
    with pytest.raises(VluiError) as err:
        train.run(compose("train", [f"paths.root_dir={tmp_path}", *overrides], output_dir=tmp_path / "out"))
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("phones", ["[030,val:2]", "[030,105]"])
def test_ppo_never_trains_on_validation_phones_or_test_snapshots(phones: str, weak_policy: Path,
                                                                 tmp_path: Path) -> None:
    with pytest.raises(VluiError) as err:
        train.run(compose("train", ppo(tmp_path, weak_policy, f"env.snapshots={phones}"), output_dir=tmp_path / "out"))
    held = "val-0-0, val-0-1" if "val" in phones else "105"
    assert str(err.value).startswith(f"env.snapshots (the phones PPO trains on) holds validation or test phones ({held}): "
                                     "a policy trained on them is measured on phones it has seen")
    assert not (tmp_path / "ckpt").exists()  # refused before a single episode


def test_ppo_samples_what_the_distribution_says_and_evaluates_its_mode(weak_policy: Path) -> None:
    from vlui.algos.online import Actor
    from vlui.algos.ppo import PPOModule
    from vlui.jobs.online import OnlineEpisodes
    from vlui.models.settings import to_dict

    start = load_policy(weak_policy)
    module = PPOModule(to_dict(start.cfg, start.spec), {"log_std_init": -1.0}, seed=0)
    module.policy.load_state_dict(start.state_dict())
    env = EnvConfig(snapshots=[SNAPSHOT], observation_height=64, observation_width=32)
    module.use(OnlineEpisodes(env, [TASK], None, episodes=1, seed=0))
    screen = make_env(env, [TASK]).reset(seed=0, options={"task": TASK, "snapshot": SNAPSHOT})[0]
    screens, instructions = np.stack([screen["screen"]] * 512), [screen["instruction"]] * 512
    sampled = Actor(module, True, torch.Generator().manual_seed(0))(screens, instructions)
    mode = Actor(module, False)(screens[:2], instructions[:2])
    assert np.array_equal(mode[0], mode[1]) and np.allclose(mode[0], start.select_action(screens[:1],
                                                                                          instructions[:1])[0])
    assert len({tuple(a) for a in sampled.round(4)}) > 6  # the uniform pointer explores the cells
    assert (sampled[:, :2] == sampled[:, 2:]).all(-1).mean() > 0.9  # mostly taps (swipe logit -3)


def test_a_checkpoint_that_counted_ppo_iterations_under_their_old_keys_resumes_at_its_iteration(
        weak_policy: Path) -> None:
    from vlui.algos.ppo import PPOModule
    from vlui.models.settings import to_dict

    start = load_policy(weak_policy)
    module = PPOModule(to_dict(start.cfg, start.spec), {}, seed=0)
    module.on_load_checkpoint({"ppo_iterations_done": 3, "ppo_totals": {"seconds": 5.0, "episodes": 96.0,
                                                                        "env_steps": 400.0}})
    saved: dict = {}
    module.on_save_checkpoint(saved)  # written under the keys every online algorithm shares
    assert saved["iterations_done"] == 3
    assert (saved["online_totals"]["episodes"], saved["online_totals"]["env_steps"]) == (96.0, 400.0)
    assert saved["online_totals"]["seconds"] >= 5.0


@pytest.mark.parametrize(("history", "screens"), [(True, False), (4, True)])
def test_ppo_updates_a_history_policy_on_each_steps_own_past(history, screens: bool, tiny_dataset: Path) -> None:
    from vlui.algos.online import Actor, episode_steps, learned_from
    from vlui.algos.ppo import PPOModule
    from vlui.data.datamodule import DemoDataModule
    from vlui.jobs.online import OnlineEpisodes
    from vlui.models.settings import to_dict
    from vlui.spec import Past

    cfg = ModelConfig(VisionConfig("efficientnet_b0", pretrained=None, freeze=True, feature_index=-2),
                      TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32], head="pointer",
                      positions=True, pointer_layers=0, history=history, history_screens=screens)
    module = PPOModule(to_dict(cfg, ObsActionSpec(64, 32)), {"log_std_init": -1.0, "step_cost": 0.0, "discount": 0.9,
                                                  "gae_lambda": 0.9, "minibatch": 4}, seed=0)
    env = EnvConfig(snapshots=[SNAPSHOT], observation_height=64, observation_width=32, num_envs=2)
    k = module.policy.cfg.history
    demos = DemoDataModule(str(tiny_dataset), val_fraction=0.0, image_height=64, image_width=32, on_device=False,
                           history=k)
    demos.setup()
    module.use(OnlineEpisodes(env, [TASK], None, episodes=3, seed=0), demos)
    module.eval()
    steps = episode_steps(learned_from(module.episodes.train(0, Actor(module, True, torch.Generator().manual_seed(0)))),
                          0.0)
    batch = module.estimate(steps)  # what learn_from() does with them
    valid, actions = batch["past_valid"], batch["past_actions"]
    assert valid.shape == (len(batch["actions"]), k)
    first = ~valid[:, 0]
    assert int(first.sum()) == 3 and bool(first[0])  # none at each episode's first step
    for i in range(len(valid)):  # else the steps before, in its episode, the most recent first
        for j in range(k):
            if valid[i, j]:
                assert torch.equal(actions[i, j], batch["actions"][i - 1 - j])
                assert int(batch["past_index"][i, j]) == i - 1 - j
            else:
                assert not valid[i, j:].any() and actions[i, j].isnan().all()
    # the updates read each step's past from the iteration's own screens (or their features): what the policy is
    # handed when it acts on the phone (Actor, a Past of the episode's screens)
    i = int(valid.sum(1).argmax())
    n = int(valid[i].sum())
    assert n >= min(k, 2)
    order = [i - 1 - j for j in range(k)]
    past = Past(actions[i:i + 1].cpu().numpy(), valid[i:i + 1].cpu().numpy(),
                np.stack([steps.screens[max(o, 0)] for o in order])[None] if screens else None)
    with torch.no_grad():
        acting = module.fused(module.inputs([steps.screens[i]], [steps.instructions[i]], past)).pooled
        updating = module.fused({key: value[i:i + 1] for key, value in batch.items()}).pooled
    assert torch.allclose(acting, updating, atol=1e-5)
    assert torch.isfinite(module.imitation_loss(0))  # the demonstrations' steps, each with its own past


@pytest.mark.integration
@pytest.mark.slow
def test_imitating_the_demonstrations_alongside_pulls_the_policy_toward_them(weak_policy: Path, trained: dict,
                                                                               tiny_dataset: Path,
                                                                               tmp_path: Path) -> None:
    # the same run with the expert's demonstrations imitated alongside (DAPG): the policy ends closer to them than on
    # the detector's reward alone, and its imitation loss falls as it trains
    data = [f"paths.data_dir={tiny_dataset.parent}", f"data.name={tiny_dataset.name}"]
    result = train.run(compose("train", ppo(tmp_path, weak_policy, "algo.iterations=4", "algo.bc_coef=1.0", *data),
                               output_dir=tmp_path / "out"))
    assert demo_loss(Path(result["policy"]), tiny_dataset) < demo_loss(Path(trained["result"]["policy"]), tiny_dataset)
    bc = [float(r["train/bc_loss"]) for r in metrics(tmp_path / "out") if r.get("train/bc_loss")]
    assert len(bc) >= 2 and bc[-1] < bc[0]
    with pytest.raises(VluiError, match=r"algo.bc_coef=1.0 imitates data.name's demonstrations, but there is no "):
        train.run(compose("train", ppo(tmp_path, weak_policy, "algo.bc_coef=1.0", f"paths.data_dir={tmp_path}",
                                       "data.name=nothing"), output_dir=tmp_path / "out2"))


@pytest.mark.slow
@pytest.mark.integration
def test_ppo_trains_the_last_blocks_of_the_backbone_when_asked(weak_policy: Path, tmp_path: Path) -> None:
    # algo.tune_blocks on a policy trained with its whole backbone frozen: the rollouts and updates run the last block
    # on cached inputs of it, and the export says so (evaluate.py loads it like any other)
    result = train.run(compose("train", ppo(tmp_path, weak_policy, "algo.iterations=1", "algo.eval_every=0",
                                            "algo.tune_blocks=1"), output_dir=tmp_path / "out"))
    start, tuned = (load_file(str(p / "model.safetensors")) for p in (weak_policy, Path(result["policy"])))
    changed = {k for k in start if k.startswith("encoder.vision.backbone.") and not torch.equal(start[k], tuned[k])}
    assert changed and all(k.startswith("encoder.vision.backbone.blocks.4.2.") for k in changed)
    assert not any("running" in k for k in changed)  # BatchNorm keeps its statistics
    assert load_policy(result["policy"]).cfg.vision.tune_blocks == 1
    assert load_policy(weak_policy).cfg.vision.tune_blocks == 0


@pytest.mark.integration
def test_ppo_fine_tunes_a_policy_that_reads_its_last_4_screens_imitating_the_demonstrations(
        tmp_path: Path, tiny_dataset: Path) -> None:
    # train.py algo=ppo end to end (rollouts, Lightning's minibatches of the iteration, the demonstrations' past) from
    # a policy with model.history=4 model.history_screens=true; its export keeps both
    torch.manual_seed(0)
    cfg = ModelConfig(VisionConfig("efficientnet_b0", pretrained=None, freeze=True, feature_index=-2),
                      TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32], head="pointer",
                      positions=True, pointer_layers=0, history=4, history_screens=True)
    start = export_policy(VLUIPolicy(cfg, ObsActionSpec(64, 32)), tmp_path / "start" / "policy")
    result = train.run(compose("train", ppo(tmp_path, start, "algo.iterations=1", "algo.episodes=4", "env.num_envs=2",
                                            "algo.minibatch=8", "algo.eval_every=0", "algo.bc_coef=0.5",
                                            "trainer.log_every_n_steps=1",
                                            f"paths.data_dir={tiny_dataset.parent}", f"data.name={tiny_dataset.name}"),
                               output_dir=tmp_path / "out"))
    logged = {k for row in metrics(tmp_path / "out") for k, v in row.items() if v}
    assert {"train/policy_loss", "train/bc_loss"} <= logged
    tuned = load_policy(result["policy"])
    assert (tuned.cfg.history, tuned.cfg.history_screens) == (4, True)
    before, after = load_file(str(start / "model.safetensors")), load_file(str(Path(result["policy"]) /
                                                                              "model.safetensors"))
    assert any(not torch.equal(before[k], after[k]) for k in before if k.startswith("encoder.past."))


def test_the_learning_curve_runs_on_validation_phones_by_default(tmp_path: Path) -> None:
    # choices (an iteration count) are made on validation phones, never on the test snapshots
    from vlui.algos.settings import PPOConfig
    from vlui.android.snapshot import snapshot_refs

    cfg = compose("train", ["algo=ppo", "env.generator.seed=1"], output_dir=tmp_path)
    for phones in (cfg.algo.eval_snapshots, PPOConfig().eval_snapshots):
        refs = snapshot_refs(phones, seed=cfg.env.generator.seed)
        assert len(refs) == 20 and all(r.startswith("val-1-") for r in refs), refs[:3]
