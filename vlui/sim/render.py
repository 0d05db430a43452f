"""Draw a widget tree to pixels at the screen's full resolution, and observe it as every backend does.

An observation is :func:`vlui.device.observe` of the full-resolution frame, exactly what the ADB path computes from
a screenshot, so a policy sees the same pixels on the simulated phone and on an emulator. (Drawing directly at the
observation's size was 5 times faster on new screens but gave other pixels: text hinted at 3 pixels, icons and
wallpapers at other aspect ratios.) Frames and observations are cached by the tree's drawing content, in one cache
that the phones of a process share (:class:`FrameCache`), so an action that does not change the screen, or a screen
another phone of the same configuration drew, costs no drawing at all; a new screen is drawn over the last one drawn, only in the
rows where their drawings differ, and only those rows are reduced again for the observation (:class:`Canvas`).
"""

from __future__ import annotations

import difflib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from vlui.device import observe, reduction
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


def drawing(root: Node) -> tuple[list[Node], tuple]:
    """The nodes of ``root`` that draw something, in drawing order (depth first, as :meth:`Node.walk`), and their
    drawing content as a hashable tuple (equal content renders to equal pixels): one entry per node of its bounds,
    colours, text, size, icon, kind and value. One walk of the tree gives both (a step's warm path is mostly this
    walk and the tree's building)."""
    nodes: list[Node] = []
    ops: list[tuple] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.bg is not None or (n.text and n.size) or n.icon or n.kind:
            nodes.append(n)
            ops.append((n.bounds, n.bg, n.radius, n.text if n.size else "", n.fg, n.size, n.bold, n.align, n.valign,
                        n.inset, n.icon, n.icon_color, n.kind, n.value, n.checked, n.enabled, n.mirror,
                        None if n.extra is None else _freeze(n.extra)))
        if n.children:
            stack.extend(reversed(n.children))
    return nodes, tuple(ops)


Rows = tuple[int, int]  # a band of pixel rows [top, bottom), across the whole screen


def _paste(img: Image.Image, source, x: int, y: int, mask: Image.Image, rows: Rows | None = None) -> None:
    """Paste ``source`` (a colour, or ``mask`` itself: an RGBA image through its alpha) through ``mask`` at
    ``(x, y)``, clipped to ``img`` and to ``rows``. Straight to the imaging core: for the small labels and icons of a
    frame, Image.paste's argument checks cost more than the copy."""
    w, h = mask.size
    if rows is not None and (y < rows[0] or y + h > rows[1]):
        top, bottom = max(y, rows[0]), min(y + h, rows[1])
        if bottom <= top:
            return
        cut = mask.crop((0, top - y, w, bottom - y))
        source = source if isinstance(source, tuple) else cut
        mask, y, h = cut, top, bottom - top
    img.im.paste(source if isinstance(source, tuple) else source.im, (x, y, x + w, y + h), mask.im)


def _paste_image(img: Image.Image, picture: Image.Image, at: tuple[int, int], rows: Rows | None) -> None:
    """Paste an opaque ``picture`` (a wallpaper, a photo) with its top-left corner at ``at``, only in ``rows``."""
    x, y = at
    if rows is not None:
        top, bottom = max(y, rows[0]), min(y + picture.size[1], rows[1])
        if bottom <= top:
            return
        picture, y = picture.crop((0, top - y, picture.size[0], bottom - y)), top
    img.paste(picture, (x, y))


def _within(img: Image.Image, rows: Rows, reach: Rows, draw: Callable[[], None]) -> None:
    """``draw()``, which changes pixels only in the rows ``reach``, keeping the pixels outside ``rows`` as they were:
    a shape is drawn whole, at its own place (drawing a part of it elsewhere could round otherwise), and the rows
    it covers outside the band put back."""
    width = img.size[0]
    kept = [(img.crop((0, top, width, bottom)), top)
            for top, bottom in ((reach[0], min(reach[1], rows[0])), (max(reach[0], rows[1]), reach[1]))
            if bottom > top]
    draw()
    for patch, top in kept:
        img.paste(patch, (0, top))


# Over this share of the screen's rows changed, a new frame is drawn whole rather than over the last one.
WHOLE = 0.6


