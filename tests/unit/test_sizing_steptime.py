"""Step-time structure: bubble, processed tokens, communication volumes and NIC counts."""

from __future__ import annotations

import pytest

from generator.sizing.model.collectives import Link, all_gather, all_reduce, group_link
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import (
    Job,
    Layout,
    harmonic,
    sequence_tokens,
    steps_for_dataset,
    steps_for_tokens,
)
from generator.sizing.training import comm
from generator.sizing.training.steptime import step_time
from tests.unit.sizing_models import H100, LLAMA2_70B, XE9680_4NIC, XE9680_8NIC

EFF = default_efficiency()


def job(**kw: object) -> Job:
    base: dict[str, object] = dict(
        name="t",
        arch=LLAMA2_70B,
        kind="pretrain",
        precision="bf16",
        framework="nemo",
        global_batch=128,
        seq_len=4096,
        steps=10,
    )
    base.update(kw)
    return Job(**base)  # type: ignore[arg-type]


def test_pipeline_bubble_is_p_minus_1_over_v_microbatches() -> None:
    """t_step = (m + (p-1)/v) * t_mb + ...: bubble fraction (p-1)/(v*m) (Narayanan 2021)."""
    for vp in (1, 5):
        lay = Layout(tp=4, pp=4, dp=4, cp=1, vp=vp, mbs=1, recompute="none")
        st = step_time(job(), lay, H100, XE9680_8NIC, EFF)
        assert st.microbatches == 128 // 4
        assert st.bubble == pytest.approx(3 / vp * st.microbatch.total)


def test_processed_tokens() -> None:
    """Packed data fills the sequence; unpacked pads a micro-batch to its longest sample."""
    assert sequence_tokens(job(), 4) == 4096
    unpacked = job(sample_tokens=114.5)
    assert sequence_tokens(unpacked, 1) == pytest.approx(114.5)
    assert sequence_tokens(unpacked, 4) == pytest.approx(114.5 * (1 + 1 / 2 + 1 / 3 + 1 / 4))
    assert sequence_tokens(job(sample_tokens=3000.0), 8) == 4096  # capped at the sequence
    assert sequence_tokens(job(sample_tokens=100.0, extra_tokens=10), 1) == pytest.approx(110)
    assert harmonic(1) == 1.0


def test_steps() -> None:
    assert steps_for_tokens(1e9, 128, 4096) == 1908
    assert steps_for_dataset(12012, 114.5, 1.0, 128, 4096, packed=False) == 94
    assert steps_for_dataset(12012, 114.5, 1.0, 128, 4096, packed=True) == 3


def test_ring_volumes() -> None:
    """All-reduce moves 2(n-1)/n of the buffer per GPU; gather/scatter (n-1)/n."""
    assert comm.allreduce_bytes(8.0, 8) == pytest.approx(14.0)
    assert comm.gather_bytes(8.0, 8) == pytest.approx(7.0)
    assert comm.allreduce_bytes(8.0, 1) == 0.0


def test_tp_volume_per_layer() -> None:
    """4 collectives of b*s*h*2 bytes per layer per micro-batch (6 with full recompute),
    each a ring (or tree) all-reduce over NVLink."""
    lay = Layout(tp=8, pp=1, dp=1, cp=1, vp=1, mbs=1, recompute="none")
    size = 4096 * 8192 * 2
    link = group_link(8, 1, XE9680_8NIC, H100, EFF)
    assert link.bytes_per_s == pytest.approx(450e9 * EFF.network.nvlink_efficiency)
    expected = 4 * 80 * all_reduce(size, 8, link, EFF)
    assert comm.tp_time(job(), lay, XE9680_8NIC, H100, EFF) == pytest.approx(expected)
    full = lay._replace(recompute="full")
    assert comm.tp_time(job(), full, XE9680_8NIC, H100, EFF) == pytest.approx(1.5 * expected)


