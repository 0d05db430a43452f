"""``python evaluate.py mode=offline``: GUIOdyssey's AMS and SR of an agent on a dataset's held-out steps, no phone;
and the one-line errors of a dataset, split or policy that cannot be scored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from tqdm import tqdm

from tests.conftest import run_python
from vlui.cli import compose
from vlui.data import format as fmt
from vlui.data.splits import read_split
from vlui.env.actions import ActionParser, key_action, normalised_to_action
from vlui.errors import VluiError
from vlui.eval.metrics import actions_match
from vlui.jobs import evaluate, offline
from vlui.jobs import split as split_job
from vlui.models.policy import VLUIPolicy, export_policy
from vlui.models.settings import ModelConfig, TextConfig
from vlui.spec import ObsActionSpec

pytestmark = pytest.mark.integration


def run(tmp_path: Path, dataset: Path, *overrides: str) -> dict:
    return offline.run(compose("evaluate", ["mode=offline", f"paths.data_dir={dataset.parent}",
                                             f"data.name={dataset.name}", *overrides], output_dir=tmp_path / "out"))


def results(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "results.json").read_text())


def export_tiny(path: Path, seed: int = 0, spec: ObsActionSpec = ObsActionSpec(64, 32), **metadata) -> Path:
    torch.manual_seed(seed)
    policy = VLUIPolicy(ModelConfig(text=TextConfig(size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32, 32]),
                        spec)
    export_policy(policy, path / "policy", metadata=metadata or None)
    return path


@pytest.fixture
def held_out(tiny_dataset_copy: Path) -> Path:
    """The tiny dataset with split ``unseen_task``: open_clock's 6 episodes held out, airplane_on's for training."""
    split_job.make(tiny_dataset_copy, "unseen_task", ["open_clock"], val=0.2)
    return tiny_dataset_copy


def test_a_policy_with_memory_is_shown_the_steps_demonstrated_before_each_one(tmp_path: Path, held_out: Path) -> None:
    # the past is the demonstration's (GUIOdyssey's history): the actions taken and, with model.history_screens, the
    # screens of the steps before, none before an episode's first step; a batch mixes episodes and steps
    from vlui.agents.policy_agent import PolicyAgent

    torch.manual_seed(0)
    export_policy(VLUIPolicy(ModelConfig(text=TextConfig(size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32],
                                         history=2, history_screens=True), ObsActionSpec(64, 32)), tmp_path / "policy")
    agent = PolicyAgent(str(tmp_path / "policy"), device="cpu")
    handed = []
    act_batch = agent.act_batch
    agent.act_batch = lambda screens, instructions, past=None: (handed.append((screens, past)),
                                                                act_batch(screens, instructions, past))[1]
    parser = ActionParser()
    demos = [offline._demonstration(held_out, entry, parser) for entry in list(fmt.read_index(held_out).values())[:3]]
    offline._act(agent, demos, 4, 0, tqdm(disable=True))
    steps = [(d, t) for d in demos for t in range(len(d.reference))]
    screens = np.concatenate([s for s, _ in handed])
    past = [p for _, p in handed]
    valid = np.concatenate([p.valid for p in past])
    actions = np.concatenate([p.actions for p in past])
    past_screens = np.concatenate([p.screens for p in past])
    for n, (d, t) in enumerate(steps):
        assert valid[n].tolist() == [t >= 1, t >= 2]
        for j in range(min(t, 2)):  # j + 1 steps before: the step n - 1 - j of the same demonstration
            assert np.array_equal(actions[n, j], d.taken[t - 1 - j])
            assert np.array_equal(past_screens[n, j], screens[n - 1 - j])


def test_a_policy_is_scored_on_every_step_of_the_held_out_part_in_batches(tmp_path: Path, held_out: Path) -> None:
    export_tiny(tmp_path / "a", seed=0)
    export_tiny(tmp_path / "b", seed=1)
    summary = run(tmp_path, held_out, f"checkpoint=[{tmp_path}/a,{tmp_path}/b]", "data.split=unseen_task",
                  "data.batch_size=3")
    index = fmt.read_index(held_out)
    test = read_split(held_out, "unseen_task", index).parts["test"]
    steps = sum(index[e]["steps"] for e in test)
    assert summary["episodes"] == 2 * 6 and summary["steps"] == 2 * steps and 0 <= summary["ams"] <= 1  # 2 policies
    out = results(tmp_path)
    assert out["mode"] == "offline" and out["split"]["name"] == "unseen_task" and out["split"]["part"] == "test"
    assert set(out["per_task"]) == {"open_clock"} and set(out["per_snapshot"]) == {"000", "001", "030"}
    assert {r["episode"] for r in out["records"]} == set(test) and len(out["records"]) == 12
    assert all(len(r["matches"]) == index[r["episode"]]["steps"] for r in out["records"])
    # the spread across the two training seeds and the three phones, for each score
    for metric in ("ams", "success_rate"):
        group = out["seeds"][metric]["groups"][""]
        assert group["overall"]["seeds"] == 2 and group["overall"]["ci95"]["phones"] == 3
    assert out["elements"] is False  # collected without UI trees: taps by distance alone
    md = (tmp_path / "out" / "results.md").read_text()
    assert "| open_clock |" in md and "taps matched by distance alone" in md and "AMS across training seeds" in md
    # the same policies on the same steps: the same scores, batch size aside
    assert run(tmp_path, held_out, f"checkpoint=[{tmp_path}/a,{tmp_path}/b]", "data.split=unseen_task",
               "data.batch_size=64")["ams"] == summary["ams"]


def test_an_agent_that_does_what_was_demonstrated_matches_every_step(tmp_path: Path, held_out: Path,
                                                                     monkeypatch) -> None:
    def demonstrated(agent, demos, batch_size, seed, bar) -> list[np.ndarray]:
        def action(ref):
            if ref.kind == "key":
                return key_action(ref.key)
            return normalised_to_action(ref.touch, ref.lift if ref.kind == "swipe" else None)

        return [np.stack([action(r) for r in d.reference]) for d in demos]

    monkeypatch.setattr(offline, "_act", demonstrated)
    summary = run(tmp_path, held_out, "agent=random", "data.split=unseen_task", "data.part=train")
    assert summary["ams"] == 1.0 and summary["success_rate"] == 1.0 and summary["episodes"] == 5  # 6 - 1 for val


def test_evaluate_py_runs_the_offline_job_for_mode_offline_and_each_job_refuses_the_others_mode(
        tmp_path: Path, held_out: Path) -> None:
    data = [f"paths.data_dir={held_out.parent}", f"data.name={held_out.name}", "data.split=unseen_task"]
    out = run_python("evaluate.py", "mode=offline", "agent=random", *data, f"hydra.run.dir={tmp_path / 'cli'}")
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "cli" / "results.json").read_text())["ams"] < 0.5  # the offline report: AMS
    with pytest.raises(VluiError, match=r"^mode=offline scores a dataset's demonstrations without a phone: run it as "
                                        r"python evaluate.py mode=offline \(vlui.jobs.offline.run\)"):
        evaluate.run(compose("evaluate", ["mode=offline", "agent=random", *data], output_dir=tmp_path / "on"))
    with pytest.raises(VluiError, match=r"^mode=online evaluates on phones: run it as python evaluate.py"):
        offline.run(compose("evaluate", ["agent=random", *data], output_dir=tmp_path / "off"))


def test_the_random_agent_is_a_low_well_defined_floor(tmp_path: Path, held_out: Path) -> None:
    summary = run(tmp_path, held_out, "agent=random", "data.split=unseen_task")
    assert summary["ams"] < 0.5 and summary["success_rate"] == 0.0
    first = results(tmp_path)
    assert first["per_kind"]["tap"]["ams"] == 0.0  # a random dual-gesture is rarely a tap, let alone the right one
    assert run(tmp_path, held_out, "agent=random", "data.split=unseen_task")["ams"] == summary["ams"]  # seeded
    # recomputed from the records: each step's action against the dataset's
    for r in first["records"]:
        assert r["checkpoint"] == "random" and len(r["actions"]) == len(r["matches"])


def test_element_bounds_count_a_tap_inside_the_demonstrated_element(tmp_path: Path, tiny_xml_dataset: Path) -> None:
    run(tmp_path, tiny_xml_dataset, "agent=random", "data.part=all")
    out = results(tmp_path)
    assert out["elements"] is True and out["episodes"] == 6
    # a tap far from the demonstrated one on the same element matches: the first tap of each episode
    _, table = fmt.read_dataset(tiny_xml_dataset)
    row = next(r for r in table.to_pylist() if r["action_kind"] == "tap")
    boxes = offline.clickable_boxes(row["xml"])
    ref = offline.ParsedAction("tap", tuple(row["touch"]), tuple(row["touch"]))
    (target,) = [b for b in boxes if b[0] <= ref.touch[0] < b[2] and b[1] <= ref.touch[1] < b[3]][-1:]
    corner = (target[0] + 1e-4, target[1] + 1e-4)
    assert actions_match(offline.ParsedAction("tap", corner, corner), ref, boxes)


def test_the_folder_of_an_offline_evaluation_is_not_an_online_ones() -> None:
    online = compose("evaluate", ["checkpoint=checkpoints/x/run1"], output_dir="/tmp/x")
    scored = compose("evaluate", ["checkpoint=checkpoints/x/run1", "mode=offline", "data.name=gen200",
                                  "data.split=unseen_device"], output_dir="/tmp/x")
    assert online.name == "policy-x-run1" and scored.name == "policy-x-run1-offline-gen200-unseen_device-test"


def test_an_online_evaluations_folder_is_not_overwritten(tmp_path: Path, held_out: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "episodes.jsonl").write_text("")
    with pytest.raises(VluiError, match=r"out holds an online evaluation: name this one \(name=...\)"):
        run(tmp_path, held_out, "agent=random", "data.split=unseen_task")


def _no_screen(root: Path) -> None:
    path = fmt.episode_path(root, 7)
    rows = pq.read_table(path).to_pylist()
    rows[1]["screen"] = None
    pq.write_table(pa.Table.from_pylist(rows, schema=fmt.SCHEMA), path)


@pytest.mark.parametrize(("overrides", "damage", "message"), [
    (["agent=random", "data.name=nope"], None, "no dataset at …nope (no meta/info.json): create it with `python "
     "collect.py dataset=nope`"),
    (["agent=random", "data.split=unseen_app"], None, "…tiny has no split 'unseen_app' (it has: unseen_task): make it "
     "with `python -m vlui.jobs.split …tiny --by unseen_app ...` (kinds: random, unseen_task, unseen_device, "
     "unseen_app)"),
    (["agent=random"], None, "mode=offline scores a split's held-out part: set data.split=<name> (make one with python "
     "-m vlui.jobs.split …tiny --by ...), or data.part=all to score every episode of a dataset the policy never "
     "trained on"),
    (["agent=random", "data.split=unseen_task", "data.part=all"], None, "data.part=all scores every episode of …tiny: "
     "leave data.split out, or score one part of split 'unseen_task' (data.part=train, val or test)"),
    (["agent=expert", "data.split=unseen_task"], None, "mode=offline scores an agent on a dataset's screens without a "
     "phone: agent=policy or agent=random, not agent=expert (evaluate it online: mode=online)"),
    (["checkpoint=POLICY", "data.split=unseen_task"], _no_screen, "…tiny: the screen of episode 7 step 1 is missing, "
     "and a policy is scored on each step's screen: delete episodes/chunk-000/episode_000007.parquet and run the same "
     "collect.py command again to collect that episode again"),
    (["checkpoint=OTHER_READING", "data.split=unseen_task"], None, "…tiny reads actions by tap_threshold 0.14, y_scale "
     "2.0, the policy by tap_threshold 0.2, y_scale 2.0: score it on a dataset collected with its env.tap_threshold "
     "and env.y_distance_scale"),
    (["checkpoint=TRAINED_ON_ALL", "data.split=unseen_task"], None, "…trained was trained on every episode of …tiny "
     "(no data.split): scoring it on them measures what it memorised; score it on another dataset, or train it on a "
     "split (data.split=...) and score that split's test part"),
    (["checkpoint=TRAINED_ON_RANDOM", "data.split=unseen_task"], None, "…trained trained on split 'random' of …tiny, "
     "whose train part holds … of the 6 episodes scored: score the test part of split 'random' (data.split=random)"),
])
def test_what_cannot_be_scored_is_one_line(tmp_path: Path, held_out: Path, overrides: list[str], damage,
                                           message: str) -> None:
    if damage is not None:
        damage(held_out)
    placeholders = {
        "POLICY": lambda: export_tiny(tmp_path / "policy"),
        "OTHER_READING": lambda: export_tiny(tmp_path / "policy", spec=ObsActionSpec(64, 32, tap_threshold=0.2)),
        "TRAINED_ON_ALL": lambda: export_tiny(tmp_path / "trained", dataset=str(held_out)),
        "TRAINED_ON_RANDOM": lambda: export_tiny(tmp_path / "trained", dataset=str(held_out), split={
            "name": "random", "digest": split_job.make(held_out, "random", test=0.5).digest()}),
    }
    for i, o in enumerate(overrides):
        name = o.partition("=")[2]
        if name in placeholders:
            overrides[i] = f"checkpoint={placeholders[name]()}"
    with pytest.raises(VluiError) as err:
        run(tmp_path, held_out, *overrides)
    pattern = ".*?".join(map(re.escape, message.split("…")))
    assert re.fullmatch(pattern, str(err.value), re.DOTALL), f"\n  got: {err.value}\n want: {message}"
