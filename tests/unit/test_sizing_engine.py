"""``size(spec, catalog)`` end to end: cluster arithmetic, fixed sizes, infeasible workloads,
the JSON contract and the text report."""

from __future__ import annotations

from typing import Any

import pytest

from generator.catalog.load import default_catalog
from generator.sizing import format_table, size
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

CATALOG = default_catalog()


def spec(*workloads: dict[str, Any], **hardware: Any) -> Spec:
    return Spec.model_validate(
        {
            "name": "t",
            "workloads": list(workloads),
            "hardware": {"server": "xe9680", "gpu": "h100-sxm-80gb", **hardware},
        }
    )


PRETRAIN = {
    "name": "pre",
    "kind": "pretrain",
    "model": "llama2-7b",
    "steps": 1000,
    "deadline_hours": 10,
}
SFT70 = {"name": "sft", "kind": "sft", "model": "llama2-70b", "steps": 100}
CHAT = {
    "name": "chat",
    "kind": "inference",
    "model": "llama3.1-8b",
    "input_tokens": 500,
    "output_tokens": 500,
    "requests_per_minute": 1200,
    "tpot_ms": 40,
}


def test_training_max_inference_sum() -> None:
    r = size(spec(PRETRAIN, SFT70, CHAT), CATALOG)
    assert r.order == ["pre", "sft", "chat"]
    assert [w.name for w in r.workloads] == r.order
    need = max(t.gpus for t in r.training) + sum(i.gpus for i in r.inference)
    assert r.gpus == r.nodes * 8 >= need > r.gpus - 8
    assert r.fits


def test_deadline_is_met_on_fewest_nodes() -> None:
    t = size(spec(PRETRAIN), CATALOG).training[0]
    assert t.meets_deadline is True and t.time_hours <= 10
    assert t.gpus % 8 == 0


def test_fixed_gpus_is_the_cluster() -> None:
    r = size(spec(PRETRAIN, CHAT, gpus=16), CATALOG)
    assert r.gpus == 16 and r.nodes == 2
    assert r.training[0].gpus == 16


def test_infeasible_returns_fits_false_with_reasons() -> None:
    """70B SFT with hardware.gpus: 4 is an answer, not an exception."""
    r = size(spec(SFT70, gpus=4), CATALOG)
    t = r.training[0]
    assert not t.fits and not r.fits
    text = " ".join(t.notes)
    assert "does not fit on 4 GPUs" in text
    assert "optimizer states" in text or "weights" in text
    assert "would fit on" in text


def test_pinned_layout_sets_the_size() -> None:
    w = {**SFT70, "parallelism": {"tp": 8, "pp": 2, "dp": 1}}
    t = size(spec(w), CATALOG).training[0]
    assert (t.parallelism.tp, t.parallelism.pp, t.parallelism.dp, t.gpus) == (8, 2, 1, 16)


def test_unpacked_dataset_counts_processed_tokens() -> None:
    w = {
        "name": "ft",
        "kind": "lora",
        "model": "llama2-7b",
        "global_batch_size": 128,
        "micro_batch_size": 1,
        "dataset": {"samples": 12012, "avg_tokens_per_sample": 114.5, "epochs": 2},
    }
    t = size(spec(w, gpus=8), CATALOG).training[0]
    assert t.steps == 188  # ceil(12012 * 2 / 128)
    assert t.processed_tokens == pytest.approx(188 * 128 * 114.5)


def test_json_contract_and_table() -> None:
    r = size(spec(PRETRAIN, CHAT), CATALOG)
    doc = r.to_json()
    assert {"name", "nodes", "gpus", "workloads"} <= set(doc)
    assert {"parallelism", "mfu", "meets_deadline"} <= set(doc["workloads"][0])
    assert SizingResult.model_validate(r.model_dump()) == r
    text = format_table(r)
    for needle in ("pre", "chat", "seed rule", "MFU", "GPU-h", "TPOT"):
        assert needle in text


def test_seed_shown_beside() -> None:
    t = size(spec(PRETRAIN), CATALOG).training[0]
    assert t.seed is not None and t.seed.gpus and t.seed.hours