class Canvas:
    """The last frame a renderer drew, kept to draw the next over it. The two frames' drawings (their
    :func:`drawing`) are matched in order; the rows the unmatched ones reach are cleared to the background and
    everything that reaches them is drawn again, clipped to them. Exact: a pixel outside those rows is covered by
    the same drawings, in the same order, in both frames. The frame's box reductions (the first step of
    :func:`vlui.device.observe`) are kept too and redone in those rows only."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self.image: Image.Image | None = None
        self.ops: tuple = ()
        self._reduced: dict[tuple[int, int], Image.Image] = {}  # (x, y) factors -> the image reduced by them

    def draw(self, nodes: list[Node], ops: tuple) -> None:
        """Make the canvas ``nodes`` drawn (``ops``: their :func:`drawing`)."""
        if ops == self.ops and self.image is not None:
            return
        r = self.renderer
        width, height = r.screen
        bands = self._changed_rows(ops) if self.image is not None else None
        if bands is None or sum(b - a for a, b in bands) > WHOLE * height:
            base, first = self._ground(nodes)
            if self.image is None:
                self.image = Image.new("RGB", r.screen, base)
            else:  # filling the last frame's memory: a new frame's (fresh from the system) costs several times more
                self.image.paste(base, (0, 0, width, height))
            r.draw(self.image, nodes[first:], 1.0, 1.0)
            self._reduced.clear()
        else:
            for band in bands:
                self.image.paste(r.style.theme.background, (0, band[0], width, band[1]))
                r.draw(self.image, nodes, 1.0, 1.0, band)
            for (fx, fy), reduced in self._reduced.items():
                for a, b in bands:
                    top, bottom = a // fy * fy, min(height, -(-b // fy) * fy)
                    reduced.paste(self.image.reduce((fx, fy), box=(0, top, width, bottom)), (0, top // fy))
        self.ops = ops

    def _ground(self, nodes: list[Node]) -> tuple[tuple, int]:
        """The colour a whole frame of ``nodes`` starts from and the first node to draw on it: the plain fills it
        opens with (a window's background over the whole screen, then its content's of the same colour) change
        nothing on a screen already of their colour, so the screen is made of that colour and they are not drawn."""
        base = self.renderer.style.theme.background
        width, height = self.renderer.screen
        first = 0
        for n in nodes:
            if n.icon or n.kind or n.radius or (n.text and n.size) or n.bg is None:
                break
            if n.bounds == (0, 0, width, height) and first == 0 and len(n.bg) == 3:
                base = n.bg
            elif n.bg != base:
                break
            first += 1
        return base, first

    def observe(self, height: int, width: int) -> np.ndarray:
        """:func:`vlui.device.observe` of the canvas, from its kept reduction."""
        w, h = self.renderer.screen
        fx, fy = reduction(w, h, width, height)
        if fx == fy == 1:
            return observe(self.image, height, width)
        reduced = self._reduced.get((fx, fy))
        if reduced is None:
            reduced = self._reduced[fx, fy] = self.image.reduce((fx, fy))
        return np.asarray(reduced.resize((width, height), Image.BILINEAR, box=(0, 0, w / fx, h / fy)))

    def _changed_rows(self, ops: tuple) -> list[Rows] | None:
        """The bands of rows where the canvas and ``ops`` differ, merged and in order; None where nothing matches."""
        reach = self.renderer.reach
        spans = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, self.ops, ops, autojunk=False).get_opcodes():
            if tag != "equal":
                spans += [reach(_node_of(op)) for op in self.ops[i1:i2] + ops[j1:j2]]
        bands: list[list[int]] = []
        for top, bottom in sorted(s for s in spans if s[1] > s[0]):
            if bands and top <= bands[-1][1]:
                bands[-1][1] = max(bands[-1][1], bottom)
            else:
                bands.append([top, bottom])
        height = self.renderer.screen[1]
        return [(max(0, a), min(height, b)) for a, b in bands if min(height, b) > max(0, a)]


def _node_of(op: tuple) -> Node:
    """A node with what one of :func:`drawing`' entries says of how it is drawn (enough for its reach)."""
    return Node(bounds=op[0], bg=op[1], radius=op[2], text=op[3], fg=op[4], size=op[5], bold=op[6], align=op[7],
                valign=op[8], inset=op[9], icon=op[10], kind=op[12], mirror=op[16])


def _freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class FrameKey:
    """A :class:`FrameCache` key: its parts (a tuple) compared exactly, their hash worked out once. A lookup hashes
    its key twice (the entry, then its move to the newest end), and hashing a frame's drawing content costs several
    times what comparing it does: a tuple does not keep its hash."""

    __slots__ = ("parts", "_hash")

    def __init__(self, *parts) -> None:
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrameKey) and self._hash == other._hash and self.parts == other.parts


# Bytes a cached entry's key is counted for per drawing it holds (:func:`drawing`' tuple of about 18 fields: the
# tuples, bounds and the strings the frame made; measured 420 to 470 on the expert's screens)
KEY_BYTES_PER_OP = 450
FRAME_CACHE_MB = 512  # the default bound of the process's frame cache (``env.frame_cache_mb``)


