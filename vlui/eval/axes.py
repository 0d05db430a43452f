"""Success by phone setting: on which of the randomised axes (device, density, font scale, script, layout direction,
theme, ...) a policy fails, and how much the values no training phone takes cost it.

Every evaluated phone (a snapshot of ``envs/``, a generated phone, a user's snapshot file) is described on the axes
B-MoCA randomises, plus which of its values come from the generator's held-out pools (the test-only values of the
test snapshots and the validation values: :class:`~vlui.android.generate.Pools`), which no ``random:N`` training phone
takes. The success of a group of phones (those with one value on one axis) is the mean over training seeds and those
phones, with a bootstrap interval over both (:func:`vlui.eval.metrics.bootstrap_ci`); with few phones in a group the
interval says how little it shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vlui.android import generate
from vlui.android.i18n import is_rtl
from vlui.android.profiles import WALLPAPERS
from vlui.android.snapshot import generator_pools, load_snapshot
from vlui.errors import VluiError
from vlui.eval.metrics import bootstrap_ci

# axis -> how the tables name it. ``held out``: the axes on which the phone takes a value of the generator's
# held-out pools (a phone can be under several, or "none"); ``held-out axes``: how many.
AXES: dict[str, str] = {
    "held_out": "held-out value on",
    "held_out_count": "held-out axes",
    "device": "device",
    "kind": "device kind",
    "screen": "screen (dp, as it stands)",
    "density": "density (x the device's default)",
    "font_scale": "font scale",
    "script": "script",
    "direction": "layout direction",
    "dark_theme": "dark theme",
    "clock_dial": "alarm dial",
    "home_layout": "home layout",
    "wallpaper": "wallpaper",
}
# the settings training batches can be balanced over (data.balance): those with one value per phone
BALANCE = tuple(axis for axis in AXES if axis != "held_out")
# a held-out axis -> the pool axes that hold it out (a device by name, a locale by id or script), as the generator's
# rates count them; a screen is held out when it lies in a held-out region (vlui.android.screens)
HELD_OUT = {"device": ("device",), "density": ("density",), "locale": ("locale", "script"),
            "wallpaper": ("wallpaper",)}


def screen_band(geometry: generate.Geometry, kind: str) -> str:
    """Which band of screens a phone is in: phones by width in dp (under 300, 300-400, 400 and over), tablets by the
    way they stand."""
    if kind == "tablet":
        return "tablet, landscape" if geometry.width_dp > geometry.height_dp else "tablet, portrait"
    width = geometry.width_dp
    return "phone, under 300 dp" if width < 300 else "phone, 300-400 dp" if width < 400 else "phone, 400 dp and over"


def describe(ref: str) -> dict[str, tuple[str, ...]]:
    """The values of the phone ``ref`` (a snapshot id or file) on each of :data:`AXES`, as the tables print them.
    Raises :class:`~vlui.errors.VluiError` for a reference that names no snapshot."""
    snap = load_snapshot(ref)
    values = generate.pool_values(snap)
    pools = generator_pools()
    screen = generate.geometry(snap)
    held = tuple(axis for axis, pool_axes in HELD_OUT.items()
                 if any(values[a] & (pools.test_only.get(a, frozenset()) | pools.validation.get(a, frozenset()))
                        for a in pool_axes))
    if pools.region(screen, "test_only") or pools.region(screen, "validation"):
        held = ("screen", *held)
    layout = snap.home_layout
    return {
        "held_out": held or ("none",),
        "held_out_count": (str(min(len(held), 3)) + ("+" if len(held) >= 3 else ""),),
        "device": (snap.device,),
        "kind": (snap.profile["kind"],),
        "screen": (screen_band(screen, snap.profile["kind"]),),
        "density": (f"x{next(iter(values['density'])):g}",),
        "font_scale": (f"{snap.font_scale:g}",),
        "script": tuple(sorted(values["script"])),
        "direction": ("right to left" if is_rtl(snap.locale) else "left to right",),
        "dark_theme": ("on" if snap.dark_theme else "off",),
        "clock_dial": (snap.clock_dial,),
        "home_layout": ("stock" if layout == "default" else "rearranged",),
        "wallpaper": ("B-MoCA's" if snap.wallpaper in WALLPAPERS else "procedural",),
    }


def group(axis: str, ref: str) -> str:
    """The value of the phone ``ref`` on ``axis`` (one of :data:`BALANCE`); ``unknown`` for a reference that names no
    snapshot (a phone known only to a device)."""
    try:
        return describe(ref)[axis][0]
    except VluiError:
        return "unknown"


def describe_all(refs: Sequence[str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """:func:`describe` of each of ``refs`` that names a snapshot (a phone known only to a device, such as a serial,
    has no settings to group by and is left out)."""
    out = {}
    for ref in refs:
        try:
            out[ref] = describe(ref)
        except VluiError:
            continue
    return out


def _order(value: str) -> tuple:
    """Numbers in numeric order (x0.85 before x1.3), "none" first, then names alphabetically."""
    number = value.removeprefix("x").rstrip("+")
    try:
        return (1, float(number), value)
    except ValueError:
        return (0 if value == "none" else 2, 0.0, value)


def breakdown(phones: Sequence[str], matrix: np.ndarray | Sequence[Sequence[float]],
              described: Mapping[str, Mapping[str, tuple[str, ...]]]) -> list[dict[str, Any]]:
    """Success per axis and value: for each value any of ``phones`` takes on an axis of :data:`AXES`, the mean of
    ``matrix[seed, phone]`` (success rates; NaN where a seed counted no episode on a phone) over the seeds and the
    phones that take it, with the 95% interval of the bootstrap over both. ``described``: :func:`describe_all` of
    the phones (a phone it lacks is in no group). Rows: axis, value, phones, mean, ci_low, ci_high; a group where no
    cell was observed has None."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[1] != len(phones):
        raise ValueError(f"a (seed x phone) matrix over {len(phones)} phones, not shape {m.shape}")
    rows = []
    for axis in AXES:
        groups: dict[str, list[int]] = {}
        for j, phone in enumerate(phones):
            for value in described.get(phone, {}).get(axis, ()):
                groups.setdefault(value, []).append(j)
        for value in sorted(groups, key=_order):
            cells = m[:, groups[value]]
            row = {"axis": axis, "value": value, "phones": len(groups[value]), "mean": None, "ci_low": None,
                   "ci_high": None}
            if not np.isnan(cells).all():
                b = bootstrap_ci(cells)
                row.update(mean=b.mean, ci_low=b.ci95[0], ci_high=b.ci95[1])
            rows.append(row)
    return rows


