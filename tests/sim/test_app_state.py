"""Each app's own state: typed in the app's module, kept by the phone under the app's key, set by a snapshot or a task
under that key (``clock: {tab: stopwatch}``) and checked against the app's type in one line, before anything runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vlui.android.snapshot import ENVS_DIR, read_snapshot
from vlui.android.state import DeviceState, state_problem
from vlui.backends import resolve_snapshots
from vlui.env.settings import EnvConfig
from vlui.errors import VluiError
from vlui.sim.apps import APPS, app_state_problem
from vlui.sim.apps.calculator import CalculatorState
from vlui.sim.apps.calendar import CalendarState
from vlui.sim.apps.chrome import ChromeState
from vlui.sim.apps.contacts import ContactsState
from vlui.sim.apps.deskclock import Alarm, ClockState, Stopwatch, clock_state
from vlui.sim.apps.dialer import Call, DialerState, dialer_state
from vlui.sim.apps.files import FilesState
from vlui.sim.apps.messages import MessagesState
from vlui.sim.apps.snapseed import SnapseedState
from vlui.sim.apps.wikipedia import WikipediaState
from vlui.sim.apps.walmart import WalmartState
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import tasks
from vlui.tasks.templates import instances, templates

CLOCK_FIELDS = "alarms, expanded, next_alarm_id, picker, stopwatch, tab, timer"
EVENT_FIELDS = "date, day, hour, location, minute, minutes, notes, title"


def snapshot_file(tmp_path: Path, state: str) -> Path:
    """Snapshot 000 as a file of one's own, with ``state`` (YAML) as its state."""
    text = (ENVS_DIR / "000.yaml").read_text().replace("id: '000'", "id: mine").replace("state: {}", f"state: {state}")
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    return path


def test_each_app_declares_its_state_in_its_own_module() -> None:
    with_state = {key: entry for key, entry in APPS.items() if entry.state is not None}
    assert with_state.keys() >= {"clock", "phone", "calendar", "contacts", "messages", "chrome", "files"}
    for key, entry in with_state.items():
        assert entry.state.__module__ == entry.build.__module__, key  # beside the screens it draws from
    app_fields = {f.name for entry in with_state.values() for f in dataclasses.fields(entry.state)}
    assert not app_fields & {f.name for f in dataclasses.fields(DeviceState)}  # none is left flat in the phone's
    dev = SimDevice("000", noise=False)
    assert dev.state.apps == {"clock": ClockState(), "phone": DialerState(), "calendar": CalendarState(),
                              "contacts": ContactsState(), "messages": MessagesState(), "chrome": ChromeState(),
                              "files": FilesState(), "snapseed": SnapseedState(), "wikipedia": WikipediaState(),
                              "calculator": CalculatorState(), "walmart": WalmartState()}
    assert [(a.hour, a.minute, a.enabled) for a in clock_state(dev).alarms] == [(9, 0, False), (8, 30, False)]
    with pytest.raises(TypeError, match="the clock app's state is a ClockState, not a DialerState"):
        dev.state.app("clock", DialerState)


def test_a_snapshot_sets_an_apps_state_under_its_key(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, "{clock: {tab: stopwatch, stopwatch: {elapsed_ms: 83450}, alarms: "
                                   "[{id: 7, hour: 6, minute: 15, enabled: true, label: Gym}]}, wifi: false}")
    dev = SimDevice(path, noise=False)
    clock = clock_state(dev)
    assert clock.tab == "stopwatch" and clock.stopwatch == Stopwatch(elapsed_ms=83450)
    assert clock.alarms == [Alarm(7, 6, 15, True, "Gym")] and not dev.state.wifi
    dev.launch("clock")
    assert "01:23.45" in dev.ui_xml()
    # a task's state on top: a part always there keeps the fields it does not name; a call is made anew
    dev.set_state({"clock": {"stopwatch": {"running": True, "started_ms": dev.state.time_ms}},
                   "phone": {"call": {"number": "5550123", "started_ms": dev.state.time_ms}}})
    assert clock_state(dev).stopwatch == Stopwatch(True, dev.state.time_ms, 83450)
    assert dialer_state(dev).call == Call("5550123", dev.state.time_ms)
    assert dev.state.top == "phone" and dev.top_screen() == {"screen": "incall"}  # the dialer's own hook
    assert dev.check_state({"clock.stopwatch.running": True, "clock.tab": "stopwatch", "phone.call.number": "5550123"})
    with pytest.raises(VluiError, match="state_check: 'clock.lap' names nothing in the device state"):
        dev.check_state({"clock.lap": 1})
    dev.load_snapshot(path)  # the next episode starts from the snapshot's state again
    assert dialer_state(dev).call is None and clock_state(dev).stopwatch == Stopwatch(elapsed_ms=83450)


