"""The prompts of the LLM and MLLM agents, and reading their answers.

The structure is B-MoCA's (Lee et al., 2024, App. C.1, Table 5): the agent's role, the action space (the six action
options as functions), the goal, optional few-shot examples (Table 6: instruction, observation, action, next
observation, reward of transitions from demonstrations), and the current observation: the numbered element list
(:func:`vlui.env.ui_text.describe`) and, for an MLLM, the screenshot (with the elements' numbers drawn on it under
set-of-mark prompting). Two things are optional beyond the paper: the previous steps (``history``) and, from
AndroidWorld's M3A (Rawles et al., 2024, Sec. 4.1.1), an answer as a reason and a JSON action (``answer="json"``)
and a reflection after each step, whose summary stands for that step in the history.

The answer's format is B-MoCA's chain of thought (``- Description: ... - Thought: ... - Action: <function call>``);
:func:`read_answer` takes the action from the last ``Action:`` line (or the whole answer when there is none, as a
model that answers with the call alone), and :func:`vlui.env.ui_text.parse_text_action` turns it into a gesture.

Images are named by content hash in the messages (``sha256:<hash>``, :data:`vlui.data.images.IMAGE_REF`): that is
how they are stored and cached; the endpoint gets them as PNG data URLs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vlui.data.images import IMAGE_REF

ANSWERS = ("bmoca", "json")

ROLE = ("You are an agent that is trained to perform daily tasks on digital devices, such as smartphones. You are "
        "given a goal of task instruction to accomplish and {observation}.")
SEES = {
    "text": "a description of screen from Android view hierarchy, which contains elements' numeric tag and "
            "description",
    "image": "a screenshot of the screen together with a description of screen from Android view hierarchy, which "
             "contains elements' numeric tag and description",
    "marks": "a screenshot of the screen, on which each listed UI element is outlined with a box labelled with its "
             "numeric tag, together with a description of screen from Android view hierarchy, which contains "
             "elements' numeric tag and description",
}
ACTION_SPACE = """\
Based on the goal of task instruction and UI elements list, you need to select an action option by calling one of \
the following functions to control the digital device:
1. dual-gesture(touch y: float, touch x: float, lift y: float, lift x: float): This function is used to operate a \
dual-gesture action. A dual-gesture comprises of four floating point numeric values, in between 0 and 1 indicating a \
normalized location of the screen in each of x-y coordinates. A dual-gesture action is interpreted as touching the \
screen at the location of (touch y, touch x) and lifting at the location of (lift y, lift x). The dual-gesture \
action indicates a tapping action if the touch and lift locations are identical but a swiping action if they differ. \
A simple use case is dual-gesture(0.5, 0.5, 0.5, 0.5) to tap the center of the screen.
2. tap(numeric tag: int): This function is used to tap an UI element shown on the digital device screen. "numeric \
tag" is a tag assigned to an UI element shown on the digital device screen. A simple use case can be tap(5), which \
taps the UI element labeled with the number 5.
3. swipe(direction: str): This function is used to swipe on the digital device screen, "direction" is a string that \
represents one of the four directions: up, down, left, right. "direction" must be wrapped with double quotation \
marks. A simple use case is swipe("up") which can be used to open the app list in the home screen.
4. press("HOME"): to press home button.
5. press("BACK"): to press back button.
6. press("OVERVIEW"): to press overview button."""
EXTENDED_ACTIONS = """
7. long_press(numeric tag: int): This function is used to touch and hold an UI element shown on the digital device \
screen, which opens its menu or selects it. A simple use case can be long_press(5), which touches and holds the UI \
element labeled with the number 5.
8. type(text: str): This function is used to type text into the text field that has focus (tap the field first). \
"text" is a string that must be wrapped with double quotation marks. A simple use case is type("hello").
9. complete(): This function is used to say that the task is done. The episode ends.
10. impossible(): This function is used to say that the task cannot be done on this device. The episode ends.
11. open_app(name: str): This function is used to open an app by its name as the launcher shows it, e.g. \
open_app("Settings").
12. scroll(direction: str, numeric tag: int): This function is used to scroll the screen, or the UI element with the \
numeric tag, to show what lies in that direction: "up", "down", "left" or "right". The tag may be left out to scroll \
the whole screen. A simple use case is scroll("down"), which shows what is below.
13. wait(): This function is used to wait for the screen to update.
14. keyboard_enter(): This function is used to press the keyboard's enter key (search, send).
15. answer(text: str): This function is used to answer the task's question: "text" is the answer, wrapped with double \
quotation marks. The episode ends."""
OUTPUT = {
    "bmoca": """\
Now, given the {given}, you need to think and call the function needed to proceed with the task. Your output \
should include three parts in the given format:
- Description: <Describe what you observe in the input>
- Thought: <To complete the given task, what is the next step I should do>
- Action: <The function call with the correct parameters to proceed with the task. You cannot output anything else \
except a function call>
You can only take one action at a time, so please directly call the function.
Please never take action beside options provided.""",
    "json": """\
Now, given the {given}, output an action from the above list in the correct JSON format, following the reason why \
you do that. Your answer should look like:
Reason: <why this action brings the task closer to done>
Action: {{"action_type": ...}}
where the action is one of: {{"action_type": "tap", "index": <numeric tag>}}, {{"action_type": "swipe", \
"direction": "up" | "down" | "left" | "right"}}, {{"action_type": "press", "button": "HOME" | "BACK" | "OVERVIEW"}}, \
{{"action_type": "dual-gesture", "touch": [<y>, <x>], "lift": [<y>, <x>]}}{extended}. Output exactly one action.""",
}
EXTENDED_JSON = (', {{"action_type": "long_press", "index": <numeric tag>}}, {{"action_type": "type", "text": '
                 '<text to type into the field that has focus>}}, {{"action_type": "status", "goal_status": '
                 '"complete" | "infeasible"}}, {{"action_type": "open_app", "app_name": <name>}}, {{"action_type": '
                 '"scroll", "direction": "up" | "down" | "left" | "right", "index": <optional numeric tag>}}, '
                 '{{"action_type": "wait"}}, {{"action_type": "keyboard_enter"}}, {{"action_type": "answer", '
                 '"text": <the answer>}}')
