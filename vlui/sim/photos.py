"""The phone's photos as pixels: a picture for each image file, and what a photo editor's filters make of it.

A phone's image files (Files' state, :mod:`vlui.sim.apps.files`) hold no pixels. An app that shows one (Snapseed's
canvas, its looks and its thumbnails) draws a ``photo`` node (:mod:`vlui.sim.render`), and this module gives its
pixels: one of the scenic wallpaper designs (:mod:`vlui.sim.wallpapers`), chosen by the file's name, so the same file
is always the same picture, with a filter on top. Filters are colour operations of Pillow, no download and no model:
enough that a look or a black-and-white style visibly changes the picture.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable

from PIL import Image, ImageEnhance, ImageFilter, ImageOps

from vlui.errors import VluiError
from vlui.sim import wallpapers

# landscapes and scenes among the wallpaper designs: a sunset over the sea, mountains, a beach, dunes, hills
SCENES = ("001", "002", "006", "011", "013")


def _tint(im: Image.Image, colour: tuple[int, int, int], amount: float) -> Image.Image:
    return Image.blend(im, Image.new("RGB", im.size, colour), amount)


def _enhance(im: Image.Image, colour: float = 1.0, contrast: float = 1.0, brightness: float = 1.0) -> Image.Image:
    im = ImageEnhance.Color(im).enhance(colour)
    im = ImageEnhance.Contrast(im).enhance(contrast)
    return ImageEnhance.Brightness(im).enhance(brightness)


def _noir(style: int) -> Callable[[Image.Image], Image.Image]:
    """A black-and-white style of Noir (1-based, S01 ...): grey with its own contrast, brightness and grain."""
    def apply(im: Image.Image) -> Image.Image:
        grey = ImageOps.grayscale(im)
        grey = ImageEnhance.Contrast(grey).enhance(1.1 + 0.12 * (style % 5))
        grey = ImageEnhance.Brightness(grey).enhance(0.8 + 0.05 * (style % 4))
        if style % 3 == 0:
            grey = grey.filter(ImageFilter.GaussianBlur(0.6))
        return grey.convert("RGB")
    return apply


# What each filter does to a picture, by the name a photo node gives it: Snapseed's looks, and Noir's 14 styles.
FILTERS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "portrait": lambda im: _tint(_enhance(im, colour=0.9, brightness=1.08), (255, 196, 160), 0.12),
    "smooth": lambda im: im.filter(ImageFilter.GaussianBlur(1.2)),
    "pop": lambda im: _enhance(im, colour=1.5, contrast=1.2),
    "accentuate": lambda im: _enhance(im, colour=1.2, contrast=1.3),
    "faded_glow": lambda im: _tint(_enhance(im, contrast=0.8), (255, 255, 255), 0.25),
    "morning": lambda im: _tint(im, (255, 220, 120), 0.15),
    "bright": lambda im: _enhance(im, brightness=1.25),
    "fine_art": lambda im: _enhance(im, colour=0.55, contrast=1.1),
    "push": lambda im: _enhance(im, colour=1.25, contrast=1.45),
    "structure": lambda im: ImageEnhance.Sharpness(im).enhance(3.0),
    "silhouette": lambda im: _enhance(im, contrast=1.6, brightness=0.6),
    **{f"noir:S{i:02d}": _noir(i) for i in range(1, 15)},
}


def photo(name: str, width: int, height: int, filtered: str = "") -> Image.Image:
    """The picture of image file ``name`` as an RGB ``width``×``height`` image, through filter ``filtered`` (a key
    of :data:`FILTERS`, or "" for none). Cached and shared: ``.copy()`` it before drawing on it."""
    if filtered and filtered not in FILTERS:
        raise VluiError(f"unknown photo filter {filtered!r}; filters: {', '.join(FILTERS)}")
    if width < 1 or height < 1:
        raise VluiError(f"photo size must be positive, got {width}x{height}")
    return _render(name, int(width), int(height), filtered)


# a strip's thumbnails (25 filters, small) and the canvas's few large pictures
@functools.lru_cache(maxsize=40)
def _render(name: str, width: int, height: int, filtered: str) -> Image.Image:
    scene = wallpapers.wallpaper(SCENES[zlib.crc32(name.encode()) % len(SCENES)], width, height)
    return FILTERS[filtered](scene.copy()) if filtered else scene
