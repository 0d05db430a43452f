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
