"""Text observations and actions for LLM agents (B-MoCA Appendix A.1): the XML parser, the numbered element list,
and the six text action options converted to dual-gesture actions, checked against the simulated phone."""

from __future__ import annotations

import numpy as np
import pytest

from vlui.env.ui_text import (
    ACTION_HELP,
    Element,
    TextAction,
    app_names,
    describe,
    gesture_from_normalised,
    parse_text_action,
    parse_xml,
)
from vlui.env.actions import ActionParser, Command, ParsedAction
from vlui.errors import VluiError
from vlui.sim.phone import SimDevice
from vlui.sim.ui import Node

SIZE = (1080, 2160)


# ------------------------------------------------------------------------------------------------ helpers
def _open_drawer(dev: SimDevice) -> None:
    w, h = dev.size
    dev.swipe(w / 2, h * 0.7, w / 2, h * 0.2)


def _settings_icon(dev: SimDevice) -> Node | None:
    label = dev.locale.t("app.settings")
    return next((n for n in dev.frame().walk() if n.desc == label and n.on_tap is not None), None)


def _show_settings_icon(dev: SimDevice) -> Node:
    node = _settings_icon(dev)
    if node is None:
        _open_drawer(dev)
        node = _settings_icon(dev)
    assert node is not None
    return node


def _open_settings(dev: SimDevice) -> None:
    x1, y1, x2, y2 = _show_settings_icon(dev).bounds
    dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
    assert dev.state.top == "settings"


def _pixels(g: np.ndarray, size: tuple[int, int]) -> tuple[float, float, float, float]:
    """(touch_x, touch_y, lift_x, lift_y) in pixels for a dual-gesture."""
    w, h = size
    p = (g.astype(np.float64) + 1) / 2
    return p[1] * w, p[0] * h, p[3] * w, p[2] * h


@pytest.fixture(scope="module")
def home_xml() -> str:
    return SimDevice("000").ui_xml()


@pytest.fixture(scope="module")
def settings_xml() -> str:
    dev = SimDevice("000")
    _open_settings(dev)
    return dev.ui_xml()


@pytest.fixture(scope="module")
def home(home_xml: str) -> list[Element]:
    return parse_xml(home_xml)


def _elements(n: int = 5) -> list[Element]:
    return [Element(index=i, resource_id=f"app:id/row_{i}", text=f"Row {i}", bounds=(0, 100 * i, 1080, 100 * i + 100))
            for i in range(n)]


# ------------------------------------------------------------------------------------------------ parse_xml
@pytest.mark.parametrize("screen", ["home", "settings"])
def test_parse_xml_numbers_every_node_in_document_order(screen: str, home_xml: str, settings_xml: str) -> None:
    xml = home_xml if screen == "home" else settings_xml
    elements = parse_xml(xml)
    assert len(elements) == xml.count("<node ")
    assert [e.index for e in elements] == list(range(len(elements)))
    # the first node is the window itself, containers are kept (not only leaves)
    assert elements[0].bounds == (0, 0, *SIZE)
    assert any(e.resource_id == "android:id/content" for e in elements)


def test_parse_xml_weather_description(home: list[Element]) -> None:
    weather = [e for e in home if "weather" in e.resource_id]
    assert len(weather) == 1
    d = weather[0].description
    assert d.startswith("com.google.android.apps.nexuslauncher id title weather text")
    assert "title weather text" in d and "Sunny" in d


def test_parse_xml_attributes(home: list[Element]) -> None:
    gmail = next(e for e in home if e.text == "Gmail")
    assert gmail.clickable and gmail.enabled and not gmail.checkable
    assert gmail.cls == "android.widget.TextView"
    assert gmail.package == "com.google.android.apps.nexuslauncher"
    x1, y1, x2, y2 = gmail.bounds
    assert 0 <= x1 < x2 <= SIZE[0] and 0 <= y1 < y2 <= SIZE[1]
    assert gmail.description == "TextView Gmail"  # no id: the class's short name; desc == text is not repeated
    assert not gmail.focused
    field = '<hierarchy><node class="android.widget.EditText" focused="true" bounds="[0,0][10,10]"/></hierarchy>'
    assert parse_xml(field)[0].focused  # the field the keyboard types into


