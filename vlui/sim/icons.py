"""Launcher icons and system glyphs for the simulated phone, drawn with Pillow primitives.

:func:`app_icon` gives an app's Pixel-style (Android 10) launcher icon: a circular adaptive icon with a
soft shadow and a simple glyph. :func:`glyph` gives a monochrome Material-style system icon (navigation
buttons, status bar, dialer, settings, …) in any colour. Both are drawn on a canvas 4× larger (2× for big
sizes) and downsampled with LANCZOS, which antialiases them; both are deterministic and cached, so callers
must not mutate the returned images (``.copy()`` them first).

Glyphs are drawn on the 24×24 grid of Material icons, app icons on a 48×48 grid; :class:`_Pen` scales both.
"""

from __future__ import annotations

import functools
import math
from typing import Callable, Sequence, Union

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from vlui.errors import VluiError
from vlui.sim.typeset import font_file

Ink = Union[int, str]  # 255/0 (paint/erase) on a glyph's mask, a hex colour on an app icon
Point = tuple[float, float]

_GOOGLE = {"blue": "#4285f4", "red": "#ea4335", "yellow": "#fbbc04", "green": "#34a853"}


def _supersample(size: int) -> int:
    return 4 if size <= 192 else 2


class _Pen:
    """Pillow drawing in grid coordinates: ``(0, 0)`` is the top-left corner, ``(grid, grid)`` the other."""

    def __init__(self, im: Image.Image, grid: float) -> None:
        self.im = im
        self.draw = ImageDraw.Draw(im)
        self.k = im.width / grid

    def _box(self, cx: float, cy: float, rx: float, ry: float) -> list[float]:
        k = self.k
        return [(cx - rx) * k, (cy - ry) * k, (cx + rx) * k, (cy + ry) * k]

    def circle(self, cx: float, cy: float, r: float, ink: Ink = 255) -> None:
        self.draw.ellipse(self._box(cx, cy, r, r), fill=ink)

    def ellipse(self, cx: float, cy: float, rx: float, ry: float, ink: Ink = 255, width: float = 0) -> None:
        """A filled ellipse, or its outline ``width`` wide (drawn inside the box)."""
        if width:
            self.draw.ellipse(self._box(cx, cy, rx, ry), outline=ink, width=round(width * self.k))
        else:
            self.draw.ellipse(self._box(cx, cy, rx, ry), fill=ink)

    def ring(self, cx: float, cy: float, r: float, width: float, ink: Ink = 255) -> None:
        """A circle outline whose stroke is centred on radius ``r``."""
        self.ellipse(cx, cy, r + width / 2, r + width / 2, ink, width)

    def rect(
        self, x0: float, y0: float, x1: float, y1: float, ink: Ink = 255, radius: float = 0, width: float = 0
    ) -> None:
        k = self.k
        box = [x0 * k, y0 * k, x1 * k, y1 * k]
        if width:
            self.draw.rounded_rectangle(box, radius * k, outline=ink, width=round(width * k))
        else:
            self.draw.rounded_rectangle(box, radius * k, fill=ink)

    def poly(self, pts: Sequence[Point], ink: Ink = 255, rounded: float = 0) -> None:
        """A filled polygon; ``rounded`` > 0 rounds its corners (and grows it) by a stroke that wide."""
        xy = [(x * self.k, y * self.k) for x, y in pts]
        self.draw.polygon(xy, fill=ink)
        if rounded:
            self.line([*pts, pts[0]], rounded, ink)

    def line(self, pts: Sequence[Point], width: float, ink: Ink = 255) -> None:
        """A polyline with round joints and round caps."""
        w = width * self.k
        self.draw.line([(x * self.k, y * self.k) for x, y in pts], fill=ink, width=round(w), joint="curve")
        for x, y in pts:
            self.circle(x, y, width / 2, ink)

    def arc(
        self, cx: float, cy: float, r: float, start: float, end: float, width: float, ink: Ink = 255
    ) -> None:
        """An arc centred on radius ``r``, from ``start`` to ``end`` (degrees clockwise from 3 o'clock)."""
        box = self._box(cx, cy, r + width / 2, r + width / 2)
        self.draw.arc(box, start, end, fill=ink, width=round(width * self.k))

    def pie(self, cx: float, cy: float, r: float, start: float, end: float, ink: Ink = 255) -> None:
        self.draw.pieslice(self._box(cx, cy, r, r), start, end, fill=ink)

    def text(self, cx: float, cy: float, s: str, size: float, ink: Ink) -> None:
        """``s`` in bold, centred on ``(cx, cy)``; ``size`` is the font size in grid units."""
        px = max(1, round(size * self.k))
        found = font_file("latin", bold=True)
        # no Noto font on this machine: Pillow's built-in one still draws the digits
        font: ImageFont.FreeTypeFont | ImageFont.ImageFont = (
            ImageFont.truetype(str(found[0]), px, layout_engine=ImageFont.Layout.BASIC) if found
            else ImageFont.load_default(px))
        self.draw.text((cx * self.k, cy * self.k), s, fill=ink, font=font, anchor="mm")

    def paste(self, mask: Image.Image, x0: float, y0: float, ink: str) -> None:
        """Paint ``ink`` through an L-mode ``mask`` whose top-left corner goes to grid point ``(x0, y0)``."""
        self.im.paste(ink, (round(x0 * self.k), round(y0 * self.k)), mask)


