"""MoE training: all-to-all volume and time by hand, memory never grows with ep, the planner
chooses expert parallelism for MoE models, and ep pins are checked like the other pins."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.stacks import stack_of
from generator import pipeline
from generator.catalog.load import default_catalog
from generator.errors import PodplanError, Problem
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.collectives import all_to_all, intra_node_bw, rail_bw
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu, node_from_server
from generator.sizing.model.job import Job, Layout
from generator.sizing.training import comm
from generator.sizing.training.layouts import Pins
from generator.sizing.training.memory import training_memory
from generator.sizing.training.planner import search_size
from generator.sizing.training.steptime import (
    busy_time,
    compute_time,
    launch_time,
    moe_launch_time,
    moe_sync_time,
)

CATALOG = default_catalog()
EFF = default_efficiency()
GPU = CATALOG.gpus["h100-sxm-80gb"]
DEVICE = device_from_gpu(GPU)
PP4_EP8 = Layout(tp=1, pp=4, dp=16, cp=1, vp=1, mbs=1, recompute="none", ep=8, etp=1)
NODE = node_from_server(CATALOG.servers["xe9680"], GPU)


def job(model: str = "mixtral-8x7b", framework: str = "megatron", gbs: int = 256) -> Job:
    return Job(name="m", arch=from_catalog(CATALOG.models[model]), kind="pretrain",
               precision="bf16", framework=framework, global_batch=gbs, seq_len=4096,
               steps=100)


def test_all_to_all_bytes_per_rank_by_hand() -> None:
    """Mixtral 8x7B, one 4096-token sequence on TP1: 4096 tokens x k=2 x h=4096 x 2 bytes
    = 64 MiB per dispatch; TP2 with sequence parallelism halves the tokens per rank."""
    lay = Layout(tp=1, pp=1, dp=8, cp=1, vp=1, mbs=1, recompute="none", ep=8, etp=1)
    assert comm.a2a_bytes(job(), lay) == 4096 * 2 * 4096 * 2 == 64 * 2**20
    assert comm.a2a_bytes(job(), lay._replace(tp=2)) == 32 * 2**20


def test_all_to_all_time_inside_and_across_nodes() -> None:
    """EP8 in a node: 7/8 of the buffer over NVLink. EP16 over two nodes: 7/16 over NVLink,
    8/16 over the GPU's rail, concurrently (the slower one counts), plus one hop."""
    size = 64 * 2**20
    hop = EFF.network.hop_latency_s
    nvl = intra_node_bw(8, NODE, DEVICE, EFF)
    assert all_to_all(size, 8, 1, NODE, DEVICE, EFF) == pytest.approx(7 / 8 * size / nvl + hop)
    rail = rail_bw(NODE, EFF)
    expected = max(7 / 16 * size / nvl, 8 / 16 * size / rail) + hop
    assert all_to_all(size, 16, 1, NODE, DEVICE, EFF) == pytest.approx(expected)
    assert all_to_all(size, 1, 1, NODE, DEVICE, EFF) == 0.0


def test_ep_time_counts_four_all_to_alls_per_moe_layer() -> None:
    lay = PP4_EP8
    one = all_to_all(comm.a2a_bytes(job(), lay), 8, 1, NODE, DEVICE, EFF)
    assert comm.ep_time(job(), lay, NODE, DEVICE, EFF) == pytest.approx(4 * 8 * one)
    assert comm.ep_time(job(), lay._replace(ep=1, etp=0), NODE, DEVICE, EFF) == 0.0


def test_moe_post_sync_cpu_time_adds_to_the_gpu_time_by_hand() -> None:
    """Megatron's token dispatcher copies the tokens per expert to the host and syncs, so
    the CPU cannot run ahead across an MoE layer: its post-sync CPU time adds. Mixtral
    (32 layers, all MoE) on PP4 is 8 MoE layers a stage: at 5 ms a layer, 40 ms on top of
    max(GPU, launch); full recompute repeats the forward's kernels (x 4/3)."""
    eff = replace(EFF, compute=replace(EFF.compute, moe_layer_overhead_s=0.005))
    lay = PP4_EP8
    j = job()
    assert moe_sync_time(j, lay, eff) == pytest.approx(0.040)
    gpu, launch = compute_time(j, lay, DEVICE, eff), launch_time(j, lay, eff)
    assert launch == pytest.approx(8 * EFF.compute.layer_overhead_s)
    assert busy_time(j, lay, DEVICE, eff) == pytest.approx(max(gpu, launch) + 0.040)
    full = lay._replace(recompute="full")
    assert moe_sync_time(j, full, eff) == pytest.approx(0.040 * 4 / 3)
    dense = Job(name="d", arch=from_catalog(CATALOG.models["llama3-8b"]), kind="pretrain",
                precision="bf16", framework="megatron", global_batch=256, seq_len=4096,
                steps=1)
    assert moe_sync_time(dense, lay._replace(ep=1), eff) == 0.0