def test_parse_xml_settings_rows(settings_xml: str) -> None:
    elements = parse_xml(settings_xml)
    titles = [e.text for e in elements if e.resource_id == "android:id/title"]
    assert "Network & internet" in titles and len(titles) >= 5
    descriptions = [e.description for e in elements]
    for title in titles:
        assert any(title in d for d in descriptions), title
    text = describe(elements)
    assert all(title in text for title in titles)


def test_parse_xml_keeps_each_nodes_parent(settings_xml: str) -> None:
    elements = parse_xml(settings_xml)
    assert elements[0].parent == -1 and all(0 <= e.parent < e.index for e in elements[1:])
    title = next(e for e in elements if e.text == "Network & internet")
    row = elements[title.parent]  # the clickable row that holds the title and the summary
    assert row.clickable and not row.text and elements[title.index + 1].parent == row.index


def test_parse_xml_tolerates_declaration_and_trailer(home_xml: str) -> None:
    body = home_xml.split("?>", 1)[1]
    assert len(parse_xml(body)) == len(parse_xml(home_xml))
    trailer = home_xml + "UI hierchary dumped to: /dev/tty\n"
    assert len(parse_xml(trailer)) == len(parse_xml(home_xml))


@pytest.mark.parametrize("xml", [
    "",
    "not xml at all",
    "<hierarchy><node bounds='[0,0][1,1]'></hierarchy>",
    "<?xml version='1.0' ?><hierarchy><node",
    "<html><body/></html>",
    "<hierarchy><node bounds='0,0,1,1' /></hierarchy>",
])
def test_parse_xml_malformed_raises_vlui_error(xml: str) -> None:
    with pytest.raises(VluiError) as info:
        parse_xml(xml)
    message = str(info.value)
    assert message and "\n" not in message


def test_description_state_words() -> None:
    switch = Element(index=0, resource_id="android:id/switch_widget", cls="android.widget.Switch",
                     checkable=True, checked=True)
    assert switch.description == "android id switch widget checked"
    off = Element(index=1, cls="android.widget.CheckBox", text="Wi-Fi", checkable=True, selected=True, enabled=False)
    assert off.description == "CheckBox Wi-Fi unchecked selected disabled"
    desc = Element(index=2, cls="android.widget.ImageButton", content_desc="Navigate up", text="")
    assert desc.description == "ImageButton Navigate up"
    multi = Element(index=3, cls="android.widget.TextView", text="two\nlines", content_desc="other")
    assert multi.description == "TextView two lines other"


# ------------------------------------------------------------------------------------------------ describe
def test_describe_numbering_and_bounds(home: list[Element]) -> None:
    lines = describe(home).splitlines()
    weather = next(e for e in home if "weather" in e.resource_id)
    assert f"[{weather.index}] {weather.description}" in lines
    for line in lines:
        n = int(line[1:line.index("]")])
        assert line == f"[{n}] {home[n].description}"
    with_bounds = describe(home, with_bounds=True).splitlines()
    assert len(with_bounds) == len(lines)
    x1, y1, x2, y2 = weather.bounds
    assert f"[{weather.index}] {weather.description} ({x1},{y1},{x2},{y2})" in with_bounds


def test_describe_skip_empty_keeps_numbers() -> None:
    elements = [
        Element(index=0, cls="android.widget.FrameLayout", bounds=(0, 0, 10, 10)),
        Element(index=1, cls="android.widget.TextView", text="Hello", bounds=(0, 0, 10, 10)),
        Element(index=2, cls="android.widget.LinearLayout", bounds=(0, 0, 10, 10)),
        Element(index=3, resource_id="app:id/ok", cls="android.widget.Button", bounds=(0, 0, 10, 10)),
    ]
    assert describe(elements) == "[1] TextView Hello\n[3] app id ok"
    full = describe(elements, skip_empty=False).splitlines()
    assert [line.split("]")[0] for line in full] == ["[0", "[1", "[2", "[3"]
    assert full[0] == "[0] FrameLayout"
    assert describe(elements, with_bounds=True).splitlines()[0] == "[1] TextView Hello (0,0,10,10)"