# ================================================================================================ glyphs
def _spoke(cx: float, cy: float, r0: float, r1: float, degrees: float) -> list[Point]:
    """The segment from radius ``r0`` to ``r1`` around ``(cx, cy)`` at angle ``degrees``."""
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return [(cx + r0 * c, cy + r0 * s), (cx + r1 * c, cy + r1 * s)]


def _speaker(p: _Pen) -> None:
    p.poly([(3, 9), (7, 9), (12, 4.5), (12, 19.5), (7, 15), (3, 15)], rounded=1)


def _handset(p: _Pen) -> None:
    # Material's handset: a quarter ring around (20, 4) that thickens at the ear and mouth pieces.
    p.pie(20, 4, 17, 90, 180)
    p.pie(20, 4, 11.2, 88, 182, 0)
    p.pie(20, 4, 14.6, 112, 158, 0)
    p.rect(18.5, 0, 24, 8.5, 0)  # the pies' shared centre leaves a stray speck there


def _mic(p: _Pen) -> None:
    p.rect(9, 2, 15, 14, radius=3)
    p.arc(12, 11, 6, 0, 180, 1.8)
    p.line([(12, 17), (12, 21)], 1.8)


def _gear(p: _Pen, cx: float, cy: float, r: float, hole_ink: Ink) -> None:
    """A settings cog of outer radius ``r``; its hole is painted in ``hole_ink``."""
    p.circle(cx, cy, r * 0.72)
    for i in range(8):
        a = math.radians(i * 45 + 22.5)
        ca, sa, w = math.cos(a), math.sin(a), r * 0.2
        pts = [(r * 0.55, -w), (r, -w * 0.8), (r, w * 0.8), (r * 0.55, w)]
        p.poly([(cx + u * ca - v * sa, cy + u * sa + v * ca) for u, v in pts], rounded=r * 0.06)
    p.circle(cx, cy, r * 0.3, hole_ink)


def _g_back(p: _Pen) -> None:
    p.poly([(16.5, 5), (16.5, 19), (5.5, 12)], rounded=1.5)


def _g_home(p: _Pen) -> None:
    p.circle(12, 12, 7.5)


def _g_overview(p: _Pen) -> None:
    p.rect(5.5, 5.5, 18.5, 18.5, radius=2)


def _g_wifi(p: _Pen) -> None:
    p.pie(12, 20.5, 17, 225, 315)
    p.line([(12, 20), (12, 20)], 1.5)


def _g_signal(p: _Pen) -> None:
    p.poly([(20.5, 3.5), (20.5, 20.5), (3.5, 20.5)], rounded=1)


def _g_battery(p: _Pen) -> None:
    p.rect(7, 4, 17, 22, radius=1.5)
    p.rect(9.5, 2, 14.5, 5, radius=0.8)


def _g_airplane(p: _Pen) -> None:
    p.rect(10.5, 2, 13.5, 19.5, radius=1.5)
    p.poly([(3, 14), (10.5, 9), (13.5, 9), (21, 14), (21, 16), (13.5, 13.5), (10.5, 13.5), (3, 16)])
    p.poly([(8.5, 20.5), (10.5, 19), (13.5, 19), (15.5, 20.5), (15.5, 22), (12, 21), (8.5, 22)])


def _g_bluetooth(p: _Pen) -> None:
    p.line([(6.5, 7), (17, 17), (12, 22), (12, 2), (17, 7), (6.5, 17)], 1.8)


def _g_search(p: _Pen) -> None:
    p.ring(10, 10, 5.8, 2.2)
    p.line([(14.5, 14.5), (20, 20)], 2.6)


def _g_mic(p: _Pen) -> None:
    _mic(p)


def _g_add(p: _Pen) -> None:
    p.line([(12, 5), (12, 19)], 2)
    p.line([(5, 12), (19, 12)], 2)


def _g_delete_digit(p: _Pen) -> None:
    p.line([(8, 5), (21, 5), (21, 19), (8, 19), (2.5, 12), (8, 5)], 1.8)
    p.line([(11.5, 9), (17, 14.5)], 1.8)
    p.line([(17, 9), (11.5, 14.5)], 1.8)


def _g_call(p: _Pen) -> None:
    _handset(p)


def _g_call_end(p: _Pen) -> None:
    handset = Image.new("L", p.im.size, 0)
    _handset(_Pen(handset, 24))
    # Turned so that the handset lies flat, ear and mouth pieces pointing down: the "hang up" shape.
    centre = (p.im.width / 2, p.im.height * 0.42)
    turned = handset.rotate(-135, resample=Image.Resampling.BICUBIC, center=centre)
    p.im.paste(255, (0, 0), turned)


def _g_arrow_back(p: _Pen) -> None:
    p.line([(20, 12), (5, 12)], 2)
    p.line([(11.5, 5.5), (5, 12), (11.5, 18.5)], 2)


def _g_more_vert(p: _Pen) -> None:
    for y in (5, 12, 19):
        p.circle(12, y, 2)


def _g_alarm(p: _Pen) -> None:
    p.ring(12, 13, 7.5, 2)
    p.line([(12, 9), (12, 13), (15, 15)], 1.8)
    p.line([(2.5, 5.8), (6.5, 2.5)], 2)
    p.line([(21.5, 5.8), (17.5, 2.5)], 2)


def _g_clock(p: _Pen) -> None:
    p.ring(12, 12, 8.8, 2)
    p.line([(12, 7), (12, 12), (16, 14.5)], 1.8)


