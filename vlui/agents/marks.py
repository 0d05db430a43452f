"""Screenshots as an MLLM agent sends them: PNG at the size it asks for, and, under set-of-mark prompting (Yang et
al., 2023; B-MoCA Fig. 11; AndroidWorld's M3A), the UI elements outlined with their numeric tags drawn on the image.

The tags are the numbers of the element list the prompt holds (:func:`vlui.env.ui_text.describe`), so ``tap(n)``
means the same element whether the model read the list or the picture. Marked are the listed elements (those with a
resource id, a text or a description) that have a size, lie on the screen and cover less than half of it: the
containers that span the whole screen would put a box around everything.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vlui.data.format import encode_png
from vlui.env.ui_text import Element

# outline colours, one per tag in turn, dark enough for white digits on them
COLOURS = ((213, 0, 0), (0, 100, 200), (0, 130, 60), (150, 0, 170), (200, 90, 0), (0, 120, 120))


def marked(elements: Sequence[Element], device_size: tuple[int, int]) -> list[Element]:
    """The elements set-of-mark prompting draws on a screen of ``device_size`` (width, height) pixels."""
    width, height = device_size
    out = []
    for e in elements:
        x1, y1, x2, y2 = max(e.bounds[0], 0), max(e.bounds[1], 0), min(e.bounds[2], width), min(e.bounds[3], height)
        if e.has_content and x2 > x1 and y2 > y1 and (x2 - x1) * (y2 - y1) < 0.5 * width * height:
            out.append(e)
    return out


def draw_marks(image: Image.Image, elements: Sequence[Element], device_size: tuple[int, int]) -> Image.Image:
    """``image`` (the screen, at any size) with each of :func:`marked`'s elements outlined and its number drawn in
    a filled box at its top-left corner."""
    out = image.convert("RGB")
    draw = ImageDraw.Draw(out)
    sx, sy = out.width / device_size[0], out.height / device_size[1]
    font = ImageFont.load_default(max(9, round(out.height / 64)))
    line = max(1, round(out.height / 512))
    for i, e in enumerate(marked(elements, device_size)):
        colour = COLOURS[i % len(COLOURS)]
        box = (e.bounds[0] * sx, e.bounds[1] * sy, e.bounds[2] * sx - 1, e.bounds[3] * sy - 1)
        draw.rectangle(box, outline=colour, width=line)
        left, top, right, bottom = draw.textbbox((0, 0), str(e.index), font=font)
        x, y = max(0.0, box[0]), max(0.0, box[1])
        draw.rectangle((x, y, x + right - left + 4, y + bottom - top + 4), fill=colour)
        draw.text((x + 2 - left, y + 2 - top), str(e.index), fill=(255, 255, 255), font=font)
    return out


def screenshot_png(screen: np.ndarray, size: tuple[int, int] | None = None,
                   elements: Sequence[Element] | None = None, device_size: tuple[int, int] | None = None) -> bytes:
    """The PNG an MLLM gets of ``screen`` (``(H, W, 3)`` uint8): resized to ``size`` (height, width) when it is
    another, with set-of-mark tags when ``elements`` (and the ``device_size`` their bounds are in) are given."""
    image = Image.fromarray(np.asarray(screen, dtype=np.uint8))
    if size is not None and (image.height, image.width) != tuple(size):
        image = image.resize((size[1], size[0]), Image.BILINEAR)
    if elements is not None and device_size is not None:
        image = draw_marks(image, elements, device_size)
    return encode_png(np.asarray(image))
