"""Text observations and text actions for LLM agents, as in B-MoCA (Lee et al., 2024, Appendix A.1).

An LLM agent does not see pixels: it reads the screen as a numbered list of UI elements parsed from the
``uiautomator dump`` XML (:func:`parse_xml`, :func:`describe`) and answers with one of six action options
(:data:`ACTION_HELP`). :func:`parse_text_action` turns that answer into the dual-gesture action every agent in
vlui emits: a float32 array ``(touch_y, touch_x, lift_y, lift_x)`` in ``[-1, 1]``, where -1/+1 are the top/bottom
(y) and left/right (x) screen edges, i.e. ``a = 2 * p - 1`` for a normalised position ``p`` in ``[0, 1]``. With
``extended`` (``agent.actions=extended``) more options, ``long_press(n)``, ``type("text")``, ``complete()`` and
``impossible()``, and AndroidWorld's M3A actions ``open_app("name")``, ``scroll("d"[, n])``, ``wait()``,
``keyboard_enter()`` and ``answer("text")``, become a :class:`~vlui.env.actions.Command` instead.

Like the paper's parser, every node of the view hierarchy is numbered, not only the leaves: many UI elements carry
their meaning on a container (a settings row, a launcher cell), and leaf-only parsing loses them.
"""

from __future__ import annotations

import functools
import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from vlui.android.apps import apps
from vlui.android.i18n import get_locale
from vlui.env.actions import MAX_ANSWER, STATUSES, Command, typing_problem
from vlui.errors import VluiError

__all__ = [
    "ACTION_HELP",
    "DIRECTIONS",
    "KEYS",
    "Element",
    "TextAction",
    "app_names",
    "describe",
    "gesture_from_normalised",
    "parse_text_action",
    "parse_xml",
]

# normalised (touch_y, touch_x, lift_y, lift_x) of the four swipe options, as B-MoCA defines them
DIRECTIONS: dict[str, tuple[float, float, float, float]] = {
    "up": (0.8, 0.5, 0.2, 0.5),
    "down": (0.2, 0.5, 0.8, 0.5),
    "left": (0.5, 0.2, 0.5, 0.8),
    "right": (0.5, 0.8, 0.5, 0.2),
}
# normalised (y, x) tapped for each navigation button (touch = lift)
KEYS: dict[str, tuple[float, float]] = {
    "BACK": (0.95, 0.22),
    "HOME": (0.95, 0.50),
    "OVERVIEW": (0.95, 0.78),
}

ACTION_HELP = """\
Answer with exactly one action, written as one of these six options:
- tap(n): tap the centre of UI element number n from the list, e.g. tap(3).
- swipe("d"): swipe across the screen, d is one of "up", "down", "left", "right". swipe("up") drags the \
finger from the bottom towards the top (it scrolls the content down to show what is below, or opens the app \
drawer on the home screen).
- press("HOME"): go to the home screen.
- press("BACK"): go back.
- press("OVERVIEW"): show the recent apps.
- dual-gesture(y1, x1, y2, x2): touch the screen at (y1, x1) and lift the finger at (y2, x2). Coordinates are \
fractions of the screen in [0, 1] with two decimals: y from top (0) to bottom (1), x from left (0) to right (1). \
Touch and lift at the same point to tap there; use it for positions no element covers, e.g. a slider.
Write only the action, e.g. press("BACK"), with no other text."""