def _g_timer(p: _Pen) -> None:
    p.rect(5.5, 2, 18.5, 4, radius=0.8)
    p.rect(5.5, 20, 18.5, 22, radius=0.8)
    p.line([(7.5, 4), (7.5, 7.5), (12, 12), (7.5, 16.5), (7.5, 20)], 1.6)
    p.line([(16.5, 4), (16.5, 7.5), (12, 12), (16.5, 16.5), (16.5, 20)], 1.6)
    p.poly([(9.5, 8), (14.5, 8), (12, 10.8)])
    p.poly([(12, 15.5), (15.5, 19.5), (8.5, 19.5)])


def _g_stopwatch(p: _Pen) -> None:
    p.ring(12, 14, 7.5, 2)
    p.rect(9, 1.5, 15, 3.5, radius=0.6)
    p.line([(12, 14), (12, 9.5)], 2)
    p.line([(18.3, 7.5), (20, 5.8)], 1.8)


def _g_expand_more(p: _Pen) -> None:
    p.line([(6, 9), (12, 15), (18, 9)], 2.2)


def _g_expand_less(p: _Pen) -> None:
    p.line([(6, 15), (12, 9), (18, 15)], 2.2)


def _g_brightness(p: _Pen) -> None:
    p.circle(12, 12, 4.5)
    for i in range(8):
        p.line(_spoke(12, 12, 7, 9.5, i * 45), 2)


def _g_dark_theme(p: _Pen) -> None:
    p.ring(12, 12, 8.5, 2)
    p.pie(12, 12, 8.5, 90, 270)


def _g_volume(p: _Pen) -> None:
    _speaker(p)
    p.arc(12, 12, 3.8, -55, 55, 2)
    p.arc(12, 12, 7.8, -55, 55, 2)


def _g_vibrate(p: _Pen) -> None:
    p.rect(8, 3, 16, 21, radius=1.5, width=1.8)
    p.line([(5, 8), (5, 16)], 1.6)
    p.line([(2, 10), (2, 14)], 1.6)
    p.line([(19, 8), (19, 16)], 1.6)
    p.line([(22, 10), (22, 14)], 1.6)


def _g_language(p: _Pen) -> None:
    p.ring(12, 12, 9, 1.8)
    p.ellipse(12, 12, 4.6, 9.9, width=1.6)
    p.line([(3, 12), (21, 12)], 1.5)
    p.line([(5, 7.5), (19, 7.5)], 1.4)
    p.line([(5, 16.5), (19, 16.5)], 1.4)


def _g_info(p: _Pen) -> None:
    p.circle(12, 12, 10)
    p.rect(11, 10.8, 13, 17, 0)
    p.circle(12, 7.8, 1.25, 0)


def _g_apps(p: _Pen) -> None:
    for y in (4, 10, 16):
        for x in (4, 10, 16):
            p.rect(x, y, x + 4, y + 4, radius=0.8)


def _g_display(p: _Pen) -> None:
    p.rect(6.5, 2, 17.5, 22, radius=2, width=2)
    p.line([(10.5, 18.8), (13.5, 18.8)], 1.4)


def _g_sound(p: _Pen) -> None:
    _speaker(p)
    p.arc(12, 12, 4.5, -55, 55, 2)


def _g_system(p: _Pen) -> None:
    p.ring(12, 12, 9, 2)
    p.rect(11, 10.8, 13, 17)
    p.circle(12, 7.8, 1.25)


def _g_network(p: _Pen) -> None:
    p.circle(12, 19, 1.7)
    for r in (5, 9.5, 14):
        p.arc(12, 19.5, r, 225, 315, 2)


def _g_connected(p: _Pen) -> None:
    p.rect(2, 4, 17, 15, radius=1, width=1.8)
    p.rect(5, 18, 13, 19.8)
    p.rect(8, 14, 10, 18.5)
    p.rect(14.5, 7, 23, 22, 0)
    p.rect(16, 8, 22, 21, radius=1.2, width=1.7)


def _g_battery_setting(p: _Pen) -> None:
    p.rect(7, 4, 17, 22, radius=1.5, width=1.8)
    p.rect(9.5, 2, 14.5, 4.5, radius=0.8)
    p.rect(9.3, 13, 14.7, 19.7, radius=0.5)


def _g_storage(p: _Pen) -> None:
    for y in (4, 10, 16):
        p.rect(3, y, 21, y + 4, radius=1)
        p.circle(6, y + 2, 0.9, 0)


def _g_privacy(p: _Pen) -> None:
    p.ellipse(12, 12, 10.5, 6.5)
    p.ellipse(12, 12, 8.7, 4.8, 0)
    p.circle(12, 12, 3.3)


def _g_location(p: _Pen) -> None:
    p.circle(12, 9, 6.5)
    p.poly([(6.25, 11.2), (17.75, 11.2), (12, 21.5)], rounded=0.8)
    p.circle(12, 9, 2.5, 0)


def _g_security(p: _Pen) -> None:
    p.arc(12, 9, 4.3, 180, 360, 2)
    p.line([(7.7, 9), (7.7, 10.5)], 2)
    p.line([(16.3, 9), (16.3, 10.5)], 2)
    p.rect(5, 10, 19, 21.5, radius=1.5)
    p.circle(12, 15.7, 1.7, 0)


def _g_accounts(p: _Pen) -> None:
    p.ring(12, 12, 9.2, 1.8)
    p.circle(12, 9.3, 3.4)
    p.pie(12, 20.3, 6.8, 180, 360)


