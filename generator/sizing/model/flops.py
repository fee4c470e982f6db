"""Training FLOPs per token, model vs hardware, and MFU (sizing-models.md §9.2).

Attention convention: **κ = 12, non-causal** — FLOPs/token = 6*(P_nonemb + V*h) + 12*L*s*(a*d_h).
That is the convention of Megatron-LM 2021, MosaicML's MFU and NeMo <= 24.x; with it the
formula reproduces NeMo 24.09's "model TFLOP/s/GPU ÷ tokens/s/GPU" to 0.1 % (Llama-2-7B at
s=4096: 46.1 GFLOP/token). Megatron-Core >= 2025 counts causal attention (κ = 6); numbers
computed here are therefore up to a few % higher than theirs for long sequences.

PEFT (LoRA, P-tuning): the base is frozen, so no weight-gradient GEMMs run: 4 instead of 6
per base weight, while the attention core (which has no weights) keeps its full backward;
LoRA adapters train normally (6 per adapter weight). P-tuning's prompt encoder runs once per
sample on a handful of virtual tokens and is ignored; its virtual tokens lengthen s instead.

Hardware FLOPs add recomputation: full recompute repeats every layer's forward (2 per block
weight + the attention forward, κ/3); selective recompute repeats only the attention core.
MFU = model FLOPs/s per GPU ÷ the GPU's dense peak at the workload's precision; recompute
never counts toward MFU (it is HFU's business).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from generator.sizing.model.arch import Architecture
from generator.sizing.model.params import non_embedding_params, routed_active_params

KAPPA = 12.0
"""Attention-core FLOPs per token per layer per unit (s * a * d_h), forward + backward."""

FROZEN_KINDS = frozenset({"lora", "ptuning"})


@dataclass(frozen=True, slots=True)
class TokenFlops:
    """FLOPs per processed token, split by the kind of math that does them.

    ``gemm`` runs on tensor cores at the workload precision (fp8 speeds it up); ``attention``
    is the attention core (softmax(QK^T)V), which frameworks keep in bf16; ``expert`` is the
    routed experts' grouped GEMMs of an MoE model (top-k of them per token, padded to the
    capacity factor), timed apart because each expert sees only a slice of the tokens.
    """

    gemm: float
    attention: float
    expert: float = 0.0

    @property
    def total(self) -> float:
        return self.gemm + self.attention + self.expert


@cache
def linear_params(arch: Architecture) -> float:
    """Weights a token multiplies against: active block weights plus the logits layer."""
    return float(non_embedding_params(arch, active=True) + arch.vocab * arch.hidden)


def attention_flops(arch: Architecture, seq: float, kappa: float = KAPPA) -> float:
    """κ * L * s * (a * d_h): the attention core per token, forward and backward; a
    sliding-window layer attends min(w, s) keys instead of s (``attended_tokens``)."""
    return kappa * arch.attended_tokens(seq) * arch.attention_width


def model_flops(
    arch: Architecture, kind: str, seq: float, adapter_params: float = 0.0,
    capacity_factor: float = 1.0,
) -> TokenFlops:
    """Model FLOPs per token (the MFU numerator with the default capacity factor of 1: an
    MoE model's FLOPs count the top-k experts, as Megatron's and NeMo's TFLOP/s do)."""
    per_weight = 4.0 if kind in FROZEN_KINDS else 6.0
    routed = float(routed_active_params(arch))
    gemm = per_weight * (linear_params(arch) - routed) + 6.0 * adapter_params
    return TokenFlops(gemm=gemm, attention=attention_flops(arch, seq),
                      expert=per_weight * routed * capacity_factor)


@cache
def hardware_flops(
    arch: Architecture, kind: str, seq: float, recompute: str, adapter_params: float = 0.0,
    fraction: float = 1.0, capacity_factor: float = 1.0,
) -> TokenFlops:
    """Model FLOPs plus what recomputation repeats (Korthikanti et al. 2022); ``fraction``
    of the layers for a partial full recompute (Megatron's ``recompute_num_layers``); an
    MoE model's experts run padded to ``capacity_factor``."""
    base = model_flops(arch, kind, seq, adapter_params, capacity_factor)
    attention_forward = attention_flops(arch, seq) / 3.0
    if recompute == "full":
        routed = float(routed_active_params(arch))
        block_forward = 2.0 * (non_embedding_params(arch, active=True) - routed + adapter_params)
        expert_forward = 2.0 * routed * capacity_factor
        return TokenFlops(base.gemm + fraction * block_forward,
                          base.attention + fraction * attention_forward,
                          base.expert + fraction * expert_forward)
    if recompute == "selective":
        return TokenFlops(base.gemm, base.attention + attention_forward, base.expert)
    return base


def gpt_iteration_flops(batch: float, seq: float, layers: int, hidden: int, vocab: int) -> float:
    """Narayanan/Korthikanti closed form: 72*B*s*L*h^2*(1 + s/(6h) + V/(12*L*h)).

    Equal to ``model_flops(...).total * B * s`` for a GELU model with f = 4h, a*d_h = h and
    no GQA, up to the norm weights; kept for tests and for quoting papers.
    """
    return 72.0 * batch * seq * layers * hidden**2 * (
        1 + seq / (6 * hidden) + vocab / (12 * layers * hidden)
    )


def mfu(model_flops_per_token: float, tokens_per_s_per_gpu: float, peak_flops: float) -> float:
    """Model FLOPs utilisation: achieved model FLOP/s per GPU over dense peak."""
    return model_flops_per_token * tokens_per_s_per_gpu / peak_flops
