"""MoE training memory by hand: Megatron's output-discarding recompute of the norms and the
experts' activation (``--recompute-modules layernorm moe_act``) and NeMo AutoModel's bf16
Adam state; and the published MoE layouts that ran fit in 80 GB."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.calibration import load_cases, predict
from benchmarks.stacks import recompute_modules_of, stack_of
from generator.catalog.load import default_catalog
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.job import Job, Layout
from generator.sizing.training.memory import (
    discarded_bytes,
    layer_activation_bytes,
    stage_params,
    state_bytes,
)

CATALOG = default_catalog()
EFF = default_efficiency()
MIB = 2**20
BOTH = ("layernorm", "moe_act")


def job(model: str = "mixtral-8x7b", framework: str = "megatron",
        modules: tuple[str, ...] = ()) -> Job:
    return Job(name="m", arch=from_catalog(CATALOG.models[model]), kind="pretrain",
               precision="bf16", framework=framework, global_batch=256, seq_len=4096,
               steps=100, recompute_modules=modules)


def lay(tp: int = 2, ep: int = 8) -> Layout:
    return Layout(tp=tp, pp=1, dp=8, cp=1, vp=1, mbs=1, recompute="none", ep=ep, etp=1)


def saved(j: Job, layout: Layout) -> float:
    """Bytes one layer's stored activations shrink by under the job's recompute modules."""
    return (layer_activation_bytes(replace(j, recompute_modules=()), layout, EFF)
            - layer_activation_bytes(j, layout, EFF))


def test_discarded_bytes_per_token_by_hand() -> None:
    """Mixtral 8x7B (h 4096, k 2, expert f 14336): the pre-MLP norm's bf16 output is
    2 x 4096 = 8192 bytes a token, the experts' activation outputs 2 x 2 x 14336 = 57344."""
    assert discarded_bytes(job(modules=BOTH)) == (8192.0, 57344.0)
    assert discarded_bytes(job(modules=("moe_act",))) == (0.0, 57344.0)
    assert discarded_bytes(job()) == (0.0, 0.0)


def test_sequence_parallel_layer_saves_both_split_over_tp() -> None:
    """Megatron (sequence parallel), TP2, one 4096-token micro-batch: 4096 x (8192 + 57344)
    / 2 = 128 MiB a layer; the norm alone 16 MiB, the activation alone 112 MiB."""
    assert saved(job(modules=BOTH), lay()) == 128 * MIB
    assert saved(job(modules=("layernorm",)), lay()) == 16 * MIB
    assert saved(job(modules=("moe_act",)), lay()) == 112 * MIB


def test_without_sequence_parallel_the_norm_output_is_replicated() -> None:
    """FSDP (no sequence parallelism), TP2: the norm's output is on every TP rank, the
    experts' share is split: 4096 x (8192 + 57344 / 2) = 144 MiB."""
    assert saved(job(framework="fsdp", modules=BOTH), lay()) == 144 * MIB


def test_dense_layers_save_nothing() -> None:
    """A dense model's norms are fused into TE's LayerNormLinear (their output is kept
    for the GEMM's backward) and it has no expert activation: nothing changes."""
    dense = job(model="llama3-8b", modules=BOTH)
    assert discarded_bytes(dense) == (0.0, 0.0)
    assert saved(dense, lay(ep=1)) == 0.0


def test_automodel_adam_state_is_bf16_by_hand() -> None:
    """Qwen3 30B-A3B on 8 GPUs, FSDP2 FULL_SHARD: the user-facing fsdp stack counts
    fp32 master + m + v = 12 bytes per parameter over 8 ranks; NeMo AutoModel's bf16
    resident parameters with torch Adam keep bf16 m and v only, 4 bytes: a third."""
    layout = Layout(tp=1, pp=1, dp=8, cp=1, vp=1, mbs=4, recompute="full", ep=8, etp=1)
    psi = stage_params(job("qwen3-30b-a3b"), 1, 1)
    fsdp, auto = EFF.framework("fsdp"), EFF.framework("automodel")
    assert (fsdp.optimizer_bytes, auto.optimizer_bytes) == (12.0, 4.0)
    j = job("qwen3-30b-a3b", framework="automodel")
    weights, grads, optim = state_bytes(j, layout, auto, EFF)
    assert optim == pytest.approx(4.0 * psi / 8)
    ref = state_bytes(replace(j, framework="fsdp"), layout, fsdp, EFF)
    assert (weights, grads) == ref[:2]
    assert optim == pytest.approx(ref[2] / 3)


def test_rows_map_to_the_stated_features() -> None:
    """The ModelZoo rows' "norm/act recompute" and AutoModel's framework column."""
    row = {"method": "pretrain MoE EP=32 ETP=1 dispatcher=deepep norm/act recompute",
           "work": "", "framework": "Megatron-Core (moe_dev f3e6c5; DeepEP dispatcher)"}
    assert recompute_modules_of(row) == BOTH
    assert recompute_modules_of({**row, "method": "pretrain MoE EP=8"}) == ()
    assert stack_of({"framework": "NeMo AutoModel (PyTorch FSDP2; TE + DeepEP)"}) == "automodel"
    assert stack_of({"framework": "PyTorch FSDP"}) == "fsdp"


def test_automodel_attention_backend_follows_its_config() -> None:
    """AutoModel's ``attn: te`` runs TE's DotProductAttention, which prefers cuDNN's fused
    kernel on Hopper (``get_attention_backend``); ``attn: flex`` (GPT-OSS's sink attention)
    runs PyTorch FlexAttention, counted like FlashAttention 2."""
    te = stack_of({"framework": "NeMo AutoModel (PyTorch FSDP2; TE + DeepEP)"})
    flex = stack_of({"framework": "NeMo AutoModel (PyTorch FSDP2; TE + DeepEP + FlexAttn)"})
    assert (te, flex) == ("automodel", "automodel-flex")
    assert EFF.framework(te).attention_kernel == "fused"
    assert EFF.framework(flex).attention_kernel == "fa2"
    assert EFF.framework(flex).optimizer_bytes == 4.0


@pytest.mark.parametrize("row", ["M19", "M20", "M25"])
def test_published_moe_layouts_that_ran_fit(row: str) -> None:
    """Kimi K2 (256 H100, AutoModel), Qwen3 30B-A3B (8 H100, AutoModel) and Qwen3
    235B-A22B (256 H100, ModelZoo TP2 EP32 PP8 VP4) ran on 80 GB GPUs: they must fit."""
    case = next(c for c in load_cases(EFF) if c.id == row)
    assert predict(case, EFF).fits
