"""MoE token dispatch by dispatcher (all-to-all vs DeepEP/HybridEP) and EP overlap, by hand."""

from __future__ import annotations

from dataclasses import replace
from math import comb

import pytest

from benchmarks.stacks import ep_overlap_full_of, ep_overlap_of, moe_dispatcher_of
from generator.catalog.load import default_catalog
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.collectives import dedup_all_to_all, intra_node_bw, rail_bw
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu, node_from_server
from generator.sizing.model.job import Job, Layout
from generator.sizing.training import comm
from generator.sizing.training.steptime import microbatch_time

CATALOG = default_catalog()
EFF = default_efficiency()
GPU = CATALOG.gpus["h100-sxm-80gb"]
DEVICE = device_from_gpu(GPU)
NODE = node_from_server(CATALOG.servers["xe9680"], GPU)


def job(model: str = "qwen3-30b-a3b", framework: str = "megatron", **extra: object) -> Job:
    base = Job(name="m", arch=from_catalog(CATALOG.models[model]), kind="pretrain",
               precision="bf16", framework=framework, global_batch=256, seq_len=4096,
               steps=100)
    return replace(base, **extra)  # type: ignore[arg-type]


def ep_layout(ep: int, tp: int = 1) -> Layout:
    return Layout(tp=tp, pp=1, dp=ep // tp, cp=1, vp=1, mbs=1, recompute="none", ep=ep, etp=1)


def test_hit_fraction_by_hand() -> None:
    """128 experts in 2 groups of 64, top-8: a group is missed only if all 8 experts come
    from the other half, C(64,8)/C(128,8); one group is always hit; top-1 over 4 groups
    hits a given group a quarter of the time."""
    assert comm.hit_fraction(128, 2, 8) == pytest.approx(1 - comb(64, 8) / comb(128, 8))
    assert comm.hit_fraction(128, 1, 8) == 1.0
    assert comm.hit_fraction(8, 4, 1) == pytest.approx(0.25)
    assert comm.hit_fraction(256, 8, 8) == pytest.approx(1 - comb(224, 8) / comb(256, 8))


def test_deepep_sends_a_token_once_per_node_and_gpu() -> None:
    """Qwen3 30B-A3B (128 experts, top-8, h 2048), EP16 over two 8-GPU nodes, 4096 tokens a
    rank: one 2048 x 2-byte vector per token to the other node when it is hit
    (p = 1 - C(64,8)/C(128,8)), and over NVLink to each of the 2 x 7 GPUs it hits
    (p = 1 - C(120,8)/C(128,8)). The all-to-all dispatcher sends k = 8 copies, half of them
    across nodes: about four times the fabric bytes."""
    vector = 4096 * 2048 * 2.0
    nvlink, fabric = comm.dispatch_bytes(job(), ep_layout(16), NODE)
    assert fabric == pytest.approx(vector * 1 * (1 - comb(64, 8) / comb(128, 8)))
    assert nvlink == pytest.approx(vector * 2 * 7 * (1 - comb(120, 8) / comb(128, 8)))
    alltoall_fabric = comm.a2a_bytes(job(), ep_layout(16)) * 8 / 16
    assert alltoall_fabric / fabric == pytest.approx(4.0, rel=0.01)


def test_deepep_time_is_the_slower_of_nvlink_and_the_rail() -> None:
    """The rail at DeepEP's measured share of line rate (43 of ~50 GB/s: 0.86), not the
    ring collectives' fitted ``fabric_efficiency``."""
    nvlink, fabric = 3e8, 1e8
    hop = EFF.network.hop_latency_s
    rail = NODE.fabric_bytes_per_s_per_gpu * 0.86
    assert EFF.network.deepep_rdma_efficiency == 0.86
    assert rail > rail_bw(NODE, EFF)
    expected = max(nvlink / intra_node_bw(8, NODE, DEVICE, EFF), fabric / rail)
    got = dedup_all_to_all(nvlink, fabric, 16, 1, NODE, DEVICE, EFF)
    assert got == pytest.approx(expected + hop)
    assert dedup_all_to_all(nvlink, fabric, 1, 1, NODE, DEVICE, EFF) == 0.0


def test_ep_time_follows_the_dispatcher() -> None:
    """Four exchanges per MoE layer (48 in Qwen3 30B-A3B) either way; the stated dispatcher
    wins over the stack's, and DeepEP's deduplication makes the exchange cheaper."""
    lay = ep_layout(16)
    nvlink, fabric = comm.dispatch_bytes(job(), lay, NODE)
    one = dedup_all_to_all(nvlink, fabric, 16, 1, NODE, DEVICE, EFF)
    deepep = comm.ep_time(job(moe_dispatcher="deepep"), lay, NODE, DEVICE, EFF)
    assert deepep == pytest.approx(4 * 48 * one)
    assert deepep < comm.ep_time(job(), lay, NODE, DEVICE, EFF)
    assert comm.ep_time(job(framework="automodel"), lay, NODE, DEVICE, EFF) == deepep


def test_ep_exposure_follows_the_stated_overlap() -> None:
    """Megatron-Core leaves overlap_moe_expert_parallel_comm off: the whole exchange is on
    the critical path; a run that turns it on exposes the fitted ``overlap.ep`` share."""
    assert comm.ep_exposed(job(), EFF) == 1.0
    assert comm.ep_exposed(job(ep_overlap=True), EFF) == EFF.overlap.ep
    assert comm.ep_exposed(job(ep_overlap=False), EFF) == 1.0
    assert comm.ep_exposed(job(framework="automodel"), EFF) == 1.0
    lay = ep_layout(16)
    raw = comm.ep_time(job(), lay, NODE, DEVICE, EFF)
    assert microbatch_time(job(), lay, DEVICE, NODE, EFF).ep == pytest.approx(raw)
    overlapped = microbatch_time(job(ep_overlap=True), lay, DEVICE, NODE, EFF).ep
    assert overlapped == pytest.approx(EFF.overlap.ep * raw)


def test_dualpipe_hides_the_whole_exchange() -> None:
    """DualPipe states a full overlap of computation and communication (deepseek-ai/DualPipe
    README): nothing exposed, whatever ``overlap.ep`` (Megatron-Core's 1F1B overlap) is."""
    full = job(ep_overlap=True, ep_overlap_full=True)
    assert comm.ep_exposed(full, EFF) == 0.0
    assert microbatch_time(full, ep_layout(16), DEVICE, NODE, EFF).ep == 0.0
    assert comm.ep_exposed(job(ep_overlap=True), EFF) == EFF.overlap.ep > 0.0


def row(method: str, framework: str = "Megatron-Bridge / Megatron-Core") -> dict[str, str]:
    return {"method": method, "framework": framework}


def test_rows_state_their_dispatcher_and_overlap() -> None:
    assert moe_dispatcher_of(row("pretrain MoE EP=16 dispatcher=hybridep")) == "deepep"
    assert moe_dispatcher_of(row("pretrain MoE EP=8 dispatcher=alltoall")) == "alltoall"
    assert moe_dispatcher_of(row("pretrain MoE EP=64", "NeMo AutoModel (TE + DeepEP)")) == "deepep"
    assert moe_dispatcher_of(row("pretrain MoE EP=8")) == ""
    assert ep_overlap_of(row("pretrain MoE EP=32 dispatcher=alltoall a2a-overlap")) is True
    assert ep_overlap_of(row("pretrain MoE EP=64 DualPipe MTP=1")) is True
    assert ep_overlap_of(row("pretrain MoE EP=32")) is None
    assert ep_overlap_full_of(row("pretrain MoE EP=64 DualPipe MTP=1")) is True
    assert ep_overlap_full_of(row("pretrain MoE EP=32 dispatcher=alltoall a2a-overlap")) is False


def test_contiguous_routing_spans_by_hand() -> None:
    """AutoModel's fake balanced gate gives token t experts t*k ... t*k+k-1 mod E.
    DeepSeek-V3 (E 256, k 8) on EP64: 32 experts a node, 4 a GPU, so a block of 8 aligned
    neighbours is one node and two GPUs. Kimi K2 (E 384, k 8) on EP32, 12 experts a GPU:
    blocks start at 0, 8, 4 (mod 12), and only the one starting at 8 crosses a GPU: 4/3."""
    assert comm.groups_spanned(256, 8, 8, "contiguous") == 1.0
    assert comm.groups_spanned(256, 64, 8, "contiguous") == 2.0
    assert comm.groups_spanned(384, 32, 8, "contiguous") == pytest.approx(4 / 3)
    assert comm.groups_spanned(256, 8, 8, "random") == pytest.approx(
        8 * (1 - comb(224, 8) / comb(256, 8)))


def test_contiguous_routing_sends_each_token_to_one_node() -> None:
    """DeepSeek-V3 on EP64 with the fake gate, 4096 tokens a rank (h 7168): every token
    goes to one node, 7/8 of the time another one."""
    dsv3 = job("deepseek-v3", routing="contiguous")
    lay = Layout(tp=1, pp=4, dp=64, cp=1, vp=1, mbs=1, recompute="none", ep=64, etp=1)
    nvlink, fabric = comm.dispatch_bytes(dsv3, lay, NODE)
    vector = 4096 * 7168 * 2.0
    assert fabric == pytest.approx(vector * 7 / 8)
    assert nvlink == pytest.approx(vector * 2 * 7 / 8)
