"""Files apps keep in their private storage that B-MoCA's evaluators read: Clock's alarms database and an app's
shared-preferences files, where an Android 10 phone keeps them and as the apps write them.

- **Clock's alarms** (:data:`ALARMS_DB`): DeskClock opens ``alarms.db`` in device-protected storage
  (``/data/user_de/0/<package>/databases``, so that alarms ring before the user unlocks the phone). Its
  ``ClockDatabaseHelper`` (database version 8) makes two tables: ``alarm_templates``, one row per alarm of the list,
  and ``alarm_instances``, the next ringing of each alarm that is on. Android's ``SQLiteOpenHelper`` adds
  ``android_metadata`` (the locale) and sets ``user_version`` to the helper's version. B-MoCA's evaluators copy the
  file as root and read ``alarm_templates``' ``hour``, ``minutes``, ``daysofweek`` and ``enabled``.
- **Shared preferences** (:func:`prefs_path`): ``/data/data/<package>/shared_prefs/<name>.xml``, the XML
  :mod:`vlui.android.shared_prefs` writes.

Both are the app's (owner and group its uid, mode ``-rw-rw----``): a shell reads them only as root.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

CLOCK_PACKAGE = "com.google.android.deskclock"
ALARMS_DB = f"/data/user_de/0/{CLOCK_PACKAGE}/databases/alarms.db"
ALARMS_DB_VERSION = 8  # ClockDatabaseHelper.VERSION_8
# Settings.System.DEFAULT_ALARM_ALERT_URI: the ringtone of an alarm made with Clock's default sound
DEFAULT_RINGTONE = "content://settings/system/alarm_alert"

ALARMS_SCHEMA = """
CREATE TABLE android_metadata (locale TEXT);
CREATE TABLE alarm_templates (_id INTEGER PRIMARY KEY, hour INTEGER NOT NULL, minutes INTEGER NOT NULL,
    daysofweek INTEGER NOT NULL, enabled INTEGER NOT NULL, vibrate INTEGER NOT NULL, label TEXT NOT NULL,
    ringtone TEXT, delete_after_use INTEGER NOT NULL DEFAULT 0);
CREATE TABLE alarm_instances (_id INTEGER PRIMARY KEY, year INTEGER NOT NULL, month INTEGER NOT NULL,
    day INTEGER NOT NULL, hour INTEGER NOT NULL, minutes INTEGER NOT NULL, vibrate INTEGER NOT NULL,
    label TEXT NOT NULL, ringtone TEXT, alarm_state INTEGER NOT NULL,
    alarm_id INTEGER REFERENCES alarm_templates(_id) ON UPDATE CASCADE ON DELETE CASCADE);
"""
ALARM_COLUMNS = ("hour", "minutes", "daysofweek", "enabled")  # what B-MoCA's evaluators read of alarm_templates
# AlarmInstance's states: SILENT until two hours before it rings, then LOW_NOTIFICATION (the "upcoming alarm" one)
SILENT_STATE, LOW_NOTIFICATION_STATE = 0, 1
LOW_NOTIFICATION_MS = 2 * 3600 * 1000


@dataclass(frozen=True)
class AlarmRow:
    """One row of ``alarm_templates``, and when it next rings (``next_ring``: year, month (1-12), day, hour,
    minutes, and milliseconds from now; None for an alarm that is off, which has no instance)."""

    id: int
    hour: int
    minutes: int
    daysofweek: int
    enabled: bool
    vibrate: bool
    label: str
    next_ring: tuple[int, int, int, int, int, int] | None = None


def alarms_db(rows: Sequence[AlarmRow], locale: str) -> bytes:
    """The bytes of ``alarms.db`` holding ``rows``, as DeskClock writes it on a phone in ``locale`` (an Android
    language tag, ``en-US``): each alarm that is on has its next instance. ``delete_after_use`` is 0, as for every alarm
    made in Clock's list (only one set by another app's intent is deleted once it rang)."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(ALARMS_SCHEMA)
        con.execute("INSERT INTO android_metadata VALUES (?)", (java_locale(locale),))
        for r in rows:
            con.execute("INSERT INTO alarm_templates VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
                        (r.id, r.hour, r.minutes, r.daysofweek, int(r.enabled), int(r.vibrate), r.label,
                         DEFAULT_RINGTONE))
        for r in rows:
            if r.enabled and r.next_ring is not None:
                year, month, day, hour, minutes, in_ms = r.next_ring
                state = LOW_NOTIFICATION_STATE if in_ms <= LOW_NOTIFICATION_MS else SILENT_STATE
                con.execute("INSERT INTO alarm_instances (year, month, day, hour, minutes, vibrate, label, ringtone, "
                            "alarm_state, alarm_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (year, month - 1, day, hour, minutes, int(r.vibrate), r.label, DEFAULT_RINGTONE,
                             state, r.id))  # AlarmInstance keeps Calendar's month, 0-11
        con.execute(f"PRAGMA user_version = {ALARMS_DB_VERSION}")
        con.commit()
        return con.serialize()
    finally:
        con.close()


def java_locale(tag: str) -> str:
    """An Android language tag (``zh-Hans-CN``) as ``Locale.toString`` writes it, what ``android_metadata`` holds
    (``zh_CN_#Hans``): Java's old codes for Hebrew, Indonesian and Yiddish (``iw``, ``in``, ``ji``)."""
    parts = tag.split("-")
    language = {"he": "iw", "id": "in", "yi": "ji"}.get(parts[0], parts[0])
    script = next((p for p in parts[1:] if len(p) == 4), "")
    region = next((p for p in parts[1:] if len(p) in (2, 3) and p != script), "")
    return f"{language}_{region}" + (f"_#{script}" if script else "")


def alarm_columns(data: bytes) -> list[dict[str, int]]:
    """``alarm_templates``' :data:`ALARM_COLUMNS` of each row of an ``alarms.db`` file, in the table's order (what
    B-MoCA's evaluators read with ``SELECT * FROM alarm_templates``). A file that is no such database is a
    :class:`ValueError` that says so."""
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(data)
        cols = ", ".join(ALARM_COLUMNS)
        rows = con.execute(f"SELECT {cols} FROM alarm_templates")
        return [dict(zip(ALARM_COLUMNS, row, strict=True)) for row in rows]
    except sqlite3.DatabaseError as err:
        raise ValueError(f"not DeskClock's alarms database ({err})") from None
    finally:
        con.close()


def prefs_path(package: str, file: str) -> str:
    """Where app ``package`` keeps its shared-preferences ``file`` (``Preferences.xml``)."""
    return f"/data/data/{package}/shared_prefs/{file}"
