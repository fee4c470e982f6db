"""Megatron's account-for-embedding/loss pipeline split, by hand (Qwen3 235B-A22B: 94
layers, vocab 151,936, hidden 4,096, untied embeddings), and the ModelZoo row that ran with it
(M26, TP2 PP32 VP3) fitting in 80 GB."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.calibration import load_cases, predict
from benchmarks.stacks import pipeline_split_of
from generator.catalog.load import default_catalog
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.job import Job, Layout
from generator.sizing.training.memory import (
    activation_bytes,
    layer_activation_bytes,
    layers_in_flight,
    rank_layers,
    stage_split,
)

EFF = default_efficiency()
SPLIT = ("embedding", "loss")
QWEN = from_catalog(default_catalog().models["qwen3-235b-a22b"])


def job(split: tuple[str, ...] = SPLIT) -> Job:
    return Job(name="q", arch=QWEN, kind="pretrain", precision="bf16", framework="megatron",
               global_batch=2048, seq_len=4096, steps=10, pipeline_split=split)


def lay(pp: int = 32, vp: int = 3, dp: int = 4) -> Layout:
    return Layout(tp=2, pp=pp, dp=dp, cp=1, vp=vp, mbs=1, recompute="none", ep=8, etp=1)


def test_ranks_count_the_embedding_and_the_loss_as_layers() -> None:
    """94 + 2 = 96 over 32 ranks: 3 each, the first and the last build 2; over 8 ranks 12,
    the ends 11. Without the split every rank is counted at ceil(94/p)."""
    assert rank_layers(job(), 32) == (2, 3, 2)
    assert rank_layers(job(), 8) == (11, 12, 11)
    assert rank_layers(job(("embedding",)), 5) == (18, 19, 19)
    assert rank_layers(job(()), 32) == (3, 3, 3)
    assert rank_layers(job(), 1) == (94, 94, 94)


def test_the_most_loaded_stage_sheds_the_embedding() -> None:
    """PP32: a middle rank's 3 layers outweigh the first rank's 2 + the 151,936 x 4,096
    embedding, so the busiest stage holds 622,329,856 parameters fewer than ceil(94/32) = 3
    layers plus the embedding."""
    with_split, without = stage_split(job(), 32), stage_split(job(()), 32)
    assert with_split[1] == without[1]
    assert without[0] - with_split[0] == 151_936 * 4_096 == 622_329_856


def test_layers_in_flight_chunk_by_chunk() -> None:
    """Interleaved 1F1B, p = 32, v = 3, one layer per chunk, 512 micro-batches. Rank 0 runs
    2*31 + 2*32 + 1 = 127 chunk forwards: chunk 0 (the embedding, no layer) gets 63 of them,
    chunks 1 and 2 get 32 each: 64 layers. Rank 1: 2*30 + 64 + 1 = 125, all on one-layer
    chunks: 125. The last rank: 65 = 32 + 32 + 1 on its loss-only last chunk: 64.
    Non-interleaved PP8 (11, 12, 11 layers): rank 0 holds 8 x 11, rank 1 7 x 12."""
    assert [layers_in_flight(job(), lay(), r, 512) for r in (0, 1, 31)] == [64.0, 125.0, 64.0]
    flat = lay(pp=8, vp=1, dp=16)
    assert [layers_in_flight(job(), flat, r, 128) for r in (0, 1)] == [88.0, 84.0]


def test_activations_are_the_second_ranks() -> None:
    """M26's layout: the peak is rank 1's 125 layer activations (the old count spread
    ceil(94/32) = 3 layers over rank 0's 32 + 31/3 micro-batches: 127)."""
    per_layer = layer_activation_bytes(job(), lay(), EFF)
    assert activation_bytes(job(), lay(), EFF) == pytest.approx(125 * per_layer)
    assert activation_bytes(job(()), lay(), EFF) == pytest.approx(3 * (32 + 31 / 3) * per_layer)


def test_row_states_the_split_and_fits() -> None:
    """The ModelZoo Qwen3 config sets both flags; the method column says so, and M26 (TP2
    PP32 VP3 on 80 GB H100s) now fits; its last rank, which runs the output layer, has a
    layer fewer, so the step is faster than with ceil(94/32) = 3 layers there."""
    assert pipeline_split_of({"method": "pretrain MoE EP=8 embedding/loss in pipeline split"}
                             ) == SPLIT
    assert pipeline_split_of({"method": "pretrain MoE EP=8"}) == ()
    case = next(c for c in load_cases(EFF) if c.id == "M26")
    assert case.job is not None and case.job.pipeline_split == SPLIT
    got = predict(case, EFF)
    plain = predict(replace(case, job=replace(case.job, pipeline_split=())), EFF)
    assert got.fits and not plain.fits
    assert got.value > plain.value
