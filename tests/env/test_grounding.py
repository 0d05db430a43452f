"""Grounding pairs from the UI tree (vlui/env/grounding.py): on the simulated phone's own dumps, every pair's tap lands
inside the element its label names, and the phone, tapped there, hands the tap to that element; on a hand-written
dump, each rule that leaves an element out."""

from __future__ import annotations

import numpy as np
import pytest

from vlui.agents.expert import ExpertAgent
from vlui.env.actions import ActionParser
from vlui.env.env import PhoneEnv
from vlui.env.grounding import grounding_pairs, label_of
from vlui.env.ui_text import parse_xml
from vlui.sim.phone import SimDevice
from vlui.sim.ui import hit
from vlui.tasks.catalog import resolve_tasks


def _pixel(action: np.ndarray, size: tuple[int, int]) -> tuple[float, float]:
    """Where the environment taps for ``action`` (vlui/env/env.py: ``p * size``, clipped to the last pixel)."""
    w, h = size
    parsed = ActionParser().parse(action)
    assert parsed.kind == "tap" and parsed.touch == parsed.lift
    return min(parsed.touch[1] * w, w - 1), min(parsed.touch[0] * h, h - 1)


def _check_screen(dev: SimDevice) -> tuple[list[str], bool]:
    """Check every pair of the phone's current screen against the phone itself; its labels, and whether a dialog
    (the alarm's time picker) was open over the app."""
    xml = dev.ui_xml()
    elements = parse_xml(xml)
    dialog = next((e for e in elements if e.resource_id.endswith(":id/time_picker")), None)
    pairs = grounding_pairs(xml, dev.size)
    assert [label for label, _ in grounding_pairs(xml)] == [label for label, _ in pairs]  # the root is the screen
    labels = [label for label, _ in pairs]
    assert len(set(labels)) == len(labels)
    for label, action in pairs:
        assert action.dtype == np.float32 and action.shape == (4,) and np.all(np.abs(action) <= 1)
        x, y = _pixel(action, dev.size)
        named = [e for e in elements if e.clickable and label_of(e, elements) == label]
        inside = [e for e in named if e.bounds[0] <= x < e.bounds[2] and e.bounds[1] <= y < e.bounds[3]]
        assert len(inside) == 1, f"{dev.snapshot.id}: {label!r} tapped at {(x, y)}, outside {named}"
        node = hit(dev.frame(), x, y)  # what the phone does with a tap there
        assert node is not None and tuple(node.bounds) == inside[0].bounds, (dev.snapshot.id, label)
        if dialog is not None:  # what the dialog covers (the alarm list, the tabs) is not seen: no pair points there
            assert dialog.bounds[0] <= x < dialog.bounds[2] and dialog.bounds[1] <= y < dialog.bounds[3], label
    return labels, dialog is not None


@pytest.mark.parametrize("snapshot", ["000", "030", "109"])  # en-US phone, Arabic (right to left), tablet
@pytest.mark.parametrize("task", ["alarm_1030", "airplane_on"])
def test_every_pair_on_the_experts_screens_taps_the_element_its_label_names(snapshot: str, task: str) -> None:
    # every screen the expert's episode goes through: the home screen, the drawer, Settings' rows, the Clock app and
    # its time picker over the alarm list (alarm_1030 sets a new alarm's time)
    dev = SimDevice(snapshot)
    env = PhoneEnv(dev, resolve_tasks([task]), [snapshot], include_xml=True)
    obs, info = env.reset(seed=0, options={"task": task, "snapshot": snapshot})
    agent = ExpertAgent()
    agent.reset(env.task, info, seed=0)
    screens, dialogs, done = 0, 0, False
    while not done:
        labels, dialog = _check_screen(dev)
        assert labels, f"{snapshot}: a screen of {task} with nothing to ground"
        screens, dialogs = screens + 1, dialogs + dialog
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    assert screens >= 3 and (dialogs > 0) == (task == "alarm_1030")


