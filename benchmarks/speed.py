"""How fast the planner is: Llama 3.1 405B pretraining sized over 1 ... 1,024 XE9680 nodes.

Every layout on every node count is considered (pruned by memory before time, with per-shape
terms cached across sizes), for each stack's search space: Megatron's TP x PP x CP x VP and
FSDP's TP x HSDP shard groups; and an MoE sweep, DeepSeek-V3 (256 experts) with EP searched
over every divisor of the experts that fits the stage's ranks (branch and bound,
``generator/sizing/training/bounds.py``). Target: each sweep in < 1 s of CPU on this 2-core
machine, shared with other jobs: sweeps are timed in CPU seconds (what the search costs,
not how long it waited for a core), median of ``RUNS``. Each row says how many layouts the
space holds, how many the search accounted for (ranked or rejected by reason) and how many
step times it computed.
``python -m benchmarks.speed``. Other stages add rows through ``Timing`` and ``format_timings``;
the ``podplan plan`` command's rows come from ``benchmarks.plan_speed``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from generator.catalog.load import default_catalog
from generator.gcpause import gc_paused
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.flops import mfu, model_flops
from generator.sizing.model.hardware import device_from_gpu, node_from_server
from generator.sizing.model.job import Job, steps_for_tokens
from generator.sizing.training.layouts import Pins, layouts
from generator.sizing.training.planner import Searcher, SizeResult

T = TypeVar("T")
TARGET_S = 1.0
REPEAT = 3
"""Best of three, as timeit does: the machine's other load is not the planner's cost."""
RUNS = 5
"""Sweeps: the median CPU time of five runs (the odd run slowed by a neighbour is left out)."""
SHOWN_NODES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class Timing:
    """One timed thing, for the summary table."""

    what: str
    seconds: float
    detail: str = ""
    target_s: float | None = None


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and its wall time."""
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def format_timings(rows: list[Timing]) -> str:
    """The summary table; takes rows from any stage."""
    head = f"{'what':<52} {'seconds':>8} {'target':>8}  detail"
    lines = [head, "-" * len(head)]
    for r in rows:
        target = "" if r.target_s is None else f"< {r.target_s:g}"
        flag = "" if r.target_s is None or r.seconds < r.target_s else "  MISSED"
        lines.append(f"{r.what:<52} {r.seconds:>8.3f} {target:>8}  {r.detail}{flag}")
    return "\n".join(lines)


def llama405b_job(framework: str = "megatron") -> Job:
    """Llama 3.1 405B, 15.6T tokens, GBS 2048 x 8192, bf16."""
    arch = from_catalog(default_catalog().models["llama3.1-405b"])
    return Job(
        name="llama3.1-405b",
        arch=arch,
        kind="pretrain",
        precision="bf16",
        framework=framework,
        global_batch=2048,
        seq_len=8192,
        steps=steps_for_tokens(15.6e12, 2048, 8192),
    )


def deepseek_v3_job(framework: str = "megatron") -> Job:
    """DeepSeek-V3 (671B total, 37B active), 14.8T tokens, GBS 15,360 x 4096, fp8."""
    arch = from_catalog(default_catalog().models["deepseek-v3"])
    return Job(name="deepseek-v3", arch=arch, kind="pretrain", precision="fp8",
               framework=framework, global_batch=15360, seq_len=4096,
               steps=steps_for_tokens(14.8e12, 15360, 4096))


@dataclass(frozen=True)
class Sweep:
    """Best layouts on every node count, and what the search did for them."""

    results: dict[int, SizeResult]
    visited: int
    """Layouts accounted for: ranked, or rejected with a reason (memory, bound, batch)."""
    evaluated: int
    """Step times computed."""


def searcher(framework: str = "megatron", job: Job | None = None) -> Searcher:
    """A searcher for ``job`` (default: 405B on ``framework``) on XE9680 H100 nodes."""
    catalog, eff = default_catalog(), default_efficiency()
    gpu = catalog.gpus["h100-sxm-80gb"]
    device = device_from_gpu(gpu)
    node = node_from_server(catalog.servers["xe9680"], gpu)
    return Searcher(job or llama405b_job(framework), device, node, eff, Pins())


