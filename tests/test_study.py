"""python -m vlui.study: a tiny study end to end (collect, train arms x seeds, evaluate, report), and its resume."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml

import vlui.study as study_mod
from tests.conftest import run_python
from vlui.cli import compose
from vlui.config import StudyStepConfig
from vlui.errors import VluiError
from vlui.study.per_phone import main as per_phone
from vlui.study import (_plot_curves, commands, learning_curves, load, paper_numbers, plan_digest, run_dir, step_job,
                        stored_differences, studies)

pytestmark = pytest.mark.integration

TINY = {"tiny": {"title": "Tiny", "question": "Does it run?", "paper": "fig7", "cpu": {
    "datasets": {"tiny1": ["tasks=[airplane_on,add_language]", "env.snapshots=[000,001]", "env.num_envs=1"]},
    "base": ["debug=tiny", "data.name=tiny1", "logger=csv", "trainer.max_steps=2", "data.val_fraction=0"],
    "arms": {"scratch": [], "pretrained": ["algo.optim.lr=1e-3"]},
    "splits": {"val": "[val-0-0]", "held-out": "[100,109]"},  # one validation phone keeps it tiny
    "evaluate": ["tasks=[airplane_on,add_language]", "env.num_envs=1", "env.observation_height=64",
                 "env.observation_width=32"]}}}


@pytest.mark.slow
def test_a_study_trains_every_arm_and_seed_evaluates_them_and_reports_with_the_paper(tmp_path: Path) -> None:
    spec = tmp_path / "studies.yaml"
    spec.write_text(yaml.safe_dump(TINY, sort_keys=False))
    env = {"VLUI_ROOT": str(tmp_path)}  # data, checkpoints and outputs under tmp_path, not the checkout
    result = run_python("-m", "vlui.study", "tiny", "--seeds", "2", "--studies", str(spec), env=env, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    for arm in ("scratch", "pretrained"):
        for seed in (0, 1):
            run = tmp_path / "checkpoints" / "study" / "tiny-cpu" / f"{arm}-seed{seed}"
            assert (run / "policy").is_dir() and (run / "last.ckpt").is_file()
            assert not list(run.glob("step*.ckpt"))  # a finished run's epoch checkpoints are not kept
    out = tmp_path / "outputs" / "study" / "tiny-cpu"
    report = (out / "report.md").read_text()
    assert "# Study: Tiny" in report and "2 training seeds per arm" in report
    language = next(line for line in report.splitlines() if line.startswith("| Language"))
    assert "paper: pretrained" in report and language.endswith("| 37 | 63 |")  # Fig. 7's values next to ours
    assert "python train.py debug=tiny" in report and "Commit: `" in report and "unknown" not in report
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(r["arm"], r["task"]) for r in rows} >= {("scratch", "add_language"), ("pretrained", "all")}
    assert all(r["seeds"] == "2" for r in rows) and (out / "success.png").stat().st_size > 1000
    # every cell has its bootstrap interval over seeds and phones around the mean, and each seed's own success
    assert all(float(r["ci_low"]) - 1e-9 <= float(r["mean"]) <= float(r["ci_high"]) + 1e-9 for r in rows)
    assert all(r["seed0"] != "" and r["seed1"] != "" for r in rows)
    with open(out / "per_phone.csv") as f:  # 2 arms x (1 validation + 2 held-out phones) x 2 seeds
        per_phone = list(csv.DictReader(f))
    assert sorted((r["arm"], r["snapshot"], r["seed"]) for r in per_phone) == [
        (arm, phone, seed) for arm in ("pretrained", "scratch") for phone in ("100", "109", "val-0-0")
        for seed in "01"]
    # success by phone setting: the held-out split's two phones, a Pixel 3 and a tablet (one validation phone has
    # nothing to compare), each group's mean that of its phones' cells
    with open(out / "by_setting.csv") as f:
        settings = {(r["arm"], r["split"], r["axis"], r["value"]): r for r in csv.DictReader(f)}
    assert {split for _, split, _, _ in settings} == {"held-out"}
    for arm in ("scratch", "pretrained"):
        for phone, kind in (("100", "phone"), ("109", "tablet")):
            cells = [float(r["success"]) for r in per_phone if r["arm"] == arm and r["snapshot"] == phone]
            row = settings[arm, "held-out", "kind", kind]
            assert row["phones"] == "1" and float(row["mean"]) == pytest.approx(sum(cells) / 2)
        assert settings[arm, "held-out", "held_out", "device"]["phones"] == "1"  # the WXGA Tablet is test-only
    assert "## By phone setting (held-out)" in report and "| device kind | tablet | 1 |" in report
    assert "| arm | val (chosen on) | held-out |" in report and "Chosen on the validation phones" in report
    meta = json.loads((out / "study.json").read_text())
    assert set(meta["timings_s"]) >= {"collect tiny1", "train scratch seed 0", "evaluate on held-out"}
    # run again: nothing is trained again
    again = run_python("-m", "vlui.study", "tiny", "--seeds", "2", "--studies", str(spec), env=env, timeout=900)
    assert again.returncode == 0 and again.stdout.count("done before") == 4
    # the report of the resumed study still has the wall-clock of the steps done before
    timed = json.loads((out / "study.json").read_text())["timings_s"]
    assert meta["timings_s"]["train scratch seed 0"] == timed["train scratch seed 0"]
    # and an evaluation run again (it finds its episodes) adds to its time instead of replacing it with the resume's
    assert timed["evaluate on held-out"] > meta["timings_s"]["evaluate on held-out"]
    # a study whose arms change evaluates them afresh, and keeps the evaluation of the arms before
    before = sorted(p.name for p in (tmp_path / "outputs" / "evaluate").iterdir())
    changed = yaml.safe_load(yaml.safe_dump(TINY))
    del changed["tiny"]["cpu"]["arms"]["pretrained"]
    spec.write_text(yaml.safe_dump(changed, sort_keys=False))
    fewer = run_python("-m", "vlui.study", "tiny", "--seeds", "2", "--studies", str(spec), env=env, timeout=900)
    assert fewer.returncode == 0, fewer.stderr[-2000:]
    assert fewer.stdout.count("done before") == 2 and "| pretrained" not in (out / "report.md").read_text()
    after = sorted(p.name for p in (tmp_path / "outputs" / "evaluate").iterdir())
    assert set(before) < set(after) and len(after) == 2 * len(before)
    for name in set(after) - set(before):  # the runs evaluated before are taken from there, not run again
        journal = (tmp_path / "outputs" / "evaluate" / name / "episodes.jsonl").read_text().splitlines()
        assert journal and all(json.loads(line)["reused"] in before for line in journal)


def test_the_shipped_studies_are_well_formed() -> None:
    paper = paper_numbers()
    for name, spec in studies().items():
        for size in ("cpu", "gpu"):
            study = load(name, size)
            assert study.arms and study.datasets and len(study.seeds) == 3
            used = {o.split("=", 1)[1] for o in [*study.base, *(o for a in study.arms.values() for o in a)]
                    if o.startswith("data.name=")}
            assert used <= set(study.datasets), (name, size)  # every dataset an arm trains on is collected
        assert spec["paper"] is None or spec["paper"] in paper


@pytest.mark.slow
def test_an_unknown_study_is_a_one_line_error() -> None:
    result = run_python("-m", "vlui.study", "nope")
    assert result.returncode == 2 and "unknown study 'nope'; choose from: algorithms" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_arm_starts_from_the_same_seeds_run_of_an_earlier_arm() -> None:
    study = load("online")
    train = {what: cmd for what, cmd, _ in commands(study) if what.startswith("train ")}
    assert list(train)[:3] == ["train dagger seed 0", "train dagger seed 1", "train dagger seed 2"]  # first
    for seed in study.seeds:
        assert f"init={run_dir(study, 'dagger', seed)}" in train[f"train ppo seed {seed}"]
    for name in studies():  # every {run:ARM} of the shipped studies names an arm that runs before it
        for size in ("cpu", "gpu"):
            arms = list(load(name, size).arms.items())
            for i, (_, overrides) in enumerate(arms):
                for ref in re.findall(r"\{run:([^}]+)\}", " ".join(overrides)):
                    assert ref in [a for a, _ in arms[:i]], (name, size, ref)


@pytest.mark.slow
def test_arms_runs_a_subset_with_the_arms_it_starts_from_and_the_same_runs() -> None:
    study = load("online", seeds=5, arms=["ppo-bc-mem"])
    assert list(study.arms) == ["dagger-mem", "ppo-bc-mem"]  # the policy it starts from comes along
    train = {what: cmd for what, cmd, _ in commands(study) if what.startswith("train ")}
    assert len(train) == 10 and f"init={run_dir(study, 'dagger-mem', 4)}" in train["train ppo-bc-mem seed 4"]
    full = load("online")  # the same run folders as the whole study's: seeds trained there are not trained again
    assert run_dir(study, "dagger-mem", 0) == run_dir(full, "dagger-mem", 0)
    # only the datasets the arms train on are collected
    quick = load("quickstart", arms=["quickstart"])
    assert list(quick.datasets) == ["train_gen500_rtl_mir"]
    assert list(load("quickstart").datasets) == ["train_gen500_rtl_mir", "train_leaky500_rtl_mir"]
    result = run_python("-m", "vlui.study", "online", "--arms", "ppo-bc-mem,nope", "--plan")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--arms: the study has no arm 'nope'; its arms: dagger, ppo," in result.stderr


def test_online_runs_learning_curves_go_into_the_report(tmp_path: Path, monkeypatch) -> None:
    from vlui.algos.settings import CURVE_COLUMNS

    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    study = load("online", seeds=2)
    for seed in study.seeds:
        run = tmp_path / run_dir(study, "ppo", seed)
        run.mkdir(parents=True)
        with open(run / "curve.csv", "w", newline="") as f:
            w = csv.DictWriter(f, CURVE_COLUMNS)
            w.writeheader()
            w.writerows([{"iteration": 0, "seconds": 0, "episodes": 0, "env_steps": 0, "rollout_success": 0.4,
                          "rollout_return": 0.4, "heldout_success": 0.5},
                         {"iteration": 1, "seconds": 30, "episodes": 96, "env_steps": 600, "rollout_success": 0.5,
                          "rollout_return": 0.5, "heldout_success": ""}])
    curves = learning_curves(study)
    assert set(curves) == {("ppo", 0), ("ppo", 1)} and curves[("ppo", 1)][1]["rollout_success"] == "0.5"
    _plot_curves(study, curves, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000


def _report_of(study, base: dict[int, int], gain: dict[int, int], tmp_path: Path) -> str:
    """The study's report from evaluations made of episodes: 20 per policy and split, the dagger arm's seed s
    succeeding in base[s] of them and the ppo arm's in base[s] + gain[s]."""
    return _report_with(study, lambda arm, seed: base[seed] + (gain[seed] if arm == "ppo" else 0), tmp_path)


