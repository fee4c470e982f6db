"""Bytes of KV cache one token occupies, for every attention variant the catalog has.

* **MHA / GQA** keep a key and a value vector per KV head per layer:
  2 * L * g * d_h values (Llama-2-70B: 2 * 80 * 8 * 128 = 160 Ki values, 320 KiB in bf16).
* **MLA** (DeepSeek-V2/V3, Kimi K2) caches one compressed latent per layer instead, shared
  by every head: kv_lora_rank + the rotary key part, (512 + 64) = 576 values per layer for
  DeepSeek-V3, 61 * 576 * 2 bytes = 68.6 KiB per token in bf16. That is what the MLA
  kernels of vLLM, SGLang and TensorRT-LLM store (the up-projections are absorbed into the
  query and output GEMMs), not 2 * a * d_h.

``dtype_bytes`` is the cache's element size (2 for bf16/fp16, 1 for an fp8 KV cache).
Sliding-window layers (GPT-OSS, Llama 4's chunked attention) are counted as full layers:
an upper bound, stated here rather than hidden.
"""

from __future__ import annotations

from generator.sizing.model.arch import Architecture


def kv_values_per_token_per_layer(arch: Architecture) -> int:
    """Cached elements per token in one layer: 2*g*d_h (GQA/MHA) or r_kv + d_rope (MLA)."""
    if arch.mla:
        return arch.kv_lora_rank + arch.qk_rope_dim
    return 2 * arch.kv_heads * arch.head_dim


def kv_cache_bytes_per_token(arch: Architecture, dtype_bytes: float = 2.0) -> float:
    """KV-cache bytes one token holds across every layer of the model."""
    return arch.layers * kv_values_per_token_per_layer(arch) * dtype_bytes