def _g_accessibility(p: _Pen) -> None:
    p.circle(12, 4, 2.2)
    p.rect(3, 7, 21, 9, radius=0.6)
    p.rect(9, 7, 15, 14.5)
    p.rect(9, 13, 11, 22, radius=0.6)
    p.rect(13, 13, 15, 22, radius=0.6)


def _g_wellbeing(p: _Pen) -> None:
    p.circle(8.3, 9, 4.6)
    p.circle(15.7, 9, 4.6)
    p.poly([(4, 11), (20, 11), (12, 20.5)], rounded=1)


def _g_google(p: _Pen) -> None:
    p.arc(12, 12, 7.6, 0, 318, 3)
    p.rect(12, 10.5, 21.1, 13.5)


def _g_keypad(p: _Pen) -> None:
    for y in (3.5, 8.5, 13.5):
        for x in (6, 12, 18):
            p.circle(x, y, 2)
    p.circle(12, 19.5, 2)


def _g_star(p: _Pen) -> None:
    pts = []
    for i in range(10):
        a = math.radians(-90 + i * 36)
        r = 10 if i % 2 == 0 else 4.2
        pts.append((12 + r * math.cos(a), 12.8 + r * math.sin(a)))
    p.poly(pts, rounded=0.6)


def _g_history(p: _Pen) -> None:
    p.arc(13, 12, 8, 180, 140, 2)
    p.poly([(1.8, 11), (8.2, 11), (5, 15)])
    p.line([(13, 8), (13, 12.5), (16.5, 14.5)], 1.8)


def _g_person(p: _Pen) -> None:
    p.circle(12, 7.5, 4)
    p.pie(12, 20.5, 8, 180, 360)


def _g_folder(p: _Pen) -> None:
    p.rect(2, 4, 11, 9, radius=2)
    p.rect(2, 6, 22, 20, radius=2)


def _g_image(p: _Pen) -> None:
    p.rect(3, 3, 21, 21, radius=2, width=2)
    p.poly([(6, 18), (10, 12), (13, 15.5), (15, 13), (18, 18)])
    p.circle(16, 8, 1.8)


def _g_video(p: _Pen) -> None:
    p.rect(2, 6, 16, 18, radius=1.5)
    p.poly([(15, 12), (22, 6.5), (22, 17.5)])


def _g_audio(p: _Pen) -> None:
    p.circle(10, 17, 4)
    p.rect(12.2, 3, 14, 17)
    p.rect(12.2, 3, 18, 7)


def _g_document(p: _Pen) -> None:
    p.line([(14, 2.5), (6, 2.5), (6, 21.5), (19, 21.5), (19, 7.5), (14, 2.5), (14, 7.5), (19, 7.5)], 1.8)
    p.line([(9, 12.5), (16, 12.5)], 1.6)
    p.line([(9, 16.5), (16, 16.5)], 1.6)


def _g_download(p: _Pen) -> None:
    p.rect(10, 3, 14, 10)
    p.poly([(6, 9.5), (18, 9.5), (12, 15.5)])
    p.line([(4, 15), (4, 20), (20, 20), (20, 15)], 2)


def _g_camera_shutter(p: _Pen) -> None:
    p.ring(12, 12, 9.5, 2)
    p.circle(12, 12, 7)


def _g_mic_off(p: _Pen) -> None:
    _mic(p)
    p.line([(3.5, 3.5), (20.5, 20.5)], 4, 0)
    p.line([(3.5, 3.5), (20.5, 20.5)], 1.8)


def _g_speaker_phone(p: _Pen) -> None:
    p.rect(7, 10, 17, 22, radius=1.5, width=1.8)
    p.circle(12, 17.5, 2.2)
    p.arc(12, 9, 3.5, 225, 315, 1.8)
    p.arc(12, 9, 7.5, 225, 315, 1.8)


def _g_pause(p: _Pen) -> None:
    p.rect(6, 5, 10, 19, radius=0.5)
    p.rect(14, 5, 18, 19, radius=0.5)


def _g_play(p: _Pen) -> None:
    p.poly([(8.5, 5.5), (8.5, 18.5), (18.5, 12)], rounded=1.2)


def _g_edit(p: _Pen) -> None:
    # a pencil pointing down-left: the body along the diagonal, its tip, and the eraser cap apart from it
    p.poly([(3, 17.25), (14.06, 6.19), (17.81, 9.94), (6.75, 21), (3, 21)])
    p.poly([(15.2, 5.05), (16.95, 3.3), (20.7, 7.05), (18.95, 8.8)], rounded=0.6)


def _g_close(p: _Pen) -> None:
    p.line([(6, 6), (18, 18)], 2.2)
    p.line([(18, 6), (6, 18)], 2.2)


# Wikipedia (B-MoCA release 2.5): the More tab's menu, the More sheet's Settings and Donate, and the launcher icon
def _g_menu(p: _Pen) -> None:
    for y in (6, 12, 18):
        p.line([(3, y), (21, y)], 2)


def _g_settings(p: _Pen) -> None:
    for i in range(8):
        p.line(_spoke(12, 12, 6, 10, i * 45), 3.4)
    p.ring(12, 12, 5.6, 3.2)


def _g_explore(p: _Pen) -> None:
    p.ring(12, 12, 8.6, 2)
    p.poly([(15.5, 8.5), (13.4, 13.4), (8.5, 15.5), (10.6, 10.6)])


