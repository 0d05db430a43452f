"""Parameterized tasks: a seeded generator over disjoint splits, ids that rebuild their tasks, detectors and state
checks built from the parameters, and an expert that solves every instance."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from vlui.agents.expert import ExpertAgent
from vlui.agents.walkthrough import walkthrough
from vlui.env.settings import EnvConfig
from vlui.env.env import make_env
from vlui.errors import VluiError
from vlui.sim.apps.chrome import chrome_state
from vlui.sim.apps.contacts import contacts_state
from vlui.sim.apps.deskclock import clock_state
from vlui.sim.apps.messages import sms_rows
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import Detector, resolve_tasks
from vlui.tasks.templates import expand, held_out, instance, instances, split_of, templates, values

NAMES = list(templates())
SNAPSHOTS = ("000", "030", "105", "109")


@pytest.mark.parametrize("name", NAMES)
def test_the_generator_is_deterministic_per_seed_and_differs_across_seeds(name: str) -> None:
    ids = [t.id for t in instances(name, 3, 5)]
    assert ids == [t.id for t in instances(name, 3, 5)]
    assert len(set(ids)) == len(ids) and all(i.startswith(f"{name}@") for i in ids)
    if len(values(name, list(templates()[name]["params"])[-1], "train")) > 5:
        assert ids != [t.id for t in instances(name, 4, 5)]


@pytest.mark.parametrize("name", [n for n in NAMES if held_out(n)])
def test_train_and_test_draw_from_disjoint_parameter_values(name: str) -> None:
    train = {t.id for t in instances(name, 0, 200, "train")}
    test = {t.id for t in instances(name, 0, 200, "test")}
    assert train and test and not train & test
    assert {split_of(t) for t in resolve_tasks(sorted(train))} == {"train"}
    assert {split_of(t) for t in resolve_tasks(sorted(test))} == {"test"}
    for pname, p in templates()[name]["params"].items():
        if "splits" in p and p["kind"] != "digits":
            assert not set(map(str, values(name, pname, "train"))) & set(map(str, values(name, pname, "test")))


@pytest.mark.parametrize("name", NAMES)
def test_every_generated_id_round_trips_through_resolve_tasks(name: str) -> None:
    made = instances(name, 7, 30, "all")
    back = resolve_tasks([t.id for t in made])
    assert [(t.id, t.instruction, t.regex, t.log_tag, t.state, t.state_check) for t in back] == \
        [(t.id, t.instruction, t.regex, t.log_tag, t.state, t.state_check) for t in made]


def test_instances_read_like_bmoca_instructions() -> None:
    assert instance("create_alarm", {"time": (6, 30)}).instruction == "create alarm at 06:30 am"  # as alarm_0630
    assert instance("create_alarm", {"time": (13, 30)}).instruction == "create alarm at 13:30 pm"  # as alarm_1330
    task = instance("call_number", {"phone_number": "5550123"})
    assert (task.id, task.instruction, task.log_tag) == ("call_number@5550123", "call 5550123", "Telecom")
    task = resolve_tasks(["toggle_setting@on-bluetooth"])[0]
    assert task.instruction == "turn on bluetooth" and task.state == {"bluetooth": False}
    assert resolve_tasks(["set_volume@media-7"])[0].state_check == {"volume.media": 7}
    assert resolve_tasks(["set_brightness@40"])[0].state_check == {"brightness_percent": {"value": 40,
                                                                                           "tolerance": 2}}


def test_malformed_ids_templates_and_splits_fail_in_one_line() -> None:
    with pytest.raises(VluiError, match="unknown task template 'make_coffee'; choose from: create_alarm"):
        resolve_tasks(["make_coffee@0630"])
    with pytest.raises(VluiError, match="'2561' is not a time value"):
        resolve_tasks(["create_alarm@2561"])
    with pytest.raises(VluiError, match="toggle_setting takes 2 parameter"):
        resolve_tasks(["toggle_setting@on"])
    with pytest.raises(VluiError, match="unknown task split 'val'; choose from: train, test, all"):
        expand("template:create_alarm", split="val")
    assert expand(["template:call_number", "call_911"], seed=1, count=2)[2] == "call_911"


def _line(tag: str, message: str) -> str:
    return f"11-23 08:00:12.060  1210  1247 D {tag}: {message}"


def test_a_detector_built_from_parameters_fires_for_its_own_instance_only() -> None:
    line = _line("ConditionProviders.SCP", "evaluateSubscriptionLocked cal=null, now=Mon Nov 23 08:00:12 GMT 2026 "
                 "(1795420812000), nextUserAlarmTime=Mon Nov 23 06:30:00 GMT 2026 (1795460400000)")
    assert Detector(resolve_tasks(["create_alarm@0630"])[0]).match([line]) == line
    assert Detector(resolve_tasks(["create_alarm@0645"])[0]).match([line]) is None
    call = _line("Telecom", "UserCallIntentProcessor: processOutgoingCallIntent: handle=tel:5550123")
    assert Detector(resolve_tasks(["call_number@5550123"])[0]).match([call]) == call
    assert Detector(resolve_tasks(["call_number@555012"])[0]).match([call]) is None
    assert Detector(resolve_tasks(["call_number@5550124"])[0]).match([call]) is None


def test_state_checks_read_the_simulated_phone() -> None:
    dev = SimDevice("000")
    # brightness 23 of 255 is 40 % on Settings' gamma scale (102, 40 % of the linear range, shows as 81 %)
    dev.set_state({"volume": {"media": 7, "call": 4, "ring": 0, "alarm": 1}, "brightness": 23})
    assert dev.check_state({"volume.media": 7}) and not dev.check_state({"volume.ring": 7})
    assert dev.check_state({"brightness_percent": {"value": 41, "tolerance": 2}})
    assert not dev.check_state({"brightness_percent": {"value": 45, "tolerance": 2}})
    with pytest.raises(VluiError, match="unknown state field 'loudness'"):
        dev.check_state({"loudness": 3})


@pytest.mark.parametrize("snapshot", ["000", "030", "109"])
def test_the_expert_shares_the_page_through_the_share_sheet_and_types_nothing(snapshot: str) -> None:
    """share_page_no_typing: the site's row on Chrome's new tab page (not its look-alike "Annex"), the app menu's
    Share…, Messages in the share sheet, the person in Messages' picker, send: the page's address is the text sent,
    and the compose field is never touched."""
    dev = SimDevice(snapshot, noise=False)
    task = instance("share_page_no_typing", {"site": "zoo", "person": "mei", "phone_number": "5550123"})
    assert task.instruction == "share the Riverside Zoo page with Mei Lin in messages without typing the link"
    walk = walkthrough(dev, task.id, snapshot)
    assert walk.terminated and not walk.violations
    starts = [line.split(": ", 1)[1] for line in walk.lines if "ActivityTaskManager: START u0 {act=android.intent"
              ".action.CHOOSER" in line or "ShareIntentActivity" in line and "START" in line]
    assert starts == ["START u0 {act=android.intent.action.CHOOSER cmp=android/com.android.internal.app."
                      "ChooserActivity (has extras)} from uid 10052",
                      "START u0 {act=android.intent.action.SEND typ=text/plain flg=0xb080001 cmp=com.google.android."
                      "apps.messaging/.ui.conversationlist.ShareIntentActivity clip={text/plain {...}} (has extras)} "
                      "from uid 10052"]
    assert [(r["address"], r["body"]) for r in sms_rows(dev.state, "sent")] == [("5550123", "https://zoo.example.org/")]


@pytest.mark.parametrize("snapshot", ["000", "104", "109"])
def test_the_expert_saves_the_number_a_text_gave_as_a_new_contact(snapshot: str) -> None:
    """save_contact_from_message: the number in Jordan's text (not the one in Alex's), typed in Contacts' editor under
    the name the instruction gives, saved; the new contact's card opens with the START line a save makes."""
    dev = SimDevice(snapshot, noise=False)
    task = instance("save_contact_from_message", {"person": "jordan", "other": "ken", "phone_number": "5550199"})
    walk = walkthrough(dev, task.id, snapshot)
    assert walk.terminated
    assert [(p.name, p.phone) for p in contacts_state(dev).people][3:] == [("ken ito", "5550199")]
    card = [line for line in walk.lines if "QuickContactActivity" in line]
    assert len(card) == 1 and "act=android.provider.action.QUICK_CONTACT dat=content://com.android.contacts/" \
                              "contacts/lookup/0r4-4B454E49544F/4 flg=0x4000000" in card[0]


