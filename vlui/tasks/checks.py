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
:func:`check_holds` runs one on a :class:`~vlui.device.Device`, either backend: the UI conditions on the elements of
its ``ui_xml()`` (:func:`ui_holds`; the environment parses the dump: :func:`vlui.env.ui_text.parse_xml`), the alarms and the volume as a task's ``state_check`` reads the device's state
(:meth:`~vlui.device.Device.check_state`: on the simulated phone its state, over ADB the shell commands of
:mod:`vlui.adb.state`), the shared preferences from :meth:`~vlui.device.Device.shared_prefs` (:func:`prefs_hold`).
:func:`check_reads` names what a check reads besides the UI tree, so that a backend that cannot read it refuses the
task before it starts (:func:`vlui.tasks.catalog.resolve_tasks`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from vlui.device import Device
from vlui.errors import VluiError

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


# ------------------------------------------------------------------------------------------------ running a check
class UiNode(Protocol):
    """A node of a ``uiautomator dump`` as a check reads it (:class:`vlui.env.ui_text.Element` is one)."""

    resource_id: str
    text: str
    content_desc: str
    selected: bool
    checked: bool


def check_reads(check: list[dict]) -> list[str]:
    """What ``check`` reads of the device besides its UI tree, named as a task's ``state_check`` names the device's
    state (``alarms``, ``volume.alarm``) or, for an app's shared preferences, ``<app>.shared_prefs``: what a backend
    must read to run it."""
    out: list[str] = []
    for cond in check:
        kind = next(iter(cond))
        if kind == "any":
            out += check_reads(cond["any"])
        elif kind == "prefs":
            out.append(f"{cond['prefs']}.shared_prefs")
        elif kind in ("alarms", "volume"):
            out += list(_state_spec(cond)[0])
    return list(dict.fromkeys(out))


def reads_ui(check: list[dict]) -> bool:
    """Whether ``check`` reads the UI tree (a ``ui`` or ``ui_text`` condition, alone or in an ``any``)."""
    return any(reads_ui(c["any"]) if "any" in c else next(iter(c)) in ("ui", "ui_text") for c in check)


def check_holds(check: list[dict], device: Device, screen: Callable[[], Sequence[UiNode]], task: str = "") -> bool:
    """Whether every condition of ``check`` holds on ``device``, read as B-MoCA's evaluator reads the phone after a
    step; ``screen()`` gives the elements of its UI tree after that step (called only if a condition reads it). A
    condition the device cannot read is an error that names ``task`` and what it lacks, never a False."""

    def holds(cond: dict) -> bool:
        kind = next(iter(cond))
        if kind == "any":
            return any(holds(c) for c in cond["any"])
        if kind in ("ui", "ui_text"):
            return ui_holds(cond, screen())
        if kind == "prefs":
            return prefs_hold(cond, device.shared_prefs(cond["prefs"], cond["file"]))
        spec, wanted = _state_spec(cond)
        return device.check_state(spec) == wanted

    try:
        return all(holds(cond) for cond in check)
    except VluiError as err:  # the same kind of error (a device that went away stays a DeviceError), naming the task
        raise type(err)(f"task {task}: {err}" if task else str(err)) from None


def _state_spec(cond: dict) -> tuple[dict[str, Any], bool]:
    """An ``alarms`` or ``volume`` condition as a ``state_check`` (:func:`vlui.device.state_meets`) and the answer
    it must give: ``{has: row}`` is an alarm row with those columns, ``{lacks: row}`` none."""
    if "alarms" in cond:
        verb, row = next(iter(cond["alarms"].items()))
        return {"alarms": {"contains": row}}, verb == "has"
    return {f"volume.{cond['volume']}": {"above": cond["above"]}}, True


def ui_holds(cond: dict, elements: Sequence[UiNode]) -> bool:
    """Whether a ``ui`` or ``ui_text`` condition holds on a UI tree: its first element with that resource id (or
    exact text), in document order as Appium's ``find_element`` returns it, is there and passes every attribute's
    test. Attributes read as Appium gives them: text, ``selected``/``checked`` as ``"true"``/``"false"``, and
    ``displayed`` ``"true"`` (a ``uiautomator dump`` holds only the nodes shown)."""
    kind = next(iter(cond))
    field = "resource_id" if kind == "ui" else "text"
    found = next((e for e in elements if getattr(e, field) == cond[kind]), None)
    if found is None:
        return False
    attrs = {"text": found.text, "content_desc": found.content_desc, "selected": _appium(found.selected),
             "checked": _appium(found.checked), "displayed": "true"}
    return all(_passes(attrs[attr], test) for attr, test in cond.items() if attr != kind)


def prefs_hold(cond: dict, text: str | None) -> bool:
    """Whether a ``prefs`` condition holds on a shared-preferences file as Android writes it (``<map>`` of
    ``<boolean name=".." value=".."/>``, ``<int .../>``, ``<string name="..">text</string>``); ``text`` None (the
    app never wrote the file) or an entry missing is False, as B-MoCA's evaluator finds no value there."""
    if text is None:
        return False
    try:
        root = ET.fromstring(text.encode("utf-8"))  # as bytes: the file declares its encoding
    except ET.ParseError as err:
        raise VluiError(f"the {cond['prefs']} app's {cond['file']} is not a shared-preferences file ({err})") from None
    if cond.get("last"):
        entries = list(root)
        return bool(entries) and (entries[-1].text or "") == cond["equals"]
    kind = next(k for k in PREF_TYPES if k in cond)
    entry = next((e for e in root if e.tag == kind and e.get("name") == cond[kind]), None)
    if entry is None:
        return False
    return ((entry.text or "") if kind == "string" else entry.get("value")) == _appium(cond["equals"])


def _appium(value: Any) -> str:
    """A value as text, a boolean as Appium and a preferences file write it (``true``, ``false``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _passes(have: str, test: Any) -> bool:
    if not isinstance(test, dict):
        return have == _appium(test)
    name, want = next(iter(test.items()))
    if name == "in":
        return have in [_appium(v) for v in want]
    if name == "includes":
        return want in have
    if name == "startswith":
        return have.startswith(want)
    return have.replace(" ", "") == want  # spaceless
