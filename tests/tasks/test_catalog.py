"""The B-MoCA task catalog: the 60 tasks as the paper prints them (with its invalid regexes corrected), the named
task sets and how configs resolve them, and the success detectors on real-format logcat lines and on the simulated
phone's log."""

from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path

import pytest

from vlui.agents.expert import plan_for
from vlui.agents.walkthrough import walkthrough
from vlui.android.logcat import Entry, LogBuffer, parse_threadtime
from vlui.errors import VluiError
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import TASK_SETS, Detector, Task, resolve_tasks, task_set, tasks

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "bmoca_tasks.tsv"  # B-MoCA Table 4 (tests/reference)
PAPER_SIX = {"Airplane", "Alarm1", "Alarm2", "Brightness", "Call 911", "Language"}


def line(tag: str, message: str, seq: int = 0, time_ms: int = 1_795_420_800_000, level: str = "I") -> str:
    return Entry(seq, time_ms + seq, 1210, 1247, level, tag, message).threadtime()


def detector(task_id: str) -> Detector:
    return Detector(tasks()[task_id])


# ------------------------------------------------------------------------------------------------ the catalog
def test_sixty_tasks_with_unique_ids() -> None:
    all_tasks = tasks()
    assert len(all_tasks) == 60
    assert all(isinstance(t, Task) and t.id == tid for tid, t in all_tasks.items())


def test_every_regex_compiles_and_is_anchored() -> None:
    for t in tasks().values():
        assert re.compile(t.regex).pattern == t.regex, t.id
        assert t.regex.startswith("^"), t.id
        assert t.pattern.pattern == t.regex, t.id
        assert t.log_tag and t.instruction and t.step_limit > 0 and t.apps, t.id


def test_settings_regex_is_corrected() -> None:
    t = tasks()["open_settings"]
    assert "(*.?)" not in t.regex
    assert t.regex == "^(.*?)Start proc(.*?)com.android.settings.Settings"
    assert t.regex_note
    assert t.pattern.match("Start proc 4120:com.android.settings/1000 for activity "
                           "{com.android.settings/com.android.settings.Settings}")


@pytest.mark.parametrize("task_id, tab", [("clock_alarm_tab", "Alarm"), ("clock_stopwatch_tab", "Stopwatch"),
                                          ("clock_timer_tab", "Timer")])
def test_clock_tab_regexes_match_the_literal_line(task_id: str, tab: str) -> None:
    t = tasks()[task_id]
    assert f"\\[{tab}\\]" in t.regex and "\\[Show Tab\\]" in t.regex and "\\[Tap\\]" in t.regex
    assert t.pattern.match(f"Events: [{tab}] [Show Tab] [Tap]")
    assert t.pattern.match(f"AlarmClock event Events: [{tab}] [Show Tab] [Tap] (extra)")
    # unescaped, '[Alarm]' would be a character class matching one letter: these must not match
    assert not t.pattern.match(f"Events: {tab[0]} S T")
    assert not t.pattern.match(f"Events: {tab} Show Tab Tap")
    others = {"Alarm", "Stopwatch", "Timer"} - {tab}
    for other in others:
        assert not t.pattern.match(f"Events: [{other}] [Show Tab] [Tap]")


# Where Table 4's detector would not fire (or would fire on the wrong slider) on Android 10, the tag and regex of
# B-MoCA's released task files (gimme1dollar/b-moca, asset/tasks/*.textproto), which follow the device.
ANDROID_10 = {
    "open_camera": ("ActivityManager", "^(.*?)Start proc(.*?)com.android.camera"),
    "open_contacts": ("ActivityManager", "^(.*?)Start proc(.*?)com.android.contacts"),
    "volume_media_up": ("vol.Events", "^(.*?)STREAM_MUSIC"),
    "volume_call_up": ("vol.Events", "^(.*?)STREAM_VOICE_CALL"),
    "volume_ring_up": ("vol.Events", "^(.*?)STREAM_RING"),
    "volume_alarm_up": ("vol.Events", "^(.*?)STREAM_ALARM"),
}


