"""Contact sheets of snapshots (:func:`vlui.pictures.sheet`), so people can see what configurations look like
(B-MoCA's Figure 2 shows such a sheet of home screens)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PIL import Image

from vlui.android.generate import SPLIT
from vlui.android.snapshot import Snapshot, load_snapshot
from vlui.pictures import sheet
from vlui.sim.phone import SimDevice


def caption(snap_id: str, dev: SimDevice) -> str:
    s = dev.snapshot
    scale = f" x{s.font_scale:g}" if s.font_scale != 1.0 else ""
    details = f"{s.device_name} {s.dpi}dpi{scale} {s.locale}{' dark' if s.dark_theme else ''}"
    # a generated id is long: the details go on a second line
    return f"{snap_id}\n{details}" if s.split in SPLIT.values() else f"{snap_id} {details}"


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
