"""The networks beside the compute fabric and the front end.

* **Storage back end** (PowerScale int-a / int-b): each storage node's two back-end ports go
  to two separate switches, one per OneFS internal network (no link between them). Up to 32
  nodes per network an S5232F-ON (32x 100G), up to 64 a Z9264F-ON (64x 100G); beyond that
  each network is a leaf-spine of Z9264F-ON (32 nodes down and 32 up per leaf).
* **Out-of-band aggregation**: every rack's N3248TE-ON has two 10G SFP+ uplinks, one to
  each switch of an aggregation pair (S5248F-ON, 48 SFP28 ports taking SFP+ at 10G); a pair
  takes up to 48 racks, more racks get more pairs. The pairs uplink to the site network, so
  no out-of-band switch hangs off the front-end leaves (the reference designs keep OOB
  separate: S24). Up to ``OOB_DIRECT_MAX_RACKS`` racks there is no aggregation: each rack's
  OOB switch takes its two 10G uplinks straight to the site's management network (a pair
  of switches and their spares would only save a few site ports). A built aggregation pair
  (plan lock) stays when the racks shrink to that few: taking it out moves every OOB uplink.
* A plan lock's back end is kept (``storage_backend``, ``BuiltBackend``): a shrink keeps the
  built switches (a Z9264F-ON is not swapped for an S5232F-ON, a leaf-spine stays one);
  growth adds leaves and spines to a built leaf-spine, and a built single Z9264F-ON becomes
  its first leaf (its first 32 nodes stay on their ports). What cannot be kept is said: an
  S5232F-ON (32 ports) cannot take a 33rd node nor serve as a 32-down/32-up leaf, so it is
  replaced (the note says it is bought).
* Back-end names: one scheme whatever the size, so a grown back end reads like a fresh one:
  the switches the storage nodes plug into are ``be-<net>-NN`` (a single switch is
  ``be-a-01``, a leaf-spine's leaves ``be-a-01`` ... ``be-a-NN``) and spines
  ``be-<net>-spine-NN``. Built names never change; new leaves continue the built ones'
  numbering (a lock from before this scheme, with ``be-a-leaf-NN``, keeps that stem).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

BACKEND_SMALL = "s5232f-on"
BACKEND_LARGE = "z9264f-on"
OOB_AGG_MODEL = "s5248f-on"
OOB_AGG_PORTS = 48
OOB_UPLINK_PORTS = (49, 50)  # the N3248TE-ON's first two SFP+ ports
OOB_DIRECT_MAX_RACKS = 4


@dataclass
class SideNet:
    """Switch names and wiring of one side network; links are (a, a_port, b, b_port)."""

    switches: list[tuple[str, str, str]] = field(default_factory=list)  # name, model, tier
    links: list[tuple[str, str, str, int]] = field(default_factory=list)
    isl: list[tuple[str, int, str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Against a plan lock: what of the built switches was kept, and what could not be."""


@dataclass(frozen=True)
class BuiltBackend:
    """A plan lock's back end, per OneFS network (``a``, ``b``): leaf names (a single
    switch is one leaf), spine names, and the model of a single switch."""

    leaves: dict[str, list[str]]
    spines: dict[str, list[str]]
    model: str = ""

    def single(self) -> str | None:
        """The single switch's model; None for a leaf-spine or nothing built."""
        one = all(len(v) == 1 for v in self.leaves.values()) and not any(self.spines.values())
        return self.model if self.leaves and one else None


