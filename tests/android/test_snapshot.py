"""Snapshots: the 45 B-MoCA environments exactly as in the paper's table, user snapshot files, clear errors."""

from __future__ import annotations

import csv
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
