"""B-MoCA release 2.5's 131 tasks (``vlui/tasks/data/bmoca25.yaml``), held to the release's task files as
``tests/reference/bmoca25_tasks.tsv`` has them; how ``tasks=bmoca25`` selects them; how the simulated phone refuses
the ones it cannot run yet; the tasks judged by an evaluator check, ended by it in the environment; and
``tests/reference/make_bmoca25.py``, which writes the table from a B-MoCA clone."""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests import fixture_app
from vlui.agents.expert import ExpertAgent
from vlui.android.apps import apps
from vlui.android.i18n import locales
from vlui.android.snapshot import snapshot_ids
from vlui.backends import resolve_snapshots
from vlui.env.settings import EnvConfig, env_settings
from vlui.env.env import PhoneEnv, make_env, open_env
from vlui.env.ui_text import parse_xml
from vlui.errors import VluiError
from vlui.resources import read_yaml
from vlui.sim.apps.chrome import chrome_state
from vlui.sim.apps.deskclock import alarm_rows
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import (
    RELEASE,
    RELEASE_DIALER,
    Detector,
    catalog,
    installs,
    release_pins,
    release_tasks,
    resolve_tasks,
    task_set,
    tasks,
)
from vlui.tasks.checks import check_problem, check_reads

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
TABLE = REFERENCE / "bmoca25_tasks.tsv"  # the release's task files, read by make_bmoca25.py (tests/reference)
SAME = "the same instruction, step limit and detector"
# sim: false though the phone judges them right: B-MoCA's step limit fits the release's 45 snapshots (with their home
# screens), but is one step short on a generated phone whose app drawer must scroll to Snapseed (their sim_note)
OVER_BUDGET = {"b25_snapseed_s03_after_dark_theme", "b25_snapseed_s03_after_quality_100",
               "b25_snapseed_s03_after_sizing_2000"}
# Phones whose locale writes numbers in digits of its own: Chrome's tab count reads so (Android's String.format), and
# b25_chrome_new_tab's check, which looks for the character "2", cannot hold there, as on a real phone
OWN_DIGITS = [lid for lid, meta in locales().items() if meta["digits"][2] != "2"]


def table() -> list[dict[str, str]]:
    with TABLE.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def entries() -> list[dict]:
    return read_yaml(RELEASE)["tasks"]


def kind(task) -> str:
    """How the catalogue's task is judged, in the table's words."""
    return "logcat" if task.log_tag else "evaluator" if task.evaluator else "none"


# The release's tasks judged by an evaluator check on apps the simulated phone has, and how the expert reaches their
# goal there: the catalog's tasks whose recipes it follows in turn, each until that task's own detector fires (a task
# judged by a check, last, until the episode ends). The alarms that repeat: the alarm, then its days. The calls: the
# call placed, on the release phones' AOSP Dialer. A new tab in Chrome, through its tab switcher.
GOALS = {
    "b25_chrome_new_tab": ["b25_chrome_new_tab"],
    "b25_alarm_1330_and_2h_after": ["alarm_1330", "create_alarm@1530"],
    "b25_alarm_1330_and_2h_before": ["alarm_1330", "create_alarm@1130"],
    "b25_alarm_9am_delete_and_1030": ["alarm_9am_delete", "alarm_1030"],
    "b25_alarm_1030_and_alarm_volume": ["alarm_1030", "volume_alarm_up"],
    "b25_alarm_1330_and_alarm_volume": ["alarm_1330", "volume_alarm_up"],
    "b25_alarm_1330_weekend_and_alarm_volume": ["alarm_1330", "b25_alarm_1330_weekend", "volume_alarm_up"],
    "b25_alarm_9am_on_and_alarm_volume": ["alarm_9am_on", "volume_alarm_up"],
    **{f"b25_alarm_{time}_{days}": [f"alarm_{time}", f"b25_alarm_{time}_{days}"] for time in ("1030", "1330")
       for days in ("midweek", "weekdays", "weekend") if (time, days) != ("1330", "midweek")},
    **{t.id: [f"call_number@{''.join(c for c in t.instruction if c.isdigit())}"] for t in release_tasks().values()
       if t.id.startswith("b25_call_") and t.evaluator_check},
    # Snapseed: each by its own recipe; a setting, then Noir's S03
    **{t: [t] for t in ("b25_open_snapseed", "b25_snapseed_open_image", "b25_snapseed_tools", "b25_snapseed_s03",
                        "b25_snapseed_dark_theme", "b25_snapseed_quality_100", "b25_snapseed_sizing_2000")},
    **{f"b25_snapseed_s03_after_{name}": [f"b25_snapseed_{name}", "b25_snapseed_s03"]
       for name in ("dark_theme", "quality_100", "sizing_2000")},
    # Wikipedia: each task's own recipe, to its end
    **{t.id: [t.id] for t in release_tasks().values() if "wikipedia" in t.apps},
    **{t.id: [t.id] for t in release_tasks().values() if t.apps == ("calculator",)},  # the Calculator's own recipes
    # Walmart and Instagram: each task's own recipe, until its check ends the episode
    **{t.id: [t.id] for t in release_tasks().values() if {"walmart", "instagram"} & set(t.apps)},
}


