"""What a user of the simulated phone sees from key events, implicit intents, typed text and the log lines that
detectors read (issue 14, part B): the screen and XML after a key or typed text, ``am start``'s output and exit
status, and log lines' exact text as Android 10 prints them."""

from __future__ import annotations

import html
import re
import threading

import pytest

from vlui.android.apps import apps
from vlui.android.logcat import parse_threadtime
from vlui.served.phone import ServedPhone
from vlui.served.shell import Shell
from vlui.sim.apps import settings
from vlui.sim.apps.deskclock import clock_state
from vlui.sim.apps.dialer import dialer_state
from vlui.sim.phone import SimDevice
from vlui.sim.ui import hit


def sh(phone: ServedPhone, command: str) -> tuple[str, int]:
    out: list[bytes] = []
    status = Shell(phone).run(command, out.append, threading.Event())
    return b"".join(out).decode("utf-8", "replace"), status


def messages(dev: SimDevice, tag: str, since: int = 0) -> list[str]:
    return [parse_threadtime(line)["message"] for line in dev.log_lines(since, tags=[tag])]


def texts(dev: SimDevice) -> list[str]:
    """The texts of the views uiautomator reports, in order."""
    return [html.unescape(t) for t in re.findall(r' text="([^"]*)"', dev.ui_xml())]


def center(node) -> tuple[int, int]:
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) // 2, (y1 + y2) // 2


@pytest.fixture
def phone() -> ServedPhone:
    phone = ServedPhone("000", noise=False)
    phone.device.clear_log()  # these tests read what the commands log, not the boot log (`logcat -c`, as the backend)
    return phone


# ---------------------------------------------------------------------------------------------- log lines
@pytest.mark.parametrize("row, stream", [(0, "STREAM_MUSIC"), (1, "STREAM_VOICE_CALL"), (2, "STREAM_RING"),
                                         (3, "STREAM_ALARM")])
def test_volume_sliders_log_androids_stream_names(row: int, stream: str) -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("settings")
    settings.open_page(dev, "sound")
    bars = [n for n in dev.frame().walk() if n.cls == "android.widget.SeekBar"]
    x1, y1, x2, y2 = bars[row].bounds
    mark = dev.log_mark()
    dev.tap(x1 + (x2 - x1) * 0.95, (y1 + y2) / 2)
    level = {"STREAM_MUSIC": dev.state.volume["media"], "STREAM_VOICE_CALL": dev.state.volume["call"],
             "STREAM_RING": dev.state.volume["ring"], "STREAM_ALARM": dev.state.volume["alarm"]}[stream]
    assert messages(dev, "vol.Events", mark) == [f"writeEvent level_changed {stream} {level}"]


def test_a_process_start_is_logged_by_activity_manager_only() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("camera")
    assert [m for m in messages(dev, "ActivityManager") if m.startswith("Start proc")] == [
        f"Start proc {dev.state.pids['camera']}:com.android.camera2/u0a51 for activity "
        "{com.android.camera2/com.android.camera.CameraLauncher}"]
    atm = messages(dev, "ActivityTaskManager")
    assert not [m for m in atm if m.startswith("Start proc")]
    assert atm[0].startswith("START u0 {act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] "
                             "flg=0x10200000 cmp=com.android.camera2/com.android.camera.CameraLauncher")