def test_catalog_equals_the_papers_table_row_by_row() -> None:
    with REFERENCE.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == 60
    corrected = {"open_settings", "clock_alarm_tab", "clock_stopwatch_tab", "clock_timer_tab"}
    for i, (row, t) in enumerate(zip(rows, tasks().values(), strict=True)):
        assert int(row["step_limit"]) == t.step_limit, (i, t.id)
        assert row["instruction"] == t.instruction, (i, t.id)
        if t.id in ANDROID_10:  # the paper's detector disagrees with Android 10: B-MoCA's released one is used
            assert (t.log_tag, t.regex) == ANDROID_10[t.id] != (row["log_tag"], row["regex"]), (i, t.id)
            assert "released detector" in t.regex_note, (i, t.id)
            continue
        assert row["log_tag"] == t.log_tag, (i, t.id)
        if t.id in corrected:
            assert row["regex"] != t.regex and row["note"], (i, t.id)
        else:
            assert row["regex"] == t.regex, (i, t.id)


# ------------------------------------------------------------------------------------------------ task sets
def test_representative_set_is_the_papers_six() -> None:
    rep = task_set("representative")
    assert len(rep) == 6
    assert {tasks()[i].representative for i in rep} == PAPER_SIX
    assert set(rep) == {"airplane_on", "alarm_9am_on", "alarm_1030", "brightness_down", "call_911", "add_language"}
    assert sum(1 for t in tasks().values() if t.representative) == 6


def test_open_app_set_has_fourteen_open_tasks() -> None:
    ids = task_set("open_app")
    assert len(ids) == 14
    assert all(tasks()[i].instruction.startswith("open the ") for i in ids)
    assert sum(1 for t in tasks().values() if t.instruction.startswith("open the ")) == 14


def test_supported_and_all_sets() -> None:
    supported = set(task_set("supported"))
    assert supported >= set(task_set("representative")) | set(task_set("open_app"))
    assert all(plan_for(tasks()[t]) for t in supported)  # the expert has a recipe for every one
    assert task_set("all") == list(tasks())
    assert len(task_set("all")) == 60
    # the release's sets (tests/tasks/test_bmoca25.py) came after: `all` still means the paper's 60
    assert set(TASK_SETS) == {"representative", "open_app", "supported", "all", "bmoca25", "bmoca25_supported"}


# bmoca25 holds tasks the simulated phone cannot run yet: test_bmoca25.py checks how it is refused
@pytest.mark.parametrize("name", [name for name in TASK_SETS if name != "bmoca25"])
def test_resolve_a_set_name(name: str) -> None:
    resolved = resolve_tasks(name, backend="sim")
    assert [t.id for t in resolved] == task_set(name)


def test_resolve_one_id_and_a_list() -> None:
    assert [t.id for t in resolve_tasks("call_911")] == ["call_911"]
    assert [t.id for t in resolve_tasks(["open_camera", "airplane_on"])] == ["open_camera", "airplane_on"]
    assert [t.id for t in resolve_tasks(("alarm_1030",))] == ["alarm_1030"]


def test_unknown_set_name_is_a_helpful_error() -> None:
    with pytest.raises(VluiError, match="unknown task set 'favourites'.*representative, open_app, supported, all"):
        task_set("favourites")
    with pytest.raises(VluiError) as e:
        resolve_tasks("favourites")
    msg = str(e.value)
    assert "favourites" in msg and "unknown task" in msg
    assert "representative" in msg and "supported" in msg


def test_unknown_task_id_is_a_helpful_error() -> None:
    with pytest.raises(VluiError) as e:
        resolve_tasks(["airplane_on", "airplane_onn"])
    msg = str(e.value)
    assert "unknown task id" in msg and "airplane_onn" in msg
    assert "similar" in msg and "airplane_on" in msg.split("similar", 1)[1]
    assert "bmoca.yaml" in msg


def test_empty_list_is_an_error() -> None:
    with pytest.raises(VluiError, match="empty"):
        resolve_tasks([])


@pytest.mark.parametrize("bad", [42, None, 3.5])
def test_non_string_non_list_is_an_error(bad) -> None:
    with pytest.raises(VluiError, match="set name .*or a list of task ids"):
        resolve_tasks(bad)


@pytest.fixture
def unsupported(monkeypatch) -> str:
    """A task the simulated phone does not support (every B-MoCA task is supported now: one is marked otherwise)."""
    task = tasks()["files_audio"]
    monkeypatch.setitem(tasks(), task.id, dataclasses.replace(task, sim=False))
    return task.id


def test_sim_refuses_unsupported_task_and_names_it(unsupported: str) -> None:
    with pytest.raises(VluiError) as e:
        resolve_tasks(["airplane_on", unsupported], backend="sim")
    msg = str(e.value)
    assert unsupported in msg and "airplane_on" not in msg
    assert "supported" in msg and "adb" in msg
    with pytest.raises(VluiError, match="does not support"):
        resolve_tasks("all")


