"""The content providers the served phone answers ``content query`` for, as tables read from the simulated phone:
one explicit table (:data:`TABLES`) from a URI's authority and path to the function that builds its rows.

=================================================  =============================================================
``content://settings/system|secure|global``        the settings (``/KEY`` names one), :mod:`vlui.served.configure`
``content://com.android.calendar/events``          the calendar's events (:mod:`vlui.sim.apps.calendar`)
``content://com.android.contacts/contacts``        a row per person (:mod:`vlui.sim.apps.contacts`)
``content://com.android.contacts/raw_contacts``    a raw contact per person, on the device (no account)
``content://com.android.contacts/data``            each person's name, phone and email rows
``content://com.android.contacts/data/phones``     the phone rows (``data1`` the number), ``.../data/emails``
``content://contacts/phones``                      the legacy Contacts API's phones (``number``, ``display_name``),
                                                   as AndroidWorld's harness reads them
``content://sms``, ``.../inbox``, ``.../sent``      Messages' texts (:func:`vlui.sim.apps.messages.sms_rows`)
=================================================  =============================================================

A table's path followed by ``/ID`` gives the row whose ``_id`` is ID (a setting's ``/KEY``, the row named KEY).

Deviations from Android 10's providers, on purpose: a query returns the columns listed here, a few of the many the
real views have (those harnesses read: ids, names, numbers, times); the calendar has one local calendar
(``calendar_id`` 1, time zone GMT as the phone's), a person one raw contact, ids are positions in the app's state
(an event's or a person's index + 1, a data row's count in the order name, phone, email), and ``--where`` takes only
comparisons of a column with a literal (``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``LIKE``) joined by ``AND``,
where a provider takes any SQL selection; ``--sort`` takes columns, each ``ASC`` or ``DESC``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import re2

from vlui.android.logcat import EPOCH
from vlui.served import configure
from vlui.served.numbers import parse_long
from vlui.served.patterns import PatternError, TooCostly, like
from vlui.served.phone import ServedPhone
from vlui.sim.apps.calendar import calendar_state, event_times
from vlui.sim.apps.contacts import contacts_state, lookup_key, split_name
from vlui.sim.apps.messages import BOXES, COLUMNS, sms_rows

NAME_TYPE, PHONE_TYPE, EMAIL_TYPE = ("vnd.android.cursor.item/name", "vnd.android.cursor.item/phone_v2",
                                     "vnd.android.cursor.item/email_v2")
PHONE_MOBILE, EMAIL_HOME = 2, 1  # ContactsContract.CommonDataKinds.Phone.TYPE_MOBILE, Email.TYPE_HOME
CALENDAR_TZ = "GMT"  # the served phone's persist.sys.timezone


class ProviderError(Exception):
    """What the provider throws, as ``content`` prints it below ``Error while accessing provider:AUTHORITY``."""


@dataclass(frozen=True)
class Table:
    """A provider's table: its columns (what a query without ``--projection`` returns, in order) and its rows (a
    value per column; None is SQL's NULL)."""

    columns: tuple[str, ...]
    rows: list[dict[str, Any]]


# ------------------------------------------------------------------------------------------------ the tables
def _settings(namespace: str) -> Callable[[ServedPhone], Table]:
    def table(phone: ServedPhone) -> Table:
        values = configure.list_settings(phone, namespace)
        return Table(("_id", "name", "value"), [{"_id": i + 1, "name": name, "value": value}
                                                 for i, (name, value) in enumerate(values.items())])
    return table


def _ms(moment: datetime) -> int:
    """A local time as the providers keep it: ms since 1970 (the phone's zone is GMT)."""
    return int((moment - EPOCH).total_seconds() * 1000)


def events(phone: ServedPhone) -> Table:
    """CalendarContract.Events: an event's times are ms since 1970 (the phone's clock is GMT)."""
    dev = phone.device
    rows = []
    for i, event in enumerate(calendar_state(dev).events):
        start, end = event_times(dev, event)
        rows.append({"_id": i + 1, "calendar_id": 1, "title": event.title, "description": event.notes,
                     "eventLocation": event.location, "dtstart": _ms(start), "dtend": _ms(end), "duration": None,
                     "allDay": 0, "eventTimezone": CALENDAR_TZ, "rrule": None, "deleted": 0})
    return Table(("_id", "calendar_id", "title", "description", "eventLocation", "dtstart", "dtend", "duration",
                  "allDay", "eventTimezone", "rrule", "deleted"), rows)


def _normalized(number: str) -> str:
    """A number as PhoneNumberUtils keeps it to compare: its digits, after a leading +."""
    digits = "".join(c for c in number if c.isdigit())
    return f"+{digits}" if number.strip().startswith("+") else digits