# ---------------------------------------------------------------------------------------------- implicit intents
@pytest.mark.parametrize("action, page, activity, fragment", [
    ("android.settings.SETTINGS", "main", ".Settings", None),
    ("android.settings.WIRELESS_SETTINGS", "network", ".Settings$NetworkDashboardActivity",
     "com.android.settings.network.NetworkDashboardFragment"),
    ("android.settings.AIRPLANE_MODE_SETTINGS", "network", ".Settings$NetworkDashboardActivity",
     "com.android.settings.network.NetworkDashboardFragment"),
    ("android.settings.DISPLAY_SETTINGS", "display", ".Settings$DisplaySettingsActivity",
     "com.android.settings.DisplaySettings"),
    ("android.settings.LOCALE_SETTINGS", "languages", ".Settings$LocalePickerActivity",
     "com.android.settings.localepicker.LocaleListEditor"),
    ("android.settings.SOUND_SETTINGS", "sound", ".Settings$SoundSettingsActivity",
     "com.android.settings.notification.SoundSettings"),
])
def test_settings_actions_open_their_page(phone, action: str, page: str, activity: str, fragment) -> None:
    out, status = sh(phone, f"am start -a {action}")
    assert (out, status) == (f"Starting: Intent {{ act={action} }}\n", 0)
    dev = phone.device
    assert dev.state.top == "settings" and dev.state.tasks["settings"] == [{"screen": page}]
    atm = messages(dev, "ActivityTaskManager")
    assert atm[0] == f"START u0 {{act={action} flg=0x10000000 cmp=com.android.settings/{activity}}} from uid 0"
    assert messages(dev, "SettingsActivity") == ([f"Switching to fragment {fragment}"] if fragment else [])
    if page != "main":  # the page's title is on the screen, in the XML
        assert dev.locale.t(f"settings.{settings.TITLES.get(page, page)}") in texts(dev)
    dev.key("BACK")  # the page was Settings' only screen: BACK goes home
    assert dev.state.top is None


def test_a_settings_action_lands_on_top_of_what_settings_showed(phone) -> None:
    dev = phone.device
    dev.launch("settings")
    settings.open_page(dev, "sound")
    dev.key("HOME")
    assert sh(phone, "am start -a android.settings.DISPLAY_SETTINGS")[1] == 0
    assert [s["screen"] for s in dev.state.tasks["settings"]] == ["main", "sound", "display"]
    dev.key("BACK")
    assert dev.state.top == "settings" and dev.top_screen() == {"screen": "sound"}


@pytest.mark.parametrize("action", ["android.intent.action.DIAL", "android.intent.action.VIEW"])
def test_dial_and_view_of_a_tel_uri_open_the_dial_pad_with_the_number(phone, action: str) -> None:
    out, status = sh(phone, f"am start -a {action} -d tel:5551234")
    assert (out, status) == (f"Starting: Intent {{ act={action} dat=tel:xxxxxxx }}\n", 0)
    dev = phone.device
    assert dev.state.top == "phone" and dev.top_screen() == {"screen": "keypad"}
    assert "5551234" in texts(dev)  # the digits field shows the number; nothing was called
    assert dialer_state(dev).call is None and messages(dev, "Telecom") == []
    assert messages(dev, "ActivityTaskManager")[0] == (
        f"START u0 {{act={action} dat=tel:xxxxxxx flg=0x10000000 "
        "cmp=com.google.android.dialer/.extensions.GoogleDialtactsActivity} from uid 0")
    assert messages(dev, "Dialer") == ["MainActivity.onCreate"]


def test_set_alarm_with_the_alarm_clock_extras_adds_an_alarm_and_shows_it(phone) -> None:
    out, status = sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR 7 "
                            "--ei android.intent.extra.alarm.MINUTES 30 --es android.intent.extra.alarm.MESSAGE Gym")
    assert (out, status) == ("Starting: Intent { act=android.intent.action.SET_ALARM (has extras) }\n", 0)
    dev = phone.device
    alarm = next(a for a in clock_state(dev).alarms if (a.hour, a.minute) == (7, 30))
    assert alarm.enabled and alarm.label == "Gym"
    assert dev.state.top == "clock" and clock_state(dev).tab == "alarm"
    shown = texts(dev)
    assert "7:30 AM" in shown and "Gym" in shown
    assert messages(dev, "ActivityTaskManager")[0] == (
        "START u0 {act=android.intent.action.SET_ALARM flg=0x10000000 cmp=com.google.android.deskclock/"
        "com.android.deskclock.HandleApiCalls (has extras)} from uid 0")
    assert messages(dev, "AlarmClock")[0] == "Events: [Alarm] [Create] [Intent]"
    assert "nextUserAlarmTime=Tue Nov 24 07:30:00 GMT 2026" in messages(dev, "ConditionProviders.SCP")[-1]
    # the same time and label again switches that alarm on rather than adding another
    alarm.enabled = False
    sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR 7 "
              "--ei android.intent.extra.alarm.MINUTES 30 --es android.intent.extra.alarm.MESSAGE Gym")
    assert [(a.hour, a.minute) for a in clock_state(dev).alarms].count((7, 30)) == 1 and alarm.enabled


