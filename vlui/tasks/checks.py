"""State checks as data: what a B-MoCA release 2.5 evaluator reads of a phone, and what it compares it with.

A task's ``check`` is a list of conditions that must all hold. Each condition is a mapping whose first key says what
it reads:

- ``ui: <resource id>`` (or ``ui_text: <text>``, an element found by its exact text, as a ``UiSelector().text``): the
  first element of the UI tree with that id or text (what Appium's ``find_element`` returns; the condition fails when
  there is none), then any of its attributes ``text``, ``content_desc``, ``selected``, ``checked``, ``displayed``
  (Appium's; a ``uiautomator dump`` lists displayed elements only), each with a test: a value (equal), or
  ``{includes: s}``, ``{startswith: s}``, ``{in: [values]}``, ``{spaceless: s}`` (equal once spaces are removed).
  With no attribute, the element being there is the condition.
- ``any: [conditions]``: one of them holds.
- ``alarms: {has: row}`` or ``alarms: {lacks: row}``: the Clock's alarms (``alarms.db``, table ``alarm_templates``)
  have (or have no) row with those columns: ``hour``, ``minutes``, ``daysofweek`` (DeskClock's bits: Monday 1,
  Tuesday 2, ... Sunday 64) and ``enabled`` (0 or 1).
- ``volume: <stream>`` with ``above: n``: the stream's level (``media volume --stream <n> --get``) is over ``n``.
- ``prefs: <app>`` with ``file`` (a shared-preferences file of the app) and one of ``boolean``, ``string`` or
  ``int`` (the entry of that type and name) or ``last: true`` (the file's last entry, whatever its name, read as
  text), and ``equals``: the entry's value (a boolean, an integer, or the text as the file writes it).

:func:`check_problem` says what is wrong with one, so that a mistake in a task file is found when the catalog is read.
Nothing runs these yet on either backend: :func:`vlui.tasks.catalog.resolve_tasks` refuses a task judged by one.
"""

from __future__ import annotations

from typing import Any

UI_ATTRIBUTES = ("text", "content_desc", "selected", "checked", "displayed")
TESTS = ("includes", "startswith", "in", "spaceless")
ALARM_COLUMNS = ("hour", "minutes", "daysofweek", "enabled")
STREAMS = ("alarm", "media", "ring", "call")
PREF_TYPES = ("boolean", "string", "int")
KINDS = ("ui", "ui_text", "any", "alarms", "volume", "prefs")


def check_problem(check: Any) -> str | None:
    """Why ``check`` (a task's list of conditions) is not one, or None."""
    if not isinstance(check, list) or not check:
        return f"a check is a non-empty list of conditions, not {check!r}"
    for i, cond in enumerate(check):
        problem = _condition_problem(cond)
        if problem:
            return f"condition {i + 1}: {problem}"
    return None


def _condition_problem(cond: Any) -> str | None:
    if not isinstance(cond, dict) or not cond:
        return f"a condition is a mapping, not {cond!r}"
    kind = next(iter(cond))
    if kind not in KINDS:
        return f"a condition starts with one of {', '.join(KINDS)}, not {kind!r}"
    rest = {k: v for k, v in cond.items() if k != kind}
    value = cond[kind]
    if kind in ("ui", "ui_text"):
        if not isinstance(value, str) or not value:
            return f"{kind} names an element by its {'resource id' if kind == 'ui' else 'text'}, not {value!r}"
        for attr, test in rest.items():
            if attr not in UI_ATTRIBUTES:
                return f"{attr!r} is not an attribute a check reads; attributes: {', '.join(UI_ATTRIBUTES)}"
            problem = _test_problem(test)
            if problem:
                return f"{attr}: {problem}"
        return None
    if kind == "any":
        if rest or not isinstance(value, list) or len(value) < 2:
            return "any is a list of two or more conditions, alone in its mapping"
        return next((f"any: {p}" for p in map(_condition_problem, value) if p), None)
    if kind == "alarms":
        if rest or not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("has", "lacks"):
            return "alarms is {has: row} or {lacks: row}, alone in its mapping"
        row = next(iter(value.values()))
        if not isinstance(row, dict) or not row or set(row) - set(ALARM_COLUMNS):
            return f"an alarm row names some of {', '.join(ALARM_COLUMNS)}, not {row!r}"
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in row.values()):
            return f"an alarm row's values are integers, not {row!r}"
        return None
    if kind == "volume":
        if value not in STREAMS or set(rest) != {"above"} or not isinstance(rest["above"], int):
            return f"volume names a stream ({', '.join(STREAMS)}) and an integer 'above'"
        return None
    # prefs
    if not isinstance(value, str) or not value:
        return f"prefs names an app, not {value!r}"
    entry = [k for k in (*PREF_TYPES, "last") if k in rest]
    if not isinstance(rest.get("file"), str) or len(entry) != 1 or "equals" not in rest:
        return f"prefs needs file, one of {', '.join(PREF_TYPES)} or last, and equals"
    if set(rest) != {"file", entry[0], "equals"}:
        return f"prefs takes file, {entry[0]} and equals only, not {', '.join(sorted(rest))}"
    if entry[0] == "last" and rest["last"] is not True:
        return "last is true (the file's last entry) or left out"
    want = {"boolean": bool, "int": int, "string": str, "last": str}[entry[0]]
    if not isinstance(rest["equals"], want) or (want is int and isinstance(rest["equals"], bool)):
        return f"a {entry[0]} entry equals a {want.__name__}, not {rest['equals']!r}"
    return None


def _test_problem(test: Any) -> str | None:
    if not isinstance(test, dict):
        return None if isinstance(test, (str, bool, int)) else f"a test is a value or a mapping, not {test!r}"
    if len(test) != 1 or next(iter(test)) not in TESTS:
        return f"a test mapping has one of {', '.join(TESTS)}, not {test!r}"
    name, want = next(iter(test.items()))
    if name == "in":
        return None if isinstance(want, list) and want else "in takes a non-empty list"
    return None if isinstance(want, str) and want else f"{name} takes a non-empty text"
