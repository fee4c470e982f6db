"""``format_table(result)``: the readable report behind ``podplan size``.

Fixed-width text, one block per workload in spec order, then the cluster line. Numbers are
rounded for reading; ``SizingResult.to_json()`` is the machine contract.
"""

from __future__ import annotations

import math

from generator.catalog.names import model_label
from generator.sizing.result import (
    Candidate,
    InferenceEstimate,
    ServingOption,
    SizingResult,
    TrainingEstimate,
    TrainingLayout,
    Uncertainty,
)

RULE = "-" * 78


def slo_misses(result: SizingResult) -> list[str]:
    """One sentence per serving workload sized at its closest miss of the latency SLOs: the
    plan buys GPUs for a TPOT/TTFT it does not reach (plan's warning, report's summary), and
    what the load needs with the SLOs set aside, so a small miss does not read as the only
    answer."""
    missed = [w for w in result.inference if w.fits and w.meets_slo is False]
    return [f"{w.name} misses its latency SLOs (sized at batch {w.max_batch}: TPOT "
            f"{w.tpot_ms:.1f} ms, TTFT {w.ttft_ms:.0f} ms); the plan sizes {w.gpus:,} GPUs for "
            "it anyway" + without_slo_text(w) for w in missed]


def without_slo_text(w: InferenceEstimate) -> str:
    """``; 32 GPUs at TPOT <= 71.2 ms ...; 16 GPUs with the SLOs set aside ...`` or nothing."""
    out = ""
    if (n := w.near_slo) is not None:
        out += (f"; {n.gpus:,} GPUs serve the load at {slo_text(n)} (10 % past the nearest "
                f"reach, batch {n.batch})")
    if (f := w.without_slo) is not None:
        out += (f"; {f.gpus:,} with the SLOs set aside (batch {f.batch}: TPOT "
                f"{f.tpot_ms:.1f} ms, TTFT {f.ttft_ms:,.0f} ms)")
    return out


def slo_text(o: ServingOption) -> str:
    """``TPOT <= 58.4 ms, TTFT <= 3000 ms``: the SLOs an eased sizing meets."""
    parts = [] if o.tpot_slo_ms is None else [f"TPOT <= {o.tpot_slo_ms:g} ms"]
    parts += [] if o.ttft_slo_ms is None else [f"TTFT <= {o.ttft_slo_ms:g} ms"]
    return ", ".join(parts)


def option_text(o: ServingOption) -> str:
    """``32  (2 replica(s) x TP8 PP2) at batch 39; TTFT 574 ms, TPOT 71.1 ms per request``"""
    return (f"{o.gpus}  ({o.replicas} replica(s) x {_layout(o.tp, o.pp, o.ep)}) at batch "
            f"{o.batch}; TTFT {o.ttft_ms:,.0f} ms, TPOT {o.tpot_ms:.1f} ms per request")


def layout_text(p: TrainingLayout) -> str:
    """``TP4 PP4 DP2 CP1 VP5 MBS1 recompute=none`` (plus the HSDP shard group if any)."""
    partial = f" ({p.recompute_layers} layers/stage)" if p.recompute_layers else ""
    hsdp = f" HSDP shard {p.shard}" if p.shard else ""
    hsdp += f" EP{p.ep} ETP{p.etp}" if p.ep > 1 else ""
    return (f"TP{p.tp} PP{p.pp} DP{p.dp} CP{p.cp} VP{p.vp} MBS{p.micro_batch_size} "
            f"recompute={p.recompute}{partial}{hsdp}")


def _hours(h: float) -> str:
    """Hours with at least three significant figures (days too for long runs)."""
    if h >= 48:
        return f"{h:,.0f} h ({h / 24:,.1f} d)"
    return f"{_sig3(h)} h"


def _sig3(x: float) -> str:
    """``x`` with three significant figures, no exponent and no dangling dot."""
    if x == 0:
        return "0"
    if x >= 1000:
        return f"{x:,.0f}"
    text = f"{x:#.3g}"
    if "e" in text:
        text = f"{x:.{max(0, 2 - math.floor(math.log10(abs(x))))}f}"
    return text.rstrip(".")