def _g_heart(p: _Pen) -> None:
    p.circle(8, 9, 4.6)
    p.circle(16, 9, 4.6)
    p.poly([(3.6, 10.6), (20.4, 10.6), (12, 20.5)])


# Status-bar glyphs that show a level: the part beyond the level is drawn at 30% (Android 10's empty part).
_DIM = 77


def _battery_level(p: _Pen, level: int, charging: bool) -> None:
    p.rect(7, 4, 17, 22, _DIM, radius=1.5)
    p.rect(9.5, 2, 14.5, 5, _DIM if level < 100 else 255, radius=0.8)
    top = 22 - 18 * level / 100
    if level > 0:
        p.rect(7, max(top, 4), 17, 22, radius=1.5 if top < 20.5 else 0.5)
    if charging:  # a bolt cut out of the battery
        p.poly([(13, 6.5), (8.5, 14), (11.5, 14), (10.5, 20), (15.5, 11.5), (12.5, 11.5)], 0)


def _signal_level(p: _Pen, bars: int) -> None:
    p.poly([(20.5, 3.5), (20.5, 20.5), (3.5, 20.5)], _DIM, rounded=1)
    if bars:
        x = 3.5 + 17 * bars / 4
        p.poly([(x, 20.5 - 17 * bars / 4), (x, 20.5), (3.5, 20.5)], rounded=1 if bars == 4 else 0)


def _wifi_level(p: _Pen, bars: int) -> None:
    p.pie(12, 20.5, 17, 225, 315, _DIM)
    if bars:
        p.pie(12, 20.5, 17 * (bars + 1) / 5, 225, 315)


def _g_mail(p: _Pen) -> None:
    p.rect(2.5, 5, 21.5, 19, radius=1.5)
    p.line([(4.5, 7.5), (12, 12.5), (19.5, 7.5)], 1.8, 0)


def _g_message(p: _Pen) -> None:
    p.rect(3, 3, 21, 17, radius=2)
    p.poly([(6, 16), (6, 21.5), (11.5, 16)])


def _g_send(p: _Pen) -> None:
    # Material's send: a paper plane pointing right, notched at its tail
    p.poly([(2.01, 21), (23, 12), (2.01, 3), (2, 10), (17, 12), (2, 14)])


def _g_content_copy(p: _Pen) -> None:
    # Material's content_copy: a sheet outlined behind, a filled sheet in front
    p.line([(4, 16), (4, 3), (15, 3)], 2)
    p.rect(8, 7, 20, 22, radius=1.5)


def _g_share(p: _Pen) -> None:
    # Material's share: three dots, the one at the start joined to the other two
    p.line([(18, 5), (6, 12), (18, 19)], 1.8)
    for x, y in ((18, 5), (6, 12), (18, 19)):
        p.circle(x, y, 3)


def _g_check(p: _Pen) -> None:
    # Material's check: what a chosen item shows in place of its icon
    p.line([(4.5, 12.5), (9.5, 17.5), (19.5, 7)], 2.4)


def _g_event(p: _Pen) -> None:
    p.rect(3.5, 5, 20.5, 21, radius=1.5)
    p.rect(5.5, 10, 18.5, 19, 0)
    p.rect(13, 13, 16.5, 16.5)
    p.line([(7.5, 3), (7.5, 6)], 1.8)
    p.line([(16.5, 3), (16.5, 6)], 1.8)


def _g_do_not_disturb(p: _Pen) -> None:
    p.circle(12, 12, 9.5)
    p.rect(7, 10.8, 17, 13.2, 0, radius=0.6)


def _g_auto_rotate(p: _Pen) -> None:
    p.arc(12, 12, 8.5, 200, 340, 1.8)
    p.arc(12, 12, 8.5, 20, 160, 1.8)
    p.poly([(17.5, 4.5), (21.5, 7.5), (16.5, 9.5)])
    p.poly([(6.5, 19.5), (2.5, 16.5), (7.5, 14.5)])
    p.rect(9.5, 8, 14.5, 16, radius=1)


# Walmart (B-MoCA release 2.5): its bottom navigation's and header's icons
def _g_storefront(p: _Pen) -> None:
    p.poly([(3, 9), (5, 3.5), (19, 3.5), (21, 9)])
    p.rect(4.5, 10.5, 19.5, 20.5, width=1.8)
    p.rect(10, 14, 14, 20.5)


def _g_cart(p: _Pen) -> None:
    p.line([(2, 4), (5, 4), (7.5, 15), (18.5, 15), (21, 7), (6.2, 7)], 1.8)
    p.circle(9, 19, 1.8)
    p.circle(17, 19, 1.8)


# Instagram (B-MoCA release 2.5): its tab bar's icons
def _g_house(p: _Pen) -> None:
    p.poly([(12, 3), (21, 11), (19, 11), (19, 21), (14.5, 21), (14.5, 15), (9.5, 15), (9.5, 21), (5, 21), (5, 11),
            (3, 11)], rounded=0.8)


def _g_reels(p: _Pen) -> None:
    p.rect(3.5, 3.5, 20.5, 20.5, radius=4, width=1.8)
    p.line([(3.5, 8.5), (20.5, 8.5)], 1.6)
    p.line([(8, 3.5), (10.5, 8.5)], 1.6)
    p.line([(13.5, 3.5), (16, 8.5)], 1.6)
    p.poly([(10, 11.5), (10, 17.5), (15, 14.5)])