def drive(env: PhoneEnv, task: str, snapshot: str, parts: list[str] | None = None) -> tuple[bool, list[int | None]]:
    """The episode of ``task`` on ``snapshot``, the expert following ``parts`` (:data:`GOALS`) in turn: whether the
    task's check held at the start, and after each part the step at which the episode had ended in success (None:
    not yet)."""
    obs, info = env.reset(options={"task": task, "snapshot": snapshot})
    at_start = Detector(env.task).holds(env.device, lambda: parse_xml(env.device.ui_xml()))
    agent, done, success, after = ExpertAgent(), False, None, []
    for part in parts or GOALS[task]:
        sub = release_tasks().get(part) or resolve_tasks([part])[0]  # a release task, even one refused
        agent.reset(sub)
        mark = env.device.log_mark()
        while not done and not reached(env, sub, mark):
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            done, success = terminated or truncated, info["step"] if reward == 1.0 else None
        after.append(success)
    return at_start, after


def reached(env: PhoneEnv, part, mark: int) -> bool:
    """Whether a part of a goal is reached: its log line printed since ``mark``, or its check holding."""
    if part.log_tag:
        return Detector(part).match(env.device.log_lines(mark)) is not None
    return Detector(part).holds(env.device, lambda: parse_xml(env.device.ui_xml()))


def judged_right(runs: list[tuple[bool, list[int | None]]]) -> bool:
    """Whether a task's check held on every run once its whole goal was reached, and never before."""
    return all(not at_start and after[-1] is not None and after[:-1] == [None] * (len(after) - 1)
               for at_start, after in runs)


def evaluator_env(snapshots: list[str]) -> PhoneEnv:
    """An environment of every task in :data:`GOALS` on the simulated phone, those it refuses included."""
    return PhoneEnv(SimDevice(snapshots[0]), [release_tasks()[t] for t in GOALS], snapshots, include_xml=True,
                    include_screen=False)


# ------------------------------------------------------------------------------------------------ the catalogue
def test_the_catalogue_has_each_release_task_file_once_with_its_instruction_step_limit_and_reset() -> None:
    rows = table()
    assert len(rows) == 131 and len({r["file"] for r in rows}) == 131
    release = release_tasks()
    assert [t.source for t in release.values()] == [r["file"] for r in rows]
    source = {r["source"] for r in rows}
    assert source == {read_yaml(RELEASE)["source"]} and len(source) == 1
    for row, t, raw in zip(rows, release.values(), entries(), strict=True):
        assert t.instruction == row["instruction"], t.id
        assert t.step_limit == int(row["max_episode_steps"]), t.id
        assert ";".join(raw["reset"]) == row["reset_steps"], t.id
        assert raw.get("device_time", "") == row["device_time"], t.id
        assert row["app"] in t.apps, t.id


def test_every_task_is_judged_by_the_release_detector() -> None:
    for row, t, raw in zip(table(), release_tasks().values(), entries(), strict=True):
        assert kind(t) == row["detector"] == raw["detector"], t.id
        if row["detector"] == "logcat":
            tag, level = row["log_filters"].split(":")
            assert (t.log_tag, raw["log_level"], t.regex) == (tag, level, row["log_regex"]), t.id
            assert float(row["log_reward"]) > 0 and not t.evaluator_check, t.id
        elif row["detector"] == "evaluator":
            assert t.evaluator == row["evaluator"] and t.evaluator_check and not t.regex, t.id
        else:  # the release never rewards it; vlui judges it by the check of the evaluator meant for it
            assert raw["meant"] in row["note"] and t.evaluator_check and "never rewards" in raw["note"], t.id
    assert Counter(r["detector"] for r in table()) == {"logcat": 48, "evaluator": 75, "none": 8}


