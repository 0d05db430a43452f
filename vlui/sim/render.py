"""Draw a widget tree to pixels at the screen's full resolution, and observe it as every backend does.

An observation is :func:`vlui.device.observe` of the full-resolution frame, exactly what the ADB path computes from
a screenshot, so a policy sees the same pixels on the simulated phone and on an emulator. (Drawing directly at the
observation's size was 5 times faster on new screens but gave other pixels: text hinted at 3 pixels, icons and
wallpapers at other aspect ratios.) Frames and observations are cached by the tree's drawing content, so an action
that does not change the screen costs no drawing at all.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from vlui.device import observe
from vlui.sim import icons, photos, typeset, wallpapers
from vlui.sim.theme import Theme
from vlui.sim.ui import Node


@dataclass(frozen=True)
class Style:
    """What the renderer needs to know besides the tree: theme, wallpaper and the locale's fonts."""

    theme: Theme
    wallpaper: str
    rtl: bool
    cjk: str = "cjk-sc"
    arabic: str = "arabic"


def visual_nodes(root: Node) -> list[Node]:
    """The nodes that draw something, in drawing order."""
    return [n for n in root.walk() if n.bg is not None or (n.text and n.size) or n.icon or n.kind]


def draw_ops(nodes: list[Node]) -> tuple:
    """The drawing content of ``nodes`` as a hashable tuple: equal ops render to equal pixels."""
    return tuple((n.bounds, n.bg, n.radius, n.text if n.size else "", n.fg, n.size, n.bold, n.align, n.valign,
                  n.inset, n.icon, n.icon_color, n.kind, n.value, n.checked, n.enabled, _freeze(n.extra))
                 for n in nodes)


def _paste(img: Image.Image, source, x: int, y: int, mask: Image.Image) -> None:
    """Paste ``source`` (an image or a colour) through ``mask`` at ``(x, y)``, clipped to ``img``. Straight to the
    imaging core: for the small labels and icons of a frame, Image.paste's argument checks cost more than the copy."""
    w, h = mask.size
    img.im.paste(source if isinstance(source, tuple) else source.im, (x, y, x + w, y + h), mask.im)


