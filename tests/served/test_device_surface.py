"""What the served phone's device surface answers, as an Android 10 (API 29) emulator does: the bounds liblog and
init put on log tags and property names, no host path in the console's replies, ``pm install`` of a file that is no
APK, the shared storage's links, the boot log, the dumps and listings tools read, and the console's commands that
change the phone (battery, location, SMS, rotation)."""

from __future__ import annotations

import re
import socket
import threading
from datetime import datetime
from pathlib import Path

import pytest

from vlui.android.logcat import EPOCH, parse_threadtime
from vlui.android.snapshot import ENVS_DIR
from vlui.served.console import EmulatorConsole
from vlui.served.phone import ServedPhone
from vlui.served.shell import LOG_MAX_PAYLOAD, Shell
from vlui.sim.apps.messages import messages_state


@pytest.fixture
def phone() -> ServedPhone:
    return ServedPhone("000", noise=False)


def sh(phone: ServedPhone, command: str) -> tuple[str, int]:
    out: list[bytes] = []
    status = Shell(phone).run(command, out.append, threading.Event())
    return b"".join(out).decode("utf-8", "replace"), status


class Console:
    """A console client on a console without authentication (an empty token file)."""

    def __init__(self, phone: ServedPhone, tmp_path: Path) -> None:
        token = tmp_path / ".emulator_console_auth_token"
        token.write_text("")
        self.server = EmulatorConsole(phone, token_path=token)
        self.sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        self.rfile = self.sock.makefile("rb")
        assert self._answer() == ["Android Console: type 'help' for a list of commands", "OK"]

    def _answer(self) -> list[str]:
        lines = []
        while not lines or not (lines[-1] == "OK" or lines[-1].startswith("KO")):
            lines.append(self.rfile.readline().decode().removesuffix("\r\n"))
        return lines

    def ask(self, line: str) -> list[str]:
        self.sock.sendall(line.encode() + b"\r\n")
        return self._answer()

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()
        self.server.close()


@pytest.fixture
def console(phone, tmp_path):
    client = Console(phone, tmp_path)
    yield client
    client.close()


# ---------------------------------------------------------------------------------------------- bounds at the door
def test_a_log_tag_counts_against_liblogs_entry_limit(phone) -> None:
    """`log -t <500 KB tag> x` once stored a 500 KB entry; liblog's payload (priority, tag, NUL, message, NUL) is
    4,068 bytes, the tag included: a tag that fills it keeps what fits and leaves the message empty."""
    for _ in range(3):
        assert sh(phone, f"log -t {'T' * 50_000} x") == ("", 0)
    long_tagged = [e for e in phone.device.log.entries() if e.tag.startswith("TTT")]
    assert len(long_tagged) == 3
    for e in long_tagged:
        assert 1 + len(e.tag.encode()) + 1 + len(e.message.encode()) + 1 <= LOG_MAX_PAYLOAD + 1
        assert len(e.tag) == LOG_MAX_PAYLOAD - 2 and e.message == ""
    # a long tag that leaves room keeps all of itself, and the message is cut to the rest
    assert sh(phone, f"log -t {'U' * 4000} {'m' * 200}") == ("", 0)
    e = phone.device.log.entries()[-1]
    assert len(e.tag) == 4000 and len(e.message) == LOG_MAX_PAYLOAD - 3 - 4000


