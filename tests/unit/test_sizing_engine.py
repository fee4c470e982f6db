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


def test_no_silent_gpu_count_change() -> None:
    """12 GPUs, GBS 64, a ZeRO-3 stack without pipelines: no layout uses all 12; the estimate
    says what it planned instead and why."""
    w = {"name": "ft", "kind": "lora", "model": "llama2-7b", "framework": "fsdp",
         "global_batch_size": 64, "steps": 100}
    r = size(spec(w, gpus=12), CATALOG)
    t = r.training[0]
    assert t.gpus == 8 and r.gpus == 12
    assert "no layout uses all 12 GPUs" in t.notes[0] and "planned on 8 of them" in t.notes[0]


def test_json_time_keys_keep_three_significant_figures() -> None:
    """A few-minute LoRA run: time_hours is compute (>= 3 significant figures), the wall-clock
    adds evaluation, checkpoints and failures, and every estimate carries its band."""
    w = {"name": "ft", "kind": "lora", "model": "llama2-7b", "steps": 20,
         "evaluation": {"every_samples": 640, "samples": 256}}
    doc = size(spec(w, gpus=8), CATALOG).to_json()["workloads"][0]
    hours = doc["time_hours"]
    assert 0 < hours < 0.5 and len(f"{hours:.6g}".lstrip("0.").replace(".", "")) >= 3
    parts = doc["time_breakdown_hours"]
    assert set(parts) == {"compute", "evaluation", "checkpoint", "failures"}
    assert parts["compute"] == hours and parts["evaluation"] > 0
    assert doc["wall_clock_hours"] >= hours
    assert set(doc["uncertainty_pct"]) == {"low", "high", "similar_measurements"}
    assert doc["uncertainty_pct"]["low"] < 0 < doc["uncertainty_pct"]["high"]
    assert isinstance(doc["calibrated"], bool)


def test_outside_calibration_says_so() -> None:
    """Nothing calibrates DeepSpeed LoRA on an L40S: calibrated false, with a note."""
    w = {"name": "ft", "kind": "lora", "model": "llama2-7b", "framework": "deepspeed",
         "steps": 10}
    r = size(Spec.model_validate({"name": "t", "workloads": [w], "hardware": {
        "server": "r760xa", "gpu": "l40s-48gb", "gpus": 4}}), CATALOG)
    t = r.training[0]
    assert t.uncertainty is not None and not t.uncertainty.calibrated
    assert any("outside every calibrated regime" in n for n in t.notes)
    assert "outside calibration" in format_table(r)


def test_fp8_on_a100_is_refused_by_the_engine_too() -> None:
    """Callers that skip the spec check (the sweep's GPU variants) still get an error, not a
    silent bf16 run."""
    from generator.errors import PodplanError

    w = {**PRETRAIN, "precision": "fp8"}
    s = Spec.model_validate({"name": "t", "workloads": [w], "hardware": {
        "server": "dgx-a100", "gpu": "a100-sxm-80gb"}})
    with pytest.raises(PodplanError) as err:
        size(s, CATALOG)
    assert err.value.problems[0].path == "workloads.pre.precision"


@pytest.mark.parametrize("engine", ["vllm"])
def test_serving_band_rests_on_the_workloads_engine(engine: str) -> None:
    """Every scored serving measurement is TensorRT-LLM: a vLLM estimate on an H100
    must not borrow their band as "56 similar measurements", nor name the wrong engine."""
    trt = size(spec(CHAT), CATALOG).inference[0]
    assert trt.uncertainty is not None and trt.uncertainty.calibrated
    i = size(spec({**CHAT, "engine": engine}), CATALOG).inference[0]
    assert i.uncertainty is not None and not i.uncertainty.calibrated
    assert (f"outside every calibrated regime: too few published measurements of {engine} "
            "inference on h100-sxm-80gb") in " ".join(i.notes)
    assert "tensorrt-llm" not in " ".join(i.notes)


