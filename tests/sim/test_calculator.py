"""The Calculator (com.google.android.calculator 8.6, B-MoCA release 2.5's): its keys, its formula's text as UI
automation reads it (what B-MoCA's evaluators compare), its live and final results, the scientific rows, the angle
mode, its state across leaving and coming back, right-to-left languages, a small phone and the tablet."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from tests.sim.driver import one, tap
from vlui.android.snapshot import Snapshot, load_snapshot, snapshot_ids
from vlui.sim.apps.calculator import CalculatorState, evaluate, number_text, press, preview
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import release_pins

PKG = "com.google.android.calculator"


def calculator(snapshot: str | Snapshot = "000") -> SimDevice:
    dev = SimDevice(snapshot, noise=False)
    dev.install_apps([release_pins()["calculator"]])
    dev.launch("calculator")
    return dev


def keys(dev: SimDevice, *ids: str) -> None:
    for key in ids:
        tap(dev, one(dev, lambda n, k=key: n.rid == f"{PKG}:id/{k}", key))


def dumped(dev: SimDevice) -> dict[str, ET.Element]:
    """The window's nodes with a resource id of the Calculator, by id (the first of each), as uiautomator dumps."""
    found: dict[str, ET.Element] = {}
    for node in ET.fromstring(dev.ui_xml()).iter("node"):
        rid = node.get("resource-id", "")
        if rid.startswith(f"{PKG}:id/"):
            found.setdefault(rid.split("/")[-1], node)
    return found


def text_of(dev: SimDevice, rid: str) -> str | None:
    node = dumped(dev).get(rid)
    return None if node is None else node.get("text")


def test_the_pads_are_image_buttons_named_as_version_8_names_them() -> None:
    dev = calculator()
    nodes = dumped(dev)
    for rid, desc in (("digit_7", "7"), ("op_add", "plus"), ("op_sub", "minus"), ("op_mul", "multiply"),
                      ("op_div", "divide"), ("eq", "equals"), ("clr", "clear"), ("del", "delete"),
                      ("dec_point", "point"), ("op_pct", "percent"), ("parens", "left or right parenthesis"),
                      ("op_sqrt", "square root"), ("const_pi", "pi"), ("op_pow", "power"), ("op_fact", "factorial"),
                      ("collapse_expand", "Show scientific buttons")):
        assert nodes[rid].get("class") == "android.widget.ImageButton" and nodes[rid].get("content-desc") == desc
    assert "fun_cos" not in nodes and "toggle_mode" not in nodes  # in the rows the arrow opens
    assert text_of(dev, "formula") == "" and text_of(dev, "result_preview") == ""
    digits = [n.get("resource-id").split("_")[-1] for n in ET.fromstring(dev.ui_xml()).iter("node")
              if "id/digit_" in n.get("resource-id", "")]
    assert "".join(digits) == "7894561230"  # the pad's rows, top to bottom, as a dump lists them


def test_the_formula_reads_as_the_release_evaluators_expect() -> None:
    dev = calculator()
    keys(dev, "digit_1", "op_add", "digit_1")
    assert text_of(dev, "formula") == "1+1" and text_of(dev, "result_preview") == "2"
    keys(dev, "clr", "digit_1", "digit_0", "op_fact", "op_div", "parens", "digit_2", "op_fact", "op_mul", "digit_8",
         "op_fact", "parens")
    assert text_of(dev, "formula") == "10!÷(2!×8!)" and text_of(dev, "result_preview") == "45"
    keys(dev, "clr", "collapse_expand", "fun_cos", "digit_1", "digit_8", "digit_0")
    # the screen shows "cos(180", the text holds the function's letter
    assert text_of(dev, "formula") == "c180"
    assert any(n.text == "cos(180" for n in dev.frame().walk())
    keys(dev, "clr", "fun_ln", "digit_1", "digit_2", "digit_3", "digit_4")
    assert text_of(dev, "formula") == "l1234" and text_of(dev, "result_preview").startswith("7.1180")
    keys(dev, "clr", "digit_4", "digit_5", "op_mul", "const_pi", "op_div", "digit_1", "digit_8", "digit_0")
    assert text_of(dev, "formula") == "45×π÷180" and text_of(dev, "result_preview").startswith("0.785398")
    keys(dev, "clr", "digit_5", "digit_0", "op_pct", "digit_2", "digit_8")
    assert text_of(dev, "formula") == "50%28" and text_of(dev, "result_preview") == "14"


def test_equals_shows_the_final_result_and_an_operator_goes_on_from_it() -> None:
    dev = calculator()
    keys(dev, "digit_1", "digit_7", "op_mul", "digit_2", "digit_3", "eq")
    assert text_of(dev, "result_final") == "391" and text_of(dev, "result_preview") is None
    assert text_of(dev, "formula") == "17×23"
    keys(dev, "op_sub", "digit_4", "digit_0", "digit_0")
    assert text_of(dev, "formula") == "391−400" and text_of(dev, "result_preview") == "−9"
    keys(dev, "eq", "digit_5")
    assert text_of(dev, "formula") == "5" and text_of(dev, "result_preview") == ""  # a digit starts anew
    keys(dev, "op_div", "digit_0", "eq")
    assert text_of(dev, "result_final") == "Can't divide by 0"