def test_a_logcat_task_fires_on_its_line_and_an_evaluator_task_on_no_line() -> None:
    release = release_tasks()
    line = "11-23 08:00:18.000  1210  1247 D ConditionProviders.SCP: evaluateSubscriptionLocked " \
           "nextUserAlarmTime=Mon Nov 23 10:30:00 GMT 2026 (1795429800000)"
    assert Detector(release["b25_alarm_1030"]).match([line]) == line
    assert Detector(release["b25_alarm_1330"]).match([line]) is None
    placeholder = "11-23 08:00:18.000  1210  1247 I ActivityTaskManager: This task is independent to logcat " \
                  "logging. Please Ignore this string."
    assert Detector(release["b25_open_calculator"]).match([placeholder, line]) is None


def test_links_to_the_papers_sixty_say_every_difference() -> None:
    linked = [t for t in release_tasks().values() if t.paper]
    assert len(linked) == 48 and all(t.log_tag for t in linked)  # every logcat task, no evaluator task
    assert len({t.paper for t in linked}) == 48
    notes = {raw["id"]: raw["paper_note"] for raw in entries() if "paper" in raw}
    worded = 0
    for t in linked:
        p, note = tasks()[t.paper], notes[t.id]
        differs = {"instruction": p.instruction != t.instruction, "step limit": p.step_limit != t.step_limit,
                   "log tag": p.log_tag != t.log_tag, "regex": p.regex != t.regex}
        assert note.startswith(SAME) == (not any(differs.values()) and not p.state), t.id
        if differs["instruction"]:
            worded += 1
            assert f"worded {p.instruction!r}" in note, t.id
        if differs["step limit"]:
            assert f"step limit {t.step_limit} here, {p.step_limit} in the paper" in note, t.id
        for what in ("log tag", "regex"):
            assert (what in note) == differs[what], (t.id, what)
        assert (f"vlui's {p.id} starts from a state" in note) == bool(p.state), t.id
    assert worded == 6  # "open Chrome" for "open the chrome app", and five more


@pytest.mark.parametrize("check, problem", [
    ([{"ui": "com.google.android.calculator:id/formula", "txt": "1+1"}], "'txt' is not an attribute"),
    ([{"alarms": {"has": {"hour": 10, "minute": 30}}}], "an alarm row names some of"),
    ([{"prefs": "wikipedia", "file": "p.xml", "int": "textSizeMultiplier", "equals": "8"}], "equals a int"),
    ([{"volume": "alarms", "above": 1}], "volume names a stream"),
    ([{"screen": "formula"}], "starts with one of"),
    ([], "non-empty list"),
])
def test_a_mistake_in_an_evaluator_check_is_named_when_the_catalogue_is_read(check, problem) -> None:
    assert problem in (check_problem(check) or "")
    assert all(check_problem(t.evaluator_check) is None for t in release_tasks().values() if t.evaluator_check)


# ------------------------------------------------------------------------------------------------ selection
def test_tasks_bmoca25_selects_the_release_and_tasks_all_still_means_the_papers_sixty() -> None:
    ids = task_set("bmoca25")
    assert len(ids) == 131 and [release_tasks()[i].source for i in ids] == [r["file"] for r in table()]
    assert task_set("all") == list(tasks()) and len(task_set("all")) == 60
    assert not set(ids) & set(task_set("all")) and set(catalog()) == set(ids) | set(task_set("all"))
    supported = resolve_tasks("bmoca25_supported", backend="sim")
    assert [t.id for t in supported] == [i for i in ids if release_tasks()[i].sim] and len(supported) == 119
    # over ADB a real phone has the apps: every task runs, those judged by Clock's alarms database or an app's
    # shared preferences too (read as root: tests/served/test_app_files_over_adb.py)
    assert [t.id for t in resolve_tasks("bmoca25", backend="adb")] == ids
    by_file = [i for i in ids if any(r == "alarms" or r.endswith(".shared_prefs")
                                     for r in check_reads(release_tasks()[i].evaluator_check))]
    assert len(by_file) == 31 and {"b25_alarm_1330_and_2h_after", "b25_snapseed_dark_theme"} <= set(by_file)


