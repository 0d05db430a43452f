"""Zoom augmentation (``data.augment.zoom``): a screen magnified as a denser screen draws it, the demonstrated
gesture moved with the pixels under it, and with a frozen backbone the zoomed views' features cached beside the
screens' own."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.jobs.test_train import tiny
from vlui.algos import feature_store
from vlui.algos.augment import IDENTITY_ZOOM, zoom, zoom_points, zoom_views
from vlui.algos.base import PolicyModule
from vlui.algos.bc import BCModule
from vlui.cli import compose
from vlui.config import TrainJobConfig, job_settings
from vlui.jobs import train


def _coordinates(h: int = 64, w: int = 32) -> torch.Tensor:
    """Screens whose red is the row and green the column: a pixel says where it came from."""
    y = torch.linspace(0, 255, h)[:, None].expand(h, w)
    x = torch.linspace(0, 255, w)[None, :].expand(h, w)
    return torch.stack([y, x, torch.zeros(h, w)], dim=-1).round().to(torch.uint8)[None]


def _pixel(image: torch.Tensor, y: float, x: float) -> torch.Tensor:
    """The pixel of ``(H, W, C)`` ``image`` at action coordinates ``(y, x)`` in [-1, 1]."""
    h, w = image.shape[:2]
    row = min(h - 1, int((y + 1) / 2 * h))
    col = min(w - 1, int((x + 1) / 2 * w))
    return image[row, col].float()


@pytest.mark.parametrize("zooms", [(1.3, 0.0, 0.0), (1.5, -1.0, 1.0), (1.2, 0.4, -0.7), (2.0, 1.0, -1.0)])
def test_a_gesture_moves_with_the_pixels_under_it(zooms: tuple[float, float, float]) -> None:
    screen = _coordinates()
    params = torch.tensor([zooms])
    zoomed = zoom(screen, params)[0]
    for point in [(0.0, 0.0), (-0.5, 0.3), (0.6, -0.4), (0.1, 0.7)]:
        action = torch.tensor([[*point, *point]])
        moved = zoom_points(action, params)[0]
        if moved.abs().max() > 1:
            continue  # cropped off the zoomed screen
        before, after = _pixel(screen[0], *point), _pixel(zoomed, moved[0].item(), moved[1].item())
        # the same place of the screen, to the pixel grid's resolution (a 64 x 32 screen: 4 and 8 levels a pixel)
        assert (before - after).abs().max() <= 2 * 256 / 32, (point, before, after)


def test_the_fixed_point_stays_and_the_rest_grows_away_from_it() -> None:
    params = torch.tensor([[1.5, -1.0, 1.0]])  # about the top right corner: it stays
    top_right = torch.tensor([[-1.0, 1.0, -1.0, 1.0]])
    assert torch.allclose(zoom_points(top_right, params), top_right)
    swipe = torch.tensor([[0.0, 0.0, 0.2, 0.0]])  # a swipe 0.2 long
    moved = zoom_points(swipe, params)[0]
    assert moved[2] - moved[0] == pytest.approx(0.3)  # 1.5 times as long, as every element is
    identity = torch.tensor([IDENTITY_ZOOM])
    screen = _coordinates()
    assert torch.equal(zoom(screen, identity), screen)
    assert torch.equal(zoom_points(swipe, identity), swipe)
    assert torch.isnan(zoom_points(torch.full((1, 4), float("nan")), params)).all()  # a missing past step stays so


def test_the_cached_views_are_the_same_for_every_run_and_within_range() -> None:
    views = zoom_views(100, 3, 0.25)
    assert views.shape == (3, 100, 3)
    assert torch.equal(views, zoom_views(100, 3, 0.25))
    assert ((views[..., 0] >= 1) & (views[..., 0] <= 1.25)).all()
    assert (views[..., 1:].abs() <= 1).all()


def _module(tmp_path: Path, dataset: Path, *extra: str) -> BCModule:
    cfg = compose("train", tiny(tmp_path, dataset, "model.vision.freeze=true", "data.augment.random_shift=0",
                                "data.augment.zoom=0.4", "data.augment.views=2", *extra), output_dir=tmp_path / "out")
    module, _ = train.build(job_settings(cfg, TrainJobConfig), BCModule)
    return module


def test_a_zoomed_batch_moves_each_gesture_with_its_view_and_keeps_a_cropped_one_as_it_was(
        tmp_path: Path, tiny_dataset: Path) -> None:
    module = _module(tmp_path, tiny_dataset)
    n = 50
    module.zoom_table = zoom_views(n, 2, 0.4)
    module.zoom_cache = torch.zeros(2, n, 1)  # only its presence matters here: the views are cached
    actions = torch.tensor([[0.0, 0.0, 0.0, 0.0]] * 40 + [[1.0, 1.0, 1.0, 1.0]] * 10)  # the centre; a corner
    past = torch.tensor([[[0.1, -0.1, 0.1, -0.1]]] * n)
    batch = {"actions": actions, "frame": torch.arange(n), "past_actions": past}
    out = module.zoomed(batch)
    view = out["view"]
    assert set(view[:40].tolist()) == {0, 1, 2}  # the screen itself or either view, drawn per sample
    for i in range(n):
        zooms = module.zoom_table[view[i] - 1, i] if view[i] else torch.tensor(IDENTITY_ZOOM)
        assert torch.allclose(out["zoom"][i], zooms)
        assert torch.allclose(out["actions"][i], zoom_points(actions[i], zooms))
        assert torch.allclose(out["past_actions"][i], zoom_points(past[i], zooms).clamp(-1, 1))
    # a tap in the corner is cropped off by nearly every zoom: those samples keep their screen and gesture
    assert (out["actions"].abs() <= 1).all()
    kept = view[40:] == 0
    assert kept.sum() >= 8 and torch.equal(out["actions"][40:][kept], actions[40:][kept])
    assert torch.equal(module.zoomed(batch)["view"], view)  # drawn from the seed and the step


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["bc", "iql"])
def test_zoomed_views_are_cached_and_read_back_by_the_next_run(algo: str, tmp_path: Path, tiny_dataset_copy: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def run(name: str):
        cfg = compose("train", tiny(tmp_path / name, tiny_dataset_copy, f"algo={algo}", "model.vision.freeze=true",
                                    "data.augment.random_shift=0", "data.augment.zoom=0.3", "data.augment.views=2"),
                      output_dir=tmp_path / name / "out")
        return train.run(cfg)

    first = run("first")
    stored = sorted((tiny_dataset_copy / "features").glob("*.safetensors"), key=lambda p: p.stat().st_size)
    assert len(stored) == 2  # the screens' maps and their two zoomed views'
    plain, zoomed = (feature_store.load(tiny_dataset_copy, p.stem) for p in stored)
    assert zoomed.shape == (2, *plain.shape)
    assert not torch.equal(zoomed[0], plain)
    assert first["policy"]

    def no_backbone(self, *args):
        raise AssertionError("the backbone ran although the zoomed views' features are stored")

    monkeypatch.setattr(PolicyModule, "_maps", no_backbone)
    assert run("second")["policy"]


@pytest.mark.slow
def test_a_trained_backbone_zooms_its_screens_and_past_screens_on_the_fly(tmp_path: Path, tiny_dataset: Path) -> None:
    cfg = compose("train", tiny(tmp_path, tiny_dataset, "model.vision.freeze=false", "data.augment.zoom=0.3",
                                "model.history=2", "model.history_screens=true"), output_dir=tmp_path / "out")
    seen = []
    original = PolicyModule.images

    def images(self, batch, key="images", train=True):
        seen.append("zoom" in batch)
        return original(self, batch, key, train)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PolicyModule, "images", images)
        result = train.run(cfg)
    assert result["policy"] and any(seen)  # training batches came zoomed (validation's do not)
    assert not all(seen)
