"""Each workload: its layout, memory per GPU (stacked), time and the layouts that lost."""

from __future__ import annotations

from typing import Any

from generator.emit.report.blocks import Block, Figure, Heading, Notes, Para, Section
from generator.emit.report.charts import Stack, stacked_bars
from generator.emit.report.labels import model_label
from generator.emit.report.summary import uncertainty_text
from generator.emit.report.tables import Cell, Column, Table, count, hours, number, plain
from generator.plan.models import ClusterPlan
from generator.sizing.report import slo_text
from generator.sizing.result import (
    Candidate,
    InferenceEstimate,
    TrainingEstimate,
    TrainingLayout,
)

MEMORY_PARTS = (
    ("weights", "weights_gib"), ("gradients", "gradients_gib"), ("optimizer", "optimizer_gib"),
    ("activations", "activations_gib"), ("KV cache", "kv_cache_gib"),
    ("overhead", "overhead_gib"),
)


def layout_text(lay: TrainingLayout) -> str:
    """``TP2 PP16 DP2 CP1 VP5 MBS1, no recompute``."""
    rec = "no recompute" if lay.recompute == "none" else f"{lay.recompute} recompute"
    if lay.recompute_layers:
        rec += f" ({lay.recompute_layers} layers/stage)"
    sizes = f"TP{lay.tp} PP{lay.pp} DP{lay.dp} CP{lay.cp} VP{lay.vp}"
    if lay.ep > 1:
        sizes += f" EP{lay.ep} ETP{lay.etp}"
    return f"{sizes} MBS{lay.micro_batch_size}, {rec}"


def _yes_no(value: bool | None, none: str = "no target") -> str:
    return none if value is None else ("yes" if value else "NO")


def _training_table(t: TrainingEstimate) -> Table:
    rows: list[list[Cell]] = [
        [plain("Layout"), plain(layout_text(t.parallelism))],
        [plain("GPUs"), count(t.gpus)],
        [plain("Memory per GPU"), number(t.memory_gib_per_gpu, 1, "GiB")],
        [plain("Fits in memory"), plain(_yes_no(t.fits))],
        [plain("Step time"), number(t.step_time_s, 3, "s")],
        *([[plain("EP all-to-all"), plain(t.moe_dispatch.text())]]
          if t.moe_dispatch is not None else []),
        [plain("Steps"), count(t.steps)],
        [plain("Tokens per second per GPU"), number(t.tokens_per_second_per_gpu, 0)],
        [plain("MFU"), Cell(f"{t.mfu:.1%}", t.mfu)],
        [plain("Compute time"), Cell(hours(t.time_hours) + uncertainty_text(t), t.time_hours)],
    ]
    wall = getattr(t, "wall_clock_hours", None)
    if wall is not None:
        rows.append([plain("Wall-clock time"), Cell(hours(float(wall)), float(wall))])
    rows += [
        [plain("GPU-hours"), number(t.gpu_hours, 0)],
        [plain("Meets deadline"), plain(_yes_no(t.meets_deadline))],
        [plain("Checkpoint size"), number(t.checkpoint_gb, 0, "GB")],
    ]
    return Table(f"wl-{t.name}", f"{t.name}: {t.kind} of {t.model} ({t.params_b:.1f} B params)",
                 [Column("Figure"), Column("Value", True)], rows)


def _inference_table(i: InferenceEstimate) -> Table:
    ep = f" EP{i.ep}" if i.ep > 1 else ""
    rows = [
        [plain("Layout"), plain(f"{i.replicas} replica(s) of TP{i.tp} PP{i.pp}{ep}")],
        [plain("GPUs"), count(i.gpus)],
        [plain(f"Memory per GPU in use at batch {i.max_batch} (weights, its KV cache, runtime)"),
         number(i.memory_gib_per_gpu, 1, "GiB")],
        [plain("Fits in memory"), plain(_yes_no(i.fits))],
        [plain("KV cache per replica (the engine's pool)"),
         Cell(f"{i.kv_cache_tokens:,} tokens", i.kv_cache_tokens)],
        [plain("Meets latency SLOs"), plain(_yes_no(i.meets_slo))],
    ]
    # the other side of an unreachable SLO (sizing.result.ServingOption)
    for o, what in ((i.near_slo, None), (i.without_slo, "with the SLOs set aside")):
        if o is not None:
            what = what or (f"with the SLOs eased to {slo_text(o)} (10 % past the nearest "
                            "reach)")
            rows.append([plain(f"GPUs {what}: {o.replicas} replica(s) of "
                               f"TP{o.tp} PP{o.pp}{f' EP{o.ep}' if o.ep > 1 else ''} at batch "
                               f"{o.batch}, TTFT {o.ttft_ms:,.0f} ms, TPOT {o.tpot_ms:.1f} ms"),
                         count(o.gpus)])
    return Table(f"wl-{i.name}", f"{i.name}: serving {i.model} on {i.engine}",
                 [Column("Figure"), Column("Value", True)], rows)


def _operating_points(i: InferenceEstimate) -> Table:
    """Both points the sizing computes: the largest batch under the SLOs (what the replica
    count is sized for) and batch 1 alone (the interactive floor)."""
    band = uncertainty_text(i)
    rows = []
    for p in i.operating_points:
        tps = Cell(f"{p.output_tokens_per_second:,.0f}"
                   + (band if p.name == "max-throughput" else ""), p.output_tokens_per_second)
        rows.append([plain(p.name), count(p.batch), tps, number(p.ttft_ms, 0),
                     number(p.tpot_ms, 1)])
    return Table(f"op-{i.name}", f"{i.name}: operating points (output tokens/s over all "
                 f"{i.replicas} replica(s))",
                 [Column("Point"), Column("Batch per replica", True),
                  Column("Output tokens/s", True), Column("TTFT ms", True),
                  Column("TPOT ms", True)], rows)