def contacts(phone: ServedPhone) -> Table:
    """ContactsContract.Contacts: a row per person."""
    rows = [{"_id": i + 1, "lookup": lookup_key(i, p), "display_name": p.name, "has_phone_number": int(bool(p.phone)),
             "name_raw_contact_id": i + 1, "starred": 0} for i, p in enumerate(contacts_state(phone.device).people)]
    return Table(("_id", "lookup", "display_name", "has_phone_number", "name_raw_contact_id", "starred"), rows)


def raw_contacts(phone: ServedPhone) -> Table:
    """ContactsContract.RawContacts: a person's one raw contact, kept on the device (no account)."""
    rows = [{"_id": i + 1, "contact_id": i + 1, "display_name": p.name, "account_name": None, "account_type": None,
             "deleted": 0, "starred": 0} for i, p in enumerate(contacts_state(phone.device).people)]
    return Table(("_id", "contact_id", "display_name", "account_name", "account_type", "deleted", "starred"), rows)


DATA_COLUMNS = ("_id", "raw_contact_id", "contact_id", "lookup", "display_name", "mimetype", "data1", "data2", "data3",
                "data4")


def data(phone: ServedPhone, mimetype: str | None = None) -> Table:
    """ContactsContract.Data: each person's structured name (data1 the whole name, data2 the given names, data3 the
    family name), phone (data1 as typed, data2 TYPE_MOBILE, data4 normalized) and email (data1, data2 TYPE_HOME)
    rows; ``mimetype``: only those of that kind."""
    rows = []
    for i, p in enumerate(contacts_state(phone.device).people):
        given, family = split_name(p.name)
        kinds = [(NAME_TYPE, p.name, given, family, None)]
        if p.phone:
            kinds.append((PHONE_TYPE, p.phone, PHONE_MOBILE, None, _normalized(p.phone)))
        if p.email:
            kinds.append((EMAIL_TYPE, p.email, EMAIL_HOME, None, None))
        for kind, data1, data2, data3, data4 in kinds:
            row = {"_id": len(rows) + 1, "raw_contact_id": i + 1, "contact_id": i + 1, "lookup": lookup_key(i, p),
                   "display_name": p.name, "mimetype": kind, "data1": data1, "data2": data2, "data3": data3,
                   "data4": data4}
            rows.append(row)
    return Table(DATA_COLUMNS, [r for r in rows if mimetype is None or r["mimetype"] == mimetype])


def legacy_phones(phone: ServedPhone) -> Table:
    """The legacy Contacts.Phones (``content://contacts/phones``), which ContactsProvider2 still answers: a row per
    phone number, with its person's id and name; number_key is the number's digits reversed (PhoneNumberUtils'
    getStrippedReversed)."""
    rows = [{"_id": r["_id"], "person": r["contact_id"], "type": PHONE_MOBILE, "label": None, "number": r["data1"],
             "number_key": _normalized(r["data1"])[::-1], "isprimary": 0, "name": r["display_name"],
             "display_name": r["display_name"]} for r in data(phone, PHONE_TYPE).rows]
    return Table(("_id", "person", "type", "label", "number", "number_key", "isprimary", "name", "display_name"), rows)


# URI authority/path -> the table's rows read from the phone (the caller holds the phone's lock)
TABLES: dict[str, Callable[[ServedPhone], Table]] = {
    "settings/system": _settings("system"),
    "settings/secure": _settings("secure"),
    "settings/global": _settings("global"),
    "com.android.calendar/events": events,
    "com.android.contacts/contacts": contacts,
    "com.android.contacts/raw_contacts": raw_contacts,
    "com.android.contacts/data": data,
    "com.android.contacts/data/phones": lambda phone: data(phone, PHONE_TYPE),
    "com.android.contacts/data/emails": lambda phone: data(phone, EMAIL_TYPE),
    "contacts/phones": legacy_phones,
    **{f"sms{'/' if box else ''}{box}": (lambda phone, b=box: Table(COLUMNS, sms_rows(phone.device.state, b)))
       for box in BOXES},
}