def test_property_names_are_bounded_as_android_10_bounds_them(phone) -> None:
    """`setprop <100 KB name> 1` once stored the name: init refuses a name longer than its socket message (64 KiB),
    toybox's setprop refuses an illegal name with init's own reasons, and the property area has 128 KiB."""
    name = "a" * 100_000
    out, status = sh(phone, f"setprop {name} 1")
    assert status == 1 and out == f"setprop: failed to set property '{name}' to '1'\n"
    assert name not in phone.props
    assert sh(phone, "setprop .x 1") == ("setprop: property names must not start or end with '.'\n", 1)
    assert sh(phone, "setprop x. 1") == ("setprop: property names must not start or end with '.'\n", 1)
    assert sh(phone, "setprop a..b 1") == ("setprop: '..' is not allowed in a property name\n", 1)
    assert sh(phone, "setprop 'a/b' 1") == ("setprop: invalid character '/' in name 'a/b'\n", 1)
    assert sh(phone, "setprop vendor.my-prop_1@x:y 1; getprop vendor.my-prop_1@x:y") == ("1\n", 0)
    # the property area fills: 60 KB names fit twice in 128 KiB, not three times
    stored = [sh(phone, f"setprop {chr(ord('b') + i) * 60_000} 1")[1] for i in range(3)]
    assert stored == [0, 0, 1]
    assert sum(len(k) + len(v) for k, v in phone.props.items()) <= 128 << 10
    # values: PROP_VALUE_MAX (92, with the NUL) for all but ro. properties
    assert sh(phone, f"setprop my.value {'v' * 91}")[1] == 0
    assert sh(phone, f"setprop my.value {'v' * 92}")[1] == 1
    assert sh(phone, f"setprop ro.my.value {'v' * 200}")[1] == 0


def test_the_console_names_no_host_path(phone, console) -> None:
    """`avd snapshot load ..` once answered `no ...yaml in <the checkout's envs folder>`."""
    for name in ("..", ".", "nope", "../../etc/passwd", "000.yaml"):
        reply = console.ask(f"avd snapshot load {name}")
        assert reply == [f"KO: unknown snapshot '{name}'"], reply
        assert str(ENVS_DIR) not in "".join(reply) and str(Path.home()) not in "".join(reply)
    assert console.ask("avd snapshot load 030") == ["OK"]


# ---------------------------------------------------------------------------------------------- packages
def test_pm_install_of_a_file_that_is_no_apk(phone) -> None:
    assert sh(phone, "echo hello > /data/local/tmp/bogus.apk")[1] == 0
    out, status = sh(phone, "pm install /data/local/tmp/bogus.apk")
    assert status == 1
    assert re.fullmatch(r"Failure \[INSTALL_PARSE_FAILED_NOT_APK: Failed to parse /data/app/vmdl\d+\.tmp/base\.apk\]\n",
                        out), out
    assert sh(phone, "cmd package install -r /data/local/tmp/bogus.apk")[0].startswith(
        "Failure [INSTALL_PARSE_FAILED_NOT_APK: ")
    assert sh(phone, "pm install /data/local/tmp/none.apk") == ("Error: Can't open file: /data/local/tmp/none.apk\n", 1)


def test_adb_install_of_a_bogus_apk_fails_as_on_an_emulator_and_leaves_no_temp_file(tmp_path) -> None:
    from vlui.served.private_adb import PrivateAdb

    apk = tmp_path / "bogus.apk"
    apk.write_text("not a zip archive\n")
    with PrivateAdb("000", noise=False) as pa:
        result = pa.adb("-s", pa.serial, "install", str(apk))
        assert result.returncode != 0
        assert re.search(r"Failure \[INSTALL_PARSE_FAILED_NOT_APK: Failed to parse /data/app/vmdl\d+\.tmp/base\.apk\]",
                         result.stdout + result.stderr), (result.stdout, result.stderr)
        with pa.phone.lock:
            assert "/data/local/tmp/bogus.apk" not in pa.phone.files


# ---------------------------------------------------------------------------------------------- files
def test_sdcard_is_a_link_to_the_shared_storage(phone) -> None:
    out, status = sh(phone, "ls -l /sdcard")
    assert status == 0 and re.fullmatch(r"lrw-r--r-- 1 root root 21 \S+ \S+ /sdcard -> /storage/self/primary\n", out)
    assert re.fullmatch(r"lrwxrwxrwx 1 root root 19 \S+ \S+ /storage/self/primary -> /mnt/user/0/primary\n",
                        sh(phone, "ls -l /storage/self/primary")[0])
    assert re.search(r"^lrw-r--r-- 1 root root +21 \S+ \S+ sdcard -> /storage/self/primary$",
                     sh(phone, "ls -l /")[0], re.M)
    listing = sh(phone, "ls -l /sdcard/")[0].splitlines()
    assert listing[0] == "total 0"
    assert all(re.match(r"drwxrwx--x 2 root sdcard_rw +4096 ", line) for line in listing[1:]), listing
    assert sh(phone, "ls /storage/emulated/0/") == sh(phone, "ls /sdcard/")
    # the same folder by every name
    assert sh(phone, "echo hi > /storage/emulated/0/a.txt; cat /sdcard/a.txt /storage/self/primary/a.txt") == (
        "hi\nhi\n", 0)
    assert re.fullmatch(r"-rw-rw---- 1 root sdcard_rw 3 \S+ \S+ /sdcard/a.txt\n", sh(phone, "ls -l /sdcard/a.txt")[0])
    assert "/sdcard/a.txt" in phone.files and not any(p.startswith("/storage") for p in phone.files)


