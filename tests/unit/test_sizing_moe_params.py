"""MoE and MLA parameter counts and KV-cache bytes per token, worked by hand.

Mixtral 8x7B (L=32, h=4096, a=32, g=8, f=14336, E=8, k=2, V=32000, untied):
  attention = 2*4096*4096 + 2*4096*1024          =    41,943,040
  expert    = 3*4096*14336                       =   176,160,768
  layer     = attn + 8*expert + router 4096*8 + 2*4096 = 1,451,270,144
  total     = 32*layer + 2*32000*4096 + 4096     = 46,702,792,704
  active    = 32*(attn + 2*expert + 32768 + 8192) + 262,144,000 + 4096 = 12,879,925,248
DeepSeek-V3 (MLA): per layer Q = 7168*1536 + 1536 + 1536*128*192 = 48,760,320;
  KV = 7168*576 + 512 + 512*128*256 = 20,906,496; O = 128*128*7168 = 117,440,512;
  61 layers of which 3 dense (f 18432), 58 MoE with 256 routed + 1 shared expert of 2048:
  671,026,404,352 total (published 671B), 37,552,282,624 active (published 37B).
KV cache per token: GQA 2*L*g*d_h values; MLA L*(kv_lora_rank + rope) values.
"""

from __future__ import annotations

import pytest

from generator.catalog.load import default_catalog
from generator.sizing.model.arch import from_catalog, from_inline
from generator.sizing.model.kvcache import kv_cache_bytes_per_token
from generator.sizing.model.params import (
    active_params,
    attention_params,
    layer_params,
    moe_layers,
    routed_active_params,
    total_params,
)
from generator.spec.models import InlineArchitecture


def _arch(model_id: str):  # type: ignore[no-untyped-def]
    return from_catalog(default_catalog().models[model_id])


def test_mixtral_8x7b_by_hand() -> None:
    arch = _arch("mixtral-8x7b")
    assert attention_params(arch) == 41_943_040
    assert layer_params(arch) == 1_451_270_144
    assert total_params(arch) == 46_702_792_704
    assert active_params(arch) == 12_879_925_248
    assert routed_active_params(arch) == 32 * 2 * 176_160_768


def test_deepseek_v3_mla_and_shared_experts_by_hand() -> None:
    arch = _arch("deepseek-v3")
    assert attention_params(arch) == 48_760_320 + 20_906_496 + 117_440_512
    assert moe_layers(arch) == 58
    assert total_params(arch) == 671_026_404_352
    assert active_params(arch) == 37_552_282_624


@pytest.mark.parametrize(
    ("model", "total_b", "active_b"),
    [("mixtral-8x7b", 46.7, 12.9), ("mixtral-8x22b", 141, 39.2), ("deepseek-v3", 671, 37.5),
     ("qwen3-30b-a3b", 30.5, 3.35), ("qwen3-235b-a22b", 235, 22.2),
     ("gpt-oss-120b", 116.8, 5.71), ("gpt-oss-20b", 20.9, 4.19),
     ("llama4-maverick", 400.7, 17.18), ("kimi-k2", 1026.4, 32.86)],
)
def test_catalog_moe_totals(model: str, total_b: float, active_b: float) -> None:
    """Published totals (or, where the publisher leaves out embeddings, the count stated in
    the catalog notes) within 0.5 %."""
    arch = _arch(model)
    assert total_params(arch) / 1e9 == pytest.approx(total_b, rel=5e-3)
    assert active_params(arch) / 1e9 == pytest.approx(active_b, rel=5e-3)


def test_maverick_interleaves_dense_and_moe_layers() -> None:
    arch = _arch("llama4-maverick")
    assert moe_layers(arch) == 24
    dense = layer_params(arch, moe=False)
    assert dense == attention_params(arch) + 3 * 5120 * 16384 + 2 * 5120


@pytest.mark.parametrize(
    ("model", "kib"),
    [("llama2-70b", 320.0),          # 2*80*8*128*2 B: GQA
     ("mixtral-8x7b", 128.0),        # 2*32*8*128*2 B
     ("qwen3-235b-a22b", 188.0),     # 2*94*4*128*2 B: head_dim 128 though h/a = 64
     ("deepseek-v3", 61 * 576 * 2 / 1024),   # MLA: (512 + 64) values per layer
     ("gpt3-175b", 2 * 96 * 12288 * 2 / 1024)],  # MHA
)
def test_kv_cache_bytes_per_token(model: str, kib: float) -> None:
    assert kv_cache_bytes_per_token(_arch(model)) / 1024 == pytest.approx(kib)


def test_kv_cache_fp8_halves_bf16() -> None:
    arch = _arch("deepseek-v3")
    assert kv_cache_bytes_per_token(arch, 1.0) == kv_cache_bytes_per_token(arch) / 2


def test_inline_mla_matches_catalog() -> None:
    inline = InlineArchitecture(
        name="dsv3", layers=61, hidden_size=7168, attention_heads=128, attention="mla",
        head_dim=128, q_lora_rank=1536, kv_lora_rank=512, qk_rope_head_dim=64, v_head_dim=128,
        ffn_hidden_size=2048, mlp="swiglu", vocab_size=129280, experts=256, top_k=8,
        shared_experts=1, dense_ffn_hidden_size=18432, first_k_dense_layers=3,
    )
    arch = from_inline(inline)
    assert total_params(arch) == 671_026_404_352
    assert kv_cache_bytes_per_token(arch) == 61 * 576 * 2


def test_inline_mla_needs_its_ranks() -> None:
    with pytest.raises(ValueError, match="kv_lora_rank"):
        InlineArchitecture(name="x", layers=2, hidden_size=64, attention_heads=4,
                           attention="mla", vocab_size=10)
