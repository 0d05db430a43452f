"""Procedural home-screen wallpapers for the simulated phone.

B-MoCA snapshots name a wallpaper ``"000.jpg"`` … ``"013.jpg"``; vlui draws each one from code instead of
shipping image files, so that any screen size gets a sharp picture. :func:`wallpaper` accepts a name with or
without the ``.jpg`` suffix and returns an RGB image of exactly the requested size.

Every picture is composed in normalised coordinates (``x`` and ``y`` run from 0 to 1 across the screen; sizes
are in *units*, where a 1:2 phone is one unit wide), so the same wallpaper at two resolutions looks the same.
Pixels are bit-identical for the same arguments: the 2-D fields use only IEEE-exact arithmetic (``+ - * /``,
``sqrt``, ``clip``, ``floor``), randomness comes from seeded ``numpy`` generators, and transcendental
functions are applied only to small 1-D profiles.

Results are cached: callers must ``.copy()`` the returned image before drawing on it.
"""

from __future__ import annotations

import colorsys
import functools
import math
import random
from typing import Callable, Sequence, Union

import numpy as np
from PIL import Image

from vlui.android.profiles import PROCEDURAL_WALLPAPER, WALLPAPERS, is_wallpaper
from vlui.errors import VluiError

F32 = np.float32
# A hex colour, or vertical-gradient stops ``[(y, hex), ...]`` evaluated over the whole screen height.
Paint = Union[str, Sequence[tuple[float, str]]]
Stops = Sequence[tuple[float, str]]

# 8×8 ordered-dither thresholds in [0, 1): added before truncation to 8 bits so smooth gradients do not band.
_BAYER = np.array(
    [
        [0, 32, 8, 40, 2, 34, 10, 42],
        [48, 16, 56, 24, 50, 18, 58, 26],
        [12, 44, 4, 36, 14, 46, 6, 38],
        [60, 28, 52, 20, 62, 30, 54, 22],
        [3, 35, 11, 43, 1, 33, 9, 41],
        [51, 19, 59, 27, 49, 17, 57, 25],
        [15, 47, 7, 39, 13, 45, 5, 37],
        [63, 31, 55, 23, 61, 29, 53, 21],
    ],
    dtype=F32,
) / F32(64) + F32(1 / 128)


def _rgb(hex_colour: str) -> np.ndarray:
    h = hex_colour.lstrip("#")
    return np.array([int(h[i : i + 2], 16) for i in (0, 2, 4)], dtype=F32)


def _ramp(stops: Stops, t: np.ndarray) -> np.ndarray:
    """Colours of a multi-stop gradient at positions ``t`` (1-D), shape ``(len(t), 3)``."""
    pos = np.array([p for p, _ in stops], dtype=np.float64)
    cols = np.stack([_rgb(c) for _, c in stops])
    return np.stack([np.interp(t, pos, cols[:, i]) for i in range(3)], axis=1).astype(F32)


