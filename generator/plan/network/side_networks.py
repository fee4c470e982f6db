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
* A plan lock's back-end switch model is kept when the storage nodes shrink (see
  ``storage_backend``); growth past a switch's ports still swaps it or builds a leaf-spine.
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


def storage_backend(nodes: list[str], built: str | None = None) -> SideNet:
    """int-a and int-b back-end switches and every storage node's two back-end cables;
    ``built``: the model of a plan lock's single back-end switches, kept while it has the
    ports (fewer storage nodes never swap a built Z9264F-ON for an S5232F-ON)."""
    out = SideNet()
    n = len(nodes)
    if n == 0:
        return out
    for net in ("a", "b"):
        port_name = f"be{0 if net == 'a' else 1}"
        if n <= 64:
            model = BACKEND_SMALL if n <= 32 and built != BACKEND_LARGE else BACKEND_LARGE
            sw = f"be-{net}-01"
            out.switches.append((sw, model, "leaf"))
            out.links += [(node, port_name, sw, i + 1) for i, node in enumerate(nodes)]
            continue
        leaves = math.ceil(n / 32)
        spines = max(2, math.ceil(leaves * 32 / 64))
        lw = max(2, len(str(leaves)))
        leaf_names = [f"be-{net}-leaf-{i + 1:0{lw}d}" for i in range(leaves)]
        spine_names = [f"be-{net}-spine-{j + 1:02d}" for j in range(spines)]
        out.switches += [(x, BACKEND_LARGE, "leaf") for x in leaf_names]
        out.switches += [(x, BACKEND_LARGE, "spine") for x in spine_names]
        out.links += [
            (node, port_name, leaf_names[i // 32], i % 32 + 1) for i, node in enumerate(nodes)
        ]
        for li, leaf in enumerate(leaf_names):
            for k in range(32):
                out.isl.append(
                    (leaf, 33 + k, spine_names[k % spines], li * (32 // spines) + k // spines + 1)
                )
    return out


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