def _freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class Renderer:
    """Renders trees for one device configuration; keeps an LRU cache of recent full-resolution frames and
    observations, at most ``cache_size`` of them and ``cache_bytes`` in all (a full frame is about 7 MB, a 256x128
    observation 96 KB). Drawing a frame only to observe it caches the observation, not the frame."""

    def __init__(self, style: Style, screen: tuple[int, int], cache_size: int = 256,
                 cache_bytes: int = 256 << 20) -> None:
        self.style = style
        self.screen = screen  # (width, height) in device pixels
        self._cache: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes
        self._cached_bytes = 0

    def render(self, root: Node) -> np.ndarray:
        """``root`` drawn at full resolution, an ``(height, width, 3)`` uint8 array (read-only, cached)."""
        nodes = visual_nodes(root)
        key = ("screen", hash(draw_ops(nodes)))
        frame = self._cached(key)
        if frame is None:
            frame = self._keep(key, np.asarray(self._image(nodes)))
        return frame

    def observation(self, root: Node, width: int, height: int) -> np.ndarray:
        """``root`` observed at ``(height, width)``: :func:`vlui.device.observe` of its full-resolution frame
        (read-only, cached)."""
        nodes = visual_nodes(root)
        ops = hash(draw_ops(nodes))
        key = ("observation", width, height, ops)
        obs = self._cached(key)
        if obs is None:
            screen = self._cached(("screen", ops))
            obs = self._keep(key, observe(screen if screen is not None else self._image(nodes), height, width))
        return obs

    def cached(self) -> tuple[int, int]:
        """(frames and observations cached, their bytes)."""
        return len(self._cache), self._cached_bytes

    def clear_cache(self) -> None:
        self._cache.clear()
        self._cached_bytes = 0

    def _image(self, nodes: list[Node]) -> Image.Image:
        """``nodes`` (a tree's :func:`visual_nodes`) drawn at full resolution."""
        img = Image.new("RGB", self.screen, self.style.theme.background)
        self.draw(img, nodes, 1.0, 1.0)
        return img

    def _cached(self, key: tuple) -> np.ndarray | None:
        frame = self._cache.get(key)
        if frame is not None:
            self._cache.move_to_end(key)
        return frame

    def _keep(self, key: tuple, frame: np.ndarray) -> np.ndarray:
        frame.setflags(write=False)
        self._cache[key] = frame
        self._cached_bytes += frame.nbytes
        while len(self._cache) > 1 and (len(self._cache) > self.cache_size or self._cached_bytes > self.cache_bytes):
            self._cached_bytes -= self._cache.popitem(last=False)[1].nbytes
        return frame

    # ------------------------------------------------------------------------------------------------ drawing
    def draw(self, img: Image.Image, nodes: list[Node], sx: float, sy: float) -> None:
        draw = ImageDraw.Draw(img)
        s = min(sx, sy)
        for n in nodes:
            x1, y1, x2, y2 = n.bounds
            box = (int(x1 * sx + 0.5), int(y1 * sy + 0.5), int(x2 * sx + 0.5), int(y2 * sy + 0.5))
            if box[2] <= box[0] or box[3] <= box[1]:
                continue
            if n.icon == "wallpaper":
                img.paste(wallpapers.wallpaper(self.style.wallpaper, box[2] - box[0], box[3] - box[1]), box[:2])
            if n.bg is not None:
                self._fill(draw, box, n.bg, round(n.radius * s) if n.radius > 0 else n.radius)
            if n.kind:
                self._KINDS[n.kind](self, img, draw, n, box, s)
            if n.icon and n.icon != "wallpaper":
                self._draw_icon(img, n, box)
            if n.text and n.size:
                self._draw_text(img, n, box, s)

    @staticmethod
    def _fill(draw: ImageDraw.ImageDraw, box, color, radius: int) -> None:
        x1, y1, x2, y2 = box
        if radius < 0:
            draw.ellipse((x1, y1, x2 - 1, y2 - 1), fill=color)
        elif radius > 0:
            draw.rounded_rectangle((x1, y1, x2 - 1, y2 - 1), radius=radius, fill=color)
        else:
            draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=color)

    def _draw_icon(self, img: Image.Image, n: Node, box) -> None:
        x1, y1, x2, y2 = box
        size = max(1, min(x2 - x1, y2 - y1))
        kind, _, name = n.icon.partition(":")
        if kind == "app":
            im = icons.app_icon(name, size)
        else:
            im = icons.glyph(name, size, n.icon_color or self.style.theme.icon)
        _paste(img, im, x1 + (x2 - x1 - size) // 2, y1 + (y2 - y1 - size) // 2, im)

    def _draw_text(self, img: Image.Image, n: Node, box, s: float) -> None:
        x1, y1, x2, y2 = box
        size = max(3, round(n.size * s))
        align = n.align
        if self.style.rtl and n.mirror and align != "center":
            align = "end" if align == "start" else "start"
        inset = round(n.inset * s)
        if align == "start":
            x1 += inset
        elif align == "end":
            x2 -= inset
        line = typeset.layout(n.text, size, n.bold, max(1, x2 - x1), self.style.cjk, self.style.arabic)
        if align == "center":
            x = x1 + (x2 - x1 - line.width) // 2
        elif align == "end":
            x = x2 - line.width
        else:
            x = x1
        height = line.ascent + line.descent
        y = y1 + (y2 - y1 - height) // 2 if n.valign == "center" else y1
        for script, chunk, dx in line.runs:
            m, ox, oy = typeset.mask(script, chunk, size, n.bold)
            if m is not None:
                _paste(img, n.fg, x + dx + ox, y + line.ascent + oy, m)

    # ------------------------------------------------------------------------------------------ special kinds
    def _draw_switch(self, img, draw, n: Node, box, s: float) -> None:
        t = self.style.theme
        x1, y1, x2, y2 = box
        cy, h = (y1 + y2) / 2, (y2 - y1)
        track_h = h * 0.42
        on = n.checked
        track = (tuple(int(c * 0.5 + b * 0.5) for c, b in zip(t.accent, t.background, strict=True)) if on
                 else t.switch_off_track)
        draw.rounded_rectangle((x1 + h * 0.15, cy - track_h / 2, x2 - h * 0.15, cy + track_h / 2),
                               radius=track_h / 2, fill=track)
        r = h * 0.34
        cx = (x2 - r - 1) if on else (x1 + r)
        if self.style.rtl:
            cx = x1 + x2 - cx
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=t.accent if on else t.switch_off_thumb)

    def _draw_slider(self, img, draw, n: Node, box, s: float) -> None:
        t = self.style.theme
        x1, y1, x2, y2 = box
        cy = (y1 + y2) / 2
        pad = (y2 - y1) / 2
        left, right = x1 + pad, x2 - pad
        pos = left + (right - left) * n.value
        if self.style.rtl and n.mirror:
            pos = left + right - pos
            draw.line((left, cy, right, cy), fill=t.divider, width=max(1, round(4 * s)))
            draw.line((pos, cy, right, cy), fill=t.accent, width=max(1, round(4 * s)))
        else:
            draw.line((left, cy, right, cy), fill=t.divider, width=max(1, round(4 * s)))
            draw.line((left, cy, pos, cy), fill=t.accent, width=max(1, round(4 * s)))
        r = max(2.0, (y2 - y1) * 0.22)
        draw.ellipse((pos - r, cy - r, pos + r, cy + r), fill=t.accent)

    def _draw_border(self, img, draw, n: Node, box, s: float) -> None:
        x1, y1, x2, y2 = box
        color = n.icon_color or self.style.theme.divider
        draw.rounded_rectangle((x1, y1, x2 - 1, y2 - 1), radius=max(0, round(n.radius * s)), outline=color,
                               width=max(1, round(2 * s)))

    def _draw_dial(self, img, draw, n: Node, box, s: float) -> None:
        """A time picker's dial: a circle or a rectangle with its hand pointing at the selected value.
        ``extra`` = {"shape", "hand": (x, y) in device px, "center": (x, y) in device px}."""
        t = self.style.theme
        x1, y1, x2, y2 = box
        face = t.search_bar
        if n.extra["shape"] == "circle":
            draw.ellipse((x1, y1, x2 - 1, y2 - 1), fill=face)
        else:
            draw.rounded_rectangle((x1, y1, x2 - 1, y2 - 1), radius=max(1, round(24 * s)), fill=face)
        sx = (x2 - x1) / max(1, n.bounds[2] - n.bounds[0])
        ox, oy = n.bounds[0], n.bounds[1]
        cx, cy = n.extra["center"]
        hx, hy = n.extra["hand"]
        c = (x1 + (cx - ox) * sx, y1 + (cy - oy) * sx)
        h = (x1 + (hx - ox) * sx, y1 + (hy - oy) * sx)
        draw.line((c, h), fill=t.accent, width=max(1, round(3 * s)))
        r = max(2, round(4 * s))
        draw.ellipse((c[0] - r, c[1] - r, c[0] + r, c[1] + r), fill=t.accent)
        rr = n.extra["selector"] * sx
        draw.ellipse((h[0] - rr, h[1] - rr, h[0] + rr, h[1] + rr), fill=t.accent)

    def _draw_photo(self, img, draw, n: Node, box, s: float) -> None:
        """A photo of the phone's: ``extra`` = (the image file's name, the filter on it or "";
        :func:`vlui.sim.photos.photo`)."""
        name, filtered = n.extra
        img.paste(photos.photo(name, box[2] - box[0], box[3] - box[1], filtered), box[:2])

    # How each special ``Node.kind`` is drawn.
    _KINDS = {"switch": _draw_switch, "slider": _draw_slider, "border": _draw_border, "dial": _draw_dial,
              "photo": _draw_photo}


def angle_of(cx: float, cy: float, x: float, y: float) -> float:
    """Clockwise angle in degrees of ``(x, y)`` around ``(cx, cy)``, 0 at twelve o'clock."""
    return math.degrees(math.atan2(x - cx, cy - y)) % 360