def _report_with(study, succeeded, tmp_path: Path) -> str:
    """The study's report from evaluations made of episodes: one on each of 20 phones per policy and split, the
    seed s of an arm succeeding on the first succeeded(arm, s) phones."""
    from vlui.eval.report import across_seeds
    from vlui.study import evaluation_name, report

    groups = {arm: [str(run_dir(study, arm, s)) for s in study.seeds] for arm in study.arms}
    for split in study.splits:
        records = [{"task": "alarm_1030", "snapshot": f"s{i}", "run": 0, "checkpoint": groups[arm][seed],
                    "success": i < succeeded(arm, seed)}
                   for arm in study.arms for seed in study.seeds for i in range(20)]
        out = tmp_path / "outputs" / "evaluate" / evaluation_name(study, split)
        out.mkdir(parents=True, exist_ok=True)
        # an evaluation as results.json keeps it: its episodes, and statistics without the keys added since
        seeds = across_seeds(records, groups, {})
        old = {"groups": {arm: {"checkpoints": g["checkpoints"], "overall": {"per_policy": g["overall"]["per_policy"]}}
                          for arm, g in seeds["groups"].items()}}
        (out / "results.json").write_text(json.dumps({"seeds": old, "records": records}))
    report(study, tmp_path / "report")
    return (tmp_path / "report" / "report.md").read_text()


