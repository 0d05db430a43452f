"""The VLUI policy (B-MoCA App. C.2) and IQL's critics, as plain ``nn.Module``s that know nothing of Lightning.

Image tokens come from a timm encoder, instruction tokens from a frozen text encoder; multi-head cross-attention
with the text tokens as queries and the image tokens as keys and values fuses them, pooled over the text tokens to
one vector. Two heads turn that into a dual-gesture:

- ``mlp`` (the paper's): an MLP (1024, 1024, 4) with tanh regresses the four numbers from the pooled vector;
- ``pointer``: the image tokens, with their 2-D positions and conditioned on the instruction and the pooled vector,
  each score how likely the touch (and the lift) falls in their cell; the best cell plus a regressed offset inside
  it is the point, and a tap-or-swipe logit says whether the lift is the touch point or a cell of its own. A screen
  whose icons moved is then a matter of finding the icon, not of remembering where it was.

With ``model.history`` = K the policy reads the episode's last K steps too (:class:`~vlui.spec.Past`): the previous
action joins every instruction token (:class:`PreviousAction`), and with K >= 2 or ``model.history_screens`` every
past step is also a token (:class:`PastSteps`: its action, its age and, with screens, its screen through the same
image encoder, pooled) that the instruction attends to beside the image tokens; a step the episode does not have
is masked out.

A policy is rebuilt from its settings alone (:class:`~vlui.models.settings.ModelConfig` and the screen size), so an
export is a JSON config plus safetensors weights:
no Hydra, no pickle (:func:`export_policy`, :func:`load_policy`). It is shared the Hugging Face Hub's way
(``huggingface_hub``'s :class:`~huggingface_hub.PyTorchModelHubMixin`): :meth:`VLUIPolicy.from_pretrained` loads an
export from a folder or a Hub repo id, ``save_pretrained`` and ``push_to_hub`` write one with its model card
(:mod:`vlui.models.card`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from huggingface_hub import PyTorchModelHubMixin
from safetensors import SafetensorError
from safetensors.torch import load_file, save_model
from torch import nn

from vlui.errors import VluiError
from vlui.hub import download, hub_errors, is_repo_id
from vlui.models import card as cards
from vlui.models.files import CONFIG, WEIGHTS, export_dir
from vlui.models.settings import ModelConfig, from_dict, to_dict
from vlui.models.text_encoder import InstructionCache, TextEncoder
from vlui.models.vision import VisionEncoder
from vlui.spec import Memory, ObsActionSpec, Past

EXPORT_VERSION = 3  # 3: settings as {model, spec}; 2 {model, image_size} and 1 (one flat mapping) still read
READABLE_VERSIONS = (1, 2, 3)


def mlp(in_dim: int, hidden: list[int], out_dim: int, dropout: float = 0.0) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(in_dim, h), nn.ReLU(), nn.Dropout(dropout)] if dropout else [nn.Linear(in_dim, h),
                                                                                          nn.ReLU()]
        in_dim = h
    layers.append(nn.Linear(in_dim, out_dim))
    return nn.Sequential(*layers)


class Fusion(nn.Module):
    """Cross-attention: text tokens ``(B, L, d)`` attend to image tokens ``(B, N, d)``; masked mean over the text
    tokens -> ``(B, d)``."""

    def __init__(self, dim: int, heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if dim % heads:
            raise VluiError(f"model.hidden_dim ({dim}) must be divisible by model.num_heads ({heads})")
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, text: torch.Tensor, mask: torch.Tensor, image: torch.Tensor, steps: torch.Tensor | None = None,
                present: torch.Tensor | None = None) -> torch.Tensor:
        """With ``steps`` ``(B, K, d)``, the past steps' tokens (:class:`PastSteps`), the text attends to them too,
        except where ``present`` ``(B, K)`` is False."""
        if steps is None:
            attended, _ = self.attn(text, image, image, need_weights=False)
        else:
            keys = torch.cat([image, steps.to(image.dtype)], dim=1)
            ignored = torch.cat([torch.zeros(image.shape[:2], dtype=torch.bool, device=image.device), ~present], dim=1)
            attended, _ = self.attn(text, keys, keys, key_padding_mask=ignored, need_weights=False)
        x = self.norm(text + attended)
        m = mask.unsqueeze(-1).to(x.dtype)
        return (x * m).sum(1) / m.sum(1).clamp(min=1.0)


def grid_positions(h: int, w: int, dim: int, device: torch.device | None = None) -> torch.Tensor:
    """Fixed 2-D sine-cosine positions ``(h*w, dim)`` of a row-major ``h x w`` grid: half the channels encode the
    row, half the column, each at ``dim // 4`` frequencies (the transformer's, over the unit square)."""
    if dim % 4:
        raise VluiError(f"model.hidden_dim ({dim}) must be divisible by 4 for model.positions=true")
    freqs = torch.exp(torch.arange(dim // 4, device=device, dtype=torch.float32) * (-math.log(1000.0) / (dim // 4)))

    def encode(n: int) -> torch.Tensor:
        angle = ((torch.arange(n, device=device, dtype=torch.float32) + 0.5) / n * 2 * math.pi * 16)[:, None] * freqs
        return torch.cat([angle.sin(), angle.cos()], dim=1)  # (n, dim // 2)

    rows, cols = encode(h), encode(w)
    return torch.cat([rows[:, None].expand(h, w, -1), cols[None].expand(h, w, -1)], dim=-1).reshape(h * w, dim)


FREQUENCIES = 6  # octaves at which a past action's numbers are read (sine and cosine)


def gesture_waves(actions: torch.Tensor) -> torch.Tensor:
    """``(..., 4)`` dual-gestures -> ``(..., 4 * 2 * FREQUENCIES)``: each number's sine and cosine at
    :data:`FREQUENCIES` octaves, so a point is told from its neighbours a 32nd of the screen away."""
    freqs = (2.0 ** torch.arange(FREQUENCIES, device=actions.device)) * (math.pi / 2)
    angle = (actions[..., None] * freqs).flatten(-2)  # (..., 4 * F)
    return torch.cat([angle.sin(), angle.cos()], dim=-1)


class PreviousAction(nn.Module):
    """``model.history`` >= 1: the episode's previous dual-gesture as a ``(B, d)`` vector, from its
    :func:`gesture_waves` and whether there is one at all (NaN, or no tensor, at an episode's first step).

    A memoryless policy cannot tell a screen its last tap left unchanged (a radio button already checked) from the
    same screen before that tap, and repeats the tap until the step limit; the previous action tells them apart."""

    FREQUENCIES = FREQUENCIES

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.net = mlp(4 * 2 * self.FREQUENCIES + 1, [dim], dim)

    def forward(self, previous: torch.Tensor | None, batch: int, device: torch.device) -> torch.Tensor:
        """``(B, 4)`` previous actions, NaN rows (or None) where there is none -> ``(B, d)``."""
        if previous is None:
            previous = torch.full((batch, 4), float("nan"), device=device)
        previous = previous.to(device=device, dtype=torch.float32)
        present = ~torch.isnan(previous).any(dim=-1, keepdim=True)
        waves = gesture_waves(torch.where(present, previous, 0.0)) * present
        return self.net(torch.cat([waves, present.float()], dim=-1))


class PastSteps(nn.Module):
    """``model.history`` = K >= 2, or ``model.history_screens``: each of the last K steps as a ``(d,)`` token, the
    sum of its action (:func:`gesture_waves` through an MLP), a learned embedding of its age (slot ``j``: ``j + 1``
    steps ago) and, with screens, its screen's image tokens (the policy's own image encoder), averaged and projected.
    The instruction attends to them beside the image tokens (:class:`Fusion`); a step the episode does not have is
    masked out there, and its inputs are zeros here, so whatever its slot held changes nothing."""

    def __init__(self, dim: int, steps: int, screens: bool) -> None:
        super().__init__()
        self.action = mlp(4 * 2 * FREQUENCIES, [dim], dim)
        self.age = nn.Parameter(torch.randn(steps, dim) * 0.02)
        self.screen = nn.Linear(dim, dim) if screens else None

    def forward(self, actions: torch.Tensor, pooled: torch.Tensor | None) -> torch.Tensor:
        """``(B, K, 4)`` actions (zeros where a step is missing) and ``(B, K, d)`` pooled screens (or None) ->
        ``(B, K, d)`` tokens."""
        tokens = self.action(gesture_waves(actions)) + self.age
        return tokens if pooled is None else tokens + self.screen(pooled.to(tokens.dtype))


class Fused(NamedTuple):
    """What the encoder hands the heads: the pooled ``(B, d)`` vector, the ``(B, N, d)`` image tokens (with their
    positions when the model has them), the projected ``(B, L, d)`` instruction tokens with their mask, and the
    token grid's (rows, columns)."""

    pooled: torch.Tensor
    tokens: torch.Tensor
    text: torch.Tensor
    mask: torch.Tensor
    grid: tuple[int, int]


class Encoder(nn.Module):
    """(screen, instruction tokens) -> :class:`Fused`: vision encoder, text projection, fusion."""

    def __init__(self, cfg: ModelConfig, text_dim: int, load_pretrained: bool = True) -> None:
        super().__init__()
        self.vision = VisionEncoder(cfg.vision.name, cfg.hidden_dim, cfg.vision.pretrained if load_pretrained else None,
                                    cfg.vision.freeze, cfg.vision.feature_index, cfg.vision.detail_index,
                                    cfg.vision.tune_blocks)
        self.text_proj = nn.Linear(text_dim, cfg.hidden_dim)
        self.history, self.history_screens = cfg.history, cfg.history_screens
        self.history_screen_detail = cfg.history_screen_detail
        self.previous = PreviousAction(cfg.hidden_dim) if cfg.history else None
        self.fusion = Fusion(cfg.hidden_dim, cfg.num_heads, cfg.dropout)
        # after the modules a policy of model.history=true had, so that one is built (and initialised) as it was
        self.past = (PastSteps(cfg.hidden_dim, cfg.history, cfg.history_screens)
                     if cfg.history > 1 or cfg.history_screens else None)
        self.positions = cfg.positions
        if cfg.positions and cfg.hidden_dim % 4:
            raise VluiError(f"model.hidden_dim ({cfg.hidden_dim}) must be divisible by 4 for model.positions=true")

    def forward(self, images: torch.Tensor, text: torch.Tensor, mask: torch.Tensor, past: Past | None = None) -> Fused:
        """``(B, H, W, 3)`` uint8, ``(B, L, Dt)``, ``(B, L)`` bool, and with ``model.history`` the episodes'
        :class:`~vlui.spec.Past` (its screens ``(B, K, H, W, 3)`` uint8 with ``model.history_screens``; None: every
        episode at its first step) -> :class:`Fused`."""
        cached = self.vision.cached_map(images)
        if past is not None and self.history_screens and past.screens is not None:
            past = replace(past, screens=self._past_maps(past, cached.shape[1:]))
        return self.from_cached(cached, text, mask, past)

    def _past_maps(self, past: Past, shape: torch.Size) -> torch.Tensor:
        """The past screens' :meth:`~vlui.models.vision.VisionEncoder.cached_map`, ``(B, K, *shape)``: computed for
        the steps that exist only (zeros elsewhere), so a missing step's slot is never run through the backbone."""
        present = self._present(past, len(past.valid)).flatten()
        screens = past.screens.flatten(0, 1)
        out = torch.zeros((len(present), *shape), device=present.device)
        index = present.nonzero().squeeze(1)
        if len(index):
            maps = self.vision.cached_map(screens[index.to(screens.device)].to(present.device))
            out = out.to(maps.dtype).index_copy(0, index, maps)
        return out.unflatten(0, past.valid.shape[:2])

    def from_cached(self, cached: torch.Tensor, text: torch.Tensor, mask: torch.Tensor,
                    past: Past | None = None) -> Fused:
        """The same from the vision encoder's :meth:`~vlui.models.vision.VisionEncoder.cached_map` of the screens
        (precomputed once per screen when the backbone is frozen), the past screens' too."""
        fmap = self.vision.from_cached(cached.float())
        h, w = int(fmap.shape[-2]), int(fmap.shape[-1])
        tokens = self.vision.tokens(fmap.float())
        if self.positions:
            tokens = tokens + grid_positions(h, w, tokens.shape[-1], tokens.device).to(tokens.dtype)
        text = self.text_proj(text)
        if self.previous is None:
            return Fused(self.fusion(text, mask, tokens), tokens, text, mask, (h, w))
        present = self._present(past, len(text))
        previous = None
        if past is not None:  # the most recent step's action, NaN where there is none
            previous = torch.where(present[:, :1], past.actions[:, 0].to(present.device, torch.float32), float("nan"))
        # the previous action joins every query: "I just tapped there"
        text = text + self.previous(previous, len(text), text.device).to(text.dtype)[:, None]
        if self.past is None:
            return Fused(self.fusion(text, mask, tokens), tokens, text, mask, (h, w))
        steps = self.past(self._past_actions(past, present), self._pooled_screens(past, present, tokens.dtype))
        return Fused(self.fusion(text, mask, tokens, steps, present), tokens, text, mask, (h, w))

    def _present(self, past: Past | None, batch: int) -> torch.Tensor:
        """``(B, K)`` bool: the past steps that exist (flagged valid, with four finite numbers), checked against
        the policy's settings; none when ``past`` is None."""
        device = self.text_proj.weight.device
        if past is None:
            return torch.zeros((batch, self.history), dtype=torch.bool, device=device)
        k = self.history
        actions, valid = past.actions, past.valid
        if tuple(actions.shape) != (batch, k, 4) or tuple(valid.shape) != (batch, k):
            raise VluiError(f"the past is {tuple(actions.shape)} actions and {tuple(valid.shape)} flags, expected "
                            f"({batch}, {k}, 4) and ({batch}, {k}): the policy reads the last {k} steps "
                            f"(model.history={k})")
        if self.history_screens and past.screens is None:
            raise VluiError("the policy reads the past steps' screens too (model.history_screens=true): hand them in "
                            "the past (its Memory keeps them)")
        actions = actions.to(device=device, dtype=torch.float32)
        return valid.to(device=device, dtype=torch.bool) & torch.isfinite(actions).all(dim=-1)

    @staticmethod
    def _past_actions(past: Past | None, present: torch.Tensor) -> torch.Tensor:
        """``(B, K, 4)``: the past actions, zeros where a step is missing."""
        if past is None:
            return torch.zeros((*present.shape, 4), device=present.device)
        actions = past.actions.to(device=present.device, dtype=torch.float32)
        return torch.where(present[..., None], actions, 0.0)

    def _pooled_screens(self, past: Past | None, present: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
        """``(B, K, d)``: each past screen's summary (zeros where a step is missing): its token map averaged and
        projected (:meth:`~vlui.models.vision.VisionEncoder.pooled`), or with ``model.history_screen_detail`` its image
        tokens averaged, the finer map's adapter run on it too; None without ``model.history_screens``.
        ``past.screens`` holds what :meth:`from_cached` takes of a screen."""
        if not self.history_screens:
            return None
        flat = present.flatten()
        out = torch.zeros((len(flat), self.text_proj.out_features), device=present.device, dtype=dtype)
        index = flat.nonzero().squeeze(1)
        if past is not None and len(index):
            cached = past.screens.flatten(0, 1)[index.to(past.screens.device)].to(present.device)
            fmap = self.vision.from_cached(cached.float()).float()
            pooled = self.vision.tokens(fmap).mean(dim=1) if self.history_screen_detail else self.vision.pooled(fmap)
            out = out.to(pooled.dtype).index_copy(0, index, pooled)
        return out.unflatten(0, present.shape)


class MLPHead(nn.Sequential):
    """The paper's head: an MLP on the pooled vector, tanh, four numbers (its layers named as exports of earlier
    versions name them)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(*mlp(cfg.hidden_dim, list(cfg.head_dims), 4, cfg.dropout))

    def forward(self, fused: Fused) -> torch.Tensor:
        return torch.tanh(super().forward(fused.pooled))

    @staticmethod
    def actions(out: torch.Tensor) -> torch.Tensor:
        return out


def grid_cell(points: torch.Tensor, h: int, w: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(B, 2)`` normalised (y, x) -> the row-major index of the ``h x w`` cell each falls in ``(B,)``, and where
    in it, ``(B, 2)`` in cell units from its centre (``[-0.5, 0.5]``)."""
    size = torch.tensor([h, w], device=points.device, dtype=points.dtype)
    scaled = points * size
    rc = torch.minimum(scaled.floor().clamp(min=0), size - 1)
    return (rc[:, 0] * w + rc[:, 1]).long(), scaled - rc - 0.5


class PointerHead(nn.Module):
    """Touch and lift as cells of the image grid, an offset inside the cell, and tap or swipe.

    The image tokens are modulated by the instruction and the pooled vector (FiLM), mixed by ``pointer_layers``
    self-attention layers, and each scores its cell for the touch and for the lift and regresses where in its cell
    the point is (``[-0.5, 0.5]`` of a cell). :func:`~vlui.algos.losses.pointer_loss` trains the output."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.hidden_dim
        self.film = nn.Linear(2 * d, 2 * d)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, cfg.num_heads, dim_feedforward=2 * d, dropout=cfg.dropout,
                                           batch_first=True, norm_first=True)
        self.mix = nn.TransformerEncoder(layer, cfg.pointer_layers, enable_nested_tensor=False) \
            if cfg.pointer_layers else nn.Identity()
        self.cells = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 6))  # touch logit, lift logit, 2 x (dy, dx)
        self.gesture = mlp(2 * d, [d], 1)  # > 0: a swipe

    def forward(self, fused: Fused) -> dict[str, torch.Tensor]:
        m = fused.mask.unsqueeze(-1).to(fused.text.dtype)
        instruction = (fused.text * m).sum(1) / m.sum(1).clamp(min=1.0)
        context = torch.cat([fused.pooled, instruction], dim=-1)
        scale, shift = self.film(context).unsqueeze(1).chunk(2, dim=-1)
        x = self.mix(self.norm(fused.tokens) * (1 + scale) + shift)
        cells = self.cells(x)
        h, w = fused.grid
        return {"touch_logits": cells[..., 0], "lift_logits": cells[..., 1],
                "touch_offset": 0.5 * torch.tanh(cells[..., 2:4]), "lift_offset": 0.5 * torch.tanh(cells[..., 4:6]),
                "swipe_logit": self.gesture(context).squeeze(-1),
                "grid": torch.tensor([h, w], device=cells.device)}

    @staticmethod
    def actions(out: dict[str, torch.Tensor]) -> torch.Tensor:
        """The most likely cells and their offsets as ``(B, 4)`` dual-gestures in [-1, 1]; a tap lifts where it
        touched."""
        h, w = (int(v) for v in out["grid"])

        def point(logits: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
            cell = logits.argmax(dim=-1)
            off = offset.gather(1, cell[:, None, None].expand(-1, 1, 2)).squeeze(1)
            p = torch.stack([(cell // w).to(off.dtype), (cell % w).to(off.dtype)], dim=-1) + 0.5 + off
            return p / torch.tensor([h, w], device=p.device, dtype=p.dtype)

        touch = point(out["touch_logits"], out["touch_offset"])
        lift = torch.where((out["swipe_logit"] > 0)[:, None], point(out["lift_logits"], out["lift_offset"]), touch)
        return (torch.cat([touch, lift], dim=-1) * 2 - 1).clamp(-1, 1)

    @staticmethod
    def avoiding(out: dict[str, torch.Tensor], tried: list[np.ndarray]) -> dict[str, torch.Tensor]:
        """``out`` with, for each episode ``b``, the touch cells of the ``(n, 4)`` dual-gestures ``tried[b]`` ruled
        out: on a screen the episode has been on before, the head's likeliest gesture other than those taken there
        (``agent.avoid_repeats``). An episode whose every cell was tried keeps its scores."""
        h, w = (int(v) for v in out["grid"])
        logits = out["touch_logits"].clone()
        for b, actions in enumerate(tried):
            if len(actions):
                taken = torch.as_tensor(np.asarray(actions, dtype=np.float32), device=logits.device)
                cells, _ = grid_cell((taken[:, :2] + 1) / 2, h, w)
                row = logits[b].index_fill(0, cells, float("-inf"))
                if torch.isfinite(row).any():
                    logits[b] = row
        return {**out, "touch_logits": logits}


HEADS = {"mlp": MLPHead, "pointer": PointerHead}


class RecentMaps:
    """A frozen backbone's :meth:`~vlui.models.vision.VisionEncoder.cached_map` of the screens a policy acted on
    lately, by their content: a policy that reads past screens in a rollout finds each one here (it was the current
    screen a few steps before) instead of running the backbone on it again. The ``size`` most recent are kept."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._maps: OrderedDict[bytes, torch.Tensor] = OrderedDict()

    def clear(self) -> None:
        self._maps.clear()

    def __call__(self, vision: VisionEncoder, screens: np.ndarray, device: torch.device) -> torch.Tensor:
        """``(N, H, W, 3)`` uint8 -> their maps ``(N, C, h, w)``, each computed once."""
        keys = [hashlib.blake2b(np.ascontiguousarray(s).data, digest_size=16).digest() for s in screens]
        missing = {k: i for i, k in enumerate(keys) if k not in self._maps}
        if missing:
            maps = vision.cached_map(torch.as_tensor(screens[list(missing.values())], device=device))
            self._maps.update(zip(missing, maps, strict=True))
        for k in keys:
            self._maps.move_to_end(k)
        out = torch.stack([self._maps[k] for k in keys]).to(device)
        while len(self._maps) > self.size:
            self._maps.popitem(last=False)
        return out


class VLUIPolicy(nn.Module, PyTorchModelHubMixin, library_name="vlui", tags=list(cards.TAGS)):
    """The policy of ``cfg`` for the screens and actions of ``spec``.

    Shared as the Hub shares models: ``VLUIPolicy.from_pretrained(folder or "owner/name")`` loads an export,
    ``policy.save_pretrained(folder)`` writes one (config.json, model.safetensors and its model card, README.md) and
    ``policy.push_to_hub("owner/name")`` uploads it."""

    def __init__(self, cfg: ModelConfig, spec: ObsActionSpec, load_pretrained: bool = True) -> None:
        super().__init__()
        if not isinstance(spec, ObsActionSpec):
            raise TypeError(f"a policy's spec is an ObsActionSpec (vlui.spec), not {spec!r}")
        self.cfg, self.spec = cfg, spec
        self.text = InstructionCache(TextEncoder.from_config(cfg.text.kind, cfg.text.name_or_path, cfg.text.size,
                                                             cfg.text.max_length))
        self.encoder = Encoder(cfg, self.text.encoder.dim, load_pretrained)
        if cfg.head not in HEADS:
            raise VluiError(f"unknown model.head {cfg.head!r}; choose from: {', '.join(HEADS)}")
        self.head = HEADS[cfg.head](cfg)
        # what its export records besides the settings: the run, its recipe, a summary of its data (train.py)
        self.metadata: dict[str, Any] = {}
        self.recent = RecentMaps()  # rollouts of a frozen backbone that reads past screens (select_action)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        self.recent.clear()  # maps of other weights
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    # ------------------------------------------------------------------------------------ sharing (the Hub's way)
    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | Path, *, force_download: bool = False,
                        token: str | bool | None = None, cache_dir: str | Path | None = None,
                        local_files_only: bool = False, revision: str | None = None,
                        device: str | torch.device = "cpu", **unknown: Any) -> VLUIPolicy:
        """The policy exported at ``pretrained_model_name_or_path``: a folder (an export, a run's checkpoint folder
        holding one in ``policy/``, or a Lightning ``.ckpt`` file), or the repo id (``owner/name``) of one on the Hub,
        downloaded into the Hub's cache (``revision``, ``cache_dir``, ``token``, ``force_download`` and
        ``local_files_only`` as huggingface_hub takes them). Reads JSON and safetensors only: nothing is unpickled.
        In evaluation mode, on ``device``."""
        if unknown:
            raise VluiError(f"VLUIPolicy.from_pretrained takes no {', '.join(sorted(unknown))}: a policy is rebuilt "
                            "from its config.json alone")
        name = str(pretrained_model_name_or_path)
        path = Path(name)
        if path.exists() or not is_repo_id(name):
            return load_policy(path, device)  # says what is wrong with a path that is no export
        folder = download(name, f"{name} is no folder here, and downloading it from the Hub failed", allow_patterns=[
            CONFIG, WEIGHTS, cards.CARD], revision=revision, cache_dir=cache_dir, token=token,
            force_download=force_download, local_files_only=local_files_only)
        if not (folder / CONFIG).is_file() or not (folder / WEIGHTS).is_file():
            raise VluiError(f"the Hub repository {name} is not a vlui policy (no {CONFIG} and {WEIGHTS} in it)")
        try:
            return load_policy(folder, device)
        except VluiError as err:
            raise VluiError(str(err).replace(str(folder), f"{name} (from the Hub)")) from None

    @classmethod
    def _from_pretrained(cls, *, model_id: str, revision: str | None, cache_dir: str | Path | None,
                         force_download: bool, local_files_only: bool, token: str | bool | None,
                         **kwargs: Any) -> VLUIPolicy:
        return cls.from_pretrained(model_id, revision=revision, cache_dir=cache_dir, force_download=force_download,
                                   local_files_only=local_files_only, token=token, **kwargs)

    def export_config(self) -> dict[str, Any]:
        """What its export's ``config.json`` holds: the format, the settings and :attr:`metadata`."""
        return {"export_version": EXPORT_VERSION, "policy": to_dict(self.cfg, self.spec), **self.metadata}

    def _save_pretrained(self, save_directory: Path) -> None:
        export_policy(self, save_directory, self.metadata)

    def save_pretrained(self, save_directory: str | Path, *, config: dict | None = None, repo_id: str | None = None,
                        push_to_hub: bool = False, model_card_kwargs: dict[str, Any] | None = None,
                        **push_to_hub_kwargs: Any) -> str | None:
        """Export it to ``save_directory`` (config.json, model.safetensors) with its model card, README.md
        (``model_card_kwargs``: ``results``, the folders of evaluations of it; ``license``; ``dataset_id``, its data
        on the Hub; ``load_from``, what the card's code loads). A README.md that vlui did not write is kept unless
        ``model_card_kwargs`` ask for a card. With ``push_to_hub``, then uploaded to ``repo_id`` (the folder's name
        by default)."""
        if config is not None:
            raise VluiError("a vlui policy's config.json is its own settings and run: save_pretrained takes no config")
        folder = Path(save_directory)
        self._save_pretrained(folder)
        if model_card_kwargs:
            cards.write_model_card(folder, **model_card_kwargs)
        else:
            cards.refresh_model_card(folder)
        if push_to_hub:
            return self.push_to_hub(repo_id or folder.name, model_card_kwargs=model_card_kwargs, **push_to_hub_kwargs)
        return None

    def push_to_hub(self, repo_id: str, *, model_card_kwargs: dict[str, Any] | None = None,
                    **kwargs: Any) -> str:
        """Upload it with its model card to the Hub repository ``repo_id`` (created when missing; ``private``,
        ``token``, ``commit_message``, ``branch`` as huggingface_hub takes them); the card's code loads it from
        there. Without a network (or with ``HF_HUB_OFFLINE=1``) one line says so."""
        if not is_repo_id(repo_id):
            raise VluiError(f"{repo_id!r} is not a Hub repo id (owner/name)")
        card = {"load_from": repo_id, **(model_card_kwargs or {})}
        with hub_errors(f"uploading the policy to {repo_id}", uploading=True):
            return super().push_to_hub(repo_id, model_card_kwargs=card, **kwargs)

    def generate_model_card(self, *args: Any, **kwargs: Any) -> Any:
        """Its model card (:func:`vlui.models.card.model_card`) without evaluations: ``license``, ``dataset_id``,
        ``load_from``."""
        return cards.model_card(self.export_config(), **kwargs)

    @property
    def image_size(self) -> tuple[int, int]:
        """(height, width) of the screens it takes."""
        return self.spec.image_size

    def forward(self, images: torch.Tensor, text: torch.Tensor, mask: torch.Tensor,
                past: Past | None = None) -> torch.Tensor:
        """``(B, H, W, 3)`` uint8 screens and instruction tokens (and, with ``model.history``, the episodes'
        :class:`~vlui.spec.Past`) -> ``(B, 4)`` actions in [-1, 1]."""
        return self.act_from_features(self.encoder(images, text, mask, past))

    def memory(self, repeats: bool = False) -> Memory:
        """A fresh record of one episode, keeping what the policy reads of it (``model.history`` steps, their screens
        with ``model.history_screens``; with ``repeats`` the gestures taken on each screen: ``agent.avoid_repeats``)."""
        return Memory(self.cfg.history, self.cfg.history_screens, repeats)

    def head_output(self, features: Fused) -> Any:
        """The head's raw output (what its loss trains): ``(B, 4)`` actions for ``mlp``, cell scores and offsets
        for ``pointer``."""
        return self.head(features)

    def act_from_features(self, features: Fused) -> torch.Tensor:
        """:class:`Fused` features -> ``(B, 4)`` actions."""
        return self.head.actions(self.head(features))

    @torch.no_grad()
    def select_action(self, screens: np.ndarray | torch.Tensor, instructions: list[str],
                      past: Past | None = None) -> np.ndarray:
        """Rollouts: ``(B, H, W, 3)`` uint8 screens, their instructions and the episodes' :class:`~vlui.spec.Past`
        (numpy; read by a policy with ``model.history``, None: every episode at its first step) -> ``(B, 4)``
        float32 actions."""
        device = next(self.encoder.parameters()).device
        images = torch.as_tensor(np.asarray(screens), device=device)
        if tuple(images.shape[1:3]) != self.image_size:
            raise VluiError(f"the policy takes {self.image_size[0]}x{self.image_size[1]} screens, got "
                            f"{images.shape[1]}x{images.shape[2]}: set env.observation_height/width to match")
        text, mask = self.text.lookup(list(instructions))
        if past is not None and past.screens is not None and self.cfg.history_screens and \
                tuple(np.shape(past.screens)[2:4]) != self.image_size:
            raise VluiError(f"the policy takes {self.image_size[0]}x{self.image_size[1]} screens, and its past screens "
                            f"are {np.shape(past.screens)[2]}x{np.shape(past.screens)[3]}")
        text, mask = text.to(device), mask.to(device)
        tried = past.tried if past is not None else None
        if not self.cfg.history:
            return self._act(self.encoder(images, text, mask), tried)  # a memoryless policy reads no past
        if past is not None:
            past = Past(torch.as_tensor(np.asarray(past.actions, dtype=np.float32), device=device),
                        torch.as_tensor(np.asarray(past.valid, dtype=bool), device=device),
                        None if past.screens is None or not self.cfg.history_screens else np.asarray(past.screens))
        if not (self.cfg.history_screens and self.encoder.vision.frozen):
            if past is not None and past.screens is not None:
                past = replace(past, screens=torch.as_tensor(past.screens))  # to the device step by step
            return self._act(self.encoder(images, text, mask, past), tried)
        # a frozen backbone's maps of the screens, past ones found among those of the steps before
        vision = self.encoder.vision
        cached = self.recent(vision, np.asarray(screens), device)
        if past is not None and past.screens is not None:
            present = self.encoder._present(past, len(images)).cpu().numpy()
            maps = torch.zeros((*present.shape, *cached.shape[1:]), dtype=cached.dtype, device=device)
            if present.any():
                maps[torch.as_tensor(present, device=device)] = self.recent(vision, past.screens[present], device)
            past = replace(past, screens=maps)
        return self._act(self.encoder.from_cached(cached, text, mask, past), tried)

    def _act(self, features: Fused, tried: list[np.ndarray] | None) -> np.ndarray:
        """Rollouts' actions from the features; with ``tried`` (``agent.avoid_repeats``), not the gestures each
        episode has already taken on its current screen (:meth:`PointerHead.avoiding`; the agent refuses the setting
        for another head)."""
        if tried is None:
            return self.act_from_features(features).float().cpu().numpy()
        out = PointerHead.avoiding(self.head(features), tried)
        return PointerHead.actions(out).float().cpu().numpy()


class Critics(nn.Module):
    """IQL's twin ``Q(o, c, a)`` and ``V(o, c)`` heads on encoder features; their own encoder unless shared."""

    def __init__(self, cfg: ModelConfig, text_dim: int, hidden: list[int], own_encoder: bool) -> None:
        super().__init__()
        self.encoder = Encoder(cfg, text_dim) if own_encoder else None
        d = cfg.hidden_dim
        self.q1 = mlp(d + 4, hidden, 1)
        self.q2 = mlp(d + 4, hidden, 1)
        self.v = mlp(d, hidden, 1)

    def q(self, features: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.cat([features, actions], dim=-1)
        return self.q1(x).squeeze(-1), self.q2(x).squeeze(-1)

    def value(self, features: torch.Tensor) -> torch.Tensor:
        return self.v(features).squeeze(-1)


def export_policy(policy: VLUIPolicy, directory: str | Path, metadata: dict[str, Any] | None = None) -> Path:
    """Write ``config.json`` and ``model.safetensors`` (the whole policy, the frozen text encoder included).

    Each file is written under a temporary name and renamed into place, so a full disk or a kill leaves the previous
    export (or none), never half a file."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    weights, cfg_path = directory / WEIGHTS, directory / CONFIG
    tmp = directory / f".{WEIGHTS}.tmp"
    try:
        save_model(policy, str(tmp))  # stores tied weights (T5's embeddings) once
        config = {"export_version": EXPORT_VERSION, "policy": to_dict(policy.cfg, policy.spec), **(metadata or {})}
        os.replace(tmp, weights)
        tmp = directory / f".{CONFIG}.tmp"
        tmp.write_text(json.dumps(config, indent=2))
        os.replace(tmp, cfg_path)
    finally:
        tmp.unlink(missing_ok=True)
    return directory


def load_policy(checkpoint: str | Path, device: str | torch.device = "cpu") -> VLUIPolicy:
    """A policy from an export folder, a run's checkpoint folder (its ``policy/`` export) or a Lightning ``.ckpt``
    file. Reads JSON, safetensors and tensors only: nothing is unpickled."""
    path = Path(checkpoint)
    if path.suffix == ".ckpt" or path.is_file():
        policy = _load_lightning_checkpoint(path)
    else:
        policy = _load_export(path)
    return policy.to(device).eval()


def _load_export(directory: Path) -> VLUIPolicy:
    directory = export_dir(directory)  # a run's checkpoint folder: its export
    cfg_path, weights = directory / CONFIG, directory / WEIGHTS
    if not directory.exists():
        raise VluiError(f"{directory} is not a policy export (it does not exist): point to "
                        "checkpoints/<experiment>/<run>")
    if not cfg_path.exists() or not weights.exists():
        ckpts = sorted(directory.glob("*.ckpt"))
        hint = (f"; it holds Lightning checkpoints: point to one, e.g. checkpoint={directory / 'last.ckpt'}"
                if ckpts else ": point to checkpoints/<experiment>/<run>/policy")
        raise VluiError(f"{directory} is not a policy export (config.json and model.safetensors){hint}")
    try:
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise VluiError(f"{cfg_path} is damaged (not JSON: {str(err).splitlines()[0]}): export the policy again "
                        "(run the same train.py command; it resumes from last.ckpt and exports)") from None
    if not isinstance(config, dict) or config.get("export_version") not in READABLE_VERSIONS:
        version = config.get("export_version") if isinstance(config, dict) else None
        raise VluiError(f"{directory} was exported in format {version}, this vlui reads "
                        f"{', '.join(map(str, READABLE_VERSIONS))}")
    policy = _build(config.get("policy"), cfg_path)
    policy.metadata = {k: v for k, v in config.items() if k not in ("export_version", "policy")}
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as err:
        raise VluiError(f"{weights} is damaged ({str(err).splitlines()[0][:100]}): export the policy again (run the "
                        "same train.py command; it resumes from last.ckpt and exports)") from None
    _load_weights(policy, state, str(weights))
    return policy


def _load_lightning_checkpoint(path: Path) -> VLUIPolicy:
    """The policy inside a Lightning checkpoint of an algorithm (:mod:`vlui.algos.base`) (``weights_only``: no pickle)."""
    checkpoint = read_checkpoint(path)
    hparams = checkpoint.get("hyper_parameters")
    if not isinstance(hparams, dict) or "policy" not in hparams or "state_dict" not in checkpoint:
        raise VluiError(f"{path} is not a vlui training checkpoint (no policy settings or weights in it)")
    policy = _build(hparams["policy"], path, hparams.get("gesture"))
    state = {k.removeprefix("policy."): v for k, v in checkpoint["state_dict"].items() if k.startswith("policy.")}
    _load_weights(policy, state, str(path))
    return policy


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """A Lightning ``.ckpt`` file read with ``weights_only=True`` (tensors and plain containers only, never
    arbitrary code); an unreadable one is a one-line error naming it."""
    path = Path(path)
    if not path.is_file():
        raise VluiError(f"checkpoint {path} does not exist" if not path.exists() else f"{path} is not a file")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as err:  # noqa: BLE001 - torch raises many types (RuntimeError, UnpicklingError, EOFError...)
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0][:120]
        raise VluiError(f"checkpoint {path} cannot be read ({reason}): it is damaged or not a checkpoint") from None
    if not isinstance(checkpoint, dict):
        raise VluiError(f"checkpoint {path} is not a Lightning checkpoint")
    return checkpoint


def _build(settings: Any, where: Path, gesture: Any = None) -> VLUIPolicy:
    """A randomly initialised policy from the settings stored with a checkpoint (and, in checkpoints before
    ``policy.spec``, the actions' reading in ``gesture``); unknown or missing ones named."""
    try:
        return VLUIPolicy(*from_dict(settings, gesture), load_pretrained=False)
    except VluiError as err:
        raise VluiError(f"{where}: {err}") from None
    except Exception as err:  # noqa: BLE001 - a value of the wrong type deep in a constructor
        raise VluiError(f"{where}: its policy settings do not build a policy ({type(err).__name__}: "
                        f"{str(err).splitlines()[0][:100]})") from None


def _load_weights(policy: VLUIPolicy, state: dict[str, torch.Tensor], where: str) -> None:
    """Load ``state`` into ``policy``: every tensor present, of the right shape, nothing extra."""
    own = policy.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    tied = {k for k in missing if _tied_to_present(policy, k, state)}  # safetensors stores tied weights once
    missing = [k for k in missing if k not in tied]
    if missing or unexpected:
        raise VluiError(f"{where} does not match its policy settings (missing {missing[:3]}, unexpected "
                        f"{unexpected[:3]}): export it again")
    wrong = [f"{k} {tuple(v.shape)} instead of {tuple(own[k].shape)}" for k, v in state.items()
             if tuple(v.shape) != tuple(own[k].shape)]
    if wrong:
        raise VluiError(f"{where} has tensors of the wrong shape for its policy settings ({'; '.join(wrong[:2])}): "
                        "export it again")
    policy.load_state_dict(state, strict=False)


def _tied_to_present(policy: VLUIPolicy, key: str, state: dict[str, torch.Tensor]) -> bool:
    """Whether parameter ``key`` shares its storage with a parameter that ``state`` holds (tied embeddings)."""
    own = policy.state_dict(keep_vars=True)
    ptr = own[key].data_ptr()
    return any(k in state and own[k].data_ptr() == ptr for k in own if k != key)