def test_tasks_bmoca25_on_the_simulated_phone_is_refused_in_one_line_naming_what_it_cannot_run() -> None:
    with pytest.raises(VluiError) as e:
        resolve_tasks("bmoca25", backend="sim")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("the simulated phone does not support 12 of these tasks yet")
    assert "tasks=bmoca25_supported" in msg


def test_every_release_tasks_apps_are_on_the_simulated_phone_and_each_task_it_cannot_judge_says_why() -> None:
    """The release's five apps are all simulated (vlui/sim/apps): no task lacks an app; one it does not run says why
    (its sim_note); over ADB, a phone without one of the apps is refused by name (tests/adb)."""
    for t in release_tasks().values():
        assert all(a in apps() for a in t.apps), t.id
        if not t.sim:
            assert t.unsupported and "it has no" not in t.unsupported, t.id


def test_release_runs_have_the_releases_apps_that_vlui_knows_and_paper_runs_none(monkeypatch) -> None:
    pins = release_pins()
    assert {key: (pin.name, pin.version) for key, pin in pins.items()} == {
        "calculator": ("Calculator", "8.6 (612662282)"), "instagram": ("Instagram", "325.0.0.35.91 (372509503)"),
        "snapseed": ("Snapseed", "2.20.0.526050212 (1251211)"), "walmart": ("Walmart", "24.19 (24190029)"),
        "wikipedia": ("Wikipedia", "2.7.50484-r-2024-04-19 (50484)")}
    release, paper = list(release_tasks().values()), list(tasks().values())
    assert installs(paper) == ()
    # and AOSP's Dialer as their Phone app, the android-29 google_apis image's
    assert installs(release) == (*(pin for key, pin in pins.items() if key in apps()), RELEASE_DIALER)
    fixture_app.register(monkeypatch, pinned=True)
    assert installs(paper) == () and fixture_app.PIN in installs(release + paper)
    monkeypatch.setitem(pins, fixture_app.KEY, dataclasses.replace(fixture_app.PIN, package="org.other.notes"))
    with pytest.raises(VluiError, match="bmoca25.yaml: the release's Notes .test fixture. is org.other.notes, but "
                                        "apps.yaml's fixture_notes is org.vlui.fixture.notes"):
        installs(release)


# ------------------------------------------------------------------------------------------------ evaluator checks
def test_an_evaluator_task_ends_at_the_step_its_whole_goal_holds() -> None:
    """"delete alarm at 9 am and create alarm at 10:30 am", on a phone and the tablet: its check does not hold at the
    start, nor once the 9 am alarm is gone; the environment ends the episode with reward 1 at the step the 10:30
    alarm is saved, with no log line to say so."""
    env = make_env(EnvConfig(snapshots=["000", "109"]), ["b25_alarm_9am_delete_and_1030"], include_xml=True,
                   include_screen=False)
    for snapshot in ("000", "109"):
        at_start, (deleted, made) = drive(env, "b25_alarm_9am_delete_and_1030", snapshot)
        assert (at_start, deleted) == (False, None) and made <= env.task.step_limit, snapshot
        alarms = [(a["hour"], a["minutes"]) for a in alarm_rows(env.device.state)]
        assert (9, 0) not in alarms and (10, 30) in alarms


def test_an_evaluator_task_its_check_cannot_judge_is_refused_saying_why() -> None:
    with pytest.raises(VluiError) as e:
        resolve_tasks(["b25_alarm_1030_and_alarm_volume"], backend="sim")
    assert str(e.value).startswith("the simulated phone does not support task b25_alarm_1030_and_alarm_volume yet: "
                                   "B-MoCA's evaluator check cannot judge it there: its alarm volume is over 1 from "
                                   "the start")
    for task in OVER_BUDGET:  # judged right: the refusal names the step limit, not the check
        assert release_tasks()[task].unsupported.startswith(
            "B-MoCA's step limit is too short for it on some of vlui's phones: B-MoCA gives it 1"), task
    runs = [drive(evaluator_env(["000"]), task, "000") for task in (
        "b25_alarm_1030_and_alarm_volume", "b25_alarm_1330_weekend_and_alarm_volume")]
    # the alarm alone ends the first (the volume is already over 1); the second's check reads an alarm on weekdays, so
    # the weekend alarm and the volume its instruction asks for never meet it
    assert [(at_start, [step is not None for step in after]) for at_start, after in runs] == \
        [(False, [True, True]), (False, [False, False, False])]