def test_set_alarm_skip_ui_leaves_the_screen_and_bad_extras_set_nothing(phone) -> None:
    dev = phone.device
    sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR 22 "
              "--ez android.intent.extra.alarm.SKIP_UI true")
    assert dev.state.top is None and any((a.hour, a.minute, a.enabled) == (22, 0, True) for a in clock_state(dev).alarms)
    before = list(clock_state(dev).alarms)
    sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR 25")
    assert messages(dev, "AlarmClock")[-1] == "Illegal hour: 25"
    sh(phone, "am start -a android.intent.action.SET_ALARM --es android.intent.extra.alarm.HOUR 7")  # not an int
    assert messages(dev, "Bundle") == ["Key android.intent.extra.alarm.HOUR expected Integer but value was a "
                                       "java.lang.String.  The default value -1 was returned."]
    assert clock_state(dev).alarms == before
    assert sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR seven") == (
        'Exception occurred while executing:\njava.lang.NumberFormatException: For input string: "seven"\n', 255)
    # no hour: Clock opens on the Alarm tab with the time picker up
    sh(phone, "am start -a android.intent.action.SET_ALARM")
    assert dev.state.top == "clock" and clock_state(dev).picker is not None and clock_state(dev).alarms == before


@pytest.mark.parametrize("args, shown", [
    ("-a android.settings.NOPE", "act=android.settings.NOPE"),
    ("-a android.intent.action.DIAL -d mailto:a@b.c", "act=android.intent.action.DIAL dat=mailto:xxxxx"),
    ("-a android.intent.action.VIEW -d tel:123 -p com.android.chrome",
     "act=android.intent.action.VIEW dat=tel:xxx pkg=com.android.chrome"),
    ("-a android.settings.DISPLAY_SETTINGS -c android.intent.category.HOME",
     "act=android.settings.DISPLAY_SETTINGS cat=[android.intent.category.HOME]"),
])
def test_intents_no_app_takes_fail_as_am_reports_them(phone, args: str, shown: str) -> None:
    out, status = sh(phone, f"am start {args}")
    assert out == (f"Starting: Intent {{ {shown} }}\n"
                   f"Error: Activity not started, unable to resolve Intent {{ {shown.replace(' pkg', ' flg=0x10000000 pkg') if 'pkg' in shown else shown + ' flg=0x10000000'} }}\n")
    assert status == 1 and phone.device.state.top is None


def test_every_intent_filter_opens_a_page_or_screen_that_exists() -> None:
    from vlui.android.intents import filters

    for f in filters():
        assert f.app in apps(), f
        kind, _, page = f.opens.partition(":")
        assert kind in ("settings", "dial", "set_alarm", "show_alarms"), f
        if kind == "settings":
            assert page == "main" or (page in settings.FRAGMENTS and page in settings.PAGES), f


# ---------------------------------------------------------------------------------------------- typed text
def tap_rid(dev: SimDevice, suffix: str) -> None:
    dev.tap(*center(next(n for n in dev.frame().walk() if n.rid.endswith(suffix))))


@pytest.mark.parametrize("snap", ["000", "030", "105"])  # English, Arabic (right to left), Korean
def test_text_typed_into_settings_search_shows_and_filters_results(snap: str) -> None:
    dev = SimDevice(snap, noise=False)
    dev.launch("settings")
    tap_rid(dev, "search_action_bar")
    assert dev.state.focus == ("settings", "search")
    t = dev.locale.t
    query = t("settings.brightness")[:4]
    dev.text(query)
    shown = texts(dev)
    assert query in shown  # the field shows what was typed
    assert t("settings.brightness") in shown and t("settings.display") in shown  # the result and its breadcrumb
    assert t("settings.bluetooth") not in shown and t("settings.wifi") not in shown
    # the result drawn is the one hit-tested: tapping it opens its page
    result = next(n for n in dev.frame().walk() if n.text == t("settings.brightness"))
    assert hit(dev.frame(), *center(result)) is not None
    dev.tap(*center(result))
    assert dev.top_screen() == {"screen": "display"}
    dev.key("BACK")
    assert dev.top_screen() == {"screen": "search"} and query in texts(dev)