def test_describe_home_skips_bare_containers(home: list[Element]) -> None:
    shown = {int(line[1:line.index("]")]) for line in describe(home).splitlines()}
    assert 0 not in shown  # the window's FrameLayout has no id, text or description
    assert shown == {e.index for e in home if e.has_content}
    assert len(describe(home, skip_empty=False).splitlines()) == len(home)


def test_action_help_names_all_options() -> None:
    for option in ["tap(", "swipe(", 'press("HOME")', 'press("BACK")', 'press("OVERVIEW")', "dual-gesture("]:
        assert option in ACTION_HELP


# ------------------------------------------------------------------------------------------------ actions
@pytest.mark.parametrize("direction,expected", [
    ("up", (0.8, 0.5, 0.2, 0.5)),
    ("down", (0.2, 0.5, 0.8, 0.5)),
    ("left", (0.5, 0.2, 0.5, 0.8)),
    ("right", (0.5, 0.8, 0.5, 0.2)),
])
def test_swipe_conversions(direction: str, expected: tuple[float, ...]) -> None:
    a = parse_text_action(f'swipe("{direction}")', [], SIZE)
    assert a.kind == "swipe" and a.error == "" and a.valid
    assert a.gesture.dtype == np.float32 and a.gesture.shape == (4,)
    np.testing.assert_array_equal(a.gesture, gesture_from_normalised(*expected))
    np.testing.assert_allclose((a.gesture + 1) / 2, expected, atol=1e-6)


@pytest.mark.parametrize("key,point", [("BACK", (0.95, 0.22)), ("HOME", (0.95, 0.50)), ("OVERVIEW", (0.95, 0.78))])
def test_press_conversions(key: str, point: tuple[float, float]) -> None:
    a = parse_text_action(f'press("{key}")', [], SIZE)
    assert a.kind == "press" and a.error == ""
    np.testing.assert_array_equal(a.gesture, gesture_from_normalised(*point, *point))
    np.testing.assert_array_equal(a.gesture[:2], a.gesture[2:])  # a tap: touch == lift
    np.testing.assert_allclose((a.gesture[:2] + 1) / 2, point, atol=1e-6)


def test_dual_gesture_values_and_rounding() -> None:
    a = parse_text_action("dual-gesture(0.1, 0.2, 0.9, 0.8)", [], SIZE)
    assert a.kind == "dual-gesture"
    np.testing.assert_array_equal(a.gesture, gesture_from_normalised(0.1, 0.2, 0.9, 0.8))
    r = parse_text_action("dual-gesture(0.123, 0.456, 0.999, 0.004)", [], SIZE)
    np.testing.assert_array_equal(r.gesture, gesture_from_normalised(0.12, 0.46, 1.0, 0.0))
    np.testing.assert_allclose((r.gesture + 1) / 2, [0.12, 0.46, 1.0, 0.0], atol=1e-6)
    edges = parse_text_action("dual-gesture(0, 1, 1, 0)", [], SIZE)
    np.testing.assert_array_equal(edges.gesture, np.array([-1, 1, 1, -1], dtype=np.float32))


def test_tap_hits_element_centre(home: list[Element]) -> None:
    for e in home:
        x1, y1, x2, y2 = e.bounds
        if x2 <= x1 or y2 <= y1:
            continue
        a = parse_text_action(f"tap({e.index})", home, SIZE)
        assert a.kind == "tap", a.error
        assert a.gesture.dtype == np.float32 and np.all(np.abs(a.gesture) <= 1)
        tx, ty, lx, ly = _pixels(a.gesture, SIZE)
        assert (tx, ty) == pytest.approx((lx, ly))
        assert x1 <= tx < x2 and y1 <= ty < y2
        assert (tx, ty) == pytest.approx(e.center, abs=0.01)


