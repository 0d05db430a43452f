"""Contact sheets: many screens side by side in one image, captioned, so people can see what configurations
look like (B-MoCA's Figure 2 shows such a sheet of home screens)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image, ImageDraw

from vlui.android.generate import SPLIT
from vlui.android.snapshot import Snapshot, load_snapshot
from vlui.sim.phone import SimDevice
from vlui.sim.typeset import font


def caption(snap_id: str, dev: SimDevice) -> str:
    s = dev.snapshot
    scale = f" x{s.font_scale:g}" if s.font_scale != 1.0 else ""
    details = f"{s.device} {s.dpi}dpi{scale} {s.locale}{' dark' if s.dark_theme else ''}"
    # a generated id is long: the details go on a second line
    return f"{snap_id}\n{details}" if s.split in SPLIT.values() else f"{snap_id} {details}"


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
    f = font("latin", 13)
    for i, (text, im) in enumerate(scaled):
        r, c = divmod(i, columns)
        x = pad + c * (cell_w + pad) + (cell_w - im.width) // 2
        y = pad + r * (cell_height + cap + pad)
        out.paste(im, (x, y + cap + (cell_height - im.height) // 2))
        draw.multiline_text((pad + c * (cell_w + pad), y + 4), text, fill=(32, 33, 36), font=f, spacing=2)
    return out


def home_screens(snapshots: Sequence[str | Snapshot], prepare: Callable[[SimDevice], None] | None = None,
                 columns: int = 9, cell_height: int = 400) -> Image.Image:
    """The screen of each snapshot after ``prepare`` (default: the home screen as loaded)."""
    dev = SimDevice(snapshots[0])
    shots = []
    for ref in snapshots:
        dev.load_snapshot(load_snapshot(ref))
        if prepare is not None:
            prepare(dev)
        shots.append((caption(dev.snapshot.id, dev), dev.screenshot()))
    return sheet(shots, columns, cell_height)