def _g_new_post(p: _Pen) -> None:
    p.rect(3.5, 3.5, 20.5, 20.5, radius=5, width=1.8)
    p.line([(12, 8), (12, 16)], 1.8)
    p.line([(8, 12), (16, 12)], 1.8)


def _levels() -> dict[str, Callable[[_Pen], None]]:
    """``battery_<0..100 by 10>``, ``battery_charging_<…>``, ``signal_<0..4>``, ``wifi_<0..4>``; a full level is
    the plain glyph (``battery``, ``signal``, ``wifi``), drawn exactly as it is."""
    table: dict[str, Callable[[_Pen], None]] = {}
    for level in range(0, 101, 10):
        table[f"battery_{level}"] = functools.partial(_battery_level, level=level, charging=False)
        table[f"battery_charging_{level}"] = functools.partial(_battery_level, level=level, charging=True)
    for bars in range(5):
        table[f"signal_{bars}"] = functools.partial(_signal_level, bars=bars)
        table[f"wifi_{bars}"] = functools.partial(_wifi_level, bars=bars)
    table.update(battery_100=_g_battery, signal_4=_g_signal, wifi_4=_g_wifi)
    return table


# Every glyph, by the name widgets give it: one table, so a new glyph is one function and one entry here.
_GLYPH_DRAW: dict[str, Callable[[_Pen], None]] = {
    "back": _g_back, "home": _g_home, "overview": _g_overview, "wifi": _g_wifi, "signal": _g_signal,
    "battery": _g_battery, "airplane": _g_airplane, "bluetooth": _g_bluetooth, "search": _g_search, "mic": _g_mic,
    "add": _g_add, "delete_digit": _g_delete_digit, "call": _g_call, "call_end": _g_call_end,
    "arrow_back": _g_arrow_back, "more_vert": _g_more_vert, "alarm": _g_alarm, "clock": _g_clock, "timer": _g_timer,
    "stopwatch": _g_stopwatch, "expand_more": _g_expand_more, "expand_less": _g_expand_less,
    "brightness": _g_brightness, "dark_theme": _g_dark_theme, "volume": _g_volume, "vibrate": _g_vibrate, "language": _g_language, "info": _g_info,
    "apps": _g_apps, "display": _g_display, "sound": _g_sound, "system": _g_system, "network": _g_network,
    "connected": _g_connected, "battery_setting": _g_battery_setting, "storage": _g_storage, "privacy": _g_privacy,
    "location": _g_location, "security": _g_security, "accounts": _g_accounts, "accessibility": _g_accessibility,
    "wellbeing": _g_wellbeing, "google": _g_google, "keypad": _g_keypad, "star": _g_star, "history": _g_history,
    "person": _g_person, "folder": _g_folder, "image": _g_image, "video": _g_video, "audio": _g_audio,
    "document": _g_document, "download": _g_download, "camera_shutter": _g_camera_shutter, "mic_off": _g_mic_off,
    "speaker_phone": _g_speaker_phone, "pause": _g_pause, "play": _g_play, "edit": _g_edit, "close": _g_close,
    "mail": _g_mail, "message": _g_message, "send": _g_send, "content_copy": _g_content_copy, "share": _g_share,
    "check": _g_check, "event": _g_event, "do_not_disturb": _g_do_not_disturb,
    "auto_rotate": _g_auto_rotate, **_levels(),
    "menu": _g_menu, "settings": _g_settings, "heart": _g_heart, "explore": _g_explore,  # Wikipedia
    "storefront": _g_storefront, "cart": _g_cart,
    "house": _g_house, "reels": _g_reels, "new_post": _g_new_post,
}
GLYPHS: tuple[str, ...] = tuple(_GLYPH_DRAW)


def _glyph_mask(name: str, px: int) -> Image.Image:
    """The glyph's coverage at ``px``×``px`` without antialiasing (for drawing into larger canvases)."""
    mask = Image.new("L", (px, px), 0)
    _GLYPH_DRAW[name](_Pen(mask, 24))
    return mask


def glyph(name: str, size: int, color: Sequence[int]) -> Image.Image:
    """The system icon ``name`` as an RGBA ``size``×``size`` image in ``color``, transparent elsewhere.

    The image is cached and shared: ``.copy()`` it before drawing on it.
    """
    if name not in _GLYPH_DRAW:
        raise VluiError(f"unknown glyph {name!r}; valid names: {', '.join(GLYPHS)}")
    if size < 1:
        raise VluiError(f"glyph size must be positive, got {size}")
    return _glyph(name, int(size), tuple(int(c) for c in color[:3]))


@functools.lru_cache(maxsize=1024)
def _glyph(name: str, size: int, color: tuple[int, int, int]) -> Image.Image:
    mask = _glyph_mask(name, size * _supersample(size)).resize((size, size), Image.Resampling.LANCZOS)
    im = Image.new("RGBA", (size, size), (*color, 0))
    im.putalpha(mask)
    return im


# ============================================================================================= app icons
# Every app icon is a circle of radius 21 centred at (24, 23.5) on the 48 grid, over a soft shadow.
_CX, _CY, _R = 24, 23.5, 21


def _a_calendar(p: _Pen) -> None:
    p.rect(13, 12, 35, 35, _GOOGLE["blue"], radius=3)
    p.rect(15.5, 17.5, 32.5, 32.5, "#ffffff", radius=1)
    p.text(24, 25.5, "31", 11, _GOOGLE["blue"])


