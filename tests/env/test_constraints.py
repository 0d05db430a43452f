"""Constrained tasks (AndroidArena's app, page and component levels): the watch's rules on hand-made screens, the
environment's reward and record on the simulated phone, the expert keeping every constraint, the report's rates."""

from __future__ import annotations

import pytest

from vlui.agents.expert import ExpertAgent
from vlui.agents.walkthrough import walkthrough
from vlui.env.settings import EnvConfig
from vlui.env.actions import ParsedAction, normalised_to_action
from vlui.env.constraints import ConstraintWatch
from vlui.env.env import make_env
from vlui.env.ui_text import Element, parse_xml
from vlui.errors import VluiError
from vlui.eval.report import aggregate, table, violations
from vlui.rollout import EpisodeRecord, Job, result_line
from vlui.sim.phone import SimDevice
from vlui.tasks import templates
from vlui.tasks.task import Constraint

CONSTRAINED = templates.family_templates("constrained")
ROW = Element(1, "pkg:id/row", clickable=True, bounds=(0, 100, 400, 200))
TITLE = Element(2, "pkg:id/title", text="Delete", bounds=(20, 120, 120, 160), parent=1)
SCREEN = [Element(0, bounds=(0, 0, 400, 800), package="pkg"), ROW, TITLE]


def tap(x: float, y: float, size=(400, 800)) -> ParsedAction:
    return ParsedAction("tap", (y / size[1], x / size[0]), (y / size[1], x / size[0]))


def test_a_component_is_tapped_through_the_clickable_that_holds_it_and_counted_once() -> None:
    watch = ConstraintWatch([Constraint("component", "without deleting", text="Delete")])
    assert watch.step(1, tap(300, 150), (400, 800), SCREEN, [], SCREEN)[0].evidence == "tapped pkg:id/title at (300, 150)"
    assert watch.step(2, tap(300, 150), (400, 800), SCREEN, [], SCREEN) == []  # broken once, at step 1
    assert [v.step for v in watch.violations] == [1]
    fresh = ConstraintWatch([Constraint("component", "without deleting", id="pkg:id/title")])
    assert fresh.step(1, tap(300, 300), (400, 800), SCREEN, [], SCREEN) == []  # below the row
    swipe = ParsedAction("swipe", (150 / 800, 0.75), (0.5, 0.75))
    assert fresh.step(2, swipe, (400, 800), SCREEN, [], SCREEN) == []  # a swipe taps nothing
    assert fresh.step(3, None, (400, 800), SCREEN, [], SCREEN) == []  # a malformed action does nothing


def test_a_tap_on_a_dialog_over_the_named_element_does_not_touch_it() -> None:
    dialog = Element(3, "pkg:id/dialog", clickable=True, bounds=(0, 50, 400, 400))  # drawn after the row: on top
    watch = ConstraintWatch([Constraint("component", "without deleting", text="Delete")])
    assert watch.step(1, tap(60, 140), (400, 800), [*SCREEN, dialog], [], SCREEN) == []
    assert watch.step(2, tap(60, 140), (400, 800), SCREEN, [], SCREEN) != []  # the dialog gone, the row takes it


def test_a_page_is_entered_when_its_element_is_on_the_screen_after_the_step() -> None:
    watch = ConstraintWatch([Constraint("page", "without the row page", id="pkg:id/row")])
    assert watch.step(1, tap(1, 1), (400, 800), [], [], SCREEN[:1]) == []
    assert watch.step(2, tap(1, 1), (400, 800), [], [], SCREEN)[0].evidence == "page shown: pkg:id/row"


def test_an_app_is_used_when_one_of_its_activities_starts_or_its_window_is_in_front() -> None:
    start = ("11-27 10:00:00.000  1000  1020 I ActivityTaskManager: START u0 {act=android.intent.action.MAIN "
             "cat=[android.intent.category.LAUNCHER] flg=0x10200000 cmp=com.android.contacts/.activities."
             "PeopleActivity} from uid 10080")
    other = start.replace("com.android.contacts/.activities.PeopleActivity", "com.android.settings/.Settings")
    watch = ConstraintWatch([Constraint("app", "without contacts", app="contacts")])
    assert watch.step(1, None, (400, 800), [], [other], SCREEN) == []
    assert watch.step(2, None, (400, 800), [], [start], SCREEN)[0].evidence == start  # seen even if left at once
    front = ConstraintWatch([Constraint("app", "without contacts", app="contacts")])
    shown = [Element(0, package="com.android.contacts")]
    assert front.step(1, None, (400, 800), [], [], shown)[0].evidence == "com.android.contacts in front"


@pytest.mark.parametrize(("entry", "message"), [
    ({"level": "screen", "words": "w", "id": "x"}, "level must be one of app, page, component"),
    ({"level": "app", "words": "w", "app": "fax"}, "app level needs app: one of"),
    ({"level": "page", "words": "w"}, "page level needs the element's id or text"),
    ({"level": "page", "id": "x"}, "missing 'words'"),
    ({"level": "page", "words": "w", "ids": "x"}, "unknown field 'ids'; fields: level, words, app, id, text"),
])
def test_a_malformed_constraint_is_refused_naming_what_is_wrong(entry, message) -> None:
    with pytest.raises(ValueError, match=message):
        Constraint.read(entry)