def _tokens(n: float) -> str:
    """A token count in words an architect reads at a glance ('2.00 B', not '2e+09')."""
    for scale, word in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if n >= scale:
            return f"{_sig3(n / scale)} {word}"
    return f"{n:,.0f}"


def _unit(h: float) -> tuple[str, float]:
    """The unit a duration reads best in: hours, minutes or seconds."""
    if h >= 100 / 60:
        return "h", 1.0
    return ("min", 60.0) if h >= 100 / 3600 else ("s", 3600.0)


def _band(u: Uncertainty | None, prefix: str = "") -> str:
    if u is None:
        return f" ({prefix.rstrip('; ')})" if prefix else ""
    what = (f"{u.similar_measurements} similar measurement"
            f"{'s' if u.similar_measurements != 1 else ''}" if u.calibrated
            else "outside calibration")
    return f" ({prefix}{_pct(u.low_pct)}/{_pct(u.high_pct)}, {what})"


def _pct(x: float) -> str:
    return f"{'+' if x >= 0 else chr(0x2212)}{abs(x):.0f} %"


def _time_lines(t: TrainingEstimate) -> list[str]:
    """``3.1 h (-12 %/+18 %, 14 similar measurements)`` and where the hours go."""
    deadline = {None: "none", True: "met", False: "MISSED"}[t.meets_deadline]
    wall = t.wall_clock_hours
    unit, scale = _unit(wall)
    short = "" if unit == "h" else f"{_sig3(wall * scale)} {unit}; "
    parts = [f"{label} {_sig3(h * scale)}" for label, h in (
        ("compute", t.time_hours), ("evaluation", t.evaluation_hours),
        ("checkpoints", t.checkpoint_hours), ("failures", t.failure_hours))]
    return [
        _kv("wall-clock", f"{_hours(wall)}{_band(t.uncertainty, short)}, deadline {deadline}"),
        _kv("", " + ".join(parts) + f" {unit}; {_sig3(t.gpu_hours)} GPU-h of compute"),
    ]


def _kv(label: str, value: str) -> str:
    return f"  {label:<22}{value}"


def _candidate(c: Candidate) -> str:
    hours = "" if c.time_hours is None else f", {_hours(c.time_hours)}"
    step = "" if c.step_time_s is None else f"{c.step_time_s:#.4g} s/step"
    memory = f"{c.memory_gib_per_gpu:.1f} GiB"
    return f"    {layout_text(c.layout)}: {step}{hours}, {memory} ({c.reason})"


def training_block(t: TrainingEstimate) -> list[str]:
    """Lines for one training workload."""
    m = t.memory
    lines = [
        f"{t.name}  [{t.kind}, {t.model}, {t.params_b:,.1f} B params]",
        _kv("GPUs / layout", f"{t.gpus}  {layout_text(t.parallelism)}"),
        _kv("memory per GPU", f"{t.memory_gib_per_gpu:.1f} GiB"
            f"{'' if t.fits else '  DOES NOT FIT'}  (weights {m.weights_gib:.1f}, grads "
            f"{m.gradients_gib:.1f}, optimizer {m.optimizer_gib:.1f}, activations "
            f"{m.activations_gib:.1f}, overhead {m.overhead_gib:.1f})"),
        _kv("step time", f"{t.step_time_s:#.4g} s x {t.steps:,} steps"),
        _kv("tokens/s per GPU", f"{t.tokens_per_second_per_gpu:,.0f}  (MFU {100 * t.mfu:.1f} %)"),
        _kv("processed tokens", _tokens(t.processed_tokens)),
        *_time_lines(t),
        _kv("checkpoint", f"{t.checkpoint_gb:,.1f} GB"),
    ]
    if t.moe_dispatch is not None:
        lines.insert(4, _kv("EP all-to-all", t.moe_dispatch.text()))
    if t.seed is not None:
        s = t.seed
        parts = []
        if s.hours is not None:
            parts.append(f"{_hours(s.hours)} on {t.gpus} GPUs")
        if s.gpus is not None:
            parts.append(f"{s.gpus:,.0f} A100s for the deadline")
        lines.append(_kv("seed rule", "; ".join(parts) + f"  [{s.note}]"))
    if t.runners_up:
        lines.append("  runners-up:")
        lines += [_candidate(c) for c in t.runners_up]
    if t.rejected:
        counts = ", ".join(f"{n:,} {why}" for why, n in sorted(t.rejected.items()))
        lines.append(_kv("rejected layouts", counts))
    lines += [f"  note: {n}" for n in t.notes]
    return lines