def _report_from(study, split: str, records: list[dict], groups: dict[str, list[str]], tmp_path: Path) -> str:
    """The study's report from one split's evaluation made of ``records`` (its episodes, as results.json keeps them)."""
    from vlui.eval.report import across_seeds
    from vlui.study import evaluation_name, report

    out = tmp_path / "outputs" / "evaluate" / evaluation_name(study, split)
    out.mkdir(parents=True)
    (out / "results.json").write_text(json.dumps({"seeds": across_seeds(records, groups, {}), "records": records}))
    report(study, tmp_path / "report")
    return (tmp_path / "report" / "report.md").read_text()


def test_the_report_says_how_far_along_the_experts_path_each_arm_got(tmp_path: Path, monkeypatch) -> None:
    # success is rare and the same in both arms; the k4 arm's episodes get further along the expert's path (TCR)

    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    study = load("history", seeds=2, arms=["k0", "k4"], splits=["val"])
    groups = {arm: [str(run_dir(study, arm, s)) for s in study.seeds] for arm in study.arms}
    tcr = {("k0", 0): 0.1, ("k0", 1): 0.2, ("k4", 0): 0.4, ("k4", 1): 0.6}
    records = [{"task": f"call_contact@x{i}", "snapshot": f"val-{i % 4}", "run": 0, "checkpoint": groups[arm][seed],
                "success": i == 0, "adaptive": {"tcr": tcr[arm, seed], "tr_normalised": tcr[arm, seed] / 2,
                                                "rrr": 0.5}}
               for arm in study.arms for seed in study.seeds for i in range(8)]
    records.append({**records[0], "adaptive": None, "task": "call_contact@x9"})  # no reference: left out
    text = _report_from(study, "val", records, groups, tmp_path)
    assert "## How far along the expert's path (AndroidArena's adaptive metrics)" in text
    assert "| k0 | 0.150 [" in text and "| k4 | 0.500 [" in text  # each seed's mean, then their mean
    assert "- TCR, k4 − k0: +0.350 (bootstrap over seeds and phones: 95% CI [" in text
    with open(tmp_path / "report" / "progress.csv") as f:
        rows = {(r["arm"], r["metric"]): r for r in csv.DictReader(f)}
    assert float(rows["k4", "tr_normalised"]["mean"]) == pytest.approx(0.25)
    assert [float(rows["k4", "tcr"][f"seed{s}"]) for s in (0, 1)] == pytest.approx([0.4, 0.6])
    assert rows["k0", "tcr"]["minus_first"] == "" and float(rows["k4", "tcr"]["minus_first"]) == pytest.approx(0.35)
    assert "`python -m vlui.study history --size cpu --seeds 2 --arms k0,k4 --splits val`" in text


