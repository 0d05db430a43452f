"""Reconfiguring the served phone as shell commands do on a device: what the user sees changes, the state stays."""

from __future__ import annotations

import copy
import dataclasses
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import yaml

from vlui.android import launcher
from vlui.android.apps import LAUNCHER_PKG as LAUNCHER
from vlui.android.i18n import get_locale
from vlui.android.snapshot import ENVS_DIR, load_snapshot
from vlui.errors import VluiError
from vlui.served import configure, device_files
from vlui.served.phone import ServedPhone
from vlui.sim.apps.deskclock import clock_state
from vlui.sim.apps.dialer import DialerState, dialer_state
from vlui.sim.phone import SimDevice


def nodes(xml: str) -> list[dict[str, str]]:
    return [n.attrib for n in ET.fromstring(xml.encode()).iter("node")]


def bounds(xml: str, desc: str) -> str:
    found = [n["bounds"] for n in nodes(xml) if n["content-desc"] == desc]
    assert len(found) == 1, (desc, found)
    return found[0]


def width(xml: str, desc: str) -> int:
    x1, _, x2, _ = (int(v) for v in bounds(xml, desc).replace("][", ",").strip("[]").split(","))
    return x2 - x1


def favorites(phone: ServedPhone) -> list[tuple]:
    con = device_files.open_db(phone.files[launcher.LAUNCHER_DB])
    return con.execute("SELECT title, container, screen, cellX, cellY FROM favorites ORDER BY _id").fetchall()


def run_sql(phone: ServedPhone, sql: str) -> None:
    """What ``sqlite3 DB SQL`` does in the phone's shell: real SQL on the file's bytes."""
    con = device_files.open_db(phone.files[launcher.LAUNCHER_DB])
    con.executescript(sql)
    phone.files[launcher.LAUNCHER_DB] = device_files.db_bytes(con)


@pytest.fixture
def phone() -> ServedPhone:
    return ServedPhone("000", noise=False)


def test_density_resizes_the_ui_and_the_launcher_migrates_its_grid(phone) -> None:
    assert configure.density(phone) == (440, 330)  # 000 overrides the Pixel 3's 440 dpi
    before = phone.device.ui_xml()
    configure.set_density(phone, 550)
    after = phone.device.ui_xml()
    assert configure.density(phone) == (440, 550) and phone.device.density == 550
    assert width(before, "Gmail") < 1080 / 5 < 1080 / 4.5 < width(after, "Gmail")  # 4 columns, not 5
    assert [row[1] for row in favorites(phone)].count(launcher.HOTSEAT) == 4  # the database follows the grid
    configure.set_density(phone, None)
    assert configure.density(phone) == (440, None)
    with pytest.raises(VluiError, match="density"):
        configure.set_density(phone, 20)


def test_font_scale_resizes_text(phone) -> None:
    dev = phone.device
    assert configure.get_setting(phone, "system", "font_scale") == "1.0"
    sizes = [n.size for n in dev.frame().walk() if n.text and n.size]
    shot = dev.screenshot()
    configure.put_setting(phone, "system", "font_scale", "1.3")
    assert configure.get_setting(phone, "system", "font_scale") == "1.3" and dev.snapshot.font_scale == 1.3
    scaled = [n.size for n in dev.frame().walk() if n.text and n.size]
    assert len(scaled) == len(sizes) and all(abs(a / b - 1.3) < 0.05 for a, b in zip(scaled, sizes, strict=True))
    assert not np.array_equal(dev.screenshot(), shot)
    assert configure.delete_setting(phone, "system", "font_scale") == 1
    assert np.array_equal(dev.screenshot(), shot)
    with pytest.raises(VluiError, match="font_scale"):
        configure.put_setting(phone, "system", "font_scale", "huge")
    configure.put_setting(phone, "global", "auto_time", "0")
    assert configure.get_setting(phone, "global", "auto_time") == "0"
    assert configure.get_setting(phone, "secure", "nothing_here") is None


def test_night_mode_darkens_the_screen_at_once(phone) -> None:
    dev = phone.device
    dev.launch("settings")
    light = dev.screenshot().mean()
    assert configure.night_mode(phone) == "no"
    configure.set_night_mode(phone, "yes")
    assert configure.night_mode(phone) == "yes" and dev.state.top == "settings"  # the app keeps running
    assert dev.screenshot().mean() < light - 60
    with pytest.raises(VluiError, match="yes or no"):
        configure.set_night_mode(phone, "maybe")