# ------------------------------------------------------------------------------------------------ the query
def query(phone: ServedPhone, uri: str, projection: str | None = None, where: str | None = None,
          sort: str | None = None) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """``content query``'s columns and rows for ``uri`` (``content://AUTHORITY/PATH[/ID]``), its ``projection``
    (columns joined by ``:``), ``where`` and ``sort``; :class:`ProviderError` with the provider's message otherwise."""
    m = re.fullmatch(r"content://([^/]+)((?:/[^/]+)*)/?", uri)
    if m is None:
        raise ProviderError(f"java.lang.IllegalArgumentException: Unknown URI {uri}")
    path = f"{m.group(1)}{m.group(2)}"
    one = None
    if path not in TABLES and "/" in path and path.rsplit("/", 1)[0] in TABLES:
        path, one = path.rsplit("/", 1)
    if path not in TABLES:
        raise ProviderError(f"java.lang.IllegalArgumentException: Unknown URI {uri}")
    with phone.lock:
        table = TABLES[path](phone)
    rows = table.rows
    if one is not None:
        key = "name" if path.startswith("settings/") else "_id"
        rows = [r for r in rows if str(r[key]) == one]
    columns = tuple(projection.split(":")) if projection else table.columns
    for column in columns:
        _known(table, column)
    if where is not None:
        tests = _where(table, where)
        rows = [r for r in rows if all(test(r) for test in tests)]
    for column, descending in reversed(_sort(table, sort) if sort else []):
        rows = sorted(rows, key=lambda r, c=column: (r[c] is not None, r[c] if r[c] is not None else 0),
                      reverse=descending)
    return columns, [tuple(r[c] for c in columns) for r in rows]


def _known(table: Table, column: str) -> None:
    if column not in table.columns:
        raise ProviderError(f"android.database.sqlite.SQLiteException: no such column: {column}")


# A where clause is the client's: its grammar is matched by RE2, in linear time (Python's re took quadratic time over a
# run of blanks: "\s+AND\s+" tried at each of them)
COMPARISON = re2.compile(r"(?i)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|=|!=|<>|<=|>=|<|>|\s+LIKE\s+)\s*"
                         r"('(?:[^']|'')*'|\"[^\"]*\"|-?\d+)\s*")
AND = re2.compile(r"(?i)\s+AND\s+")


def _where(table: Table, where: str) -> list[Callable[[dict[str, Any]], bool]]:
    """The tests a row must pass for ``where``: comparisons of a column with a literal, joined by AND."""
    tests = []
    for part in AND.split(where.strip()):
        m = COMPARISON.fullmatch(part)
        if m is None:
            raise ProviderError("java.lang.IllegalArgumentException: the simulated phone's providers take a where "
                                "clause of comparisons COLUMN OP VALUE (=, !=, <, <=, >, >=, LIKE) joined by AND, not "
                                f"{where!r}")
        column, op, literal = m.group(1), m.group(2).strip().upper(), m.group(3)
        _known(table, column)
        value: Any = (literal[1:-1].replace("''", "'") if literal[0] == "'" else literal[1:-1] if literal[0] == '"'
                      else _sql_number(literal))
        tests.append(_comparison(column, op, value))
    return tests


def _comparison(column: str, op: str, value: Any) -> Callable[[dict[str, Any]], bool]:
    """SQLite's comparison of a column with a literal: NULL matches nothing; a number column compares a text literal
    that reads as a number as that number (the column's affinity); LIKE is case-insensitive for ASCII, ``%`` any run
    of characters, ``_`` one."""
    if op == "LIKE":  # matched in linear time (vlui.served.patterns): a client's pattern cannot hold the phone
        try:
            pattern = like(str(value))
        except PatternError as err:
            raise ProviderError(f"android.database.sqlite.SQLiteException: {err}") from None

        def matches(r: dict[str, Any]) -> bool:
            try:
                return r[column] is not None and pattern.fullmatch(str(r[column]))
            except TooCostly:
                raise ProviderError("android.database.sqlite.SQLiteException: LIKE or GLOB pattern too complex") \
                    from None
        return matches
    compare = {"=": lambda a, b: a == b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
               "<>": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
               ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]

    def test(r: dict[str, Any]) -> bool:
        have = r[column]
        if have is None:
            return False
        if isinstance(have, int) and isinstance(value, str) and re.fullmatch(r"-?\d+", value):
            return compare(have, _sql_number(value))
        if isinstance(have, int) != isinstance(value, int):  # SQLite orders every number before every text
            return compare(0, 1) if isinstance(have, int) else compare(1, 0)
        return compare(have, value)
    return test


def _sql_number(literal: str) -> int | float:
    """An integer literal as SQLite reads it: a 64-bit integer, or past that a REAL (inf past a double's range)."""
    value = parse_long(literal)
    return value if value is not None else float(literal)


def _sort(table: Table, sort: str) -> list[tuple[str, bool]]:
    """``--sort``'s columns, each with whether it is descending."""
    out = []
    for part in sort.split(","):
        m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+(ASC|DESC))?\s*", part, re.IGNORECASE)
        if m is None:
            raise ProviderError(f"android.database.sqlite.SQLiteException: near {part.strip()!r}: syntax error")
        _known(table, m.group(1))
        out.append((m.group(1), (m.group(2) or "").upper() == "DESC"))
    return out