class FrameCache:
    """Finished frames and observations, least recently used first out, at most ``max_bytes`` in all (their arrays
    and an estimate of their keys). A key is everything that decides the pixels, compared exactly (not a hash of it):
    the renderer's :class:`Style`, the screen's size and the frame's :func:`drawing`, and for an observation its
    size. So one cache serves every phone of one configuration alike, whichever device drew the screen first.
    ``hits`` and ``misses`` count lookups. Thread-safe: served phones, each under its own lock, share it."""

    def __init__(self, max_bytes: int = FRAME_CACHE_MB << 20) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[FrameKey, tuple[np.ndarray, int]] = OrderedDict()  # key -> (array, bytes counted)
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: FrameKey) -> np.ndarray | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self.hits += 1
            self._entries.move_to_end(key)
            return entry[0]

    def keep(self, key: FrameKey, array: np.ndarray, ops: int) -> np.ndarray:
        """Keep ``array`` (made read-only) under ``key``, whose drawing has ``ops`` entries; returns it."""
        array.setflags(write=False)
        size = array.nbytes + ops * KEY_BYTES_PER_OP
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (array, size)
            self._bytes += size
            self._trim()
        return array

    def limit(self, max_bytes: int) -> None:
        """Keep at most ``max_bytes`` from now on."""
        with self._lock:
            self.max_bytes = max_bytes
            self._trim()

    def _trim(self) -> None:
        """Drop the least recently used entries beyond ``max_bytes`` (the newest one stays)."""
        while len(self._entries) > 1 and self._bytes > self.max_bytes:
            self._bytes -= self._entries.popitem(last=False)[1][1]

    def size(self) -> tuple[int, int]:
        """(entries, bytes counted)."""
        return len(self._entries), self._bytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


#: The process's frame cache, which every simulated phone of the process uses unless given its own: screens seen
#: on one phone (or in an earlier episode) are not drawn again on another of the same configuration.
SHARED_FRAMES = FrameCache()