def test_adb_accepts_every_task_whose_state_a_shell_reaches(unsupported: str) -> None:
    assert [t.id for t in resolve_tasks([unsupported], backend="adb")] == [unsupported]
    in_app = ["clock_alarm_tab", "stopwatch_start", "stopwatch_pause", "stopwatch_reset"]  # Clock's tab, stopwatch
    with pytest.raises(VluiError) as e:
        resolve_tasks("all", backend="adb")
    assert all(f"{task} (clock." in str(e.value) for task in in_app) and "env=sim" in str(e.value)
    reachable = [t for t in task_set("all") if t not in in_app]
    assert [t.id for t in resolve_tasks(reachable, backend="adb")] == reachable
    assert len(reachable) == 56


# ------------------------------------------------------------------------------------------------ detectors
NOISE = [
    line("WindowManager", "Changing focus from null to Window{1a2b u0 NotificationShade}"),
    line("chatty", "uid=1000(system) Binder:1210_3 identical 4 lines"),
    line("AudioFlinger", "Turning radio off - airplane is on"),  # right words, other tag
    line("ActivityTaskManager", "Displayed com.android.launcher3/.Launcher: +12ms"),
]
GARBAGE = [
    "",
    "--------- beginning of main",
    "Turning radio off - airplane is on",
    "PhoneGlobals: Turning radio off - airplane is on",
    "D/PhoneGlobals( 1210): Turning radio off - airplane is on",  # the 'brief' format, not threadtime
    "11-23 08:00:09 1210 1247 D PhoneGlobals: Turning radio off - airplane is on",  # no milliseconds
]