# ------------------------------------------------------------------------------------------------ observations
@dataclass(frozen=True)
class Element:
    """One node of the view hierarchy, as ``uiautomator dump`` reports it.

    ``index`` is the number the agent sees: 0-based in document order over all nodes (containers included).
    ``bounds`` is ``(x1, y1, x2, y2)`` in pixels, ``x2``/``y2`` exclusive as in uiautomator's ``[x1,y1][x2,y2]``.
    ``parent`` is the index of the node that encloses it in the tree (-1 for a root), so the flat list keeps what
    a container holds (a settings row's title is a child of the clickable row).
    """

    index: int
    resource_id: str = ""
    cls: str = ""
    text: str = ""
    content_desc: str = ""
    package: str = ""
    bounds: tuple[int, int, int, int] = (0, 0, 0, 0)
    clickable: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    selected: bool = False
    enabled: bool = True
    parent: int = -1
    focused: bool = False  # the text field the keyboard types into

    @property
    def has_content(self) -> bool:
        """Whether the node says anything about itself: a resource id, a text or a content description."""
        return bool(self.resource_id.strip() or _one_line(self.text) or _one_line(self.content_desc))

    @property
    def center(self) -> tuple[float, float]:
        """The centre of the bounding box, ``(x, y)`` in pixels."""
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) / 2, (y1 + y2) / 2

    @property
    def description(self) -> str:
        """A short text for the agent, built like B-MoCA's ("com.google.android.apps.nexuslauncher id title weather
        text Sunny, 1°C"): the resource id with ``:``, ``/`` and ``_`` turned into spaces (or, without one, the
        class's short name such as ``TextView``), the text, the content description where it adds to the text, and
        state words: ``checked``/``unchecked`` for checkable nodes, ``selected``, ``scrollable``, ``disabled``."""
        parts = []
        rid = re.sub(r"[:/_]", " ", self.resource_id).split()
        if rid:
            parts.append(" ".join(rid))
        elif self.cls:
            parts.append(self.cls.rsplit(".", 1)[-1])
        text, desc = _one_line(self.text), _one_line(self.content_desc)
        if text:
            parts.append(text)
        if desc and desc != text:
            parts.append(desc)
        if self.checkable:
            parts.append("checked" if self.checked else "unchecked")
        if self.selected:
            parts.append("selected")
        if self.scrollable:
            parts.append("scrollable")
        if not self.enabled:
            parts.append("disabled")
        return " ".join(parts)


def _one_line(s: str) -> str:
    return " ".join(s.split())


_BOUNDS = re.compile(r"\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]\s*")


def _flag(node: ET.Element, name: str, default: bool = False) -> bool:
    value = node.get(name)
    return default if value is None else value.strip().lower() == "true"


def parse_xml(xml: str) -> list[Element]:
    """The elements of a ``uiautomator dump``, every node numbered 0.. in document order.

    Accepts the file as a device writes it (with or without the ``<?xml ...?>`` declaration, and with the
    "UI hierchary dumped to: ..." line that ``uiautomator dump /dev/tty`` appends). Malformed XML raises
    :class:`~vlui.errors.VluiError`.
    """
    if not isinstance(xml, str):
        raise VluiError(f"the UI XML must be text, not {type(xml).__name__}")
    return list(_parsed(xml))


@functools.lru_cache(maxsize=8)
def _parsed(xml: str) -> tuple[Element, ...]:
    """:func:`parse_xml`'s elements (frozen, so they are shared): a step's dump is read by its agent and by the
    rollout that records it, and parsing is most of an expert's step."""
    body = xml.strip()
    end = body.rfind("</hierarchy>")
    if end >= 0:  # drop anything a device printed after the document
        body = body[: end + len("</hierarchy>")]
    if body.startswith("<?xml"):  # the text is already decoded: its encoding declaration no longer applies
        close = body.find("?>")
        body = body[close + 2 :] if close >= 0 else body
    if not body.strip():
        raise VluiError("the UI XML is empty; is the device's uiautomator dump working?")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise VluiError(f"cannot parse the UI XML ({e}); expected a uiautomator dump") from None
    if root.tag not in ("hierarchy", "node"):
        raise VluiError(f"not a uiautomator dump: the root element is <{root.tag}>, expected <hierarchy>")
    nodes = list(root.iter("node"))
    position = {id(node): i for i, node in enumerate(nodes)}
    parent = {id(child): position.get(id(node), -1) for node in root.iter() for child in node}
    elements = []
    for i, node in enumerate(nodes):
        raw = node.get("bounds", "")
        m = _BOUNDS.fullmatch(raw)
        if m is None:
            raise VluiError(f"UI XML node {i} has malformed bounds {raw!r}; expected '[x1,y1][x2,y2]'")
        x1, y1, x2, y2 = (int(v) for v in m.groups())
        elements.append(Element(
            index=i,
            resource_id=node.get("resource-id", ""),
            cls=node.get("class", ""),
            text=node.get("text", ""),
            content_desc=node.get("content-desc", ""),
            package=node.get("package", ""),
            bounds=(x1, y1, x2, y2),
            clickable=_flag(node, "clickable"),
            checkable=_flag(node, "checkable"),
            checked=_flag(node, "checked"),
            scrollable=_flag(node, "scrollable"),
            selected=_flag(node, "selected"),
            enabled=_flag(node, "enabled", True),
            parent=parent.get(id(node), -1),
            focused=_flag(node, "focused"),
        ))
    return tuple(elements)


