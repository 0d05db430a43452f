"""B-MoCA release 2.5's home screens (vlui/tasks/data/bmoca25_home.yaml, from its home_screen_db): a run of the
release's tasks lays each snapshot's home screen out as the release's database for that snapshot does, on the
phone's own grid; a run of the paper's tasks leaves every home screen as it was."""

from __future__ import annotations

import dataclasses
import importlib.util
import sqlite3
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.sim.driver import tap
from vlui.android.apps import third_party
from vlui.android.launcher import (
    FAVORITES_COLUMNS,
    FAVORITES_SCHEMA,
    ITEM_APPLICATION,
    LAUNCHABLE,
    favorites_rows,
    fit_layout,
    launchable,
)
from vlui.android.snapshot import load_snapshot, snapshot_ids
from vlui.device import HomeScreen
from vlui.env.env import PhoneEnv
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import release_home, release_homes, release_pins, release_tasks, resolve_tasks

LAUNCHER = "com.google.android.apps.nexuslauncher"
# 240 x 530 dp: the narrowest and shortest phone the generator draws (vlui/android/data/generator.yaml)
SMALL = {"width": 480, "height": 1060, "dpi": 320, "kind": "phone", "model": "small"}


def home_icons(dev: SimDevice) -> dict[str, str]:
    """The home screen's icons: label -> the container that holds it (``workspace`` or ``hotseat``)."""
    icons = {}
    for container in dev.frame().walk():
        if container.rid in (f"{LAUNCHER}:id/workspace", f"{LAUNCHER}:id/hotseat"):
            for cell in container.children:
                icons[cell.text] = container.rid.rsplit("/", 1)[1]
    return icons


def database_apps(home: HomeScreen) -> set[str]:
    return {a for a in home.hotseat if a is not None} | {a for a, _, _ in home.workspace}


def release_phone(snapshot, home: HomeScreen) -> SimDevice:
    dev = SimDevice(snapshot, noise=False)
    dev.install_apps(list(release_pins().values()), home)
    return dev


def test_the_release_has_a_home_screen_for_each_of_its_45_snapshots_and_two_hold_all_its_apps() -> None:
    """One database per snapshot (train_env_000 ... test_env_109); every app on it is one vlui has. Only the
    databases of 000 and 100 hold all five of the release's apps: the others hold some or none."""
    homes = release_homes()
    assert sorted(homes) == snapshot_ids("all")
    assert [s for s, h in homes.items() if set(third_party()) <= database_apps(h)] == ["000", "100"]
    assert sum("snapseed" in database_apps(h) for h in homes.values()) == 14


@pytest.mark.parametrize("snapshot", snapshot_ids("all"))
def test_a_release_run_shows_each_snapshots_own_database(snapshot: str) -> None:
    """Through the environment, as a run of the release's tasks resets: the home screen holds the database's apps,
    no other, each hotseat app in the hotseat."""
    env = PhoneEnv(SimDevice(snapshot, noise=False), [release_tasks()["b25_open_snapseed"]], [snapshot],
                   include_xml=True, include_screen=False)
    env.reset(options={"snapshot": snapshot})
    home = release_homes()[snapshot]
    loc = env.device.locale
    assert home_icons(env.device) == {
        **{loc.t(f"app.{a}"): "workspace" for a, _, _ in home.workspace},
        **{loc.t(f"app.{a}"): "hotseat" for a in home.hotseat if a is not None}}


@pytest.mark.parametrize("where", ["small", "tablet"])
def test_every_release_app_is_on_the_first_page_of_a_small_phone_and_a_tablet_right_to_left(where: str) -> None:
    """Snapshot 000's database (a 5 x 5 grid) on a phone 240 dp wide (4 columns) and on the tablet (6 x 4), in
    Arabic: every app of it on the home screen, the release's five among them, each starting its app when tapped."""
    snap = load_snapshot("109") if where == "tablet" else dataclasses.replace(
        load_snapshot("000"), device="custom", dpi=320, screen=SMALL)
    snap = dataclasses.replace(snap, locale="ar-EG")
    home = release_homes()["000"]
    dev = release_phone(snap, home)
    assert dev.locale.rtl
    icons = home_icons(dev)
    assert sorted(icons) == sorted(dev.locale.t(f"app.{a}") for a in database_apps(home))
    for key in third_party():
        dev.key("HOME")
        cell = next(n for n in dev.frame().walk() if n.text == dev.locale.t(f"app.{key}") and n.on_tap is not None)
        x1, y1, x2, y2 = cell.bounds
        assert 0 <= x1 < x2 <= dev.width and 0 <= y1 < y2 <= dev.height
        tap(dev, cell)
        assert dev.state.top == key