FEW_SHOT = """\
Below illustrates exemplary human demonstration(s), with format:
- Instruction: <The instruction of task>
- Observation: <An observation from environment>
- Action: <An action taken by the human expert>
- Next Observation: <The next observation from environment after the action is taken>
- Reward: <A reward after action is executed>."""
REFLECT = """\
You have just taken one action on the phone towards the goal. Below are the screen before the action, the action \
with the reason you gave for it, and the screen after it. Give a concise summary of this step in two or three \
sentences: the action you intended, whether it worked (did the screen change as intended?), a likely reason if it \
did not, and what to do next. Answer with the summary only."""


@dataclass(frozen=True)
class Style:
    """How the prompt reads: the answer's format (:data:`ANSWERS`), whether it holds screenshots and whether they
    carry the elements' numbers (set-of-mark)."""

    answer: str = "bmoca"
    image: bool = False
    marks: bool = False
    # "bmoca": the paper's six options | "extended": and long_press(n), type("text"), complete(), impossible()
    actions: str = "bmoca"

    @property
    def extended(self) -> bool:
        return self.actions == "extended"

    @property
    def sees(self) -> str:
        return SEES["marks" if self.marks else "image" if self.image else "text"]

    @property
    def given(self) -> str:
        return "screenshot and the parsed uiautomator xml" if self.image else "parsed uiautomator xml"


@dataclass(frozen=True)
class Screen:
    """A screen as a prompt shows it: the numbered element list and, for an MLLM, its screenshot's content hash."""

    elements: str
    image: str | None = None


@dataclass(frozen=True)
class Example:
    """A few-shot example: one transition of a demonstration (Table 6)."""

    instruction: str
    before: Screen
    action: str
    after: Screen
    reward: float


@dataclass(frozen=True)
class Reading:
    """What an answer says: the action as a text action option (None when no action can be read, and why in
    ``error``) and the reasoning before it."""

    action: str | None
    reasoning: str = ""
    error: str = ""