@pytest.mark.slow
def test_sim_is_true_exactly_where_the_release_detector_fires_on_the_simulated_phone(expert_runs) -> None:
    """On all 45 snapshots. A logcat task marked ``sim`` has its release detector fire on every expert's episode of
    the paper's task with the same goal, and one not marked on none (its ``sim_note`` says what the simulated phone
    logs instead). An evaluator task marked ``sim`` has its check hold once the expert has reached its whole goal
    (:data:`GOALS`), never before; one not marked does not (its ``sim_note`` says why)."""
    snapshots = snapshot_ids("all")
    env = evaluator_env(snapshots)
    wrong = []
    for t in release_tasks().values():
        if not t.log_tag:
            right = t.id in GOALS and judged_right([drive(env, t.id, s) for s in snapshots])
            if right != (t.sim or t.id in OVER_BUDGET):
                wrong.append(f"{t.id} (sim: {t.sim}): its check {'holds' if right else 'does not hold'} exactly from "
                             f"the step its whole goal is reached, on all {len(snapshots)} snapshots")
            continue
        fired = [s for s in snapshots if Detector(t).match(expert_runs[t.paper, s].lines) is not None]
        if fired != (snapshots if t.sim else []):
            wrong.append(f"{t.id} (sim: {t.sim}) fired on {len(fired)} of {len(snapshots)} snapshots")
        if not t.sim:
            assert "sim_note" in t.unsupported, t.id
    assert not wrong, "\n".join(wrong)
    assert sum(t.sim for t in release_tasks().values()) == 119