def test_pairs_name_launcher_icons_in_the_phones_locale_and_settings_rows_by_their_titles() -> None:
    home = grounding_pairs(SimDevice("000").ui_xml())
    assert {"Gmail", "Phone", "Chrome"} <= {label for label, _ in home}
    arabic = SimDevice("030")
    w, h = arabic.size
    arabic.swipe(w / 2, h * 0.7, w / 2, h * 0.2)  # the app drawer
    assert arabic.locale.t("app.clock") in {label for label, _ in grounding_pairs(arabic.ui_xml())}
    settings = SimDevice("001")
    settings.tap(*_centre(settings, settings.locale.t("app.settings")))
    labels = [label for label, _ in grounding_pairs(settings.ui_xml())]
    # a row is a clickable container without text: named by its title, the first text inside it, not its summary
    assert "Network & internet" in labels and not any(label.startswith("Wi") for label in labels)


def _centre(dev: SimDevice, label: str) -> tuple[float, float]:
    node = next(n for n in dev.frame().walk() if n.desc == label and n.on_tap is not None)
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) / 2, (y1 + y2) / 2


def _node(bounds: tuple[int, int, int, int], text: str = "", desc: str = "", clickable: bool = True,
          enabled: bool = True, children: str = "") -> str:
    x1, y1, x2, y2 = bounds
    return (f'<node text="{text}" content-desc="{desc}" clickable="{str(clickable).lower()}" '
            f'enabled="{str(enabled).lower()}" bounds="[{x1},{y1}][{x2},{y2}]">{children}</node>')


def test_each_rule_leaves_out_the_elements_it_names() -> None:
    screen = (100, 200)
    xml = "<hierarchy>" + _node((0, 0, 100, 200), clickable=False, children="".join([
        _node((0, 0, 50, 20), text="Kept"),
        _node((50, 0, 100, 20), text="text", desc="Described"),  # the content description names it
        _node((0, 20, 100, 40), children=_node((0, 20, 100, 30), text="Title", clickable=False)
              + _node((0, 30, 100, 40), text="Summary", clickable=False)),  # a row: named by its first text
        _node((0, 40, 100, 40), text="Zero size"),
        _node((0, 300, 100, 350), text="Off the screen"),
        _node((0, 180, 100, 260), text="Mostly off"),  # a quarter of it on the screen
        _node((0, 60, 50, 80), text="   "),  # a label of blanks is none
        _node((0, 80, 50, 100), text="Twice"),
        _node((50, 80, 100, 100), desc="Twice"),  # one label, two elements: it names neither
        _node((0, 100, 100, 120), text="Disabled", enabled=False),
        _node((0, 120, 100, 140), text="Under"),
        _node((0, 120, 100, 140), text="", clickable=True),  # drawn over it, and takes its taps
        _node((40, 185, 60, 195), text="On the home key"),  # a tap there is the HOME key
        _node((0, 150, 100, 190), text="Half"),  # all on the screen, the part beside the home key too
    ])) + "</hierarchy>"
    pairs = dict(grounding_pairs(xml, screen))
    assert list(pairs) == ["Kept", "Described", "Title", "Half"]
    to_pixels = {label: ((a[1] + 1) / 2 * screen[0], (a[0] + 1) / 2 * screen[1]) for label, a in pairs.items()}
    assert to_pixels["Kept"] == pytest.approx((25, 10))
    assert to_pixels["Title"] == pytest.approx((50, 30))  # the row's centre, not its title's
    assert np.array_equal(pairs["Half"][:2], pairs["Half"][2:])  # a tap: it lifts where it touched


def test_the_target_of_an_element_partly_off_the_screen_is_the_centre_of_what_is_shown() -> None:
    xml = "<hierarchy>" + _node((0, 0, 100, 200), clickable=False, children=_node((0, 150, 100, 230), text="Row")) \
        + "</hierarchy>"
    ((label, action),) = grounding_pairs(xml, (100, 200))
    assert label == "Row" and (action[0] + 1) / 2 * 200 == pytest.approx(175)