@pytest.mark.parametrize("snapshot", ["000", "105"])
def test_the_expert_starts_the_timer_and_opens_the_page_the_other_app_gave(snapshot: str) -> None:
    """timer_from_page: the page's baking time (not the Annex's, not the bread rolls'), typed on Clock's keypad and
    started; open_event_page: the address in tomorrow's event (not in the same event's another day), opened from
    Chrome's new tab page."""
    dev = SimDevice(snapshot, noise=False)
    task = instance("timer_from_page", {"site": "oven", "dish": "muffins", "minutes": 45})
    assert task.state_check == {"clock.timer.length_ms": 2_700_000}  # derived: minutes times 60000
    assert walkthrough(dev, task.id, snapshot).terminated
    assert clock_state(dev).timer.digits == "4500" and clock_state(dev).timer.end_ms is not None
    task = instance("open_event_page", {"event": "festival", "site": "gallery"})
    assert walkthrough(dev, task.id, snapshot).terminated
    assert chrome_state(dev).history == ["https://gallery.example.org/"]


def _solve(env, agent: ExpertAgent, task_id: str, snapshot: str, seed: int) -> tuple[bool, int]:
    obs, info = env.reset(seed=seed, options={"task": task_id, "snapshot": snapshot})
    check = env.task.state_check
    assert not (check and env.device.check_state(check)), f"{task_id} holds before the agent acts"
    agent.reset(env.task, info, seed=seed)
    while True:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        if terminated or truncated:  # a constrained task's goal counts only with its constraints kept
            return terminated and not info.get("violations"), info["step"]


