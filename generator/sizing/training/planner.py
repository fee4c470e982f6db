"""Search parallel layouts and cluster sizes for one training job.

For each candidate GPU count the planner walks the layouts ``layouts.py`` enumerates
(honouring every pin), prunes by memory before timing, counts why layouts were rejected and
keeps the best few. Choice: with a deadline, the fewest GPUs that meet it (then the fastest
layout); without one, the fewest GPUs on which anything fits (then the fastest layout). A
job that fits nowhere is an answer, not an exception: the leanest layout is kept so that the
report can say which memory term is too large.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, Layout
from generator.sizing.training.layouts import (
    Pins,
    frames,
    mbs_choices,
    recompute_choices,
    shard_choices,
    vp_choices,
)
from generator.sizing.training.memory import (
    GIB,
    MemoryTerms,
    activation_bytes,
    state_bytes,
    training_memory,
    usable_bytes,
)
from generator.sizing.training.steptime import (
    MicrobatchTime,
    StepTime,
    assemble,
    dp_comm_time,
    microbatch_time,
    optimizer_time,
    step_time,
)

KEEP = 4


@dataclass(frozen=True, slots=True)
class Evaluated:
    """A layout with its memory and step time."""

    layout: Layout
    memory: MemoryTerms
    fits: bool
    step: StepTime

    @property
    def step_s(self) -> float:
        return self.step.total


@dataclass
class SizeResult:
    """The best layouts found at one GPU count, and why the others lost."""

    gpus: int
    ranked: list[Evaluated] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    tightest: Evaluated | None = None
    """The smallest-memory layout when nothing fits (to explain why)."""

    @property
    def best(self) -> Evaluated | None:
        return self.ranked[0] if self.ranked else None


def evaluate(job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency) -> Evaluated:
    """Memory and step time of one layout."""
    mem = training_memory(job, lay, eff)
    fits = mem.total <= usable_bytes(device.memory_bytes, eff)
    return Evaluated(lay, mem, fits, step_time(job, lay, device, node, eff))


class Searcher:
    """Searches one job on one kind of node, caching what does not depend on dp.

    A micro-batch's time and a stage's activations depend on (tp, pp, cp, vp, b, recompute)
    but not on dp (except through min(p, m) in flight, which is part of the key), so a sweep
    over cluster sizes computes each once. ZeRO-3 traffic does depend on dp: not cached.
    """

    def __init__(self, job: Job, device: Device, node: Node, eff: Efficiency, pins: Pins) -> None:
        self.job, self.device, self.node, self.eff, self.pins = job, device, node, eff, pins
        self.fw = eff.framework(job.framework)
        self.limit = usable_bytes(device.memory_bytes, eff)
        self.recomputes = recompute_choices(pins, self.fw)
        self.partial = pins.recompute is None and self.fw.partial_recompute
        """Unpinned full recompute may cover only some layers (pinned "full" means all)."""
        self.cache_mb = self.fw.sharding != "zero3"
        """ZeRO-3 traffic per micro-batch depends on dp: not cached."""
        self.overhead = eff.memory.overhead_gib * GIB
        self._mb: dict[tuple[object, ...], MicrobatchTime] = {}
        self._act: dict[tuple[object, ...], float] = {}
        self._states: dict[tuple[int, ...], tuple[float, float, float]] = {}
        self._per_step: dict[tuple[int, ...], tuple[float, float]] = {}

    def states(
        self, tp: int, pp: int, cp: int, dp: int, shard: int = 0
    ) -> tuple[float, float, float]:
        """(weights, gradients, optimizer) bytes: the same for every b, vp and recompute."""
        key = (tp, pp, cp, dp, shard)
        got = self._states.get(key)
        if got is None:
            lay = Layout(tp, pp, dp, cp, 1, 1, "none", shard=shard)
            got = self._states[key] = state_bytes(self.job, lay, self.fw, self.eff)
        return got

    def activations(self, lay: Layout, m: int | None = None) -> float:
        """Activation bytes, keyed without dp (dp only matters through min(p, m))."""
        in_flight = min(lay.pp, m or lay.microbatches(self.job.global_batch))
        key = (*lay[:2], *lay[3:], in_flight)
        act = self._act.get(key)
        if act is None:
            act = self._act[key] = activation_bytes(self.job, lay, self.eff)
        return act

    def variants(self, pp: int, dp: int) -> int:
        """Layouts of a frame at its smallest micro-batch (those the search would have tried
        before giving up on larger ones), for the rejection count."""
        job, pins = self.job, self.pins
        mbs = min(mbs_choices(job, dp, pins))
        m = max(1, job.global_batch // (dp * mbs))
        return len(vp_choices(job, pp, m, pins, self.fw)) * len(self.recomputes)

    def fewest_recomputed(self, lay: Layout, base: float, m: int) -> Layout:
        """Recompute only as many of each stage's layers as memory requires (bisection:
        memory falls as more layers are recomputed). Megatron's ``recompute_num_layers``."""
        lo, hi = 1, lay.stage_layers(self.job.arch.layers)
        while lo < hi:
            mid = (lo + hi) // 2
            if base + self.activations(lay._replace(recompute_layers=mid), m) <= self.limit:
                hi = mid
            else:
                lo = mid + 1
        return lay if lo >= lay.stage_layers(self.job.arch.layers) else lay._replace(
            recompute_layers=lo)

    def memory(self, lay: Layout) -> MemoryTerms:
        w, g, o = self.states(lay.tp, lay.pp, lay.cp, lay.dp, lay.shard)
        return MemoryTerms(w, g, o, self.activations(lay), self.overhead)

    def step(self, lay: Layout) -> StepTime:
        # A micro-batch does not depend on dp, except through where pipeline peers sit
        # (t*c*d ranks apart: on one node or not), which the key carries.
        stride = min(lay.tp * lay.cp * lay.dp, self.node.gpus)
        key = (*lay[:2], *lay[3:], stride)
        mb = self._mb.get(key) if self.cache_mb else None
        if mb is None:
            mb = microbatch_time(self.job, lay, self.device, self.node, self.eff)
            if self.cache_mb:
                self._mb[key] = mb
        frame = (lay.tp, lay.pp, lay.cp, lay.dp, lay.shard)
        per_step = self._per_step.get(frame)
        if per_step is None:
            per_step = self._per_step[frame] = (
                dp_comm_time(self.job, lay, self.device, self.node, self.eff),
                optimizer_time(self.job, lay, self.device, self.eff),
            )
        m = lay.microbatches(self.job.global_batch)
        return assemble(lay, m, mb, per_step[0], per_step[1], self.fw)

    def size(self, gpus: int) -> SizeResult:
        """Rank the fitting layouts on ``gpus`` GPUs.

        Memory is checked before time, and two orderings prune the rest: recompute levels
        are tried lightest first (the first that fits is the fastest of them), and
        micro-batches smallest first (if none fits at b, none fits at 2b: activations grow
        with b).
        """
        out = SizeResult(gpus)
        scan = _Scan()
        for tp, cp, pp, dp in frames(self.job, gpus, self.node, self.pins, self.eff,
                                     out.rejected):
            self.scan_frame(scan, tp, cp, pp, dp)
        if scan.too_big:
            out.rejected["does not fit in GPU memory"] += scan.too_big
        self.refine_partial(scan)
        fitting = scan.fitting
        ranked = sorted((e.step_s, e.memory.total, i) for i, e in enumerate(fitting))
        out.ranked = [fitting[i] for _, _, i in ranked[:KEEP]]
        if not fitting and scan.tightest is not None:
            lay = scan.tightest[1]
            out.tightest = Evaluated(lay, self.memory(lay), False, self.step(lay))
        return out

    def scan_frame(self, scan: _Scan, tp: int, cp: int, pp: int, dp: int) -> None:
        """Every micro-batch, interleaving and recompute variant of one (tp, cp, pp, dp)."""
        for shard in shard_choices(tp, cp, dp, self.node, self.pins, self.fw):
            self.scan_shard(scan, tp, cp, pp, dp, shard)

    def scan_shard(self, scan: _Scan, tp: int, cp: int, pp: int, dp: int, shard: int) -> None:
        """The variants of one frame with one ZeRO-3 shard group (0 = all of dp)."""
        job, pins = self.job, self.pins
        base = sum(self.states(tp, pp, cp, dp, shard)) + self.overhead
        if base > self.limit:  # weights and optimizer alone overflow: skip the variants
            scan.too_big += self.variants(pp, dp)
            scan.note_tight(base, Layout(tp, pp, dp, cp, 1, 1, self.recomputes[-1], shard=shard))
            return
        for mbs in mbs_choices(job, dp, pins):
            m = max(1, job.global_batch // (dp * mbs))
            fits = [self.lightest(scan, base, Layout(tp, pp, dp, cp, vp, mbs, "none",
                                                     shard=shard), m)
                    for vp in vp_choices(job, pp, m, pins, self.fw)]
            if not any(fits):
                return

    def lightest(self, scan: _Scan, base: float, lay: Layout, m: int) -> bool:
        """Add the lightest recompute level that fits (if any); say whether one did."""
        for rc in self.recomputes:
            lay = lay._replace(recompute=rc)
            if rc == "full" and self.pins.recompute_layers:
                lay = lay._replace(recompute_layers=self.pins.recompute_layers)
            total = base + self.activations(lay, m)
            if total > self.limit:
                scan.too_big += 1
                scan.note_tight(total, lay)
                continue
            scan.fitting.append(Evaluated(lay, self.memory(lay), True, self.step(lay)))
            if rc == "full" and self.partial:
                # No recompute at all is the floor; full recompute costs at most 4/3 of the
                # math and 6/4 of the TP traffic, so that floor is >= 2/3 of this time.
                bound = scan.fitting[-1].step_s * 2 / 3
                scan.partial.append((bound, len(scan.fitting) - 1, base, m))
            return True
        return False

    def refine_partial(self, scan: _Scan) -> None:
        """Turn full recompute into the fewest recomputed layers that fit, but only where
        that could reach the top ranks: a layout's time without any recompute bounds what
        partial recompute can achieve, so the rest are left as they are."""
        fitting = scan.fitting
        times = sorted(e.step_s for e in fitting)  # superseded times stay: a looser bar
        for bound, i, base, m in sorted(scan.partial):
            if len(times) >= KEEP and bound >= times[KEEP - 1]:
                break
            lay = self.fewest_recomputed(fitting[i].layout, base, m)
            fitting[i] = Evaluated(lay, self.memory(lay), True, self.step(lay))
            bisect.insort(times, fitting[i].step_s)


@dataclass
class _Scan:
    """What one size's search collects."""

    fitting: list[Evaluated] = field(default_factory=list)
    tightest: tuple[float, Layout] | None = None
    too_big: int = 0
    partial: list[tuple[float, int, float, int]] = field(default_factory=list)
    """Full-recompute layouts that partial recompute could speed up: (time bound, index in
    ``fitting``, state bytes, micro-batches)."""

    def note_tight(self, total: float, lay: Layout) -> None:
        if self.tightest is None or total < self.tightest[0]:
            self.tightest = (total, lay)


def search_size(
    job: Job, gpus: int, device: Device, node: Node, eff: Efficiency, pins: Pins
) -> SizeResult:
    """Rank the fitting layouts on ``gpus`` GPUs (see ``Searcher.size``)."""
    return Searcher(job, device, node, eff, pins).size(gpus)


@dataclass
class Plan:
    """The planner's answer for one job."""

    chosen: SizeResult
    fits: bool
    meets_deadline: bool | None
    notes: list[str] = field(default_factory=list)


Duration = Callable[[Evaluated], float]
"""Seconds a job takes on an evaluated layout (wall-clock: compute, evaluation, checkpoints
and failures); the deadline is judged on it."""


def plan(
    job: Job, sizes: Iterable[int], device: Device, node: Node, eff: Efficiency,
    pins: Pins | None = None, deadline_s: float | None = None,
    duration: Duration | None = None,
) -> Plan:
    """Pick the GPU count and layout (see the module docstring for the rule)."""
    pins = pins or Pins()
    seconds_of = duration or (lambda e: e.step_s * job.steps)
    fastest: tuple[float, SizeResult] | None = None
    last: SizeResult | None = None
    searcher = Searcher(job, device, node, eff, pins)
    for n in sizes:
        res = last = searcher.size(n)
        if res.best is None:
            continue
        if deadline_s is None:
            return Plan(res, True, None)
        seconds = seconds_of(res.best)
        if seconds <= deadline_s:
            return Plan(res, True, True)
        if fastest is None or seconds < fastest[0]:
            fastest = (seconds, res)
    if fastest is not None and deadline_s is not None:
        seconds, res = fastest
        note = (f"no size meets the {deadline_s / 3600:.3g} h deadline; the fastest found is "
                f"{res.gpus} GPUs at {seconds / 3600:.3g} h wall-clock")
        return Plan(res, True, False, [note])
    if last is None:
        raise ValueError("plan() needs at least one candidate size")
    return Plan(last, False, None if deadline_s is None else False)
