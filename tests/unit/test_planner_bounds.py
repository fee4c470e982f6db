"""The EP search's branch and bound is safe: its floors never exceed the step time of a
layout they stand for (property test over random frames, with one searcher per job so
that what is kept across cluster sizes is reused as in a sweep), and the pruned search
ranks exactly as the exhaustive one (no bound, every full-recompute layout narrowed to
its fewest layers) over dense and MoE models, stacks, sizes and pins."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.catalog.load import default_catalog
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu, node_from_server
from generator.sizing.model.job import Job, Layout
from generator.sizing.training import bounds
from generator.sizing.training.layouts import Pins, frames
from generator.sizing.training.planner import Searcher, SizeResult
from generator.sizing.training.steptime import step_time

CATALOG = default_catalog()
EFF = default_efficiency()
GPU = CATALOG.gpus["h100-sxm-80gb"]
DEVICE = device_from_gpu(GPU)
NODE = node_from_server(CATALOG.servers["xe9680"], GPU)


def job(model: str, framework: str = "megatron", precision: str = "bf16", gbs: int = 1024,
        seq: int = 4096) -> Job:
    return Job(name=model, arch=from_catalog(CATALOG.models[model]), kind="pretrain",
               precision=precision, framework=framework, global_batch=gbs, seq_len=seq,
               steps=100)


DSV3 = {"model": "deepseek-v3", "precision": "fp8", "gbs": 15360}
WIDE = (2, 16, 24, 32, 48, 64, 96, 128, 256, 1024)
FEW = (4, 32, 128, 512)
CASES = [
    # (id, job arguments, pins, node counts)
    ("405b-megatron", {"model": "llama3.1-405b", "gbs": 2048, "seq": 8192}, Pins(), FEW),
    ("405b-fsdp", {"model": "llama3.1-405b", "framework": "fsdp", "gbs": 2048, "seq": 8192},
     Pins(), (16, 64, 256)),
    ("dsv3", DSV3, Pins(), WIDE),
    ("dsv3-pp8", DSV3, Pins(pp=8), FEW),
    ("dsv3-tp2-mbs1", DSV3, Pins(tp=2, mbs=1), FEW),
    ("dsv3-full", DSV3, Pins(recompute="full"), FEW),
    ("dsv3-vp2", DSV3, Pins(vp=2), (24, 64, 256)),
    ("dsv3-etp2", DSV3, Pins(etp=2), FEW),
    ("dsv3-nemo", {**DSV3, "framework": "nemo", "gbs": 4096}, Pins(), FEW),
    ("dsv3-torchtitan", {"model": "deepseek-v3", "framework": "torchtitan", "gbs": 4096},
     Pins(), (64, 256)),
    ("mixtral-8x22b", {"model": "mixtral-8x22b"}, Pins(), (1, 2, 8, 64, 256)),
    ("mixtral-8x22b-fsdp", {"model": "mixtral-8x22b", "framework": "fsdp"}, Pins(), FEW),
    ("mixtral-8x22b-32k", {"model": "mixtral-8x22b", "gbs": 256, "seq": 32768}, Pins(),
     (8, 64)),
    ("qwen3-235b", {"model": "qwen3-235b-a22b", "gbs": 2048}, Pins(), (4, 16, 64, 384)),
    ("gpt-oss-120b", {"model": "gpt-oss-120b", "seq": 8192}, Pins(), (1, 3, 12, 64, 256)),
    ("gpt-oss-120b-ep8", {"model": "gpt-oss-120b", "seq": 8192}, Pins(ep=8), (2, 64)),
]


def ranking(res: SizeResult) -> tuple[object, ...]:
    """Everything of a size's answer that the pruning could change."""
    ranked = [(e.layout, e.step_s, e.memory.total, e.fits) for e in res.ranked]
    tight = None if res.tightest is None else (res.tightest.layout, res.tightest.memory.total)
    return tuple(ranked), tight


