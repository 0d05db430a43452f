"""Colours of the simulated phone's light and dark themes (Android 10, Pixel: Material with Google blue)."""

from __future__ import annotations

from dataclasses import dataclass

from vlui.sim.ui import Color


@dataclass(frozen=True)
class Theme:
    dark: bool
    background: Color  # app window background
    surface: Color  # cards, dialogs, app bars
    on_surface: Color  # primary text
    secondary: Color  # secondary text, summaries
    accent: Color  # Google blue: links, switches on, sliders, FABs
    on_accent: Color
    divider: Color
    icon: Color  # list icons
    switch_off_track: Color
    switch_off_thumb: Color
    scrim: Color  # behind dialogs
    drawer: Color  # app drawer background
    search_bar: Color
    status_text: Color  # status bar over apps
    nav_bar: Color
    nav_icon: Color


LIGHT = Theme(
    dark=False,
    background=(255, 255, 255),
    surface=(255, 255, 255),
    on_surface=(32, 33, 36),
    secondary=(95, 99, 104),
    accent=(26, 115, 232),
    on_accent=(255, 255, 255),
    divider=(218, 220, 224),
    icon=(95, 99, 104),
    switch_off_track=(189, 193, 198),
    switch_off_thumb=(241, 243, 244),
    scrim=(110, 110, 110),
    drawer=(255, 255, 255),
    search_bar=(241, 243, 244),
    status_text=(32, 33, 36),
    nav_bar=(255, 255, 255),
    nav_icon=(95, 99, 104),
)

DARK = Theme(
    dark=True,
    background=(32, 33, 36),
    surface=(41, 42, 45),
    on_surface=(232, 234, 237),
    secondary=(154, 160, 166),
    accent=(138, 180, 248),
    on_accent=(32, 33, 36),
    divider=(60, 64, 67),
    icon=(154, 160, 166),
    switch_off_track=(95, 99, 104),
    switch_off_thumb=(189, 193, 198),
    scrim=(10, 10, 10),
    drawer=(32, 33, 36),
    search_bar=(60, 64, 67),
    status_text=(232, 234, 237),
    nav_bar=(0, 0, 0),
    nav_icon=(232, 234, 237),
)


def theme(dark: bool) -> Theme:
    return DARK if dark else LIGHT