def describe(elements: Iterable[Element], with_bounds: bool = False, skip_empty: bool = True) -> str:
    """The numbered list the agent reads, one line per element: ``[3] android id title Network & internet``.

    ``with_bounds`` appends the pixel bounding box, `` (x1,y1,x2,y2)`` (B-MoCA offers it for elements such as
    sliders). ``skip_empty`` leaves out elements with nothing to say (no resource id, no text, no content
    description: bare layout containers). The lines that remain keep their numbers from :func:`parse_xml`, so the
    list may have gaps, and ``tap(n)`` always means the same element whatever is shown.
    """
    lines = []
    for e in elements:
        if skip_empty and not e.has_content:
            continue
        line = f"[{e.index}] {e.description}"
        if with_bounds:
            line += " ({},{},{},{})".format(*e.bounds)
        lines.append(line)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ actions
@dataclass(frozen=True, eq=False)
class TextAction:
    """A text action, parsed: the dual-gesture to perform, the command (``long_press``, ``type``: the extended
    options), or ``kind == "invalid"`` and why in ``error``.

    ``gesture`` is a read-only float32 array ``(touch_y, touch_x, lift_y, lift_x)`` in ``[-1, 1]``, or None.
    ``kind`` is one of "dual-gesture", "tap", "swipe", "press", "long_press", "type", "status", "open_app",
    "scroll", "wait", "keyboard_enter", "answer", "invalid".
    """

    gesture: np.ndarray | None
    kind: str
    error: str = ""
    command: Command | None = None

    @property
    def valid(self) -> bool:
        return self.kind != "invalid"

    @property
    def action(self) -> np.ndarray | Command | None:
        """What the environment steps with: the command, the gesture, or None when invalid."""
        return self.command if self.command is not None else self.gesture


