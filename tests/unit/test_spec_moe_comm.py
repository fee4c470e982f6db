"""The spec's MoE dispatcher and all-to-all overlap (``parallelism.moe_dispatcher``,
``parallelism.ep_comm_overlap``): what each framework accepts, located refusals, the schema,
and what the setting does to a step, worked by hand."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import cli, pipeline
from generator.catalog.load import default_catalog
from generator.errors import PodplanError, Problem
from generator.sizing import size
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.collectives import intra_node_bw
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu, node_from_server
from generator.sizing.model.job import Layout
from generator.sizing.report import format_table
from generator.sizing.result import TrainingEstimate
from generator.sizing.training import comm
from generator.sizing.training.estimate import training_job
from generator.spec.models import Spec

CATALOG = default_catalog()
EFF = default_efficiency()
DEVICE = device_from_gpu(CATALOG.gpus["h100-sxm-80gb"])
NODE = node_from_server(CATALOG.servers["xe9680"], CATALOG.gpus["h100-sxm-80gb"])
QWEN = {"name": "t", "kind": "pretrain", "model": "qwen3-30b-a3b", "framework": "megatron",
        "global_batch_size": 64, "micro_batch_size": 1, "steps": 10}
EP8 = {"tp": 1, "pp": 1, "dp": 8, "ep": 8, "etp": 1, "recompute": "none"}
HW = {"server": "xe9680", "gpu": "h100-sxm-80gb", "gpus": 8}


def write(tmp_path: Path, workload: dict[str, Any]) -> str:
    doc = {"name": "p", "workloads": [workload], "hardware": HW}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return str(path)


def only(tmp_path: Path, workload: dict[str, Any]) -> Problem:
    with pytest.raises(PodplanError) as err:
        pipeline.load_checked(write(tmp_path, workload))
    assert len(err.value.problems) == 1, err.value.problems
    found = err.value.problems[0]
    assert found.line is not None
    return found


def estimate(tmp_path: Path, workload: dict[str, Any]) -> TrainingEstimate:
    est = size(pipeline.load_checked(write(tmp_path, workload)).spec, CATALOG).workloads[0]
    assert isinstance(est, TrainingEstimate)
    return est


def with_pins(**pins: Any) -> dict[str, Any]:
    return {**QWEN, "parallelism": {**EP8, **pins}}


def test_every_framework_accepts_what_it_runs(tmp_path: Path) -> None:
    for framework, dispatcher in (("nemo", "hybridep"), ("megatron", "deepep"),
                                  ("fsdp", "deepep"), ("deepspeed", "alltoall")):
        w = {**QWEN, "framework": framework,
             "parallelism": {"moe_dispatcher": dispatcher, "ep": 8}}
        pipeline.load_checked(write(tmp_path, w))
    pipeline.load_checked(write(tmp_path, with_pins(ep_comm_overlap=True)))


def test_a_misspelled_dispatcher_gets_the_allowed_values(tmp_path: Path) -> None:
    p = only(tmp_path, with_pins(moe_dispatcher="deep-ep"))
    assert p.path == "workloads[0].parallelism.moe_dispatcher"
    assert p.allowed == "alltoall, deepep, hybridep"
    assert p.hint == "did you mean 'deepep'?"


def test_frameworks_refuse_what_they_do_not_run(tmp_path: Path) -> None:
    p = only(tmp_path, {**QWEN, "framework": "deepspeed",
                        "parallelism": {"moe_dispatcher": "deepep"}})
    assert p.path == "workloads[0].parallelism.moe_dispatcher"
    assert p.message == "framework 'deepspeed' does not run the deepep dispatcher"
    assert p.allowed == "alltoall"
    p = only(tmp_path, {**QWEN, "framework": "hf", "parallelism": {"moe_dispatcher": "alltoall"}})
    assert p.message == ("framework 'hf' does not run the alltoall dispatcher "
                         "(it has no expert parallelism)")
    assert p.allowed == "leave it out"
    p = only(tmp_path, {**QWEN, "framework": "fsdp", "parallelism": {"ep_comm_overlap": True}})
    assert p.path == "workloads[0].parallelism.ep_comm_overlap"
    assert p.message == "framework 'fsdp' does not overlap the EP all-to-all with compute"
    assert p.allowed == "false"


def test_overlap_pins_megatron_core_refuses(tmp_path: Path) -> None:
    """transformer_config.py: overlap_moe_expert_parallel_comm needs ep > 1, no full
    recompute, and virtual stages under pipeline parallelism."""
    p = only(tmp_path, with_pins(ep_comm_overlap=True, recompute="full"))
    assert p.message == ("Megatron-Core refuses overlap_moe_expert_parallel_comm with "
                         "recompute: full")
    w = {**QWEN, "parallelism": {"pp": 2, "vp": 1, "ep": 1, "ep_comm_overlap": True}}
    p = only(tmp_path, w)
    assert p.message == ("Megatron-Core refuses overlap_moe_expert_parallel_comm with ep: 1 "
                         "(it needs expert parallelism) and pp: 2 with vp: 1 (it needs "
                         "virtual pipeline stages)")
    assert p.allowed == "false, or ep > 1, recompute none | selective, vp > 1 with pp > 1"


def test_dense_models_have_no_dispatcher(tmp_path: Path) -> None:
    w = {**QWEN, "model": "llama3.1-8b",
         "parallelism": {"moe_dispatcher": "deepep", "ep_comm_overlap": False}}
    with pytest.raises(PodplanError) as err:
        pipeline.load_checked(write(tmp_path, w))
    assert [(p.path, p.message) for p in err.value.problems] == [
        ("workloads[0].parallelism.moe_dispatcher",
         "moe_dispatcher applies to mixture-of-experts models; this model is dense"),
        ("workloads[0].parallelism.ep_comm_overlap",
         "ep_comm_overlap applies to mixture-of-experts models; this model is dense"),
    ]


def test_the_cli_refuses_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, with_pins(moe_dispatcher="nccl"))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["size", path])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "parallelism.moe_dispatcher" in err and "alltoall, deepep, hybridep" in err


def test_the_schema_lists_the_fields() -> None:
    props = Spec.model_json_schema()["$defs"]["Parallelism"]["properties"]
    assert "overlap_moe_expert_parallel_comm" in props["ep_comm_overlap"]["description"]
    dispatcher = Spec.model_json_schema()["$defs"]["MoeDispatcher"]
    assert dispatcher["enum"] == ["alltoall", "deepep", "hybridep"]
    assert "moe_dispatcher" in props


def test_step_time_difference_by_hand(tmp_path: Path) -> None:
    """Qwen3 30B-A3B (48 MoE layers, 128 experts, top-8, h 2048) on one 8-GPU node, EP8,
    micro-batch 1 of 4096 tokens, 64 sequences: 8 micro-batches a step, 4 exchanges per MoE
    layer (dispatch and combine, forward and backward).
    alltoall: each rank sends 4096 x 8 x 2048 x 2 B, 7/8 of it to the 7 other GPUs.
    deepep: each token once to each GPU it hits, 8 x (1 - C(112,8)/C(128,8)) GPUs on
    average, 7/8 of them other GPUs; overlapped, ``overlap.ep`` of it is exposed."""
    nvlink = intra_node_bw(8, NODE, DEVICE, EFF)
    hop = EFF.network.hop_latency_s
    vector = 4096 * 2048 * 2.0
    alltoall = 7 / 8 * vector * 8 / nvlink + hop
    gpus_hit = 8 * (1 - comb(112, 8) / comb(128, 8))
    deepep = vector * gpus_hit * 7 / 8 / nvlink + hop
    default = estimate(tmp_path, with_pins())
    stated = estimate(tmp_path, with_pins(moe_dispatcher="deepep", ep_comm_overlap=True))
    assert default.step_time_parts_s["ep_communication"] == pytest.approx(8 * 4 * 48 * alltoall)
    assert stated.step_time_parts_s["ep_communication"] == pytest.approx(
        8 * 4 * 48 * deepep * EFF.overlap.ep)
    saved = 8 * 4 * 48 * (alltoall - EFF.overlap.ep * deepep)
    assert default.step_time_s - stated.step_time_s == pytest.approx(saved, rel=1e-6)


def test_the_estimate_says_what_it_assumed(tmp_path: Path) -> None:
    default = estimate(tmp_path, with_pins())
    assert default.moe_dispatch is not None
    assert default.moe_dispatch.text() == "alltoall dispatcher, exposed (framework default)"
    assert ("MoE all-to-all exposed (alltoall dispatcher, no overlap): Megatron-Core's "
            "default; set parallelism.moe_dispatcher: deepep and parallelism.ep_comm_overlap: "
            "true if you run DeepEP with the A2A overlap") in default.notes
    stated = estimate(tmp_path, with_pins(moe_dispatcher="hybridep", ep_comm_overlap=True))
    assert stated.to_json()["moe_dispatch"] == {
        "dispatcher": "hybridep", "ep_comm_overlap": True, "overlapped": True, "stated": True}
    assert not any("all-to-all" in n and "exposed" in n for n in stated.notes)
    result = size(pipeline.load_checked(write(tmp_path, with_pins())).spec, CATALOG)
    assert ("  EP all-to-all         alltoall dispatcher, exposed (framework default)"
            in format_table(result).splitlines())
    dense = estimate(tmp_path, {**QWEN, "model": "llama3.1-8b", "parallelism": {}})
    assert "moe_dispatch" not in json.loads(json.dumps(dense.to_json()))


def test_a_stated_overlap_is_exposed_where_megatron_core_cannot_run_it(tmp_path: Path) -> None:
    """The planner may still try layouts Megatron-Core would refuse the overlap on (full
    recompute; PP without VP): those run the all-to-all exposed."""
    w = pipeline.load_checked(write(tmp_path, {**QWEN, "parallelism": {"ep_comm_overlap": True}}))
    spec_w = w.spec.workloads[0]
    assert spec_w.kind == "pretrain"
    job = training_job(spec_w, from_catalog(CATALOG.models["qwen3-30b-a3b"]), EFF)

    def lay(pp: int, vp: int, recompute: str) -> Layout:
        return Layout(tp=1, pp=pp, dp=8, cp=1, vp=vp, mbs=1, recompute=recompute, ep=8, etp=1)
    assert comm.ep_exposed(job, EFF, lay(1, 1, "none")) == EFF.overlap.ep
    assert comm.ep_exposed(job, EFF, lay(1, 1, "full")) == 1.0
    assert comm.ep_exposed(job, EFF, lay(2, 1, "none")) == 1.0
    assert comm.ep_exposed(job, EFF, lay(2, 2, "selective")) == EFF.overlap.ep