def _runners_up(t: TrainingEstimate) -> Table | None:
    if not t.runners_up:
        return None
    rows = [_candidate_row(c) for c in t.runners_up]
    return Table(f"ru-{t.name}", f"{t.name}: runner-up layouts",
                 [Column("Layout"), Column("GPUs", True), Column("Memory GiB", True),
                  Column("Step s", True), Column("Time", True), Column("Why it lost")], rows)


def _candidate_row(c: Candidate) -> list[Cell]:
    return [
        plain(layout_text(c.layout)), count(c.gpus), number(c.memory_gib_per_gpu, 1),
        number(c.step_time_s, 3) if c.step_time_s is not None else plain("n/a"),
        Cell(hours(c.time_hours), c.time_hours) if c.time_hours is not None else plain("n/a"),
        plain(c.reason),
    ]


def memory_chart(plan: ClusterPlan) -> Figure:
    """Per-GPU memory of every workload, split where the sizing gives the parts."""
    bars = []
    for w in plan.sizing.workloads:
        if isinstance(w, TrainingEstimate):
            parts = tuple((label, float(getattr(w.memory, f))) for label, f in MEMORY_PARTS)
            bars.append(Stack(w.name, tuple(p for p in parts if p[1] > 0)))
        else:
            bars.append(Stack(w.name, (("total (serving)", w.memory_gib_per_gpu),)))
    svg = stacked_bars("chart-memory", "Memory per GPU by workload", "GiB", bars)
    return Figure(svg, "Memory per GPU of the most loaded GPU, by part (GiB).")


def _cause(key: str) -> str:
    """``tp_communication`` -> ``TP communication``."""
    words = key.split("_")
    first = {"tp": "TP", "cp": "CP", "pp": "PP", "dp": "DP", "zero3": "ZeRO-3"}
    return " ".join([first.get(words[0], words[0]), *words[1:]])


def step_chart(plan: ClusterPlan) -> Figure | None:
    """One optimizer step of every training workload, split by cause (when the sizing says)."""
    bars = [Stack(t.name, tuple((_cause(k), v) for k, v in t.step_time_parts_s.items() if v > 0))
            for t in plan.sizing.training if t.step_time_parts_s]
    if not bars:
        return None
    svg = stacked_bars("chart-step", "Step time by cause", "s", bars)
    return Figure(svg, "Time of one optimizer step by cause (s): compute, exposed "
                       "communication, pipeline bubble and overheads.")


def _time_breakdown(plan: ClusterPlan) -> Figure | None:
    """Per-workload wall-clock split, once the sizing result carries one."""
    bars = []
    for t in plan.sizing.training:
        parts = getattr(t, "time_breakdown_hours", None)
        if isinstance(parts, dict) and parts:
            bars.append(Stack(t.name, tuple((k, float(v)) for k, v in parts.items())))
    if not bars:
        return None
    svg = stacked_bars("chart-time", "Time by workload", "hours", bars)
    return Figure(svg, "Wall-clock time by part, per training workload (hours).")


def workloads_section(plan: ClusterPlan) -> Section:
    """A table per workload, the memory chart, runners-up and the sizing's notes."""
    blocks: list[Block] = [
        Para(f"The cluster is sized for {len(plan.sizing.workloads)} workload(s) on "
             f"{model_label(plan.sizing.gpu)}; each is planned over every layout that fits and the "
             "fastest is kept."),
        memory_chart(plan),
    ]
    for chart in (step_chart(plan), _time_breakdown(plan)):
        if chart:
            blocks.append(chart)
    for w in plan.sizing.workloads:
        blocks.append(Heading(w.name, f"wl-h-{w.name}"))
        if isinstance(w, TrainingEstimate):
            blocks.append(_training_table(w))
            runners = _runners_up(w)
            if runners:
                blocks.append(runners)
            if w.rejected:
                rejected = ", ".join(f"{n:,} {why}" for why, n in sorted(w.rejected.items()))
                blocks.append(Para(f"Rejected layouts: {rejected}."))
        else:
            blocks += [_inference_table(w), _operating_points(w)]
        notes: list[Any] = list(w.notes)
        if w.seed is not None:
            seed = (_training_seed(w.seed.gpus, w.seed.hours, w.gpus)
                    if isinstance(w, TrainingEstimate) else _seed_text(w.seed.gpus, None, 1))
            notes.append(f"Seed rule of thumb ({w.seed.formula}): {seed}"
                         + (f"; {w.seed.note}" if w.seed.note else ""))
        if notes:
            blocks.append(Notes(notes))
    return Section("workloads", "Workloads", blocks)


def _training_seed(a100s: float | None, hrs: float | None, gpus: int) -> str:
    """As podplan size words it: '39 GPUs, 58.7 h' read as 39 GPUs taking 58.7 h, while the
    hours are on the plan's GPUs and the count is the A100s the deadline would need."""
    parts = []
    if hrs is not None:
        parts.append(f"{hours(hrs)} on {gpus:,} GPUs")
    if a100s is not None:
        parts.append(f"{a100s:,.0f} A100s for the deadline")
    return "; ".join(parts) or "no figure"


def _seed_text(gpus: float | None, hrs: float | None, decimals: int = 0) -> str:
    """``decimals`` as podplan size prints the GPUs: one for serving (7.46 is not "7
    GPUs"), none for training's A100 count."""
    parts = []
    if gpus is not None:
        parts.append(f"{gpus:,.{decimals}f} GPUs")
    if hrs is not None:
        parts.append(hours(hrs))
    return ", ".join(parts) or "no figure"
