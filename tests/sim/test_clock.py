"""Clock's repeat days as DeskClock shows them on Android 10: the expanded alarm card's Repeat checkbox and day
buttons (from the locale's first day of the week, mirrored on a right-to-left phone), the days kept as alarms.db's
``daysofweek``, and the collapsed card's summary."""

from __future__ import annotations

import pytest

from tests.sim.driver import one, tap
from vlui.android.i18n import get_locale, locales
from vlui.sim.apps.deskclock import alarm_rows
from vlui.sim.phone import SimDevice

PKG = "com.google.android.deskclock"


def _phone(locale: str = "en-US", **alarm) -> SimDevice:
    dev = SimDevice("000")
    dev.reconfigure(locale=locale)
    dev.set_state({"clock": {"tab": "alarm", "alarms": [{"id": 1, "hour": 10, "minute": 30, "enabled": True, **alarm}]}})
    dev.launch("clock")
    return dev


def _by_id(dev: SimDevice, name: str):
    return [n for n in dev.frame().walk() if n.rid == f"{PKG}:id/{name}"]


def test_repeat_checks_every_day_and_each_day_button_clears_its_own_bit() -> None:
    dev = _phone()
    assert not _by_id(dev, "repeat_onoff")  # collapsed: no Repeat
    tap(dev, one(dev, lambda n: n.rid == f"{PKG}:id/arrow", "the expand arrow"))
    assert _by_id(dev, "repeat_onoff") and not _by_id(dev, "day_button_box")
    tap(dev, _by_id(dev, "repeat_onoff")[0])
    assert alarm_rows(dev.state)[0]["daysofweek"] == 127  # Weekdays.ALL, as setAlarmRepeatEnabled sets
    for name in ("Saturday", "Sunday"):
        tap(dev, one(dev, lambda n, name=name: n.rid == f"{PKG}:id/day_button_box" and n.desc == name, name))
    assert alarm_rows(dev.state)[0]["daysofweek"] == 31  # Monday 1 ... Friday 16
    assert [n.checked for n in _by_id(dev, "day_button_box")] == [False, True, True, True, True, True, False]
    tap(dev, _by_id(dev, "repeat_onoff")[0])  # cleared: rings once, the days kept for the next check
    assert alarm_rows(dev.state)[0]["daysofweek"] == 0 and not _by_id(dev, "day_button_box")
    tap(dev, _by_id(dev, "repeat_onoff")[0])
    assert alarm_rows(dev.state)[0]["daysofweek"] == 31
    tap(dev, one(dev, lambda n: n.rid == f"{PKG}:id/arrow", "the collapse arrow"))
    summary = one(dev, lambda n: n.rid == f"{PKG}:id/days_of_week", "the days' summary")
    assert (summary.text, summary.desc) == ("Mon, Tue, Wed, Thu, Fri", "Monday, Tuesday, Wednesday, Thursday, Friday")
    lines = dev.log_lines(tags=["AlarmClock"])
    assert any("Events: [Alarm] [Toggle Repeat Days] [Tap]" in line for line in lines)
    assert not any("Created new alarm instance" in line for line in lines)  # kept for an alarm switched on


@pytest.mark.parametrize("locale", list(locales()))
def test_the_day_buttons_start_on_the_locales_first_day_and_name_each_day(locale: str) -> None:
    dev = _phone(locale, days=127)
    dev.set_state({"clock": {"expanded": 1}})
    loc = get_locale(locale)
    buttons = _by_id(dev, "day_button_box")
    first = {"sun": 0, "mon": 1, "sat": 6}[loc.meta["first_day"]]
    order = [(first + i) % 7 for i in range(7)]
    assert [b.desc for b in buttons] == [loc.seq("weekday")[d] for d in order]
    assert [b.text for b in buttons] == [loc.seq("weekday_narrow")[d] for d in order]
    xs = [b.bounds[0] for b in buttons]
    assert xs == sorted(xs, reverse=loc.rtl)  # a right-to-left phone mirrors the row
    assert all(b.checked for b in buttons)


def test_a_repeating_alarm_rings_next_on_one_of_its_days() -> None:
    dev = _phone(days=96)  # Saturday and Sunday
    lines = dev.log_lines()
    dev.set_state({"clock": {"expanded": 1}})
    tap(dev, one(dev, lambda n: n.rid == f"{PKG}:id/day_button_box" and n.desc == "Monday", "Monday"))
    assert alarm_rows(dev.state)[0]["daysofweek"] == 97
    new = dev.log_lines()[len(lines):]
    assert any("Scheduled alarm instance" in line for line in new)


def test_a_new_alarm_comes_expanded() -> None:
    dev = _phone()
    tap(dev, one(dev, lambda n: n.rid == f"{PKG}:id/fab", "the add button"))
    tap(dev, one(dev, lambda n: n.rid == "android:id/button1", "OK"))
    assert len(_by_id(dev, "repeat_onoff")) == 1 and len(_by_id(dev, "arrow")) == 2
