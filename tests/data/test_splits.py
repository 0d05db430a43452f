"""Named splits of a dataset (vlui/data/splits.py, python -m vlui.jobs.split): GUIOdyssey's random, unseen task,
unseen device and unseen app splits, kept in the dataset's metadata, and the leak check that keeps held-out values
out of training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlui.data.format import read_index
from vlui.data.splits import PARTS, check_no_leak, make_split, read_split, read_splits, write_split
from vlui.errors import VluiError
from vlui.jobs import split as split_job

# 24 episodes: 4 tasks (one a template's two instances) x 3 devices x 2; each task's apps
TASKS = {"airplane_on": "settings", "open_clock": "clock", "create_alarm@0630": "clock", "create_alarm@0715": "clock",
         "call_911": "phone", "share_photo": "photos+messages"}
DEVICES = {"Pixel 3": "phone", "Pixel 4": "phone", "WXGA Tablet": "tablet"}


def facts() -> dict[int, dict[str, tuple[str, ...]]]:
    out, e = {}, 0
    for task, apps in TASKS.items():
        for device, kind in DEVICES.items():
            family = task.split("@")[0]
            out[e] = {"task": tuple(dict.fromkeys((family, task))), "device": (device, kind), "apps": (apps,)}
            e += 1
    return out


def test_a_random_split_draws_episodes_with_the_seed() -> None:
    a = make_split("r", "random", facts(), test=0.25, val=0.2, seed=0)
    assert len(a.parts["test"]) == round(0.25 * 18) and len(a.parts["val"]) == round(0.2 * (18 - 5))
    assert sorted(e for p in PARTS for e in a.parts[p]) == list(range(18))
    assert make_split("r", "random", facts(), test=0.25, val=0.2, seed=0) == a  # the same seed, the same split
    assert make_split("r", "random", facts(), test=0.25, val=0.2, seed=1).parts != a.parts


def test_unseen_device_holds_out_a_model_or_a_kind() -> None:
    f = facts()
    s = make_split("d", "unseen_device", f, holdout=["WXGA Tablet"], val=0.0)
    assert {f[e]["device"][0] for e in s.parts["test"]} == {"WXGA Tablet"} and not s.parts["val"]
    assert "WXGA Tablet" not in {f[e]["device"][0] for e in s.parts["train"]}
    by_kind = make_split("d", "unseen_device", f, holdout=["tablet"], val=0.0)
    assert by_kind.parts == s.parts and by_kind.holdout == ("tablet",)


def test_unseen_task_holds_out_a_templates_instances_together() -> None:
    f = facts()
    s = make_split("t", "unseen_task", f, holdout=["create_alarm"], val=0.1)
    assert {f[e]["task"][-1] for e in s.parts["test"]} == {"create_alarm@0630", "create_alarm@0715"}
    one = make_split("t", "unseen_task", f, holdout=["create_alarm@0630"], val=0.1)
    assert {f[e]["task"][-1] for e in one.parts["test"]} == {"create_alarm@0630"}


def test_unseen_app_holds_out_app_combinations_drawn_with_the_seed() -> None:
    f = facts()
    s = make_split("a", "unseen_app", f, test=0.3, seed=3)
    held = {f[e]["apps"][0] for e in s.parts["test"]}
    assert set(s.holdout) == held and len(s.parts["test"]) >= 0.3 * 18
    assert not held & {f[e]["apps"][0] for e in s.parts["train"] + s.parts["val"]}
    assert make_split("a", "unseen_app", f, test=0.3, seed=3) == s


def test_bad_requests_are_one_line() -> None:
    f = facts()
    for kwargs, message in (
            ({"by": "unseen_colour"}, "unknown split kind 'unseen_colour'; choose from: random, unseen_task, "
                                      "unseen_device, unseen_app"),
            ({"by": "unseen_device", "holdout": ["Pixel 9"]}, "no episode has device 'Pixel 9' to hold out; its "
                                                              "device values: Pixel 3, Pixel 4, WXGA Tablet, phone, "
                                                              "tablet"),
            ({"by": "unseen_device"}, "a unseen_device split needs the device values to hold out"),
            ({"by": "unseen_device", "holdout": ["phone", "tablet"]}, "holding out phone, tablet leaves no episode to "
                                                                     "train on: hold out less"),
            ({"by": "random", "holdout": ["x"]}, "a random split holds out no values"),
            ({"by": "random", "test": 1.0}, "the test share must be at least 0 and less than 1, not 1.0")):
        with pytest.raises(VluiError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
            make_split("s", facts=f, **kwargs)


def test_the_leak_check_refuses_training_data_with_a_held_out_value() -> None:
    f = facts()
    s = make_split("d", "unseen_device", f, holdout=["tablet"])
    check_no_leak(s, {"the dataset": {e: f[e] for e in s.parts["train"]}})  # its own training part is clear
    mix = {7: {"task": ("call_911",), "device": ("Nexus 7", "tablet"), "apps": ("phone",)}}
    with pytest.raises(VluiError, match=r"^split 'd' holds out device tablet, but data.mix: data/more trains on "
                                        r"episode 7, which has it: that value would be seen in training \(a leak\)"):
        check_no_leak(s, {"data.mix: data/more": mix})
    app = make_split("a", "unseen_app", f, holdout=["clock"])
    with pytest.raises(VluiError, match="holds out apps clock, but a DAgger round trains on episode 3"):
        check_no_leak(app, {"a DAgger round": {2: f[2], 3: f[3]}})


def test_a_hand_edited_split_with_an_episode_in_two_parts_is_refused(tmp_path: Path) -> None:
    s = make_split("r", "random", facts(), test=0.25)
    (tmp_path / "meta").mkdir()
    write_split(tmp_path, s)
    data = json.loads((tmp_path / "meta" / "splits.json").read_text())
    data["splits"]["r"]["episodes"]["train"].append(data["splits"]["r"]["episodes"]["test"][0])
    (tmp_path / "meta" / "splits.json").write_text(json.dumps(data))
    with pytest.raises(VluiError, match="split 'r' puts episode .* in both"):
        check_no_leak(read_splits(tmp_path)["r"], {})


def test_splits_are_kept_in_the_metadata_and_checked_against_the_episodes(tmp_path: Path) -> None:
    (tmp_path / "meta").mkdir()
    s = make_split("unseen_device", "unseen_device", facts(), holdout=["tablet"])
    write_split(tmp_path, s)
    write_split(tmp_path, make_split("random", "random", facts()))
    assert read_split(tmp_path, "unseen_device", range(18)) == s and set(read_splits(tmp_path)) == {
        "unseen_device", "random"}
    with pytest.raises(VluiError, match="already has a split named 'unseen_device': give another --name, or "
                                        "--replace it"):
        write_split(tmp_path, s)
    write_split(tmp_path, s, replace=True)
    with pytest.raises(VluiError, match=r"has no split 'unseen_app' \(it has: unseen_device, random\): make it with "
                                        r"`python -m vlui.jobs.split .* --by unseen_app ...`"):
        read_split(tmp_path, "unseen_app", range(18))
    with pytest.raises(VluiError, match=r"split 'random' of .* is out of date: 1 episode\(s\) it does not place "
                                        r"\(collected after it was made, e.g. 18\); make it again"):
        read_split(tmp_path, "random", range(19))


def test_the_split_command_writes_to_the_datasets_metadata(tiny_dataset_copy: Path, capsys) -> None:
    root = tiny_dataset_copy
    before = {p.name: p.read_bytes() for p in (root / "meta").iterdir() if p.is_file()}
    assert split_job.main([str(root), "--by", "unseen_task", "--holdout", "open_clock", "--val", "0.2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("unseen_task: unseen_task holding out task open_clock (seed 0); episodes: train 5, val 1, "
                          "test 6; trains on task airplane_on")
    split = read_split(root, "unseen_task", read_index(root))
    assert {read_index(root)[e]["task_id"] for e in split.parts["test"]} == {"open_clock"}
    # nothing else of the dataset changed, no episode was copied
    assert all((root / "meta" / name).read_bytes() == data for name, data in before.items())
    assert split_job.main([str(root)]) == 0 and "unseen_task: unseen_task" in capsys.readouterr().out
    assert split_job.main([str(root), "--by", "unseen_device", "--holdout", "tablet"]) == 2
    assert capsys.readouterr().err.startswith("error: no episode has device 'tablet' to hold out; its device "
                                              "values: Pixel 3, phone")
