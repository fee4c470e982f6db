"""New compute racks of a locked plan, and the cables back to their built network rack.

A regrown scalable unit (SU) keeps its network rack (its fabric and front-end leaves stay
on a shrink: ``lock.fabric``, ``lock.frontend``), but its new compute racks get new names
and free floor positions. Taking the first free position row by row put them wherever a
hole was, and nothing said how long their cables to the kept leaves had become. Here:

* ``anchors``: each new compute rack's anchor is the built rack holding most of the leaves
  its nodes plug into (fabric leaves; front-end leaves for a plan without a fabric);
  ``floor_positions`` stands the rack at the free position nearest it.
* ``check_reach``: before media are chosen, every link from a new rack to its anchor is
  checked against the longest reach of the media that fit its two cages at its speed
  (``media.yaml`` ``reach_m``, stocked lengths included); beyond it the plan stops with an
  error naming the racks, their distance and the reach (a plan cannot buy a cable that
  does not exist, so this is an error, not a warning).
* ``reach_note``: with the change, per anchor, the longest cable from its new racks, its
  medium, stocked length and reach (``media.choose_media`` already picks the shortest
  stocked length of the first medium in preference order that covers each run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from generator.errors import PodplanError, Problem
from generator.plan.catalog_models import PlanCatalog
from generator.plan.facility.racks import RackLayout
from generator.plan.lock.changes import hostlist
from generator.plan.lock.model import Lock
from generator.plan.lock.text import natural
from generator.plan.models import Link
from generator.plan.network.media import MediaPicker, RawLink
from generator.plan.parts import Parts


def host_leaves(p: Parts) -> list[tuple[str, str]]:
    """(GPU node, leaf) for every node cable: the fabric's, or the front end's without one."""
    g = p.graph
    if g.node_links:
        names = g.leaf_names
        return [(node, names[li]) for node, _, li, _ in g.node_links]
    compute = set(p.nodes.compute) | set(p.nodes.spares)
    return [(host, leaf) for host, _, leaf, _, _ in p.frontend.host_links if host in compute]


def anchors(lock: Lock, racks: list[RackLayout], links: Iterable[tuple[str, str]]
            ) -> dict[str, str]:
    """New compute rack -> the built rack holding most of its nodes' leaves."""
    rack_of = {d.name: r.name for r in racks for d in r.devices}
    votes: dict[str, Counter[str]] = {}
    for host, leaf in links:
        mine, theirs = rack_of.get(host), rack_of.get(leaf)
        if mine and theirs and mine not in lock.racks and theirs in lock.racks:
            votes.setdefault(mine, Counter())[theirs] += 1
    return {r: min(c, key=lambda x: (-c[x], natural(x))) for r, c in votes.items()}


def check_reach(
    pc: PlanCatalog, raws: list[RawLink], rack_of: Mapping[str, str],
    found: Mapping[str, str], positions: Mapping[str, tuple[int, int]],
) -> None:
    """Stop when a new rack's cable to its anchor is longer than any medium reaches."""
    picker = MediaPicker(pc)
    worst: dict[tuple[str, str], tuple[float, float, RawLink]] = {}
    for lk in raws:
        ra, rb = rack_of.get(lk.a, ""), rack_of.get(lk.b, "")
        pair = (ra, rb) if found.get(ra) == rb else (rb, ra) if found.get(rb) == ra else None
        if pair is None:
            continue
        fits = picker.candidates(lk.a_cage, lk.b_cage, lk.speed_gbps)
        reach = max((m.reach_m for m, _ in fits), default=0.0)
        if fits and lk.need_m > reach and lk.need_m - reach > worst.get(pair, (0, 0))[0]:
            worst[pair] = (lk.need_m - reach, reach, lk)
    if not worst:
        return
    problems = []
    for (new, old), (_, reach, lk) in sorted(worst.items()):
        (r1, p1), (r2, p2) = positions[new], positions[old]
        problems.append(Problem(
            path="facility",
            message=(f"new rack {new} (row {r1}, position {p1}) is {lk.need_m:.1f} m of cable "
                     f"from {old} (row {r2}, position {p2}), the built network rack its "
                     f"nodes plug into; the longest medium for {lk.a} {lk.a_port} to {lk.b} "
                     f"{lk.b_port} ({lk.speed_gbps}G) reaches {reach:g} m"),
        ))
    problems[-1] = Problem(
        path=problems[-1].path, message=problems[-1].message,
        hint=("no free floor position near the built racks is within reach: free positions "
              "there (facility.racks_per_row for longer rows), or re-rack the scalable unit "
              "with --fresh"),
    )
    raise PodplanError("a new rack stands out of cable reach of its built network rack",
                       problems=problems)


def reach_note(pc: PlanCatalog, links: list[Link], rack_of: Mapping[str, str],
               found: Mapping[str, str]) -> str:
    """Per anchor, the cable from its new racks closest to its medium's reach (said with
    the change)."""
    if not found:
        return ""
    tight: dict[str, tuple[float, Link]] = {}
    for lk in links:
        ra, rb = rack_of.get(lk.a, ""), rack_of.get(lk.b, "")
        old = found.get(ra) if found.get(ra) == rb else found.get(rb) if found.get(rb) == ra \
            else None
        share = lk.length_m / pc.media[lk.media].reach_m if old else 0.0
        if old and (old not in tight or share > tight[old][0]):
            tight[old] = (share, lk)
    parts = []
    for old in sorted(tight, key=natural):
        lk = tight[old][1]
        news = hostlist(r for r, a in found.items() if a == old)
        parts.append(f"{news} -> {old}: {lk.a} {lk.a_port} {lk.length_m:g} m {lk.media} "
                     f"({lk.part_number}), which reaches {pc.media[lk.media].reach_m:g} m")
    return ("New compute racks stand at the free floor positions nearest the built network "
            "rack their nodes plug into; the cable to it closest to its medium's reach "
            f"(media.yaml; the shortest stocked length that covers the run): {'; '.join(parts)}.")