def test_settings_search_results_follow_each_typed_character_and_pixels_change() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("settings")
    tap_rid(dev, "search_action_bar")
    empty = dev.screenshot()
    dev.text("vol")
    assert [n.text for n in dev.frame().walk() if n.rid.endswith(":id/title")] == [
        "Media volume", "Call volume", "Ring volume", "Alarm volume"]
    assert (dev.screenshot() != empty).any()
    dev.text("x")  # "volx": nothing
    assert not [n for n in dev.frame().walk() if n.rid.endswith(":id/title")]


@pytest.mark.parametrize("snap", ["000", "030", "105"])
def test_the_app_drawers_search_box_filters_apps_by_their_labels(snap: str) -> None:
    dev = SimDevice(snap, noise=False)
    dev.swipe(dev.width / 2, dev.height * 0.8, dev.width / 2, dev.height * 0.3)
    assert dev.state.drawer
    tap_rid(dev, "search_box_input")
    label = dev.locale.t("app.clock")
    dev.text(label[:3])
    cells = [n.text for n in dev.frame().walk() if n.cls == "android.widget.TextView" and n.desc == n.text and n.text]
    assert label in cells and dev.locale.t("app.settings") not in cells
    assert label[:3] in texts(dev)
    dev.tap(*center(next(n for n in dev.frame().walk() if n.desc == label)))
    assert dev.state.top == "clock"


def test_launcher_search_matches_word_starts_as_launcher3() -> None:
    from vlui.android.launcher import search_matches

    assert search_matches("Play Music", "mu") and search_matches("Play Music", "PLAY")
    assert not search_matches("Play Music", "usic") and not search_matches("Clock", "")
    assert search_matches("YouTube", "tube")  # a lower-to-upper case change starts a word
    assert search_matches("カレンダー", "レン") and search_matches("الساعة", "ساع")  # scripts without case


# ---------------------------------------------------------------------------------------------- key events
def test_del_and_typed_keys_edit_the_focused_field_and_its_results(phone) -> None:
    dev = phone.device
    dev.launch("settings")
    tap_rid(dev, "search_action_bar")
    assert sh(phone, "input keyevent KEYCODE_V O 40 KEYCODE_X") == ("", 0)  # by name and by number (40: L)
    assert "volx" in texts(dev) and not [n for n in dev.frame().walk() if n.rid.endswith(":id/title")]
    assert sh(phone, "input keyevent DEL") == ("", 0)
    assert "vol" in texts(dev) and "Media volume" in texts(dev)
    assert sh(phone, "input keyevent 66") == ("", 0)  # ENTER submits: the keyboard hides, the results stay
    assert dev.state.focus is None and "Media volume" in texts(dev)


def test_enter_in_the_drawers_search_starts_the_first_app_found(phone) -> None:
    dev = phone.device
    dev.swipe(540, 1700, 540, 500)
    tap_rid(dev, "search_box_input")
    sh(phone, "input text cl")
    assert sh(phone, "input keyevent KEYCODE_ENTER") == ("", 0)
    assert dev.state.top == "clock"


def test_the_dial_pad_takes_typed_digits_and_del(phone) -> None:
    dev = phone.device
    sh(phone, "am start -a android.intent.action.DIAL")
    sh(phone, "input text 555-0199")
    assert dialer_state(dev).digits == "5550199" and "5550199" in texts(dev)
    sh(phone, "input keyevent DEL DEL KEYCODE_STAR")
    assert dialer_state(dev).digits == "55501*" and "55501*" in texts(dev)