def test_proc_cpuinfo_is_the_emulators_virtual_cpu(phone) -> None:
    out, status = sh(phone, "cat /proc/cpuinfo")
    assert status == 0 and out.startswith("processor\t: 0\nvendor_id\t: GenuineIntel\n")
    assert out.count("processor\t: ") == 4 and " sse4_2 " in out and " ssse3 " in out
    assert sh(phone, "rm /proc/cpuinfo") == ("rm: /proc/cpuinfo: Read-only file system\n", 1)


def test_df_reports_the_phones_storage(phone) -> None:
    out, status = sh(phone, "df")
    lines = out.splitlines()
    assert status == 0 and lines[0].split() == ["Filesystem", "1K-blocks", "Used", "Available", "Use%", "Mounted",
                                                "on"]
    data = next(line.split() for line in lines if line.endswith(" /data"))
    assert data[0] == "/dev/block/vdc" and int(data[1]) == phone.files.budget >> 10
    assert sh(phone, "df /sdcard")[0].splitlines()[1].split()[-1] == "/storage/emulated"
    sh(phone, f"echo {'y' * 3000} > /data/local/tmp/big")
    used = int(next(line.split() for line in sh(phone, "df /data")[0].splitlines()[1:])[2])
    assert used == phone.files.used >> 10
    assert sh(phone, "df -h /data")[0].splitlines()[0].split()[:4] == ["Filesystem", "Size", "Used", "Avail"]


# ---------------------------------------------------------------------------------------------- the log
def test_the_log_holds_a_boot_log_after_boot(phone) -> None:
    out, status = sh(phone, "logcat -d")
    lines = out.splitlines()
    assert status == 0 and lines[0] == "--------- beginning of main"
    fields = [parse_threadtime(line) for line in lines[1:]]
    assert all(fields), [line for line, f in zip(lines[1:], fields, strict=True) if not f]
    said = [(f["level"], f["tag"], f["message"]) for f in fields]
    for line in [("I", "vold", "Vold 3.0 (the awakening) firing up"), ("D", "Zygote", "begin preload"),
                 ("I", "SystemServer", "Entered the Android system server!"),
                 ("I", "ActivityManager", "System now ready"),
                 ("I", "ActivityManager", "Finished processing BOOT_COMPLETED for u0")]:
        assert line in said, line
    order = [m for _, _, m in said]
    assert order.index("begin preload") < order.index("Entered the Android system server!") < \
        order.index("System now ready") < order.index("Finished processing BOOT_COMPLETED for u0")
    times = [e.time_ms for e in phone.device.log.entries()]
    assert times == sorted(times) and times[-1] < phone.device.state.time_ms  # booted before the phone's clock
    assert phone.device.log.entries()[0].time_ms > (phone.device.state.time_ms - 60_000)
    # a snapshot loaded from envs/ boots again; later lines are stamped by the clock as before
    phone.load_snapshot("030")
    boot = phone.device.log.entries()
    assert any(e.message == "Entered the Android system server!" for e in boot)
    assert boot[-1].time_ms < phone.device.state.time_ms


# ---------------------------------------------------------------------------------------------- system
def test_getprop_lists_an_emulators_properties(phone) -> None:
    out, _ = sh(phone, "getprop")
    props = dict(re.findall(r"^\[(.*?)\]: \[(.*?)\]$", out, re.M))
    assert len(props) > 150
    for name, value in [("init.svc.surfaceflinger", "running"), ("init.svc.bootanim", "stopped"),
                        ("dalvik.vm.heapsize", "512m"), ("ro.hardware", "ranchu"), ("ro.build.version.sdk", "29"),
                        ("persist.sys.usb.config", "adb"), ("net.hostname", "localhost"), ("sys.boot_completed", "1"),
                        ("ro.property_service.version", "2"), ("wifi.interface", "wlan0")]:
        assert props.get(name) == value, name
    assert sh(phone, "getprop dalvik.vm.heapgrowthlimit") == ("192m\n", 0)
    # an emulator's ro. property is set already: setprop cannot change it
    assert sh(phone, "setprop ro.adb.secure 0")[1] == 1


