"""Step-time structure: bubble, processed tokens, communication volumes and NIC counts."""

from __future__ import annotations

import pytest

from generator.sizing.model.efficiency import default_efficiency
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
    """4 collectives of b*s*h*2 bytes per layer per micro-batch (6 with full recompute)."""
    lay = Layout(tp=8, pp=1, dp=1, cp=1, vp=1, mbs=1, recompute="none")
    size = 4096 * 8192 * 2
    moved = 4 * 80 * comm.allreduce_bytes(size, 8)
    expected = moved / comm.nvlink_bw(H100, EFF) + 4 * 80 * comm.latency(8, EFF)
    assert comm.tp_time(job(), lay, H100, EFF) == pytest.approx(expected)
    full = lay._replace(recompute="full")
    assert comm.tp_time(job(), full, H100, EFF) == pytest.approx(1.5 * expected)


def test_nic_count_sets_inter_node_bandwidth() -> None:
    """Across nodes each GPU owns 400 Gb/s with 8 NICs and half of that with 4."""
    assert XE9680_8NIC.fabric_bytes_per_s_per_gpu == pytest.approx(50e9)
    assert XE9680_4NIC.fabric_bytes_per_s_per_gpu == pytest.approx(25e9)
    assert comm.group_bw(8, XE9680_4NIC, H100, EFF) == comm.nvlink_bw(H100, EFF)
    one_per_node = comm.group_bw(64, XE9680_8NIC, H100, EFF, stride=8)
    assert one_per_node == pytest.approx(2 * comm.group_bw(64, XE9680_4NIC, H100, EFF, stride=8))
    assert comm.group_bw(64, XE9680_8NIC, H100, EFF, stride=2) == pytest.approx(4 * one_per_node)


def test_four_nics_slow_a_dp_bound_job() -> None:
    lay = Layout(tp=8, pp=1, dp=8, cp=1, vp=1, mbs=1, recompute="none")
    j = job(global_batch=8)
    eight = step_time(j, lay, H100, XE9680_8NIC, EFF)
    four = step_time(j, lay, H100, XE9680_4NIC, EFF)
    assert four.dp_exposed > eight.dp_exposed
    assert four.total > eight.total