# task id -> (true line, near misses: the right message under a wrong tag, or the right tag with a wrong message)
CASES = {
    "airplane_on": (
        line("PhoneGlobals", "Turning radio off - airplane is on", level="D"),
        [line("PhoneGlobal", "Turning radio off - airplane is on"),
         line("PhoneGlobalsX", "Turning radio off - airplane is on"),
         line("PhoneGlobals", "Turning radio on - airplane is off"),
         line("PhoneGlobals", "airplane mode changed; Turning radio off"),
         line("PhoneGlobals", "turning radio off - airplane is on")],
    ),
    "call_911": (
        line("Telecom", "NewOutgoingCallIntentBroadcaster: processIntent: Emergency number detected: 911"),
        [line("Dialer", "NewOutgoingCallIntentBroadcaster: processIntent: Emergency number detected: 911"),
         line("Telecom", "LogUtils: EventRecord added as Call: TC@17"),
         line("Telecom", "processIntent: Emergency number not found for 912"),
         line("Telecomm", "Emergency number detected: 911")],
    ),
    "alarm_1030": (
        line("ConditionProviders.SCP", "evaluateSubscriptionLocked cal=null, now=Mon Nov 23 08:00:18 GMT 2026 "
             "(1795420818000), nextUserAlarmTime=Mon Nov 23 10:30:00 GMT 2026 (1795429800000)", level="D"),
        [line("ConditionProviders", "nextUserAlarmTime=Mon Nov 23 10:30:00 GMT 2026"),
         line("ConditionProviders.SCP", "now=Mon Nov 23 08:00:18, nextUserAlarmTime=Mon Nov 23 09:00:00 GMT 2026"),
         # 10:30:00 appears, but before nextUserAlarmTime: the regex wants it after
         line("ConditionProviders.SCP", "now=Mon Nov 23 10:30:00 GMT 2026, nextUserAlarmTime=Mon Nov 23 13:30:00"),
         line("ConditionProviders.SCP", "nextUserAlarmTime=Mon Nov 23 10:31:00 GMT 2026")],
    ),
    "add_language": (
        line("ActivityTaskManager", "START u0 {cmp=com.android.settings/.localepicker.LocalePickerWithRegionActivity}"
             " from uid 1000"),
        [line("ActivityManager", "START u0 {cmp=com.android.settings/.localepicker.LocalePickerWithRegionActivity}"),
         line("SettingsActivity", "Switching to fragment com.android.settings.localepicker.LocalePicker"),
         line("ActivityTaskManager", "START u0 {cmp=com.android.settings/.SubSettings (has extras)} from uid 1000"),
         line("ActivityTaskManager", "START u0 {cmp=com.android.settings/.Localepicker} from uid 1000")],
    ),
    "open_settings": (
        line("ActivityManager", "Start proc 4120:com.android.settings/1000 for activity "
             "{com.android.settings/com.android.settings.Settings}"),
        # Android 10 logs START under ActivityTaskManager, but Start proc only under ActivityManager (the paper's tag)
        [line("ActivityTaskManager", "Start proc 4120:com.android.settings/1000 for activity "
              "{com.android.settings/com.android.settings.Settings}"),
         line("ActivityManager", "Killing 4120:com.android.settings/1000 (adj 900): "
              "{com.android.settings/com.android.settings.Settings}"),
         line("ActivityManager", "Start proc 4121:com.android.settings/1000 for activity "
              "{com.android.settings/.SubSettings}"),
         line("ActivityManager", "START u0 {cmp=com.android.settings/.Settings} from uid 10080")],
    ),
    "open_camera": (
        # Android 10 prints Start proc under ActivityManager (B-MoCA's released detector's tag; the paper's Table 4
        # says ActivityTaskManager, where Android 10 prints START and Displayed)
        line("ActivityManager", "Start proc 4120:com.android.camera2/u0a51 for activity "
             "{com.android.camera2/com.android.camera.CameraLauncher}"),
        [line("ActivityTaskManager", "Start proc 4120:com.android.camera2/u0a51 for activity "
              "{com.android.camera2/com.android.camera.CameraLauncher}"),
         line("ActivityTaskManager", "START u0 {act=android.intent.action.MAIN cmp=com.android.camera2/"
              "com.android.camera.CameraLauncher} from uid 10080"),
         line("ActivityManager", "Start proc 4121:com.android.calendar/u0a52 for activity "
              "{com.android.calendar/.AllInOneActivity}"),
         line("ActivityTaskManager", "Displayed com.android.camera2/com.android.camera.CameraLauncher: +551ms")],
    ),
    "volume_ring_up": (
        line("vol.Events", "writeEvent level_changed STREAM_RING 6"),
        # the paper's '^(.*?)MUSIC' fired on the media slider's line; Android's names tell the streams apart
        [line("vol.Events", "writeEvent level_changed STREAM_MUSIC 16"),
         line("vol.Events", "writeEvent level_changed STREAM_VOICE_CALL 5"),
         line("vol.Events", "writeEvent level_changed STREAM_ALARM 6")],
    ),
    "volume_media_up": (
        line("vol.Events", "writeEvent level_changed STREAM_MUSIC 16"),
        [line("vol.Events", "writeEvent level_changed STREAM_RING 6"),
         line("AudioService", "writeEvent level_changed STREAM_MUSIC 16")],
    ),
}


def test_lines_built_here_are_real_threadtime_lines() -> None:
    for true_line, misses in CASES.values():
        for ln in [true_line, *misses, *NOISE]:
            assert parse_threadtime(ln) is not None, ln
    for ln in GARBAGE:
        assert parse_threadtime(ln) is None, ln


@pytest.mark.parametrize("task_id", list(CASES))
def test_detector_fires_on_the_true_line_only(task_id: str) -> None:
    true_line, misses = CASES[task_id]
    det = detector(task_id)
    assert det.match(NOISE + GARBAGE + misses) is None
    for miss in misses:
        assert det.match([miss]) is None, miss
    assert det.match(NOISE + GARBAGE + misses + [true_line] + NOISE) == true_line
    assert det.match([true_line]) == true_line


@pytest.mark.parametrize("task_id", list(CASES))
def test_detector_ignores_garbage_carrying_the_message(task_id: str) -> None:
    true_line, _ = CASES[task_id]
    message = parse_threadtime(true_line)["message"]
    tag = tasks()[task_id].log_tag
    garbage = [message, f"{tag}: {message}", f"I/{tag}( 1210): {message}", true_line[6:]]
    assert detector(task_id).match(garbage) is None


def test_detector_returns_the_first_match() -> None:
    first = line("Telecom", "processIntent: Emergency number detected: 911", seq=1)
    second = line("Telecom", "processIntent: Emergency number detected: 112", seq=2)
    assert detector("call_911").match([*NOISE, first, *NOISE, second]) == first
    assert detector("call_911").match([]) is None
    assert detector("call_911").match(NOISE + GARBAGE) is None


