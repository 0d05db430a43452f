"""The simulated phone as users see it: determinism, resets, bad input, navigation, locales, themes, layouts."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim.driver import Driver
from vlui.agents.walkthrough import walkthrough
from vlui.android.snapshot import snapshot_ids
from vlui.android.state import EDIT_TEXT_MAX, GAMMA_SPACE_MAX, brightness_percent, brightness_to_gamma, gamma_to_brightness
from vlui.device import observe
from vlui.errors import VluiError
from vlui.sim.apps.deskclock import clock_state
from vlui.sim.apps.dialer import dial_intent, dialer_state
from vlui.sim.phone import SimDevice
from vlui.sim.render import FrameCache
from vlui.sim.ui import hit

ALL = snapshot_ids("all")


def actions(dev: SimDevice) -> None:
    """Airplane mode on, then a call to 911 in progress (the expert's episodes of the two tasks)."""
    for task in ("airplane_on", "call_911"):
        walkthrough(dev, task, dev.snapshot.id)


def test_same_snapshot_and_actions_give_identical_frames_xml_and_logs() -> None:
    a, b = SimDevice("025"), SimDevice("025")
    for dev in (a, b):
        actions(dev)
    assert np.array_equal(a.screenshot(), b.screenshot())
    assert np.array_equal(a.observation(256, 128), b.observation(256, 128))
    assert a.ui_xml() == b.ui_xml()
    assert a.log_lines() == b.log_lines()


def test_loading_a_snapshot_restores_everything() -> None:
    dev = SimDevice("007")
    fresh_screen, fresh_xml, fresh_state = dev.screenshot(), dev.ui_xml(), dev.state.copy()
    actions(dev)
    assert dev.state != fresh_state
    dev.load_snapshot("007")
    assert dev.state == fresh_state
    assert dev.ui_xml() == fresh_xml and np.array_equal(dev.screenshot(), fresh_screen)
    assert dev.log_lines() == []


def test_switching_between_snapshots_changes_the_configuration() -> None:
    dev = SimDevice("000")
    dev.load_snapshot("109")
    assert dev.size == (1280, 800) and dev.density == 160 and dev.locale.id == "ar-EG"
    assert dev.screenshot().shape == (800, 1280, 3)


@pytest.mark.parametrize("point", [(-5, 10), (10, -1), (1080, 100), (100, 2160), (float("nan"), 5), (5, float("inf"))])
def test_touches_off_the_screen_do_nothing(point) -> None:
    dev = SimDevice("000")
    before = dev.state.copy()
    dev.tap(*point)
    dev.swipe(*point, 500, 500)
    before.time_ms = dev.state.time_ms  # time passes, nothing else changes
    assert dev.state == before


def test_bad_input_types_are_clear_errors() -> None:
    dev = SimDevice("000")
    with pytest.raises(VluiError, match="touch coordinates must be numbers"):
        dev.tap("10", 20)
    with pytest.raises(VluiError, match="unknown key 'MENU'; choose from: BACK, HOME, APP_SWITCH"):
        dev.key("MENU")


@pytest.mark.parametrize("snap", ALL)
def test_bmoca_nav_points_press_back_home_overview_on_every_snapshot(snap: str) -> None:
    dev = SimDevice(snap)
    w, h = dev.size

    def press(x: float) -> None:
        dev.tap(x * w, 0.95 * h)

    Driver(dev).open_app("settings")
    Driver(dev).tap_title("settings.network")
    press(0.22)  # BACK: from Network & internet to the top level
    assert dev.top_screen()["screen"] == "main"
    press(0.78)  # OVERVIEW
    assert dev.state.overview
    press(0.50)  # HOME
    assert dev.state.top is None and not dev.state.overview


def test_clearing_or_dismissing_tasks_in_the_overview_leaves_a_working_phone() -> None:
    # the app behind the overview may go with its task: the phone then shows home, as Android 10, and goes on
    dev = SimDevice("000")
    Driver(dev).open_app("settings")
    dev.key("APP_SWITCH")
    dev.tap(*_center(dev.frame().find(rid="com.android.systemui:id/clear_all")))
    assert dev.state.top is None and not dev.state.overview and not dev.state.tasks and not dev.state.recents
    assert dev.screenshot().shape[:2] == (dev.size[1], dev.size[0])
    dev.key("BACK")
    assert dev.top_screen() is None
    Driver(dev).open_app("clock")
    dev.key("HOME")
    Driver(dev).open_app("settings")
    dev.key("APP_SWITCH")
    x, y = _center(dev.frame().find(rid="com.android.systemui:id/snapshot"))  # the most recent: Settings
    dev.swipe(x, y, x, y - dev.size[1] // 4)  # swipe the front card (Settings) away: Clock is left
    assert dev.state.overview and dev.state.recents == ["clock"] and dev.state.top is None
    dev.key("BACK")  # out of the overview: home, since the app that was behind it is gone
    assert not dev.state.overview and dev.state.top is None and dev.screenshot() is not None
    dev.key("APP_SWITCH")
    x, y = _center(dev.frame().find(rid="com.android.systemui:id/snapshot"))
    dev.swipe(x, y, x, y - dev.size[1] // 4)  # the last task: the overview gives way to home
    assert not dev.state.overview and not dev.state.recents and dev.screenshot() is not None


def _center(node) -> tuple[int, int]:
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) // 2, (y1 + y2) // 2


def test_nav_points_are_documented_per_device() -> None:
    phone, tablet = SimDevice("000"), SimDevice("109")
    assert [round(x, 2) for _, x in phone.nav_points().values()] == [0.22, 0.5, 0.78]
    assert [round(x, 2) for _, x in tablet.nav_points().values()] == [0.4, 0.5, 0.6]
    for dev in (phone, tablet):
        for key, (y, x) in dev.nav_points().items():
            node = hit(dev.frame(), x * dev.size[0], y * dev.size[1])
            assert node is not None and node.package == "com.android.systemui", key


def test_back_closes_the_drawer_then_leaves_apps() -> None:
    dev = SimDevice("001")
    d = Driver(dev)
    d.swipe(0.5, 0.7, 0.5, 0.2)
    assert dev.state.drawer
    dev.key("BACK")
    assert not dev.state.drawer
    d.open_app("clock")
    assert dev.state.top == "clock"
    dev.key("BACK")
    assert dev.state.top is None


def test_app_switch_twice_returns_to_the_previous_app() -> None:
    dev = SimDevice("000")
    d = Driver(dev)
    d.open_app("clock")
    dev.key("HOME")
    d.open_app("settings")
    dev.key("APP_SWITCH")
    dev.key("APP_SWITCH")
    assert dev.state.top == "clock"


def test_drawer_is_alphabetical_in_the_device_language() -> None:
    for snap in ("000", "023", "031"):  # en-US, fr-CA, de-DE
        dev = SimDevice(snap)
        Driver(dev).swipe(0.5, 0.7, 0.5, 0.2)
        labels = [n.desc for n in dev.frame().walk() if n.on_tap is not None and n.desc and n.cls == "android.widget.TextView"]
        assert labels == sorted(labels, key=str.casefold) and len(labels) >= 10


def test_settings_list_scrolls_to_reach_system() -> None:
    dev = SimDevice("004")  # 550 dpi: the list does not fit
    d = Driver(dev)
    d.open_app("settings")
    title = dev.locale.t("settings.system")
    assert d.find(lambda n: n.text == title) is None
    d.swipe(0.5, 0.8, 0.5, 0.3)
    assert d.find(lambda n: n.text == title) is not None


def test_screens_speak_the_snapshot_language() -> None:
    for snap, word in (("023", "Réseau"), ("031", "Netzwerk"), ("028", "ネットワーク"), ("030", "الشبكة")):
        dev = SimDevice(snap)
        Driver(dev).open_app("settings")
        texts = " ".join(n.text for n in dev.frame().walk())
        assert word in texts, (snap, texts[:200])


def test_right_to_left_locales_mirror_the_layout() -> None:
    for snap, rtl in (("000", False), ("030", True), ("108", True)):
        dev = SimDevice(snap)
        Driver(dev).open_app("settings")
        icons = [n for n in dev.frame().walk() if n.rid == "android:id/icon"]
        assert icons and all((n.bounds[0] > dev.size[0] / 2) == rtl for n in icons), snap


def test_dark_theme_darkens_app_screens() -> None:
    light, dark = SimDevice("000"), SimDevice("007")  # same device, dark theme on 007
    for dev in (light, dark):
        Driver(dev).open_app("settings")
    assert light.screenshot().mean() > 200 > 100 > dark.screenshot().mean()


def test_turning_on_dark_theme_in_settings_recolours_the_screen() -> None:
    dev = SimDevice("000")
    d = Driver(dev)
    d.open_app("settings")
    d.tap_title("settings.display")
    before = dev.screenshot().mean()
    d.tap_title("settings.dark_theme")
    assert dev.state.dark_theme and dev.screenshot().mean() < before - 50


@pytest.mark.parametrize("snap", ["000", "012", "109", "105"])  # 1080x2160, 1080x2280, the landscape tablet, dark
def test_the_observation_is_the_full_screen_observed_as_over_adb(snap: str) -> None:
    """Whatever the aspect ratio, the simulated phone's observation is exactly a screenshot resized the one way
    (vlui.device.observe), as the ADB path computes it from a raw (4-channel) screencap."""
    dev = SimDevice(snap)
    w, h = dev.size
    for height, width in ((256, 128), (64, 32), (384, 192)):
        full = dev.screenshot()
        raw = np.concatenate([full, np.full((*full.shape[:2], 1), 255, np.uint8)], axis=2)
        np.testing.assert_array_equal(dev.observation(height, width), observe(raw, height, width))
        dev.swipe(w / 2, h * 0.8, w / 2, h * 0.2)  # the app drawer, then a scroll in it
    assert dev.observation(256, 128).flags.writeable  # a copy: the caller may change it


def test_tablet_is_laid_out_for_its_screen_not_stretched() -> None:
    dev = SimDevice("109")
    Driver(dev).open_app("settings")
    rows = [n for n in dev.frame().walk() if n.cls == "android.widget.LinearLayout" and n.on_tap is not None]
    widths = {n.bounds[2] - n.bounds[0] for n in rows}
    assert max(widths) < dev.size[0] * 0.75  # content keeps a reading width, centred


def test_typing_goes_to_the_focused_field_and_back_hides_the_keyboard() -> None:
    dev = SimDevice("000")
    d = Driver(dev)
    d.open_app("chrome")
    box = d.need(lambda n: n.rid.endswith(":id/search_box"), "search box")
    d.tap(box)
    assert dev.state.focus == ("chrome", "search")
    assert any("LatinIme.onActivate" in line and "com.android.chrome" in line for line in dev.log_lines())
    dev.text("vlui")
    assert dev.state.fields["chrome.search"] == "vlui"
    assert d.find(lambda n: n.text == "vlui") is not None
    dev.key("BACK")
    assert dev.state.focus is None
    dev.text("ignored")
    assert dev.state.fields["chrome.search"] == "vlui"


def test_a_field_keeps_what_its_length_lets_in() -> None:
    """Issue 63: a field took any length (megabytes typed made every frame slower). A field keeps EDIT_TEXT_MAX
    characters (Android 13's cap for single-line text), the dial pad's digits too; typing beyond drops the rest."""
    dev = SimDevice("000", noise=False)
    d = Driver(dev)
    d.open_app("chrome")
    d.tap(d.need(lambda n: n.rid.endswith(":id/search_box"), "search box"))
    dev.text("x" * (EDIT_TEXT_MAX - 1))
    dev.text("yz")
    assert dev.state.fields["chrome.search"] == "x" * (EDIT_TEXT_MAX - 1) + "y"
    dev.delete_in_focus()
    assert len(dev.state.fields["chrome.search"]) == EDIT_TEXT_MAX - 1
    dev.key("HOME")
    dial_intent(dev, "4" * 100_000)  # a DIAL intent's number, the dial pad showing
    assert dialer_state(dev).digits == "4" * EDIT_TEXT_MAX
    dev.delete_in_focus()
    dev.text("5" * 100_000)
    assert dialer_state(dev).digits == "4" * (EDIT_TEXT_MAX - 1) + "5"


def test_the_keyboards_keys_type_letters_digits_and_symbols_and_delete() -> None:
    dev = SimDevice("000")
    d = Driver(dev)
    d.open_app("chrome")
    d.tap(d.need(lambda n: n.rid.endswith(":id/search_box"), "search box"))

    def key(label: str, rid: str = ""):
        return d.need(lambda n: n.package == "com.google.android.inputmethod.latin" and (
            n.rid.endswith(rid) if rid else n.text == label), label or rid)

    for label in "hi":
        d.tap(key(label))
    d.tap(key(" "))
    d.tap(key("?123", ":id/key_pos_symbol"))  # the digits and symbols layer
    assert d.find(lambda n: n.text == "q") is None
    for label in "4:30?":
        d.tap(key(label))
    d.tap(key("", ":id/key_pos_del"))
    assert dev.state.fields["chrome.search"] == "hi 4:30"
    d.tap(key("ABC", ":id/key_pos_symbol"))  # back to the letters
    d.tap(key("x"))
    d.tap(key("."))  # the period key, right of the space bar on both layers
    assert dev.state.fields["chrome.search"] == "hi 4:30x."
    dev.key("BACK")
    d.tap(d.need(lambda n: n.rid.endswith(":id/search_box"), "search box"))
    assert d.find(lambda n: n.text == "q") is not None  # a field comes up with the letters


def test_home_layouts_follow_the_snapshot_seed() -> None:
    def layout(snap):
        dev = SimDevice(snap)
        return sorted((n.desc, n.bounds) for n in dev.frame().walk() if n.on_tap and n.cls == "android.widget.TextView")

    assert layout("000") != layout("001")  # same configuration, different icon layout
    assert layout("001") == layout("001")


def test_status_bar_clock_follows_the_virtual_clock() -> None:
    dev = SimDevice("000")
    start = dev.now()
    for _ in range(25):
        dev.tap(dev.size[0] * 0.5, dev.size[1] * 0.4)
    assert (dev.now() - start).total_seconds() == 25 * dev.step_ms / 1000
    clock = next(n for n in dev.frame().walk() if n.rid == "com.android.systemui:id/clock")
    assert clock.text == "8:01"


def _clock_tab(d: Driver, tab: str) -> None:
    d.open_app("clock")
    d.tap(d.need(lambda n: n.desc == d.label(f"clock.{tab}") and n.on_tap is not None, f"{tab} tab"))


def test_timer_counts_down_on_the_virtual_clock() -> None:
    dev = SimDevice("000")
    d = Driver(dev)
    _clock_tab(d, "timer")
    for digit in "130":
        d.tap_rid(f"com.google.android.deskclock:id/timer_setup_digit_{digit}")
    assert d.need(lambda n: n.rid.endswith(":id/timer_setup_time"), "setup").text == "00h 01m 30s"
    d.tap_rid("com.google.android.deskclock:id/fab")
    for _ in range(10):
        dev.tap(5, dev.size[1] * 0.5)
    assert d.need(lambda n: n.rid.endswith(":id/timer_time_text"), "timer").text == "00:57"  # 90 s - 11 steps of 3 s


def test_the_timer_keeps_the_length_it_was_started_with_until_it_is_deleted() -> None:
    dev = SimDevice("000")
    d = Driver(dev)
    _clock_tab(d, "timer")
    timer = clock_state(dev).timer
    for digit in "2500":
        d.tap_rid(f"com.google.android.deskclock:id/timer_setup_digit_{digit}")
    assert timer.length_ms == 0  # typed, not started: no timer yet
    d.tap_rid("com.google.android.deskclock:id/fab")  # start
    assert timer.length_ms == 25 * 60 * 1000 and dev.check_state({"clock.timer.length_ms": 1_500_000})
    d.tap_rid("com.google.android.deskclock:id/fab")  # pause: the length stays
    assert timer.length_ms == 1_500_000 and timer.end_ms is None
    d.tap_rid("com.google.android.deskclock:id/left_button")  # delete
    assert (timer.length_ms, timer.digits, timer.left_ms) == (0, "", 0)


def test_stopwatch_logs_start_pause_reset_events() -> None:
    dev = SimDevice("000")
    d = Driver(dev)
    _clock_tab(d, "stopwatch")
    mark = dev.log_mark()
    d.tap_rid("com.google.android.deskclock:id/fab")  # start
    d.tap_rid("com.google.android.deskclock:id/fab")  # pause
    d.tap_rid("com.google.android.deskclock:id/left_button")  # reset
    events = [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["AlarmClock"])]
    assert events == ["Events: [Stopwatch] [Start] [Tap]", "Events: [Stopwatch] [Pause] [Tap]",
                      "Events: [Stopwatch] [Reset] [Tap]"]


def test_font_scale_and_density_change_sizes_as_on_a_phone(tmp_path) -> None:
    from vlui.android.snapshot import ENVS_DIR

    text = (ENVS_DIR / "002.yaml").read_text()  # Pixel 3, 440 dpi
    (tmp_path / "big_font.yaml").write_text(text.replace("font_scale: 1.0", "font_scale: 1.3"))
    (tmp_path / "dense.yaml").write_text(text.replace("dpi: 440", "dpi: 550"))

    def title_size(ref):
        dev = SimDevice(ref)
        Driver(dev).open_app("settings")
        node = dev.frame().find(text=dev.locale.t("settings.network"))
        return node.size, dev.frame().find(rid="android:id/icon").bounds

    base_size, base_icon = title_size("002")
    big_size, big_icon = title_size(str(tmp_path / "big_font.yaml"))
    dense_size, dense_icon = title_size(str(tmp_path / "dense.yaml"))
    assert big_size > base_size and big_icon[2] - big_icon[0] == base_icon[2] - base_icon[0]  # text only
    assert dense_size > base_size and dense_icon[2] - dense_icon[0] > base_icon[2] - base_icon[0]  # everything


def test_the_frame_cache_keeps_to_its_memory_budget_and_still_returns_the_same_pixels() -> None:
    cache = FrameCache()
    dev = SimDevice("000", frames=cache)
    one_frame = dev.screen().nbytes
    cache.max_bytes = 2 * one_frame  # room for two full-resolution frames
    frames = []
    for key in ("HOME", "APP_SWITCH", "HOME"):
        dev.key(key)
        frames.append(dev.screenshot())
    dev.swipe(540, 1800, 540, 600)  # the app drawer
    frames.append(dev.screenshot())
    count, size = cache.size()
    assert size <= 2 * one_frame and count <= 2
    fresh = SimDevice("000", frames=FrameCache())
    for key in ("HOME", "APP_SWITCH", "HOME"):
        fresh.key(key)
    np.testing.assert_array_equal(fresh.screenshot(), frames[2])  # evicted frames are drawn again, identically


def test_brightness_is_on_android_10s_gamma_scale_in_the_slider_and_in_settings() -> None:
    # the curve's fixed points (SettingsLib BrightnessUtils): the ends, and the knee where square root gives way to log
    assert (brightness_to_gamma(10), brightness_to_gamma(255)) == (0, GAMMA_SPACE_MAX)
    assert brightness_to_gamma(10 + 245 / 12) == round(0.5 * GAMMA_SPACE_MAX)
    # from 10 % up, a slider position is shown back within 2 percent (the set_brightness template's tolerance); below,
    # the setting's integer steps are coarse on the square-root part of the curve, as on a device (10 -> 0 %, 11 -> 11 %)
    for percent in range(10, 101):
        assert abs(brightness_percent(gamma_to_brightness(percent / 100 * GAMMA_SPACE_MAX)) - percent) <= 2
    assert (brightness_percent(10), brightness_percent(11)) == (0, 11)
    dev = SimDevice("000")
    dev.set_state({"brightness": 23})
    d = Driver(dev)
    d.open_app("settings")
    d.tap_title("settings.display")
    assert any(n.text.endswith("40%") for n in dev.frame().walk())  # Settings' "Brightness level" summary
    d.tap_title("settings.brightness")
    x1, y1, x2, y2 = d.need(lambda n: n.rid == "com.android.systemui:id/slider", "brightness slider").bounds
    dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
    assert dev.state.brightness == 30  # the slider's middle is a dim screen, as on a device
