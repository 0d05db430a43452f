"""Device configurations drawn from a seed: as many as a study wants, each reproducible from its id.

A generated configuration is named ``gen-<seed>-<index>``; the same name gives the same configuration on every
machine (for one ``version`` of ``data/generator.yaml``, which holds every axis's distribution). ``random:N`` picks
the first N indices whose configuration keeps clear of a holdout; ``heldout:N`` the first N that fall in it, so the
two never share a configuration. No generated configuration equals one of the test snapshots (``avoid``): a draw
that would is drawn again.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

import yaml

from vlui.android.i18n import locales
from vlui.android.profiles import DATA_DIR, DIALS, WALLPAPERS, device_profiles, smallest_width_dp
from vlui.android.state import NOTIFYING_APPS
from vlui.errors import VluiError

GENERATED = re.compile(r"gen-(\d{1,9})-(\d{1,9})")  # the id of a generated configuration
SAMPLE = re.compile(r"(random|heldout):(\d{1,7})")  # env.snapshots=random:500 / heldout:100
# What a holdout may name, and the values a configuration has on each axis.
HOLDOUT_AXES = ("device", "locale", "script", "dark_theme", "font_scale", "density", "clock_dial", "wallpaper")
MAX_SCAN = 200  # a sample looks at no more than this many indices per configuration it asks for
REDRAWS = 100  # draws of one index before giving up on keeping clear of the test snapshots


@lru_cache(maxsize=1)
def distribution() -> dict[str, Any]:
    """The generator's distribution (``data/generator.yaml``)."""
    return yaml.safe_load((DATA_DIR / "generator.yaml").read_text(encoding="utf-8"))


def version() -> int:
    return int(distribution()["version"])


def _weighted(rng: random.Random, table: Mapping[Any, float]) -> Any:
    keys = list(table)
    return rng.choices(keys, weights=[float(table[k]) for k in keys])[0]


def _density(rng: random.Random, profile: dict[str, Any], spec: dict[str, Any]) -> int:
    """A density around the profile's default: a drawn factor, or the next lower one while the screen would be
    narrower than ``min_width_dp``."""
    factors = sorted(float(f) for f in spec["density"])
    factor = float(_weighted(rng, spec["density"]))
    i = factors.index(factor)
    while i > 0 and smallest_width_dp(profile, round(profile["dpi"] * factors[i])) < spec["min_width_dp"]:
        i -= 1
    return round(profile["dpi"] * factors[i])


def _draw(rng: random.Random) -> dict[str, Any]:
    spec = distribution()
    device = _weighted(rng, spec["device"])
    profile = device_profiles()[device]
    locale_ids = list(spec["locale"])
    wallpaper = (rng.choice(WALLPAPERS) if _weighted(rng, spec["wallpaper"]) == "bmoca"
                 else f"procedural-{rng.randrange(10**9)}")
    first, last = date.fromisoformat(str(spec["time"]["from"])), date.fromisoformat(str(spec["time"]["to"]))
    day = first + timedelta(days=rng.randint(0, (last - first).days))
    state = {"battery_level": rng.randint(*spec["battery_level"]), "charging": rng.random() < spec["charging"],
             "signal_level": rng.randint(*spec["signal_level"]), "wifi_level": rng.randint(*spec["wifi_level"]),
             "notifications": rng.sample(NOTIFYING_APPS, rng.randint(*spec["notifications"]))}
    return {
        "device": device,
        "dpi": _density(rng, profile, spec),
        "font_scale": float(_weighted(rng, spec["font_scale"])),
        "locale": rng.choice(locale_ids),
        "wallpaper": wallpaper,
        "dark_theme": rng.random() < spec["dark_theme"],
        "home_layout": "default" if _weighted(rng, spec["home_layout"]) == "default" else rng.randrange(1, 10**9),
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
    return (get("device"), int(get("dpi")), float(get("font_scale", 1.0)), get("locale"), str(get("wallpaper")),
            bool(get("dark_theme", False)), str(get("home_layout", "default")), get("clock_dial", "circle"))


def generated_fields(seed: int, index: int, avoid: Collection[tuple] = ()) -> dict[str, Any]:
    """The snapshot fields of configuration ``gen-<seed>-<index>``; never one whose :func:`config_key` is in
    ``avoid``."""
    rng = random.Random(f"vlui-generator-v{version()}:{seed}:{index}")
    for _ in range(REDRAWS):
        fields = _draw(rng)
        if config_key(fields) not in avoid:
            return {"id": f"gen-{seed}-{index}", **fields, "split": "generated"}
    raise VluiError(f"gen-{seed}-{index}: every draw equals a test snapshot; the generator's distribution "
                    "(vlui/android/data/generator.yaml) is too narrow")


def parse_generated(ref: str) -> tuple[int, int] | None:
    """(seed, index) of a generated configuration's id, or None."""
    m = GENERATED.fullmatch(ref)
    return (int(m.group(1)), int(m.group(2))) if m else None


# ------------------------------------------------------------------------------------------------------ holdout
def axis_values(config: Mapping[str, Any] | Any) -> dict[str, set]:
    """The values a configuration has on each holdout axis: a device is its profile name and its kind (``tablet``),
    a locale its id, its script is the font family it needs, a density the factor of the profile's default dpi,
    a wallpaper its name and ``bmoca`` or ``procedural``."""
    get = _fields(config)
    profile = device_profiles()[get("device")]
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


def sample(kind: str, n: int, seed: int, holdout: Mapping[str, set], avoid: Collection[tuple] = ()) -> list[str]:
    """Ids of ``n`` generated configurations: the first indices clear of ``holdout`` (``random``) or in it
    (``heldout``)."""
    if n < 1:
        raise VluiError(f"{kind}:{n}: ask for at least one configuration")
    if kind == "heldout" and not holdout:
        raise VluiError("heldout:N needs a holdout: env.generator.holdout={locale: [ja-JP], device: [tablet]} "
                        "(or evaluate on fresh configurations with random:N and another env.generator.seed)")
    ids: list[str] = []
    for index in range(n * MAX_SCAN):
        fields = generated_fields(seed, index, avoid)
        if held_out(fields, holdout) == (kind == "heldout"):
            ids.append(fields["id"])
            if len(ids) == n:
                return ids
    side = "outside" if kind == "random" else "inside"
    raise VluiError(f"{kind}:{n}: only {len(ids)} of {n * MAX_SCAN} generated configurations fall {side} the "
                    "holdout; hold out less (env.generator.holdout) or ask for fewer")