@pytest.mark.parametrize(("args", "pins", "nodes"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_pruned_search_ranks_as_exhaustive(args: dict[str, object], pins: Pins,
                                           nodes: tuple[int, ...]) -> None:
    j = job(**args)  # type: ignore[arg-type]
    pruned = Searcher(j, DEVICE, NODE, EFF, pins)
    full = Searcher(j, DEVICE, NODE, EFF, pins, exhaustive=True)
    fitted = 0
    for n in nodes:
        got, want = pruned.size(8 * n), full.size(8 * n)
        assert ranking(got) == ranking(want), f"{n} nodes"
        fitted += bool(want.ranked)
    assert fitted, "no size fits: the case checks nothing"


def test_bound_prunes_the_moe_sweep() -> None:
    """The pruning is what makes the EP search fast: far fewer step times computed."""
    j = job(**DSV3)  # type: ignore[arg-type]
    pruned = Searcher(j, DEVICE, NODE, EFF, Pins())
    full = Searcher(j, DEVICE, NODE, EFF, Pins(), exhaustive=True)
    for n in (64, 128, 256):
        assert pruned.size(8 * n).best == full.size(8 * n).best
    assert pruned.evaluated * 5 < full.evaluated


PROPERTY_JOBS = [
    ("deepseek-v3", "megatron"), ("deepseek-v3", "torchtitan"), ("mixtral-8x22b", "megatron"),
    ("mixtral-8x22b", "nemo"), ("qwen3-235b-a22b", "megatron"), ("gpt-oss-120b", "megatron"),
    ("mixtral-8x7b", "megatron"),
]


@cache
def searcher(model: str, framework: str) -> Searcher:
    """One searcher per job for every example, as one sweep keeps its caches across sizes."""
    gbs = 15360 if model == "deepseek-v3" else 1024
    return Searcher(job(model, framework, gbs=gbs), DEVICE, NODE, EFF, Pins())


def variants(s: Searcher, frame: Layout, row: bounds.Row, base: float) -> list[Layout]:
    """Every layout of a row that fits beside the frame's states by the scan's test: each
    interleaving, recompute level and (where the stack recomputes some layers only)
    number of recomputed layers."""
    layers = frame.stage_layers(s.job.arch.layers)
    out = []
    for vp in row.shape.vps:
        for rc in s.recomputes:
            for k in range(layers + 1) if rc == "full" and s.partial else (0,):
                lay = frame._replace(vp=vp, mbs=row.mbs, recompute=rc, recompute_layers=k)
                if base + s.activations(lay, row.m) <= s.limit:
                    out.append(lay)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.sampled_from(PROPERTY_JOBS), nodes=st.integers(8, 400), pick=st.randoms())
def test_floors_never_exceed_a_step_time(which: tuple[str, str], nodes: int,
                                         pick: random.Random) -> None:
    """quick <= surveyed row floor <= refined row floor (with DP and optimizer) <= the step
    time of every layout of the row that fits, computed afresh by ``step_time``, for every
    row of a random frame on which something fits."""
    s = searcher(*which)
    shapes = [f for tp, cp, pp, dp in frames(s.job, 8 * nodes, NODE, s.pins, EFF, Counter())
              for f in s.frame_shards(tp, cp, pp, dp)]
    pick.shuffle(shapes)
    for frame in shapes:
        base = s.base(frame)
        rows = bounds.survey(s, frame, base) if base <= s.limit else []
        if rows:
            break
    else:
        return  # nothing fits on this many nodes
    quick = bounds.quick(s, frame)
    fixed = s.fw.step_overhead_s
    for row in rows:
        cheap = row.low(fixed)
        row.fastest, row.exact = row.shape.fastest(base, frame, row.lightest), True
        low, floor = row.low(fixed), bounds.floor(s, frame, row)
        assert quick <= cheap <= low <= floor
        for lay in variants(s, frame, row, base):
            assert floor <= step_time(s.job, lay, DEVICE, NODE, EFF).total, lay
