"""Snapshots: the 45 B-MoCA environments exactly as in the paper's table, user snapshot files, clear errors."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

from vlui.android.profiles import device_profiles
from vlui.android.snapshot import ENVS_DIR, load_snapshot, read_snapshot, snapshot_ids
from vlui.errors import VluiError

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "tests" / "reference" / "bmoca_environments.csv"  # B-MoCA Table 3, carried with the tests


def test_splits_have_35_train_and_10_test_snapshots() -> None:
    assert snapshot_ids("train") == [f"{i:03d}" for i in range(35)]
    assert snapshot_ids("test") == [str(i) for i in range(100, 110)]
    assert len(snapshot_ids("all")) == 45


def test_envs_match_the_bmoca_table_exactly() -> None:
    with open(TABLE, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 45
    for row in rows:
        snap = load_snapshot(row["id"])
        assert (snap.split, snap.device, snap.dpi, snap.locale, snap.wallpaper + ".jpg", snap.dark_theme) == (
            row["split"], row["device"], int(row["dpi"]), row["locale"], row["wallpaper"], row["dark_theme"] == "true")


def test_identical_configurations_differ_by_icon_layout() -> None:
    seen: dict[tuple, list] = {}
    for sid in snapshot_ids("all"):
        s = load_snapshot(sid)
        seen.setdefault((s.device, s.dpi, s.locale, s.wallpaper, s.dark_theme), []).append(s.home_layout)
    for layouts in seen.values():
        assert len(layouts) == len(set(layouts)), layouts
    assert sum(len(v) > 1 for v in seen.values()) >= 2  # e.g. 000/001 and 002/003/005/006


def test_both_clock_dials_occur_in_train_and_test() -> None:
    for split in ("train", "test"):
        assert {load_snapshot(s).clock_dial for s in snapshot_ids(split)} == {"circle", "rectangle"}


def test_every_profile_in_use_exists_and_the_tablet_is_landscape() -> None:
    profiles = device_profiles()
    assert {"Pixel 3", "Pixel 4", "Pixel 4 XL", "Pixel 5", "Pixel 6", "WXGA Tablet"} <= set(profiles)
    tablet = profiles["WXGA Tablet"]
    assert tablet["width"] > tablet["height"] and tablet["kind"] == "tablet"


def test_user_snapshot_file_loads_by_path(tmp_path: Path) -> None:
    text = (ENVS_DIR / "000.yaml").read_text().replace("id: '000'", "id: mine").replace("locale: en-US", "locale: ko-KR")
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    snap = load_snapshot(str(path))
    assert (snap.id, snap.locale) == ("mine", "ko-KR")


def test_unknown_snapshot_id_is_a_clear_error() -> None:
    with pytest.raises(VluiError, match=r"unknown snapshot '999'.*ids like 000"):
        load_snapshot("999")
    with pytest.raises(VluiError, match="unknown snapshot split 'valid'"):
        snapshot_ids("valid")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id: x\nlocale: xx-YY\n", "unknown locale 'xx-YY'; choose from: en-US"),
        ("id: x\ndevice: Pixel 99\n", "unknown device 'Pixel 99'; choose from: Pixel 3"),
        ("id: x\ndpi: lots\n", "dpi must be a number between 80 and 1000"),
        ("id: x\ncolour: red\n", "unknown field(s) colour"),
        ("id: x\nclock_dial: hexagon\n", "clock_dial must be one of circle, rectangle"),
        ("id: x\nwallpaper: 099.jpg\n", "unknown wallpaper '099'"),
        ("id: x\ndark_theme: sometimes\n", "dark_theme must be true or false"),
        ("locale: en-US\n", "the field 'id' is required"),
        ("id: x\n  bad: [indent\n", "not a valid YAML snapshot file"),
        ("- just\n- a list\n", "must be a YAML mapping"),
    ],
)
def test_malformed_snapshot_files_get_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(VluiError) as err:
        read_snapshot(path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert str(path) in str(err.value)


# ------------------------------------------------------------------------------------------ screens of their own
def test_a_snapshot_may_give_its_screen_instead_of_a_profile(tmp_path: Path) -> None:
    path = tmp_path / "slate.yaml"
    path.write_text("id: slate\nlocale: en-US\nscreen: {width: 1600, height: 1000, dpi: 200}\n")
    snap = read_snapshot(path)
    # the screen as Android sees it: landscape-natural, a tablet (sw600dp: 800 dp), running at its own density
    assert (snap.device, snap.size, snap.dpi) == ("custom", (1600, 1000), 200)
    assert snap.profile == {"width": 1600, "height": 1000, "dpi": 200, "kind": "tablet",
                            "model": "Android SDK built for x86"}
    again = tmp_path / "again.yaml"
    again.write_text(snap.to_yaml())
    assert dataclasses.replace(read_snapshot(again), source="") == dataclasses.replace(snap, source="")
    phone = tmp_path / "small.yaml"
    phone.write_text("id: small\nlocale: en-US\ndpi: 480\nscreen: {width: 720, height: 1600, dpi: 400, "
                     "kind: phone, orientation: portrait, model: Acme S1}\n")
    small = read_snapshot(phone)
    assert small.dpi == 480 and small.profile["dpi"] == 400 and small.profile["model"] == "Acme S1"
    assert small.home_grid == (4, 5)  # 240 dp wide: the launcher's four columns


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("screen: {width: 0, height: 2400, dpi: 420}", "screen.width must be a whole number between 240 and 8192"),
        ("screen: {width: 1080, height: -5, dpi: 420}", "screen.height must be a whole number between 240 and 8192"),
        ("screen: {width: 1080, height: 2400, dpi: 5000}", "screen.dpi must be a whole number between 80 and 1000"),
        ("screen: {width: 1080, height: 2400}", "screen.dpi is required"),
        ("screen: {width: 1080.5, height: 2400, dpi: 420}", "screen.width must be a whole number"),
        ("screen: {width: 600, height: 2400, dpi: 420}", "more than 3 times as long as it is wide"),
        ("screen: {width: 1080, height: 2400, dpi: 420, kind: watch}", "screen.kind must be one of phone, tablet"),
        ("screen: {width: 1080, height: 2400, dpi: 420, orientation: landscape}",
         "screen.orientation says landscape but 1080x2400 is portrait"),
        ("screen: {width: 1080, height: 2400, dpi: 420, size: 6.1}", "unknown field screen.size"),
        ("screen: 1080x2400", "screen must be a mapping"),
        ("device: Pixel 6\nscreen: {width: 1080, height: 2400, dpi: 420}", "give either device"),
        ("device: custom", "device custom needs a screen"),
        ("screen: {width: 720, height: 1280, dpi: 320}\ndpi: 640",
         "dpi 640 leaves the 720x1280 screen 180 dp wide, under the 200 dp Android lays out; give a dpi of at most 576"),
        ("device: Galaxy Nexus\ndpi: 900", "dpi 900 leaves the 720x1280 screen 128 dp wide"),
    ],
)
def test_an_impossible_screen_is_refused_in_one_line_naming_the_field(tmp_path: Path, content: str,
                                                                      message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"id: x\nlocale: en-US\n{content}\n")
    with pytest.raises(VluiError) as err:
        read_snapshot(path)
    assert message in str(err.value) and "\n" not in str(err.value) and str(path) in str(err.value)


def test_every_snapshot_file_reads_as_it_did() -> None:
    # no snapshot of envs/ gives a screen: each keeps its profile's, and its file is what to_yaml writes
    for ref in snapshot_ids("all"):
        snap = load_snapshot(ref)
        assert snap.screen is None and snap.profile is device_profiles()[snap.device]
        text = (ENVS_DIR / f"{ref}.yaml").read_text(encoding="utf-8")
        assert text.split("\n", 1)[1] == snap.to_yaml()