def _solve_all(name: str, per_template: int, include_screen: bool = True) -> None:
    env = make_env(EnvConfig(snapshots=list(SNAPSHOTS)), "supported", include_xml=True, include_screen=include_screen)
    agent = ExpertAgent()
    try:
        made = instances(name, 11, per_template, "all")
        for i, task in enumerate(made):
            snapshot = SNAPSHOTS[i % len(SNAPSHOTS)]
            ok, steps = _solve(env, agent, task.id, snapshot, i)
            assert ok, f"{task.id} ({task.instruction!r}) on {snapshot} failed after {steps} steps"
    finally:
        env.close()


# one test per template, so that the suite's workers share them
@pytest.mark.integration
@pytest.mark.parametrize("name", NAMES)
def test_the_expert_solves_sampled_instances_of_every_template(name: str) -> None:
    _solve_all(name, 30)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_expert_solves_hundreds_of_instances_of_every_template(name: str) -> None:
    # the expert reads the UI tree, as it does in evaluate.py agent=expert: the screens, most of a step's cost, are
    # left out (the sampled instances above draw them)
    _solve_all(name, 200, include_screen=False)  # fewer where a template has fewer values (toggle_setting: 6)


@pytest.mark.slow
@pytest.mark.integration
def test_collect_with_a_template_writes_the_instances_instructions(tmp_path: Path) -> None:
    from vlui.cli import compose
    from vlui.jobs import collect

    cfg = compose("collect", [f"paths.data_dir={tmp_path}", "dataset=t", "tasks=template:create_alarm",
                              "task_seed=3", "task_count=2", "task_split=test", "env.snapshots=[000]"],
                  output_dir=tmp_path / "run")
    summary = collect.run(cfg)
    assert (summary["episodes"], summary["successes"]) == (2, 2)
    want = {t.id: t.instruction for t in instances("create_alarm", 3, 2, "test")}
    df = pd.read_parquet(tmp_path / "t" / "episodes")
    assert dict(zip(df.task_id, df.instruction, strict=True)) == want


def test_an_adb_log_reader_streams_every_tag_a_template_detector_reads():
    from vlui.tasks import templates

    names = templates.templates()
    for name in names:
        for task in templates.instances(name, seed=0, n=6, split="all"):
            assert not task.log_tag or task.log_tag in templates.log_tags(), task.id