def test_editing_rules_of_the_keys() -> None:
    calc = CalculatorState()
    for key in ("op_mul", "digit_2", "op_add", "op_mul", "dec_point", "digit_5", "dec_point", "digit_1", "parens",
                "digit_3"):
        press(calc, key)
    # an operator first is dropped, a second replaces the first, a number takes one point, "( )" after a number
    # multiplies by a new parenthesis
    assert calc.keys == ["digit_2", "op_mul", "dec_point", "digit_5", "digit_1", "op_mul", "lparen", "digit_3"]
    assert preview(calc.keys, False) == pytest.approx(2 * 0.51 * 3)
    press(calc, "del")
    assert calc.keys[-1] == "lparen" and preview(calc.keys, False) == pytest.approx(1.02)


def test_angles_start_in_radians_and_the_mode_key_switches_to_degrees() -> None:
    dev = calculator()
    keys(dev, "collapse_expand", "fun_cos", "digit_6", "digit_0")
    assert text_of(dev, "result_preview").startswith("−0.952412")
    assert dumped(dev)["toggle_mode"].get("content-desc") == "switch to degrees"
    keys(dev, "toggle_mode")
    assert text_of(dev, "result_preview") == "0.5" and text_of(dev, "mode") == "DEG"
    keys(dev, "clr", "fun_cos", "digit_1", "digit_8", "digit_0")
    assert text_of(dev, "result_preview") == "−1"
    keys(dev, "toggle_inv")
    assert "fun_arccos" in dumped(dev) and "fun_cos" not in dumped(dev)
    assert dumped(dev)["toggle_inv"].get("selected") == "true"


def test_numbers_round_to_what_fits() -> None:
    assert evaluate(["digit_1", "op_div", "digit_0"], False) == "zero"
    assert evaluate(["op_sqrt", "op_sub", "digit_4"], False) == "nan"
    assert number_text(40 / 9, ",", 10) == "4,44444444"
    assert number_text(-1.5e20, ".", 12) == "−1.5E20"
    assert number_text(720.0, ".", 3) == "720"


def test_the_state_stays_when_the_app_is_left_and_back_closes_it() -> None:
    dev = calculator()
    keys(dev, "digit_3", "op_mul", "digit_5")
    dev.key("BACK")
    assert dev.state.top != "calculator"
    dev.launch("calculator")
    assert text_of(dev, "formula") == "3×5"
    dev.key("HOME")
    dev.launch("calculator")
    assert text_of(dev, "formula") == "3×5"


@pytest.mark.parametrize("snapshot", ["108", "109"])  # Urdu on a Pixel 6; Arabic (Egypt) on the landscape tablet
def test_right_to_left_languages_keep_the_pad_and_the_formula_left_to_right(snapshot: str) -> None:
    dev = calculator(snapshot)
    nodes = dumped(dev)

    def x(rid: str) -> int:
        return int(nodes[rid].get("bounds").split(",")[0][1:])

    assert x("digit_7") < x("digit_8") < x("digit_9") < x("op_mul")
    keys(dev, "digit_1", "op_add", "digit_1")
    assert text_of(dev, "formula") == "1+1"  # digits stay 0-9, as AOSP's ExactCalculator keeps them


def bounds(node: ET.Element) -> tuple[int, ...]:
    return tuple(int(v) for v in node.get("bounds").replace("][", ",").strip("[]").split(","))


def test_the_tablet_shows_both_pads_and_a_small_phone_fits_the_open_rows() -> None:
    nodes = dumped(calculator("109"))
    assert "fun_cos" in nodes and "collapse_expand" not in nodes
    assert bounds(nodes["fun_cos"])[2] <= bounds(nodes["digit_7"])[0]  # the scientific keys left of the numbers
    small = dataclasses.replace(load_snapshot("000"), device="custom", dpi=320,
                                screen={"width": 480, "height": 800, "dpi": 320, "kind": "phone", "model": "small"})  # 240 x 400 dp
    dev = calculator(small)
    keys(dev, "collapse_expand")
    width, height = dev.size
    display = bounds(dumped(dev)["formula"])
    assert display[3] - display[1] >= 40  # px: the formula keeps a line
    for rid, node in dumped(dev).items():
        x1, y1, x2, y2 = bounds(node)
        assert 0 <= x1 < x2 <= width and y1 < y2 <= height, rid


def test_a_decimal_comma_language_writes_its_results_with_a_comma() -> None:
    german = next(s for s in snapshot_ids("all") if load_snapshot(s).locale == "de-DE")
    dev = calculator(german)
    keys(dev, "digit_2", "op_div", "parens", "digit_1", "op_div", "digit_4", "op_add", "digit_1", "op_div", "digit_5")
    assert text_of(dev, "formula") == "2÷(1÷4+1÷5" and text_of(dev, "result_preview").startswith("4,444")
    assert dumped(dev)["dec_point"].get("content-desc") == "Dezimalzeichen"