def test_tap_opens_settings_on_the_phone() -> None:
    dev = SimDevice("000")
    _show_settings_icon(dev)  # home screen, or the app drawer where the icon is not on it
    elements = parse_xml(dev.ui_xml())
    label = dev.locale.t("app.settings")
    target = next(e for e in elements if e.content_desc == label and e.clickable)
    a = parse_text_action(f"tap({target.index})", elements, dev.size)
    assert a.kind == "tap"
    px, py, _, _ = _pixels(a.gesture, dev.size)
    dev.tap(px, py)
    assert dev.state.top == "settings"


def test_press_home_and_swipe_work_on_the_phone() -> None:
    dev = SimDevice("000")
    _open_settings(dev)
    a = parse_text_action('press("HOME")', [], dev.size)
    px, py, _, _ = _pixels(a.gesture, dev.size)
    dev.tap(px, py)
    assert dev.state.top is None
    up = parse_text_action('swipe("up")', [], dev.size)
    dev.swipe(*_pixels(up.gesture, dev.size))
    assert dev.state.drawer  # swiping up on the home screen opens the app drawer


def test_tap_looks_up_element_index() -> None:
    shown = [Element(index=7, text="Seven", bounds=(100, 200, 300, 400))]
    a = parse_text_action("tap(7)", shown, SIZE)
    assert a.kind == "tap"
    np.testing.assert_allclose(_pixels(a.gesture, SIZE), (200, 300, 200, 300), atol=0.05)
    assert parse_text_action("tap(0)", shown, SIZE).kind == "invalid"


def test_tap_clips_to_screen() -> None:
    partly = [Element(index=0, bounds=(-100, 2000, 200, 2400))]
    tx, ty, _, _ = _pixels(parse_text_action("tap(0)", partly, SIZE).gesture, SIZE)
    assert 0 <= tx < 200 and 2000 <= ty < 2160
    off = [Element(index=0, bounds=(0, 2200, 100, 2300))]
    a = parse_text_action("tap(0)", off, SIZE)
    assert a.kind == "invalid" and "screen" in a.error


ELEMENTS = _elements() + [Element(index=5, text="empty", bounds=(10, 10, 10, 50))]


@pytest.mark.parametrize("action", [
    "",
    "   ",
    "hello world",
    "I think we should open the settings app",
    "click(3)",
    "type('hello')",
    "press()",
    'press("MENU")',
    'press("HOMEPAGE")',
    'swipe("diagonal")',
    "swipe()",
    "tap()",
    "tap(3, 4)",
    "tap(3.5)",
    "tap(abc)",
    "tap(99)",
    "tap(-1)",
    "tap(5)",  # zero-size bounds
    "dual-gesture(0.1, 0.2, 0.3)",
    "dual-gesture(0.1, 0.2, 0.3, 0.4, 0.5)",
    "dual-gesture()",
    "dual-gesture(0.1, 0.2, 0.3, 1.5)",
    "dual-gesture(-0.1, 0.2, 0.3, 0.4)",
    "dual-gesture(nan, 0.2, 0.3, 0.4)",
    "dual-gesture(0.1, inf, 0.3, 0.4)",
    "dual-gesture(0.1, a, 0.3, 0.4)",
    "tap(3) tap(4)",
    "tap(3)\npress(\"HOME\")",
    'swipe("up"); swipe("down")',
    "tap(3",
    "tap 3",
])
def test_malformed_actions_are_invalid(action: str) -> None:
    a = parse_text_action(action, ELEMENTS, SIZE)
    assert isinstance(a, TextAction)
    assert a.kind == "invalid" and a.gesture is None and not a.valid
    assert a.error and "\n" not in a.error