def test_a_starting_state_may_set_some_volume_streams_and_names_an_unknown_one() -> None:
    dev = SimDevice("000")
    dev.set_state({"volume": {"ring": 2}})
    assert dev.state.volume == {"media": 15, "call": 4, "ring": 2, "alarm": 5}
    with pytest.raises(VluiError, match="unknown volume stream.* loud; streams: media, call, ring, alarm"):
        dev.set_state({"volume": {"loud": 3}})


def test_a_family_name_draws_each_of_its_templates_and_a_family_without_templates_says_so(monkeypatch) -> None:
    ids = expand("constrained", seed=1, count=2, split="train")
    family = {name for name, t in templates().items() if t.get("family") == "constrained"}
    assert {"toggle_setting_no_search", "call_number_no_contacts", "create_alarm_keep_alarms"} <= family
    assert {i.partition("@")[0] for i in ids} == family and len(ids) == 2 * len(family)
    assert expand(["constrained", "airplane_on"], 1, 2, "train") == [*ids, "airplane_on"]
    assert all(t.constraints for t in resolve_tasks(ids))
    empty = {k: v for k, v in templates().items() if v.get("family") != "constrained"}
    monkeypatch.setattr("vlui.tasks.templates.templates", lambda: empty)
    with pytest.raises(VluiError, match="the task family 'constrained' has no templates yet; families: constrained"):
        expand("constrained")


def test_a_constrained_template_takes_what_it_does_not_set_from_its_base() -> None:
    base, variant = templates()["call_number"], templates()["call_number_no_contacts"]
    assert variant["params"] == base["params"] and variant["regex"] == base["regex"]
    task = instance("call_number_no_contacts", {"phone_number": "5550123"})
    assert task.instruction == "call 5550123 without opening the contacts app"
    assert task.pattern.match("processOutgoingCallIntent: tel:5550123") and task.template == "call_number_no_contacts"


def test_a_derived_time_is_computed_from_the_parameters_around_the_clock() -> None:
    task = instance("alarm_before_event", {"event": "dentist", "time": (0, 10), "lead": "30"})
    assert task.state_check == {"clock.alarms": {"contains": {"hour": 23, "minute": 40, "enabled": True}}}
    assert task.state["calendar"]["events"][1]["hour"] == 3 and task.state["calendar"]["events"][1]["minute"] == 12
    assert task.instruction == "set an alarm 30 minutes before my Dentist event tomorrow"


def test_state_checks_look_inside_lists_by_field_words_and_phone_number() -> None:
    from vlui.device import state_meets
    sent = [{"address": "+1 646-555-0175", "body": "Town Hall at 7"}, {"address": "808", "body": "ok"}]
    holds = lambda want: state_meets({"sms_sent": want}, lambda path: sent)  # noqa: E731
    assert holds({"contains": {"address": {"number": "6465550175"}, "body": {"includes": "town hall"}}})
    assert not holds({"contains": {"address": {"number": "6465550175"}, "body": {"includes": "ok"}}})
    assert holds({"contains": {"body": "ok"}}) and not holds({"contains": {"body": "OK"}})
    assert not holds({"contains": {"address": {"number": ""}}})  # no digits match nothing
    assert not state_meets({"sms_sent": {"contains": {"body": "ok"}}}, lambda path: [])
    # a field that is itself a list: a conversation whose messages hold a sent file
    talks = [{"number": "+1 646-555-0175", "messages": [{"direction": "in", "attachments": []},
                                                        {"direction": "out", "attachments": ["a.jpg"]}]}]
    inside = lambda want: state_meets({"messages.conversations": want}, lambda path: talks)  # noqa: E731
    assert inside({"contains": {"number": {"number": "6465550175"},
                                "messages": {"contains": {"direction": "out", "attachments": ["a.jpg"]}}}})
    assert not inside({"contains": {"messages": {"contains": {"direction": "in", "attachments": ["a.jpg"]}}}})
    assert not inside({"contains": {"number": {"contains": {"direction": "out"}}}})  # a number is no list
