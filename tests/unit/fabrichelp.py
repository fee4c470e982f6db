"""Shared checks over a built fabric graph for the fabric tests (QM9790 and QM8790)."""

from __future__ import annotations

from collections import Counter

from generator.plan.network.fabric import FabricGraph


def port_use(g: FabricGraph) -> Counter[tuple[str, int]]:
    """How many cables land on each (switch, port): every value must be 1."""
    use: Counter[tuple[str, int]] = Counter()
    for _, _, li, port in g.node_links:
        use[(g.leaf_names[li], port)] += 1
    for a, ap, b, bp in (*g.up_links, *g.isl_links, *g.core_links):
        use[(a, ap)] += 1
        use[(b, bp)] += 1
    for _, sw, port in g.sm_links:
        use[(sw, port)] += 1
    return use