def test_a_run_started_from_another_arms_run_is_compared_seed_by_seed(tmp_path: Path, monkeypatch) -> None:
    # each PPO seed gains 10 or 15 points over its own starting policy, while the seeds differ among themselves by
    # 30; a split may name any evaluate.py overrides
    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    spec = yaml.safe_load(yaml.safe_dump(studies()["online"]))
    spec["cpu"]["splits"] = {"test": "test", "unseen": ["env.snapshots=random:20", "env.generator.seed=2"]}
    (tmp_path / "studies.yaml").write_text(yaml.safe_dump({"online": spec}))
    study = load("online", path=tmp_path / "studies.yaml", arms=["ppo", "dagger-mem"])
    assert list(study.splits) == ["val", "unseen", "test"]  # choose on validation (added), report test last
    assert any(" env.snapshots=random:20 env.generator.seed=2 runs=1 " in " ".join(cmd) for _, cmd, _ in commands(study))
    text = _report_of(study, {0: 10, 1: 13, 2: 16}, {0: 2, 1: 2, 2: 3}, tmp_path)
    assert "## `env.snapshots=random:20 env.generator.seed=2` (unseen)" in text
    assert "| arm | val (chosen on) | unseen | test (reported once) |" in text
    assert "Chosen on the validation phones (the highest mean, all tasks): **ppo**" in text
    assert text.index("## The 10 test snapshots, reported once and never chosen on (test)") > text.index("(unseen)")
    lines = [line for line in text.splitlines() if line.startswith("- ppo − dagger (paired by seed), **all tasks**")]
    assert len(lines) == 3 and lines[0].startswith("- ppo − dagger (paired by seed), **all tasks**: +11.7 ± 1.7 points")
    # t = 7 with 2 degrees of freedom; Holm's adjustment over the split's planned tests can only raise p: the paired
    # test and dagger-mem against the first arm, dagger (ppo starts from dagger: it is compared with it, paired)
    assert "(paired t-test across seeds: 95% CI [+4.5, +18.8], p = 0.0198, Holm-adjusted for 2 tests p = " in lines[0]
    tests = _p_values(lines[0])
    assert len(tests) == 2 and all(adjusted >= p for p, adjusted in tests) and "paired bootstrap over seeds" in lines[0]
    welch = next(line for line in text.splitlines() if line.startswith("- dagger − dagger-mem: "))
    assert "Welch's t-test across seeds" in welch and "bootstrap over seeds and phones: 95% CI [" in welch
    assert welch.endswith("not distinguishable from noise at this number of seeds and phones.")  # no difference
    assert not any(line.startswith(("- dagger − ppo", "- ppo − dagger-mem")) for line in text.splitlines())
    per_task = next(line for line in text.splitlines() if line.startswith("- ppo − dagger (paired by seed), Alarm2"))
    assert "exploratory (not adjusted)" in per_task
    _assert_tables(study, tmp_path / "report", phones=20)
    meta = json.loads((tmp_path / "report" / "study.json").read_text())
    assert meta["chosen_on_validation"] == "ppo"
    # the same gain in every seed is said as such: a t-test has no spread to measure it against; the phones do
    text = _report_of(study, {0: 10, 1: 13, 2: 16}, {0: 2, 1: 2, 2: 2}, tmp_path)
    assert ("**all tasks**: +10.0 points in every seed (no spread across seeds for a t-test; paired bootstrap over "
            "seeds and phones: 95% CI [") in text


