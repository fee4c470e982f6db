"""The built compute fabric, kept on a re-plan while it still serves the plan.

The fabric rules (``network.fabric.shape_fabric``) derive leaves, spines and cores from the
node count alone, so a re-plan against a built cluster could pick another shape for the same
nodes (a rule fixed between releases: 29 nodes once got 29 spines, now 4) or for a few more
(20 -> 24 nodes on 8 rails: 4 spines -> 3) and move cables on a live fabric. With a plan
lock the planner starts from the built fabric instead:

* **Kept while it serves.** The locked leaves (same rail grouping), spines and cores are kept,
  names and cables included, whenever they carry the new node count non-blocking: every leaf
  at least as many uplinks as node ports, the same number to each spine, node ports + uplinks
  within the leaf's 64 ports, and the spines' ports enough for all uplinks (cores likewise
  for the spines in three tiers). Built uplinks are never taken away.
* **Shrink keeps it.** Fewer nodes leave the built leaves, spines and cores in place (their
  ports free for nodes to come); a note says the capacity stays. ``--fresh`` plans it anew.
* **Growth adds.** When the built fabric cannot take the nodes, it grows to the fewest
  switches that can, never fewer than built: a new scalable unit brings its own leaves and
  their cables; spines are added only when the built ones run out of ports, keeping their
  names and, per leaf, as many of their cables as the new even spread allows (with S -> S'
  spines a built leaf moves 32 x (1 - S/S') uplinks to the new spines; ``lock.ports``
  keeps the rest on their ports). The DGX SuperPOD RA sizes spines the same way ahead of
  growth (Table 4: 16 spines at 3 SU as at 4 SU), so 3 -> 4 SU only adds.
* **Regrouping a small fabric.** A collapsed fabric (``ib-leaf-NN``, several rails per
  leaf) that must put fewer rails on each leaf (8 -> 9 nodes: two leaves back to back ->
  four leaves and spines) keeps its leaves: each keeps its first rails and their node
  cables, new leaves take the others (``rail_leaf``), so only the cables of the rails that
  leave a leaf move (half of them for 4 -> 2 rails per leaf, where the rules' rail order
  moves 3/4). Such leaves keep their names as SU 1 when the fabric grows to more SUs or a
  third tier. A third tier re-cables every leaf uplink (the spines are new); the plan
  notes list every cable that moves, and ``_third_tier`` says it in one sentence: the
  two-tier limit, the leaf uplinks that move, the built spines retired (freed, the model
  the new spines use), node cables staying, and ``fabric.growth_nodes`` as the way to
  build the third tier up front.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace

from generator.plan.lock.model import Lock
from generator.plan.lock.text import natural
from generator.plan.network.fabric import FabricShape, shape_fabric

_SU = re.compile(r"^ib-leaf-su(\d+)-r\d+$")


@dataclass(frozen=True)
class Built:
    """The locked compute fabric's counts: what the planner may keep."""

    leaves: int
    spines: int
    cores: int
    sus: int
    rails: int
    rails_per_leaf: int
    leaf_up: int
    """Uplinks (or back-to-back links, for two leaves) of the busiest leaf."""
    su_named: bool
    """Leaves named per SU and rail (``ib-leaf-suNN-rR``), not collapsed (``ib-leaf-NN``)."""
    rail_leaf: tuple[int, ...] = ()
    """Collapsed leaves: the leaf index (name order) of each rail, from the node cables."""


