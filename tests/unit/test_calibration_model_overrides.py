"""Calibration rows whose benchmark changed the published model (calibration_setup.yaml
``model_overrides``), by hand: MLPerf Training v6.0's GPT-OSS 20B (M30, M31) runs the Llama 3
vocabulary, 128,256 tokens, where the released model has 201,088 (its pretrain.py:
``GPTModelProvider(vocab_size=128256, ...)``); every other GPT-OSS 20B row keeps 201,088."""

from __future__ import annotations

from benchmarks.calibration import load_rows, row_architecture
from generator.catalog.load import default_catalog
from generator.sizing.model.flops import model_flops
from generator.sizing.model.params import total_params

CATALOG = default_catalog()
ROWS = {row["id"]: row for row in load_rows()}


def test_mlperf_rows_run_the_llama3_vocabulary() -> None:
    assert row_architecture(ROWS["M30"], CATALOG).vocab == 128_256
    assert row_architecture(ROWS["M31"], CATALOG).vocab == 128_256
    assert row_architecture(ROWS["M21"], CATALOG).vocab == 201_088


def test_the_smaller_vocabulary_changes_only_the_embedding_and_the_logits() -> None:
    """Untied embeddings, h = 2,880: 2 x (201,088 - 128,256) x 2,880 = 419,512,320 fewer
    parameters, and the logits GEMM 6 x 72,832 x 2,880 = 1,258,536,960 fewer training FLOPs
    per token (the input embedding is a lookup); the attention core and experts unchanged."""
    released = row_architecture(ROWS["M21"], CATALOG)
    mlperf = row_architecture(ROWS["M30"], CATALOG)
    assert total_params(released) - total_params(mlperf) == 419_512_320
    full, small = model_flops(released, "pretrain", 8192), model_flops(mlperf, "pretrain", 8192)
    assert full.gemm - small.gemm == 1_258_536_960
    assert (full.attention, full.expert) == (small.attention, small.expert)