@pytest.mark.parametrize("action,kind,expected", [
    ("```\ntap(3)\n```", "tap", "tap(3)"),
    ("```python\ntap(3)\n```", "tap", "tap(3)"),
    ("Action: tap(3)", "tap", "tap(3)"),
    ("action:tap(3)", "tap", "tap(3)"),
    ("  tap(3)  \n", "tap", "tap(3)"),
    ("`tap(3)`", "tap", "tap(3)"),
    ("TAP( 3 )", "tap", "tap(3)"),
    ("tap(3).", "tap", "tap(3)"),
    ("press('back')", "press", 'press("BACK")'),
    ("press(back)", "press", 'press("BACK")'),
    ("Press(\u201cHome\u201d)", "press", 'press("HOME")'),
    ('swipe( "UP" )', "swipe", 'swipe("up")'),
    ("swipe('Left')", "swipe", 'swipe("left")'),
    ("Action: ```swipe(\"down\")```", "swipe", 'swipe("down")'),
    ("dual-gesture( 0.1 ,0.2 , 0.3,0.4 )", "dual-gesture", "dual-gesture(0.1, 0.2, 0.3, 0.4)"),
    ("Dual_Gesture(0.1, 0.2, 0.3, 0.4).", "dual-gesture", "dual-gesture(0.1, 0.2, 0.3, 0.4)"),
    ("dual-gesture([0.1, 0.2, 0.3, 0.4])", "dual-gesture", "dual-gesture(0.1, 0.2, 0.3, 0.4)"),
])
def test_tolerated_formats(action: str, kind: str, expected: str) -> None:
    a = parse_text_action(action, ELEMENTS, SIZE)
    assert a.kind == kind, a.error
    np.testing.assert_array_equal(a.gesture, parse_text_action(expected, ELEMENTS, SIZE).gesture)


def test_gesture_is_read_only() -> None:
    a = parse_text_action("tap(1)", ELEMENTS, SIZE)
    with pytest.raises(ValueError):
        a.gesture[0] = 0.0


def test_gesture_from_normalised_round_trip() -> None:
    rng = np.random.default_rng(0)
    for p in rng.random((200, 4)):
        g = gesture_from_normalised(*p)
        assert g.dtype == np.float32 and g.shape == (4,)
        assert np.all(g >= -1) and np.all(g <= 1)
        np.testing.assert_allclose((g.astype(np.float64) + 1) / 2, p, atol=1e-6)
    np.testing.assert_array_equal(gesture_from_normalised(0, 0.5, 1, 1), np.array([-1, 0, 1, 1], dtype=np.float32))


@pytest.mark.parametrize("values", [(-0.1, 0, 0, 0), (0, 1.1, 0, 0), (0, 0, float("nan"), 0)])
def test_gesture_from_normalised_rejects_out_of_range(values: tuple[float, ...]) -> None:
    with pytest.raises(ValueError):
        gesture_from_normalised(*values)


# ------------------------------------------------------------------------------------- the extended options
def test_long_press_and_type_are_options_only_when_extended() -> None:
    shown = [Element(index=7, text="Seven", bounds=(100, 200, 300, 400))]
    for action in ("long_press(7)", 'type("hello")'):
        a = parse_text_action(action, shown, SIZE)
        assert a.kind == "invalid" and "unknown action option" in a.error and a.action is None
    press = parse_text_action("long_press(7)", shown, SIZE, extended=True)
    assert press.kind == "long_press" and press.gesture is None
    assert press.action == Command.long_press(300 / 2160, 200 / 1080)
    typed = parse_text_action('type("hello")', shown, SIZE, extended=True)
    assert typed.kind == "type" and typed.action == Command.type_text("hello")
    for action, status in (("complete()", "complete"), ("impossible()", "impossible"), ("Infeasible( )", "impossible")):
        said = parse_text_action(action, shown, SIZE, extended=True)
        assert said.kind == "status" and said.action == Command.status(status)
        assert "unknown action option" in parse_text_action(action, shown, SIZE).error
    # the six options read as before
    assert parse_text_action("tap(7)", shown, SIZE, extended=True).kind == "tap"


@pytest.mark.parametrize("action, text", [
    ('type("call me (now), tap(3)")', "call me (now), tap(3)"),  # the text may hold anything, calls included
    ('type("say \\"hi\\"")', 'say "hi"'),  # a JSON string literal's escapes are read
    ("type('single quotes')", "single quotes"),
    ('Action: type("12:30")', "12:30"),
    ("TYPE(911)", "911"),
])
def test_type_reads_the_text_as_written(action: str, text: str) -> None:
    a = parse_text_action(action, [], SIZE, extended=True)
    assert a.kind == "type" and a.command.text == text