def test_cmd_lists_its_services_with_the_real_header(phone) -> None:
    out, status = sh(phone, "cmd -l")
    lines = out.splitlines()
    assert status == 0 and lines[0] == "Currently running services:"
    names = [line.strip() for line in lines[1:]]
    assert names == sorted(names) and {"activity", "package", "window", "settings", "SurfaceFlinger"} <= set(names)
    assert all(line.startswith("  ") for line in lines[1:])
    assert sh(phone, "cmd nosuch") == ("cmd: Can't find service: nosuch\n", 20)
    assert sh(phone, "service check SurfaceFlinger") == ("Service SurfaceFlinger: found\n", 0)


def test_env_prints_the_shells_environment(phone) -> None:
    out, status = sh(phone, "env")
    env = dict(line.split("=", 1) for line in out.splitlines())
    assert status == 0 and env["PATH"].startswith("/sbin:/system/sbin:/system/bin") and env["_"] == "/system/bin/env"
    assert env["EXTERNAL_STORAGE"] == "/sdcard" and env["ANDROID_DATA"] == "/data"
    assert "FOO=bar\n" in sh(phone, "env FOO=bar env")[0]  # the command runs with the variable set
    assert "FOO" not in sh(phone, "env")[0]


def test_content_query_reads_the_settings_provider(phone) -> None:
    sh(phone, "settings put system my_key my_value")
    out, status = sh(phone, "content query --uri content://settings/system")
    rows = out.splitlines()
    assert status == 0 and all(re.fullmatch(r"Row: \d+ _id=\d+, name=\w+, value=.*", row) for row in rows), rows
    assert any(row.endswith("name=my_key, value=my_value") for row in rows)
    assert sh(phone, "content query --uri content://settings/system --projection name:value "
                     "--where \"name='my_key'\"") == ("Row: 0 name=my_key, value=my_value\n", 0)
    assert sh(phone, "content query --uri content://settings/global/auto_time --projection value") == (
        "Row: 0 value=1\n", 0)
    assert sh(phone, "content query --uri content://settings/secure --where \"name='none'\"") == (
        "No result found.\n", 0)
    out, status = sh(phone, "content query --uri content://com.example.none/items")
    assert status == 1 and out.startswith("Error while accessing provider:com.example.none\n")


def test_content_query_reads_the_calendars_events(phone) -> None:
    with phone.lock:
        phone.device.set_state({"calendar": {"events": [
            {"title": "Dentist", "day": 1, "hour": 14, "minute": 30, "minutes": 45, "location": "210 Main St"},
            {"title": "Flight", "date": "2026-12-01", "hour": 7, "notes": "Gate B12"}]}})
    start = int((datetime(2026, 11, 24, 14, 30) - EPOCH).total_seconds() * 1000)  # the snapshot boots on the 23rd
    out, status = sh(phone, "content query --uri content://com.android.calendar/events")
    assert status == 0 and out.splitlines()[0] == (
        f"Row: 0 _id=1, calendar_id=1, title=Dentist, description=, eventLocation=210 Main St, dtstart={start}, "
        f"dtend={start + 45 * 60_000}, duration=NULL, allDay=0, eventTimezone=GMT, rrule=NULL, deleted=0")
    assert sh(phone, "content query --uri content://com.android.calendar/events --projection title:description "
                     "--where \"dtstart > 0 AND title LIKE 'f%'\"") == ("Row: 0 title=Flight, description=Gate B12\n", 0)
    assert sh(phone, "content query --uri content://com.android.calendar/events/2 --projection _id:title") == (
        "Row: 0 _id=2, title=Flight\n", 0)
    assert sh(phone, "content query --uri content://com.android.calendar/events --projection title --sort "
                     "'dtstart DESC'") == ("Row: 0 title=Flight\nRow: 1 title=Dentist\n", 0)
    out, status = sh(phone, "content query --uri content://com.android.calendar/events --projection place")
    assert (out, status) == ("Error while accessing provider:com.android.calendar\nandroid.database.sqlite."
                             "SQLiteException: no such column: place\n", 1)
    out, status = sh(phone, "content query --uri content://com.android.calendar/events --where 'title IS NULL'")
    assert status == 1 and "a where clause of comparisons COLUMN OP VALUE" in out
    out, status = sh(phone, "content query --uri content://com.android.calendar/calendars")
    assert status == 1 and out.endswith("Unknown URI content://com.android.calendar/calendars\n")


