"""``python -m vlui.agents task-sheet``: every screen of the expert's episodes in one picture, on the device the
backends make (the simulated phone by default; --serial names one over ADB)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from vlui.agents.__main__ import main
from vlui.agents.walkthrough import task_sheet, walkthrough
from vlui.backends import make_device
from vlui.env.settings import EnvConfig


def test_the_sheet_has_a_cell_for_every_screen_of_the_episodes(tmp_path: Path) -> None:
    device = make_device(EnvConfig(), "000")
    screens = len(walkthrough(device, "open_clock", "000", screens=True).screens)
    sheet = task_sheet(device, "000", ["open_clock"], columns=screens)  # one row: as wide as it has screens
    one = task_sheet(device, "000", ["open_clock"], columns=1)  # one column: as tall
    assert screens >= 2 and sheet.width > 1.5 * one.width and one.height > 1.5 * sheet.height
    assert main(["task-sheet", "000", "open_clock", "--out", str(tmp_path / "s.png")]) == 0
    assert Image.open(tmp_path / "s.png").size == task_sheet(device, "000", ["open_clock"]).size
