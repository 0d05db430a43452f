"""Snapseed 2.20 on the simulated phone (vlui/sim/apps/snapseed.py): the start screen, the open-photo panel, the
editor's tabs, a look and Noir's styles (each drawn on the photo), Settings kept in Preferences.xml, BACK, a
right-to-left locale, a dense small phone and the tablet, and the release's checks read on it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tests.sim.driver import centre, nodes, one, tap
from vlui.agents.expert import ExpertAgent
from vlui.env.env import PhoneEnv
from vlui.env.ui_text import parse_xml
from vlui.sim.apps.snapseed import PKG, SnapseedState, recent_photos, shared_prefs
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import Detector, release_tasks
from vlui.tasks.checks import check_holds

ID = f"{PKG}:id"


def phone(snapshot: str = "000") -> SimDevice:
    dev = SimDevice(snapshot, noise=False)
    dev.set_state({"installed": ["snapseed"]})
    dev.launch("snapseed")
    dev.state_changed()
    return dev


def by_id(dev: SimDevice, suffix: str):
    return one(dev, lambda n: n.rid == f"{ID}/{suffix}", suffix)


def labelled(dev: SimDevice, label: str):
    return one(dev, lambda n: n.text == label and n.rid == f"{ID}/label", label)


def holds(task_id: str, dev: SimDevice) -> bool:
    return check_holds(release_tasks()[task_id].evaluator_check, dev, lambda: parse_xml(dev.ui_xml()), task_id)


def state(dev: SimDevice) -> SnapseedState:
    return dev.state.app("snapseed", SnapseedState)


def photo_pixels(dev: SimDevice) -> np.ndarray:
    box = one(dev, lambda n: n.kind == "photo" and n.bounds[2] - n.bounds[0] > dev.width // 2, "the photo").bounds
    return dev.screenshot()[box[1]:box[3], box[0]:box[2]].astype(int)


def open_photo(dev: SimDevice) -> None:
    tap(dev, by_id(dev, "logo_view"))
    tap(dev, by_id(dev, "recent_image"))


def test_the_start_screen_opens_the_phones_newest_photo_on_looks() -> None:
    dev = phone()
    assert holds("b25_open_snapseed", dev) and not holds("b25_snapseed_open_image", dev)
    assert not nodes(dev, lambda n: n.rid == f"{ID}/looks_button")
    assert by_id(dev, "open_button").desc == "Open photo"
    assert one(dev, lambda n: n.text == "Tap anywhere to open a photo", "the invitation")
    tap(dev, by_id(dev, "logo_view"))
    thumbs = nodes(dev, lambda n: n.rid == f"{ID}/recent_image")
    assert [n.desc for n in thumbs] == recent_photos(dev) == ["IMG_2041.jpg", "IMG_2039.jpg", "IMG_2038.jpg"]
    assert one(dev, lambda n: n.text == "Open latest image", "Open latest image")
    dev.key("BACK")  # closes the panel, stays on the start screen
    assert holds("b25_open_snapseed", dev) and dev.state.top == "snapseed"
    open_photo(dev)
    assert state(dev).image == "IMG_2041.jpg" and holds("b25_snapseed_open_image", dev)
    assert not holds("b25_open_snapseed", dev) and not holds("b25_snapseed_tools", dev)
    assert [labelled(dev, name).selected for name in ("Portrait", "Smooth")] == [False, False]


def test_a_look_is_tried_selected_and_drawn_then_applied_or_cancelled() -> None:
    dev = phone()
    open_photo(dev)
    before = photo_pixels(dev)
    tap(dev, labelled(dev, "Portrait"))
    assert holds("b25_snapseed_portrait", dev) and labelled(dev, "Portrait").selected
    assert np.abs(photo_pixels(dev) - before).mean() > 3  # the look shows on the photo
    assert not nodes(dev, lambda n: n.rid == f"{ID}/looks_button")  # Cancel and Apply in the tabs' place
    dev.key("BACK")  # cancels the look
    assert not holds("b25_snapseed_portrait", dev) and holds("b25_snapseed_open_image", dev)
    assert np.array_equal(photo_pixels(dev), before)
    tap(dev, labelled(dev, "Portrait"))
    tap(dev, by_id(dev, "apply_button"))
    assert state(dev).edits == ["portrait"] and holds("b25_snapseed_portrait", dev)


def test_noir_turns_the_photo_grey_and_selects_the_style_tapped() -> None:
    dev = phone()
    open_photo(dev)
    tap(dev, by_id(dev, "tools_button"))
    assert holds("b25_snapseed_tools", dev) and not holds("b25_snapseed_open_image", dev)
    assert [n.desc for n in nodes(dev, lambda n: n.rid == f"{ID}/tool_item")][:4] == [
        "Tune Image", "Details", "Curves", "White Balance"]
    tap(dev, one(dev, lambda n: n.desc == "Noir" and n.rid == f"{ID}/tool_item", "Noir"))
    rgb = photo_pixels(dev)
    assert np.abs(rgb[..., 0] - rgb[..., 2]).max() <= 1  # grey
    assert not nodes(dev, lambda n: n.text == "S03")  # the styles show once asked for
    tap(dev, by_id(dev, "styles_button"))
    assert labelled(dev, "S01").selected and not holds("b25_snapseed_s03", dev)
    s01 = photo_pixels(dev)
    tap(dev, labelled(dev, "S03"))
    assert holds("b25_snapseed_s03", dev) and not labelled(dev, "S01").selected
    assert np.abs(photo_pixels(dev) - s01).mean() > 1
    tap(dev, by_id(dev, "apply_button"))
    assert state(dev).edits == ["noir:S03"] and by_id(dev, "looks_button").selected


def test_back_closes_what_is_open_then_leaves_and_the_photo_stays_open() -> None:
    dev = phone()
    open_photo(dev)
    tap(dev, by_id(dev, "tools_button"))
    tap(dev, one(dev, lambda n: n.desc == "Crop", "Crop"))
    dev.key("BACK")  # the tool is cancelled
    assert state(dev).tool == "" and by_id(dev, "looks_button").selected
    tap(dev, by_id(dev, "tools_button"))
    dev.key("BACK")  # the tools' sheet closes
    assert by_id(dev, "looks_button").selected
    dev.key("BACK")  # the editor is left
    assert dev.state.top is None
    dev.launch("snapseed")
    dev.state_changed()
    assert holds("b25_snapseed_open_image", dev)  # Snapseed keeps its photo open


def test_settings_are_kept_in_preferences_xml_as_the_release_reads_them() -> None:
    dev = phone()
    assert shared_prefs(dev, "Preferences.xml").endswith("<map />\n")
    assert dev.shared_prefs("snapseed", "Other.xml") is None
    tap(dev, one(dev, lambda n: n.desc == "More options", "More options"))
    tap(dev, one(dev, lambda n: n.text == "Settings", "Settings"))
    assert "SettingsActivity" in dev.log_lines()[-1]
    summary = [n.text for n in nodes(dev, lambda n: n.rid == "android:id/summary")]
    assert summary == ["Do not resize", "JPG 95%"]
    tap(dev, one(dev, lambda n: n.text == "Dark theme", "Dark theme"))
    assert holds("b25_snapseed_dark_theme", dev) and one(dev, lambda n: n.kind == "switch", "switch").checked
    tap(dev, one(dev, lambda n: n.text == "Format and quality", "row"))
    assert [n.text for n in nodes(dev, lambda n: n.rid == "android:id/text1")] == [
        "JPG 80%", "JPG 95%", "JPG 100%", "PNG"]
    assert one(dev, lambda n: n.text == "JPG 95%" and n.rid == "android:id/text1", "95").checked
    tap(dev, one(dev, lambda n: n.text == "JPG 100%", "100"))
    tap(dev, one(dev, lambda n: n.text == "Image sizing", "row"))
    assert [n.text for n in nodes(dev, lambda n: n.rid == "android:id/text1")] == [
        "Do not resize", "1080 px", "1366 px", "1600 px", "2000 px"]
    dev.key("BACK")  # the dialog closes, nothing chosen
    assert not holds("b25_snapseed_sizing_2000", dev)
    tap(dev, one(dev, lambda n: n.text == "Image sizing", "row"))
    tap(dev, one(dev, lambda n: n.text == "2000 px", "2000"))
    assert holds("b25_snapseed_quality_100", dev) and holds("b25_snapseed_sizing_2000", dev)
    prefs = ET.fromstring(dev.shared_prefs("snapseed", "Preferences.xml").encode())
    assert [(e.tag, e.get("name"), e.get("value") or e.text) for e in prefs] == [
        ("boolean", "pref_appearance_use_dark_theme", "true"), ("string", "pref_export_setting_compression", "100"),
        ("string", "pref_export_setting_long_edge", "2000")]
    settings = dev.screenshot().copy()
    dev.key("BACK")
    assert dev.top_screen()["screen"] == "main" and settings.mean() < 128  # Snapseed's own dark theme
    assert not holds("b25_snapseed_s03_after_dark_theme", dev)
    # a phone that has not installed Snapseed has no file of it
    assert SimDevice("000").shared_prefs("snapseed", "Preferences.xml") is None


def test_right_to_left_locales_mirror_the_editor() -> None:
    dev = phone("030")  # ar-AE
    assert dev.locale.rtl
    assert centre(by_id(dev, "open_button"))[0] > dev.width / 2
    open_photo(dev)
    looks, export = centre(by_id(dev, "looks_button"))[0], centre(by_id(dev, "export_button"))[0]
    assert looks > export and by_id(dev, "looks_button").text == "الأنماط"


def run_expert(task_id: str, snapshot: str) -> tuple[int | None, SimDevice]:
    """The expert's episode of ``task_id`` on ``snapshot``: the step its check first held (None: never)."""
    task = release_tasks()[task_id]
    env = PhoneEnv(SimDevice(snapshot), [task], [snapshot], include_xml=True, include_screen=False)
    obs, info = env.reset(options={"task": task_id, "snapshot": snapshot})
    agent = ExpertAgent()
    agent.reset(task)
    for step in range(1, task.step_limit + 1):
        obs, *_ = env.step(agent.act(obs, info))
        if Detector(task).holds(env.device, lambda: parse_xml(env.device.ui_xml())):
            return step, env.device
    return None, env.device


@pytest.mark.parametrize("snapshot", ["108", "109"])  # a dense 247 dp wide phone in Urdu, the landscape tablet
def test_the_expert_applies_noir_s03_after_a_setting_on_a_small_phone_and_the_tablet(snapshot: str) -> None:
    step, dev = run_expert("b25_snapseed_s03_after_quality_100", snapshot)
    assert step is not None and step <= release_tasks()["b25_snapseed_s03_after_quality_100"].step_limit


def test_the_portrait_look_is_named_in_the_phones_language_so_the_release_check_wants_english() -> None:
    step, _ = run_expert("b25_snapseed_portrait", "000")  # Snapseed on 000's home screen, the release's
    assert step == 4
    step, dev = run_expert("b25_snapseed_portrait", "031")  # de-DE: the look is Porträt
    assert step is None and state(dev).look == "portrait" and state(dev).trying