class _Canvas:
    """A planar float32 RGB canvas (0–255) with antialiased primitives placed in normalised coordinates.

    The primitives work in place on windows around each shape: at 1440×3040 every full-size temporary costs
    milliseconds, so they are avoided.
    """

    def __init__(self, width: int, height: int) -> None:
        self.w, self.h = width, height
        self.unit = math.sqrt(width * height / 2)  # pixels per unit: a 1:2 phone is one unit wide
        self.x = (np.arange(width) + 0.5) / width  # normalised pixel centres, float64 for the 1-D profiles
        self.y = (np.arange(height) + 0.5) / height
        self.px = (np.arange(width) + 0.5).astype(F32)  # pixel centres in pixels, for the 2-D fields
        self.py = (np.arange(height) + 0.5).astype(F32)
        self.img = np.empty((3, height, width), dtype=F32)  # planar: long contiguous rows per channel

    # ------------------------------------------------------------------------------------------ painting
    def _colour(self, paint: Paint, ys: slice) -> np.ndarray:
        """``paint`` as per-channel values broadcastable over ``img[:, ys, xs]``."""
        if isinstance(paint, str):
            return _rgb(paint)[:, None, None]
        return _ramp(paint, self.y[ys]).T[:, :, None]

    def _paint(self, ys: slice, xs: slice, cov: np.ndarray | None, paint: Paint, alpha: float) -> None:
        """Blend ``paint`` over ``img[:, ys, xs]`` with per-pixel coverage ``cov`` (``None``: fully covered).

        ``cov`` is used as scratch space.
        """
        col = self._colour(paint, ys)
        region = self.img[:, ys, xs]
        if cov is None:
            if alpha >= 1:
                region[...] = col
            else:
                region += (col - region) * F32(alpha)
            return
        if alpha < 1:
            cov *= F32(alpha)
        tmp = np.empty_like(cov)
        for c in range(3):
            np.subtract(col[c], region[c], out=tmp)
            tmp *= cov
            region[c] += tmp

    def _box(
        self, cx: float, cy: float, rx: float, ry: float
    ) -> tuple[slice, slice, np.ndarray, np.ndarray] | None:
        """Pixel window around a shape centred at normalised ``(cx, cy)`` with pixel radii ``rx, ry``.

        Returns the row and column slices and the pixel offsets of their centres from the shape centre.
        """
        xc, yc = cx * self.w, cy * self.h
        x0, x1 = max(0, math.floor(xc - rx - 1)), min(self.w, math.ceil(xc + rx + 1))
        y0, y1 = max(0, math.floor(yc - ry - 1)), min(self.h, math.ceil(yc + ry + 1))
        if x0 >= x1 or y0 >= y1:
            return None
        return slice(y0, y1), slice(x0, x1), self.px[x0:x1] - F32(xc), self.py[y0:y1] - F32(yc)

    @staticmethod
    def _ramp_edge(field: np.ndarray, scale: float, offset: float) -> np.ndarray:
        """``clip(field * scale + offset, 0, 1)``, in place: a signed distance turned into coverage."""
        field *= F32(scale)
        field += F32(offset)
        return np.clip(field, 0, 1, out=field)

    # ------------------------------------------------------------------------------------------ primitives
    def fill(self, stops: Stops) -> None:
        """Fill with a vertical gradient; ``stops`` are ``(y, hex)`` pairs."""
        self.img[...] = self._colour(stops, slice(None))

    def disc(
        self,
        cx: float,
        cy: float,
        r: float,
        paint: Paint,
        alpha: float = 1.0,
        soft: float = 0.0,
        ry: float = 0.0,
        hole: float = 0.0,
        top: float = 0.0,
    ) -> None:
        """An ellipse (a circle unless ``ry``), radii in units, ``soft`` its edge's blur width in units.

        ``hole`` (a fraction of the radius) makes it a ring; rows above normalised height ``top`` are left
        alone (to pass part of a shape behind another).
        """
        rx_px, ry_px = r * self.unit, (ry or r) * self.unit
        if max(rx_px, ry_px) < 0.7:  # sub-pixel: keep its brightness proportional to its area
            alpha *= rx_px * ry_px / 0.49
            rx_px = ry_px = 0.7
        feather = max(1.0, soft * self.unit)
        box = self._box(cx, cy, rx_px + feather, ry_px + feather)
        if box is None:
            return
        ys, xs, dx, dy = box
        cut = max(0, math.ceil(top * self.h) - ys.start)
        if cut >= len(dy):
            return
        ys, dy = slice(ys.start + cut, ys.stop), dy[cut:]
        # Distance to the centre scaled so the edge is at 1, turned back into pixels along the smaller radius.
        d = ((dy * F32(1 / ry_px)) ** 2)[:, None] + ((dx * F32(1 / rx_px)) ** 2)[None, :]
        np.sqrt(d, out=d)
        k = min(rx_px, ry_px) / feather
        inner = self._ramp_edge(d.copy(), -k, hole * k + 0.5) if hole else None
        cov = self._ramp_edge(d, -k, k + 0.5)
        if inner is not None:
            cov -= inner
        self._paint(ys, xs, cov, paint, alpha)

    def glow(self, cx: float, cy: float, r: float, paint: Paint, alpha: float = 1.0, ry: float = 0.0) -> None:
        """A soft radial glow, brightest at the centre and fading to nothing at radius ``r`` (units)."""
        rx_px, ry_px = r * self.unit, (ry or r) * self.unit
        box = self._box(cx, cy, rx_px, ry_px)
        if box is None:
            return
        ys, xs, dx, dy = box
        bump = ((dy * F32(1 / ry_px)) ** 2)[:, None] + ((dx * F32(1 / rx_px)) ** 2)[None, :]
        bump = self._ramp_edge(bump, -1, 1)
        bump *= bump
        self._paint(ys, xs, bump, paint, alpha)

    def crescent(
        self, cx: float, cy: float, r: float, ox: float, oy: float, paint: Paint, alpha: float = 1.0
    ) -> None:
        """A disc of radius ``r`` minus the same disc shifted by ``(ox, oy)`` units: a crescent moon."""
        rp = r * self.unit
        box = self._box(cx, cy, rp + 1, rp + 1)
        if box is None:
            return
        ys, xs, dx, dy = box
        lit = np.sqrt((dy**2)[:, None] + (dx**2)[None, :])
        lit = self._ramp_edge(lit, -1, rp + 0.5)
        sx, sy = F32(ox * self.unit), F32(oy * self.unit)
        shade = np.sqrt(((dy - sy) ** 2)[:, None] + ((dx - sx) ** 2)[None, :])
        shade = self._ramp_edge(shade, 1, 0.5 - rp)  # 1 outside the shifted disc
        lit *= shade
        self._paint(ys, xs, lit, paint, alpha)

    def blob(self, balls: Sequence[tuple[float, float, float]], paint: Paint, alpha: float = 1.0) -> None:
        """A metaball: the smooth union of circles ``(cx, cy, r)`` (units), with an antialiased edge."""
        reach = 1.6  # the field is below the threshold beyond 1.6 radii from every ball
        x0 = min(cx - reach * r * self.unit / self.w for cx, _, r in balls)
        x1 = max(cx + reach * r * self.unit / self.w for cx, _, r in balls)
        y0 = min(cy - reach * r * self.unit / self.h for _, cy, r in balls)
        y1 = max(cy + reach * r * self.unit / self.h for _, cy, r in balls)
        box = self._box((x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) * self.w / 2, (y1 - y0) * self.h / 2)
        if box is None:
            return
        ys, xs, dx, dy = box
        ox, oy = (x0 + x1) / 2 * self.w, (y0 + y1) / 2 * self.h
        field = np.zeros((len(dy), len(dx)), dtype=F32)
        term = np.empty_like(field)
        for cx, cy, r in balls:
            bx, by = dx - F32(cx * self.w - ox), dy - F32(cy * self.h - oy)
            np.add((by**2 + F32(1))[:, None], (bx**2)[None, :], out=term)
            np.divide(F32((r * self.unit) ** 2), term, out=term)
            field += term
        # Near the threshold the field falls by about 2/r per pixel, which turns (field - 1) into a distance.
        k = min(r for _, _, r in balls) * self.unit / 2
        self._paint(ys, xs, self._ramp_edge(field, k, 0.5 - k), paint, alpha)

    def below(self, curve: np.ndarray, paint: Paint, alpha: float = 1.0) -> None:
        """Fill everything below ``curve`` (normalised y of each pixel column), antialiased along its edge."""
        hp = (curve * self.h).astype(F32)
        slope = np.gradient(hp) if self.w > 1 else np.zeros_like(hp)
        inv = (F32(1) / np.sqrt(F32(1) + slope * slope)).astype(F32)  # vertical → perpendicular distance
        r0 = min(self.h, max(0, math.floor(float(hp.min()) - 1)))
        r1 = min(self.h, max(0, math.ceil(float(hp.max()) + 1)))
        if r1 > r0:
            cov = self.py[r0:r1, None] - hp[None, :]
            cov *= inv
            self._paint(slice(r0, r1), slice(None), self._ramp_edge(cov, 1, 0.5), paint, alpha)
        if r1 < self.h:
            self._paint(slice(r1, None), slice(None), None, paint, alpha)

    def rings(self, cx: float, cy: float, width: float, palette: Sequence[str]) -> None:
        """Replace the canvas with concentric rings ``width`` units wide around normalised ``(cx, cy)``."""
        step = width * self.unit
        # The colour depends only on the distance, so look it up in a 1-D profile sampled every quarter pixel.
        dx, dy = self.px - F32(cx * self.w), self.py - F32(cy * self.h)
        d = (dy**2)[:, None] + (dx**2)[None, :]
        np.sqrt(d, out=d)
        d *= F32(4)
        idx = d.astype(np.intp)
        s = (np.arange(int(idx.max()) + 1) + 0.5) / 4 / step
        k = np.floor(s).astype(np.intp)
        m = np.clip((s - k) * step + 0.5, 0, 1)[:, None]  # antialias each ring's inner edge
        pal = np.stack([_rgb(c) for c in palette])
        profile = (pal[(k - 1) % len(pal)] * (1 - m) + pal[k % len(pal)] * m).astype(F32)
        for c in range(3):
            np.take(profile[:, c], idx, out=self.img[c])

    def stripes(self, period: float, palette: Sequence[str]) -> None:
        """Replace the canvas with diagonal stripes cycling through ``palette``.

        Stripe edges follow ``x + 2y = const`` in normalised coordinates (45° on a 1:2 phone), ``period``
        apart along ``x``, so every screen shows the same pattern whatever its aspect ratio.
        """
        # The colour depends only on x + 2y, so every row is one 1-D strip shifted: sample the strip every
        # quarter pixel and copy one slice of it per row, instead of evaluating a 2-D field.
        q, slope = 4, 2 * self.w / self.h  # slope: pixels of shift per row
        offsets = np.round(self.py * F32(slope * q)).astype(np.intp)
        pos = np.arange(int(offsets[-1]) + q * self.w) / q + 0.5  # pixel x of each sample on the first row
        phase = pos / (self.w * period)
        k = np.floor(phase).astype(np.intp)
        across = (phase - k) * self.w * period / math.sqrt(1 + slope * slope)  # pixels from the stripe's edge
        m = np.clip(across + 0.5, 0, 1)[:, None]  # antialias each stripe's leading edge
        pal = np.stack([_rgb(c) for c in palette])
        strip = np.ascontiguousarray((pal[(k - 1) % len(pal)] * (1 - m) + pal[k % len(pal)] * m).T, dtype=F32)
        for y, off in enumerate(offsets):
            self.img[:, y, :] = strip[:, off : off + q * self.w : q]

    def stars(self, n: int, seed: int, top: float, bottom: float, size: float = 1.0) -> None:
        """``n`` seeded stars between normalised heights ``top`` and ``bottom``, a few of them with a halo."""
        rng = np.random.default_rng(seed)
        xs, ys = rng.random(n), top + (bottom - top) * rng.random(n) ** 1.6  # denser towards the top
        rs, bright = 0.0012 + 0.0022 * rng.random(n) ** 3, 0.55 + 0.45 * rng.random(n)
        for x, y, r, b in zip(xs, ys, rs, bright, strict=True):
            if r > 0.0028:
                self.glow(x, y, r * 5, "#c8d8ff", 0.35 * b)
            self.disc(x, y, r * size, "#ffffff", b)

    def image(self) -> Image.Image:
        h, w = self.h, self.w
        dither = np.tile(_BAYER, (h // 8 + 1, w // 8 + 1))[:h, :w]
        planes = []
        for plane in self.img:
            plane += dither
            np.clip(plane, 0, 255, out=plane)
            planes.append(Image.fromarray(plane.astype(np.uint8), "L"))
        return Image.merge("RGB", planes)


# --------------------------------------------------------------------------------------------- profiles
def _waves(x: np.ndarray, base: float, terms: Sequence[tuple[float, float, float]]) -> np.ndarray:
    """``base`` plus sines ``(amplitude, cycles across the screen, phase)``: a 1-D horizon profile."""
    y = np.full_like(x, base)
    for amp, freq, phase in terms:
        y += amp * np.sin(2 * math.pi * freq * x + phase)
    return y


def _ridge(x: np.ndarray, seed: int, base: float, height: float, peaks: int) -> np.ndarray:
    """A mountain ridge: ``peaks`` seeded triangular peaks over a gently undulating base."""
    rng = np.random.default_rng(seed)
    y = _waves(x, base, [(height * 0.15, 1.3, rng.random() * 6), (height * 0.06, 4.1, rng.random() * 6)])
    for _ in range(peaks):
        px, w = -0.1 + 1.2 * rng.random(), 0.18 + 0.25 * rng.random()
        hgt = height * (0.5 + 0.5 * rng.random())
        tent = hgt * np.clip(1 - np.abs(x - px) / w, 0, None) ** 1.2
        # Small jagged detail on the slopes, so the ridge reads as rock rather than a cone.
        tent *= 1 + 0.06 * np.sin(2 * math.pi * 23 * x + rng.random() * 6)
        y = np.minimum(y, base - tent)
    return y


def _treeline(x: np.ndarray, seed: int, base: float, height: float, count: int) -> np.ndarray:
    """A row of seeded pine silhouettes: narrow triangles with stepped tiers, over a rounded ground line."""
    rng = np.random.default_rng(seed)
    y = _waves(x, base, [(height * 0.12, 1.1, rng.random() * 6)])
    for i in range(count):
        tx = (i + rng.random()) / count * 1.1 - 0.05
        hgt, w = height * (0.55 + 0.45 * rng.random()), 0.025 + 0.02 * rng.random()
        rel = np.clip(1 - np.abs(x - tx) / w, 0, None)
        tiers = rel - 0.18 * ((rel * 4) % 1)  # saw-tooth steps: the tiers of branches
        y = np.minimum(y, base - hgt * np.clip(tiers, 0, None))
    return y


# ---------------------------------------------------------------------------------------------- designs
def _w000(c: _Canvas) -> None:  # Pixel default: soft blue/teal with large gentle shapes
    c.fill([(0, "#dff1fb"), (0.45, "#8fd0e6"), (1, "#2b8da3")])
    c.glow(1.0, 0.0, 1.1, "#f4fbff", 0.5, ry=0.9)
    c.disc(1.0, 0.28, 0.62, "#ffffff", 0.22, soft=0.01)
    c.disc(0.05, 0.78, 0.66, "#1e9aa0", 0.35, soft=0.01)
    c.disc(0.85, 0.95, 0.48, "#0b6e8f", 0.35, soft=0.01)
    c.glow(0.3, 0.2, 0.5, "#ffffff", 0.35)


def _w001(c: _Canvas) -> None:  # sunset over the sea
    c.fill([(0, "#241541"), (0.3, "#6a2c6b"), (0.52, "#d9596a"), (0.64, "#fbb267"), (1, "#fbb267")])
    c.glow(0.5, 0.62, 0.75, "#ffd690", 0.55, ry=0.3)
    c.disc(0.5, 0.62, 0.2, "#fff0b8")
    c.below(np.full_like(c.x, 0.64), [(0.64, "#7a3a66"), (1, "#1d1030")])
    for i, (y, w) in enumerate([(0.665, 0.16), (0.69, 0.12), (0.72, 0.085), (0.755, 0.05), (0.795, 0.03)]):
        c.disc(0.5 + 0.01 * (-1) ** i, y, w, "#ffc987", 0.55 - 0.07 * i, ry=0.004, soft=0.003)


def _w002(c: _Canvas) -> None:  # layered mountains at dusk
    c.fill([(0, "#fde4c8"), (0.45, "#f4b2a0"), (1, "#e48f98")])
    c.disc(0.7, 0.3, 0.1, "#fff4e0", 0.9, soft=0.004)
    layers = ["#c98bb4", "#9a6ba6", "#6d4f92", "#463873", "#241d47"]
    for i, colour in enumerate(layers):
        c.below(_ridge(c.x, 20 + i, 0.48 + 0.1 * i, 0.16 - 0.012 * i, 4), colour)


def _w003(c: _Canvas) -> None:  # abstract pastel blobs on cream
    c.fill([(0, "#fff6ea"), (1, "#fde9dc")])
    c.blob([(0.15, 0.16, 0.26), (0.42, 0.1, 0.18), (0.3, 0.3, 0.12)], "#ff9e8f")
    c.blob([(0.92, 0.42, 0.3), (0.7, 0.52, 0.14)], "#ffd166")
    c.blob([(0.12, 0.7, 0.22), (0.3, 0.82, 0.2), (0.02, 0.92, 0.2)], "#8fd3c1")
    c.blob([(0.8, 0.86, 0.24), (0.62, 0.95, 0.14)], "#b8a4e3")
    c.disc(0.55, 0.35, 0.06, "#2f3e6b", 0.9)
    c.disc(0.45, 0.66, 0.035, "#ff7a66")


def _w004(c: _Canvas) -> None:  # bold diagonal stripes
    c.stripes(0.16, ["#f94144", "#f3722c", "#f9c74f", "#90be6d", "#43aa8b", "#277da1", "#3a3f78"])


def _w005(c: _Canvas) -> None:  # starry night with a crescent moon
    c.fill([(0, "#03061a"), (0.55, "#0d1b45"), (1, "#2a3d7a")])
    c.glow(0.5, 1.0, 0.9, "#5a6fc0", 0.35, ry=0.5)
    c.stars(260, 5, 0.0, 0.85)
    c.glow(0.72, 0.18, 0.3, "#9fb4ff", 0.3)
    c.crescent(0.72, 0.18, 0.085, 0.035, -0.02, "#f6f2cf")
    c.below(_ridge(c.x, 50, 0.93, 0.08, 3), "#04081a")


def _w006(c: _Canvas) -> None:  # beach: sky, sea, foam and sand
    c.fill([(0, "#6cc4ef"), (0.45, "#d4f1fb"), (1, "#d4f1fb")])
    c.glow(0.8, 0.12, 0.35, "#fffbe6", 0.8)
    c.disc(0.8, 0.12, 0.07, "#fffdf2")
    c.below(np.full_like(c.x, 0.47), [(0.47, "#1f8fb3"), (0.7, "#4fd1d9")])
    shore = _waves(c.x, 0.7, [(0.02, 0.8, 0.5), (0.008, 2.3, 2.0)])
    c.below(shore - 0.012, "#ffffff", 0.9)
    c.below(shore, [(0.65, "#f7e0b5"), (1, "#e9c48e")])
    c.below(shore + 0.02 + _waves(c.x, 0, [(0.006, 3.1, 1.0)]), "#e3b97f", 0.35)


def _w007(c: _Canvas) -> None:  # misty pine forest
    c.fill([(0, "#d9ebe0"), (0.5, "#a9cbb5"), (1, "#6f9a80")])
    c.glow(0.3, 0.22, 0.45, "#fffef0", 0.6)
    layers = ["#8fb59d", "#6b977d", "#4a775f", "#2f5644", "#173228"]
    for i, colour in enumerate(layers):
        c.below(_treeline(c.x, 70 + i, 0.5 + 0.1 * i, 0.14 + 0.03 * i, 14 - i), colour)


def _w008(c: _Canvas) -> None:  # bold material shapes on a dark ground
    c.fill([(0, "#1c1d2e"), (1, "#262840")])
    c.disc(0.0, 0.0, 0.85, "#ff5252")
    c.disc(1.0, 0.55, 0.5, "#ffc107")
    c.disc(0.15, 1.0, 0.55, "#2979ff")
    c.disc(0.62, 0.36, 0.12, "#00e5ff")
    c.below(0.98 - 0.5 * c.x, "#1c1d2e", 0.3)
    c.disc(0.78, 0.82, 0.08, "#f5f5f5")


def _w009(c: _Canvas) -> None:  # pastel waves
    c.fill([(0, "#fff1f5"), (1, "#fde3ec")])
    colours = ["#fbd0de", "#f4b6cf", "#d9bde6", "#b9c6f0", "#a3d7ef", "#9fe2d2", "#c7efc1"]
    for i, colour in enumerate(colours):
        base = 0.22 + 0.115 * i
        c.below(_waves(c.x, base, [(0.025, 0.9 + 0.15 * i, 1.3 * i), (0.008, 2.4, 0.7 * i)]), colour)


def _w010(c: _Canvas) -> None:  # dark minimal with glowing arcs
    c.fill([(0, "#050507"), (1, "#101018")])
    c.glow(0.5, 0.75, 0.7, "#3d5afe", 0.15)
    c.disc(0.5, 1.05, 0.95, "#536dfe", 0.95, soft=0.012, hole=0.975)
    c.disc(0.5, 1.05, 0.8, "#b388ff", 0.7, soft=0.016, hole=0.97)
    c.disc(0.5, 1.05, 0.65, "#ff80ab", 0.5, soft=0.02, hole=0.965)


def _w011(c: _Canvas) -> None:  # desert dunes
    c.fill([(0, "#f7c98b"), (0.4, "#fbe3bd"), (1, "#fbe3bd")])
    c.disc(0.3, 0.25, 0.09, "#fff6e3", 0.95, soft=0.01)
    colours = ["#eab07a", "#dc9360", "#c87646", "#ad5a33", "#86402a"]
    for i, colour in enumerate(colours):
        base = 0.45 + 0.12 * i
        terms = [(0.03, 0.7 + 0.2 * i, 1.7 * i), (0.012, 1.9, 0.9 * i)]
        c.below(_waves(c.x, base, terms), [(base - 0.05, colour), (base + 0.25, "#6b3222")])


def _w012(c: _Canvas) -> None:  # aurora over dark mountains
    c.fill([(0, "#020c18"), (0.6, "#04243a"), (1, "#0a3a4a")])
    c.stars(160, 12, 0.0, 0.6, size=0.8)
    curtains = [("#37ffb0", 0.3, 0.5), ("#2de2e6", 0.4, 0.4), ("#9b5cff", 0.22, 0.35)]
    for i, (colour, y, alpha) in enumerate(curtains):
        ys = _waves(np.linspace(0, 1, 9), y, [(0.05, 0.8, 1.5 * i), (0.02, 1.7, i)])
        for x, yy in zip(np.linspace(0, 1, 9), ys, strict=True):
            c.glow(float(x), float(yy), 0.32, colour, alpha, ry=0.1)
    c.below(_ridge(c.x, 120, 0.82, 0.14, 4), "#03101a")


def _w013(c: _Canvas) -> None:  # rolling green hills under a blue sky
    c.fill([(0, "#8fd0ff"), (0.5, "#e6f6ff"), (1, "#e6f6ff")])
    c.disc(0.78, 0.16, 0.08, "#fff7c2")
    c.glow(0.78, 0.16, 0.3, "#fffbe0", 0.5)
    for cx, cy, s in [(0.25, 0.22, 1.0), (0.7, 0.36, 0.7)]:  # two clouds, each three puffs
        puffs = [(-0.1, 0, 0.07), (0, -0.01, 0.1), (0.11, 0.005, 0.075)]
        c.blob([(cx + dx * s, cy + dy, r * s) for dx, dy, r in puffs], "#ffffff", 0.95)
    for i, colour in enumerate(["#b5dc7a", "#8cc451", "#62a33a", "#3e7d2a"]):
        c.below(_waves(c.x, 0.55 + 0.11 * i, [(0.04, 0.55 + 0.2 * i, 2.0 * i + 0.5)]), colour)


def _w014(c: _Canvas) -> None:  # pastel concentric ripples from a corner
    c.rings(0.0, 1.0, 0.15, ["#fde2e4", "#fad2e1", "#e2ece9", "#bee1e6", "#cddafd", "#dfe7fd", "#fff1e6"])
    c.disc(0.0, 1.0, 0.14, "#f6a6b2")


def _w015(c: _Canvas) -> None:  # a ringed planet in deep space
    c.fill([(0, "#0c0620"), (0.6, "#271048"), (1, "#43145c")])
    c.stars(180, 15, 0.0, 1.0, size=0.9)
    cx, cy, r = 0.4, 0.66, 0.34
    ring = [(cy - 0.1, "#ffd0a8"), (cy + 0.1, "#c07ad8")]
    c.disc(cx, cy, 0.62, ring, 0.85, ry=0.07, hole=0.8)  # the far side, hidden by the planet where they cross
    c.glow(cx, cy, r * 1.5, "#ff7eb3", 0.25)
    c.disc(cx, cy, r, [(cy - r / 2, "#ff9a76"), (cy, "#e0559b"), (cy + r / 2, "#5b2a9b")])
    c.crescent(cx, cy, r, -0.09, -0.07, "#14072e", 0.55)  # the night side
    c.disc(cx, cy, 0.62, ring, 0.85, ry=0.07, hole=0.8, top=cy)  # the near side passes in front
    c.disc(0.82, 0.22, 0.05, "#d6c7ff")
    c.crescent(0.82, 0.22, 0.051, -0.02, 0.015, "#120838")


_DESIGNS: tuple[Callable[[_Canvas], None], ...] = (
    _w000, _w001, _w002, _w003, _w004, _w005, _w006, _w007,
    _w008, _w009, _w010, _w011, _w012, _w013, _w014, _w015,
)  # fmt: skip


# ---------------------------------------------------------------------------------------------- procedural
def _hex(h: float, s: float, v: float) -> str:
    """A hex colour from hue (turns), saturation and value in [0, 1]."""
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, min(max(s, 0.0), 1.0), min(max(v, 0.0), 1.0))
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _palette(rng: random.Random, n: int, dark: bool) -> list[str]:
    """``n`` colours of one scheme around a random hue: analogous, complementary or triadic, light or dark."""
    h = rng.random()
    spread = rng.choice([(0.08, 0.0), (0.5, 0.04), (1 / 3, 0.02), (0.15, 0.03)])
    s, v = (rng.uniform(0.35, 0.9), rng.uniform(0.15, 0.45)) if dark else (rng.uniform(0.2, 0.75), rng.uniform(0.7, 1))
    return [_hex(h + spread[0] * (i % 3) + spread[1] * i, s + rng.uniform(-0.1, 0.1), v + rng.uniform(-0.15, 0.15))
            for i in range(n)]


def _sky(rng: random.Random, dark: bool) -> list[tuple[float, str]]:
    top, mid, bottom = _palette(rng, 3, dark)
    return [(0, top), (rng.uniform(0.3, 0.6), mid), (1, bottom)]


def _p_shapes(c: _Canvas, rng: random.Random, dark: bool) -> None:  # material discs on a gradient
    c.fill(_sky(rng, dark))
    for colour in _palette(rng, rng.randint(3, 6), not dark):
        c.disc(rng.uniform(-0.1, 1.1), rng.uniform(-0.05, 1.05), rng.uniform(0.08, 0.6), colour,
               rng.uniform(0.35, 1.0), soft=0.006)


def _p_ridges(c: _Canvas, rng: random.Random, dark: bool) -> None:  # layered mountains
    c.fill(_sky(rng, dark))
    c.disc(rng.uniform(0.15, 0.85), rng.uniform(0.12, 0.35), rng.uniform(0.04, 0.1), "#fff6e0", 0.9, soft=0.004)
    h, sat, n = rng.random(), rng.uniform(0.3, 0.7), rng.randint(3, 6)
    for i in range(n):  # nearer ridges darker, as in haze
        colour = _hex(h + 0.02 * i, sat, 0.75 - 0.6 * i / n)
        c.below(_ridge(c.x, rng.randrange(10**6), 0.45 + 0.1 * i, 0.18 - 0.015 * i, rng.randint(2, 5)), colour)


def _p_waves(c: _Canvas, rng: random.Random, dark: bool) -> None:  # bands of waves
    c.fill(_sky(rng, dark))
    colours = _palette(rng, rng.randint(4, 8), dark)
    start, step = rng.uniform(0.1, 0.35), rng.uniform(0.08, 0.13)
    for i, colour in enumerate(colours):
        terms = [(rng.uniform(0.01, 0.04), rng.uniform(0.5, 1.6), rng.uniform(0, 6.3)),
                 (rng.uniform(0.003, 0.01), rng.uniform(1.5, 3.5), rng.uniform(0, 6.3))]
        c.below(_waves(c.x, start + step * i, terms), colour)


def _p_blobs(c: _Canvas, rng: random.Random, dark: bool) -> None:  # soft blobs
    c.fill(_sky(rng, dark))
    for colour in _palette(rng, rng.randint(3, 5), not dark):
        cx, cy = rng.uniform(0, 1), rng.uniform(0, 1)
        c.blob([(cx + rng.uniform(-0.15, 0.15), cy + rng.uniform(-0.1, 0.1), rng.uniform(0.08, 0.25))
                for _ in range(rng.randint(2, 4))], colour)


def _p_stripes(c: _Canvas, rng: random.Random, dark: bool) -> None:  # diagonal stripes
    c.stripes(rng.uniform(0.08, 0.3), _palette(rng, rng.randint(3, 7), dark))


def _p_rings(c: _Canvas, rng: random.Random, dark: bool) -> None:  # concentric ripples from a point
    c.rings(rng.choice([0.0, 0.5, 1.0]), rng.choice([0.0, 0.5, 1.0]), rng.uniform(0.06, 0.2),
            _palette(rng, rng.randint(4, 8), dark))


def _p_night(c: _Canvas, rng: random.Random, dark: bool) -> None:  # stars, a moon and a horizon
    c.fill(_sky(rng, True))
    c.stars(rng.randint(80, 300), rng.randrange(10**6), 0.0, 0.85, size=rng.uniform(0.7, 1.1))
    mx, my, mr = rng.uniform(0.2, 0.8), rng.uniform(0.1, 0.35), rng.uniform(0.05, 0.1)
    c.glow(mx, my, mr * 3.5, _palette(rng, 1, False)[0], 0.3)
    c.crescent(mx, my, mr, rng.uniform(-0.5, 0.5) * mr, rng.uniform(-0.5, 0.5) * mr, "#f6f2cf")
    c.below(_ridge(c.x, rng.randrange(10**6), rng.uniform(0.85, 0.95), 0.08, 3), "#04081a")


def _p_horizon(c: _Canvas, rng: random.Random, dark: bool) -> None:  # a sun over water or hills
    c.fill(_sky(rng, dark))
    sy = rng.uniform(0.3, 0.6)
    c.glow(0.5, sy, 0.6, _palette(rng, 1, False)[0], 0.5, ry=0.3)
    c.disc(rng.uniform(0.3, 0.7), sy, rng.uniform(0.08, 0.2), "#fff0b8")
    ground = _palette(rng, 3, True)
    for i, colour in enumerate(ground):
        c.below(_waves(c.x, sy + 0.05 + 0.12 * i, [(rng.uniform(0, 0.04), rng.uniform(0.4, 1.2),
                                                     rng.uniform(0, 6.3))]), colour)


def _p_glow(c: _Canvas, rng: random.Random, dark: bool) -> None:  # a plain ground with soft light
    c.fill(_sky(rng, dark))
    for colour in _palette(rng, rng.randint(1, 3), not dark):
        c.glow(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.3, 0.9), colour, rng.uniform(0.2, 0.6),
               ry=rng.uniform(0.2, 0.9))


