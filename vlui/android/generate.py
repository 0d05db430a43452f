"""Device configurations drawn from a seed: as many as a study wants, each reproducible from its id.

Three disjoint pools of values keep evaluation honest (docs/evaluation.md, "Held out means held out"):

- the *test-only* values, which the test snapshots use and no training snapshot does (the regions of screens around
  their screens, :mod:`vlui.android.screens`; devices by name, densities, locales, scripts, wallpapers, home
  layouts), are derived from ``envs/`` and never drawn for training;
- the *validation* values and screens (``generator.yaml``'s ``validation`` section) are drawn only for validation
  phones;
- everything else is the training pool.

``random:N`` gives training phones ``gen-<seed>-<index>``: the first N indices clear of a holdout (``heldout:N`` the
first N in it, so the two never share one). ``val:N`` gives validation phones ``val-<seed>-<index>``, which take a
validation value on an axis as often as the test snapshots hold a test-only value there. ``leaky:N`` gives
``leaky-<seed>-<index>``: training phones that may take test-only values, only to measure what that leak is worth.
The same id is the same configuration on every machine (for one ``version`` of ``data/generator.yaml``). No
generated configuration equals one of the test snapshots (``avoid``): a draw that would is drawn again.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from vlui.android.i18n import locales
from vlui.android.profiles import CUSTOM, DATA_DIR, DIALS, WALLPAPERS, device_profiles, screen_profile
from vlui.android.screens import Geometry, Region, check_screen, draw, held_out_regions
from vlui.android.state import NOTIFYING_APPS
from vlui.errors import VluiError
from vlui.resources import read_yaml

GENERATED = re.compile(r"(gen|val|leaky)-(\d{1,9})-(\d{1,9})")  # the id of a generated configuration
# env.snapshots=random:500 / heldout:100 / val:50 / heldout:100:orientation (held out on that axis of the holdout)
SAMPLE = re.compile(r"(random|heldout|val|leaky):(\d{1,7})(?::([a-z_]+))?")
# the pool a sample draws from -> the prefix of its ids
PREFIX = {"random": "gen", "heldout": "gen", "val": "val", "leaky": "leaky"}
SPLIT = {"gen": "generated", "val": "val", "leaky": "leaky"}  # a generated configuration's split, by id prefix
VAL_PHONES = 50  # env.snapshots=val: the validation phones val-0-0 … val-0-49
# What a holdout may name, and the values a configuration has on each axis.
HOLDOUT_AXES = ("device", "locale", "script", "dark_theme", "font_scale", "density", "clock_dial", "wallpaper",
                "orientation")
# The axes on which the test snapshots' values are kept out of training (every value the test snapshots use and no
# training snapshot does): a device by name and by its panel (two profiles with one panel are one screen), the
# screen (panel and dpi), the density factor, the locale and its script, the wallpaper and the home layout's seed.
POOL_AXES = ("device", "density", "locale", "script", "wallpaper", "home_layout")
MAX_SCAN = 200  # a sample looks at no more than this many indices per configuration it asks for
REDRAWS = 100  # draws of one index before giving up on keeping clear of the test snapshots


@lru_cache(maxsize=1)
def distribution() -> dict[str, Any]:
    """The generator's distribution (``data/generator.yaml``)."""
    return read_yaml(DATA_DIR / "generator.yaml")


def version() -> int:
    return int(distribution()["version"])


def _weighted(rng: random.Random, table: Mapping[Any, float]) -> Any:
    keys = list(table)
    return rng.choices(keys, weights=[float(table[k]) for k in keys])[0]