def _cell(row: dict[str, Any] | None) -> str:
    if row is None or row["mean"] is None:
        return "–"
    return f"{100 * row['mean']:.1f} [{100 * row['ci_low']:.1f}, {100 * row['ci_high']:.1f}]"


def table(columns: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    """Markdown lines of a table: a row per axis and value, a column per :func:`breakdown` of ``columns`` (the same
    phones in each: arms of one study, or one evaluation's policies)."""
    names = list(columns)
    keys = list(dict.fromkeys((r["axis"], r["value"]) for rows in columns.values() for r in rows))
    at = {name: {(r["axis"], r["value"]): r for r in rows} for name, rows in columns.items()}
    lines = ["| setting | value | phones | " + " | ".join(names) + " |", "| --- " * (3 + len(names)) + "|"]
    for axis, value in keys:
        phones = next(at[n][axis, value]["phones"] for n in names if (axis, value) in at[n])
        lines.append(f"| {AXES[axis]} | {value} | {phones} | "
                     + " | ".join(_cell(at[n].get((axis, value))) for n in names) + " |")
    return lines


EXPLAINED = ("Each cell: success in % over the policies (training seeds) and the phones with that setting, and in [ ] "
             "the 95% "
             "interval of the bootstrap over both; a phone counts under every value it has (\"held-out value on\": "
             "the axes on which it takes a value of the generator's held-out pools, test-only or validation, which no "
             "`random:N` training phone takes; \"none\": no such value). Groups of few phones show little.")
