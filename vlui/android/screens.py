"""Screens as geometry: what a panel looks like to an agent (its size in dp, its aspect and its density), how far two
screens are apart, the regions around held-out screens that no training phone may enter, and screens drawn from the
continuous ranges real devices span.

A screen is ``{width, height, dpi, kind}``: pixels in the device's natural orientation (a landscape-natural tablet is
wider than tall), its own density (``ro.sf.lcd_density``) and the layout Android gives it (``tablet`` from a smallest
width of 600 dp). A snapshot names one by a device profile (``devices.yaml``) or gives it as ``screen:``; its ``dpi``
field is the density it runs at (Settings > Display size changes it), so the geometry an agent sees is the panel at
that density.

Distances are taken on four axes, each as the log of a ratio divided by the axis's scale (:data:`SCALE`), and two
screens are as far apart as their largest such gap (Chebyshev): a *region* of radius 1 around a screen holds the
screens within 10% of its width and its height in dp, 6% of its aspect and 20% of its density. Orientation is part of
the geometry: width and height are taken as the panel stands, so a landscape tablet is far from a portrait one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlui.errors import VluiError

KINDS = ("phone", "tablet")
AXES = ("width_dp", "height_dp", "aspect", "dpi")
# The gap on each axis that counts as a distance of 1, as the log of a ratio: 10% in width or height, 6% in aspect
# (height over width), 20% in density.
SCALE = {"width_dp": math.log(1.10), "height_dp": math.log(1.10), "aspect": math.log(1.06), "dpi": math.log(1.20)}
TABLET_DP = 600  # Android's sw600dp: a smallest width of 600 dp or more gets the tablet layout
# What Android can lay out: a smallest width of at least this many dp (B-MoCA's snapshot 108 is 247 dp), a longer
# side at most this many times the shorter, densities and pixel counts in these ranges.
MIN_WIDTH_DP = 200
MAX_ASPECT = 3.0
DPI_RANGE = (80, 1000)
PIXELS_RANGE = (240, 8192)
DEFAULT_MODEL = "Android SDK built for x86"  # what an emulator built from a custom hardware profile reports


@dataclass(frozen=True)
class Geometry:
    """A screen as an agent sees it: ``width_dp`` x ``height_dp`` as the panel stands, ``aspect`` (height over width)
    and ``dpi``, the density it runs at."""

    width_dp: float
    height_dp: float
    aspect: float
    dpi: float

    @classmethod
    def of(cls, width: int, height: int, dpi: float) -> Geometry:
        """The geometry of a panel of ``width`` x ``height`` pixels at ``dpi``."""
        return cls(width * 160 / dpi, height * 160 / dpi, height / width, float(dpi))

    def coordinates(self) -> tuple[float, ...]:
        """Its :data:`AXES` as logs divided by :data:`SCALE`, so that a gap of 1 on an axis is one region radius."""
        return tuple(math.log(getattr(self, axis)) / SCALE[axis] for axis in AXES)

    def distance(self, other: Geometry) -> float:
        """The largest gap between the two screens' :meth:`coordinates`: within a region of radius r of this screen
        when under r."""
        return max(abs(a - b) for a, b in zip(self.coordinates(), other.coordinates(), strict=True))

    def describe(self) -> str:
        return f"{self.width_dp:.0f}x{self.height_dp:.0f} dp at {self.dpi:.0f} dpi"


@dataclass(frozen=True)
class Region:
    """The screens nearer than ``radius`` to ``center`` (:meth:`Geometry.distance`), held out for ``name`` (a test
    snapshot's id, or a validation screen's name); ``screen``: the centre as ``(width, height, dpi, kind)``, pixels
    in the natural orientation at the density it runs at."""

    name: str
    center: Geometry
    radius: float
    screen: tuple[int, int, int, str]

    def contains(self, geometry: Geometry) -> bool:
        return self.center.distance(geometry) < self.radius

    def overlaps(self, other: Region) -> bool:
        return self.center.distance(other.center) < self.radius + other.radius


def check_screen(screen: Any, where: str) -> dict[str, Any]:
    """A snapshot's ``screen:`` checked and completed (``kind`` from the smallest width at its own density when not
    given, ``model`` :data:`DEFAULT_MODEL`); an impossible screen is an error naming the field."""
    if not isinstance(screen, Mapping):
        raise VluiError(f"{where}: screen must be a mapping {{width: 1080, height: 2400, dpi: 420}} (pixels in the "
                        f"natural orientation and the panel's own density), not {screen!r}")
    unknown = sorted(set(screen) - {"width", "height", "dpi", "kind", "orientation", "model"})
    if unknown:
        raise VluiError(f"{where}: unknown field screen.{unknown[0]}; screen takes width, height, dpi, kind, "
                        "orientation, model")
    for name, (lo, hi) in (("width", PIXELS_RANGE), ("height", PIXELS_RANGE), ("dpi", DPI_RANGE)):
        value = screen.get(name)
        if value is None:
            raise VluiError(f"{where}: screen.{name} is required (screen: {{width, height, dpi}})")
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise VluiError(f"{where}: screen.{name} must be a whole number between {lo} and {hi}, not {value!r}")
    width, height, dpi = screen["width"], screen["height"], screen["dpi"]
    if max(width, height) > MAX_ASPECT * min(width, height):
        raise VluiError(f"{where}: screen {width}x{height} is more than {MAX_ASPECT:g} times as long as it is wide; "
                        "no Android layout fits it")
    sw = min(width, height) * 160 / dpi
    kind = screen.get("kind", "tablet" if sw >= TABLET_DP else "phone")
    if kind not in KINDS:
        raise VluiError(f"{where}: screen.kind must be one of {', '.join(KINDS)}, not {kind!r}")
    orientation = screen.get("orientation")
    natural = "landscape" if width > height else "portrait"
    if orientation is not None and orientation not in ("portrait", "landscape"):
        raise VluiError(f"{where}: screen.orientation must be portrait or landscape, not {orientation!r}")
    if orientation is not None and width != height and orientation != natural:
        raise VluiError(f"{where}: screen.orientation says {orientation} but {width}x{height} is {natural}: give width "
                        "and height as the panel stands in its natural orientation")
    model = screen.get("model", DEFAULT_MODEL)
    if not isinstance(model, str) or not model.strip():
        raise VluiError(f"{where}: screen.model must be the model name the device reports, not {model!r}")
    return {"width": width, "height": height, "dpi": dpi, "kind": kind, "model": model}


def check_fits(width: int, height: int, dpi: int, where: str) -> None:
    """That a panel of ``width`` x ``height`` pixels at ``dpi`` leaves Android room to lay out: a smallest width of
    at least :data:`MIN_WIDTH_DP` dp."""
    sw = min(width, height) * 160 / dpi
    if sw < MIN_WIDTH_DP:
        most = math.floor(min(width, height) * 160 / MIN_WIDTH_DP)
        raise VluiError(f"{where}: dpi {dpi} leaves the {width}x{height} screen {sw:.0f} dp wide, under the "
                        f"{MIN_WIDTH_DP} dp Android lays out; give a dpi of at most {most}")


# ------------------------------------------------------------------------------------------------------ drawing
def draw(rng: random.Random, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A screen drawn from the generator's ``screen`` section: a kind by weight, then its smallest width in dp, its
    aspect (longer side over shorter) and its density each uniform in the kind's range (the width raised so that the
    longer side is at least ``min_long_dp``, the density capped so that the panel stays within ``max_pixels`` on its
    longer side), and its natural orientation (``landscape`` the
    kind's share of the time). Returns ``{width, height, dpi, kind}`` with ``dpi`` the density the screen runs at."""
    kinds = spec["kinds"]
    name = rng.choices(list(kinds), weights=[float(k["weight"]) for k in kinds.values()])[0]
    kind = kinds[name]
    aspect = rng.uniform(*kind["aspect"])
    low, high = kind["width_dp"]
    sw = rng.uniform(min(high, max(low, kind.get("min_long_dp", 0) / aspect)), high)
    lo, hi = kind["dpi"]
    hi = min(hi, kind["max_pixels"] * 160 / (sw * aspect))
    dpi = round(rng.uniform(lo, max(lo, hi)))
    short = 2 * round(sw * dpi / 160 / 2)  # even pixel counts, as panels have
    long = 2 * round(short * aspect / 2)
    landscape = rng.random() < float(kind.get("landscape", 0.0))
    width, height = (long, short) if landscape else (short, long)
    return {"width": width, "height": height, "dpi": dpi, "kind": kind["layout"]}


