"""The acceptance expected-value model: hand-worked values, link limits, monotonicity."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.catalog.load import default_catalog
from generator.sizing.acceptance import OPS, build_model
from generator.sizing.acceptance.expected import Expectation, size_text
from generator.sizing.acceptance.nccl import bus_bandwidth
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import Node
from generator.spec.load import load_spec

GIB = 2**30
ALPHA = default_efficiency().network.hop_latency_s


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    spec = load_spec("tests/fixtures/acceptance/spec.yaml").spec
    return build_model(spec, default_catalog(), 4)


def test_one_node_all_reduce_by_hand(model) -> None:  # type: ignore[no-untyped-def]
    # 8 ranks on NVLink: 450 GB/s per direction x 0.80 = 360 GB/s; ring 2(n-1)/n of the
    # buffer and 2(n-1) hop latencies; busbw = S/t x 2(n-1)/n.
    s = 8 * GIB
    t = 2 * 7 / 8 * s / 360e9 + 14 * ALPHA
    assert model.nccl("all_reduce", 1, s).expected == pytest.approx(s / t * 1.75 / 1e9)
    assert model.nccl("all_reduce", 1, s).expected == pytest.approx(358.74, abs=0.01)


def test_two_node_all_gather_is_capped_by_the_rings_nvlink_hops(model) -> None:  # type: ignore[no-untyped-def]
    # 16 ranks: eight 400 Gb/s rails x 0.94 = 376 GB/s per node, NVLink ring 360: 360.
    s = GIB
    t = 15 / 16 * s / 360e9 + 15 * ALPHA
    assert model.nccl("all_gather", 2, s).expected == pytest.approx(s / t * 15 / 16 / 1e9)
    assert model.nccl("all_gather", 2, s).expected == pytest.approx(340.84, abs=0.01)


def test_alltoall_across_nodes_runs_at_one_nic_per_gpu(model) -> None:  # type: ignore[no-untyped-def]
    # Half of each rank's buffer leaves through its own NIC (50 GB/s x 0.94), 7/16 stays
    # on NVLink at the same time: t = 0.5 S / 47 GB/s + one hop.
    s = 8 * GIB
    t = max(7 / 16 * s / 360e9, 0.5 * s / 47e9) + ALPHA
    assert model.nccl("alltoall", 2, s).expected == pytest.approx(s / t * 15 / 16 / 1e9)
    assert model.nccl("alltoall", 2, s).expected == pytest.approx(88.12, abs=0.01)


def test_port_memory_and_step_expectations(model) -> None:  # type: ignore[no-untyped-def]
    ib = model.ib_write_bw()
    assert (ib.expected, ib.limit, ib.unit) == (pytest.approx(388.0), pytest.approx(368.6), "Gb/s")
    hbm = model.hbm()
    assert hbm.expected == pytest.approx(3350 * 0.758) and hbm.unit == "GB/s"
    step = model.train_step(32)
    assert step is not None and step.pass_if == "at_most" and step.expected > 0
    assert "pretrain on 32 GPUs" in step.scope and 5 < step.tolerance_pct < 60


def test_listing_follows_the_ladder_and_the_json_contract(model) -> None:  # type: ignore[no-untyped-def]
    rows = model.listing()
    tests = [e.test for e in rows]
    assert tests[0] == "nvidia-smi" and tests[-1] == "training step"
    assert tests.index("dcgmi diag -r 2") < tests.index("ib_write_bw") < \
        tests.index("nccl-tests all_reduce_perf")
    scopes = {e.scope for e in rows if e.test.startswith("nccl-tests")}
    assert scopes == {"1 node (8 GPUs)", "2 nodes (16 GPUs)", "4 nodes (32 GPUs)"}
    for e in rows:
        doc = e.to_json()
        assert list(doc) == ["test", "scope", "metric", "unit", "expected", "tolerance_pct",
                             "source"]
        assert doc["source"], e


@pytest.mark.parametrize(("n", "scopes"), [(1, [1]), (2, [1, 2]), (3, [1, 2, 3]),
                                           (4, [1, 2, 4]), (64, [1, 2, 32, 64])])
def test_nccl_runs_on_1_2_half_and_all_nodes(model, n: int, scopes: list[int]) -> None:  # type: ignore[no-untyped-def]
    assert model.nccl_scopes(n) == scopes


@pytest.mark.parametrize(("rule", "good", "bad"), [("at_least", 90.0, 89.9),
                                                   ("at_most", 110.0, 110.1),
                                                   ("equal", 100.0, 99.0)])
def test_tolerance_is_one_sided_for_bandwidth_and_time(rule: str, good: float, bad: float) -> None:
    tol = 0.0 if rule == "equal" else 10.0
    e = Expectation("t", "s", "m", "u", 100.0, tol, "src", rule)  # type: ignore[arg-type]
    assert e.passes(good) and not e.passes(bad)
    if rule == "at_least":
        assert e.passes(1e9), "beating the model (NVLink SHARP) is a pass"


def test_size_text() -> None:
    assert [size_text(s) for s in (64 * 2**20, GIB, 8 * GIB, 1000)] == \
        ["64 MiB", "1 GiB", "8 GiB", "1000 B"]


def _link_limit(op: str, nodes: int, node: Node, nvlink: float) -> float:
    """Independent bound from raw link rates: ring collectives move busbw through every
    rank's NVLink and, across nodes, a node's NICs carry its eight ranks' share; alltoall
    sends (n-g)/n of each rank's buffer through its own NIC share."""
    nic_per_gpu = node.nics * node.nic_gbps * 1e9 / 8 / node.gpus
    if nodes == 1:
        return nvlink
    if op == "alltoall":
        n, g = nodes * node.gpus, node.gpus
        return nic_per_gpu * (n - 1) / (n - g)
    return min(nvlink, nic_per_gpu * node.gpus)


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(OPS), nodes=st.integers(1, 256), exp=st.integers(16, 34),
       nics=st.integers(1, 8))
def test_bus_bandwidth_never_exceeds_the_link_limit(model, op: str, nodes: int, exp: int,  # type: ignore[no-untyped-def]
                                                    nics: int) -> None:
    node = replace(model.node, nics=nics)
    bw = bus_bandwidth(op, float(2**exp), nodes, node, model.device, model.eff)
    assert 0 < bw <= _link_limit(op, nodes, node, model.device.nvlink_bytes_per_s) * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(OPS), nodes=st.integers(1, 256), exp=st.integers(16, 34),
       nics=st.integers(2, 8))
def test_bus_bandwidth_never_rises_when_a_rail_is_removed(model, op: str, nodes: int,  # type: ignore[no-untyped-def]
                                                          exp: int, nics: int) -> None:
    size = float(2**exp)
    full = bus_bandwidth(op, size, nodes, replace(model.node, nics=nics), model.device,
                         model.eff)
    fewer = bus_bandwidth(op, size, nodes, replace(model.node, nics=nics - 1), model.device,
                          model.eff)
    assert fewer <= full * (1 + 1e-12)
    assert math.isfinite(full)