@pytest.mark.parametrize("tag, locale_id", [("ko-KR", "ko-KR"), ("zh-Hans-CN", "zh-hans-CN"), ("AR-eg", "ar-EG")])
def test_locale_takes_effect_when_the_framework_restarts(phone, tag, locale_id) -> None:
    dev = phone.device
    dev.launch("chrome")
    phone.props["persist.sys.locale"] = tag
    assert dev.locale.id == "en-US" and dev.state.top == "chrome"  # setprop alone changes nothing on screen
    configure.restart_framework(phone)
    assert dev.locale.id == locale_id and dev.state.languages == [locale_id]
    assert dev.state.top is None and dev.state.tasks == {} and dev.state.running == []  # every app died
    labels = {n["content-desc"] for n in nodes(dev.ui_xml())}
    assert get_locale(locale_id).t("app.gmail") in labels
    log = "\n".join(dev.log_lines())
    assert "Zygote" in log and "ActivityManager: System now ready" in log
    assert phone.prop("persist.sys.locale") == tag


def test_a_framework_restart_forgets_what_only_the_apps_processes_held(phone) -> None:
    dev = phone.device
    dev.set_state({"clock": {"tab": "stopwatch", "stopwatch": {"elapsed_ms": 5000}, "picker": {"hour": 7, "minute": 0},
                             "alarms": [{"id": 4, "hour": 6, "minute": 45, "enabled": True}]},
                   "phone": {"digits": "555", "call": {"number": "5550123", "started_ms": dev.state.time_ms}}})
    kept = dataclasses.replace(copy.deepcopy(clock_state(dev)), picker=None)
    configure.restart_framework(phone)
    assert clock_state(dev) == kept  # alarms, tab and stopwatch are in Clock's database and preferences
    assert dialer_state(dev) == DialerState()  # the call and the typed digits are gone with their processes


def test_an_unknown_locale_is_refused_and_nothing_restarts(phone) -> None:
    phone.device.launch("chrome")
    phone.props["persist.sys.locale"] = "xx-YY"
    with pytest.raises(VluiError, match="persist.sys.locale 'xx-YY'"):
        configure.restart_framework(phone)
    assert phone.device.state.top == "chrome" and phone.device.locale.id == "en-US"


def test_launcher_database_round_trip_moves_an_icon(phone) -> None:
    dev = phone.device
    rows = favorites(phone)
    assert ("Gmail", launcher.DESKTOP, 0, 0, 4) in rows and ("Phone", launcher.HOTSEAT, 0, 0, 0) in rows
    before = dev.ui_xml()
    run_sql(phone, "UPDATE favorites SET cellX = 2, cellY = 1 WHERE intent LIKE '%component=com.google.android.gm/%'")
    assert dev.ui_xml() == before  # the running launcher does not watch its database
    configure.force_stop(phone, LAUNCHER)
    after = dev.ui_xml()
    assert bounds(after, "Gmail") != bounds(before, "Gmail")
    assert dev.snapshot.home_layout["workspace"][0] == ["gmail", 1, 2]
    assert bounds(after, "Photos") == bounds(before, "Photos")
    assert "Force stopping com.google.android.apps.nexuslauncher" in "\n".join(dev.log_lines())


def test_launcher_drops_rows_it_cannot_place_and_deletes_them(phone) -> None:
    run_sql(phone, "UPDATE favorites SET cellX = 1, cellY = 4 WHERE title = 'Maps';"  # Photos' cell
                   "UPDATE favorites SET intent = replace(intent, 'com.android.chrome/', 'com.example.gone/') "
                   "WHERE title = 'Chrome'")
    configure.force_stop(phone, LAUNCHER)
    labels = {n["content-desc"] for n in nodes(phone.device.ui_xml())}
    assert "Photos" in labels and "Maps" not in labels and "Chrome" not in labels
    assert [r[0] for r in favorites(phone)] == ["Phone", "Messages", "Play Store", "Camera", "Gmail", "Photos",
                                                "YouTube"]
    log = "\n".join(phone.device.log_lines())
    assert "LoaderCursor: Error loading shortcut Maps" in log and "com.example.gone" in log


def test_an_unreadable_launcher_database_is_recreated_with_the_stock_layout(phone) -> None:
    phone.device.reconfigure(home_layout=7)
    phone.files[launcher.LAUNCHER_DB] = b"not a database"
    configure.force_stop(phone, LAUNCHER)
    assert phone.device.snapshot.home_layout == "default"
    assert len(favorites(phone)) == 9


def test_force_stop_kills_the_app_and_removes_its_task(phone) -> None:
    dev = phone.device
    dev.launch("clock")
    dev.launch("chrome")
    pid = dev.state.pids["chrome"]
    configure.force_stop(phone, "com.android.chrome")
    assert dev.state.top is None and "chrome" not in dev.state.tasks and "chrome" not in dev.state.recents
    assert "chrome" not in dev.state.running and "clock" in dev.state.running
    assert any(n["package"] == LAUNCHER for n in nodes(dev.ui_xml()))
    log = dev.log_lines()
    assert any("ActivityManager: Force stopping com.android.chrome appid=10052 user=0: from pid " in line
               for line in log)
    assert any(f"Killing {pid}:com.android.chrome/u0a52 (adj 0): stop com.android.chrome" in line for line in log)
    configure.force_stop(phone, "com.example.none")
    assert "Invalid packageName: com.example.none" in dev.log_lines()[-1]