# ------------------------------------------------------------------------------------------------ make_bmoca25.py
def _script():
    spec = importlib.util.spec_from_file_location("make_bmoca25", REFERENCE / "make_bmoca25.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


TASK_FILE = """reset_steps:[
  {{ adb_request: {{ press_button: {{ button: HOME }} }} }}
]
max_episode_steps: {steps}
log_parsing_config: {{
  filters: ["{filter}"]
  log_regexps: {{
    reward_event: {{
        # a comment, as one release file has
        event: "{regex}"
        reward: {reward}
    }}
  }}
}}
"""
PLACEHOLDER = "This task is independent to logcat logging. Please Ignore this string."
FAKE_CODE = {  # a B-MoCA-shaped repository: the parts of its code the script reads, written for this test
    "bmoca/environment/environment.py": (
        "class BMocaEnv:\n"
        "    def set_device(self, load=None):\n"
        "        if \"06:30\" in self.instruction:\n"
        "            command = f'adb -s emulator-{self.port} shell \"su 0 toybox date 123106272015.00\"'\n"
        "        elif \"10:30\" in self.instruction:\n"
        "            command = f'adb -s emulator-{self.port} shell \"su 0 toybox date 010103302016.00\"'\n"),
    "bmoca/environment/evaluator_script/evaluator.py": (
        "import bmoca.environment.evaluator_script.demo as demo_evaluator\n\n\n"
        "class Evaluator:\n"
        "    def success_detector(self, driver):\n"
        "        if self.task_instruction == \"Goal: input '1+1' in Demo\":\n"
        "            return demo_evaluator.check_sum(driver)\n"
        "        elif self.task_instruction == \"Goal: go to the x page in Demo\":\n"
        "            return demo_evaluator.check_page(driver)\n"
        "        else:\n"
        "            return False\n"),
    "bmoca/environment/evaluator_script/demo/__init__.py": "from .sum import check_sum\nfrom .page import check_page\n",
}


def _fake_release(root: Path) -> str:
    files = {
        "asset/tasks/demo/open_the_demo_app.textproto": dict(steps=4, filter="ActivityTaskManager:I",
                                                             regex=r"^(.*?)Events: \[Demo\]", reward=1),
        "asset/tasks/demo/input_'1+1'_in_Demo.textproto": dict(steps=8, filter="ActivityTaskManager:I",
                                                               regex=PLACEHOLDER, reward=0),
        "asset/tasks/demo/go_to_the_x_page.textproto.textproto": dict(steps=5, filter="Telecom:I",
                                                                      regex="^(.*?)Emergency", reward=0),
        "asset/tasks/demo/create_alarm_at_06:30_am.textproto": dict(steps=11, filter="ConditionProviders.SCP:D",
                                                                    regex="^(.*?)06:30:00", reward=1),
    }
    for path, fields in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(TASK_FILE.format(**fields), encoding="utf-8")
    for path, text in FAKE_CODE.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fake"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def test_the_script_reads_a_release_as_b_moca_runs_it(tmp_path: Path) -> None:
    commit = _fake_release(tmp_path / "b-moca")
    subprocess.run(["git", "clone", "-q", "--mirror", str(tmp_path / "b-moca"), str(tmp_path / "mirror")], check=True)
    script = _script()
    for source in ("b-moca", "mirror"):  # a work tree, and a git directory with none
        out = tmp_path / f"{source}.tsv"
        script.main([str(tmp_path / source), "--out", str(out)])
        with out.open(encoding="utf-8", newline="") as f:
            rows = {r["file"]: r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)}
        assert list(rows) == sorted(rows) and len(rows) == 4
        opened = rows["demo/open_the_demo_app.textproto"]
        assert (opened["instruction"], opened["detector"], opened["log_regex"]) == \
            ("open the demo app", "logcat", r"^(.*?)Events: \[Demo\]")  # "\[" keeps its backslash, as protobuf reads it
        typed = rows["demo/input_'1+1'_in_Demo.textproto"]
        assert (typed["instruction"], typed["detector"], typed["evaluator"]) == \
            ("input '1+1' in Demo", "evaluator", "demo/sum.py")
        page = rows["demo/go_to_the_x_page.textproto.textproto"]  # B-MoCA keeps the name up to its first "."
        assert (page["instruction"], page["detector"]) == ("go to the x page", "none")
        assert "'Goal: go to the x page in Demo' (demo/page.py)" in page["note"] and "reward 0" in page["note"]
        alarm = rows["demo/create_alarm_at_06:30_am.textproto"]
        assert (alarm["device_time"], alarm["log_filters"], alarm["max_episode_steps"], alarm["reset_steps"]) == \
            ("2015-12-31T06:27:00", "ConditionProviders.SCP:D", "11", "press_button:HOME")
        assert {r["source"] for r in rows.values()} == {f"gimme1dollar/b-moca@{commit}"}


# ------------------------------------------------------------------------------------------------ Chrome's tabs


@pytest.mark.parametrize("snapshots", [snapshot_ids("all"), ["random:20", "val:10"]])
def test_the_expert_opens_a_new_tab_in_chrome_on_every_phone_whose_digits_the_check_reads(snapshots) -> None:
    """b25_chrome_new_tab on the 45 snapshots and 30 generated phones: the expert ends it with reward 1 within
    B-MoCA's five steps on every phone but those whose locale writes its own digits (snapshot 109, Egyptian Arabic),
    where it opens the tab and the check never holds: why the task stays refused (its sim_note), as the geometric
    mean is."""
    settings = env_settings({"backend": "sim", "snapshots": snapshots})
    env = open_env(settings, [release_tasks()["b25_chrome_new_tab"]], resolve_snapshots(settings), include_xml=True,
                   include_screen=False)
    outcome = {}
    for snapshot in env.snapshots:
        obs, info = env.reset(options={"task": "b25_chrome_new_tab", "snapshot": snapshot})
        agent, done, reward = ExpertAgent(), False, 0.0
        agent.reset(env.task)
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
        outcome[snapshot] = (reward == 1.0, env.device.snapshot.locale in OWN_DIGITS, chrome_state(env.device).tabs)
    assert all(won != own_digits and tabs > 1 for won, own_digits, tabs in outcome.values()), outcome
    if snapshots == snapshot_ids("all"):
        assert [s for s, (won, _, _) in outcome.items() if not won] == ["109"]
