"""Helpers for the plan-lock tests: plan, lock, re-plan, and compare identities."""

from __future__ import annotations

from typing import Any

from benchmarks.synthetic_plan import plan_for
from generator.catalog.load import default_catalog
from generator.plan.lock.model import Lock
from generator.plan.lock.read import parse_lock
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan

NAME = "grow"
Identity = dict[str, object]


def plan(nodes: int, lock: Lock | None = None, **sections: Any) -> ClusterPlan:
    """A synthetic XE9680 cluster named ``grow`` (one lock path whatever its size)."""
    return plan_for(nodes, default_catalog(), lock, name=NAME, **sections)[1]


def relock(p: ClusterPlan) -> Lock:
    """The lock ``podplan plan`` writes for ``p``, read back."""
    return parse_lock(lock_text(p), "reports/grow/plan.lock.yaml")


def _bare(a: str | None) -> str | None:
    return a.split("/")[0] if a else None


def identities(p: ClusterPlan) -> dict[str, Identity]:
    """Name -> role, model, rack, U and addresses (network -> address) of every device."""
    out: dict[str, Identity] = {}
    for n in p.nodes:
        a = n.addresses
        addrs = {"mgmt": _bare(a.mgmt), "oob": _bare(a.bmc), "frontend": _bare(a.frontend)}
        addrs.update({f"rail{f.rail}": _bare(f.address) for f in a.fabric})
        out[n.name] = {
            "role": n.role,
            "model": n.model,
            "rack": n.rack,
            "u": n.u,
            "addresses": addrs,
        }
    for s in p.switches:
        out[s.name] = {
            "role": f"{s.network}-{s.tier}",
            "model": s.model,
            "rack": s.rack,
            "u": s.u,
            "addresses": {"oob": _bare(s.mgmt_address)},
        }
    return out


def moved(before: Identity, after: Identity) -> list[str]:
    """What changed between two identities of one device: its role, its slot (unless it is
    another model now), or an address it had (an address it no longer has is no move: a
    cluster shrunk to one node drops its fabric)."""
    out = [k for k in ("role",) if before[k] != after[k]]
    if before["model"] == after["model"]:
        out += [k for k in ("rack", "u") if before[k] != after[k]]
    old, new = before["addresses"], after["addresses"]
    assert isinstance(old, dict) and isinstance(new, dict)
    out += [k for k, v in old.items() if v and new.get(k) not in (v, None)]  # dropped: no fabric
    return out


def addresses(ident: Identity) -> set[str]:
    addrs = ident["addresses"]
    assert isinstance(addrs, dict)
    return {v for v in addrs.values() if v}


def cables(p: ClusterPlan) -> set[tuple[str, str, str, str]]:
    return {(lk.a, lk.a_port, lk.b, lk.b_port) for lk in p.links}


def racks(p: ClusterPlan) -> dict[str, tuple[int, int]]:
    return {r.name: (r.row, r.position) for r in p.racks}
