"""Calendar: the schedule of the phone's events from today on, built from the calendar's typed state (a snapshot's or
a task's ``calendar: {events: [...]}`` replaces the events), an event's details a tap away, in every locale."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.sim.driver import Driver
from tests.sim.test_app_state import snapshot_file
from vlui.android.i18n import locales
from vlui.android.logcat import EPOCH
from vlui.sim.apps.calendar import PKG, CalendarState, Event, calendar_state
from vlui.sim.phone import SimDevice

EVENTS = {"events": [
    {"title": "Flight to Lisbon", "date": "2026-12-01", "hour": 7, "minute": 5, "minutes": 150, "notes": "Gate B12"},
    {"title": "Dentist", "day": 1, "hour": 14, "minute": 30, "minutes": 45, "location": "210 Main St",
     "notes": "Bring the insurance card, and the forms the office mailed last week, filled in."},
    {"title": "Old meeting", "day": -1, "hour": 9},
    {"title": "Stand-up", "hour": 9, "minutes": 15},
]}


def texts(dev: SimDevice) -> list[str]:
    return Driver(dev).texts()


def tap_chip(dev: SimDevice, title: str) -> None:
    """Tap the schedule's chip of the event ``title``."""
    d = Driver(dev)
    d.tap(d.need(lambda n: n.rid == f"{PKG}:id/event_chip" and n.desc.startswith(f"{title},"), title))


def test_a_fresh_phone_has_events_today_and_on_the_next_days() -> None:
    dev = SimDevice("000", noise=False)  # boots on Monday 2026-11-23, 08:00
    assert calendar_state(dev) == CalendarState()
    mark = dev.log_mark()
    dev.launch("calendar")
    shown = texts(dev)
    assert shown[:4] == ["November", "Mon", "23", "Team stand-up"]
    assert shown.index("9:00 AM – 9:15 AM") == shown.index("Team stand-up") + 1
    assert shown.index("Dentist") < shown.index("Tue") < shown.index("Project review") < shown.index("Wed")
    assert f'resource-id="{PKG}:id/event_title"' in dev.ui_xml()
    started = [line for line in dev.log_lines(mark, tags=["ActivityTaskManager"]) if "START" in line]
    assert len(started) == 1 and "cmp=com.google.android.calendar/com.android.calendar.AllInOneActivity" in started[0]


def test_a_snapshots_events_are_the_schedule(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, "{calendar: {events: [{title: Flight to Lisbon, date: '2026-12-01', hour: 7, "
                                   "minute: 5, minutes: 150}, {title: Dentist, day: 1, hour: 14, minute: 30, minutes: "
                                   "45, location: 210 Main St}, {title: Old meeting, day: -1, hour: 9}]}}")
    dev = SimDevice(path, noise=False)
    assert calendar_state(dev).events[0] == Event("Flight to Lisbon", 7, 5, 150, date="2026-12-01")
    dev.launch("calendar")
    shown = texts(dev)
    assert "Old meeting" not in shown and "Team stand-up" not in shown  # over before today; the defaults replaced
    assert shown == ["November", "Tue", "24", "Dentist", "2:30 PM – 3:15 PM", "December", "Tue", "1",
                     "Flight to Lisbon", "7:05 AM – 9:35 AM"]
    chip = next(n for n in dev.frame().walk() if n.rid == f"{PKG}:id/event_chip")
    assert chip.desc == "Dentist, 2:30 PM – 3:15 PM, 210 Main St"


def test_tapping_an_event_opens_its_details_and_back_returns() -> None:
    dev = SimDevice("000", noise=False)
    dev.set_state({"calendar": EVENTS})  # as a task's starting state sets it
    dev.launch("calendar")
    schedule = dev.screenshot()
    mark = dev.log_mark()
    tap_chip(dev, "Dentist")
    assert dev.top_screen() == {"screen": "event", "event": 1}
    assert not [line for line in dev.log_lines(mark) if "START" in line]  # a fragment of the same activity
    assert texts(dev) == ["Dentist", "Tuesday, November 24", "2:30 PM – 3:15 PM", "210 Main St",
                          "Bring the insurance card, and the forms the office mailed last week, filled in."]
    notes = next(n for n in dev.frame().walk() if n.rid == f"{PKG}:id/description")
    assert len(notes.children) > 1  # one TextView in the dump, drawn over lines
    dev.key("BACK")
    assert dev.top_screen() == {"screen": "main"} and (dev.screenshot() == schedule).all()
    tap_chip(dev, "Flight to Lisbon")
    assert texts(dev)[:3] == ["Flight to Lisbon", "Tuesday, December 1", "7:05 AM – 9:35 AM"]


def test_an_event_stays_on_its_day_when_the_clock_passes_midnight() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("calendar")
    dev.set_clock(int((datetime(2026, 11, 24, 7, 0) - EPOCH).total_seconds() * 1000))
    shown = texts(dev)
    assert "Team stand-up" not in shown and shown[:4] == ["November", "Tue", "24", "Project review"]


def test_a_details_screen_whose_event_is_gone_is_empty() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("calendar")
    tap_chip(dev, "Dinner with Alex")
    dev.set_state({"calendar": {"events": []}})
    assert dev.top_screen()["screen"] == "event" and texts(dev) == []
    dev.key("BACK")
    assert texts(dev) == ["November", dev.locale.t("apps.calendar_no_events")]


def test_a_long_schedule_scrolls() -> None:
    dev = SimDevice("000", noise=False)
    dev.set_state({"calendar": {"events": [{"title": f"Event {i}", "day": i, "hour": 10} for i in range(30)]}})
    dev.launch("calendar")
    assert "Event 0" in texts(dev) and "Event 29" not in texts(dev)
    w, h = dev.size
    for _ in range(6):
        dev.swipe(w // 2, h * 3 // 4, w // 2, h // 4)
    assert "Event 29" in texts(dev) and "Event 0" not in texts(dev)
    tap_chip(dev, "Event 29")
    assert dev.top_screen() == {"screen": "event", "event": 29}


@pytest.mark.parametrize("locale_id", sorted(locales()))
def test_every_locale_draws_the_schedule_and_the_details(locale_id: str) -> None:
    dev = SimDevice("000", noise=False)
    dev.reconfigure(locale=locale_id)
    dev.set_state({"calendar": EVENTS})
    loc = dev.locale
    dev.launch("calendar")
    shown = texts(dev)
    assert shown[0] == loc.seq("month")[10] and f"{loc.time(9, 0)} – {loc.time(9, 15)}" in shown
    assert loc.seq("weekday_short")[1] in shown and loc.number(23) in shown  # Monday the 23rd
    assert dev.screenshot().std() > 0
    tap_chip(dev, "Dentist")
    date = loc.t("launcher.date_format", weekday=loc.seq("weekday")[2], month=loc.seq("month")[10], day=24)
    assert texts(dev)[:3] == ["Dentist", date, f"{loc.time(14, 30)} – {loc.time(15, 15)}"]
    assert dev.screenshot().std() > 0