def test_the_configurations_study_tests_each_step_against_the_one_before(tmp_path: Path, monkeypatch) -> None:
    # success out of 20 phones for seeds 0, 1, 2: 7 -> 21 a clear step, 21 -> 35 a small one, 35 -> 100 a large
    # one, 100 -> 500 none

    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    study = load("configurations")
    assert study.compare == "consecutive" and load("quickstart").compare == "first"
    successes = {"7": 2, "21": 6, "35": 7, "100": 14, "500": 14}
    text = _report_with(study, lambda arm, seed: successes[arm] + seed, tmp_path)
    assert "(Welch's, each arm against the one before it; paired by seed" in text
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    for step, points in (("21 − 7", "+20.0"), ("35 − 21", "+5.0"), ("100 − 35", "+35.0"), ("500 − 100", "+0.0")):
        mine = [line for line in lines if line.startswith(f"- {step}: {points} points (Welch's t-test")]
        assert len(mine) == 3, step  # on every split: val, train and test
        # four tests a split, each adjusted for the other three, the t-tests and the bootstrap tests apart
        assert all(len(_p_values(line)) == 2 and "Holm-adjusted for 4 tests p = " in line for line in mine)
    assert not any(line.startswith(("- 7 − ", "- 35 − 7", "- 500 − 7")) for line in lines)  # not against the first
    step_21 = next(line for line in lines if line.startswith("- 21 − 7"))
    assert step_21.endswith("a difference unlikely to be noise.")
    assert next(line for line in lines if line.startswith("- 500 − 100")).endswith(
        "not distinguishable from noise at this number of seeds and phones.")
    # a study reported before it compared consecutive arms: the same tests from its results.csv and per_phone.csv
    found = json.loads((tmp_path / "report" / "study.json").read_text())["differences"]
    stored = stored_differences(tmp_path / "report")
    assert list(stored) == list(study.splits)
    for split, tests in stored.items():
        assert [(c["a"], c["b"]) for c in tests] == [("21", "7"), ("35", "21"), ("100", "35"), ("500", "100")]
        for c, live in zip(tests, found[split], strict=True):
            assert (c["a"], c["b"]) == (live["a"], live["b"])
            assert c["p_holm"] == pytest.approx(live["p_holm"]) and c["ci95"] == pytest.approx(live["ci95"])
            boot, live_boot = c["bootstrap"], live["bootstrap"]
            assert [boot["difference"], *boot["ci95"], boot["p_holm"]] == pytest.approx(
                [live_boot["difference"], *live_boot["ci95"], live_boot["p_holm"]])
    spec = yaml.safe_load(yaml.safe_dump(studies()["configurations"]))
    (tmp_path / "studies.yaml").write_text(yaml.safe_dump({"configurations": {**spec, "compare": "previous"}}))
    with pytest.raises(VluiError, match=r"^study configurations: compare: 'previous' is not one of: first \(each arm "
                                        r"against the first\); consecutive \(each arm against the one before it\)$"):
        load("configurations", path=tmp_path / "studies.yaml")


def test_studies_choose_on_validation_and_report_test_last() -> None:
    for name in studies():
        for size in ("cpu", "gpu"):
            study = load(name, size)
            splits = list(study.splits)
            # a study that looks at the test snapshots at all reports them last; one that only chooses leaves them out;
            # one that chooses nothing (an agent comparison made as the paper made it) has no validation phones
            assert (splits[0] == "val") == study.chooses and ("test" not in splits or splits[-1] == "test"), (
                name, size, splits)
    assert load("quickstart").splits["val"] == ["env.snapshots=val"]
    assert "test" not in load("levers").splits  # levers are chosen on validation; the quickstart reports test


def _p_values(line: str) -> list[tuple[float, float]]:
    """The (p, Holm-adjusted p) pairs of a comparison's sentence."""
    return [(float(p), float(adjusted)) for p, adjusted in
            re.findall(r"p = ([0-9.e-]+), Holm-adjusted for \d+ tests? p = ([0-9.e-]+)", line)]


def _assert_tables(study, out: Path, phones: int) -> None:
    """results.csv has each arm's mean with its bootstrap interval around it, the t interval over the phones' means
    and each seed's success; per_phone.csv and the report's Per phone section each seed's success on each phone; the
    report's summary and its rows of all tasks have the t interval beside the bootstrap's."""
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(study.arms) * len(study.splits) * 2  # one task and 'all'
    for r in rows:
        assert float(r["ci_low"]) - 1e-9 <= float(r["mean"]) <= float(r["ci_high"]) + 1e-9, r
        assert all(r[f"seed{s}"] != "" for s in study.seeds) and r["stderr"] != ""
        # every seed ran one episode on every phone: the mean of the phones' means is the mean across seeds
        assert 0 <= float(r["t_low"]) - 1e-9 <= float(r["mean"]) <= float(r["t_high"]) + 1e-9 <= 1 + 2e-9, r
    with open(out / "per_phone.csv") as f:
        cells = list(csv.DictReader(f))
    assert len(cells) == len(study.arms) * len(study.splits) * phones * len(study.seeds)
    assert len({(c["arm"], c["split"], c["snapshot"], c["seed"]) for c in cells}) == len(cells)
    assert {float(c["success"]) for c in cells} == {0.0, 1.0}  # one episode per phone in these evaluations
    report = (out / "report.md").read_text()
    assert "in [ ] its 95% interval from a bootstrap over seeds and phones" in report and "per_phone.csv" in report
    summary = report[report.index("## Summary"):report.index("Chosen on the validation phones")]
    assert summary.count(f"(t over {phones} phones [") == len(study.arms) * len(study.splits)
    all_rows = [line for line in report.splitlines() if line.startswith("| **all** |")]
    assert len(all_rows) == len(study.splits) and all(line.count("(t over") == len(study.arms) for line in all_rows)
    per_phone = report[report.index("## Per phone"):]
    seeds = ", ".join(f"{next(iter(study.arms))}-seed{s}" for s in study.seeds)
    assert f"| phone | {next(iter(study.arms))}: mean ({seeds}) |" in per_phone
    assert len(re.findall(r"^\| s\d+ \|", per_phone, re.MULTILINE)) == len(study.splits) * phones


