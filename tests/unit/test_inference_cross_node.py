"""A TP group wider than a node, hand-worked: each of its all-reduces pays
``inference.cross_node_all_reduce_s`` on top of the byte-and-hop collective (the engines'
custom all-reduce is intra-node only, so the group runs NCCL over the fabric); a TP group
inside one node never does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.catalog.load import default_catalog
from generator.sizing.inference import InferenceJob, Layout
from generator.sizing.inference.steps import comm_s, cycle_s
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu
from tests.unit.sizing_models import LLAMA2_70B, XE9680_8NIC

EFF = default_efficiency()
H100 = device_from_gpu(default_catalog().gpus["h100-sxm-80gb"])


def _eff(extra: float):  # type: ignore[no-untyped-def]
    return replace(EFF, inference=replace(EFF.inference, cross_node_all_reduce_s=extra))


def test_tp16_over_two_nodes_pays_the_extra_latency_per_all_reduce() -> None:
    """Llama-2-70B (80 dense layers, 2 all-reduces each) at TP16 over two 8-GPU nodes: one
    decode iteration has 160 all-reduces, so 100 us each adds 16 ms to the comm time and to
    the decode cycle."""
    job = InferenceJob(LLAMA2_70B, "fp8", 1024, 512)
    lay = Layout(16)
    base = comm_s(job, lay, 8.0, 1.0, H100, XE9680_8NIC, _eff(0.0))
    more = comm_s(job, lay, 8.0, 1.0, H100, XE9680_8NIC, _eff(1e-4))
    assert more - base == pytest.approx(160 * 1e-4)
    cycle = (cycle_s(job, lay, 8, 0, H100, XE9680_8NIC, _eff(1e-4))
             - cycle_s(job, lay, 8, 0, H100, XE9680_8NIC, _eff(0.0)))
    assert cycle == pytest.approx(0.016)


def test_tp_inside_one_node_never_pays_it() -> None:
    """TP8 on one 8-GPU node, and TP8 x PP2 over two nodes (each TP group in one node): the
    parameter changes nothing."""
    job = InferenceJob(LLAMA2_70B, "fp8", 1024, 512)
    for lay in (Layout(8), Layout(8, 2)):
        a = cycle_s(job, lay, 32, 0, H100, XE9680_8NIC, _eff(0.0))
        b = cycle_s(job, lay, 32, 0, H100, XE9680_8NIC, _eff(5e-4))
        assert a == b
