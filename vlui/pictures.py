"""Pictures of screens for people: many screens side by side in one image, captioned (a contact sheet). The
simulator's sheets of snapshots (``python -m vlui.sim contact-sheet``) and the expert's episodes (``python -m
vlui.agents task-sheet``) are drawn by it, on any backend's screenshots."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont


def sheet(images: Sequence[tuple[str, np.ndarray]], columns: int = 9, cell_height: int = 400) -> Image.Image:
    """Images ``(caption, (H, W, 3))`` scaled to one height and laid out in rows of ``columns``."""
    aspects = sorted(arr.shape[1] / arr.shape[0] for _, arr in images)
    cell_w = int(cell_height * aspects[len(aspects) // 2])  # the typical screen's shape; others fit inside
    scaled = []
    for text, arr in images:
        im = Image.fromarray(arr)
        scale = min(cell_w / im.width, cell_height / im.height)
        scaled.append((text, im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))),
                                       Image.LANCZOS)))
    pad = 8
    cap = 14 + 14 * max(text.count("\n") + 1 for text, _ in images)  # captions may be two lines: id, then details
    rows = (len(scaled) + columns - 1) // columns
    out = Image.new("RGB", (columns * (cell_w + pad) + pad, rows * (cell_height + cap + pad) + pad), (245, 245, 245))
    draw = ImageDraw.Draw(out)
    f = ImageFont.load_default(13)  # captions are ids and settings: ASCII
    for i, (text, im) in enumerate(scaled):
        r, c = divmod(i, columns)
        x = pad + c * (cell_w + pad) + (cell_w - im.width) // 2
        y = pad + r * (cell_height + cap + pad)
        out.paste(im, (x, y + cap + (cell_height - im.height) // 2))
        draw.multiline_text((pad + c * (cell_w + pad), y + 4), text, fill=(32, 33, 36), font=f, spacing=2)
    return out
