"""The ingredients of a device configuration: device profiles (``data/devices.yaml``), wallpapers, clock dials."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from vlui.resources import read_yaml

DATA_DIR = Path(__file__).resolve().parent / "data"
DIALS = ("circle", "rectangle")
WALLPAPERS: tuple[str, ...] = tuple(f"{i:03d}" for i in range(16))  # B-MoCA's wallpapers, by number
PROCEDURAL_WALLPAPER = re.compile(r"procedural-(\d{1,9})")  # a wallpaper drawn from a seed: procedural-1234
DEFAULT_TIME = "2026-11-23 08:00"  # a Monday morning; every B-MoCA snapshot starts at the same virtual time


def is_wallpaper(name: str) -> bool:
    """Whether ``name`` is a wallpaper of the simulated phone: one of B-MoCA's (``000`` … ``015``) or a procedural
    one (``procedural-<seed>``)."""
    return name in WALLPAPERS or PROCEDURAL_WALLPAPER.fullmatch(name) is not None


CUSTOM = "custom"  # the device of a snapshot that gives its screen itself (``screen:``) rather than a profile's name


@lru_cache(maxsize=1)
def device_profiles() -> dict[str, dict[str, Any]]:
    """Device profile name -> ``{width, height, dpi, kind, model}``."""
    return read_yaml(DATA_DIR / "devices.yaml")


def screen_profile(device: str, screen: dict[str, Any] | None = None) -> dict[str, Any]:
    """The screen of a configuration: ``screen`` where it gives one (``{width, height, dpi, kind, ...}``), otherwise
    the profile named ``device``."""
    return screen if screen is not None else device_profiles()[device]


def smallest_width_dp(profile: dict[str, Any], dpi: int) -> float:
    """The screen's smallest width in dp at ``dpi`` (what Android's ``sw<N>dp`` resource qualifiers compare)."""
    return min(profile["width"], profile["height"]) * 160 / dpi