def test_nic_count_sets_inter_node_bandwidth() -> None:
    """Across nodes each GPU owns 400 Gb/s with 8 NICs and half of that with 4; a group with
    k members per node spreads over k rails (NCCL: one channel per rail)."""
    assert XE9680_8NIC.fabric_bytes_per_s_per_gpu == pytest.approx(50e9)
    assert XE9680_4NIC.fabric_bytes_per_s_per_gpu == pytest.approx(25e9)
    rail = 50e9 * EFF.network.fabric_efficiency
    assert group_link(8, 1, XE9680_4NIC, H100, EFF).nodes == 1
    one_per_node = group_link(8, 8, XE9680_8NIC, H100, EFF)
    assert (one_per_node.bytes_per_s, one_per_node.nodes) == (pytest.approx(rail), 8)
    half = group_link(8, 8, XE9680_4NIC, H100, EFF).bytes_per_s
    assert one_per_node.bytes_per_s == pytest.approx(2 * half)
    four_per_node = group_link(32, 2, XE9680_8NIC, H100, EFF)
    assert four_per_node.bytes_per_s == pytest.approx(4 * rail)
    all_rails = group_link(64, 1, XE9680_8NIC, H100, EFF)
    assert all_rails.bytes_per_s == pytest.approx(min(8 * rail, 450e9 * 0.8))


def test_ring_and_tree_by_hand() -> None:
    """Ring all-gather: (n-1)/n of the buffer and n-1 hops; all-reduce: the faster of the
    ring (2(n-1)/n, 2(n-1) hops) and the tree (2x, 2 log2 n hops), as NCCL picks."""
    link = Link(bytes_per_s=100e9, nodes=64)
    alpha = EFF.network.hop_latency_s
    assert all_gather(64e9, 64, link, EFF) == pytest.approx(63 / 64 * 0.64 + 63 * alpha)
    ring = 2 * 63 / 64 * 0.64 + 126 * alpha
    tree = 2 * 0.64 + 12 * alpha
    assert all_reduce(64e9, 64, link, EFF) == pytest.approx(min(ring, tree))
    small = 1e3  # a tiny message at scale: latency-bound, the tree wins
    assert all_reduce(small, 1024, link, EFF) == pytest.approx(2 * small / 100e9 + 20 * alpha)
    assert all_gather(1.0, 1, link, EFF) == 0.0


def test_pcie_peer_to_peer_without_nvlink() -> None:
    """L40S: no NVLink, GPUs talk over PCIe Gen4 x16 (32 GB/s a direction); a bridged H100
    PCIe pair talks over NVLink but a group of four crosses PCIe."""
    l40s = Device("l40s", 48e9, 0.864e12, 362e12, 733e12, 0.0, 32e9)
    pcie_node = Node(gpus=4, nics=2, nic_gbps=400, nvlink_domain=1)
    link = group_link(2, 1, pcie_node, l40s, EFF)
    assert link.bytes_per_s == pytest.approx(32e9 * EFF.network.pcie_efficiency)
    h100_pcie = Device("h100-pcie", 80e9, 2e12, 756e12, 1513e12, 300e9, 64e9)
    bridged = Node(gpus=4, nics=2, nic_gbps=400, nvlink_domain=2)
    assert group_link(2, 1, bridged, h100_pcie, EFF).bytes_per_s == pytest.approx(
        300e9 * EFF.network.nvlink_efficiency)
    assert group_link(4, 1, bridged, h100_pcie, EFF).bytes_per_s == pytest.approx(
        64e9 * EFF.network.pcie_efficiency)


def test_four_nics_slow_a_dp_bound_job() -> None:
    lay = Layout(tp=8, pp=1, dp=8, cp=1, vp=1, mbs=1, recompute="none")
    j = job(global_batch=8)
    eight = step_time(j, lay, H100, XE9680_8NIC, EFF)
    four = step_time(j, lay, H100, XE9680_4NIC, EFF)
    assert four.dp_exposed > eight.dp_exposed
    assert four.total > eight.total