@pytest.mark.slow
def test_a_study_runs_its_steps_through_submitits_launcher_and_reports_the_same_way(tmp_path: Path) -> None:
    spec = tmp_path / "studies.yaml"
    spec.write_text(yaml.safe_dump(TINY, sort_keys=False))
    env = {"VLUI_ROOT": str(tmp_path)}
    result = run_python("-m", "vlui.study", "tiny", "--seeds", "2", "--arms", "scratch", "--studies", str(spec),
                        "--launcher", "submitit_local", "--launcher-set", "hydra.launcher.timeout_min=20", env=env,
                        timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    # every step ran as a submitit job (its own process, with its own log), the 2 seeds' runs as one stage
    logs = list((tmp_path / "multirun" / "study").rglob("*_log.out"))
    assert len(logs) == 1 + 2 + 2, [p.name for p in logs]  # the collection, 2 seeds, 2 evaluations
    for seed in (0, 1):
        assert (tmp_path / "checkpoints" / "study" / "tiny-cpu" / f"scratch-seed{seed}" / "policy").is_dir()
    out = tmp_path / "outputs" / "study" / "tiny-cpu-scratch"
    meta = json.loads((out / "study.json").read_text())
    assert set(meta["timings_s"]) >= {"collect tiny1", "train scratch seed 0", "train scratch seed 1",
                                      "evaluate on val", "evaluate on held-out"}
    with open(out / "results.csv") as f:
        assert {r["arm"] for r in csv.DictReader(f)} == {"scratch"} and "val" in (out / "report.md").read_text()


def test_splits_evaluates_some_of_a_studys_splits_and_always_the_validation_phones(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    study = load("history", splits=["train"])
    assert list(study.splits) == ["val", "train"]  # where the study chooses comes along
    evaluations = {what: cmd for what, cmd, _ in commands(study) if what.startswith("evaluate ")}
    assert list(evaluations) == ["evaluate on val", "evaluate on train"]
    # each evaluation takes the episodes its split's earlier evaluations have of the same runs
    assert "reuse=['outputs/evaluate/study-history-cpu-train-*']" in evaluations["evaluate on train"]
    with pytest.raises(VluiError, match="^--splits: the study has no split 'nope'; its splits: val, train, test$"):
        load("history", splits=["nope"])
    # a launched step reads the same study: the splits travel with it
    calls = []
    monkeypatch.setattr(study_mod.subprocess, "call", lambda cmd, **kwargs: calls.append(cmd) or 1)
    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    spec = _tiny(tmp_path)
    tiny = load("tiny", seeds=1, path=spec, splits=["val"])
    with pytest.raises(VluiError):
        study_mod.run(tiny, tmp_path / "out", studies_file=spec)
    assert "splits=['val']" in calls[0]
    job = StudyStepConfig(study="tiny", size="cpu", seeds=1, studies=str(spec), splits=["val"],
                          out=str(tmp_path / "out"), step=0, plan=plan_digest(tiny))
    monkeypatch.setattr(study_mod, "run_step", lambda study, *args: calls.append(list(study.splits)))
    step_job(job)
    assert calls[-1] == ["val"]


def test_a_studys_stages_run_an_arm_after_the_arm_it_starts_from() -> None:
    from vlui.study import stages

    study = load("online", seeds=2)
    steps = commands(study)
    order = {steps[i][0]: k for k, stage in enumerate(stages(study)) for i in stage}
    assert all(k == 0 for what, k in order.items() if what.startswith("collect "))  # the datasets first
    assert order["train dagger-mem seed 0"] < order["train ppo-bc-mem seed 0"] < order["evaluate on val"]
    assert order["train dagger-mem seed 0"] == order["train dagger-mem seed 1"]  # seeds side by side
    assert sorted(i for stage in stages(study) for i in stage) == list(range(len(steps)))


def test_an_unknown_launcher_is_one_line(tmp_path: Path) -> None:
    result = run_python("-m", "vlui.study", "tiny", "--launcher", "ray", "--studies", str(_tiny(tmp_path)),
                        env={"VLUI_ROOT": str(tmp_path)})
    assert result.returncode == 2 and "--launcher ray: choose from basic" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _tiny(tmp_path: Path) -> Path:
    spec = tmp_path / "studies.yaml"
    spec.write_text(yaml.safe_dump(TINY, sort_keys=False))
    return spec


def test_a_setting_by_its_old_name_in_a_study_is_refused_in_one_line_before_any_step(tmp_path: Path) -> None:
    edited = json.loads(json.dumps(TINY))
    edited["tiny"]["cpu"]["arms"]["online"] = ["algo=ppo", "init={run:scratch}", "algo.envs=64"]
    spec = tmp_path / "studies.yaml"
    spec.write_text(yaml.safe_dump(edited, sort_keys=False))
    with pytest.raises(VluiError, match=r"^study tiny, arm online: algo.envs is now env.num_envs \(one name for the "
                                        r"environments side by side, in every job\): write env.num_envs=64$"):
        load("tiny", path=spec, arms=["scratch"])  # an arm not asked for is refused too: the file is wrong
    agents = json.loads(json.dumps(TINY))
    agents["tiny"]["cpu"]["agents"] = {"llm": ["agent=text"]}
    (tmp_path / "agents.yaml").write_text(yaml.safe_dump(agents, sort_keys=False))
    with pytest.raises(VluiError, match=r"^study tiny, agent arm llm: parallel_envs is now env.num_envs .*: write "
                                        r"env.num_envs=4$"):
        load("tiny", path=tmp_path / "agents.yaml", sets=["parallel_envs=4"])  # --set on the command line
    result = run_python("-m", "vlui.study", "tiny", "--studies", str(spec), env={"VLUI_ROOT": str(tmp_path)})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["error: study tiny, arm online: algo.envs is now env.num_envs (one "
                                                  "name for the environments side by side, in every job): write "
                                                  "env.num_envs=64"]
    assert not (tmp_path / "data").exists() and not (tmp_path / "checkpoints").exists()  # nothing ran


def test_a_launched_step_refuses_a_study_whose_steps_changed_since_the_launch(tmp_path: Path) -> None:
    spec = _tiny(tmp_path)
    started = plan_digest(load("tiny", path=spec))
    assert plan_digest(load("tiny", path=spec)) == started
    edited = json.loads(json.dumps(TINY))
    edited["tiny"]["cpu"]["datasets"]["tiny0"] = ["env.snapshots=[000]"]  # a dataset more: every step shifts by one
    spec.write_text(yaml.safe_dump(edited, sort_keys=False))
    assert plan_digest(load("tiny", path=spec)) != started
    job = StudyStepConfig(study="tiny", size="cpu", seeds=3, studies=str(spec), out=str(tmp_path / "out"), step=1,
                          plan=started)
    with pytest.raises(VluiError, match=r"^study tiny: its steps changed since this launch began .* run python -m "
                                        r"vlui.study tiny again$"):
        step_job(job)
    assert not (tmp_path / "out").exists()  # nothing ran


@pytest.mark.parametrize("digest", ["12e345678901", "123456789012", "0123456789ab"])
def test_a_launched_step_reads_the_plan_it_was_launched_with_even_when_it_looks_like_a_number(
        tmp_path: Path, monkeypatch, digest: str) -> None:
    # a digest of digits and one "e" read unquoted is a float (12e345678901 is inf): every launched step then refused
    # its study as "changed since this launch began"
    calls = []
    monkeypatch.setattr(study_mod.subprocess, "call", lambda cmd, **kwargs: calls.append(cmd) or 1)
    monkeypatch.setattr(study_mod, "plan_digest", lambda study: digest)
    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    spec = _tiny(tmp_path)
    with pytest.raises(VluiError):
        study_mod.run(load("tiny", seeds=1, path=spec), tmp_path / "out", studies_file=spec)
    launched = [o for o in calls[0][4:] if not o.startswith(("step=", "hydra/launcher="))]
    assert compose("study", [*launched, "step=0"], output_dir=tmp_path / "step").plan == digest


def test_steps_side_by_side_here_share_the_cores_out_as_torch_threads(tmp_path: Path, monkeypatch) -> None:
    spec = _tiny(tmp_path)
    study = load("tiny", seeds=2, path=spec, arms=["scratch"])
    calls = []

    class Launched(Exception):
        pass

    def call(cmd, **kwargs):
        calls.append((cmd, kwargs))
        raise Launched  # the first stage's launch is all this test looks at

    monkeypatch.setattr(study_mod.subprocess, "call", call)
    monkeypatch.setattr(study_mod, "threads_per_job", lambda jobs: {1: 8, 2: 4}[jobs])  # an 8-core machine
    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    for launcher, threads in (("submitit_local", "threads=8"), ("basic", "threads=0"), ("slurm", "threads=0")):
        with pytest.raises(Launched):
            study_mod.run(study, tmp_path / "out", launcher=launcher)
        assert threads in calls[-1][0], calls[-1][0]  # one collection: a job alone has every core
    # the two seeds' trainings, side by side as local processes, get half the cores each
    (tmp_path / "data" / "tiny1").mkdir(parents=True)
    monkeypatch.setattr(study_mod, "commands", lambda s: [
        (what, cmd, tmp_path / "data" / "tiny1" if what.startswith("collect") else done)
        for what, cmd, done in commands(s)])
    with pytest.raises(Launched):
        study_mod.run(study, tmp_path / "out", launcher="submitit_local")
    assert "threads=4" in calls[-1][0] and any(a.startswith("step=") and "," in a for a in calls[-1][0])

    # a launched step starts its command with OMP_NUM_THREADS set to its share, unless the user has set it
    def step_env(threads: int) -> str | None:
        calls.clear()
        with pytest.raises(Launched):
            study_mod.run_step(study, 1, tmp_path / "out", threads=threads)
        return calls[-1][1]["env"].get("OMP_NUM_THREADS")

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert step_env(4) == "4" and step_env(0) is None
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert step_env(4) == "3"


def test_a_reports_per_phone_section_is_written_from_its_csv_once(tmp_path: Path) -> None:
    # a report made before the Per phone section existed gets it from its per_phone.csv, before "How it was made";
    # run again, the section is replaced, not repeated
    (tmp_path / "report.md").write_text("# Study\n\n## Summary\n\ntext\n\n## How it was made\n\ncommands\n")
    rows = [("a", "val", "val-0-10", 0, 1.0), ("a", "val", "val-0-2", 0, 0.5), ("a", "val", "val-0-2", 1, 0.0),
            ("a", "val", "val-0-10", 1, 0.5), ("b", "val", "val-0-2", 0, 1.0), ("a", "train", "000", 0, 0.25)]
    with open(tmp_path / "per_phone.csv", "w", newline="") as f:
        csv.writer(f).writerows([("arm", "split", "snapshot", "seed", "success"), *rows])
    for _ in range(2):
        assert per_phone([str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert text.count("## Per phone") == 1 and text.index("## Per phone") < text.index("## How it was made")
    assert text.endswith("## How it was made\n\ncommands\n") and "## Summary\n\ntext\n" in text
    val = text[text.index("val:"):text.index("train:")]
    assert val.index("| val-0-2 |") < val.index("| val-0-10 |")  # phones in numeric order
    assert "| phone | a: mean (seed0, seed1) | b (seed0) |" in val
    assert "| val-0-2 | 25.0 (50.0, 0.0) | 100.0 |" in val  # the mean over the seeds, then each seed's
    assert "| val-0-10 | 75.0 (100.0, 50.0) | – |" in val  # an arm not evaluated on a phone
    assert "| 000 | 25.0 |" in text[text.index("train:"):]


def test_a_per_phone_csv_that_is_not_one_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "report.md").write_text("# Study\n")
    (tmp_path / "per_phone.csv").write_text("arm,split,phone\na,val,000\n")
    assert per_phone([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "lacks the column(s) seed, snapshot, success" in err and err.count("\n") == 1
    assert (tmp_path / "report.md").read_text() == "# Study\n"


def test_a_study_over_many_apps_reports_each_apps_tasks_pooled(tmp_path: Path, monkeypatch) -> None:
    # the release study's report pools its tasks by app: Calculator's two tasks count together, Clock's one alone

    monkeypatch.setenv("VLUI_ROOT", str(tmp_path))
    study = load("bmoca25", seeds=3, splits=["test"])
    assert study.by_app and list(study.splits) == ["test"]
    groups = {arm: [str(run_dir(study, arm, s)) for s in study.seeds] for arm in study.arms}
    solved = {("release", "b25_calc_50_percent_of_28"), ("release", "b25_calc_harmonic_mean"),
              ("paper", "b25_calc_50_percent_of_28")}
    tasks = ["b25_calc_50_percent_of_28", "b25_calc_harmonic_mean", "b25_alarm_1030"]
    records = [{"task": task, "snapshot": f"1{i:02d}", "run": 0, "checkpoint": groups[arm][seed],
                "success": (arm, task) in solved and i < 8}
               for arm in study.arms for seed in study.seeds for task in tasks for i in range(10)]
    text = _report_from(study, "test", records, groups, tmp_path)
    assert "## By app (test)" in text
    assert "| calculator | 2 | 80.0 [" in text and "| clock | 1 | 0.0 [" in text
    with open(tmp_path / "report" / "by_app.csv") as f:
        rows = {(r["arm"], r["app"]): r for r in csv.DictReader(f)}
    assert float(rows["paper", "calculator"]["mean"]) == pytest.approx(0.4)  # one of its two tasks, on 8 of 10 phones
    assert rows["release", "clock"]["tasks"] == "1" and float(rows["release", "clock"]["seed2"]) == 0.0