# ---------------------------------------------------------------------------------------------------------- pools
@dataclass(frozen=True)
class Pools:
    """The three disjoint pools of values generated configurations draw from.

    ``test_only``: per :data:`POOL_AXES` axis, the values the test snapshots use and no training snapshot does,
    derived from the snapshot files (never written down by hand); ``test_regions``: the regions of screens around the
    test snapshots' screens that no training snapshot has (:func:`~vlui.android.screens.held_out_regions`).
    ``validation`` and ``validation_regions``: the values and the screens of ``generator.yaml``'s ``validation``
    section, which no training draw takes either and which share nothing with the test's. ``rates``: per held-out
    axis (``screen``, ``density``, ``locale``, ``wallpaper``), the share of test snapshots that hold a test-only value
    there; a validation phone takes a validation value on an axis that often, so that validation is as far from
    training as the test snapshots are. ``tablets``: the share of tablets among the test snapshots on screens no
    region holds, and ``font_scales`` the test snapshots' font scales: validation phones draw the same mix.
    Training draws (``random:N``) take neither pool's values; validation draws (``val:N``) never a test-only one;
    only ``leaky:N``, there to measure the leak, takes test-only values (never validation ones)."""

    test_only: Mapping[str, frozenset]
    validation: Mapping[str, frozenset]
    rates: Mapping[str, float]
    test_regions: tuple[Region, ...] = ()
    validation_regions: tuple[Region, ...] = ()
    tablets: float = 0.0
    font_scales: tuple[float, ...] = (1.0,)

    def clear(self, values: Mapping[str, set], pool: str) -> bool:
        """Whether a configuration's :func:`pool_values` stay clear of the pool ``test_only`` or ``validation``."""
        kept = self.test_only if pool == "test_only" else self.validation
        return not any(values.get(axis, set()) & kept.get(axis, frozenset()) for axis in POOL_AXES)

    def region(self, geometry: Geometry, pool: str) -> Region | None:
        """The region of the pool ``test_only`` or ``validation`` that holds a screen's geometry, if any."""
        regions = self.test_regions if pool == "test_only" else self.validation_regions
        return next((r for r in regions if r.contains(geometry)), None)


def geometry(config: Mapping[str, Any] | Any) -> Geometry:
    """The screen of a configuration (a mapping of snapshot fields, or a snapshot) at the density it runs at."""
    get = _fields(config)
    screen = screen_profile(get("device"), get("screen"))
    return Geometry.of(screen["width"], screen["height"], int(get("dpi")))


def pool_values(config: Mapping[str, Any] | Any) -> dict[str, set]:
    """A configuration's values on each of :data:`POOL_AXES` (a mapping of snapshot fields, or a snapshot)."""
    get = _fields(config)
    screen = screen_profile(get("device"), get("screen"))
    dpi = int(get("dpi"))
    layout = get("home_layout", "default")
    return {"device": {get("device")} - {CUSTOM}, "density": {round(dpi / screen["dpi"], 2)},
            "locale": {get("locale")}, "script": {locales()[get("locale")]["script"]},
            "wallpaper": {str(get("wallpaper"))},
            "home_layout": {layout} if isinstance(layout, int) and not isinstance(layout, bool) else set()}


def derive_pools(train: Sequence[Any], test: Sequence[Any]) -> Pools:
    """The pools of a set of snapshots: the test-only values and screen regions of ``test`` against ``train``
    (snapshots), the validation values and screens of ``generator.yaml``, and the rates of validation values; a
    validation value that a training snapshot uses, or that the test snapshots hold out, is an error in
    ``generator.yaml``, and so is a validation screen whose region meets a test region or holds a training
    snapshot's screen."""
    seen: dict[str, set] = {axis: set() for axis in POOL_AXES}
    for snap in train:
        for axis, values in pool_values(snap).items():
            seen[axis] |= values
    per_test = [pool_values(snap) for snap in test]
    test_only = {axis: frozenset(set().union(*(v[axis] for v in per_test)) - seen[axis]) for axis in POOL_AXES}
    trained = [geometry(snap) for snap in train]
    test_regions = tuple(held_out_regions(trained, [(snap.id, (*snap.size, snap.dpi, snap.profile["kind"]))
                                                    for snap in test]))
    validation = _validation_values()
    for axis, values in validation.items():
        clash = (values & test_only[axis]) or (values & seen[axis])
        if clash:
            where = "the test snapshots hold it out" if values & test_only[axis] else "a training snapshot uses it"
            raise VluiError(f"generator.yaml: validation {axis} {sorted(map(str, clash))[0]!r} cannot be a validation "
                            f"value: {where}")
    validation_regions = _validation_regions(trained, test_regions)
    # a validation phone takes a validation value on an axis as often as a test snapshot holds a test-only one there:
    # screen (in a test region), density (the factor), locale (or its script), wallpaper
    in_region = [any(r.contains(geometry(snap)) for r in test_regions) for snap in test]
    groups = {"density": ("density",), "locale": ("locale", "script"), "wallpaper": ("wallpaper",)}
    rates = {axis: sum(any(v[a] & test_only[a] for a in axes) for v in per_test) / len(per_test) if per_test else 0.0
             for axis, axes in groups.items()}
    rates = {"screen": sum(in_region) / len(test) if test else 0.0, **rates}
    rest = [snap for snap, held in zip(test, in_region, strict=True) if not held]
    tablets = sum(snap.profile["kind"] == "tablet" for snap in rest) / len(rest) if rest else 0.0
    font_scales = tuple(sorted(float(snap.font_scale) for snap in test)) or (1.0,)
    return Pools(test_only, validation, rates, test_regions, validation_regions, tablets, font_scales)