def test_wallpaper_file_is_applied_at_restart(phone) -> None:
    dev = phone.device
    png = device_files.wallpaper_png("009", *dev.size)
    for path in device_files.WALLPAPER_FILES:
        phone.files[path] = png
    configure.restart_framework(phone)
    assert dev.snapshot.wallpaper == "009"
    want = SimDevice(dataclasses.replace(load_snapshot("000"), wallpaper="009"))
    want.state.time_ms = dev.state.time_ms
    assert np.array_equal(dev.screenshot(), want.screenshot())


def test_a_wallpaper_without_the_chunk_is_kept_with_a_warning(phone) -> None:
    from io import BytesIO

    from PIL import Image

    out = BytesIO()
    Image.new("RGB", phone.device.size, (255, 0, 0)).save(out, format="PNG")
    phone.files[device_files.WALLPAPER_FILES[1]] = out.getvalue()
    configure.restart_framework(phone)
    assert phone.device.snapshot.wallpaper == "000"
    warning = [line for line in phone.device.log_lines() if " W WallpaperManagerService" in line]
    assert len(warning) == 1 and "no vlui.wallpaper text chunk" in warning[0]


def test_date_sets_the_clock(phone) -> None:
    configure.set_time(phone, datetime(2027, 2, 3, 21, 45))
    clock = next(n for n in phone.device.frame().walk() if n.rid == "com.android.systemui:id/clock")
    assert clock.text == "9:45" and phone.device.now() == datetime(2027, 2, 3, 21, 45)


def test_a_saved_snapshot_keeps_the_new_configuration(phone) -> None:
    configure.set_density(phone, 550)
    configure.set_night_mode(phone, "yes")
    shot, xml = phone.device.screenshot(), phone.device.ui_xml()
    phone.save_snapshot("mine")
    phone.load_snapshot("000")
    assert phone.device.density == 330 and len(favorites(phone)) == 9
    phone.load_snapshot("mine")
    assert np.array_equal(phone.device.screenshot(), shot) and phone.device.ui_xml() == xml


def test_explicit_home_layout_in_a_snapshot_file(tmp_path: Path) -> None:
    data = yaml.safe_load((ENVS_DIR / "000.yaml").read_text())
    data["home_layout"] = {"hotseat": ["chrome", "camera"], "workspace": [["clock", 0, 0], ["maps", 2, 3]]}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(data))
    dev = SimDevice(str(path))
    labels = [n["content-desc"] for n in nodes(dev.ui_xml()) if n["content-desc"]]
    assert {"Chrome", "Camera", "Clock", "Maps"} <= set(labels) and "Gmail" not in labels


def test_a_snapshot_files_home_layout_may_leave_a_hotseat_slot_empty_and_place_an_app_it_installs(tmp_path) -> None:
    """As a launcher database does (B-MoCA's release phones, built from their databases): an empty slot keeps the
    next icon in its own slot, and a third-party app the snapshot installs may have an icon; one it does not
    install is refused by name."""
    data = yaml.safe_load((ENVS_DIR / "000.yaml").read_text())
    data["home_layout"] = {"hotseat": [None, "snapseed"], "workspace": [["calculator", 1, 0]]}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(VluiError, match="home_layout.hotseat: unknown app 'snapseed'"):
        SimDevice(str(path))
    data["state"] = {"installed": ["calculator", "snapseed"]}
    path.write_text(yaml.safe_dump(data))
    dev = SimDevice(str(path))
    xml = dev.ui_xml()
    x1, _, x2, _ = (int(v) for v in bounds(xml, "Snapseed").replace("][", ",").strip("[]").split(","))
    assert (x1 + x2) // 2 > dev.snapshot.size[0] // 2  # the second of the hotseat's two slots
    assert "Calculator" in {n["content-desc"] for n in nodes(xml)}


@pytest.mark.parametrize("layout, message", [
    ({"hotseat": []}, "exactly the keys hotseat and workspace"),
    ({"hotseat": ["chrome"] * 6, "workspace": []}, "home_layout.hotseat must be a list of at most 5"),
    ({"hotseat": ["tiktok"], "workspace": []}, "home_layout.hotseat: unknown app 'tiktok'"),
    ({"hotseat": [], "workspace": [["maps", 5, 0]]}, r"home_layout.workspace\[0\]: cell \(5, 0\) is outside"),
    ({"hotseat": [], "workspace": [["maps", 0, 0], ["clock", 0, 0]]}, r"workspace\[1\]: cell \(0, 0\) holds two"),
    ({"hotseat": [], "workspace": [["maps", 0]]}, r"workspace\[0\] must be \[app, row, column\]"),
])
def test_invalid_explicit_layouts_name_the_field(tmp_path: Path, layout, message) -> None:
    data = yaml.safe_load((ENVS_DIR / "000.yaml").read_text())
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**data, "home_layout": layout}))
    with pytest.raises(VluiError, match=message) as err:
        load_snapshot(str(path))
    assert "\n" not in str(err.value)
