"""The procedural wallpapers and icons: right sizes and modes, deterministic, distinct, fast."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from PIL import Image

from vlui.errors import VluiError
from vlui.sim import icons, wallpapers
from vlui.sim.icons import APP_ICONS, GLYPHS, app_icon, glyph
from vlui.sim.wallpapers import WALLPAPERS, wallpaper

PHONE, TABLET = (1080, 2160), (1280, 800)


def _small(im: Image.Image) -> np.ndarray:
    return np.asarray(im.resize((64, 128), Image.Resampling.BOX), dtype=np.float64)


def test_there_are_sixteen_wallpapers_named_like_bmoca_snapshots() -> None:
    assert WALLPAPERS == tuple(f"{i:03d}" for i in range(16))


@pytest.mark.parametrize("name", WALLPAPERS)
@pytest.mark.parametrize("size", [PHONE, TABLET])
def test_wallpaper_has_the_requested_size_and_mode(name: str, size: tuple[int, int]) -> None:
    im = wallpaper(name, *size)
    assert im.mode == "RGB"
    assert im.size == size


def test_the_jpg_suffix_is_optional() -> None:
    assert wallpaper("013.jpg", 90, 180) is wallpaper("013", 90, 180)


@pytest.mark.parametrize("name", WALLPAPERS)
def test_wallpaper_pixels_are_deterministic(name: str) -> None:
    first = np.asarray(wallpaper(name, 301, 577))
    wallpapers._render.cache_clear()
    again = np.asarray(wallpaper(name, 301, 577))
    assert first is not again
    assert np.array_equal(first, again)


def test_wallpapers_are_pairwise_distinct() -> None:
    small = {name: _small(wallpaper(name, 270, 540)) for name in WALLPAPERS}
    for a, b in itertools.combinations(WALLPAPERS, 2):
        assert np.abs(small[a] - small[b]).mean() > 15, (a, b)


def test_wallpapers_include_light_and_dark_ones() -> None:
    brightness = [np.asarray(wallpaper(name, 64, 128).convert("L")).mean() for name in WALLPAPERS]
    assert sum(b > 160 for b in brightness) >= 4
    assert sum(b < 70 for b in brightness) >= 4


@pytest.mark.parametrize("name", WALLPAPERS)
def test_wallpaper_composition_does_not_depend_on_resolution(name: str) -> None:
    low, high = _small(wallpaper(name, 540, 1080)), _small(wallpaper(name, 1440, 3040))
    assert np.abs(low - high).mean() < 6


def test_unknown_wallpaper_names_the_valid_ones() -> None:
    with pytest.raises(VluiError, match="015") as info:
        wallpaper("016.jpg", 100, 200)
    message = str(info.value)
    assert "\n" not in message
    assert all(name in message for name in WALLPAPERS)


def _has_shape(im: Image.Image) -> bool:
    alpha = np.asarray(im.getchannel("A"))
    return bool((alpha == 0).any() and (alpha == 255).any())


@pytest.mark.parametrize("app", APP_ICONS)
@pytest.mark.parametrize("size", [24, 96, 150, 300])
def test_app_icon_is_a_square_rgba_icon(app: str, size: int) -> None:
    im = app_icon(app, size)
    assert im.mode == "RGBA"
    assert im.size == (size, size)
    assert _has_shape(im)


def test_app_icons_are_distinct_and_deterministic() -> None:
    arrays = {app: np.asarray(app_icon(app, 64), dtype=np.float64) for app in APP_ICONS}
    for a, b in itertools.combinations(APP_ICONS, 2):
        assert np.abs(arrays[a] - arrays[b]).mean() > 5, (a, b)
    icons._app_icon.cache_clear()
    assert all(np.array_equal(arrays[app], np.asarray(app_icon(app, 64))) for app in APP_ICONS)


def test_level_glyphs_fill_with_their_level() -> None:
    """The status bar's battery, signal and Wi-Fi icons: more level, more of the icon at full strength."""
    def solid(name: str) -> int:
        return int((np.asarray(glyph(name, 48, (0, 0, 0)).getchannel("A")) > 200).sum())

    for family, levels in (("battery_", range(0, 101, 10)), ("signal_", range(5)), ("wifi_", range(5))):
        counts = [solid(f"{family}{level}") for level in levels]
        assert counts == sorted(counts) and counts[0] < counts[-1], family
    assert solid("battery_charging_50") < solid("battery_50")  # the bolt is cut out of the fill


def test_procedural_wallpapers_are_deterministic_and_differ_by_seed() -> None:
    first = np.asarray(wallpaper("procedural-7", 108, 216)).copy()
    wallpapers._render.cache_clear()
    assert np.array_equal(first, np.asarray(wallpaper("procedural-7", 108, 216)))
    others = [np.asarray(wallpaper(f"procedural-{seed}", 108, 216), dtype=np.float64) for seed in range(8, 20)]
    assert all(np.abs(first - o).mean() > 5 for o in others)
    low, high = _small(wallpaper("procedural-7", 540, 1080)), _small(wallpaper("procedural-7", 1080, 2160))
    assert np.abs(low - high).mean() < 6


def test_the_system_ui_glyphs_are_all_there() -> None:
    assert {"back", "home", "overview", "wifi", "signal", "battery", "call", "call_end"} <= set(GLYPHS)
    assert len(GLYPHS) == len(set(GLYPHS)) >= 58


@pytest.mark.parametrize("name", GLYPHS)
def test_glyph_is_a_square_rgba_icon_in_the_requested_colour(name: str) -> None:
    im = glyph(name, 48, (10, 20, 30))
    assert im.mode == "RGBA"
    assert im.size == (48, 48)
    if name.endswith("_0"):  # an empty battery, signal or Wi-Fi level: the outline at 30% only
        assert 70 <= np.asarray(im.getchannel("A")).max() < 255
    else:
        assert _has_shape(im)
    rgba = np.asarray(im)
    assert (rgba[rgba[..., 3] > 0][:, :3] == (10, 20, 30)).all()


def test_glyphs_are_distinct() -> None:
    """Every glyph but the level variants (tested above; their full levels are the plain glyphs) is its own."""
    names = [n for n in GLYPHS if not re.fullmatch(r"(battery|battery_charging|signal|wifi)_\d+", n)]
    masks = {name: np.asarray(glyph(name, 32, (0, 0, 0)).getchannel("A"), float) for name in names}
    for a, b in itertools.combinations(names, 2):
        assert np.abs(masks[a] - masks[b]).mean() > 3, (a, b)


def test_glyph_colour_may_be_any_sequence() -> None:
    assert glyph("home", 24, [255, 255, 255]) is glyph("home", 24, (255, 255, 255))


def test_unknown_icon_names_raise_with_the_valid_ones() -> None:
    with pytest.raises(VluiError, match="play_store"):
        app_icon("tiktok", 48)
    with pytest.raises(VluiError, match="call_end"):
        glyph("hamburger", 24, (0, 0, 0))