def test_post_sync_kernel_issue_overlaps_the_gpu() -> None:
    """The CPU time after the sync splits in two: the serial part (sizing buffers from the
    host counts before the first kernel) adds; issuing the kernels the GPU then runs as they
    arrive (moe_layer_launch_s) only shows where the CPU is slower than the GPU. Mixtral on
    PP4 (8 MoE layers a stage, GPU ~0.14 s per micro-batch): at 2 ms a layer, 16 ms + 2.4 ms
    of launches hide behind the GPU; at 50 ms a layer the CPU's 0.4024 s sets the pace. The
    sync-free stack pays neither."""
    lay = PP4_EP8
    j = job()
    for launch, expect_cpu in ((0.002, False), (0.05, True)):
        eff = replace(EFF, compute=replace(EFF.compute, moe_layer_overhead_s=0.005,
                                           moe_layer_launch_s=launch,
                                           layer_overhead_s=3e-4))
        assert moe_launch_time(j, lay, eff) == pytest.approx(8 * launch)
        gpu, cpu = compute_time(j, lay, DEVICE, eff), 8 * 3e-4 + 8 * launch
        assert (cpu > gpu) is expect_cpu
        assert busy_time(j, lay, DEVICE, eff) == pytest.approx(max(gpu, cpu) + 0.040)
        free = job(framework="megatron-sync-free-moe")
        assert moe_launch_time(free, lay, eff) == 0.0
        free_gpu = compute_time(free, lay, DEVICE, eff)
        assert busy_time(free, lay, DEVICE, eff) == pytest.approx(max(free_gpu, 8 * 3e-4))


def test_sync_free_dispatch_pays_no_host_sync() -> None:
    """Megatron-Core's sync-free MoE mode (HybridEP buffers pre-sized by
    moe_expert_rank_capacity_factor, the MLPerf v6.0 GPT-OSS runs) never copies token counts
    to the host: the same Mixtral stage costs max(GPU, launch) with no 8 x 5 ms on top, and
    nothing else about the stack changes."""
    eff = replace(EFF, compute=replace(EFF.compute, moe_layer_overhead_s=0.005))
    lay = PP4_EP8
    free = job(framework="megatron-sync-free-moe")
    assert eff.framework("nemo").moe_host_sync
    assert not eff.framework("megatron-sync-free-moe").moe_host_sync
    assert moe_sync_time(job(framework="nemo"), lay, eff) == pytest.approx(0.040)
    assert moe_sync_time(free, lay, eff) == 0.0
    gpu, launch = compute_time(free, lay, DEVICE, eff), launch_time(free, lay, eff)
    assert busy_time(free, lay, DEVICE, eff) == pytest.approx(max(gpu, launch))
    assert compute_time(job(framework="nemo"), lay, DEVICE, eff) == pytest.approx(gpu)
    row = {"framework": "Megatron-Bridge / Megatron-Core (MLPerf NVIDIA NeMo reference "
                        "implementation; sync-free MoE dispatch: HybridEP with "
                        "MOE_EXPERT_RANK_CAPACITY_FACTOR=5)"}
    assert stack_of(row) == "megatron-sync-free-moe"
    assert stack_of({"framework": "Megatron-Bridge / Megatron-Core, NeMo 26.04.01"}) == "nemo"


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["mixtral-8x7b", "mixtral-8x22b", "qwen3-30b-a3b",
                              "deepseek-v3"]),
       framework=st.sampled_from(["megatron", "fsdp"]),
       tp=st.sampled_from([1, 2]), pp=st.sampled_from([1, 2, 4]),
       dp=st.sampled_from([8, 16, 64]), etp=st.sampled_from([0, 1]))
def test_memory_per_gpu_never_grows_with_ep(
    model: str, framework: str, tp: int, pp: int, dp: int, etp: int
) -> None:
    j = job(model, framework, gbs=1024)
    base = Layout(tp=tp, pp=pp, dp=dp, cp=1, vp=1, mbs=1, recompute="full")
    previous = None
    for ep in (1, 2, 4, 8):
        if j.arch.experts % ep or dp % ep:
            continue
        lay = base._replace(ep=ep, etp=etp if ep > 1 else 0)
        total = training_memory(j, lay, EFF).total
        if previous is not None:
            assert total <= previous * (1 + 1e-12)
        previous = total


def test_planner_picks_expert_parallelism_for_moe() -> None:
    res = search_size(job("mixtral-8x22b"), 64, DEVICE, NODE, EFF, Pins())
    assert res.best is not None and res.best.layout.ep > 1


def test_dense_models_get_no_expert_parallelism() -> None:
    res = search_size(job("llama2-70b"), 64, DEVICE, NODE, EFF, Pins())
    assert res.best is not None and res.best.layout.ep == 1


TRAIN = {"name": "t", "kind": "pretrain", "model": "mixtral-8x7b", "steps": 10}


def problems(tmp_path: Path, workload: dict[str, Any], **hardware: Any) -> list[Problem]:
    doc = {"name": "p", "workloads": [workload], "hardware": hardware}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    with pytest.raises(PodplanError) as err:
        pipeline.load_checked(str(path))
    return err.value.problems


def test_ep_not_dividing_the_experts_is_located_with_a_suggestion(tmp_path: Path) -> None:
    (p,) = problems(tmp_path, {**TRAIN, "parallelism": {"ep": 6}})
    assert p.path == "workloads[0].parallelism.ep" and p.line is not None
    assert "8 experts" in p.message and p.allowed == "1, 2, 4, 8"
    assert p.hint == "did you mean ep: 4?"


def test_ep_on_a_dense_model(tmp_path: Path) -> None:
    (p,) = problems(tmp_path, {**TRAIN, "model": "llama2-70b", "parallelism": {"ep": 8}})
    assert p.path == "workloads[0].parallelism.ep" and "dense" in p.message


def test_ep_not_dividing_the_stage_ranks(tmp_path: Path) -> None:
    (p,) = problems(tmp_path, {**TRAIN, "parallelism": {"tp": 1, "dp": 4, "ep": 8}}, gpus=32)
    assert "does not divide the 4 ranks" in p.message


def test_ep_on_a_stack_without_it(tmp_path: Path) -> None:
    (p,) = problems(tmp_path, {**TRAIN, "framework": "hf", "parallelism": {"ep": 8}})
    assert "does not run expert parallelism" in p.message