# ------------------------------------------------------------------------------------------------------ regions
def held_out_regions(train: Iterable[Geometry], test: Sequence[tuple[str, tuple[int, int, int, str]]]) -> list[Region]:
    """A region around each test screen (a name and ``(width, height, dpi, kind)``) that no training screen has:
    radius 1, or less where a training snapshot's screen is nearer (it stays outside); none around a test screen that
    a training snapshot has, or nearly (a radius under 0.05)."""
    train = list(train)
    regions: list[Region] = []
    for name, screen in test:
        center = Geometry.of(*screen[:3])
        radius = min([1.0, *(center.distance(g) for g in train)])
        if radius > 0.05 and not any(r.center == center for r in regions):
            regions.append(Region(name, center, radius, screen))
    return regions


@dataclass(frozen=True)
class Nearest:
    """How far a screen is from the nearest of a set of training screens: ``distance`` (:meth:`Geometry.distance`);
    ``along``: per axis, the smallest gap on that axis to a training screen that is within distance 1 on every other
    axis (how far one must go along the axis alone to meet a training screen otherwise like it; ``inf`` where none is
    that near on the others)."""

    distance: float
    along: Mapping[str, float]


def coordinates(screens: Iterable[Geometry]) -> np.ndarray:
    """``(N, 4)``: the screens' :meth:`Geometry.coordinates`."""
    return np.array([g.coordinates() for g in screens], dtype=float).reshape(-1, len(AXES))


def nearest(geometry: Geometry, train: np.ndarray) -> Nearest:
    """:class:`Nearest` of ``geometry`` among the training screens ``train`` (:func:`coordinates`, at least one)."""
    gaps = np.abs(train - np.array(geometry.coordinates()))  # (N, 4)
    along = {}
    for i, axis in enumerate(AXES):
        others = np.delete(gaps, i, axis=1).max(axis=1) < 1.0
        along[axis] = float(gaps[others, i].min()) if others.any() else math.inf
    return Nearest(float(gaps.max(axis=1).min()), along)
