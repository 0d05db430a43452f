"""Resource ids and screen structure of the Android 10 apps the tasks use, as uiautomator reports them: what the
simulated apps draw (:mod:`vlui.sim.apps`) and what the expert looks for (:mod:`vlui.agents.expert`); and the
encodings the apps keep that the tasks read (Clock's repeat days)."""

from __future__ import annotations

# The dial pad's keys: <the Phone app's package>:id/<name>, the same in the Pixel's dialer and AOSP's.
DIALPAD_KEY_IDS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
                   "7": "seven", "8": "eight", "9": "nine", "*": "star", "#": "pound"}

# Settings' top-level rows, top to bottom: each row's string key, which is also the page it opens.
SETTINGS_TOP = ("network", "connected", "apps", "battery", "display", "sound", "storage", "privacy", "location",
                "security", "accounts", "accessibility", "wellbeing", "google", "system", "about")

# Clock's repeat days (DeskClock's Weekdays, the ``daysofweek`` column of alarms.db that B-MoCA's evaluators read): a
# bit a day, Monday 1, Tuesday 2, ... Sunday 64; every day 127.
ALL_DAYS = 0x7F


def day_bit(weekday: int) -> int:
    """The ``daysofweek`` bit of a day, ``weekday`` 0 Sunday ... 6 Saturday (the ``weekday`` strings' order)."""
    return 1 << (weekday + 6) % 7