@pytest.mark.parametrize("action, error", [
    ('type("")', "needs some text"),
    ('type("日本")', "printable ASCII only"),
    ('type("' + "x" * 501 + '")', "at most 500 characters"),
    ("long_press(9)", "no element 9"),
    ("long_press(first)", "long_press takes one element number"),
    ("long_press(7) tap(7)", "several actions"),
    ("complete(yes)", "complete() takes nothing"),
    ("tap(7) complete()", "several actions"),
    # AndroidWorld's M3A options
    ('open_app("Frobnicator")', "no app named 'Frobnicator'"),
    ("open_app()", "no app named ''"),
    ('scroll("sideways")', "unknown scroll direction 'sideways'"),
    ("scroll()", "unknown scroll direction ''"),
    ('scroll("down", 9)', "no element 9"),
    ('scroll("down", first)', "scroll takes one element number"),
    ("wait(5)", "wait() takes nothing"),
    ("keyboard_enter(1)", "keyboard_enter() takes nothing"),
    ('answer("")', "answer needs the answer's text"),
    ("wait() keyboard_enter()", "several actions"),
])
def test_malformed_extended_options_are_invalid(action: str, error: str) -> None:
    shown = [Element(index=7, text="Seven", bounds=(100, 200, 300, 400))]
    a = parse_text_action(action, shown, SIZE, extended=True)
    assert a.kind == "invalid" and error in a.error and a.action is None


# ------------------------------------------------------------------------------------- AndroidWorld's M3A options
def test_m3a_options_are_options_only_when_extended() -> None:
    for action in ('open_app("Clock")', 'scroll("down")', "wait()", "keyboard_enter()", 'answer("7:30")'):
        a = parse_text_action(action, [], SIZE)
        assert a.kind == "invalid" and "unknown action option" in a.error and a.action is None


@pytest.mark.parametrize("name, locale, app", [
    ("Settings", "en-US", "settings"),
    ("play music", "en-US", "play_music"),  # any letter case and spacing
    ("设置", "zh-hans-CN", "settings"),  # as the launcher shows it in the phone's language
    ("Settings", "zh-hans-CN", "settings"),  # and by its English name
    ("Calculator", "en-US", "calculator"),
])
def test_open_app_finds_the_app_by_its_launcher_label(name: str, locale: str, app: str) -> None:
    a = parse_text_action(f'open_app("{name}")', [], SIZE, extended=True, apps_by_name=app_names(locale))
    assert a.kind == "open_app" and a.action == Command("open_app", None, app)


def test_scroll_swipes_from_the_middle_of_the_screen_or_an_element_to_its_far_edge() -> None:
    shown = [Element(index=4, scrollable=True, bounds=(0, 540, 1080, 1620))]
    (ty, tx), (ly, lx) = _scroll('scroll("down")', shown)
    assert (ty, tx, ly, lx) == (0.5, 0.5, 0.0, 0.5)  # down shows what is below: the finger moves up
    assert _scroll('scroll("up", 4)', shown) == ((0.5, 0.5), (0.75, 0.5))  # within element 4's bounds
    assert _scroll('scroll("down", 4)', shown) == ((0.5, 0.5), (0.25, 0.5))
    assert _scroll('scroll("right", 4)', shown) == ((0.5, 0.5), (0.5, 0.0))
    assert _scroll("scroll(left, 4)", shown) == ((0.5, 0.5), (0.5, 1.0))


def _scroll(action: str, shown: list[Element]) -> tuple:
    a = parse_text_action(action, shown, SIZE, extended=True)
    assert a.kind == "scroll", a.error
    parsed = ActionParser().parse(a.action)  # a swipe, however short the element
    assert parsed.kind == "swipe"
    return parsed.touch, parsed.lift


def test_wait_keyboard_enter_and_answer_read_as_written() -> None:
    assert parse_text_action("wait()", [], SIZE, extended=True).action == Command("wait")
    enter = parse_text_action("Action: keyboard_enter()", [], SIZE, extended=True).action
    assert ActionParser().parse(enter) == ParsedAction("key", None, None, "ENTER")
    answer = parse_text_action('answer("It is 7:30, tap(3) said so")', [], SIZE, extended=True)
    assert answer.kind == "answer" and answer.action == Command("answer", None, "It is 7:30, tap(3) said so")