def gesture_from_normalised(y1: float, x1: float, y2: float, x2: float) -> np.ndarray:
    """The dual-gesture for normalised screen positions in ``[0, 1]``: touch at (y1, x1), lift at (y2, x2).

    Returns float32 ``(touch_y, touch_x, lift_y, lift_x)`` in ``[-1, 1]`` (``a = 2 * p - 1``). Values outside
    ``[0, 1]`` or not finite raise ValueError.
    """
    p = np.array([y1, x1, y2, x2], dtype=np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError(f"normalised positions must be finite and in [0, 1], got {tuple(p.tolist())}")
    g = np.clip(2.0 * p - 1.0, -1.0, 1.0).astype(np.float32)
    g.setflags(write=False)
    return g


_OPTIONS = {"dual-gesture": "dual-gesture", "dual_gesture": "dual-gesture", "dualgesture": "dual-gesture",
            "dual gesture": "dual-gesture", "tap": "tap", "swipe": "swipe", "press": "press"}
_OPTION_LIST = ('tap(n), swipe("up"|"down"|"left"|"right"), press("HOME"|"BACK"|"OVERVIEW"), '
                'dual-gesture(y1, x1, y2, x2)')
_EXTENDED = {"long_press": "long_press", "long-press": "long_press", "longpress": "long_press",
             "long press": "long_press", "type": "type", "complete": "complete", "impossible": "impossible",
             "infeasible": "impossible", "open_app": "open_app", "scroll": "scroll", "wait": "wait",
             "keyboard_enter": "keyboard_enter", "answer": "answer"}
_EXTENDED_LIST = (_OPTION_LIST + ', long_press(n), type("text"), complete(), impossible(), open_app("name"), '
                  'scroll("up"|"down"|"left"|"right"[, n]), wait(), keyboard_enter(), answer("text")')
_CALL = re.compile(r"(?is)\A([a-z][a-z0-9_\- ]*?)\s*\((.*)\)\Z")
_ANY_CALL = re.compile(r"(?i)(?<![a-z0-9_])(dual[-_ ]?gesture|tap|swipe|press)\s*\(")
_ANY_EXTENDED_CALL = re.compile(
    r"(?i)(?<![a-z0-9_])(dual[-_ ]?gesture|tap|swipe|press|long[-_ ]?press|type|complete|impossible|infeasible"
    r"|open_app|scroll|wait|keyboard_enter|answer)\s*\(")
_FENCE = re.compile(r"(?s)\A```[^\n`]*\n?(.*?)\n?```\Z")
_LABEL = re.compile(r"(?i)\A(?:\*\*)?\s*(?:next\s+)?action\s*(?:\*\*)?\s*[:=\-]\s*(?:\*\*)?")
_QUOTES = "\"'\u2018\u2019\u201c\u201d`"
_INT = re.compile(r"[+-]?\d+")


def _invalid(error: str) -> TextAction:
    return TextAction(None, "invalid", error)


def _clean(action: str) -> str:
    """Strip what LLMs wrap an action in: whitespace, code fences, an "Action:" label, backticks, a final period."""
    s = action.strip()
    while True:
        before = s
        m = _FENCE.match(s)
        if m:
            s = m.group(1).strip()
        s = _LABEL.sub("", s, count=1).strip()
        if len(s) >= 2 and s[0] == s[-1] == "`":
            s = s.strip("`").strip()
        s = s.rstrip(".;").strip()
        if s == before:
            return s


def _unquote(arg: str) -> str:
    arg = arg.strip()
    if len(arg) >= 2 and arg[0] in _QUOTES and arg[-1] in _QUOTES:
        arg = arg[1:-1].strip()
    return arg


def app_names(locale_id: str) -> dict[str, str]:
    """The names ``open_app`` knows an app by, folded (:func:`_folded`), to the app's key: its label as the launcher
    shows it in the phone's language (``locale_id``) and in English."""
    names = {}
    for locale in ("en-US", locale_id):
        strings = get_locale(locale)
        names.update({_folded(strings.t(f"app.{key}")): key for key in apps()})
    return names


def _folded(name: str) -> str:
    return " ".join(name.casefold().split())


def parse_text_action(action: str, elements: Sequence[Element], screen_size: tuple[int, int],
                      extended: bool = False, apps_by_name: dict[str, str] | None = None) -> TextAction:
    """The dual-gesture for an LLM's text action, or an invalid :class:`TextAction` saying what is wrong.

    ``elements`` are the ones the agent was shown (from :func:`parse_xml`; ``tap(n)`` looks ``n`` up by
    :attr:`Element.index`), ``screen_size`` is ``(width, height)`` in pixels. The six options and their
    conversions follow B-MoCA:

    - ``dual-gesture(y1, x1, y2, x2)``: four normalised values in [0, 1], each rounded to two decimals;
    - ``tap(n)``: a tap (touch = lift) at the centre of element n's bounding box (clipped to the screen);
    - ``swipe("up"|"down"|"left"|"right")``: (0.8, 0.5, 0.2, 0.5), (0.2, 0.5, 0.8, 0.5), (0.5, 0.2, 0.5, 0.8),
      (0.5, 0.8, 0.5, 0.2);
    - ``press("BACK"|"HOME"|"OVERVIEW")``: a tap at (y, x) = (0.95, 0.22), (0.95, 0.50), (0.95, 0.78).

    With ``extended`` (``agent.actions=extended``), two options from GUIOdyssey's action space that no dual-gesture
    can say, and the end of an episode, each a :class:`~vlui.env.actions.Command`:

    - ``long_press(n)``: a touch held at the centre of element n (as ``tap(n)`` finds it);
    - ``type("text")``: the text typed into the field that has focus (printable ASCII, as ``adb shell input text``
      types; a JSON string literal's escapes are read);
    - ``complete()``, ``impossible()``: the agent declares its task done, or impossible on this phone (its COMPLETE
      and IMPOSSIBLE); the episode ends.

    and AndroidWorld's M3A actions:

    - ``open_app("name")``: the app named so (``apps_by_name``, from :func:`app_names`; English without it) started;
      an app of no such name is invalid;
    - ``scroll("d")``, ``scroll("d", n)``: the content moved to show what lies in direction d, as M3A scrolls: a swipe
      from the centre of the screen (of element n) to its edge opposite d (``scroll("down")`` swipes up);
    - ``wait()``: a step with no input; ``keyboard_enter()``: the keyboard's enter key;
    - ``answer("text")``: the agent's answer to the task, recorded; the episode ends.

    Tolerated: surrounding whitespace, a code fence or backticks, a leading "Action:" label, single, double or
    curly quotes (or none) around words, any letter case, spaces around commas and a final period. Anything else
    (several actions, unknown options, wrong arity, out-of-range values) is invalid.
    """
    width, height = screen_size
    if not (width > 0 and height > 0):
        raise ValueError(f"screen_size must be a positive (width, height), got {screen_size!r}")
    if not isinstance(action, str):
        return _invalid(f"the action must be text, not {type(action).__name__}")
    options = {**_OPTIONS, **_EXTENDED} if extended else _OPTIONS
    listed = _EXTENDED_LIST if extended else _OPTION_LIST
    s = _clean(action)
    if not s:
        return _invalid(f"empty action; expected one of {listed}")
    m = _CALL.match(s)
    name = " ".join(m.group(1).lower().split()) if m is not None else ""
    option = options.get(name) or options.get(name.replace(" ", ""))
    if option == "type":  # the text typed may hold anything, calls included
        return _type(m.group(2).strip())
    if option == "answer":
        return _answer(m.group(2).strip())
    calls = (_ANY_EXTENDED_CALL if extended else _ANY_CALL).findall(s)
    if len(calls) > 1:
        return _invalid(f"several actions in one answer ({', '.join(c.lower() for c in calls)}); give exactly one")
    if m is None:
        return _invalid(f"cannot read {_short(s)!r} as an action; expected one of {listed}")
    if option is None:
        return _invalid(f"unknown action option {m.group(1).strip()!r}; expected one of {listed}")
    body = m.group(2).strip()
    if option in STATUSES:
        if body:
            return _invalid(f"{option}() takes nothing; got {option}({_short(body)})")
        return TextAction(None, "status", command=Command.status(option))
    if option == "long_press":
        point = _element_point(body, elements, width, height, "long_press")
        if isinstance(point, TextAction):
            return point
        return TextAction(None, "long_press", command=Command.long_press(*point))
    if option in ("wait", "keyboard_enter"):
        if body:
            return _invalid(f"{option}() takes nothing; got {option}({_short(body)})")
        return TextAction(None, option, command=Command(option))
    if option == "open_app":
        return _open_app(body, apps_by_name)
    if option == "scroll":
        return _scroll(body, elements, width, height)
    if option == "dual-gesture":
        return _dual_gesture(body)
    if option == "tap":
        return _tap(body, elements, width, height)
    word = _unquote(body)
    if option == "swipe":
        direction = DIRECTIONS.get(word.lower())
        if direction is None:
            return _invalid(f"unknown swipe direction {word!r}; expected \"up\", \"down\", \"left\" or \"right\"")
        return TextAction(gesture_from_normalised(*direction), "swipe")
    point = KEYS.get(word.upper())
    if point is None:
        return _invalid(f"unknown key {word!r} for press; expected \"HOME\", \"BACK\" or \"OVERVIEW\"")
    return TextAction(gesture_from_normalised(*point, *point), "press")


def _short(s: str, n: int = 60) -> str:
    s = _one_line(s)
    return s if len(s) <= n else s[: n - 3] + "..."


def _dual_gesture(body: str) -> TextAction:
    if len(body) >= 2 and body[0] + body[-1] in ("[]", "()"):  # dual-gesture([y1, x1, y2, x2])
        body = body[1:-1]
    parts = [p.strip() for p in body.split(",")] if body.strip() else []
    if len(parts) != 4:
        return _invalid(f"dual-gesture takes 4 values (y1, x1, y2, x2), got {len(parts)}")
    values = []
    for p in parts:
        try:
            v = float(_unquote(p))
        except ValueError:
            return _invalid(f"dual-gesture value {p!r} is not a number")
        if not math.isfinite(v):
            return _invalid(f"dual-gesture value {p!r} is not a finite number")
        if not 0.0 <= v <= 1.0:
            return _invalid(f"dual-gesture value {p} is outside [0, 1]; use fractions of the screen")
        values.append(round(v, 2))
    return TextAction(gesture_from_normalised(*values), "dual-gesture")


def _type(body: str) -> TextAction:
    text = _literal(body)
    problem = typing_problem(text)
    if problem:
        return _invalid(problem)
    return TextAction(None, "type", command=Command.type_text(text))


def _literal(body: str) -> str:
    """An argument's text: unquoted, a JSON string literal's escapes read."""
    if body.startswith('"') and body.endswith('"') and len(body) >= 2:
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            pass
    return _unquote(body)


def _answer(body: str) -> TextAction:
    text = _literal(body)
    if not text.strip():
        return _invalid('answer needs the answer\'s text, e.g. answer("7:30")')
    if len(text) > MAX_ANSWER:
        return _invalid(f"an answer holds at most {MAX_ANSWER} characters, got {len(text)}")
    return TextAction(None, "answer", command=Command("answer", None, text))


def _open_app(body: str, apps_by_name: dict[str, str] | None) -> TextAction:
    name = _literal(body)
    known = apps_by_name if apps_by_name is not None else app_names("en-US")
    key = known.get(_folded(name))
    if key is None:
        return _invalid(f"no app named {_short(name)!r} on this phone; open_app takes an app's name as the launcher "
                        "shows it, e.g. open_app(\"Settings\")")
    return TextAction(None, "open_app", command=Command("open_app", None, key))


def _scroll(body: str, elements: Sequence[Element], width: int, height: int) -> TextAction:
    """M3A's scroll: from the centre of the screen, or of element n, to the edge of it opposite the direction."""
    word, _, index = (p.strip() for p in body.partition(","))
    direction = _unquote(word).lower()
    if direction not in DIRECTIONS:
        return _invalid(f"unknown scroll direction {_unquote(word)!r}; expected \"up\", \"down\", \"left\" or "
                        "\"right\"")
    x1, y1, x2, y2 = 0, 0, width, height
    if index:
        point = _element_point(index, elements, width, height, "scroll")
        if isinstance(point, TextAction):
            return point
        e = {e.index: e for e in elements}[int(_unquote(index).strip("[]"))]
        x1, y1, x2, y2 = max(e.bounds[0], 0), max(e.bounds[1], 0), min(e.bounds[2], width), min(e.bounds[3], height)
    cy, cx = (y1 + y2) / 2 / height, (x1 + x2) / 2 / width
    end = {"down": (y1 / height, cx), "up": (y2 / height, cx), "right": (cy, x1 / width), "left": (cy, x2 / width)}
    return TextAction(None, "scroll", command=Command.scroll((cy, cx), end[direction]))


def _tap(body: str, elements: Sequence[Element], width: int, height: int) -> TextAction:
    point = _element_point(body, elements, width, height, "tap")
    if isinstance(point, TextAction):
        return point
    return TextAction(gesture_from_normalised(*point, *point), "tap")


def _element_point(body: str, elements: Sequence[Element], width: int, height: int,
                   option: str) -> tuple[float, float] | TextAction:
    """The normalised (y, x) centre of the element ``body`` numbers (clipped to the screen), or why there is none."""
    arg = _unquote(body)
    if arg.startswith("[") and arg.endswith("]"):  # tap([3]), as the list shows numbers
        arg = arg[1:-1].strip()
    if not _INT.fullmatch(arg):
        return _invalid(f"{option} takes one element number, e.g. {option}(3); got {option}({_short(body)})")
    n = int(arg)
    by_index = {e.index: e for e in elements}
    element = by_index.get(n)
    if element is None:
        if not by_index:
            return _invalid(f"no element {n}: the screen lists no elements")
        return _invalid(f"no element {n}; element numbers run from {min(by_index)} to {max(by_index)}")
    x1, y1, x2, y2 = element.bounds
    if x2 <= x1 or y2 <= y1:
        return _invalid(f"element {n} has zero size (bounds {element.bounds}); it cannot be tapped")
    cx1, cy1, cx2, cy2 = max(x1, 0), max(y1, 0), min(x2, width), min(y2, height)
    if cx2 <= cx1 or cy2 <= cy1:
        return _invalid(f"element {n} lies outside the screen (bounds {element.bounds}); swipe to bring it into view")
    return (cy1 + cy2) / 2 / height, (cx1 + cx2) / 2 / width
