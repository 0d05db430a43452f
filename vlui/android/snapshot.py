"""Device snapshots: a device configuration (profile, density, font scale, locale, wallpaper, theme, home-screen
layout, clock dial) plus initial app state, stored as one YAML file each in ``envs/``.

The 45 B-MoCA environments are ``envs/000.yaml`` … ``envs/034.yaml`` (train) and ``envs/100.yaml`` …
``envs/109.yaml`` (test). Users copy one to make their own and pass its path wherever a snapshot id is accepted.
Generated configurations (:mod:`vlui.android.generate`) have ids ``gen-<seed>-<index>`` and need no file.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from vlui.android import generate
from vlui.android.i18n import locales
from vlui.android.launcher import check_layout, grid, launchable
from vlui.android.profiles import CUSTOM, DEFAULT_TIME, DIALS, WALLPAPERS, device_profiles, is_wallpaper, screen_profile
from vlui.android.screens import check_fits, check_screen
from vlui.android.state import state_problem
from vlui.errors import VluiError
from vlui.resources import shipped

log = logging.getLogger(__name__)
ENVS_DIR = shipped("envs")  # the snapshot definitions: the checkout's envs/, or the installed copy
SPLITS = ("train", "test", "all")
NAMED = (*SPLITS, "val")  # what env.snapshots may name: the splits of envs/ and the validation phones
SNAPSHOT_SPLITS = ("train", "test", "user", "generated", "val", "leaky")  # what a snapshot file's own ``split`` may say


@dataclass(frozen=True)
class Snapshot:
    id: str
    device: str = "Pixel 3"
    dpi: int = 440
    font_scale: float = 1.0
    locale: str = "en-US"
    wallpaper: str = "000"
    dark_theme: bool = False
    # "default" (the Pixel's stock arrangement), a seed for a random one, or explicit:
    # {hotseat: [app, ...], workspace: [[app, row, column], ...]} (app keys as in vlui/android/data/apps.yaml)
    home_layout: str | int | dict[str, Any] = "default"
    clock_dial: str = "circle"  # the alarm time picker's dial: circle | rectangle
    time: str = DEFAULT_TIME  # the virtual clock at load, "YYYY-MM-DD HH:MM"
    split: str = "user"  # train | test for the B-MoCA environments
    state: dict[str, Any] = field(default_factory=dict)  # initial app state (e.g. {airplane_mode: true})
    # a screen of its own instead of a device profile: {width, height, dpi, kind, model} (pixels in the natural
    # orientation, the panel's own density; kind and model optional); ``device`` is then ``custom``
    screen: dict[str, Any] | None = None
    source: str = ""  # the file it was read from

    @property
    def profile(self) -> dict[str, Any]:
        """The screen: ``{width, height, dpi, kind, model}`` of the device profile, or the snapshot's own."""
        return screen_profile(self.device, self.screen)

    @property
    def device_name(self) -> str:
        """The profile's name, or for a screen of its own its size and kind (``1600x1000 tablet``)."""
        return self.device if self.screen is None else f"{self.size[0]}x{self.size[1]} {self.profile['kind']}"

    @property
    def size(self) -> tuple[int, int]:
        return self.profile["width"], self.profile["height"]

    @property
    def home_grid(self) -> tuple[int, int]:
        """(columns, rows) of the home grid of the snapshot's device at its density."""
        return grid(self.size[0], self.dpi, self.profile["kind"] == "tablet")

    @property
    def start_time(self) -> datetime:
        return datetime.strptime(self.time, "%Y-%m-%d %H:%M")

    def to_yaml(self) -> str:
        data = {k: v for k, v in asdict(self).items() if k != "source" and not (k == "screen" and v is None)}
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _check(data: dict[str, Any], where: str) -> Snapshot:
    if not isinstance(data, dict):
        raise VluiError(f"{where}: a snapshot file must be a YAML mapping of fields (see envs/000.yaml)")
    known = {f.name for f in fields(Snapshot)} - {"source"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise VluiError(f"{where}: unknown field(s) {', '.join(unknown)}; valid fields: {', '.join(sorted(known))}")
    if "id" not in data:
        raise VluiError(f"{where}: the field 'id' is required")
    data = {**data, "id": str(data["id"]), "wallpaper": str(data.get("wallpaper", "000")).removesuffix(".jpg")}
    profiles = device_profiles()
    if data.get("screen") is not None:
        if data.get("device", CUSTOM) != CUSTOM:
            raise VluiError(f"{where}: give either device (a profile's name) or screen (a screen of its own), not "
                            "both")
        screen = check_screen(data["screen"], where)
        data = {"dpi": screen["dpi"], **data, "device": CUSTOM, "screen": screen}  # runs at its own density unless told
    elif data.get("device") == CUSTOM:
        raise VluiError(f"{where}: device {CUSTOM} needs a screen: {{width, height, dpi}}")
    elif data.get("device", "Pixel 3") not in profiles:
        raise VluiError(f"{where}: unknown device {data['device']!r}; choose from: {', '.join(profiles)}, or give "
                        "a screen of its own (screen: {width, height, dpi})")
    screen = screen_profile(data.get("device", "Pixel 3"), data.get("screen"))
    if data.get("locale", "en-US") not in locales():
        raise VluiError(f"{where}: unknown locale {data['locale']!r}; choose from: {', '.join(locales())}")
    if data.get("clock_dial", "circle") not in DIALS:
        raise VluiError(f"{where}: clock_dial must be one of {', '.join(DIALS)}, not {data['clock_dial']!r}")
    for name, kind, lo, hi in (("dpi", int, 80, 1000), ("font_scale", (int, float), 0.5, 2.0)):
        value = data.get(name)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool) or not lo <= value <= hi):
            raise VluiError(f"{where}: {name} must be a number between {lo} and {hi}, not {value!r}")
    check_fits(screen["width"], screen["height"], data.get("dpi", Snapshot.dpi), where)
    if not isinstance(data.get("dark_theme", False), bool):
        raise VluiError(f"{where}: dark_theme must be true or false, not {data['dark_theme']!r}")
    try:
        datetime.strptime(str(data.get("time", DEFAULT_TIME)), "%Y-%m-%d %H:%M")
    except ValueError:
        raise VluiError(f"{where}: time must look like '{DEFAULT_TIME}', not {data['time']!r}") from None
    if not isinstance(data.get("state", {}), dict):
        raise VluiError(f"{where}: state must be a mapping of initial app state")
    problem = state_problem(data.get("state") or {})
    if problem:
        raise VluiError(f"{where}: state: {problem}")
    layout = data.get("home_layout", "default")
    if isinstance(layout, dict):  # after the state: the apps it installs may have icons
        problem = check_layout(layout, *grid(screen["width"], data.get("dpi", Snapshot.dpi),
                                             screen["kind"] == "tablet"),
                               launchable((data.get("state") or {}).get("installed", ())))
        if problem:
            raise VluiError(f"{where}: {problem}")
    elif layout != "default" and (not isinstance(layout, int) or isinstance(layout, bool)):
        raise VluiError(f"{where}: home_layout must be 'default', an integer seed or a mapping "
                        f"{{hotseat: [apps], workspace: [[app, row, column], ...]}}, not {layout!r}")
    if data.get("split", "user") not in SNAPSHOT_SPLITS:
        raise VluiError(f"{where}: split must be one of {', '.join(SNAPSHOT_SPLITS)}, not {data['split']!r}")
    if not is_wallpaper(data["wallpaper"]):
        raise VluiError(f"{where}: unknown wallpaper {data['wallpaper']!r}; choose from: {', '.join(WALLPAPERS)}, "
                        "or procedural-<seed> (a wallpaper drawn from a seed)")
    if "locale" not in data:  # en-US by default would turn a forgotten line into a silently English phone
        raise VluiError(f"{where}: the field 'locale' is required; choose from: {', '.join(locales())}")
    return Snapshot(**data, source=where)


