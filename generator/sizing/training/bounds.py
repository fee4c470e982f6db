"""Branch and bound for the EP search: floors under the step times of a frame's variants.

An MoE model with EP searched has many times the frames (tp, cp, pp, dp, ep) of a dense
one, and few of them can rank. Each frame gets a floor per micro-batch size: the step time,
computed by the same model, of a layout at least as fast as every variant of the frame at
that micro-batch size that fits in memory. Frames are taken lowest floor first; once
``KEEP`` layouts are ranked, a frame (or micro-batch size) whose floor is above the
``KEEP``-th best time is skipped: nothing in it can rank. The floor never exceeds a
variant's time because the model is monotone in these directions (property-tested over
random layouts in ``tests/unit/test_planner_bounds.py``):

* recomputing only adds work: no recompute is the fastest level, and full recompute of k
  of a stage's layers is no slower than of more (FLOPs, launches, TP and EP traffic grow);
* memory forces recompute: activations grow with the interleaving's in-flight share
  (vp = 1 holds the least) and shrink as more layers are recomputed, so every variant
  recomputes at least what the roomiest one must (found by the planner's own bisection);
* a micro-batch's time depends on vp only through the pipeline sends, which only add, so
  the micro-batch without them (``unpiped``) is the fastest; the bubble (p-1)/v shrinks
  as v grows;
* a step never gets faster when its micro-batch gets slower: with window w,
  d/dw [(m + (p-1)/v) w + exposed DP(w)] >= m - 1 + dp_exposed >= 0, and the DP
  reduction and the optimizer only add.

Floors are computed in the model's own arithmetic (``assemble``, ``MicrobatchTime``) with
smaller terms in the same places, so rounding cannot lift one above the time it bounds.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import replace
from typing import TYPE_CHECKING

from generator.sizing.model.job import Layout
from generator.sizing.training.layouts import mbs_choices, vp_choices
from generator.sizing.training.steptime import MicrobatchTime, assemble

if TYPE_CHECKING:
    from generator.sizing.training.planner import Searcher
    from generator.sizing.training.scan import Scan


def unpiped(s: Searcher, frame: Layout, mbs: int, rc: str = "none", k: int = 0
            ) -> MicrobatchTime:
    """The frame's micro-batch at vp = 1, size ``mbs`` and recompute ``rc`` (``k`` layers),
    without its pipeline sends (which only add, and are all that depends on where
    pipeline peers sit): kept across sizes by shape (ZeRO-3's depends on dp: not kept)."""
    key = (frame.tp, frame.pp, frame.cp, mbs, rc, k, frame.shard, frame.ep, frame.etp)
    got = s.unpiped.get(key)
    if got is None:
        lay = Layout(frame.tp, frame.pp, frame.dp, frame.cp, 1, mbs, rc, k, frame.shard,
                     frame.ep, frame.etp)
        got = replace(s.microbatch(lay), pp=0.0)
        if s.cache_mb:
            s.unpiped[key] = got
    return got


def interleavings(s: Searcher, pp: int, m: int) -> tuple[tuple[int, ...], float]:
    """The vp choices of a p-stage pipeline running m micro-batches (they depend on m only
    through whether p divides it) and the bubble's share of a micro-batch at the deepest."""
    key = (pp, m % pp == 0)
    got = s.bubbles.get(key)
    if got is None:
        vps = tuple(vp_choices(s.job, pp, m, s.pins, s.fw))
        got = s.bubbles[key] = (vps, (pp - 1) / max(vps))
    return got


Batch = tuple[int, int, tuple[int, ...], float]
"""(micro-batch size b, micro-batches m, vp choices, bubble share at the deepest vp)."""


def batches(s: Searcher, pp: int, dp: int) -> list[Batch]:
    """The micro-batch sizes a p-stage pipeline with d data-parallel ranks can run, smallest
    first (the same for every tp, cp and expert split: kept)."""
    got = s.batches.get((pp, dp))
    if got is None:
        got = s.batches[(pp, dp)] = []
        for mbs in mbs_choices(s.job, dp, s.pins):
            m = max(1, s.job.global_batch // (dp * mbs))
            got.append((mbs, m, *interleavings(s, pp, m)))
    return got


def quick(s: Searcher, frame: Layout) -> float:
    """A floor under every variant of the frame without looking at memory: at each
    micro-batch size, m ``unpiped`` micro-batches without recompute and the bubble at the
    deepest interleaving allowed, plus the fixed overhead. Cheap (everything is kept
    across sizes), so every frame gets it and frames are taken in its order."""
    low = math.inf
    for mbs, m, _, share in batches(s, frame.pp, frame.dp):
        w = unpiped(s, frame, mbs).total
        low = min(low, m * w + share * w)
    return low + s.fw.step_overhead_s


class Shape:
    """A frame's micro-batch size, as far as memory goes without dp: kept across cluster
    sizes, keyed by (tp, pp, cp, shard, ep, etp, b, micro-batches in flight, whether m is a
    multiple of p). Holds the interleavings allowed and the roomiest one's activations per
    recompute level and per number of recomputed layers, computed as asked for."""

    __slots__ = ("acts", "layers", "m", "roomiest", "s", "share", "vps")

    def __init__(self, s: Searcher, frame: Layout, mbs: int, m: int) -> None:
        self.s, self.m = s, m
        self.vps, self.share = interleavings(s, frame.pp, m)
        vp = 1 if 1 in self.vps else max(self.vps)  # vp > 1 holds 1 + (p-1)/(p*v) in flight
        self.roomiest = Layout(frame.tp, frame.pp, frame.dp, frame.cp, vp, mbs, "none", 0,
                               frame.shard, frame.ep, frame.etp)
        self.acts: list[float] = []
        """The roomiest variant's activations at ``s.recomputes[i]``."""
        self.layers: dict[int, float] = {}
        """... and with k layers of each stage recomputed in full."""

    def act(self, i: int) -> float:
        s, acts = self.s, self.acts
        while len(acts) <= i:
            lay = s.with_recompute(self.roomiest, s.recomputes[len(acts)])
            acts.append(s.activations(lay, self.m))
        return acts[i]

    def room(self, k: int) -> float:
        """The roomiest variant's activations with k layers per stage recomputed in full."""
        act = self.layers.get(k)
        if act is None:
            r = self.roomiest
            lay = Layout(r.tp, r.pp, r.dp, r.cp, r.vp, r.mbs, "full", k, r.shard, r.ep, r.etp)
            act = self.layers[k] = self.s.activations(lay, self.m)
        return act

    def lightest(self, base: float) -> int:
        """Index of the lightest recompute level that fits beside ``base`` bytes of states
        (the scan's memory test, in its arithmetic), or -1: then no variant fits."""
        if self.acts and base + self.acts[0] <= self.s.limit:
            return 0
        for i in range(len(self.s.recomputes)):
            if base + self.act(i) <= self.s.limit:
                return i
        return -1

    def fewest(self, base: float) -> int:
        """Fewest layers the roomiest variant must recompute beside ``base`` bytes of
        states (``Searcher.fewest_recomputed``'s bisection and test; 0 = all, as there)."""
        s = self.s
        layers = self.roomiest.stage_layers(s.job.arch.layers)
        lo, hi = 1, layers
        while lo < hi:
            mid = (lo + hi) // 2
            if base + self.room(mid) <= s.limit:
                hi = mid
            else:
                lo = mid + 1
        return 0 if lo >= layers else lo

    def fastest(self, base: float, frame: Layout, lightest: int) -> MicrobatchTime:
        """The fastest micro-batch among the recompute levels that fit beside ``base``,
        from the ``lightest`` that does on (full recompute narrowed to the fewest layers
        where the stack allows it)."""
        s = self.s
        best: MicrobatchTime | None = None
        for i in range(lightest, len(s.recomputes)):
            rc = s.recomputes[i]
            if base + self.act(i) > s.limit:
                continue
            k = (s.pins.recompute_layers or 0) if rc == "full" else 0
            if rc == "full" and s.partial:
                k = self.fewest(base)
            mb = unpiped(s, frame, self.roomiest.mbs, rc, k)
            if best is None or mb.total < best.total:
                best = mb
            if rc == "none":  # no recompute is the fastest level
                break
        assert best is not None, "fastest() of a shape where nothing fits"
        return best


class Row:
    """One micro-batch size of one frame: its shape, the lightest recompute level that fits
    and the fastest micro-batch so far (the one without recompute until ``exact``: memory
    may force more)."""

    __slots__ = ("exact", "fastest", "lightest", "m", "mbs", "shape")

    def __init__(self, mbs: int, m: int, shape: Shape, lightest: int, fastest: MicrobatchTime,
                 exact: bool) -> None:
        self.mbs, self.m, self.shape, self.lightest = mbs, m, shape, lightest
        self.fastest, self.exact = fastest, exact

    def low(self, fixed: float) -> float:
        """The floor without the DP reduction and optimizer (both only add): m
        micro-batches, the bubble and the fixed overhead, summed as ``assemble`` does."""
        w = self.fastest.total
        return self.m * w + self.shape.share * w + fixed


def survey(s: Searcher, frame: Layout, base: float) -> list[Row]:
    """The frame's micro-batch sizes, smallest first, up to the first at which nothing fits
    (activations grow with b: where ``Searcher.scan_shard`` stops), each at its floor
    without recompute: exact where that fits, else until ``refine``."""
    shapes, pp, limit = s.shapes, frame.pp, s.limit
    head = (frame.tp, pp, frame.cp, frame.shard, frame.ep, frame.etp)
    rows = []
    for mbs, m, _, _ in batches(s, pp, frame.dp):
        key = (*head, mbs, min(pp, m), m % pp == 0)
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = Shape(s, frame, mbs, m)
        acts = shape.acts
        lightest = 0 if acts and base + acts[0] <= limit else shape.lightest(base)
        if lightest < 0:
            break
        none = s.recomputes[lightest] == "none"
        rows.append(Row(mbs, m, shape, lightest, unpiped(s, frame, mbs), none))
    return rows


def refine(s: Searcher, frame: Layout, base: float, rows: list[Row], bar: float) -> float:
    """The frame's floor (without DP reduction and optimizer): the lowest row's, after
    giving rows their memory-forced recompute lowest first until the lowest is exact (or
    above ``bar``: then the frame cannot rank anyway). Rows that cannot be the lowest keep
    their cheaper floor: the frame may be dropped before they matter."""
    fixed = s.fw.step_overhead_s
    lows = [row.low(fixed) for row in rows]
    while True:
        low = min(lows)
        i = lows.index(low)
        row = rows[i]
        if row.exact or low > bar:
            return low
        row.fastest = row.shape.fastest(base, frame, row.lightest)
        row.exact = True
        lows[i] = row.low(fixed)


def floor(s: Searcher, frame: Layout, row: Row) -> float:
    """Floor under the step time of every variant of one row: ``assemble`` of its fastest
    micro-batch at the deepest interleaving with the frame's DP reduction and optimizer."""
    dp, optimizer = s.per_step(frame)
    deepest = frame._replace(vp=max(row.shape.vps), mbs=row.mbs)
    return assemble(deepest, row.m, row.fastest, dp, optimizer, s.fw).total


Entry = tuple[float, int, Layout, float, list[Row] | None]


def scan_bounded(s: Searcher, scan: Scan, frames: list[Layout]) -> None:
    """Best first. Every frame whose states fit is queued at its ``quick`` floor. Taken
    from the queue, a frame is surveyed and its rows that may rank get their memory-forced
    recompute (``refine``); it goes back unless it stays the lowest (or nothing is ranked
    yet: the first frames are scanned at once, so that the bar drops early). A frame
    scanned has each row skipped whose floor, now with the frame's DP reduction and
    optimizer, is above the bar; the variants scanned are pruned in turn by
    ``Searcher.lightest``. Once the lowest floor queued is above the bar, nothing left can
    rank: the frames left are counted as slower. The ranking is a full scan's."""
    queue: list[Entry] = []
    for i, frame in enumerate(frames):
        base = s.base(frame)
        if base > s.limit:
            s.too_big(scan, frame, base)
        else:
            queue.append((quick(s, frame), i, frame, base, None))
    heapq.heapify(queue)
    while queue:
        low, i, frame, base, rows = heapq.heappop(queue)
        bar = scan.bar()
        if low > bar:
            for _, _, rest, _, _ in [(low, i, frame, base, rows), *queue]:
                scan.slower += s.variants(rest.pp, rest.dp)
            return
        if rows is None:
            rows = survey(s, frame, base)
            if not rows:  # nothing fits at any micro-batch size: let the scan count them
                s.scan_shard(scan, frame)
                continue
        if not all(row.exact for row in rows):
            low = refine(s, frame, base, rows, bar)
            if bar < math.inf and queue and low > queue[0][0]:
                heapq.heappush(queue, (low, i, frame, base, rows))
                continue
        scan_rows(s, scan, frame, base, rows)


def scan_rows(s: Searcher, scan: Scan, frame: Layout, base: float, rows: list[Row]) -> None:
    """Scan the variants of a frame's rows whose floors are not above the bar."""
    fixed = s.fw.step_overhead_s
    for row in rows:
        if row.low(fixed) > scan.bar():
            continue
        if not row.exact:
            row.fastest = row.shape.fastest(base, frame, row.lightest)
            row.exact = True
            if row.low(fixed) > scan.bar():
                continue
        if floor(s, frame, row) > scan.bar():
            continue
        for vp in row.shape.vps:
            s.lightest(scan, base, frame._replace(vp=vp, mbs=row.mbs), row.m)