def _a_camera(p: _Pen) -> None:
    p.rect(19, 12.5, 29, 18, "#3c4043", radius=2)
    p.rect(11.5, 16, 36.5, 33.5, "#3c4043", radius=3.5)
    p.circle(24, 25, 6.8, "#ffffff")
    p.circle(24, 25, 4.6, _GOOGLE["blue"])
    p.circle(22.4, 23.4, 1.2, "#ffffff")


def _a_chrome(p: _Pen) -> None:
    p.pie(_CX, _CY, _R, 210, 330, "#db4437")
    p.pie(_CX, _CY, _R, 330, 450, "#f4b400")
    p.pie(_CX, _CY, _R, 90, 210, "#0f9d58")
    p.circle(_CX, _CY, 9.5, "#ffffff")
    p.circle(_CX, _CY, 7.6, _GOOGLE["blue"])


def _a_clock(p: _Pen) -> None:
    p.circle(_CX, _CY, 14.5, "#ffffff")
    for i in range(12):
        p.line(_spoke(_CX, _CY, 11 if i % 3 == 0 else 12, 12.8, i * 30), 0.9, "#9aa0a6")
    p.line([(_CX, _CY), (_CX, _CY - 9)], 2.2, "#3c4043")
    p.line([(_CX, _CY), (_CX + 6, _CY + 3.5)], 2.2, "#1a73e8")
    p.circle(_CX, _CY, 1.6, "#1a73e8")


def _a_contacts(p: _Pen) -> None:
    p.circle(24, 17.5, 5.5, "#ffffff")
    p.pie(24, 34.5, 10.5, 180, 360, "#ffffff")


def _a_files(p: _Pen) -> None:
    p.rect(12, 14, 23, 20, "#1967d2", radius=2)
    p.rect(12, 17, 36, 34, _GOOGLE["blue"], radius=2.5)
    p.rect(15, 22, 33, 24, "#8ab4f8", radius=1)


def _a_gmail(p: _Pen) -> None:
    p.rect(11, 15, 37, 33, "#f1f3f4", radius=2)
    p.line([(12.8, 31.5), (12.8, 16.8), (24, 25.5), (35.2, 16.8), (35.2, 31.5)], 3.4, _GOOGLE["red"])


def _a_maps(p: _Pen) -> None:
    size = p.im.width
    tiles = Image.new("RGBA", (size, size), "#e8eaed")
    t = _Pen(tiles, 48)
    t.poly([(0, 0), (26, 0), (0, 26)], _GOOGLE["green"])
    t.poly([(48, 48), (48, 30), (30, 48)], _GOOGLE["blue"])
    t.line([(4, 44), (44, 4)], 6, _GOOGLE["yellow"])
    t.line([(0, 34), (14, 48)], 3, "#ffffff")
    disc = Image.new("L", (size, size), 0)
    _Pen(disc, 48).circle(_CX, _CY, _R)
    p.im.paste(tiles, (0, 0), disc)
    p.circle(28, 18, 7.5, _GOOGLE["red"])
    p.poly([(21.2, 21.2), (34.8, 21.2), (28, 33)], _GOOGLE["red"], rounded=1)
    p.circle(28, 18, 2.8, "#a50e0e")


def _a_messages(p: _Pen) -> None:
    p.rect(11.5, 12.5, 36.5, 31, "#1a73e8", radius=5)
    p.poly([(14, 28), (12, 37), (22, 30)], "#1a73e8")
    p.line([(17, 19), (31, 19)], 2.2, "#ffffff")
    p.line([(17, 24.5), (27, 24.5)], 2.2, "#ffffff")


def _a_phone(p: _Pen) -> None:
    p.paste(_glyph_mask("call", round(24 * p.k)), 12, 11.5, "#ffffff")


def _a_photos(p: _Pen) -> None:
    s = 7.2
    p.pie(24 - s, 24, s, 180, 360, _GOOGLE["red"])
    p.pie(24, 24 - s, s, 270, 450, _GOOGLE["yellow"])
    p.pie(24 + s, 24, s, 0, 180, _GOOGLE["green"])
    p.pie(24, 24 + s, s, 90, 270, _GOOGLE["blue"])


def _a_play_music(p: _Pen) -> None:
    p.arc(24, 25, 9.5, 180, 360, 3, "#ffffff")
    p.rect(12.5, 24, 19, 34, "#ffffff", radius=2.2)
    p.rect(29, 24, 35.5, 34, "#ffffff", radius=2.2)


def _a_settings(p: _Pen) -> None:
    mask = Image.new("L", p.im.size, 0)
    _gear(_Pen(mask, 48), _CX, _CY, 13, 0)
    p.im.paste("#ffffff", (0, 0), mask)


def _a_youtube(p: _Pen) -> None:
    p.rect(10, 14.5, 38, 33, "#ff0000", radius=6)
    p.poly([(20.5, 19), (20.5, 28.5), (29, 23.75)], "#ffffff")


def _a_google(p: _Pen) -> None:
    cx, cy, r, w = 24, 23.5, 9.5, 5
    p.arc(cx, cy, r, 200, 322, w, _GOOGLE["red"])
    p.arc(cx, cy, r, 145, 205, w, _GOOGLE["yellow"])
    p.arc(cx, cy, r, 40, 150, w, _GOOGLE["green"])
    p.arc(cx, cy, r, -2, 45, w, _GOOGLE["blue"])
    p.rect(cx, cy - 2.3, cx + r + w / 2, cy + 2.3, _GOOGLE["blue"])