def test_pinned_vp_without_pp_is_honoured_not_dropped() -> None:
    """``vp: 2`` alone used to size a PP1 VP1 layout: the pin vanished without a word."""
    t = size(spec({**PRETRAIN, "parallelism": {"vp": 2}}), CATALOG).training[0]
    lay = t.parallelism
    assert lay.vp == 2 and lay.pp > 1 and (32 // lay.pp) % 2 == 0


def test_multi_node_tp_replica_is_not_described_as_pipeline_stages() -> None:
    """A pinned TP16 replica on 8-GPU servers is TP across nodes, not 'TP inside a node'."""
    w = {**CHAT, "model": "llama3.1-70b", "parallelism": {"tp": 16}}
    i = size(spec(w), CATALOG).inference[0]
    assert ("one replica spans 2 nodes (TP16 PP1: tensor parallelism across nodes, its "
            "all-reduces over the fabric)") in i.notes
    i = size(spec({**w, "parallelism": {"tp": 8, "pp": 2}}), CATALOG).inference[0]
    assert ("one replica spans 2 nodes (TP8 PP2: TP inside a node, pipeline stages across "
            "nodes)") in i.notes


def test_header_adds_up_when_gpus_are_not_whole_servers() -> None:
    """'1 x xe9680 (8 x h100) = 5 GPUs' does not add up: say what is bought and sized on."""
    r = size(spec(SFT70 | {"model": "llama2-7b"}, gpus=5), CATALOG)
    assert ("cluster: 1 x PowerEdge XE9680 (8 x H100 SXM5 80GB) = 8 GPUs, sized on 5\n"
            in format_table(r))
    r = size(spec(SFT70 | {"model": "llama2-7b"}, gpus=8), CATALOG)
    assert "cluster: 1 x PowerEdge XE9680 (8 x H100 SXM5 80GB) = 8 GPUs\n" in format_table(r)


def test_small_runs_show_their_gpu_hours() -> None:
    """A 10-step run printed '0 GPU-h of compute'; three significant figures like the rest."""
    r = size(spec({**PRETRAIN, "steps": 10, "deadline_hours": None}, gpus=8), CATALOG)
    hours = r.training[0].gpu_hours
    assert 0 < hours < 1
    assert f"; {hours:#.3g} GPU-h of compute\n" in format_table(r)


def test_a_training_framework_on_a_serving_workload_is_named_as_unused() -> None:
    """'framework: nemo' on an inference workload was accepted and silently ignored."""
    i = size(spec({**CHAT, "framework": "nemo"}), CATALOG).inference[0]
    assert ("framework: nemo does not apply to serving; the engine is tensorrt-llm "
            "(engine: tensorrt-llm | vllm)") in i.notes
    assert not any("framework" in n for n in size(spec(CHAT), CATALOG).inference[0].notes)


def test_a_missed_deadline_reads_in_hours_and_says_when_the_size_was_fixed() -> None:
    # 1e12 tokens of an 8B model on a fixed 12 GPUs take thousands of hours: the note gave
    # '2.58e+03 h' and called a single fixed size 'no size meets'; the size table '1e+12'.
    big = {"name": "pre", "kind": "pretrain", "model": "llama3.1-8b", "tokens": 1e12,
           "deadline_hours": 500}
    r = size(spec(big, gpus=12), CATALOG)
    t = r.training[0]
    assert t.meets_deadline is False
    fixed = [n for n in t.notes if "deadline" in n]
    assert fixed == [f"the 500 h deadline is missed on the fixed size: 12 GPUs at "
                     f"{t.time_hours:,.0f} h wall-clock"]
    searched = size(spec({**big, "deadline_hours": 1}), CATALOG).training[0]
    assert any(n.startswith("no size meets the 1 h deadline; the fastest found is ")
               and "e+" not in n for n in searched.notes), searched.notes
    text = format_table(r)
    assert "processed tokens      1.00 T" in text and "e+" not in text
