"""A new screen drawn over the last one is the screen drawn whole: every screen of the expert's episodes, on phones,
tablets and generated screens, is the same array either way, and its observation is vlui.device.observe of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vlui.agents.walkthrough import walkthrough
from vlui.cli import compose
from vlui.data.format import read_dataset
from vlui.device import observe
from vlui.jobs import collect
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import task_set

# a 1080x2160 phone, right to left (Arabic), dark and Korean, the landscape tablet; generated: a landscape 1382x948
# (Indonesian) and a 1552x3200 phone in Hindi, sizes no reduction factor divides
PHONES = ["000", "030", "105", "109", "gen-1-26", "gen-1-34"]
SIZES = ((256, 128), (384, 192), (64, 32))


class Drawn(SimDevice):
    """A phone whose screenshots are the frames it drew (read-only), not copies: the walks only compare them, and a
    frame is 15 to 20 MB."""

    def screenshot(self) -> np.ndarray:
        return self.screen()


class Observed(Drawn):
    """A phone that, at every screenshot the walk takes, first takes its observations at several sizes and checks
    each against the screenshot observed as over ADB (a raw 4-channel screencap)."""

    raw: np.ndarray | None = None  # the screencap's buffer, its fourth channel 255

    def screenshot(self) -> np.ndarray:
        observations = [self.observation(h, w) for h, w in SIZES]
        full = super().screenshot()
        if self.raw is None or self.raw.shape[:2] != full.shape[:2]:
            self.raw = np.full((*full.shape[:2], 4), 255, np.uint8)
        self.raw[:, :, :3] = full
        for (h, w), obs in zip(SIZES, observations, strict=True):
            over_adb = observe(self.raw, h, w)
            assert np.array_equal(obs, over_adb), \
                f"{h}x{w}: {np.count_nonzero(obs != over_adb)} values differ from the screenshot observed over ADB"
        return full


def _same_screens(snapshot: str, tasks: list[str]) -> int:
    """Walk the expert through ``tasks`` on a phone drawing over its last screen and on one drawing every screen
    whole (as vlui did before), and compare every screen; returns how many were compared."""
    drawn_over, whole = Observed(snapshot), Drawn(snapshot, incremental=False)
    screens = 0
    for task in tasks:
        a = walkthrough(drawn_over, task, snapshot, screens=True)
        b = walkthrough(whole, task, snapshot, screens=True)
        assert a.gestures == b.gestures
        for i, (x, y) in enumerate(zip(a.screens, b.screens, strict=True)):
            assert np.array_equal(x, y), f"{task} on {snapshot}: screen {i} differs from the one drawn whole"
        screens += len(a.screens)
    return screens


@pytest.mark.parametrize("snapshot", PHONES)
def test_screens_drawn_over_the_last_are_the_screens_drawn_whole(snapshot: str) -> None:
    assert _same_screens(snapshot, task_set("representative")) > 12


@pytest.mark.slow
@pytest.mark.parametrize("snapshot", PHONES)
def test_every_screen_of_every_supported_task_is_the_same_drawn_over_the_last(snapshot: str) -> None:
    tasks = task_set("supported") + task_set("bmoca25_supported")
    assert _same_screens(snapshot, list(dict.fromkeys(tasks))) > len(tasks)



def collected(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch | None = None, **device) -> dict:
    """A small dataset collected under ``tmp_path/name``, full-size screens too, its rows in episode order; with
    ``device``, on phones made with these keyword arguments (from then on in the test)."""
    if device:
        init = SimDevice.__init__
        monkeypatch.setattr(SimDevice, "__init__", lambda self, *a, **k: init(self, *a, **{**k, **device}))
    recipe = [f"paths.data_dir={tmp_path}", f"dataset={name}", "tasks=[airplane_on,call_911,open_clock]",
              "env.snapshots=[000,030,gen-1-26]", "env.num_envs=1", "save_full_screen=true"]
    collect.run(compose("collect", recipe, output_dir=tmp_path / f"run-{name}"))
    return read_dataset(tmp_path / name)[1].sort_by([("episode_id", "ascending"), ("step", "ascending")]).to_pydict()


def assert_same_dataset(a: dict, b: dict) -> None:
    """The same screens (observed and full-size) for the same actions, tasks and phones."""
    assert len(a["screen"]) > 9
    for column in ("screen", "screen_full", "action", "snapshot_id", "task_id"):
        assert a[column] == b[column], column


def test_a_dataset_collected_drawing_over_the_last_screen_is_the_one_collected_drawing_every_screen_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn_over = collected(tmp_path, "drawn_over")
    assert_same_dataset(drawn_over, collected(tmp_path, "whole", monkeypatch, incremental=False))