def _a_play_store(p: _Pen) -> None:
    a, b, c, m = (16, 12), (16, 35), (35, 23.5), (23.5, 23.5)

    def along(p0: Point, p1: Point, t: float) -> Point:
        return p0[0] + t * (p1[0] - p0[0]), p0[1] + t * (p1[1] - p0[1])

    up, lo = along(a, c, 0.6), along(b, c, 0.6)
    p.poly([a, b, m], "#00b0ff")
    p.poly([a, up, m], "#00d26a")
    p.poly([b, lo, m], "#ff3a44")
    p.poly([up, c, lo, m], "#ffc400")


def _a_calculator(p: _Pen) -> None:
    # Calculator 8's icon: the four operations in white on blue, two by two
    w = 2.4
    p.line([(13.5, 17), (20.5, 17)], w, "#ffffff")
    p.line([(17, 13.5), (17, 20.5)], w, "#ffffff")
    p.line([(27.5, 17), (34.5, 17)], w, "#ffffff")
    p.line([(14, 27), (20, 33)], w, "#ffffff")
    p.line([(20, 27), (14, 33)], w, "#ffffff")
    p.line([(27.5, 28), (34.5, 28)], w, "#ffffff")
    p.line([(27.5, 32), (34.5, 32)], w, "#ffffff")


def _a_wikipedia(p: _Pen) -> None:
    # the app's icon: a black serif W on white
    p.line([(12.5, 16), (18, 33), (24, 19), (30, 33), (35.5, 16)], 2.6, "#202122")
    for x in (12.5, 24, 35.5):
        p.line([(x - 3, 16), (x + 3, 16)], 1.4, "#202122")


def _a_snapseed(p: _Pen) -> None:  # Snapseed (B-MoCA release 2.5): a white leaf on green
    p.poly([(15, 33), (17, 22), (24, 15), (33, 13), (31, 24), (24, 31)], "#ffffff", rounded=2)
    p.line([(15, 33), (26, 22)], 1.6, "#59a442")


def _a_walmart(p: _Pen) -> None:
    """Walmart's spark: six yellow petals around the middle."""
    for i in range(6):
        a = math.radians(-90 + 60 * i)
        c, s = math.cos(a), math.sin(a)
        p.line([(24 + 3.5 * c, 24 + 3.5 * s), (24 + 10 * c, 24 + 10 * s)], 4.2, "#ffc220")


def _a_instagram(p: _Pen) -> None:
    """Instagram's camera: a rounded square, the lens and the flash, in white."""
    p.rect(13, 13, 35, 35, "#ffffff", radius=7, width=2.6)
    p.ring(24, 24, 5.2, 2.6, "#ffffff")
    p.circle(30.2, 17.8, 1.5, "#ffffff")


# (background colour, glyph) for each app, in the order of APP_ICONS.
_APPS: dict[str, tuple[str, Callable[[_Pen], None]]] = {
    "calendar": ("#ffffff", _a_calendar),
    "camera": ("#ffffff", _a_camera),
    "chrome": ("#ffffff", _a_chrome),
    "clock": ("#1a73e8", _a_clock),
    "contacts": ("#1a73e8", _a_contacts),
    "files": ("#ffffff", _a_files),
    "gmail": ("#ffffff", _a_gmail),
    "maps": ("#ffffff", _a_maps),
    "messages": ("#ffffff", _a_messages),
    "phone": ("#1a73e8", _a_phone),
    "photos": ("#ffffff", _a_photos),
    "play_music": ("#ff6d00", _a_play_music),
    "settings": ("#5f7d95", _a_settings),
    "youtube": ("#ffffff", _a_youtube),
    "google": ("#ffffff", _a_google),
    "play_store": ("#ffffff", _a_play_store),
    "calculator": ("#4285f4", _a_calculator),
    "snapseed": ("#59a442", _a_snapseed),
    "wikipedia": ("#ffffff", _a_wikipedia),
    "walmart": ("#0071dc", _a_walmart),
    "instagram": ("#d62976", _a_instagram),
}
APP_ICONS: tuple[str, ...] = tuple(_APPS)


def app_icon(app: str, size: int) -> Image.Image:
    """The launcher icon of ``app`` as an RGBA ``size``×``size`` image.

    The image is cached and shared: ``.copy()`` it before drawing on it.
    """
    if app not in _APPS:
        raise VluiError(f"unknown app icon {app!r}; valid names: {', '.join(APP_ICONS)}")
    if size < 1:
        raise VluiError(f"icon size must be positive, got {size}")
    return _app_icon(app, int(size))


@functools.lru_cache(maxsize=256)
def _app_icon(app: str, size: int) -> Image.Image:
    px = size * _supersample(size)
    k = px / 48
    # A soft drop shadow, as the Pixel launcher draws under every adaptive icon.
    shadow = Image.new("L", (px, px), 0)
    _Pen(shadow, 48).circle(_CX, _CY + 1, _R)
    shadow = shadow.filter(ImageFilter.BoxBlur(k * 0.8)).point(lambda v: v * 70 // 255)
    im = Image.new("RGBA", (px, px), (0, 0, 0, 0))
    im.putalpha(shadow)
    background, draw = _APPS[app]
    pen = _Pen(im, 48)
    pen.circle(_CX, _CY, _R, background)
    draw(pen)
    return im.resize((size, size), Image.Resampling.LANCZOS)