class _Content:
    """A message's content built part by part: text runs merged, images as ``image_url`` parts named by hash."""

    def __init__(self, image: bool) -> None:
        self.image, self.parts, self.text = image, [], []

    def say(self, text: str) -> None:
        self.text.append(text)

    def show(self, screen: Screen) -> None:
        self.say(screen.elements or "(no UI elements)")
        if self.image and screen.image:
            self._flush()
            self.parts.append({"type": "image_url", "image_url": {"url": IMAGE_REF + screen.image}})

    def _flush(self) -> None:
        if self.text:
            self.parts.append({"type": "text", "text": "\n".join(self.text)})
            self.text = []

    def content(self) -> str | list[dict[str, Any]]:
        if not self.image:  # an LLM gets plain text, as every OpenAI-compatible server takes it
            return "\n".join(self.text)
        self._flush()
        return self.parts


def system_message(style: Style) -> dict[str, Any]:
    """The role and the action space."""
    space = ACTION_SPACE + (EXTENDED_ACTIONS if style.extended else "")
    return {"role": "system", "content": ROLE.format(observation=style.sees) + "\n" + space}


def step_messages(style: Style, goal: str, screen: Screen, examples: Sequence[Example] = (),
                  history: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The request for one step: the role and action space, then the goal, the few-shot examples, the previous
    steps (oldest first), the current observation and the output format."""
    c = _Content(style.image)
    c.say(f"Goal: {goal}.")
    if examples:
        c.say(FEW_SHOT)
        for e in examples:
            c.say(f"- Instruction: {e.instruction}\n- Observation:")
            c.show(e.before)
            c.say(f"- Action: {e.action}\n- Next Observation:")
            c.show(e.after)
            c.say(f"- Reward: {e.reward:g}")
    if history:
        c.say("Previous steps (oldest first):\n" + "\n".join(f"{i}. {h}" for i, h in enumerate(history, 1)))
    c.say("Observation:")
    c.show(screen)
    extended = EXTENDED_JSON.format() if style.extended else ""
    c.say(OUTPUT[style.answer].format(given=style.given, extended=extended))
    return [system_message(style), {"role": "user", "content": c.content()}]


def reflection_messages(style: Style, goal: str, before: Screen, action: str, reasoning: str,
                        after: Screen) -> list[dict[str, Any]]:
    """The request for the reflection on a step (M3A): the goal, the screens before and after, the action and its
    reason; the answer is a summary that stands for the step in the history."""
    c = _Content(style.image)
    c.say(f"Goal: {goal}.\n{REFLECT}\nScreen before the action:")
    c.show(before)
    c.say(f"Action: {action}\nReason given: {reasoning or '(none)'}\nScreen after the action:")
    c.show(after)
    return [system_message(style), {"role": "user", "content": c.content()}]


# ------------------------------------------------------------------------------------------------------ answers
_ACTION_LINE = re.compile(r"(?im)^[ \t>*#\-]*(?:\*\*)?\s*action\s*(?:\*\*)?\s*:\s*(?:\*\*)?")
_REASON = re.compile(r"(?is)\A\s*(?:[-*]\s*)?(?:reason|thought)\s*:\s*")


def read_answer(text: str, answer: str = "bmoca") -> Reading:
    """The action an answer gives: after its last ``Action:`` label (B-MoCA's ``- Action: tap(5)``, M3A's
    ``Action: {"action_type": ...}``), or the whole answer when it has none; for ``answer="json"`` the JSON action
    becomes the text action option it stands for (:func:`option_from_json`)."""
    labels = list(_ACTION_LINE.finditer(text))
    if labels:
        reasoning, action = text[: labels[-1].start()].strip(), text[labels[-1].end():].strip()
    else:
        reasoning, action = "", text.strip()
    if answer != "json":
        return Reading(action, reasoning)
    reasoning = _REASON.sub("", reasoning)
    start, end = action.find("{"), action.rfind("}")
    if start < 0 or end < start:
        return Reading(None, reasoning, f"no JSON action in {_short(action)!r}; expected Action: {{\"action_type\": ...}}")
    try:
        obj = json.loads(action[start:end + 1])
    except json.JSONDecodeError as err:
        return Reading(None, reasoning, f"the JSON action {_short(action[start:end + 1])!r} is not valid JSON "
                                        f"({err.msg})")
    option, error = option_from_json(obj)
    return Reading(option, reasoning, error)


_BUTTONS = {"navigate_home": "HOME", "navigate_back": "BACK", "home": "HOME", "back": "BACK"}


def option_from_json(obj: Any) -> tuple[str | None, str]:
    """The text action option a JSON action stands for (``{"action_type": "tap", "index": 3}`` -> ``tap(3)``), or
    None and why not. M3A's ``navigate_home`` and ``navigate_back`` are the HOME and BACK presses."""
    if not isinstance(obj, dict):
        return None, "the JSON action must be an object with an action_type"
    kind = str(obj.get("action_type", "")).strip().lower().replace("_", "-")
    if kind in ("tap", "click"):
        index = obj.get("index")
        if isinstance(index, bool) or not isinstance(index, (int, str)):
            return None, f"a tap needs an integer index, not {index!r}"
        return f"tap({index})", ""
    if kind == "swipe":
        return f'swipe("{obj.get("direction", "")}")', ""
    if kind == "press":
        return f'press("{obj.get("button", "")}")', ""
    if kind.replace("-", "_") in _BUTTONS:
        return f'press("{_BUTTONS[kind.replace("-", "_")]}")', ""
    if kind in ("long-press", "longpress"):
        index = obj.get("index")
        if isinstance(index, bool) or not isinstance(index, (int, str)):
            return None, f"a long press needs an integer index, not {index!r}"
        return f"long_press({index})", ""
    if kind in ("type", "input-text"):
        if "index" in obj:
            return None, "type the text into the field that has focus, with no index: tap the field first"
        text = obj.get("text")
        if not isinstance(text, str):
            return None, f"a type action needs text, not {text!r}"
        return f"type({json.dumps(text)})", ""
    if kind == "status":
        goal = str(obj.get("goal_status", "")).strip().lower()
        if goal not in ("complete", "infeasible", "impossible"):
            return None, f"a status action's goal_status is \"complete\" or \"infeasible\", not {obj.get('goal_status')!r}"
        return ("complete()" if goal == "complete" else "impossible()"), ""
    if kind in ("complete", "impossible", "infeasible"):
        return ("complete()" if kind == "complete" else "impossible()"), ""
    if kind == "open-app":
        name = obj.get("app_name")
        if not isinstance(name, str) or not name.strip():
            return None, f"an open_app action needs an app_name, not {name!r}"
        return f"open_app({json.dumps(name)})", ""
    if kind == "scroll":
        direction, index = obj.get("direction"), obj.get("index")
        if not isinstance(direction, str):
            return None, f"a scroll needs a direction (up, down, left or right), not {direction!r}"
        if index is None:
            return f"scroll({json.dumps(direction)})", ""
        if isinstance(index, bool) or not isinstance(index, (int, str)):
            return None, f"a scroll's index is an integer, not {index!r}"
        return f"scroll({json.dumps(direction)}, {index})", ""
    if kind in ("wait", "keyboard-enter"):
        return f"{kind.replace('-', '_')}()", ""
    if kind == "answer":
        text = obj.get("text")
        if not isinstance(text, str):
            return None, f"an answer action needs text, not {text!r}"
        return f"answer({json.dumps(text)})", ""
    if kind in ("dual-gesture", "dualgesture"):
        touch, lift = obj.get("touch"), obj.get("lift")
        if not (isinstance(touch, list) and isinstance(lift, list) and len(touch) == len(lift) == 2):
            return None, "a dual-gesture needs touch: [y, x] and lift: [y, x]"
        return "dual-gesture({}, {}, {}, {})".format(*touch, *lift), ""
    return None, (f"unknown action_type {obj.get('action_type')!r}; expected tap, swipe, press or dual-gesture "
                  "(long_press, type, status, open_app, scroll, wait, keyboard_enter and answer with "
                  "agent.actions=extended)")


def _short(s: str, n: int = 60) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."
