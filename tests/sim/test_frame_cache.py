"""The process's frame cache: a screen another phone of the same configuration drew (or an earlier episode) is taken
from it, and it is the screen drawn afresh, full-size and observed; phones of other configurations never share
one; it keeps to its memory bound; a dataset collected through it is the one collected without it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.sim.test_incremental import assert_same_dataset, collected
from vlui.agents.walkthrough import walkthrough
from vlui.backends import make_device
from vlui.env.settings import EnvConfig
from vlui.sim.phone import SimDevice
from vlui.sim.render import SHARED_FRAMES, FrameCache
from vlui.tasks.catalog import task_set

# a 1080x2160 phone, right to left (Arabic), the landscape tablet, a generated 1382x948 screen
PHONES = ["000", "030", "109", "gen-1-26"]


class Observed(SimDevice):
    """A phone that takes its 256x128 observation at every screenshot the walk takes, and keeps both."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.observations: list[np.ndarray] = []

    def screenshot(self) -> np.ndarray:
        self.observations.append(self.observation(256, 128))
        return super().screenshot()


def _walk(dev: Observed, snapshot: str) -> list[np.ndarray]:
    return [shot for task in task_set("representative")
            for shot in walkthrough(dev, task, snapshot, screens=True).screens]


@pytest.mark.parametrize("snapshot", PHONES)
def test_a_screen_from_the_cache_is_the_screen_drawn_afresh(snapshot: str) -> None:
    cache = FrameCache()
    _walk(Observed(snapshot, frames=cache), snapshot)
    misses = cache.misses
    other = Observed(snapshot, frames=cache)  # another phone of the same configuration: it draws nothing
    screens = _walk(other, snapshot)
    assert cache.misses == misses and cache.hits >= 2 * len(screens)
    fresh = Observed(snapshot, frames=FrameCache())
    for i, (cached, drawn) in enumerate(zip(screens, _walk(fresh, snapshot), strict=True)):
        assert np.array_equal(cached, drawn), f"{snapshot}: screen {i} from the cache differs from the one drawn"
    for i, (cached, drawn) in enumerate(zip(other.observations, fresh.observations, strict=True)):
        assert np.array_equal(cached, drawn), f"{snapshot}: observation {i} from the cache differs"
    assert len(screens) > 12


def test_phones_of_other_configurations_share_no_screen() -> None:
    cache = FrameCache()
    light = SimDevice("000", frames=cache).screen()
    dark = SimDevice("000", frames=cache)
    dark.set_state({"dark_theme": True})
    misses = cache.misses
    assert not np.array_equal(dark.screen(), light) and cache.misses == misses + 1
    arabic = SimDevice("000", frames=cache)
    arabic.reconfigure(locale="ar-EG")
    assert not np.array_equal(arabic.screen(), light) and cache.misses == misses + 2


def test_the_process_cache_keeps_to_the_env_setting() -> None:
    limit = SHARED_FRAMES.max_bytes
    try:
        dev = make_device(EnvConfig(frame_cache_mb=8), "000")
        assert dev.frames is SHARED_FRAMES and SHARED_FRAMES.max_bytes == 8 << 20
        for key in ("HOME", "APP_SWITCH", "HOME"):
            dev.key(key)
            dev.screenshot()
        assert SHARED_FRAMES.size()[1] <= 8 << 20
    finally:
        SHARED_FRAMES.limit(limit)


def test_a_dataset_collected_through_the_shared_cache_is_the_one_collected_without_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    collected(tmp_path, "first")  # the cache now holds these screens
    hits = SHARED_FRAMES.hits
    shared = collected(tmp_path, "shared")
    assert SHARED_FRAMES.hits > hits
    assert_same_dataset(shared, collected(tmp_path, "own", monkeypatch, frames=None))