def test_content_query_reads_the_contacts_as_android_world_and_the_contacts_api_do(phone) -> None:
    with phone.lock:
        phone.device.set_state({"contacts": {"people": [
            {"name": "Alex Kim", "phone": "+1 650-555-0134", "email": "alex@example.com"},
            {"name": "Wei Zhang", "phone": "(415) 555-0123"}, {"name": "Cher"}]}})
    # AndroidWorld's contacts_utils.list_contacts: the legacy phones, parsed with a regular expression
    out, status = sh(phone, "content query --uri content://contacts/phones/ --projection display_name:number")
    assert status == 0 and re.findall(r"display_name=(.*), number=(.*)", out) == [
        ("Alex Kim", "+1 650-555-0134"), ("Wei Zhang", "(415) 555-0123")]
    assert sh(phone, "content query --uri content://com.android.contacts/data/phones --projection "
                     "contact_id:display_name:data1:data2:data4") == (
        "Row: 0 contact_id=1, display_name=Alex Kim, data1=+1 650-555-0134, data2=2, data4=+16505550134\n"
        "Row: 1 contact_id=2, display_name=Wei Zhang, data1=(415) 555-0123, data2=2, data4=4155550123\n", 0)
    assert sh(phone, "content query --uri content://com.android.contacts/data/emails --projection display_name:data1"
              ) == ("Row: 0 display_name=Alex Kim, data1=alex@example.com\n", 0)
    out, _ = sh(phone, "content query --uri content://com.android.contacts/data --projection raw_contact_id:mimetype")
    assert [line.split("mimetype=")[1] for line in out.splitlines() if "raw_contact_id=1," in line] == [
        "vnd.android.cursor.item/name", "vnd.android.cursor.item/phone_v2", "vnd.android.cursor.item/email_v2"]
    assert sh(phone, "content query --uri content://com.android.contacts/contacts --projection "
                     "_id:display_name:has_phone_number --where \"has_phone_number = '0'\"") == (
        "Row: 0 _id=3, display_name=Cher, has_phone_number=0\n", 0)
    assert sh(phone, "content query --uri content://com.android.contacts/raw_contacts/2 --projection "
                     "contact_id:display_name:account_type") == (
        "Row: 0 contact_id=2, display_name=Wei Zhang, account_type=NULL\n", 0)
    assert sh(phone, "content query --uri content://com.android.contacts/contacts/9") == ("No result found.\n", 0)


def test_dumpsys_window_is_as_full_as_android_10s(phone) -> None:
    out, status = sh(phone, "dumpsys window")
    assert status == 0
    for header in ("WINDOW MANAGER LAST ANR (dumpsys window lastanr)", "WINDOW MANAGER POLICY STATE (dumpsys window "
                   "policy)", "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
                   "WINDOW MANAGER TOKENS (dumpsys window tokens)", "WINDOW MANAGER WINDOWS (dumpsys window windows)"):
        assert header in out, header
    windows = sh(phone, "dumpsys window windows")[0]
    names = re.findall(r"^  Window #\d+ Window\{[0-9a-f]+ u0 (.*)\}:$", windows, re.M)
    launcher = "com.google.android.apps.nexuslauncher/com.google.android.apps.nexuslauncher.NexusLauncherActivity"
    assert names == ["NavigationBar", "StatusBar", launcher, "com.android.systemui.ImageWallpaper"]
    assert re.search(r"^  mCurrentFocus=Window\{[0-9a-f]+ u0 " + re.escape(launcher) + r"\}$", windows, re.M)
    assert re.search(r"^  mFocusedApp=AppWindowToken\{.*ActivityRecord\{[0-9a-f]+ u0 "
                     r"com\.google\.android\.apps\.nexuslauncher/\.NexusLauncherActivity t\d+\}\}\}$", windows, re.M)
    displays = sh(phone, "dumpsys window displays")[0]
    assert re.search(r"^    init=1080x2160 440dpi cur=1080x2160 app=1080x\d+ ", displays, re.M)
    assert "  DisplayFrames w=1080 h=2160 r=0\n" in displays
    # an app in front, with the keyboard up
    sh(phone, "am start -n com.android.settings/.Settings")
    windows = sh(phone, "dumpsys window windows")[0]
    assert "u0 com.android.settings/com.android.settings.Settings}:" in windows
    assert "ImageWallpaper" not in windows


