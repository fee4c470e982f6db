"""Search parallel layouts and cluster sizes for one training job.

For each candidate GPU count the planner walks the layouts ``layouts.py`` enumerates
(honouring every pin), prunes by memory before timing, counts why layouts were rejected and
keeps the best few; an MoE search with EP, many times larger, is branch and bound
(``bounds.py``: skips what provably cannot rank, same ranking as the exhaustive mode).
Choice: with a deadline, the fewest GPUs that meet it (then the fastest
layout); without one, the fewest GPUs on which anything fits (then the fastest layout). A
job that fits nowhere is an answer, not an exception: the leanest layout is kept so that the
report can say which memory term is too large.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from generator.gcpause import gc_paused
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, Layout
from generator.sizing.training import bounds
from generator.sizing.training.layouts import (
    Pins,
    expert_choices,
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
from generator.sizing.training.scan import KEEP, Scan
from generator.sizing.training.scan import Evaluated as Evaluated  # re-exported
from generator.sizing.training.steptime import (
    MicrobatchTime,
    StepTime,
    assemble,
    dp_comm_time,
    microbatch_time,
    optimizer_time,
    schedule_flushes,
    step_time,
)


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
    ``exhaustive`` (for tests): no branch and bound, and every full-recompute layout is
    narrowed to its fewest layers, to check that the pruned search ranks the same.
    """

    def __init__(
        self, job: Job, device: Device, node: Node, eff: Efficiency, pins: Pins,
        exhaustive: bool = False,
    ) -> None:
        self.job, self.device, self.node, self.eff, self.pins = job, device, node, eff, pins
        self.exhaustive = exhaustive
        self.fw = eff.framework(job.framework)
        self.limit = usable_bytes(device.memory_bytes, eff)
        self.recomputes = recompute_choices(pins, self.fw)
        self.partial = pins.recompute is None and self.fw.partial_recompute
        """Unpinned full recompute may cover only some layers (pinned "full" means all)."""
        self.cache_mb = self.fw.sharding != "zero3"
        """ZeRO-3 traffic per micro-batch depends on dp: not cached."""
        self.overhead = eff.memory.overhead_gib * GIB
        self.evaluated = 0
        """Step times computed (for the speed benchmark)."""
        self._mb: dict[tuple[object, ...], MicrobatchTime] = {}
        self._act: dict[tuple[object, ...], float] = {}
        self._states: dict[tuple[int, ...], tuple[float, float, float]] = {}
        self._per_step: dict[tuple[int, ...], tuple[float, float]] = {}
        self._fewest: dict[tuple[Layout, int], Layout] = {}
        self._variants: dict[tuple[int, int], int] = {}
        self.shapes: dict[tuple[object, ...], bounds.Shape] = {}
        """The branch and bound's micro-batch shapes, kept across sizes."""
        self.unpiped: dict[tuple[object, ...], MicrobatchTime] = {}
        self.bubbles: dict[tuple[int, bool], tuple[tuple[int, ...], float]] = {}
        self.batches: dict[tuple[int, int], list[bounds.Batch]] = {}

    def states(
        self, tp: int, pp: int, cp: int, dp: int, shard: int = 0, ep: int = 1, etp: int = 0
    ) -> tuple[float, float, float]:
        """(weights, gradients, optimizer) bytes: the same for every b, vp and recompute."""
        key = (tp, pp, cp, dp, shard, ep, etp)
        got = self._states.get(key)
        if got is None:
            lay = Layout(tp, pp, dp, cp, 1, 1, "none", shard=shard, ep=ep, etp=etp)
            got = self._states[key] = state_bytes(self.job, lay, self.fw, self.eff)
        return got

    def base(self, frame: Layout) -> float:
        """States plus the fixed overhead: what a frame holds before any activation."""
        return sum(self.states(frame.tp, frame.pp, frame.cp, frame.dp, frame.shard, frame.ep,
                               frame.etp)) + self.overhead

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
        got = self._variants.get((pp, dp))
        if got is None:
            job, pins = self.job, self.pins
            mbs = min(mbs_choices(job, dp, pins))
            m = max(1, job.global_batch // (dp * mbs))
            got = self._variants[(pp, dp)] = len(vp_choices(job, pp, m, pins, self.fw)) * len(
                self.recomputes)
        return got

    def with_recompute(self, lay: Layout, rc: str) -> Layout:
        """``lay`` at recompute level ``rc`` (a pinned layer count goes with "full")."""
        if rc == "full" and self.pins.recompute_layers:
            return lay._replace(recompute=rc, recompute_layers=self.pins.recompute_layers)
        return lay._replace(recompute=rc)

    def fewest_recomputed(self, lay: Layout, base: float, m: int) -> Layout:
        """Recompute only as many of each stage's layers as memory requires (bisection:
        memory falls as more layers are recomputed). Megatron's ``recompute_num_layers``.
        ``base`` is the layout's ``base``; memoised (the bound and the refinement ask)."""
        got = self._fewest.get((lay, m))
        if got is not None:
            return got
        lo, hi = 1, lay.stage_layers(self.job.arch.layers)
        while lo < hi:
            mid = (lo + hi) // 2
            if base + self.activations(lay._replace(recompute_layers=mid), m) <= self.limit:
                hi = mid
            else:
                lo = mid + 1
        got = self._fewest[(lay, m)] = lay if lo >= lay.stage_layers(
            self.job.arch.layers) else lay._replace(recompute_layers=lo)
        return got

    def memory(self, lay: Layout) -> MemoryTerms:
        w, g, o = self.states(lay.tp, lay.pp, lay.cp, lay.dp, lay.shard, lay.ep, lay.etp)
        return MemoryTerms(w, g, o, self.activations(lay), self.overhead)

    def microbatch(self, lay: Layout) -> MicrobatchTime:
        # A micro-batch does not depend on dp, except through where pipeline peers sit
        # (t*c*d ranks apart: on one node or not), which the key carries.
        stride = min(lay.tp * lay.cp * lay.dp, self.node.gpus)
        key = (*lay[:2], *lay[3:], stride)
        mb = self._mb.get(key) if self.cache_mb else None
        if mb is None:
            mb = microbatch_time(self.job, lay, self.device, self.node, self.eff)
            if self.cache_mb:
                self._mb[key] = mb
        return mb

    def per_step(self, lay: Layout) -> tuple[float, float]:
        """(DP reduction, optimizer) seconds: the same for every variant of a frame."""
        frame = (lay.tp, lay.pp, lay.cp, lay.dp, lay.shard, lay.ep, lay.etp)
        got = self._per_step.get(frame)
        if got is None:
            got = self._per_step[frame] = (
                dp_comm_time(self.job, lay, self.device, self.node, self.eff),
                optimizer_time(self.job, lay, self.device, self.eff),
            )
        return got

    def step(self, lay: Layout) -> StepTime:
        self.evaluated += 1
        dp, optimizer = self.per_step(lay)
        m = lay.microbatches(self.job.global_batch)
        return assemble(lay, m, self.microbatch(lay), dp, optimizer, self.fw,
                        schedule_flushes(self.job, lay, self.fw))

    def size(self, gpus: int) -> SizeResult:
        """Rank the fitting layouts on ``gpus`` GPUs.

        Memory is checked before time, and two orderings prune the rest: recompute levels
        are tried lightest first (the first that fits is the fastest of them), and
        micro-batches smallest first (if none fits at b, none fits at 2b: activations grow
        with b).
        """
        out = SizeResult(gpus)
        scan = Scan()
        shards = [frame for tp, cp, pp, dp in frames(self.job, gpus, self.node, self.pins,
                                                    self.eff, out.rejected)
                  for frame in self.frame_shards(tp, cp, pp, dp)]
        if self.bounded:
            scan.prune = True
            bounds.scan_bounded(self, scan, shards)
        else:
            for frame in shards:
                self.scan_shard(scan, frame)
        if scan.too_big:
            out.rejected["does not fit in GPU memory"] += scan.too_big
        if scan.slower:
            out.rejected["slower than the best found (bound)"] += scan.slower
        self.refine_partial(scan)
        fitting = scan.fitting
        ranked = sorted((e.step_s, e.memory.total, i) for i, e in enumerate(fitting))
        out.ranked = [fitting[i] for _, _, i in ranked[:KEEP]]
        if not fitting and scan.tightest is not None:
            lay = scan.tightest[1]
            out.tightest = Evaluated(lay, self.memory(lay), False, self.step(lay))
        return out

    def frame_shards(self, tp: int, cp: int, pp: int, dp: int) -> list[Layout]:
        """One (tp, cp, pp, dp) frame with each ZeRO-3 shard group and expert split."""
        experts = expert_choices(self.job, tp, cp, dp, self.pins, self.fw)
        return [Layout(tp, pp, dp, cp, 1, 1, "none", shard=shard, ep=ep, etp=etp)
                for shard in shard_choices(tp, cp, dp, self.node, self.pins, self.fw)
                for ep, etp in experts]

    @property
    def bounded(self) -> bool:
        """Whether the search is branch-and-bound (``bounds.scan_bounded``): an MoE model
        with EP searched, whose expert choices multiply the frames (a dense search keeps
        its plain order); never in the exhaustive mode."""
        return (self.job.arch.moe and self.pins.ep is None and self.fw.runs("ep")
                and not self.exhaustive)

    def too_big(self, scan: Scan, frame: Layout, base: float) -> None:
        """Count a frame whose states alone overflow (all its variants are too big)."""
        scan.too_big += self.variants(frame.pp, frame.dp)
        if scan.tightest is None or base < scan.tightest[0]:
            scan.note_tight(base, frame._replace(recompute=self.recomputes[-1]))

    def scan_shard(self, scan: Scan, frame: Layout) -> None:
        """The variants of one frame with one ZeRO-3 shard group (0 = all of dp) and one
        expert split."""
        job, pins = self.job, self.pins
        pp, dp = frame.pp, frame.dp
        base = self.base(frame)
        if base > self.limit:  # weights and optimizer alone overflow: skip the variants
            self.too_big(scan, frame, base)
            return
        for mbs in mbs_choices(job, dp, pins):
            m = max(1, job.global_batch // (dp * mbs))
            fits = [self.lightest(scan, base, frame._replace(vp=vp, mbs=mbs), m)
                    for vp in vp_choices(job, pp, m, pins, self.fw)]
            if not any(fits):
                return

    def lightest(self, scan: Scan, base: float, lay: Layout, m: int) -> bool:
        """Add the lightest recompute level that fits (if any); say whether one did. When
        the scan prunes, a layout whose time (with the fewest recomputed layers that fit)
        is above the ranking's bar is not kept: it cannot rank."""
        for rc in self.recomputes:
            lay = self.with_recompute(lay, rc)
            total = base + self.activations(lay, m)
            if total > self.limit:
                scan.too_big += 1
                scan.note_tight(total, lay)
                continue
            refine = rc == "full" and self.partial
            if scan.prune:
                fastest = self.fewest_recomputed(lay, base, m) if refine else lay
                step = self.step(fastest)
                if step.total > scan.bar():
                    return True
                if refine:
                    step = self.step(lay)
            else:
                step = self.step(lay)
            scan.add(Evaluated(lay, self.memory(lay), True, step))
            if refine:
                # No recompute at all is the floor; full recompute costs at most 4/3 of the
                # math and 6/4 of the TP traffic, so that floor is >= 2/3 of this time.
                bound = 0.0 if self.exhaustive else step.total * 2 / 3
                scan.partial.append((bound, len(scan.fitting) - 1, base, m))
            return True
        return False

    def refine_partial(self, scan: Scan) -> None:
        """Turn full recompute into the fewest recomputed layers that fit, but only where
        that could reach the top ranks: a layout's time without any recompute bounds what
        partial recompute can achieve, so the rest are left as they are. The bar is the
        KEEP-th best of the layouts' current times, one per layout (refining one
        replaces its time: counting both would let fewer than KEEP layouts make the bar)."""
        fitting = scan.fitting
        times = sorted(e.step_s for e in fitting)
        for bound, i, base, m in sorted(scan.partial):
            if len(times) >= KEEP and bound >= times[KEEP - 1]:
                break
            lay = self.fewest_recomputed(fitting[i].layout, base, m)
            del times[bisect.bisect_left(times, fitting[i].step_s)]
            fitting[i] = Evaluated(lay, self.memory(lay), True, self.step(lay))
            bisect.insort(times, fitting[i].step_s)


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
    with gc_paused():
        return _plan(job, sizes, Searcher(job, device, node, eff, pins), deadline_s,
                     duration or (lambda e: e.step_s * job.steps))


def _hours(h: float) -> str:
    """'2,578 h' or '5.16 h': hours without an exponent (notes are read, not parsed)."""
    return f"{h:,.0f} h" if h >= 100 else f"{h:.3g} h"


def _plan(
    job: Job, sizes: Iterable[int], searcher: Searcher, deadline_s: float | None,
    seconds_of: Duration,
) -> Plan:
    fastest: tuple[float, SizeResult] | None = None
    last: SizeResult | None = None
    tried = 0
    for n in sizes:
        tried += 1
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
        took = f"{res.gpus} GPUs at {_hours(seconds / 3600)} wall-clock"
        note = (f"no size meets the {_hours(deadline_s / 3600)} deadline; the fastest found is "
                f"{took}" if tried > 1 else
                f"the {_hours(deadline_s / 3600)} deadline is missed on the fixed size: {took}")
        return Plan(res, True, False, [note])
    if last is None:
        raise ValueError("plan() needs at least one candidate size")
    return Plan(last, False, None if deadline_s is None else False)