_FAMILIES: tuple[Callable[[_Canvas, random.Random, bool], None], ...] = (
    _p_shapes, _p_ridges, _p_waves, _p_blobs, _p_stripes, _p_rings, _p_night, _p_horizon, _p_glow)


def _procedural(c: _Canvas, seed: int) -> None:
    """A wallpaper drawn from ``seed``: one of nine families (shapes, mountains, waves, blobs, stripes, ripples, a
    night sky, a horizon, soft light), its palette a colour scheme around a random hue, light or dark."""
    rng = random.Random(seed)
    family = rng.choice(_FAMILIES)
    family(c, rng, rng.random() < 0.4)



def wallpaper(name: str, width: int, height: int) -> Image.Image:
    """Wallpaper ``name`` (``"000"`` … ``"015"``, ``.jpg`` optional, or ``procedural-<seed>``) as an RGB
    ``width``×``height`` image.

    The image is cached and shared: ``.copy()`` it before drawing on it.
    """
    key = name[:-4] if name.endswith(".jpg") else name
    if not is_wallpaper(key):
        valid = ", ".join(WALLPAPERS)
        raise VluiError(f"unknown wallpaper {name!r}; valid names: {valid} (optionally with .jpg), procedural-<seed>")
    if width < 1 or height < 1:
        raise VluiError(f"wallpaper size must be positive, got {width}x{height}")
    return _render(key, int(width), int(height))


@functools.lru_cache(maxsize=64)
def _render(key: str, width: int, height: int) -> Image.Image:
    canvas = _Canvas(width, height)
    procedural = PROCEDURAL_WALLPAPER.fullmatch(key)
    if procedural:
        _procedural(canvas, int(procedural.group(1)))
    else:
        _DESIGNS[WALLPAPERS.index(key)](canvas)
    return canvas.image()