def test_a_database_fits_grids_of_other_sizes() -> None:
    """On 4 columns the fifth column's icons move inward, to the nearest free cell of their row; on 4 rows the rows
    count from the hotseat; a hotseat slot past the grid's last goes to the nearest free one, and a hotseat icon with
    none free to the workspace's first free cell; apps the phone lacks are left out."""
    home = HomeScreen(("phone", None, "chrome", None, "maps"),
                      (("gmail", 1, 3), ("photos", 1, 4), ("snapseed", 4, 4), ("clock", 4, 0)), 5, "test")
    hotseat, workspace = fit_layout(home, 4, 5, launchable(["snapseed"]))
    assert hotseat == ("phone", None, "chrome", "maps")
    assert workspace == (("photos", 1, 2), ("gmail", 1, 3), ("clock", 4, 0), ("snapseed", 4, 3))
    _, workspace = fit_layout(home, 6, 4, LAUNCHABLE)  # no snapseed: not installed
    assert workspace == (("gmail", 0, 3), ("photos", 0, 4), ("clock", 3, 0))
    for home in release_homes().values():  # every database keeps all its icons on every grid vlui draws
        for columns, rows in ((4, 5), (5, 5), (6, 4)):
            hotseat, workspace = fit_layout(home, columns, rows, launchable(third_party()))
            placed = [a for a in hotseat if a is not None] + [a for a, _, _ in workspace]
            assert sorted(placed) == sorted(database_apps(home)), (home.source, columns, rows)
    full = HomeScreen(("phone", "chrome", "maps", "gmail", "clock"), (), 5, "test")
    hotseat, workspace = fit_layout(full, 4, 5, LAUNCHABLE)
    assert hotseat == ("phone", "chrome", "maps", "gmail") and workspace == (("clock", 0, 0),)


def test_the_paper_runs_and_the_snapshots_keep_their_own_home_screens() -> None:
    """A run of the paper's tasks takes no database (its phones are what they always were), nor does a snapshot the
    release has none for; a release run's database stays until the next snapshot is loaded."""
    assert release_home(resolve_tasks(["open_calendar"], backend="sim"), "000") is None
    assert release_home(release_tasks().values(), "gen-0-6") is None
    for snapshot in ("001", "109"):
        before = SimDevice(snapshot, noise=False).ui_xml()
        env = PhoneEnv(SimDevice(snapshot, noise=False), resolve_tasks(["open_calendar"], backend="sim"), [snapshot],
                       include_xml=True, include_screen=False)
        env.reset(options={"snapshot": snapshot})
        assert env.device.ui_xml() == before
        dev = release_phone(snapshot, release_homes()[snapshot])
        assert dev.ui_xml() != before
        dev.load_snapshot(snapshot)
        assert dev.ui_xml() == before


def _home_script():
    path = Path(__file__).resolve().parents[1] / "reference" / "make_bmoca25_home.py"
    spec = importlib.util.spec_from_file_location("make_bmoca25_home", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _launcher_db(path: Path, layout, item_type: int = ITEM_APPLICATION) -> None:
    """A launcher database as Launcher3 writes one, holding ``layout``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute(FAVORITES_SCHEMA)
    con.executemany(f"INSERT INTO favorites ({', '.join(FAVORITES_COLUMNS)}) VALUES ({', '.join('?' * 12)})",
                    [(*row[:9], item_type, *row[10:]) for row in favorites_rows(layout, "en-US")])
    con.commit()
    con.close()


def test_the_script_reads_each_snapshots_home_screen_from_the_releases_databases(tmp_path: Path) -> None:
    """make_bmoca25_home.py on a clone holding two of the release's databases (written as Launcher3 writes them)
    gives back their hotseats by slot and their first pages; a database with anything but app icons stops it."""
    root = tmp_path / "b-moca"
    dbs = root / "asset/environments/resource/home_screen_db"
    for name, snapshot in (("train_env_000.db", "000"), ("test_env_109.db", "109")):
        home = release_homes()[snapshot]
        _launcher_db(dbs / name, (home.hotseat, home.workspace))
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fake"], check=True)
    out = tmp_path / "home.yaml"
    _home_script().main([str(root), "--out", str(out)])
    phones = yaml.safe_load(out.read_text(encoding="utf-8"))["phones"]
    assert list(phones) == ["000", "109"]
    for snapshot, raw in phones.items():
        home = release_homes()[snapshot]
        assert (tuple(raw["hotseat"]), tuple(tuple(w) for w in raw["workspace"])) == (home.hotseat, home.workspace)
    _launcher_db(dbs / "train_env_001.db", (("phone",), ()), item_type=4)  # a widget
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "widget"], check=True)
    with pytest.raises(SystemExit, match="train_env_001.db"):
        _home_script().main([str(root), "--out", str(out)])