def built_fabric(lock: Lock | None) -> Built | None:
    """The fabric the lock records, or None when it has none."""
    if lock is None:
        return None
    leaves = {d.name for d in lock.with_role("compute-leaf")}
    if not leaves:
        return None
    spines = {d.name for d in lock.with_role("compute-spine")}
    cores = lock.with_role("compute-core")
    sus = {int(m.group(1)) for n in leaves if (m := _SU.match(n))}
    collapsed = {n for n in leaves if not _SU.match(n)}  # SU 1 of a grown one included
    rails = len(lock.rails)
    up = Counter(c.a for c in lock.cables if c.a in leaves and (c.b in spines or c.b in leaves))
    per_leaf = 1 if sus else max(1, rails // len(leaves))
    return Built(len(leaves), len(spines), len(cores), max(sus, default=1), rails, per_leaf,
                 max(up.values(), default=0), not collapsed,
                 _rail_leaf(lock, collapsed, rails) if collapsed else ())


def _rail_leaf(lock: Lock, leaves: set[str], rails: int) -> tuple[int, ...]:
    """The leaf (index in name order) each rail's node cables go to; () when unclear."""
    index = {name: i for i, name in enumerate(sorted(leaves, key=natural))}
    found: dict[int, int] = {}
    for c in lock.cables:
        if c.b in index and c.a_port.startswith("mlx5_") and c.a_port[5:].isdigit():
            found.setdefault(int(c.a_port[5:]), index[c.b])
    got = tuple(found.get(r, -1) for r in range(rails))
    return got if -1 not in got else ()


def _split(b: Built, q: int) -> tuple[int, ...]:
    """A collapsed fabric regrouped to ``q`` rails per leaf: each built leaf keeps its first
    ``q`` rails (and their node cables); its other rails go to new leaves, numbered after."""
    old = b.rail_leaf or tuple(r // b.rails_per_leaf for r in range(b.rails))
    out = [0] * b.rails
    for li in range(b.leaves):
        mine = [r for r in range(b.rails) if old[r] == li]
        for c in range(0, len(mine), q):
            for r in mine[c : c + q]:
                out[r] = li if c == 0 else b.leaves * (c // q) + li
    return tuple(out)


def _base(b: Built, fresh: FabricShape) -> FabricShape:
    """The rules' shape with at least the built leaves: ``fresh``, or on a shrink the shape
    of the built scalable units (designed for the nodes planned, so only their slots are
    held free), or of the fewest nodes that keep a collapsed fabric's rail grouping."""
    d, k, su = fresh.designed_nodes, fresh.radix, fresh.su_nodes
    if b.sus > 1 and math.ceil(d / su) < b.sus:
        return replace(shape_fabric(b.sus * su, b.rails, k, 0), designed_nodes=d)
    if d > su:
        return fresh
    for x in range(d, su + 1):
        s = shape_fabric(x, b.rails, k, 0)
        if s.leaves == b.leaves and s.rails_per_leaf == b.rails_per_leaf:
            return s
    return fresh


def _spread(up: int, spines: int) -> int:
    return -(-up // spines) * spines


def _with_spines(base: FabricShape, b: Built) -> FabricShape | None:
    """``base`` with the fewest spines, at least the built ones, that take every leaf's
    uplinks evenly (never fewer uplinks than built); None when none does in two tiers."""
    down, k = base.leaf_down, base.radix
    for s in range(max(1, b.spines), k + 1):
        up = _spread(max(down, b.leaf_up), s)
        if s == base.spines_per_pod:
            up = max(up, base.leaf_up)
        if down + up <= k and s * k >= base.leaves * up:
            return replace(base, leaf_up=up, spines_per_pod=s)
    return None


def kept_shape(fresh: FabricShape, lock: Lock | None) -> FabricShape:
    """The fabric to plan: the built one where it serves, grown where it must (module doc);
    ``fresh`` (the rules' shape for the designed nodes) without a locked fabric."""
    b = built_fabric(lock)
    if b is None or fresh.style == "none" or fresh.rails != b.rails:
        return fresh
    base = _base(b, fresh)
    same_group = base.rails_per_leaf == b.rails_per_leaf and base.leaves >= b.leaves
    built_style = "clos3" if b.cores else "clos2" if b.spines else "pair" if b.leaves == 2 else ""
    shape: FabricShape | None = None
    if not same_group or base.style != built_style:
        shape = None
    elif base.style == "pair":
        up = max(base.leaf_up, b.leaf_up)
        shape = replace(base, leaf_up=up) if base.leaf_down + up <= base.radix else None
    elif base.style == "clos2":
        shape = _with_spines(base, b)
    elif base.style == "clos3":
        per_plane = max(base.cores_per_plane, b.cores // max(1, base.spines_per_pod))
        shape = replace(base, cores_per_plane=per_plane)
    if shape is None:
        return _regroup(b, fresh)
    if not b.su_named and b.rail_leaf:  # collapsed names stay, with their rails
        standard = tuple(r // shape.rails_per_leaf for r in range(b.rails))
        if b.rail_leaf != standard or shape.rails_per_leaf == 1:
            shape = replace(shape, rail_leaf=b.rail_leaf)
    return replace(shape, lock_note=_note(b, shape, fresh))


def _regroup(b: Built, fresh: FabricShape) -> FabricShape:
    """A collapsed fabric that must put fewer rails on each leaf: the built leaves keep
    their names and their first rails, new leaves take the rest (``_split``)."""
    q = fresh.rails_per_leaf
    leaves = fresh.rails if fresh.su_layout else fresh.leaves  # SU 1's, in the SU layout
    if fresh.su_layout and b.rail_leaf and b.rails_per_leaf == 1:  # a new tier: SU 1 stays
        return replace(fresh, rail_leaf=b.rail_leaf, lock_note=_regrouped(b, fresh))
    if b.su_named or b.rails_per_leaf % q or leaves != b.leaves * (b.rails_per_leaf // q):
        return replace(fresh, lock_note=_regrouped(b, fresh))
    shape = replace(fresh, rail_leaf=_split(b, q))
    if shape.style == "clos2" and b.spines:  # built spines and uplinks stay (not a pair's)
        shape = _with_spines(shape, b) or shape
    kept = b.leaves * q
    note = (
        f"The built compute fabric ({_counts(b.leaves, b.spines, b.cores)}) cannot take "
        f"{fresh.designed_nodes} nodes non-blocking with {b.rails_per_leaf} rails per leaf, "
        f"so it is regrouped to {q} ({_shape_counts(shape)}): each built leaf keeps its "
        f"first {q} rail(s) and their node cables; the node cables of the other "
        f"{b.rails - kept} rail(s) move to the new leaves, and the leaves' inter-switch "
        "links are re-cabled (listed with the changes against the plan lock)."
    )
    return replace(shape, lock_note=note)


def _counts(leaves: int, spines: int, cores: int) -> str:
    out = f"{leaves} leaves, {spines} spines" if spines else f"{leaves} leaves"
    return out + (f", {cores} cores" if cores else "")


def _shape_counts(s: FabricShape) -> str:
    return _counts(s.leaves, s.spines, s.cores)


def _links(s: FabricShape) -> str:
    if s.style == "pair":
        return f"{s.leaf_up} links to the other leaf for {s.leaf_down} node ports"
    if s.style == "clos3":
        return f"{s.leaf_up} uplinks for {s.leaf_down} node ports, one to each spine of its pod"
    each = s.leaf_up // s.spines
    return f"{s.leaf_up} uplinks for {s.leaf_down} node ports, {each} to each spine"


def _note(b: Built, kept: FabricShape, fresh: FabricShape) -> str:
    """What the kept (or grown) fabric is, against the built and the fresh one."""
    same = (kept.leaves, kept.spines, kept.cores, kept.leaf_up) == (
        fresh.leaves, fresh.spines, fresh.cores, fresh.leaf_up)
    built = (b.leaves, b.spines, b.cores)
    if (kept.leaves, kept.spines, kept.cores) == built:
        if same:
            return ""
        text = (
            f"The built compute fabric ({_counts(*built)}) is kept with its names and cables "
            f"(plan lock): it still serves {fresh.designed_nodes} nodes non-blocking, each "
            f"leaf with {_links(kept)}."
        )
        if kept.designed_nodes > fresh.designed_nodes or _more(kept, fresh):
            text += (
                f" The capacity beyond {fresh.designed_nodes} nodes stays: a re-plan does "
                "not remove built switches or cables."
            )
        counts_same = (kept.leaves, kept.spines, kept.cores) == (
            fresh.leaves, fresh.spines, fresh.cores)
        per_leaf = f" with {_links(fresh).split(' for ')[0]}" if counts_same else ""
        return text + (
            f" A fresh plan (--fresh) would build {_shape_counts(fresh)}{per_leaf} and "
            "re-cable the fabric."
        )
    grown = [f"{n - o} {what}" for n, o, what in (
        (kept.leaves, b.leaves, "leaves"), (kept.spines, b.spines, "spines"),
        (kept.cores, b.cores, "cores")) if n > o]
    return (
        f"The built compute fabric ({_counts(*built)}) cannot take {fresh.designed_nodes} "
        f"nodes non-blocking, so it grows by {', '.join(grown)} ({_shape_counts(kept)}): the "
        "built switches keep their names, node cables and as many uplinks as an even spread "
        "over the spines allows; the rest is added."
    )


def _more(kept: FabricShape, fresh: FabricShape) -> bool:
    """More switches or links than the rules build for the nodes (a shrink, or an older
    rule's bigger fabric)."""
    return kept.leaves > fresh.leaves or kept.spines > fresh.spines or (
        kept.cores > fresh.cores) or (kept.leaf_up > fresh.leaf_up and kept.leaves == fresh.leaves)


def _regrouped(b: Built, fresh: FabricShape) -> str:
    why = (
        "a third tier" if fresh.tiers == 3 and not b.cores
        else f"leaves of {fresh.rails_per_leaf} rail(s) each instead of {b.rails_per_leaf}"
        if fresh.rails_per_leaf != b.rails_per_leaf
        else f"a {fresh.style} layout"
    )
    text = (
        f"The built compute fabric ({_counts(b.leaves, b.spines, b.cores)}) cannot take "
        f"{fresh.designed_nodes} nodes non-blocking in its shape: the fabric is redesigned "
        f"with {why} ({_shape_counts(fresh)}); the cables that move are listed with the "
        "changes against the plan lock."
    )
    return text + (_third_tier(b, fresh) if fresh.tiers == 3 and not b.cores else "")


def _third_tier(b: Built, fresh: FabricShape) -> str:
    """What a third tier moves on a live two-tier fabric, said as the maintenance window it
    is (the cable list alone hid that every leaf uplink moves and the spines are bought)."""
    limit = (fresh.radix // max(1, fresh.rails)) * (fresh.radix // 2)  # 64 leaves x 32 / 8
    moved = b.leaves * b.leaf_up
    bought = fresh.spines + fresh.cores
    return (
        f" Two tiers of {fresh.radix}-port switches end at {limit} nodes with {fresh.rails} "
        f"rails; past that every leaf uplink moves: {moved:,} leaf-to-spine cables ("
        f"{b.leaves} leaves x {b.leaf_up}) leave the built spines for the spines of their "
        f"pod, the {b.spines} built spines are retired (freed hardware; they are the model "
        f"the pod spines and cores use, so they can stand in for {min(b.spines, bought)} of "
        f"the {bought} the BOM buys), and the node cables stay on their leaf ports. Plan "
        "it as a fabric-wide maintenance window; fabric.growth_nodes in the first plan "
        "builds the third tier from the start."
    )
