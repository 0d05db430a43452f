"""B-MoCA's evaluator checks run on a device (``vlui/tasks/checks.py``): each kind of condition on a small UI tree, a
phone's state or a preferences file, true and false, and what a backend that cannot read one says."""

from __future__ import annotations

import pytest

from vlui.env.ui_text import parse_xml
from vlui.errors import VluiError
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import release_tasks
from vlui.tasks.checks import check_holds, check_reads, prefs_hold, reads_ui

CALC, DIALER = "com.google.android.calculator:id", "com.android.dialer:id"


def node(rid: str = "", text: str = "", desc: str = "", selected: bool = False, checked: bool = False) -> str:
    return (f'<node index="0" text="{text}" resource-id="{rid}" class="android.widget.TextView" package="x" '
            f'content-desc="{desc}" checkable="{str(checked).lower()}" checked="{str(checked).lower()}" '
            f'clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" '
            f'long-clickable="false" password="false" selected="{str(selected).lower()}" bounds="[0,0][100,100]" />')


# a uiautomator dump as a device writes it: two formula fields (Appium's find_element returns the first)
XML = ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
       '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="x" content-desc="" '
       'checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" '
       'scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2160]">'
       + node(f"{CALC}/formula", "1+1") + node(f"{CALC}/result_preview", "2.0000") + node(f"{CALC}/formula", "9")
       + node(f"{DIALER}/contactgrid_contact_name", "(202) 456-1111") + node(f"{DIALER}/incall_end_call")
       + node("com.android.chrome:id/tab_switcher_button", desc="2 open tabs, tap to switch tabs")
       + node("org.wikipedia:id/nav_tab_explore", "Explore", selected=True)
       + node("org.wikipedia:id/switch", checked=False) + node(text="S03", selected=True) + node(text="S04")
       + "</node></hierarchy>\nUI hierchary dumped to: /dev/tty")


@pytest.fixture(scope="module")
def phone() -> SimDevice:
    return SimDevice("000")


def holds(cond: dict, device=None) -> bool:
    return check_holds([cond], device, lambda: parse_xml(XML))


@pytest.mark.parametrize("cond, expected", [
    ({"ui": f"{CALC}/formula"}, True),
    ({"ui": f"{CALC}/result_final"}, False),  # no such element
    ({"ui": f"{CALC}/formula", "text": "1+1"}, True),
    ({"ui": f"{CALC}/formula", "text": "9"}, False),  # the first formula field is read, as Appium's find_element
    ({"ui": f"{CALC}/result_final", "text": ""}, False),
    ({"ui": f"{CALC}/result_preview", "text": {"startswith": "2.00"}}, True),
    ({"ui": f"{CALC}/result_preview", "text": {"startswith": "3"}}, False),
    ({"ui": f"{CALC}/formula", "text": {"in": ["0+1+1", "1+1"]}}, True),
    ({"ui": f"{CALC}/formula", "text": {"in": ["1+2"]}}, False),
    ({"ui": f"{DIALER}/contactgrid_contact_name", "text": {"spaceless": "(202)456-1111"}}, True),
    ({"ui": f"{DIALER}/contactgrid_contact_name", "text": {"spaceless": "202-456-1111"}}, False),
    ({"ui": "com.android.chrome:id/tab_switcher_button", "content_desc": {"includes": "2"}}, True),
    ({"ui": "com.android.chrome:id/tab_switcher_button", "content_desc": {"includes": "3"}}, False),
    ({"ui": "org.wikipedia:id/nav_tab_explore", "selected": True}, True),
    ({"ui": "org.wikipedia:id/nav_tab_explore", "selected": False}, False),
    ({"ui": "org.wikipedia:id/switch", "checked": False}, True),
    ({"ui": "org.wikipedia:id/switch", "checked": True}, False),
    ({"ui": f"{DIALER}/incall_end_call", "displayed": True}, True),
    ({"ui_text": "S03", "selected": True}, True),
    ({"ui_text": "S04", "selected": True}, False),
    ({"ui_text": "S0"}, False),  # an exact text, as UiSelector().text
    ({"any": [{"ui": f"{CALC}/result_final"}, {"ui": f"{CALC}/formula", "text": "1+1"}]}, True),
    ({"any": [{"ui": f"{CALC}/result_final"}, {"ui": f"{CALC}/formula", "text": "2"}]}, False),
])
def test_a_ui_condition_reads_the_first_element_appium_finds(cond: dict, expected: bool) -> None:
    assert holds(cond) is expected


def test_a_check_holds_only_when_every_condition_does() -> None:
    end_call, name = {"ui": f"{DIALER}/incall_end_call"}, {"ui": f"{DIALER}/contactgrid_contact_name"}
    screen = lambda: parse_xml(XML)  # noqa: E731
    assert check_holds([end_call, {**name, "text": {"spaceless": "(202)456-1111"}}], None, screen)
    assert not check_holds([end_call, {**name, "text": {"spaceless": "(800)772-1213"}}], None, screen)


