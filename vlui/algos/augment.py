"""Image augmentations on tensors, on whatever device the batch is on (no per-sample Python loops)."""

from __future__ import annotations

import torch


def random_shift(images: torch.Tensor, pad: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Shift each ``(B, H, W, C)`` image by up to ``pad`` pixels in x and y, repeating the edge (DrQ's shift)."""
    if pad <= 0:
        return images
    b, h, w, c = images.shape
    padded = torch.nn.functional.pad(images.permute(0, 3, 1, 2).float(), (pad, pad, pad, pad), mode="replicate")
    dy = torch.randint(0, 2 * pad + 1, (b,), generator=generator, device="cpu").to(images.device)
    dx = torch.randint(0, 2 * pad + 1, (b,), generator=generator, device="cpu").to(images.device)
    rows = (torch.arange(h, device=images.device)[None] + dy[:, None])  # (B, H)
    cols = (torch.arange(w, device=images.device)[None] + dx[:, None])  # (B, W)
    out = padded.gather(2, rows[:, None, :, None].expand(b, c, h, w + 2 * pad))
    out = out.gather(3, cols[:, None, None, :].expand(b, c, h, w))
    return out.permute(0, 2, 3, 1).to(images.dtype)


def color_jitter(images: torch.Tensor, strength: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """Random brightness and contrast per image, ``(B, H, W, C)`` uint8 in and out."""
    if strength <= 0:
        return images
    b = images.shape[0]
    x = images.float()
    contrast = 1 + strength * (2 * torch.rand(b, 1, 1, 1, generator=generator) - 1)
    brightness = strength * 255 * (2 * torch.rand(b, 1, 1, 1, generator=generator) - 1)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * contrast.to(x.device) + mean + brightness.to(x.device)
    return x.clamp(0, 255).to(images.dtype)


# Zoom: the screen magnified by z >= 1 about a point of it, as a denser screen (or a larger display size) draws every
# element larger, with the demonstrated dual-gesture moved with the pixels under it. In the [-1, 1] coordinates of
# actions (and of grid_sample), a zoom (z, fy, fx) magnifies about the point f: a point a of the screen goes to
# f + z * (a - f), f in [-1, 1] per axis (f = (-1, -1) holds the top left corner in place). Identity is (1, 0, 0).
IDENTITY_ZOOM = (1.0, 0.0, 0.0)
ZOOM_SEED = 20261128  # the zoomed views cached for a dataset are the same for every run and seed


def zoom_draws(n: int, zoom: float, generator: torch.Generator) -> torch.Tensor:
    """``(n, 3)`` zooms ``(z, fy, fx)``: z uniform in ``[1, 1 + zoom]``, the fixed point f uniform on the screen."""
    u = torch.rand(n, 3, generator=generator)
    return torch.stack([1 + zoom * u[:, 0], 2 * u[:, 1] - 1, 2 * u[:, 2] - 1], dim=1)


def zoom_views(n: int, views: int, zoom: float) -> torch.Tensor:
    """``(views, n, 3)``: the zooms of the ``views`` cached copies of each of a dataset's ``n`` screens (drawn from
    :data:`ZOOM_SEED` and ``n`` alone, so a dataset's cached views are the same for every run)."""
    g = torch.Generator().manual_seed(ZOOM_SEED + n)
    return zoom_draws(views * n, zoom, g).reshape(views, n, 3)


def zoom_points(actions: torch.Tensor, zooms: torch.Tensor) -> torch.Tensor:
    """Dual-gestures ``(..., 4)`` (touch y, x, lift y, x in [-1, 1]) where ``zooms`` ``(..., 3)`` moves them
    (NaN stays NaN; points may leave [-1, 1]: a target the zoom crops out)."""
    z, f = zooms[..., :1], zooms[..., 1:]
    f = torch.cat([f, f], dim=-1).to(actions.dtype)  # (fy, fx, fy, fx) for (touch y, x, lift y, x)
    return f + z.to(actions.dtype) * (actions - f)


def zoom(images: torch.Tensor, zooms: torch.Tensor) -> torch.Tensor:
    """``(B, H, W, C)`` uint8 screens magnified by ``zooms`` ``(B, 3)`` (bilinear; identity rows unchanged)."""
    if not len(images):
        return images
    z, fy, fx = zooms.to(images.device, torch.float32).unbind(-1)
    theta = torch.zeros(len(images), 2, 3, device=images.device)
    # the output point a' reads the input at f + (a' - f) / z; affine_grid's rows are (x, y)
    theta[:, 0, 0], theta[:, 0, 2] = 1 / z, fx * (1 - 1 / z)
    theta[:, 1, 1], theta[:, 1, 2] = 1 / z, fy * (1 - 1 / z)
    x = images.permute(0, 3, 1, 2).float()
    grid = torch.nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
    out = torch.nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    out = out.round().clamp(0, 255).permute(0, 2, 3, 1).to(images.dtype)
    same = (zooms[:, 0] == 1).to(images.device)
    return torch.where(same[:, None, None, None], images, out)