@pytest.mark.parametrize("key", ["VOLUME_UP", "KEYCODE_VOLUME_UP", "24"])
def test_volume_up_raises_the_media_volume_as_android_logs_it(phone, key: str) -> None:
    dev = phone.device
    before = dev.state.volume["media"]
    assert sh(phone, f"input keyevent {key}") == ("", 0)
    assert dev.state.volume["media"] == before + 1
    assert [line.split("vol.Events: ")[1] for line in dev.log_lines(tags=["vol.Events"])] == [
        f"writeEvent level_changed STREAM_MUSIC {before + 1}", "writeEvent show_dialog volume_changed keyguard=false"]
    assert " 1402  1439 I vol.Events:" in dev.log_lines(tags=["vol.Events"])[0]  # SystemUI's process
    assert sh(phone, "media volume --stream 3 --get")[0].strip().endswith(f"volume is {before + 1} in range [0..25]")


def test_volume_keys_during_a_call_change_the_call_volume_and_mute_toggles(phone) -> None:
    dev = phone.device
    dev.set_state({"phone": {"call": {"number": "5550123", "started_ms": dev.state.time_ms, "emergency": False}}})
    before = dev.state.volume["call"]
    sh(phone, "input keyevent VOLUME_DOWN")
    assert dev.state.volume["call"] == before - 1
    assert messages(dev, "vol.Events")[0] == f"writeEvent level_changed STREAM_VOICE_CALL {before - 1}"
    dev.set_state({"phone": {"call": None}})
    sh(phone, "input keyevent VOLUME_MUTE")
    assert dev.state.muted == ["media"] and messages(dev, "vol.Events")[-2] == "writeEvent mute_changed STREAM_MUSIC true"
    sh(phone, "input keyevent VOLUME_UP")  # a raise unmutes, then raises
    assert dev.state.muted == [] and "writeEvent mute_changed STREAM_MUSIC false" in messages(dev, "vol.Events")


def test_power_turns_the_display_off_and_on(phone) -> None:
    dev = phone.device
    home = dev.screenshot()
    sh(phone, "input keyevent POWER")
    assert not dev.screenshot().any()  # black
    assert "text=" not in dev.ui_xml().split("<node", 2)[-1] or dev.ui_xml().count("<node") == 1
    sh(phone, "input tap 540 1200")  # nothing registers on a sleeping display
    assert dev.state.top is None
    sh(phone, "input keyevent --longpress POWER")  # the power menu is not simulated: nothing happens
    assert not dev.state.screen_on
    sh(phone, "input keyevent 26")
    assert dev.state.screen_on and (dev.screenshot() == home).all()
    assert messages(dev, "PowerManagerService") == [
        "Going to sleep due to power_button (uid 1000)...",
        "Waking up from Asleep (uid=1000 reason=WAKE_REASON_POWER_BUTTON details=android.policy:POWER)..."]


def test_search_key_opens_the_google_search_field(phone) -> None:
    dev = phone.device
    assert sh(phone, "input keyevent SEARCH") == ("", 0)
    assert dev.state.top == "google" and dev.state.focus == ("google", "query")
    assert any("packageName=com.google.android.googlequicksearchbox" in m for m in messages(dev, "AndroidIME"))


def test_keys_the_phone_has_no_use_for_change_nothing(phone) -> None:
    dev = phone.device
    before = dev.state.copy()
    for key in ("DPAD_DOWN", "TAB", "KEYCODE_MEDIA_PLAY", "999", "NOT_A_KEY", "FORWARD_DEL"):
        assert sh(phone, f"input keyevent {key}") == ("", 0)
    before.time_ms = dev.state.time_ms
    assert dev.state == before


def test_a_long_press_clicks_on_release_where_no_view_has_a_long_press_action(phone) -> None:
    dev = phone.device
    cell = next(n for n in dev.frame().walk() if n.desc == dev.locale.t("app.chrome"))
    x, y = center(cell)
    assert sh(phone, f"input swipe {x} {y} {x} {y} 800") == ("", 0)
    assert dev.state.top == "chrome"
    dev.key("HOME")
    assert sh(phone, f"input swipe {x} {y} {x + 3} {y + 2} 150") == ("", 0)  # within the touch slop: a tap
    assert dev.state.top == "chrome"