def sweep(nodes: int = 1024, framework: str = "megatron", job: Job | None = None) -> Sweep:
    """Best layouts on every node count 1..``nodes``, one searcher with the cycle collector
    held (as ``plan`` searches sizes)."""
    s = searcher(framework, job)
    results: dict[int, SizeResult] = {}
    visited = 0
    with gc_paused():
        for n in range(1, nodes + 1):
            res = s.size(8 * n)
            results[n] = res
            visited += sum(res.rejected.values()) + len(res.ranked)
    return Sweep(results, visited, s.evaluated)


def space(nodes: int = 1024, framework: str = "megatron", job: Job | None = None) -> int:
    """Layouts in the search space on 1..``nodes`` nodes (every structurally valid one, each
    recompute level once: partial recompute's layer counts not counted)."""
    s = searcher(framework, job)
    return sum(1 for n in range(1, nodes + 1)
               for _ in layouts(s.job, 8 * n, s.node, s.pins, s.eff))


def timed_sweep(what: str, framework: str = "megatron", job: Job | None = None
                ) -> tuple[Sweep, Timing]:
    """``sweep`` ``RUNS`` times: its answer and a row with the median CPU seconds."""
    runs = []
    for _ in range(RUNS):
        cpu, start = time.process_time(), time.perf_counter()
        out = sweep(framework=framework, job=job)
        runs.append((time.process_time() - cpu, time.perf_counter() - start))
    cpus = sorted(c for c, _ in runs)
    detail = (f"CPU s, median of {RUNS} ({cpus[0]:.3f}-{cpus[-1]:.3f}; wall median "
              f"{statistics.median(w for _, w in runs):.3f} s); "
              f"{space(framework=framework, job=job):,} layouts in the space, "
              f"{out.visited:,} accounted for, {out.evaluated:,} step times computed")
    return out, Timing(what, statistics.median(cpus), detail, TARGET_S)


def format_sweep(
    results: dict[int, SizeResult], framework: str = "megatron", job: Job | None = None
) -> str:
    """Best layout, step time, time-to-train and MFU at a few node counts."""
    job = job or llama405b_job(framework)
    peak = device_from_gpu(default_catalog().gpus["h100-sxm-80gb"]).peak_flops("bf16")
    flops = model_flops(job.arch, job.kind, job.seq_len).total
    head = f"{'nodes':>6} {'GPUs':>6}  {'best layout':<40} {'step s':>8} {'days':>8} {'MFU':>6}"
    lines = [head, "-" * len(head)]
    for n in SHOWN_NODES:
        best = results[n].best if n in results else None
        if best is None:
            lines.append(f"{n:>6} {8 * n:>6}  {'(nothing fits)':<40}")
            continue
        lay = best.layout
        hsdp = f" SH{lay.shard}" if lay.shard else ""
        hsdp += f" EP{lay.ep}" if lay.ep > 1 else ""
        text = (f"TP{lay.tp} PP{lay.pp} DP{lay.dp} CP{lay.cp} VP{lay.vp}{hsdp} MBS{lay.mbs} "
                f"{lay.recompute}")
        tok_s_gpu = job.global_batch * job.seq_len / (best.step_s * lay.gpus)
        days = best.step_s * job.steps / 86400
        lines.append(
            f"{n:>6} {8 * n:>6}  {text:<40} {best.step_s:>8.2f} {days:>8.1f} "
            f"{100 * mfu(flops, tok_s_gpu, peak):>5.1f}%"
        )
    return "\n".join(lines)


def sweep_timings() -> list[Timing]:
    """The three sweeps, each printed with its best layouts at a few node counts."""
    llama405b_job()  # load the catalog and efficiency data outside the timing
    default_efficiency()
    rows = []
    for framework in ("megatron", "fsdp"):
        out, row = timed_sweep(
            f"size llama3.1-405b pretraining, 1..1,024 nodes, {framework}", framework)
        print(f"{framework}:")
        print(format_sweep(out.results, framework))
        print()
        rows.append(row)
    job = deepseek_v3_job()
    out, row = timed_sweep("size deepseek-v3 pretraining (EP searched), 1..1,024 nodes",
                           job=job)
    print("megatron, DeepSeek-V3 (MoE, EP searched):")
    print(format_sweep(out.results, job=job))
    print()
    return [*rows, row]


def main() -> int:
    from benchmarks.plan_speed import plan_timings  # the plan command's rows

    rows = sweep_timings()
    rows += plan_timings()
    print(format_timings(rows))
    return 0 if all(r.target_s is None or r.seconds < r.target_s for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