def test_a_template_with_a_malformed_constraint_is_one_line_naming_the_instance(monkeypatch) -> None:
    base = templates.templates()["call_number_no_contacts"]
    broken = {**base, "constraints": [{"level": "app", "app": "fax", "words": "w"}]}
    monkeypatch.setitem(templates.templates(), "call_number_no_contacts", broken)
    with pytest.raises(VluiError, match=r"templates.yaml: call_number_no_contacts@2015550123: constraints: app level"):
        templates.instance_from_id("call_number_no_contacts@2015550123")


@pytest.mark.parametrize("name", CONSTRAINED)
def test_the_expert_reaches_the_goal_of_every_constrained_instance_without_breaking_its_constraint(name) -> None:
    dev = SimDevice("000")
    for task in templates.instances(name, 0, 12, "all"):
        for snap in ("000", "101", "109"):  # a phone, a tablet, a right-to-left locale
            walk = walkthrough(dev, task.id, snap)
            assert walk.terminated and walk.violations == () and walk.success, f"{task.id} on {snap}"


@pytest.mark.parametrize("name", [n for n in CONSTRAINED if any(
    c["level"] == "component" for c in templates.templates()[n]["constraints"])])
def test_a_component_constraint_names_an_element_the_expert_passes_by(name) -> None:
    """Not a vacuous constraint: the element not to tap is on a screen the task's own flow shows."""
    task = templates.instances(name, 0, 1, "all")[0]
    env = make_env(EnvConfig(snapshots=["000"]), [task.id], include_xml=True)
    obs, info = env.reset(seed=0, options={"task": task.id, "snapshot": "000"})
    expert, seen, done = ExpertAgent(), set(), False
    expert.reset(env.task, info)
    while not done:
        seen |= {e.resource_id for e in parse_xml(obs["xml"])}
        obs, _, terminated, truncated, info = env.step(expert.act(obs, info))
        done = terminated or truncated
    env.close()
    assert terminated and not info["violations"]
    assert all(c.id in seen for c in task.constraints if c.level == "component"), seen


def _tap_id(env, rid: str, obs):
    """Tap the centre of the element with resource id ``rid`` on the screen ``obs`` shows."""
    el = next(e for e in parse_xml(obs["xml"]) if e.resource_id == rid)
    w, h = env.unwrapped.device.size
    x, y = el.center
    return env.step(normalised_to_action((y / h, x / w)))


def test_a_goal_reached_after_breaking_the_constraint_ends_the_episode_with_no_reward_and_records_which() -> None:
    env = make_env(EnvConfig(snapshots=["000"]), ["toggle_setting_no_search@on-wifi"], include_xml=True)
    obs, info = env.reset(seed=0, options={"task": "toggle_setting_no_search@on-wifi", "snapshot": "000"})
    assert info["violations"] == []
    expert = ExpertAgent()
    expert.reset(env.task, info)
    search = "com.android.settings:id/search_action_bar"
    while search not in obs["xml"]:  # the expert opens Settings
        obs, reward, terminated, truncated, info = env.step(expert.act(obs, info))
    opened = info["step"]
    obs, reward, terminated, truncated, info = _tap_id(env, search, obs)
    assert [(v["level"], v["words"], v["step"]) for v in info["violations"]] == [
        ("page", "without using the search", opened + 1)]
    assert info["violations"][0]["evidence"].startswith("page shown: com.google.android.settings.intelligence")
    record = EpisodeRecord(Job(env.task.id, "000", 0), env.task.instruction)
    while not (terminated or truncated):  # the expert finds its way back and switches Wi-Fi on all the same
        obs, reward, terminated, truncated, info = env.step(expert.act(obs, info))
    assert terminated and reward == 0.0 and info["success_line"]
    record.terminated, record.violations = terminated, info["violations"]
    line = result_line(record)
    assert line["success"] is False and line["goal_reached"] is True and line["violations"][0]["level"] == "page"
    env.close()


def test_a_task_without_constraints_keeps_its_results_line_and_reward() -> None:
    record = EpisodeRecord(Job("airplane_on", "000", 0), "turn on airplane mode", terminated=True)
    line = result_line(record)
    assert line["success"] is True and "violations" not in line and "goal_reached" not in line


def test_the_report_gives_the_violation_rate_per_level_over_the_tasks_that_have_that_level() -> None:
    def rec(task: str, violated: list[str], goal: bool) -> dict:
        return result_line(EpisodeRecord(Job(task, "000", 0), task, terminated=goal, truncated=not goal, violations=[
            {"level": lv, "words": lv, "step": 1, "evidence": ""} for lv in violated]))

    records = [rec("a@1", ["app"], True), rec("a@1", [], True), rec("b@1", ["page"], False), rec("b@1", [], False),
               rec("c@1", [], True)]
    levels = {"a@1": ["app"], "b@1": ["page", "component"], "c@1": ["component"]}
    c = violations(records, levels)
    assert (c["episodes"], c["violated"], c["violation_rate"], c["goal_reached_but_violated"]) == (5, 2, 0.4, 1)
    assert c["per_level"] == {"app": {"episodes": 2, "violated": 1, "violation_rate": 0.5},
                              "component": {"episodes": 3, "violated": 0, "violation_rate": 0.0},
                              "page": {"episodes": 2, "violated": 1, "violation_rate": 0.5}}
    result = aggregate(records, {"000": "train"}, {"agent": "random", "checkpoint": None, "config": {}}, None, levels)
    assert "| page | 2 | 1 | 50.0% |" in table(result) and "2 of 5 episodes broke a constraint" in table(result)