# ---------------------------------------------------------------------------------------------- the console
def test_console_power_capacity_sets_the_battery(phone, console) -> None:
    assert console.ask("power capacity 42") == ["OK"]
    assert "  level: 42\n" in sh(phone, "dumpsys battery")[0]
    assert phone.device.state.battery_level == 42
    assert console.ask("power capacity 101") == ['KO: Usage: "capacity <percentage>"']
    for bad in ("x", "¹", "٤٢"):  # not a number to the console, superscripts and Arabic-Indic digits included
        assert console.ask(f"power capacity {bad}") == ['KO: Usage: "capacity <percentage>"']
    assert console.ask("power ac on") == ["OK"] and "  AC powered: true\n" in sh(phone, "dumpsys battery")[0]
    assert console.ask("power display") == ["AC: online", "status: Charging", "health: Good", "present: true",
                                            "capacity: 42", "OK"]
    assert "    power            power related commands" in console.ask("help")


def test_console_geo_fix(phone, console) -> None:
    assert console.ask("geo fix -122.084 37.422") == ["OK"]
    assert console.ask("geo fix -122.084 37.422 12 6") == ["OK"]
    assert console.ask("geo fix -122.084") == [
        'KO: Usage: "geo fix <longitude> <latitude> [<altitude> [<satellites> [<velocity>]]]"']
    assert console.ask("geo fix east 37") == ["KO: argument 'east' is not a number"]
    assert console.ask("geo fix 1 2 3 20") == ["KO: invalid number of satellites. Must be an integer between 1 and 12"]


def test_console_sms_send_posts_a_notification(phone, console) -> None:
    assert console.ask("sms send +15551234 See you at 7") == ["OK"]
    st = phone.device.state
    assert st.headsup is not None and st.headsup["app"] == "messages"
    assert (st.headsup["title"], st.headsup["text"]) == ("+15551234", "See you at 7")
    assert "messages" in st.notifications
    with phone.lock:
        assert "See you at 7" in [n.text for n in phone.device.frame().walk()]  # the heads-up shows on the screen
    (conversation,) = messages_state(phone.device).conversations  # and the message is in Messages, unread
    assert (conversation.number, conversation.name) == ("+15551234", "")
    assert [(m.text, m.direction, m.read) for m in conversation.messages] == [("See you at 7", "in", False)]
    assert console.ask("sms send 555-1234 hi") == ["KO: bad phone number format, must be [+](0-9)*"]
    assert console.ask("sms send 5551234") == [
        "KO: missing argument, try 'sms send <phonenumber> <text message>'"]


def test_console_rotate_turns_the_display(phone, console) -> None:
    assert console.ask("rotate") == ["OK"]
    display = sh(phone, "dumpsys display")[0]
    assert ", rotation 1, " in display and "orientation=1," in display and "deviceWidth=2160" in display
    window = sh(phone, "dumpsys window displays")[0]
    assert "  DisplayFrames w=2160 h=1080 r=1\n" in window and "cur=2160x1080" in window
    assert "mRotation=1 " in window
    for _ in range(3):
        assert console.ask("rotate") == ["OK"]
    assert "  DisplayFrames w=1080 h=2160 r=0\n" in sh(phone, "dumpsys window displays")[0]
    assert sh(phone, "settings get system user_rotation") == ("0\n", 0)
