"""``python -m vlui.study detectors``: each detector against its task's truth, per task, with the disagreeing
episodes viewable."""

from __future__ import annotations

import csv
import json

import pytest

from vlui.errors import VluiError
from vlui.models.policy import VLUIPolicy, export_policy
from vlui.models.settings import ModelConfig, TextConfig
from vlui.spec import ObsActionSpec
from vlui.study import detectors
from vlui.study.__main__ import main
from vlui.viewer.episodes import open_folder


@pytest.mark.parametrize("detector_step, truth_step, want", [
    (3, 3, "TP"), (5, 2, "TP"), (2, 5, "FP"), (2, None, "FP"), (None, 4, "FN"), (None, None, "TN")])
def test_an_episode_is_judged_by_the_first_step_of_each(detector_step, truth_step, want):
    assert detectors.verdict(detector_step, truth_step) == want


def test_precision_and_recall_count_early_and_late_detectors():
    def ep(d, t):
        return detectors.Episode("expert", "bmoca25", "x", "000", "k", d, t, False, 5)
    c = detectors.counts([ep(3, 3), ep(4, 2), ep(2, 5), ep(None, 1), ep(None, None)])
    assert (c["tp"], c["fp"], c["fn"], c["tn"]) == (2, 1, 1, 1)
    assert c["precision"] == pytest.approx(2 / 3) and c["recall"] == pytest.approx(2 / 3)
    assert (c["early"], c["late"]) == (1, 1)


@pytest.mark.slow
def test_the_report_names_each_flawed_detector_and_opens_its_episodes(tmp_path):
    only = ["open_clock", "b25_open_gmail", "b25_alarm_1030_and_alarm_volume"]
    figures = detectors.measure(["bmoca", "bmoca25"], ["000"], ["expert", "random"], tmp_path, only=only)
    rows = {(r["task"], r["agent"]): r for r in csv.DictReader(open(tmp_path / "detectors.csv", encoding="utf-8"))}
    assert (rows["open_clock", "expert"]["tp"], rows["open_clock", "expert"]["fp"]) == ("1", "0")
    # Gmail opens, and the release's regex never sees the start line Android 10 prints
    assert (rows["b25_open_gmail", "expert"]["fn"], rows["b25_open_gmail", "expert"]["recall"]) == ("1", "0.0")
    # the check holds once the alarm is made, before the volume goes up: early
    alarm = rows["b25_alarm_1030_and_alarm_volume", "expert"]
    assert (alarm["fp"], alarm["early"]) == ("1", "1")
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| bmoca25 | b25_open_gmail |" in report and "(refused: flawed check)" in report
    assert figures["under"] == 2
    wrong = list(csv.DictReader(open(tmp_path / "disagreements.csv", encoding="utf-8")))
    assert {(w["task"], w["agent"], w["verdict"]) for w in wrong} >= {("b25_open_gmail", "expert", "FN"),
                                                                        ("b25_alarm_1030_and_alarm_volume", "expert",
                                                                         "FP")}
    gmail = next(w for w in wrong if w["task"] == "b25_open_gmail" and w["agent"] == "expert")
    key = gmail["viewer"].split("--episode ")[1]
    assert gmail["viewer"].startswith("python -m vlui.viewer expert ")
    shown = open_folder(tmp_path / "expert").episode(key)
    assert shown["problem"] is None and shown["success"] is False
    assert ["detector and truth", "FN: the detector first fired at step -, the goal first held at step 1"] in \
        shown["facts"]
    # run again: every episode is there, none is played twice
    lines = (tmp_path / "expert" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    detectors.measure(["bmoca", "bmoca25"], ["000"], ["expert", "random"], tmp_path, only=only)
    assert (tmp_path / "expert" / "episodes.jsonl").read_text(encoding="utf-8").splitlines() == lines
    assert all("judged" in json.loads(line) for line in lines)


@pytest.mark.slow
def test_the_weekend_alarm_and_volume_reached_is_missed_by_its_check(tmp_path):
    """The expert sets the 13:30 alarm for the weekend and raises the alarm volume, as asked; the release's check
    wants the alarm on weekdays, so the goal is reached and the detector never fires: an FN, not a success."""
    task = "b25_alarm_1330_weekend_and_alarm_volume"
    detectors.measure(["bmoca25"], ["030"], ["expert"], tmp_path, only=[task])
    row = next(csv.DictReader(open(tmp_path / "detectors.csv", encoding="utf-8")))
    assert (row["task"], row["tp"], row["fp"], row["fn"], row["recall"]) == (task, "0", "0", "1", "0.0")
    line = json.loads((tmp_path / "expert" / "episodes.jsonl").read_text(encoding="utf-8"))
    assert line["success"] is False and line["judged"]["truth_step"] <= 16


def test_a_trained_policy_is_judged_at_the_screen_size_it_learnt(tmp_path):
    policy = VLUIPolicy(ModelConfig(text=TextConfig(size="tiny"), hidden_dim=32, num_heads=2, head_dims=[32, 32]),
                        ObsActionSpec(64, 32))
    export_policy(policy, tmp_path / "run" / "policy")
    figures = detectors.measure(["bmoca"], ["000"], ["policy"], tmp_path / "out", checkpoint=str(tmp_path / "run"),
                                only=["open_clock", "airplane_on"])
    assert figures["totals"]["policy"]["episodes"] == 2
    recipe = json.loads((tmp_path / "out" / "policy" / "recipe.json").read_text(encoding="utf-8"))
    assert (recipe["env"]["observation_height"], recipe["env"]["observation_width"]) == (64, 32)
    folder = open_folder(tmp_path / "out" / "policy")
    line = json.loads((tmp_path / "out" / "policy" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert folder.episode(line["key"])["problem"] is None


@pytest.mark.parametrize("args, said", [
    (["--sets", "bmoca26"], "unknown task set 'bmoca26'"),
    (["--agents", "policy"], "agent policy needs --checkpoint"),
    (["--tasks", "open_clokc"], "task open_clokc is not in the sets"),
])
def test_a_mistake_is_one_line(args, said, capsys, tmp_path):
    assert main(["detectors", "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1


def test_an_unknown_snapshot_is_one_line(tmp_path):
    with pytest.raises(VluiError, match="unknown snapshot"):
        detectors.measure(["bmoca"], ["nope"], ["random"], tmp_path)