@pytest.mark.parametrize(("state", "message"), [
    ("{clock: {tabb: stopwatch}}", f"clock: unknown field 'tabb'; fields: {CLOCK_FIELDS}"),
    ("{clock: {stopwatch: {runing: true}}}", "clock.stopwatch: unknown field 'runing'; fields: elapsed_ms, running, "
                                             "started_ms"),
    ("{clock: {tab: laps}}", "clock.tab must be one of alarm, clock, timer, stopwatch, not 'laps'"),
    ("{clock: {stopwatch: {running: 'yes'}}}", "clock.stopwatch.running must be true or false, not 'yes'"),
    ("{clock: {next_alarm_id: 0}}", "clock.next_alarm_id must be between 1 and 1000000, not 0"),
    ("{clock: {alarms: [{id: 1, hour: 25, minute: 0}]}}", "clock.alarms[0].hour must be between 0 and 23, not 25"),
    ("{clock: {alarms: [{hour: 7, minute: 0}]}}", "clock.alarms[0] must give id"),
    ("{phone: {call: {number: 911, started_ms: 0}}}", "phone.call.number must be a string, not 911"),
    ("{phone: {call: {started_ms: 0}}}", "phone.call must give number"),
    ("{calendar: {event: []}}", "calendar: unknown field 'event'; fields: events"),
    ("{calendar: {events: [{title: Dentist, hour: 9, place: here}]}}", "calendar.events[0]: unknown field 'place'; "
                                                                       f"fields: {EVENT_FIELDS}"),
    ("{calendar: {events: [{title: Dentist}]}}", "calendar.events[0] must give hour"),
    ("{calendar: {events: [{title: Dentist, hour: 9, minutes: 0}]}}", "calendar.events[0].minutes must be between 1 "
                                                                      "and 10080, not 0"),
    ("{calendar: {events: [{title: Dentist, hour: 9, date: 2026-11-24}]}}", "calendar.events[0].date must be quoted "
                                                                            "('2026-11-24'): YAML reads an unquoted "
                                                                            "date as a date"),
    ("{calendar: {events: [{title: Dentist, hour: 9, date: '24/11/2026'}]}}", "calendar.events[0].date must be a date "
                                                                              "written YYYY-MM-DD, not '24/11/2026'"),
    ("{contacts: {people: [{name: Alex, number: '555'}]}}", "contacts.people[0]: unknown field 'number'; fields: "
                                                            "email, name, phone"),
    ("{contacts: {people: [{phone: '555'}]}}", "contacts.people[0] must give name"),
    ("{gmail: {tab: 1}}", "gmail: the app keeps no state a snapshot or a task sets; apps that do: clock, phone, "
                          "calendar, contacts, messages, chrome, files, calculator, snapseed, wikipedia, walmart"),
    ("{chrome: {pages: [{title: News}]}}", "chrome.pages[0] must give url"),
    ("{files: {items: [{name: a.pdf}]}}", "files.items[0] must give kind"),
    ("{files: {items: [{name: a.pdf, kind: pdf, folder: Downloads}]}}", "files.items[0].folder must be one of "
                                                                         "Download, DCIM, Pictures, Documents, Music, "
                                                                         "Movies, Recordings, not 'Downloads'"),
    ("{files: {items: [{name: beach.jpg, kind: pdf}]}}", "files.items[0].name 'beach.jpg' is not a pdf's: its name "
                                                         "ends in .pdf"),
    ("{files: {items: [{name: a.pdf, kind: pdf, time: '9:30'}]}}", "files.items[0].time must look like '09:30', "
                                                                   "not '9:30'"),
    ("{chrome: {pages: [{url: news.example.org}]}}", "chrome.pages[0].url must look like "
                                                      "'https://news.example.org/', not 'news.example.org'"),
])
def test_an_apps_state_that_does_not_fit_its_type_is_one_line_before_anything_runs(tmp_path: Path, state: str,
                                                                                 message: str) -> None:
    path = snapshot_file(tmp_path, state)
    read_snapshot(path)  # the android layer knows no app's type: it checks that an app's entry is a mapping
    whole = f"{path}: state: {message}"
    with pytest.raises(VluiError) as err:
        resolve_snapshots(EnvConfig(snapshots=[str(path)]))  # as collect, train and evaluate resolve env.snapshots
    assert str(err.value) == whole and "\n" not in whole
    with pytest.raises(VluiError) as err:
        SimDevice(path)
    assert str(err.value) == whole


def test_the_android_layer_checks_the_system_fields_and_that_an_apps_entry_is_a_mapping() -> None:
    assert state_problem({"clock": {"anything": 1}, "wifi": False}) is None
    assert state_problem({"clock": "stopwatch"}) == "clock must be a mapping of the app's own state, not 'stopwatch'"
    problem = state_problem({"clock_tab": "stopwatch"})
    assert problem.startswith("unknown field 'clock_tab'; fields: adaptive_brightness, ") and "clock_tab," not in problem
    assert problem.endswith("; or an app's key with a mapping of its own state (clock: {tab: stopwatch})")


def test_every_tasks_starting_state_fits_the_apps_types() -> None:
    chosen = list(tasks().values()) + [t for name in templates() for t in instances(name, 0, 5, "all")]
    states = [t.state for t in chosen]
    assert any("clock" in s for s in states) and any("phone" in s for s in states)
    assert [s for s in states if app_state_problem(s)] == []
