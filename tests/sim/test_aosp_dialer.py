"""AOSP's Dialer (com.android.dialer), the Phone app of B-MoCA release 2.5's phones: the number formatted as
libphonenumber formats it for a US phone (the release's 12 call numbers and more), its main screen, dial pad and
in-call screen with their ids, the log of a call, BACK, a right-to-left locale, a small phone and the tablet, every
locale; and the Pixel's Google dialer left as it was on the other phones."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.sim.driver import nodes, one, tap
from vlui.android.i18n import locales
from vlui.android.launcher import LAUNCHER_DB
from vlui.android.snapshot import ENVS_DIR
from vlui.android.phonenumbers import as_you_type, format_in_original_format, incall_number
from vlui.served import configure, device_files
from vlui.served.phone import ServedPhone
from vlui.served.shell import Shell
from vlui.sim.apps.dialer import dialer_state
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import RELEASE_DIALER, installs, release_tasks

PKG = "com.android.dialer"
SMALL = {"width": 480, "height": 800, "dpi": 320, "kind": "phone", "model": "small"}  # 240 x 400 dp
KEY_IDS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven",
           "8": "eight", "9": "nine"}


def release_phone(snapshot: str = "000", locale: str = "", **changes) -> SimDevice:
    """A phone of a release run (AOSP's Dialer and the release's apps), on its home screen."""
    dev = SimDevice(snapshot, noise=False)
    if locale or changes:
        dev.reconfigure(**({"locale": locale} if locale else {}), **changes)
    dev.install_apps(installs(release_tasks().values()))
    return dev


def rid(name: str, pkg: str = PKG):
    return lambda n: n.rid == f"{pkg}:id/{name}"


def dial(dev: SimDevice, number: str) -> None:
    """Open the Phone app from the home screen, its dial pad, and type ``number`` key by key."""
    dev.launch("phone")
    tap(dev, one(dev, rid("fab"), "the dial pad button"))
    for digit in number:
        tap(dev, one(dev, rid(KEY_IDS[digit]), f"key {digit}"))


def text_of(dev: SimDevice, name: str) -> str:
    return one(dev, rid(name), name).text


# ---------------------------------------------------------------------------------------------------- formatting
RELEASE_NUMBERS = {  # each call task's number as dialled, and what its check reads (spaces removed)
    "b25_call_11489": ("11489", "11489"), "b25_call_1234578": ("1234578", "1234578"),
    "b25_call_2234458": ("2234458", "223-4458"), "b25_call_264451193": ("264451193", "(264)451-193"),
    "b25_call_311311": ("311311", "311311"), "b25_call_4027717": ("4027717", "402-7717"),
    "b25_call_7663394": ("7663394", "766-3394"), "b25_call_9876654": ("9876654", "987-6654"),
    "b25_call_us_contact_center": ("8003334636", "(800)333-4636"),
    "b25_call_weather_service": ("3017130622", "(301)713-0622"),
    "b25_call_social_security": ("8007721213", "(800)772-1213"),
    "b25_call_white_house": ("2024561111", "(202)456-1111"),
}


def test_the_in_call_number_is_what_each_release_check_reads() -> None:
    checks = {t.id: t.evaluator_check[1]["text"]["spaceless"] for t in release_tasks().values()
              if t.id in RELEASE_NUMBERS}
    assert checks == {task: read for task, (_, read) in RELEASE_NUMBERS.items()}
    for task, (number, read) in RELEASE_NUMBERS.items():
        assert incall_number(number).replace(" ", "") == read, task


@pytest.mark.parametrize("number, formatted", [
    ("2024561111", "(202) 456-1111"), ("2234458", "223-4458"),  # the region's two formats
    ("12024561111", "12024561111"),  # the national prefix dialled: formatting would drop it, so the digits stay
    ("11489", "11489"), ("1234578", "1234578"), ("311311", "311311"),  # no format fits: as dialled
    ("264451193", "264451193"), ("20245611112", "20245611112"),  # too long for 7 digits, too short or long for 10
    ("1234567", "1234567"), ("0123456", "0123456"),  # the formats are for numbers that start with 2-9
    ("911", "911"), ("5", "5"), ("*#06#", "*#06#"), ("1" * 18, "1" * 18),  # short, a code, too long to parse
])
def test_format_in_original_format(number: str, formatted: str) -> None:
    assert format_in_original_format(number) == formatted


def test_as_you_type_formats_each_prefix_of_the_digits_as_they_are_typed() -> None:
    typed = [as_you_type("2024561111"[:n]) for n in range(1, 11)]
    assert typed == ["2", "20", "202", "202-4", "202-45", "202-456", "202-4561", "(202) 456-11", "(202) 456-111",
                     "(202) 456-1111"]
    typed = [as_you_type("12024561111"[:n]) for n in range(1, 12)]
    assert typed == ["1", "12", "1 20", "1 202", "1 202-4", "1 202-45", "1 202-456", "1 202-456-1", "1 202-456-11",
                     "1 202-456-111", "1 202-456-1111"]
    assert as_you_type("1234578") == "1 234-578" and as_you_type("264451193") == "(264) 451-193"
    for raw in ("11489", "10234", "0123456", "20245611112", "*#06#", "12*34"):  # nothing a format holds
        assert as_you_type(raw) == raw


def test_the_in_call_screen_formats_a_number_as_far_as_libphonenumber_does() -> None:
    assert incall_number("26445119") == "(264) 451-19"  # 8 digits: the area-code form the dial pad gave them
    assert incall_number("12024561111") == "12024561111" and incall_number("911") == "911"
    assert incall_number("123456789") == "123456789"  # a leading 1 is the national prefix: no area-code form


# ---------------------------------------------------------------------------------------------------- screens
def test_a_release_phone_has_the_aosp_dialer_and_a_papers_phone_the_google_dialer() -> None:
    assert RELEASE_DIALER in installs(release_tasks().values())
    for dev, pkg, activity in ((release_phone(), PKG, "com.android.dialer/.main.impl.MainActivity"),
                               (SimDevice("000", noise=False), "com.google.android.dialer",
                                "com.google.android.dialer/.extensions.GoogleDialtactsActivity")):
        dev.launch("phone")
        lines = "\n".join(dev.log_lines())
        assert f"cmp={activity}" in lines and "I Dialer  : MainActivity.onCreate" in lines, pkg
        assert f"Start proc {dev.state.pids['phone']}:{pkg}/u0a60 " in lines, pkg  # the Phone app's uid, either app
        assert f'package="{pkg}"' in dev.ui_xml() and (PKG in dev.ui_xml()) is (pkg == PKG)


def test_the_main_screen_has_its_bottom_navigation_and_the_dial_pad_button() -> None:
    dev = release_phone()
    dev.launch("phone")
    tabs = [one(dev, rid(name), name) for name in ("speed_dial_tab", "call_log_tab", "contacts_tab")]
    assert [t.desc for t in tabs] == [dev.locale.t("phone.favorites"), dev.locale.t("phone.recents"),
                                      dev.locale.t("phone.contacts")]
    assert [t.selected for t in tabs] == [True, False, False]
    assert not nodes(dev, rid("voicemail_tab"))  # no voicemail account on the emulator
    assert tabs[0].bounds[0] < tabs[1].bounds[0] < tabs[2].bounds[0]
    assert one(dev, rid("fab"), "dial pad button").desc == dev.locale.t("phone.keypad")


def test_a_call_dialled_on_the_dial_pad_shows_the_number_formatted_and_logs_as_telecom_does() -> None:
    dev = release_phone()
    dial(dev, "202456111")
    assert text_of(dev, "digits") == "(202) 456-111"
    tap(dev, one(dev, rid("deleteButton"), "backspace"))
    assert text_of(dev, "digits") == "(202) 456-11" and dialer_state(dev).digits == "20245611"
    for digit in "11":
        tap(dev, one(dev, rid(KEY_IDS[digit]), digit))
    mark = dev.log_mark()
    tap(dev, one(dev, rid("dialpad_floating_action_button"), "call"))
    assert text_of(dev, "contactgrid_contact_name") == "(202) 456-1111"
    assert one(dev, rid("incall_end_call"), "end call").desc == dev.locale.t("phone.end_call")
    lines = dev.log_lines(mark)
    assert any("Telecom" in ln and "processOutgoingCallIntent: handle=tel:2024561111" in ln for ln in lines)
    assert any("cmp=com.android.dialer/com.android.incallui.InCallActivity" in ln for ln in lines)
    assert not any("com.google.android.dialer" in ln for ln in dev.log_lines())
    dev.key("BACK")  # the call goes on: its screen stays
    assert nodes(dev, rid("incall_end_call"))
    mark = dev.log_mark()
    tap(dev, one(dev, rid("incall_end_call"), "end call"))
    assert any("InCallController: onCallRemoved" in ln for ln in dev.log_lines(mark))
    assert text_of(dev, "digits") == "" and dialer_state(dev).call is None  # back on the dial pad, emptied


def test_the_telecom_lines_of_a_call_are_the_same_on_either_dialer() -> None:
    def telecom(dev: SimDevice) -> list[str]:
        dial(dev, "911")
        tap(dev, one(dev, lambda n: n.rid.endswith(":id/dialpad_floating_action_button"), "call"))
        return [ln.split(": ", 1)[1] for ln in dev.log_lines() if " Telecom " in ln or "Telecom:" in ln]

    def dial(dev: SimDevice, number: str) -> None:
        dev.launch("phone")
        tap(dev, one(dev, lambda n: n.rid.endswith(":id/fab"), "the dial pad button"))
        for digit in number:
            tap(dev, one(dev, lambda n, d=digit: n.rid.endswith(f":id/{KEY_IDS[d]}"), digit))

    aosp, google = telecom(release_phone()), telecom(SimDevice("000", noise=False))
    assert aosp == google and any("Emergency number detected: 911" in ln for ln in aosp)


@pytest.mark.parametrize("where", ["rtl", "small", "tablet"])
def test_a_call_on_a_right_to_left_phone_a_small_phone_and_the_tablet(where: str) -> None:
    dev = {"rtl": lambda: release_phone("030"), "small": lambda: release_phone(screen=SMALL, font_scale=1.3),
           "tablet": lambda: release_phone("109")}[where]()
    dev.launch("phone")
    tabs = [one(dev, rid(name), name) for name in ("speed_dial_tab", "contacts_tab")]
    assert (tabs[0].bounds[0] > tabs[1].bounds[0]) is dev.locale.rtl  # mirrored right to left (030: ar-AE)
    dial_pad = one(dev, rid("fab"), "the dial pad button")
    tap(dev, dial_pad)
    keys = [one(dev, rid(KEY_IDS[d]), d) for d in "123"]
    assert keys[0].bounds[0] < keys[1].bounds[0] < keys[2].bounds[0]  # a dial pad is never mirrored
    for node in nodes(dev, lambda n: n.rid.startswith(f"{PKG}:id/")):
        x1, y1, x2, y2 = node.bounds
        assert 0 <= x1 < x2 <= dev.size[0] and 0 <= y1 < y2 <= dev.size[1], node.rid
    for digit in "3017130622":
        tap(dev, one(dev, rid(KEY_IDS[digit]), digit))
    tap(dev, one(dev, rid("dialpad_floating_action_button"), "call"))
    assert text_of(dev, "contactgrid_contact_name") == "(301) 713-0622"


def test_every_screen_draws_in_every_locale() -> None:
    dev = release_phone()
    dial(dev, "2024561111")
    tap(dev, one(dev, rid("dialpad_floating_action_button"), "call"))
    for locale_id in locales():
        dev.reconfigure(locale=locale_id)
        for screen in ("main", "keypad", "incall"):
            dev.state.tasks["phone"] = [{"screen": "main"}] + ([{"screen": screen}] if screen != "main" else [])
            dev.state_changed()
            xml = dev.ui_xml()
            assert (dev.locale.t("phone.favorites") in xml) is (screen == "main"), (locale_id, screen)
        assert dev.screenshot().shape[0] == dev.size[1], locale_id  # the in-call screen drawn


# ---------------------------------------------------------------------------------------------------- served
def test_the_served_phone_names_the_aosp_dialer_where_the_release_phone_has_it() -> None:
    """Over the ADB protocol the package manager lists com.android.dialer (not the Google dialer), ``am start -n``
    starts its MainActivity, and ``DIAL tel:`` opens its dial pad with the number formatted."""
    phone = ServedPhone("000")
    phone.device.install_apps([RELEASE_DIALER])
    packages = sh(phone, "pm list packages dialer")
    assert packages == "package:com.android.dialer\n"
    assert "\nError type 3\n" in sh(phone, "am start -n com.google.android.dialer/.extensions.GoogleDialtactsActivity")
    sh(phone, "am start -a android.intent.action.DIAL -d tel:2024561111")
    dev = phone.device
    assert "cmp=com.android.dialer/.main.impl.MainActivity" in "\n".join(dev.log_lines())
    assert text_of(dev, "digits") == "(202) 456-1111"
    focus = sh(phone, "dumpsys window windows")
    assert "com.android.dialer/com.android.dialer.main.impl.MainActivity" in focus
    # its process is com.android.dialer's: pidof finds it and kill ends it as ActivityManager logs it
    pid = sh(phone, "pidof com.android.dialer").strip()
    assert pid and sh(phone, "pidof com.google.android.dialer") == ""
    sh(phone, f"kill -9 {pid}")
    assert f"Process com.android.dialer (pid {pid}) has died: fg  TOP" in "\n".join(dev.log_lines())


def test_a_served_release_phones_launcher_and_force_stop_know_its_dialer(tmp_path: Path) -> None:
    """A phone booted as a release phone (``dialer: aosp`` in its snapshot): the launcher's database starts
    com.android.dialer from the Phone icon and keeps it when the launcher reloads it; ``am force-stop`` stops it."""
    envs = tmp_path / "envs"
    envs.mkdir()
    (envs / "000.yaml").write_text((ENVS_DIR / "000.yaml").read_text().replace("state: {}", "state: {dialer: aosp}"))
    phone = ServedPhone("000", envs_dir=envs, noise=False)
    con = device_files.open_db(phone.files[LAUNCHER_DB])
    intents = [intent for (intent,) in con.execute("SELECT intent FROM favorites WHERE title = 'Phone'")]
    assert len(intents) == 1 and "component=com.android.dialer/.main.impl.MainActivity;" in intents[0]
    configure.force_stop(phone, "com.google.android.apps.nexuslauncher")  # the launcher reloads its database
    dev = phone.device
    assert "Missing activity" not in "\n".join(dev.log_lines())
    assert nodes(dev, lambda n: n.desc == "Phone")
    dev.launch("phone")
    sh(phone, "am force-stop com.android.dialer")
    assert "Force stopping com.android.dialer appid=" in "\n".join(dev.log_lines())
    assert "phone" not in dev.state.running


def sh(phone: ServedPhone, command: str) -> str:
    out: list[bytes] = []
    Shell(phone).run(command, out.append, threading.Event())
    return b"".join(out).decode()