def read_snapshot(path: str | Path) -> Snapshot:
    """Read and validate a snapshot file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VluiError(f"snapshot file {path} does not exist") from None
    except IsADirectoryError:
        raise VluiError(f"{path} is a folder, not a snapshot file: give a .yaml file (e.g. envs/000.yaml)") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise VluiError(f"{path}: not a valid YAML snapshot file ({str(err).splitlines()[0]})") from None
    return _check(data, str(path))


@lru_cache(maxsize=256)
def _read_cached(path: str, mtime: float) -> Snapshot:
    return read_snapshot(path)


def load_snapshot(ref: str | Path | Snapshot, envs_dir: str | Path | None = None) -> Snapshot:
    """A snapshot from an id in ``envs/`` (``"000"``), a generated configuration's id (``"gen-0-17"``), a path to a
    snapshot file, or a :class:`Snapshot`."""
    if isinstance(ref, Snapshot):
        return ref
    envs = Path(envs_dir) if envs_dir else ENVS_DIR
    ref = str(ref)
    drawn = generate.parse_generated(ref)
    if drawn is not None:
        return _generated(*drawn, str(envs))
    path = Path(ref) if ref.endswith((".yaml", ".yml")) or "/" in ref else envs / f"{ref}.yaml"
    if not path.exists():
        if path.parent == envs:
            known = ", ".join(snapshot_ids("all", envs)[:6])
            raise VluiError(f"unknown snapshot {ref!r}: no {path.name} in {envs} (ids like {known}, …; "
                            "gen-<seed>-<index> for a generated one; or give the path of a snapshot file)")
        raise VluiError(f"snapshot file {path} does not exist")
    return _read_cached(str(path.resolve()), path.stat().st_mtime)


@lru_cache(maxsize=4096)
def _generated(prefix: str, seed: int, index: int, envs: str) -> Snapshot:
    fields = generate.generated_fields(seed, index, generator_pools(envs), configs_of_test_snapshots(envs), prefix)
    return _check(fields, fields["id"])


@lru_cache(maxsize=8)
def generator_pools(envs: str | Path | None = None) -> generate.Pools:
    """The generator's pools for the snapshots of ``envs``: the values its test snapshots hold out from its training
    snapshots, and the validation values (:class:`~vlui.android.generate.Pools`)."""
    return generate.derive_pools([load_snapshot(i, envs) for i in snapshot_ids("train", envs)],
                                 [load_snapshot(i, envs) for i in snapshot_ids("test", envs)])


@lru_cache(maxsize=8)
def configs_of_test_snapshots(envs: str | Path | None = None) -> frozenset[tuple]:
    """The configurations of the test snapshots, which no generated configuration may equal."""
    return frozenset(generate.config_key(load_snapshot(i, envs)) for i in snapshot_ids("test", envs))


def snapshot_refs(spec: Any, seed: int = 0, holdout: dict[str, Any] | None = None,
                  envs_dir: str | Path | None = None) -> list[str]:
    """The snapshot references a setting names: a split (``train``, ``test``, ``all``), ``val`` (the validation
    phones ``val-0-0`` … ``val-0-49``), ``random:N`` (N generated training phones clear of ``holdout``), ``heldout:N``
    (N in it; ``heldout:N:AXIS`` N held out on that axis of it), ``val:N`` (N validation phones), ``leaky:N`` (N
    training phones that may take the test-only values: only to measure that leak), one id or file, or a list of any
    of these; a generated phone two samples draw is listed once. ``seed`` and ``holdout`` are the generator's
    (``env.generator``); ``val`` is the same phones whatever the seed."""
    items = [spec] if isinstance(spec, (str, int)) else list(spec)
    kept = generate.check_holdout(holdout)
    refs: list[str] = []
    for item in items:
        item = str(item)
        sampled = generate.SAMPLE.fullmatch(item)
        envs = str(Path(envs_dir) if envs_dir else ENVS_DIR)
        if item in SPLITS:
            refs += snapshot_ids(item, envs_dir)
        elif item == "val":
            refs += generate.sample("val", generate.VAL_PHONES, 0, {}, generator_pools(envs))
        elif sampled:
            if sampled.group(1) == "leaky":
                log.warning("%s: these training phones may take the values the test snapshots hold out; a policy "
                            "trained on them has seen the test phones' values (use it only to measure that leak)", item)
            drawn = generate.sample(sampled.group(1), int(sampled.group(2)), seed, kept, generator_pools(envs),
                                    configs_of_test_snapshots(envs), axis=sampled.group(3))
            # heldout:N:locale and heldout:M:orientation may both draw one phone held out on both: it is listed once
            listed = set(refs)
            refs += [ref for ref in drawn if ref not in listed]
        elif item.startswith(tuple(generate.PREFIX)) and ":" in item:
            raise VluiError(f"{item!r}: write random:N, heldout:N, val:N or leaky:N with a whole number N, e.g. "
                            "random:500 (or heldout:N:AXIS for N held out on one axis of the holdout)")
        else:
            refs.append(item)
    if not refs:
        raise VluiError("the snapshot list is empty")
    return refs


def snapshot_ids(split: str = "all", envs_dir: str | Path | None = None) -> list[str]:
    """Ids of the snapshots in ``envs/`` of a split: ``train``, ``test`` or ``all``."""
    if split not in SPLITS:
        raise VluiError(f"unknown snapshot split {split!r}; choose from: {', '.join(SPLITS)}")
    envs = Path(envs_dir) if envs_dir else ENVS_DIR
    ids = []
    for path in sorted(envs.glob("*.yaml")):
        snap = load_snapshot(path.stem, envs)
        if split == "all" or snap.split == split:
            ids.append(snap.id)
    return ids


def held_out(refs: Iterable[str], envs_dir: str | Path | None = None) -> list[str]:
    """The validation phones (``val-<seed>-<index>``) and test snapshots among ``refs`` (snapshot ids), each once, in
    order: the phones results are measured on, which no training may read."""
    test = set(snapshot_ids("test", envs_dir))

    def held(ref: str) -> bool:
        generated = generate.parse_generated(ref)
        return ref in test or (generated is not None and generated[0] == "val")

    return [ref for ref in dict.fromkeys(map(str, refs)) if held(ref)]


def bmoca_snapshots(csv_path: str | Path) -> list[Snapshot]:
    """The 45 B-MoCA environments from their table (``id,split,device,dpi,locale,wallpaper,dark_theme``).

    Environments with identical attributes differ by icon layout: 000 keeps the stock layout, every other one gets
    a random layout seeded by its id. The clock dial alternates so both shapes occur in train and test.
    """
    snaps = []
    with open(csv_path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            num = int(row["id"])
            snaps.append(Snapshot(
                id=row["id"],
                split=row["split"],
                device=row["device"],
                dpi=int(row["dpi"]),
                locale=row["locale"],
                wallpaper=row["wallpaper"].removesuffix(".jpg"),
                dark_theme=row["dark_theme"] == "true",
                home_layout="default" if num == 0 else num,
                clock_dial="rectangle" if num % 4 == 3 else "circle",
            ))
    return snaps


def write_snapshots(snaps: list[Snapshot], envs_dir: str | Path) -> list[Path]:
    envs = Path(envs_dir)
    envs.mkdir(parents=True, exist_ok=True)
    paths = []
    for snap in snaps:
        path = envs / f"{snap.id}.yaml"
        if snap.split in generate.SPLIT.values():
            _, seed, index = generate.parse_generated(snap.id) or (None, None, None)
            header = (f"# Generated configuration {snap.id} (generator version {generate.version()}, seed {seed}, "
                      f"index {index}).\n# Use it by path (env.snapshots=[{path}]) or as any snapshot file; copy "
                      "and edit it to make your own.\n")
        else:
            header = f"# B-MoCA environment {snap.id} ({snap.split}). Copy this file to define your own snapshot.\n"
        path.write_text(header + snap.to_yaml(), encoding="utf-8")
        paths.append(path)
    return paths