def _validation_values() -> dict[str, frozenset]:
    """The validation section of ``generator.yaml`` as pool values."""
    spec = distribution().get("validation") or {}
    unknown = sorted(set(spec) - {"screens", "locale", "wallpaper", "density"})
    if unknown:
        raise VluiError(f"generator.yaml: validation axis {unknown[0]!r} is not one of screens, locale, wallpaper, "
                        "density")
    for locale in spec.get("locale", []):
        if locale not in locales():
            raise VluiError(f"generator.yaml: validation locale {locale!r} is not a locale")
    return {"locale": frozenset(spec.get("locale", [])),
            "wallpaper": frozenset(str(w) for w in spec.get("wallpaper", [])),
            "density": frozenset(round(float(f), 2) for f in spec.get("density", {}))}


def _validation_regions(trained: Sequence[Geometry], test_regions: Sequence[Region]) -> tuple[Region, ...]:
    """The regions (radius 1) around ``generator.yaml``'s validation screens: each clear of the test regions and of
    every training snapshot's screen."""
    regions = []
    for i, spec in enumerate((distribution().get("validation") or {}).get("screens", [])):
        screen = check_screen(spec, f"generator.yaml: validation screen {i}")
        region = Region(f"val-screen-{i}", Geometry.of(screen["width"], screen["height"], screen["dpi"]), 1.0,
                        (screen["width"], screen["height"], screen["dpi"], screen["kind"]))
        meets = next((t for t in test_regions if region.overlaps(t)), None)
        if meets is not None:
            raise VluiError(f"generator.yaml: validation screen {i} ({region.center.describe()}) comes within "
                            f"reach of test snapshot {meets.name}'s region; move it further away")
        if any(region.contains(g) for g in trained):
            raise VluiError(f"generator.yaml: validation screen {i} ({region.center.describe()}) is within reach of a "
                            "training snapshot's screen; a validation screen must be one no training phone has")
        regions.append(region)
    return tuple(regions)


# ------------------------------------------------------------------------------------------------------- drawing
def _admits(pool: str, pools: Pools, shown: Mapping[str, set]) -> bool:
    """Whether a value that brings the pool values ``shown`` may be drawn for a configuration of ``pool``: ``train``
    takes neither test-only nor validation values, ``val`` no test-only ones, ``leaky`` no validation ones."""
    clear_test = pools.clear(shown, "test_only")
    clear_val = pools.clear(shown, "validation")
    return {"train": clear_test and clear_val, "val": clear_test, "leaky": clear_val}[pool]


def _choose(rng: random.Random, pool: str, pools: Pools, axis: str, table: Mapping[Any, float],
            shown: Any) -> Any:
    """A value of ``table`` (value -> weight) for a configuration of ``pool``: ``shown(value)`` gives the pool values a
    value brings. A validation configuration takes one of the validation values with the axis's rate."""
    allowed = {v: w for v, w in table.items() if _admits(pool, pools, shown(v))}
    if pool == "val":
        held = {v: w for v, w in allowed.items() if not pools.clear(shown(v), "validation")}
        rest = {v: w for v, w in allowed.items() if v not in held}
        allowed = held if held and (not rest or rng.random() < pools.rates.get(axis, 0.0)) else rest
    if not allowed:
        raise VluiError(f"the generator's {axis} distribution (vlui/android/data/generator.yaml) leaves nothing to "
                        f"draw for a {pool} configuration")
    return _weighted(rng, allowed)