def _layout(tp: int, pp: int, ep: int) -> str:
    return f"TP{tp} PP{pp}" + (f" EP{ep}" if ep > 1 else "")


def inference_block(i: InferenceEstimate) -> list[str]:
    """Lines for one inference workload: layout, KV capacity and both operating points."""
    slo = {None: "none given", True: "met", False: "MISSED"}[i.meets_slo]
    layout = _layout(i.tp, i.pp, i.ep)
    lines = [
        f"{i.name}  [inference, {i.model}, {i.engine}]",
        _kv("GPUs", f"{i.gpus}  ({i.replicas} replica(s) x {layout})"),
        # the figure is what the busiest batch uses, not what the engine reserves: '35.9 GiB'
        # beside a KV pool of 1.9 M tokens read as a GPU two-thirds empty
        _kv("memory per GPU",
            f"{i.memory_gib_per_gpu:.1f} GiB in use at batch {i.max_batch} (weights, its KV "
            f"cache, runtime){'' if i.fits else '  DOES NOT FIT'}"),
        _kv("KV cache", f"{i.kv_cache_tokens:,} tokens per replica (the engine's pool)"),
    ]
    for p in i.operating_points:
        band = _band(i.uncertainty) if p.name == "max-throughput" else ""
        lines.append(_kv(f"{p.name}", f"batch {p.batch} per replica; "
                         f"{p.output_tokens_per_second:,.0f} output tokens/s in all "
                         f"{i.replicas} replica(s){band}; TTFT {p.ttft_ms:,.0f} ms, "
                         f"TPOT {p.tpot_ms:.1f} ms per request"))
    lines.append(_kv("latency SLO", slo))
    if i.near_slo is not None:
        lines.append(_kv("SLOs eased 10 %", f"{option_text(i.near_slo)}  [under "
                         f"{slo_text(i.near_slo)}: 10 % past the nearest reach]"))
    if i.without_slo is not None:
        lines.append(_kv("without the SLOs", option_text(i.without_slo)))
    if i.seed is not None and i.seed.gpus is not None:
        lines.append(_kv("seed rule", f"{i.seed.gpus:,.1f} GPUs  [{i.seed.note}]"))
    lines += [f"  note: {n}" for n in i.notes]
    return lines


def _gpus_text(result: SizingResult) -> str:
    """``2 x xe9680 (8 x ...) = 16 GPUs``, and when hardware.gpus is not whole servers, the
    count sized on: '= 12 GPUs' after '2 x (8 x ...)' does not add up."""
    bought = result.nodes * result.gpus_per_node
    if bought == result.gpus:
        return f"{result.gpus} GPUs"
    return f"{bought} GPUs, sized on {result.gpus}"


def format_table(result: SizingResult) -> str:
    """The whole report."""
    lines = [
        f"podplan size: {result.name}",
        f"cluster: {result.nodes} x {model_label(result.server)} ({result.gpus_per_node} x "
        f"{model_label(result.gpu)}) = "
        f"{_gpus_text(result)}{'' if result.fits else '  -- SOME WORKLOADS DO NOT FIT'}",
        RULE,
    ]
    for w in result.workloads:
        block = training_block(w) if isinstance(w, TrainingEstimate) else inference_block(w)
        lines += [*block, RULE]
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines).rstrip("-\n") + "\n"