def test_an_alarm_condition_reads_clocks_alarms_as_its_database_holds_them(phone: SimDevice) -> None:
    phone.load_snapshot("000")  # two alarms, both off: 09:00 and 08:30
    assert holds({"alarms": {"has": {"hour": 9, "minutes": 0}}}, phone)
    assert not holds({"alarms": {"has": {"hour": 9, "minutes": 0, "enabled": 1}}}, phone)
    assert not holds({"alarms": {"lacks": {"hour": 9, "minutes": 0}}}, phone)
    assert holds({"alarms": {"lacks": {"hour": 10, "minutes": 30}}}, phone)
    phone.set_state({"clock": {"alarms": [{"id": 1, "hour": 9, "minute": 0, "enabled": True},
                                          {"id": 3, "hour": 10, "minute": 30, "enabled": True}]}})
    assert holds({"alarms": {"has": {"hour": 9, "minutes": 0, "enabled": 1}}}, phone)
    assert not holds({"alarms": {"lacks": {"hour": 10, "minutes": 30}}}, phone)
    # the simulated Clock's alarms never repeat: an alarm on weekdays (Monday to Friday, 31) is never there
    assert holds({"alarms": {"has": {"hour": 10, "minutes": 30, "daysofweek": 0}}}, phone)
    assert not holds({"alarms": {"has": {"hour": 10, "minutes": 30, "daysofweek": 31}}}, phone)


def test_a_volume_condition_reads_the_streams_level(phone: SimDevice) -> None:
    phone.load_snapshot("000")
    phone.set_state({"volume": {"alarm": 1, "media": 9}})
    assert [holds({"volume": "alarm", "above": n}, phone) for n in (0, 1)] == [True, False]
    phone.set_state({"volume": {"alarm": 6}})
    assert holds({"volume": "alarm", "above": 1}, phone) and not holds({"volume": "media", "above": 9}, phone)


PREFS = """<?xml version='1.0' encoding='utf-8' standalone='yes' ?>
<map>
    <boolean name="pref_appearance_use_dark_theme" value="true" />
    <int name="textSizeMultiplier" value="-5" />
    <string name="pref_export_setting_compression">100</string>
    <string name="feedCardsEnabled">[false,true,true,true,true,true,true,true,true,true]</string>
</map>
"""


@pytest.mark.parametrize("entry, expected", [
    ({"boolean": "pref_appearance_use_dark_theme", "equals": True}, True),
    ({"boolean": "pref_appearance_use_dark_theme", "equals": False}, False),
    ({"boolean": "showLinkPreviews", "equals": False}, False),  # never written: the default holds
    ({"int": "textSizeMultiplier", "equals": -5}, True),
    ({"int": "textSizeMultiplier", "equals": 8}, False),
    ({"string": "pref_export_setting_compression", "equals": "100"}, True),
    ({"string": "pref_export_setting_compression", "equals": "90"}, False),
    ({"last": True, "equals": "[false,true,true,true,true,true,true,true,true,true]"}, True),
    ({"last": True, "equals": "[true,true,true,true,true,true,true,true,true,true]"}, False),
])
def test_a_prefs_condition_reads_the_apps_preferences_file(entry: dict, expected: bool) -> None:
    cond = {"prefs": "snapseed", "file": "Preferences.xml", **entry}
    assert prefs_hold(cond, PREFS) is expected
    assert prefs_hold(cond, None) is False  # the app never wrote the file
    with pytest.raises(VluiError, match="snapseed app's Preferences.xml is not a shared-preferences file"):
        prefs_hold(cond, "<map><boolean")


def test_what_a_device_cannot_read_is_an_error_naming_the_task_never_a_false(phone: SimDevice) -> None:
    check = [{"prefs": "notes", "file": "Notes.xml", "boolean": "pref_dark", "equals": True}]  # an app vlui lacks
    with pytest.raises(VluiError) as e:
        check_holds(check, phone, lambda: parse_xml(XML), "notes_dark")
    assert str(e.value) == "task notes_dark: SimDevice cannot read the notes app's shared preferences (Notes.xml)"
    # Snapseed's it reads: no file where it is not installed, an empty map until a setting is made
    task = release_tasks()["b25_snapseed_dark_theme"]
    assert check_holds(task.evaluator_check, phone, lambda: parse_xml(XML), task.id) is False


def test_a_check_names_what_it_reads_besides_the_ui_tree() -> None:
    release = release_tasks()
    assert check_reads(release["b25_alarm_1330_and_alarm_volume"].evaluator_check) == ["alarms", "volume.alarm"]
    assert check_reads(release["b25_wikipedia_no_previews_top_read"].evaluator_check) == ["wikipedia.shared_prefs"]
    assert check_reads(release["b25_call_white_house"].evaluator_check) == []
    assert reads_ui(release["b25_call_white_house"].evaluator_check)
    assert reads_ui(release["b25_calc_geometric_mean"].evaluator_check)  # inside an any
    assert not reads_ui(release["b25_alarm_1330_and_alarm_volume"].evaluator_check)