def _screen(rng: random.Random, pool: str, pools: Pools, spec: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A screen (``{width, height, dpi, kind}``, ``dpi`` the panel's own) and the density it runs at.

    Training phones draw from the ranges of ``spec['screen']`` and stay out of every test and validation region.
    A validation phone is, as often as a test snapshot is on a screen no training snapshot has, on the screen at the
    centre of a validation region (chosen so that its kinds come in the test regions' proportions), and otherwise on a
    drawn screen of the kind the other test snapshots have (the share of tablets among them); ``leaky`` phones take
    the test regions' screens so. The density factor (the display size setting) is drawn as ``density`` says."""
    regions = {"val": pools.validation_regions, "leaky": pools.test_regions}.get(pool, ())
    keep_out = (*pools.test_regions, *pools.validation_regions) if pool != "leaky" else pools.validation_regions
    if regions and rng.random() < pools.rates.get("screen", 0.0):
        kinds = [r.screen[3] for r in pools.test_regions] or [r.screen[3] for r in regions]
        weights = [kinds.count(r.screen[3]) / sum(q.screen[3] == r.screen[3] for q in regions) for r in regions]
        width, height, dpi, kind = rng.choices(regions, weights=weights)[0].screen
    else:
        table = spec["screen"]["kinds"]
        if pool == "val":  # the other test snapshots' mix of phones and tablets
            layout = "tablet" if rng.random() < pools.tablets else "phone"
            table = {k: v for k, v in table.items() if v["layout"] == layout} or table
        for _ in range(REDRAWS):
            drawn = draw(rng, {**spec["screen"], "kinds": table})
            width, height, dpi, kind = drawn["width"], drawn["height"], drawn["dpi"], drawn["kind"]
            if not any(r.contains(Geometry.of(width, height, dpi)) for r in keep_out):
                break
        else:
            raise VluiError("the generator's screen ranges (vlui/android/data/generator.yaml) lie inside the held-out "
                            "regions: widen them")
    factor = _choose(rng, pool, pools, "density", {float(f): w for f, w in spec["density"].items()}
                     | {float(f): w for f, w in (spec.get("validation") or {}).get("density", {}).items()},
                     lambda f: {"density": {round(f, 2)}})
    return {"width": width, "height": height, "dpi": round(dpi / factor), "kind": kind}, dpi


def _draw(rng: random.Random, pool: str, pools: Pools) -> dict[str, Any]:
    spec = distribution()
    validation = spec.get("validation") or {}
    screen, dpi = _screen(rng, pool, pools, spec)
    locale_table = {loc: 1 for loc in [*spec["locale"], *validation.get("locale", [])]}
    locale = _choose(rng, pool, pools, "locale", locale_table,
                     lambda loc: {"locale": {loc}, "script": {locales()[loc]["script"]}})
    bmoca = {w: 1 for w in WALLPAPERS}
    if _weighted(rng, spec["wallpaper"]) == "bmoca" or pool == "val":
        wallpaper = _choose(rng, pool, pools, "wallpaper", bmoca, lambda w: {"wallpaper": {w}})
    else:
        wallpaper = f"procedural-{rng.randrange(10**9)}"
    first, last = date.fromisoformat(str(spec["time"]["from"])), date.fromisoformat(str(spec["time"]["to"]))
    day = first + timedelta(days=rng.randint(0, (last - first).days))
    state = {"battery_level": rng.randint(*spec["battery_level"]), "charging": rng.random() < spec["charging"],
             "signal_level": rng.randint(*spec["signal_level"]), "wifi_level": rng.randint(*spec["wifi_level"]),
             "notifications": rng.sample(NOTIFYING_APPS, rng.randint(*spec["notifications"]))}
    layout: str | int = "default"
    if _weighted(rng, spec["home_layout"]) != "default":
        layout = rng.randrange(1, 10**9)
        while layout in pools.test_only.get("home_layout", ()):
            layout = rng.randrange(1, 10**9)
    font_scale = (rng.choice(pools.font_scales) if pool == "val"  # as the test snapshots have them
                  else float(_weighted(rng, spec["font_scale"])))
    return {
        "device": CUSTOM,
        "screen": screen,
        "dpi": dpi,
        "font_scale": font_scale,
        "locale": locale,
        "wallpaper": wallpaper,
        "dark_theme": rng.random() < spec["dark_theme"],
        "home_layout": layout,
        "clock_dial": _weighted(rng, spec["clock_dial"]),
        "time": f"{day.isoformat()} {rng.randrange(24):02d}:{rng.randrange(60):02d}",
        "state": state,
    }


def _fields(config: Mapping[str, Any] | Any):
    """``get(field, default)`` of a configuration: a mapping of snapshot fields, or a snapshot."""
    return config.get if isinstance(config, Mapping) else lambda k, d=None: getattr(config, k, d)


def config_key(config: Mapping[str, Any] | Any) -> tuple:
    """What makes two configurations the same phone to an agent (a mapping of snapshot fields, or a snapshot)."""
    get = _fields(config)
    screen = screen_profile(get("device"), get("screen"))
    return (get("device"), screen["width"], screen["height"], screen["dpi"], int(get("dpi")),
            float(get("font_scale", 1.0)), get("locale"), str(get("wallpaper")),
            bool(get("dark_theme", False)), str(get("home_layout", "default")), get("clock_dial", "circle"))


def generated_fields(seed: int, index: int, pools: Pools, avoid: Collection[tuple] = (),
                     prefix: str = "gen") -> dict[str, Any]:
    """The snapshot fields of configuration ``<prefix>-<seed>-<index>``, drawn from the pool of its prefix: ``gen``
    training phones, ``val`` validation phones, ``leaky`` training phones that may take test-only values (to measure
    what that leak is worth); never one whose :func:`config_key` is in ``avoid``."""
    if prefix not in SPLIT:
        raise VluiError(f"{prefix}-{seed}-{index}: unknown kind of generated configuration; ids are "
                        "gen-<seed>-<index>, val-<seed>-<index> or leaky-<seed>-<index>")
    pool = {"gen": "train", "val": "val", "leaky": "leaky"}[prefix]
    stream = f"{seed}:{index}" if prefix == "gen" else f"{prefix}:{seed}:{index}"
    rng = random.Random(f"vlui-generator-v{version()}:{stream}")
    for _ in range(REDRAWS):
        fields = _draw(rng, pool, pools)
        if config_key(fields) not in avoid:
            return {"id": f"{prefix}-{seed}-{index}", **fields, "split": SPLIT[prefix]}
    raise VluiError(f"{prefix}-{seed}-{index}: every draw equals a test snapshot; the generator's distribution "
                    "(vlui/android/data/generator.yaml) is too narrow")


def parse_generated(ref: str) -> tuple[str, int, int] | None:
    """(prefix, seed, index) of a generated configuration's id (``gen-0-17``, ``val-0-3``, ``leaky-0-5``), or None."""
    m = GENERATED.fullmatch(ref)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


# ------------------------------------------------------------------------------------------------------ holdout
def axis_values(config: Mapping[str, Any] | Any) -> dict[str, set]:
    """The values a configuration has on each holdout axis: a device is its profile name and its kind (``tablet``),
    a locale its id, its script is the font family it needs, a density the factor of the profile's default dpi,
    a wallpaper its name and ``bmoca`` or ``procedural``, an orientation the screen's natural one (``landscape`` where
    it is wider than tall, as the WXGA tablet of snapshot 109)."""
    get = _fields(config)
    profile = screen_profile(get("device"), get("screen"))
    wallpaper = str(get("wallpaper"))
    return {
        "device": {get("device"), profile["kind"]},
        "locale": {get("locale")},
        "script": {locales()[get("locale")]["script"]},
        "dark_theme": {bool(get("dark_theme", False))},
        "font_scale": {float(get("font_scale", 1.0))},
        "density": {round(int(get("dpi")) / profile["dpi"], 2)},
        "clock_dial": {get("clock_dial", "circle")},
        "wallpaper": {wallpaper, "bmoca" if wallpaper in WALLPAPERS else "procedural"},
        "orientation": {"landscape" if profile["width"] > profile["height"] else "portrait"},
    }


def _allowed(axis: str) -> set | None:
    """The values a holdout may name on ``axis`` (None: any number)."""
    profiles = device_profiles()
    return {
        "device": set(profiles) | {p["kind"] for p in profiles.values()},
        "locale": set(locales()),
        "script": {m["script"] for m in locales().values()},
        "dark_theme": {True, False},
        "clock_dial": set(DIALS),
        "wallpaper": set(WALLPAPERS) | {"bmoca", "procedural"},
        "orientation": {"portrait", "landscape"},
    }.get(axis)


def check_holdout(holdout: Mapping[str, Any] | None) -> dict[str, set]:
    """A holdout setting (axis -> values) checked and normalised: unknown axes and values are errors."""
    out: dict[str, set] = {}
    if holdout is not None and not isinstance(holdout, Mapping):
        raise VluiError(f"env.generator.holdout must be a mapping axis -> values, e.g. {{locale: [ja-JP]}}, not "
                        f"{holdout!r}")
    for axis, values in (holdout or {}).items():
        if axis not in HOLDOUT_AXES:
            raise VluiError(f"env.generator.holdout: unknown axis {axis!r}; axes: {', '.join(HOLDOUT_AXES)}")
        if isinstance(values, (str, int, float, bool)):
            values = [values]
        if not isinstance(values, Sequence) or not values:
            raise VluiError(f"env.generator.holdout.{axis}: give a list of values, e.g. {axis}: [...]")
        allowed = _allowed(axis)
        normalised = set()
        for v in values:
            if axis in ("font_scale", "density"):
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 4:
                    raise VluiError(f"env.generator.holdout.{axis}: {v!r} is not a positive number")
                v = round(float(v), 2)
            elif allowed is not None and v not in allowed:
                raise VluiError(f"env.generator.holdout.{axis}: unknown value {v!r}; choose from: "
                                f"{', '.join(sorted(map(str, allowed)))}")
            normalised.add(v)
        out[axis] = normalised
    return out


def held_out(config: Mapping[str, Any] | Any, holdout: Mapping[str, set]) -> bool:
    """Whether a configuration has a held-out value on any axis of ``holdout`` (from :func:`check_holdout`)."""
    if not holdout:
        return False
    values = axis_values(config)
    return any(values[axis] & kept for axis, kept in holdout.items())


def sample(kind: str, n: int, seed: int, holdout: Mapping[str, set], pools: Pools,
           avoid: Collection[tuple] = (), axis: str | None = None) -> list[str]:
    """Ids of ``n`` generated configurations: training phones clear of ``holdout`` (``random``) or in it
    (``heldout``; with ``axis``, held out on that axis, whatever the others), validation phones (``val``), or training
    phones that may take the test-only values (``leaky``, clear of ``holdout``); each the first indices that qualify."""
    spec = f"{kind}:{n}" + (f":{axis}" if axis else "")
    if n < 1:
        raise VluiError(f"{spec}: ask for at least one configuration")
    if kind == "heldout" and not holdout:
        raise VluiError("heldout:N needs a holdout: env.generator.holdout={locale: [ja-JP], device: [tablet]} "
                        "(or evaluate on fresh configurations with random:N and another env.generator.seed)")
    if axis is not None:
        if axis not in HOLDOUT_AXES:
            raise VluiError(f"{spec}: unknown axis {axis!r}; axes: {', '.join(HOLDOUT_AXES)}")
        if kind != "heldout":
            raise VluiError(f"{spec}: only heldout:N takes an axis (heldout:N:{axis}); {kind}:N draws from every axis")
        if axis not in holdout:
            raise VluiError(f"{spec}: the holdout has no {axis!r} axis; hold it out too, e.g. "
                            f"env.generator.holdout.{axis}=[...] (it holds out: {', '.join(holdout)})")
        holdout = {axis: holdout[axis]}
    if kind == "val":
        return [f"val-{seed}-{index}" for index in range(n)]
    ids: list[str] = []
    for index in range(n * MAX_SCAN):
        fields = generated_fields(seed, index, pools, avoid, PREFIX[kind])
        if held_out(fields, holdout) == (kind == "heldout"):
            ids.append(fields["id"])
            if len(ids) == n:
                return ids
    side = "inside" if kind == "heldout" else "outside"
    raise VluiError(f"{spec}: only {len(ids)} of {n * MAX_SCAN} generated configurations fall {side} the "
                    "holdout; hold out less (env.generator.holdout) or ask for fewer")