class Renderer:
    """Renders trees for one device configuration. Frames and observations come from ``frames``
    (:class:`FrameCache`; by default a cache of the renderer's own, as before the process's was shared): drawing a
    frame only to observe it caches the observation (96 KB at 256x128), not the frame (7 MB at 1080x2160). A new
    frame is drawn over the last one (:class:`Canvas`) unless ``incremental`` is False: then every new frame is drawn
    whole, as vlui did before, which gives the same pixels (the benchmarks' baseline)."""

    def __init__(self, style: Style, screen: tuple[int, int], frames: FrameCache | None = None,
                 incremental: bool = True) -> None:
        self.style = style
        self.screen = screen  # (width, height) in device pixels
        self.frames = frames if frames is not None else FrameCache(256 << 20)
        self.incremental = incremental
        self._canvas: Canvas | None = None

    def render(self, root: Node) -> np.ndarray:
        """``root`` drawn at full resolution, an ``(height, width, 3)`` uint8 array (read-only, cached)."""
        nodes, ops = drawing(root)
        key = FrameKey(self.style, self.screen, ops)
        frame = self.frames.get(key)
        if frame is None:
            img = self.canvas(nodes, ops).image if self.incremental else self._image(nodes)
            frame = self.frames.keep(key, np.asarray(img), len(ops))
        return frame

    def observation(self, root: Node, width: int, height: int) -> np.ndarray:
        """``root`` observed at ``(height, width)``: :func:`vlui.device.observe` of its full-resolution frame
        (read-only, cached)."""
        nodes, ops = drawing(root)
        key = FrameKey(self.style, self.screen, ops, width, height)
        obs = self.frames.get(key)
        if obs is None:
            if self.incremental:
                obs = self.canvas(nodes, ops).observe(height, width)
            else:
                screen = self.frames.get(FrameKey(self.style, self.screen, ops))
                obs = observe(screen if screen is not None else self._image(nodes), height, width)
            obs = self.frames.keep(key, obs, len(ops))
        return obs

    def canvas(self, nodes: list[Node], ops: tuple) -> Canvas:
        """The canvas with ``nodes`` (``ops``: their :func:`drawing`) drawn on it."""
        if self._canvas is None:
            self._canvas = Canvas(self)
        self._canvas.draw(nodes, ops)
        return self._canvas

    def drop_canvas(self) -> None:
        """Let the last frame drawn go (a device does when it turns to another configuration): the next is drawn
        whole."""
        self._canvas = None

    def _image(self, nodes: list[Node]) -> Image.Image:
        """``nodes`` (the drawing nodes of a tree, :func:`drawing`) drawn at full resolution."""
        img = Image.new("RGB", self.screen, self.style.theme.background)
        self.draw(img, nodes, 1.0, 1.0)
        return img

    # ------------------------------------------------------------------------------------------------ drawing
    def draw(self, img: Image.Image, nodes: list[Node], sx: float, sy: float, rows: Rows | None = None) -> None:
        """Draw ``nodes`` on ``img``, scaled by ``(sx, sy)``; with ``rows``, only what falls in those rows (at scale 1):
        pixels outside them are left as they were."""
        draw = ImageDraw.Draw(img)
        s = min(sx, sy)
        for n in nodes:
            x1, y1, x2, y2 = n.bounds
            box = (int(x1 * sx + 0.5), int(y1 * sy + 0.5), int(x2 * sx + 0.5), int(y2 * sy + 0.5))
            if box[2] <= box[0] or box[3] <= box[1]:
                continue
            if rows is not None:
                reach = self.reach(n)
                if reach[1] <= rows[0] or reach[0] >= rows[1]:
                    continue
                shape = self._shape_rows(n, box)
            if n.icon == "wallpaper":
                _paste_image(img, wallpapers.wallpaper(self.style.wallpaper, box[2] - box[0], box[3] - box[1]),
                             box[:2], rows)
            if n.bg is not None:
                radius = round(n.radius * s) if n.radius > 0 else n.radius
                if rows is None:
                    self._fill(draw, box, n.bg, radius)
                elif radius == 0:
                    top, bottom = max(box[1], rows[0]), min(box[3], rows[1])
                    if bottom > top:
                        self._fill(draw, (box[0], top, box[2], bottom), n.bg, 0)
                else:
                    _within(img, rows, shape, lambda: self._fill(draw, box, n.bg, radius))
            if n.kind:
                if rows is None:
                    self._KINDS[n.kind](self, img, draw, n, box, s)
                else:
                    _within(img, rows, shape, lambda: self._KINDS[n.kind](self, img, draw, n, box, s))
            if n.icon and n.icon != "wallpaper":
                self._draw_icon(img, n, box, rows)
            if n.text and n.size:
                for mask, x, y in self._text_masks(n, box, s):
                    _paste(img, n.fg, x, y, mask, rows)

    def reach(self, n: Node) -> Rows:
        """The rows that drawing ``n`` (at scale 1) may change: its bounds' (a shape's with a margin), and its
        text's, which may stand out of them."""
        x1, y1, x2, y2 = n.bounds
        if x2 <= x1 or y2 <= y1:
            return 0, 0
        top, bottom = self._shape_rows(n, n.bounds) if (n.kind or (n.bg is not None and n.radius)) else (y1, y2)
        if n.text and n.size:
            for mask, _, y in self._text_masks(n, n.bounds, 1.0):
                top, bottom = min(top, y), max(bottom, y + mask.size[1])
        return top, bottom

    def _shape_rows(self, n: Node, box) -> Rows:
        """Rows a drawn shape (a rounded or round background, a switch, a slider, ...) stays inside: its box's,
        with its own height again above and below (anti-aliasing and strokes stay far within that); a dial's hand
        may reach anywhere on the screen."""
        if n.kind == "dial":
            return 0, self.screen[1]
        h = box[3] - box[1]
        return max(0, box[1] - h), min(self.screen[1], box[3] + h)

    @staticmethod
    def _fill(draw: ImageDraw.ImageDraw, box, color, radius: int) -> None:
        x1, y1, x2, y2 = box
        if radius < 0:
            draw.ellipse((x1, y1, x2 - 1, y2 - 1), fill=color)
        elif radius > 0:
            draw.rounded_rectangle((x1, y1, x2 - 1, y2 - 1), radius=radius, fill=color)
        else:
            draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=color)

    def _draw_icon(self, img: Image.Image, n: Node, box, rows: Rows | None) -> None:
        x1, y1, x2, y2 = box
        size = max(1, min(x2 - x1, y2 - y1))
        kind, _, name = n.icon.partition(":")
        if kind == "app":
            im = icons.app_icon(name, size)
        else:
            im = icons.glyph(name, size, n.icon_color or self.style.theme.icon)
        _paste(img, im, x1 + (x2 - x1 - size) // 2, y1 + (y2 - y1 - size) // 2, im, rows)

    def _text_masks(self, n: Node, box, s: float) -> Iterator[tuple[Image.Image, int, int]]:
        """``n``'s text as coverage masks, each with the pixel where it goes: ``(mask, x, y)``."""
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
                yield m, x + dx + ox, y + line.ascent + oy

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