def test_detectors_do_not_cross_fire() -> None:
    for task_id, (true_line, _) in CASES.items():
        for other in CASES:
            if other != task_id:
                assert detector(other).match([true_line]) is None, (other, task_id)


def test_detector_after_a_mark_ignores_earlier_true_lines() -> None:
    buf = LogBuffer()
    t0 = 1_795_420_800_000
    buf.write(t0, 1210, 1247, "D", "PhoneGlobals", "Turning radio off - airplane is on")
    buf.write(t0 + 5, 1210, 1247, "I", "Telecom", "processIntent: Emergency number detected: 911")
    mark = buf.mark()  # the environment's reset
    det_air, det_call = detector("airplane_on"), detector("call_911")
    assert det_air.match(buf.lines()) is not None  # the whole log would (wrongly) count it
    assert det_air.match(buf.lines(mark)) is None
    assert det_call.match(buf.lines(mark)) is None
    buf.write(t0 + 10, 1210, 1247, "I", "WindowManager", "noise")
    buf.write(t0 + 20, 1210, 1247, "D", "PhoneGlobals", "Turning radio on - airplane is off")
    assert det_air.match(buf.lines(mark)) is None
    buf.write(t0 + 30, 1210, 1247, "D", "PhoneGlobals", "Turning radio off - airplane is on")
    hit = det_air.match(buf.lines(mark))
    assert hit is not None and hit.startswith("11-23 08:00:00.030")
    assert det_air.match(buf.lines(mark, tags=["PhoneGlobals"])) == hit
    assert det_call.match(buf.lines(mark)) is None


# ------------------------------------------------------------------------------------------------ simulated phone
@pytest.fixture(scope="module")
def device() -> SimDevice:
    return SimDevice("000")


def run_flow(dev: SimDevice, task_id: str) -> list[str]:
    """The log of the expert's episode of ``task_id`` on snapshot 000, from the reset on."""
    return walkthrough(dev, task_id, "000").lines


@pytest.mark.parametrize("task_id", task_set("supported"))
def test_supported_task_detected_after_its_flow(device: SimDevice, task_id: str) -> None:
    device.load_snapshot("000")
    det = detector(task_id)
    assert det.match(device.log_lines(device.log_mark())) is None  # nothing after the reset yet
    hit = det.match(run_flow(device, task_id))
    assert hit is not None, f"{task_id} not detected after its scripted flow"
    fields = parse_threadtime(hit)
    assert fields["tag"] == tasks()[task_id].log_tag


@pytest.mark.parametrize("flow, not_done", [("call_911", "airplane_on"), ("airplane_on", "call_911"),
                                            ("alarm_9am_on", "alarm_1030"), ("open_camera", "open_settings"),
                                            ("open_clock", "alarm_9am_on"), ("brightness_down", "add_language")])
def test_other_flows_do_not_complete_a_task(device: SimDevice, flow: str, not_done: str) -> None:
    assert detector(not_done).match(run_flow(device, flow)) is None


@pytest.mark.parametrize("spec", ["", [""], ["a"]])
def test_blank_or_tiny_ids_get_no_misleading_suggestions(spec) -> None:
    with pytest.raises(VluiError) as e:
        resolve_tasks(spec)
    msg = str(e.value)
    assert "unknown task id" in msg and "similar" not in msg
    assert "''" in msg or " a;" in msg  # the bad id is shown, even when blank


def test_wrong_case_id_suggests_the_right_one() -> None:
    with pytest.raises(VluiError) as e:
        resolve_tasks("Airplane_On")
    assert "Airplane_On" in str(e.value) and "airplane_on" in str(e.value).split("similar", 1)[1]


def test_a_tasks_starting_state_is_checked_when_it_is_made() -> None:
    base = dataclasses.asdict(tasks()["airplane_off"])
    base.pop("pattern", None)
    with pytest.raises(VluiError, match=r"task airplane_off: state: unknown field 'airplane'; fields: "):
        Task(**{**base, "state": {"airplane": True}})
    with pytest.raises(VluiError, match=r"task airplane_off: state: airplane_mode must be"):
        Task(**{**base, "state": {"airplane_mode": "yes"}})
    stated = [t for t in tasks().values() if t.state]
    assert len(stated) >= 5  # the catalog's own starting states all pass the same check
    for t in stated:
        fields = dataclasses.asdict(t)
        fields.pop("pattern", None)
        assert Task(**fields).state == t.state, t.id
