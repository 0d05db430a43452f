"""What a user of the simulated phone sees from key events, implicit intents, typed text and the log lines that
detectors read (issue 14, part B): the screen and XML after a key or typed text, ``am start``'s output and exit
status, and log lines' exact text as Android 10 prints them."""

from __future__ import annotations

import html
import re
import threading

import pytest

from vlui.sim.apps import settings
from vlui.sim.logcat import parse_threadtime
from vlui.sim.phone import SimDevice
from vlui.sim.served import ServedPhone
from vlui.sim.shell import Shell
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
    return ServedPhone("000", noise=False)


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
    assert dev.state.call is None and messages(dev, "Telecom") == []
    assert messages(dev, "ActivityTaskManager")[0] == (
        f"START u0 {{act={action} dat=tel:xxxxxxx flg=0x10000000 "
        "cmp=com.google.android.dialer/.extensions.GoogleDialtactsActivity} from uid 0")
    assert messages(dev, "Dialer") == ["MainActivity.onCreate"]


def test_set_alarm_with_the_alarm_clock_extras_adds_an_alarm_and_shows_it(phone) -> None:
    out, status = sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR 7 "
                            "--ei android.intent.extra.alarm.MINUTES 30 --es android.intent.extra.alarm.MESSAGE Gym")
    assert (out, status) == ("Starting: Intent { act=android.intent.action.SET_ALARM (has extras) }\n", 0)
    dev = phone.device
    alarm = next(a for a in dev.state.alarms if (a.hour, a.minute) == (7, 30))
    assert alarm.enabled and alarm.label == "Gym"
    assert dev.state.top == "clock" and dev.state.clock_tab == "alarm"
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
    assert [(a.hour, a.minute) for a in dev.state.alarms].count((7, 30)) == 1 and alarm.enabled


def test_set_alarm_skip_ui_leaves_the_screen_and_bad_extras_set_nothing(phone) -> None:
    dev = phone.device
    sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR 22 "
              "--ez android.intent.extra.alarm.SKIP_UI true")
    assert dev.state.top is None and any((a.hour, a.minute, a.enabled) == (22, 0, True) for a in dev.state.alarms)
    before = list(dev.state.alarms)
    sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR 25")
    assert messages(dev, "AlarmClock")[-1] == "Illegal hour: 25"
    sh(phone, "am start -a android.intent.action.SET_ALARM --es android.intent.extra.alarm.HOUR 7")  # not an int
    assert messages(dev, "Bundle") == ["Key android.intent.extra.alarm.HOUR expected Integer but value was a "
                                       "java.lang.String.  The default value -1 was returned."]
    assert dev.state.alarms == before
    assert sh(phone, "am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR seven") == (
        'Exception occurred while executing:\njava.lang.NumberFormatException: For input string: "seven"\n', 255)
    # no hour: Clock opens on the Alarm tab with the time picker up
    sh(phone, "am start -a android.intent.action.SET_ALARM")
    assert dev.state.top == "clock" and dev.state.picker is not None and dev.state.alarms == before


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
    from vlui.sim.intents import filters
    from vlui.sim.phone import apps

    for f in filters():
        assert f.app in apps(), f
        kind, _, page = f.opens.partition(":")
        assert kind in ("settings", "dial", "set_alarm", "show_alarms"), f
        if kind == "settings":
            assert page == "main" or (page in settings.FRAGMENTS and page in settings.PAGES), f