def storage_backend(nodes: list[str], built: BuiltBackend | None = None) -> SideNet:
    """int-a and int-b back-end switches and every storage node's two back-end cables;
    ``built``: a plan lock's back end, kept where it serves (module doc)."""
    out = SideNet()
    n = len(nodes)
    if n == 0:
        return out
    single = built.single() if built else None
    spread = built is not None and (bool(built.spines.get("a")) or single == BACKEND_LARGE)
    for net in ("a", "b"):
        port_name = f"be{0 if net == 'a' else 1}"
        if n <= 64 and not (built and built.spines.get(net)):
            model = BACKEND_SMALL if n <= 32 and single != BACKEND_LARGE else BACKEND_LARGE
            sw = f"be-{net}-01"
            out.switches.append((sw, model, "leaf"))
            out.links += [(node, port_name, sw, i + 1) for i, node in enumerate(nodes)]
            continue
        kept_leaves = built.leaves.get(net, []) if built and spread else []
        kept_spines = built.spines.get(net, []) if built and spread else []
        leaves = _names(kept_leaves, max(len(kept_leaves), math.ceil(n / 32)), f"be-{net}-")
        spines = _names(kept_spines, _spine_count(len(leaves), len(kept_spines)),
                        f"be-{net}-spine-")
        out.switches += [(x, BACKEND_LARGE, "leaf") for x in leaves]
        out.switches += [(x, BACKEND_LARGE, "spine") for x in spines]
        out.links += [(x, port_name, leaves[i // 32], i % 32 + 1) for i, x in enumerate(nodes)]
        s = len(spines)
        for li, leaf in enumerate(leaves):
            for k in range(32):
                out.isl.append((leaf, 33 + k, spines[k % s], li * (32 // s) + k // s + 1))
    out.notes = _backend_notes(n, built, out) if built and built.leaves else []
    return out


def _spine_count(leaves: int, built: int) -> int:
    """The fewest spines, at least two and the ``built`` ones, that take every leaf's 32
    uplinks evenly (a power of two, so each leaf has as many to each spine)."""
    return next(s for s in (2, 4, 8, 16, 32) if s >= built and s * 64 >= leaves * 32)


def _names(kept: list[str], count: int, prefix: str) -> list[str]:
    """``kept`` names first, then new ones numbered after the last (its prefix and width)."""
    out = list(kept[:count]) if len(kept) >= count else list(kept)
    last = kept[-1] if kept else f"{prefix}00"
    stem = last.rstrip("0123456789")
    digits = last[len(stem):]
    start, width = (int(digits) if digits else 0), max(2, len(digits))
    out += [f"{stem}{start + i:0{width}d}" for i in range(1, count - len(out) + 1)]
    return out


def _backend_notes(n: int, built: BuiltBackend, now: SideNet) -> list[str]:
    """What the built back end became (said once for int-a and int-b)."""
    leaves = {x for x, _, tier in now.switches if tier == "leaf" and x.startswith("be-a-")}
    spines = {x for x, _, tier in now.switches if tier == "spine" and x.startswith("be-a-")}
    b_leaves, b_spines = built.leaves.get("a", []), built.spines.get("a", [])
    single = built.single()
    model = next(m for x, m, _ in now.switches if x in leaves)
    if single == BACKEND_SMALL and (spines or model != BACKEND_SMALL):
        return [
            f"The built S5232F-ON back-end switches be-a-01/be-b-01 (32 ports) cannot take {n} "
            "storage nodes and cannot be kept: podplan's back end is one switch or a "
            "Z9264F-ON leaf-spine per OneFS internal network, and an S5232F-ON cannot be a "
            "leaf (a leaf needs 32 node ports and 32 uplinks); "
            + ("they are replaced under the same names by Z9264F-ON (64 ports), 2 switches "
               "bought (in the BOM); each back-end cable moves to the same port of the new "
               "switch and the S5232F-ON are freed."
               if not spines else
               f"the back end becomes a leaf-spine of Z9264F-ON ({len(leaves)} leaves, "
               f"{len(spines)} spines per network, bought) whose first leaves take the names "
               "be-a-01/be-b-01: each back-end cable moves to the same port of the new leaf "
               "and the S5232F-ON are freed.")
        ]
    if single == BACKEND_LARGE and spines:
        return [
            f"The built Z9264F-ON back-end switches be-a-01/be-b-01 stay as the first leaves of "
            f"a leaf-spine for {n} storage nodes ({len(leaves)} leaves, {len(spines)} spines per "
            "network): the first 32 storage nodes keep their ports; the back-end cables of the "
            "others (up to 32 per network) move to the new leaves, and ports 33-64 take the "
            "uplinks to the spines."
        ]
    need = math.ceil(n / 32)
    if b_spines and (n <= 64 or len(b_leaves) > need):
        fresh = (f"one {'S5232F-ON' if n <= 32 else 'Z9264F-ON'} per network" if n <= 64 else
                 f"{need} leaves and {_spine_count(need, 0)} spines per network")
        return [
            f"The built back-end leaf-spine ({len(b_leaves)} leaves, {len(b_spines)} spines per "
            f"OneFS network) is kept with its names and cables (plan lock): the {n} storage "
            "nodes stay on their leaf ports and the capacity beyond them stays (a shrink keeps "
            f"built capacity); a fresh plan (--fresh) would build {fresh} and re-cable the "
            "storage nodes."
        ]
    if single == BACKEND_LARGE and n <= 32:
        return [
            f"The built Z9264F-ON back-end switches be-a-01/be-b-01 are kept (plan lock): {n} "
            "storage nodes need only an S5232F-ON, which a fresh plan (--fresh) would buy."
        ]
    return []


def oob_aggregation(oob_switches: list[str], built: dict[str, int] | None = None) -> SideNet:
    """Aggregation pairs for the per-rack OOB switches (two 10G uplinks each).

    ``built``: a plan lock's aggregation, rack switch -> pair index (empty: the lock has
    pairs but none of these switches on them; None: no lock or no aggregation). A built rack
    switch stays on its pair and a new one takes the first pair with a free port, so
    neither a shrink (down to a few racks included) nor growth moves an OOB uplink; a pair
    left without racks goes."""
    out = SideNet()
    if len(oob_switches) <= OOB_DIRECT_MAX_RACKS and built is None:
        return out
    members: dict[int, list[str]] = {}
    for sw in oob_switches:
        if built and sw in built:
            members.setdefault(built[sw], []).append(sw)
    p = 0
    for sw in oob_switches:
        if built and sw in built:
            continue
        while len(members.get(p, [])) >= OOB_AGG_PORTS:
            p += 1
        members.setdefault(p, []).append(sw)
    for p, racks in sorted(members.items()):
        a, b = f"oob-agg-{2 * p + 1:02d}", f"oob-agg-{2 * p + 2:02d}"
        out.switches += [(a, OOB_AGG_MODEL, "spine"), (b, OOB_AGG_MODEL, "spine")]
        for i, leaf in enumerate(racks):
            out.isl.append((leaf, OOB_UPLINK_PORTS[0], a, i + 1))
            out.isl.append((leaf, OOB_UPLINK_PORTS[1], b, i + 1))
    return out
