"""The built management plane, kept on a re-plan: a shrink never re-models or removes it.

``heads.plan_management`` picks the management tier from the compute node count: R660 heads
up to one scalable unit, 2-socket management servers and service nodes above. Against a
plan lock that rule alone would turn a built cluster's ``r660-mgmt`` heads into ``r660`` on
a shrink past one SU (new servers bought to replace bigger ones) and retire its service
nodes (moving monitoring off them). With a lock:

* **Shrink keeps.** The built head model stays when it is at least the tier's (a bigger head
  node still serves a smaller cluster), and the built service nodes and UFM appliances stay
  while the spec still asks for UFM; a note says what ``--fresh`` would plan.
* **Growth buys.** When the cluster outgrows the built head model (one SU -> two: R660 ->
  2-socket management servers), the heads are replaced in their names and addresses and the
  note says plainly that new servers are bought and the controllers move to them.

Login nodes follow ``hardware.login_nodes`` (the user's own count), as before.
"""

from __future__ import annotations

from dataclasses import replace

from generator.plan.catalog_models import ManagementTier
from generator.plan.heads import Management
from generator.plan.lock.changes import hostlist
from generator.plan.lock.model import Lock
from generator.plan.lock.names import sequential
from generator.plan.lock.text import natural


def _rank(tiers: dict[str, ManagementTier]) -> dict[str, int]:
    """Head model -> its size: the index of the largest tier that uses it."""
    ordered = sorted(tiers.values(), key=lambda t: t.max_compute_nodes)
    return {t.head_model: i for i, t in enumerate(ordered)}


def _built_model(lock: Lock) -> str | None:
    heads = sorted(lock.with_role("head"), key=lambda d: natural(d.name))
    return heads[0].model if heads else None


def _tier_of(tiers: dict[str, ManagementTier], model: str) -> str:
    ordered = sorted(tiers.values(), key=lambda t: t.max_compute_nodes)
    return next(t.id for t in reversed(ordered) if t.head_model == model)


def kept_management(
    fresh: Management, lock: Lock, tiers: dict[str, ManagementTier], compute_nodes: int
) -> Management:
    """``fresh`` (the tier's plan for ``compute_nodes``) against the built plane (module doc):
    locked names kept, the built head model and service/UFM counts kept on a shrink."""
    rank = _rank(tiers)
    built = _built_model(lock)
    keep_model = built is not None and built in rank and rank[built] >= rank[fresh.head_model]
    model = built if keep_model and built else fresh.head_model
    tier = _tier_of(tiers, model) if keep_model else fresh.tier
    n_service = max(len(fresh.service), len(lock.with_role("mgmt")))
    n_ufm = max(len(fresh.ufm), len(lock.with_role("ufm"))) if fresh.ufm else 0

    def names(role: str, prefix: str, count: int) -> list[str]:
        return sequential(lock, role, prefix, 2, count)

    kept = Management(
        names("head", "head", len(fresh.heads)),
        names("login", "login", len(fresh.login)),
        names("ufm", "ufm", n_ufm),
        names("mgmt", "mgmt", n_service),
        model,
        tier,
    )
    return replace(kept, lock_note=_note(fresh, kept, built, compute_nodes))


def _note(fresh: Management, kept: Management, built: str | None, nodes: int) -> str:
    """What was kept (and what --fresh would plan), or what growth buys."""
    if built is not None and kept.head_model != built:
        return (
            f"{nodes} compute nodes need {kept.head_model} heads (management tier "
            f"{kept.tier}); the built {built} heads are too small, so "
            f"{len(kept.heads)} {kept.head_model} servers are bought (in the BOM) and "
            f"replace them under the same names and addresses ({hostlist(kept.heads)}): "
            "the cluster manager and the Slurm controllers move to the new servers, and the "
            f"built {built} servers are freed."
        )
    kept_parts = []
    if kept.head_model != fresh.head_model:
        kept_parts.append(f"the {kept.head_model} heads")
    extra = [
        (len(kept.service) - len(fresh.service), "service node", kept.service),
        (len(kept.ufm) - len(fresh.ufm), "UFM appliance", kept.ufm),
    ]
    for n, what, names in extra:
        if n > 0:
            kept_parts.append(f"{_count(len(names), what)} ({hostlist(names)})")
    if not kept_parts:
        return ""
    would = [f"{len(fresh.heads)} {fresh.head_model} heads"] if (
        kept.head_model != fresh.head_model) else []
    would += [_count(len(fresh.service), "service node")] if len(kept.service) > len(
        fresh.service) else []
    would += [_count(len(fresh.ufm), "UFM appliance")] if len(kept.ufm) > len(fresh.ufm) else []
    return (
        f"The built management plane is kept (plan lock): {' and '.join(kept_parts)} still "
        f"serve {nodes} compute nodes, so none is replaced or removed. A fresh plan "
        f"(--fresh) would plan {' and '.join(would)}."
    )


def _count(n: int, what: str) -> str:
    return f"no {what}s" if n == 0 else f"{n} {what}{'s' if n > 1 else ''}"
