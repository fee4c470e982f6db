"""The planner: pins are honoured, the deadline picks the fewest nodes, infeasible is not an
exception, and the search's monotonicity properties hold."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.job import Job, Layout
from generator.sizing.training.layouts import Pins, layouts
from generator.sizing.training.planner import Searcher, plan, search_size
from generator.sizing.training.steptime import step_time
from tests.unit.sizing_models import (
    H100,
    LLAMA2_7B,
    LLAMA2_13B,
    LLAMA2_70B,
    LLAMA3_8B,
    XE9680_4NIC,
    XE9680_8NIC,
)

EFF = default_efficiency()
NODES = [8 * k for k in range(1, 65)]


def job(arch=LLAMA2_70B, kind="pretrain", gbs=128, seq=4096, steps=1000, framework="nemo"):  # type: ignore[no-untyped-def]
    return Job("t", arch, kind, "bf16", framework, gbs, seq, steps)


def test_pins_are_honoured() -> None:
    pins = Pins(tp=4, pp=2, cp=1, vp=5, mbs=1, recompute="full")
    res = search_size(job(), 64, H100, XE9680_8NIC, EFF, pins)
    assert res.ranked
    for e in res.ranked:
        lay = e.layout
        assert (lay.tp, lay.pp, lay.cp, lay.vp, lay.mbs, lay.recompute) == (4, 2, 1, 5, 1, "full")
        assert lay.gpus == 64


def test_every_layout_uses_exactly_the_gpus_and_divides_the_batch() -> None:
    j = job(LLAMA2_13B, gbs=96)
    for lay in layouts(j, 48, XE9680_8NIC, Pins(), EFF):
        assert lay.gpus == 48
        assert j.global_batch % (lay.dp * lay.mbs) == 0
        assert lay.tp <= 8 and LLAMA2_13B.heads % lay.tp == 0


def test_deadline_picks_fewest_nodes() -> None:
    j = job(steps=2000)
    slow = plan(j, NODES, H100, XE9680_8NIC, EFF)
    deadline = slow.chosen.best.step_s * j.steps / 4  # type: ignore[union-attr]
    p = plan(j, NODES, H100, XE9680_8NIC, EFF, deadline_s=deadline)
    assert p.meets_deadline is True
    chosen = p.chosen.gpus
    assert p.chosen.best.step_s * j.steps <= deadline  # type: ignore[union-attr]
    for n in NODES[: NODES.index(chosen)]:
        best = search_size(j, n, H100, XE9680_8NIC, EFF, Pins()).best
        assert best is None or best.step_s * j.steps > deadline


def test_without_deadline_fewest_nodes_that_fit() -> None:
    """Llama-2-70B SFT: Dell found it does not fit one XE9680; NeMo ran it on 16 GPUs."""
    j = job(kind="sft")
    p = plan(j, NODES, H100, XE9680_8NIC, EFF)
    assert p.fits and p.meets_deadline is None
    assert p.chosen.gpus == 16
    assert search_size(j, 8, H100, XE9680_8NIC, EFF, Pins()).best is None


def test_unreachable_deadline_returns_fastest_with_a_note() -> None:
    j = job(steps=10**7)
    p = plan(j, NODES[:4], H100, XE9680_8NIC, EFF, deadline_s=3600)
    assert p.meets_deadline is False and p.fits
    assert "deadline" in p.notes[0]


def test_infeasible_is_not_an_exception() -> None:
    """70B SFT on 4 GPUs: nothing fits; the tightest layout is kept to explain why."""
    p = plan(job(kind="sft"), [4], H100, XE9680_8NIC, EFF)
    assert not p.fits
    assert p.chosen.best is None and p.chosen.tightest is not None
    assert p.chosen.rejected["does not fit in GPU memory"] > 0


def test_runner_ups_are_ranked() -> None:
    res = search_size(job(), 64, H100, XE9680_8NIC, EFF, Pins())
    times = [e.step_s for e in res.ranked]
    assert len(times) > 1 and times == sorted(times)


@settings(max_examples=40, deadline=None)
@given(
    arch=st.sampled_from([LLAMA2_7B, LLAMA2_70B, LLAMA3_8B]),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4]),
    dp=st.sampled_from([2, 4, 8, 16]),
    recompute=st.sampled_from(["none", "full"]),
)
def test_more_nics_never_slower(arch, tp, pp, dp, recompute) -> None:  # type: ignore[no-untyped-def]
    j = job(arch, gbs=256)
    lay = Layout(tp, pp, dp, 1, 1, 1, recompute)
    eight = step_time(j, lay, H100, XE9680_8NIC, EFF).total
    four = step_time(j, lay, H100, XE9680_4NIC, EFF).total
    assert eight <= four
    if lay.gpus > 8 and dp > 1:
        assert eight < four  # the DP reduce crosses nodes: halving the rails must show


@settings(max_examples=25, deadline=None)
@given(
    arch=st.sampled_from([LLAMA2_7B, LLAMA2_13B, LLAMA2_70B]),
    kind=st.sampled_from(["pretrain", "sft", "lora"]),
    nodes=st.integers(1, 8),
)
def test_more_gpus_never_stop_fitting(arch, kind, nodes) -> None:  # type: ignore[no-untyped-def]
    j = job(arch, kind, gbs=512)
    searcher = Searcher(j, H100, XE9680_8NIC, EFF, Pins())
    if searcher.size(8 * nodes).best is not None:
        assert searcher.size(16 * nodes).best is not None


def test_partial_recompute_only_as_much_as_memory_needs() -> None:
    """Unpinned: recompute the fewest layers per stage that fit (Megatron recompute_num_layers);
    a pinned "full" recomputes every layer."""
    j = job(kind="sft", gbs=32)
    free = search_size(j, 16, H100, XE9680_8NIC, EFF, Pins(tp=4, pp=4)).best
    assert free is not None and free.layout.recompute == "full"
    k = free.layout.recompute_layers
    assert 0 < k < 20
    fewer = free.layout._replace(recompute_layers=k - 1)
    assert Searcher(j, H100, XE9680_8NIC, EFF, Pins()).memory(fewer).total > 80e9
    pinned = search_size(j, 16, H100, XE9680_8NIC, EFF, Pins(tp=4, pp=4, recompute="full"))
    assert pinned.best is not None and pinned.best.layout.recompute_layers == 0
    assert pinned.best.step_s > free.step_s


def test_fsdp_searches_tp_and_hsdp() -> None:
    """ZeRO-3 stacks are searched with tensor parallelism and with HSDP shard groups of
    whole nodes (the layouts torchtitan and fms-fsdp publish), not only FULL_SHARD at TP1."""
    j = job(LLAMA2_70B, framework="fsdp", gbs=512)
    seen = list(layouts(j, 256, XE9680_8NIC, Pins(), EFF))
    assert {lay.tp for lay in seen} >= {1, 2, 4, 8}
    shards = {(lay.tp, lay.shard) for lay in seen if lay.shard}
    assert (1, 8) in shards and (1, 16) in shards and (8, 2) in shards
    assert all(lay.dp % lay.shard == 0 and lay.dp // lay.shard >= 2 for lay in seen
               if lay.shard)
    assert not any(lay.pp > 1 for lay in seen)  # fsdp runs no pipeline parallelism


def test_multi_node_fsdp_lora_gets_faster_with_nodes() -> None:
    """The v1 defect: FSDP gathers saw one NIC per node, so adding nodes to a multi-node
    FSDP LoRA job made it slower. Over all rails, time to train falls with every doubling."""
    j = replace(job(LLAMA2_70B, kind="lora", framework="fsdp", gbs=512, steps=100),
                adapter_params=2e8)
    hours = []
    for gpus in (16, 32, 64, 128):
        best = search_size(j, gpus, H100, XE9680_8NIC, EFF, Pins(tp=1)).best
        assert best is not None
        hours.append(best.step_s * j.steps)
    assert hours == sorted(hours, reverse=True)
