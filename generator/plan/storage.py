"""Shared storage (PowerScale F710) sized by capacity, checkpoint write and data-loading read.

* Required capacity (TB) = ``storage.dataset_tb`` + sum over training workloads of one
  checkpoint (from the sizing: weights + optimizer state for full training, adapters only for
  LoRA) x ``storage.checkpoint_keep``.
* Usable capacity of n nodes = raw x (1 - OneFS protection overhead for n nodes) x
  (1 - filesystem reserve); data reduction is planned at the catalog's ratio (1.0).
* Write bandwidth: the larger of (a) the largest checkpoint within
  ``storage.checkpoint_write_seconds`` (checkpoint writes are synchronous and stall training)
  and (b) NVIDIA's aggregate write guidance for the cluster's size and
  ``storage.performance_tier``.
* Read bandwidth (data loading): NVIDIA's aggregate read guidance for the tier, or
  ``storage.read_gbytes_per_s_per_gpu`` x the GPUs when the spec sets it.
* NVIDIA's guidance (DGX SuperPOD H100 RA, table 6, S24; ``storage.yaml:
  performance_guidance``) gives GB/s for one node, one SU (32 nodes) and four SU (128
  nodes); between those points the need is interpolated linearly, beyond 4 SU it grows in
  proportion to the nodes.
* Node count and drive size: the cheapest cluster (catalog price: a per-node base plus a
  price per raw TB) of at least the nodes that meet write and read (per-node figures from
  the catalog) and the model's minimum pool (3 nodes), that holds the capacity. A plan lock
  keeps the built drive size: capacity then grows by nodes.

Per-node throughput is a planning estimate (no Dell figure was found); the output says so.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from generator.errors import PodplanError, Problem
from generator.plan.catalog_models import PlanCatalog, PriceItem, StorageModel
from generator.plan.models import StoragePlan
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

STORAGE_MODEL = "powerscale-f710"
MOUNT_POINT = "/shared"


class TierRates(BaseModel):
    """One row of NVIDIA's storage guidance (GB/s)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    node_read_gbytes_per_s: float
    node_write_gbytes_per_s: float
    su_read_gbytes_per_s: float
    su_write_gbytes_per_s: float
    su4_read_gbytes_per_s: float
    su4_write_gbytes_per_s: float


class Guidance(BaseModel):
    """``storage.yaml: performance_guidance`` (the parts the sizing reads)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    tiers: dict[str, TierRates]
    su_nodes: int
    sources: list[str]
    status: str


def guidance(pc: PlanCatalog) -> Guidance:
    return Guidance.model_validate(pc.catalog.raw("storage")["performance_guidance"])


def guided_gbps(points: tuple[float, float, float], su_nodes: int, nodes: int) -> float:
    """Aggregate GB/s for ``nodes`` from the (1 node, 1 SU, 4 SU) guidance points."""
    one, su, su4 = points
    if nodes <= 0:
        return 0.0
    if nodes <= su_nodes:
        return one + (su - one) * (nodes - 1) / (su_nodes - 1)
    if nodes <= 4 * su_nodes:
        return su + (su4 - su) * (nodes - su_nodes) / (3 * su_nodes)
    return su4 * nodes / (4 * su_nodes)


def checkpoint_sizes_gb(sizing: SizingResult) -> list[float]:
    """One checkpoint per training workload (GB)."""
    return [t.checkpoint_gb for t in sizing.training]


def _usable_tb(model: StorageModel, nodes: int, drive_tb: float) -> float:
    raw = nodes * model.drives_per_node * drive_tb
    return (
        raw
        * (1.0 - model.protection_fraction(nodes))
        * (1.0 - model.filesystem_reserve_fraction)
        * model.data_reduction_ratio_planning
    )


def _needs(spec: Spec, sizing: SizingResult, g: Guidance) -> tuple[float, float, float, str]:
    """(checkpoint write GB/s, guidance write GB/s, read GB/s, how the read was set)."""
    st = spec.storage
    largest = max(checkpoint_sizes_gb(sizing), default=0.0)
    tier = g.tiers[st.performance_tier.value]
    nodes = sizing.nodes
    write = guided_gbps(
        (tier.node_write_gbytes_per_s, tier.su_write_gbytes_per_s, tier.su4_write_gbytes_per_s),
        g.su_nodes,
        nodes,
    )
    if st.read_gbytes_per_s_per_gpu is not None:
        read = st.read_gbytes_per_s_per_gpu * sizing.gpus
        per_gpu = st.read_gbytes_per_s_per_gpu
        how = f"storage.read_gbytes_per_s_per_gpu {per_gpu:g} x {sizing.gpus} GPUs"
    else:
        read = guided_gbps(
            (tier.node_read_gbytes_per_s, tier.su_read_gbytes_per_s, tier.su4_read_gbytes_per_s),
            g.su_nodes,
            nodes,
        )
        how = f"NVIDIA '{st.performance_tier.value}' tier for {nodes} nodes"
    return largest / st.checkpoint_write_seconds, write, read, how


def plan_storage(
    spec: Spec, sizing: SizingResult, pc: PlanCatalog, nfs_server: str, node_link_gbytes: float,
    built_drive_tb: float = 0.0, built_nodes: int = 0,
) -> StoragePlan:
    """Node count, drives and throughput of the shared file system.

    ``node_link_gbytes``: what one GPU node's front-end NIC carries (GB/s), the ceiling on
    its storage reads. ``built_drive_tb``: the drive size of the storage already built (plan
    lock): kept, so more capacity means more nodes, not every drive replaced (a PowerScale
    node pool takes one drive size; 10 -> 200 TB of data priced the 3 built nodes again
    with 15.36 TB drives and said nothing). ``built_nodes``: the storage nodes the lock
    holds, never planned away (module doc).
    """
    model = pc.storage[STORAGE_MODEL]
    g = guidance(pc)
    st = spec.storage
    ckpts = checkpoint_sizes_gb(sizing)
    largest = max(ckpts, default=0.0)
    required_tb = st.dataset_tb + sum(ckpts) * st.checkpoint_keep / 1000.0
    ckpt_write, tier_write, need_read, read_how = _needs(spec, sizing, g)
    need_write = max(ckpt_write, tier_write)
    by = {
        "the minimum pool": model.min_nodes,
        "checkpoint write": _per(ckpt_write, model.write_gbytes_per_s_per_node),
        "NVIDIA write guidance": _per(tier_write, model.write_gbytes_per_s_per_node),
        "data-loading read": _per(need_read, model.read_gbytes_per_s_per_node),
    }
    n = max(by.values())
    kept = built_drive_tb if built_drive_tb in model.drive_tb_options else 0.0
    if kept and _usable_tb(model, model.max_nodes, kept) < required_tb:
        kept = 0.0  # the built size cannot hold it in one cluster: choose again, and say so
    price = node_price(pc, model)
    nodes, drive = _fit_capacity(model, n, required_tb, kept, price)
    if kept and _fit_capacity(model, n, required_tb, price=price)[1] == kept:
        kept = 0.0  # what a first plan would choose anyway: nothing to say
    why = "capacity" if nodes > n else max(by, key=lambda k: by[k])
    built_notes = _built_notes(nodes, built_nodes, why,
                               _fit_capacity(model, n, required_tb, price=price))
    if built_nodes > nodes:
        nodes, why = built_nodes, "the built cluster (plan lock)"
    raw = nodes * model.drives_per_node * drive
    write = nodes * model.write_gbytes_per_s_per_node
    read = nodes * model.read_gbytes_per_s_per_node
    prot = model.protection_fraction(nodes)
    gpus = max(1, sizing.gpus)
    notes = [
        f"Per-node throughput ({model.read_gbytes_per_s_per_node:g} GB/s read, "
        f"{model.write_gbytes_per_s_per_node:g} GB/s write) is a planning estimate "
        f"({model.citation('write_gbytes_per_s_per_node')}); no Dell figure was found. "
        "Measure before committing.",
        f"Required {required_tb:.1f} TB = dataset {st.dataset_tb:g} TB + "
        f"{st.checkpoint_keep} x checkpoints ({sum(ckpts):.0f} GB per set).",
        f"Usable = raw {raw:.1f} TB x (1 - {prot:.3f} protection) x "
        f"(1 - {model.filesystem_reserve_fraction:g} reserve); data reduction planned at "
        f"{model.data_reduction_ratio_planning:g}.",
        f"Bandwidth needed: write {need_write:.1f} GB/s (checkpoint {largest:.0f} GB in "
        f"{st.checkpoint_write_seconds:g} s = {ckpt_write:.1f} GB/s; NVIDIA "
        f"'{st.performance_tier.value}' guidance {tier_write:.1f} GB/s), read "
        f"{need_read:.1f} GB/s = {need_read / gpus:.2f} GB/s per GPU ({read_how}); "
        f"guidance: DGX SuperPOD RA table 6 ({', '.join(g.sources)} [{g.status}]).",
        *built_notes,
        f"{nodes} nodes (sized by {why}): {write:g} GB/s write, {read:g} GB/s read; the largest "
        f"checkpoint writes in {_seconds(largest, write)} s against a target of "
        f"{st.checkpoint_write_seconds:g} s.",
        "Back end: each node's two 100GbE back-end ports go to the int-a / int-b switches of "
        "this plan (storage network).",
        *([] if kept else _choice_note(model, n, required_tb, price)),
        *([f"Drives kept at {kept:g} TB, the built nodes' size (plan lock; a PowerScale node "
           "pool takes one drive size): capacity grows by nodes."] if kept else []),
        *([f"The built nodes' {built_drive_tb:g} TB drives cannot hold {required_tb:,.0f} TB in "
           f"one cluster: planned with {drive:g} TB drives, which replaces the built nodes' "
           "drives or needs a second node pool."]
          if built_drive_tb and drive != built_drive_tb else []),
    ]
    tier = g.tiers[st.performance_tier.value]
    per_node = max(tier.node_read_gbytes_per_s, need_read / max(1, sizing.nodes))
    if sizing.nodes and per_node > node_link_gbytes + 1e-9:
        notes.append(
            f"A GPU node should read {per_node:.1f} GB/s but its front-end NIC carries "
            f"{node_link_gbytes:g} GB/s: choose a faster ethernet.north_south_nic (NVIDIA asks "
            "for at least 40 GB/s per node on a storage fabric) or a lower tier."
        )
    return StoragePlan(
        model=model.id,
        nodes=nodes,
        drive_tb=drive,
        raw_tb=round(raw, 2),
        usable_tb=round(_usable_tb(model, nodes, drive), 2),
        required_tb=round(required_tb, 2),
        read_gbps=round(read, 2),
        write_gbps=round(write, 2),
        checkpoint_gb=round(largest, 2),
        checkpoint_write_s=round(largest / write, 1),
        nfs_server=nfs_server,
        nfs_export=f"/ifs/{spec.name}",
        mount_point=MOUNT_POINT,
        notes=notes,
        required_read_gbps=round(need_read, 2),
        required_write_gbps=round(need_write, 2),
        sized_by=why,
    )


def _built_notes(need: int, built: int, why: str, fresh: tuple[int, float]) -> list[str]:
    """A shrink against the plan lock: the built storage cluster is kept whole (said on
    every run while it holds: a re-run writes the same note); ``fresh``: the nodes and
    drive size a first plan would buy."""
    if need >= built:
        return []
    return [f"The built storage cluster keeps its {built} nodes (plan lock): they hold the "
            f"data, and the workload needs only {need} (sized by {why}). Removing nodes is a "
            "OneFS SmartFail per node (its data is re-protected on the others first), not a "
            f"re-plan step; a fresh plan (--fresh) would buy {fresh[0]} nodes of "
            f"{fresh[1]:g} TB drives."]


def growth_note(built: int, nodes: int, sized_by: str) -> str:
    """Growth against the plan lock, said as the purchase it is (with the change, like the
    other kept-or-grown notes: ``lock.state``)."""
    if not built or nodes <= built:
        return ""
    return (f"The storage cluster grows from the built {built} PowerScale nodes to {nodes} "
            f"(sized by {sized_by}): {nodes - built} nodes are bought (in the BOM) and join "
            "the built pool, which spreads the data onto them; the built nodes keep their "
            "names, addresses and cables.")


def _per(need: float, per_node: float) -> int:
    return math.ceil(need / per_node - 1e-9) if need > 0 else 0


def _seconds(gb: float, gbps: float) -> str:
    return f"{gb / gbps:.0f}" if gbps > 0 else "0"


def node_price(pc: PlanCatalog, model: StorageModel) -> PriceItem | None:
    """The storage node's entry in the catalog's price book (the spec's ``prices:`` file
    prices the BOM, not this choice)."""
    raw = pc.catalog.raw("prices")["items"].get(model.id)
    return PriceItem.model_validate({"id": model.id, **raw}) if raw else None


def _cluster_usd(model: StorageModel, price: PriceItem | None, nodes: int, drive: float) -> float:
    """What ``nodes`` nodes of ``drive`` TB drives cost (0 with no price: then fewest nodes)."""
    each = price.usd_for_raw_tb(model.drives_per_node * drive) if price else None
    return nodes * (each or 0.0)


def _options(
    model: StorageModel, n: int, required_tb: float, drives: list[float],
    price: PriceItem | None,
) -> list[tuple[float, int, float]]:
    """(cost, nodes, drive TB) per drive size: the fewest nodes >= ``n`` that hold it."""
    out = []
    for d in drives:
        nodes = next((k for k in range(n, model.max_nodes + 1)
                      if _usable_tb(model, k, d) >= required_tb), None)
        if nodes is not None:
            out.append((_cluster_usd(model, price, nodes, d), nodes, d))
    return out


def _choice_note(
    model: StorageModel, n: int, required_tb: float, price: PriceItem | None
) -> list[str]:
    """What each drive size would cost, so the choice can be checked (none without a price)."""
    if price is None or price.usd_per_raw_tb is None:
        return []
    rows = _options(model, n, required_tb, sorted(model.drive_tb_options), price)
    each = "; ".join(f"{k} x {d:g} TB drives {usd:,.0f} USD" for usd, k, d in rows)
    return [f"Cheapest cluster that holds {required_tb:,.1f} TB with at least {n} nodes, at "
            f"the catalog price ({price.usd_base or 0:,.0f} USD per node + "
            f"{price.usd_per_raw_tb:,.0f} USD per raw TB; prices.yaml: {model.id}, "
            f"{price.citation()}): {each}."]


def _fit_capacity(
    model: StorageModel, n: int, required_tb: float, kept: float = 0.0,
    price: PriceItem | None = None,
) -> tuple[int, float]:
    """The cheapest (node count >= ``n``, drive size) that holds ``required_tb`` (only
    ``kept`` drives when given). Per drive size the fewest nodes that hold it; among those
    the cheapest, then the fewer nodes. Fewest nodes first picked 3 x 15.36 TB ($719k) for
    200 TB where 7 x 3.84 TB held it for less, with more bandwidth."""
    drives = [kept] if kept else sorted(model.drive_tb_options)
    options = _options(model, n, required_tb, drives, price)
    if options:
        _, nodes, drive = min(options)
        return nodes, drive
    if n > model.max_nodes:
        raise PodplanError(
            f"shared storage cannot deliver the bandwidth in one {model.name} cluster",
            problems=[
                Problem(
                    path="storage",
                    message=(
                        f"needs {n} nodes for the bandwidth; one cluster takes at most "
                        f"{model.max_nodes}"
                    ),
                    hint=(
                        "raise storage.checkpoint_write_seconds, or choose a lower "
                        "storage.performance_tier"
                    ),
                )
            ],
        )
    limit = _usable_tb(model, model.max_nodes, drives[-1])
    raise PodplanError(
        f"shared storage cannot hold {required_tb:.0f} TB in one {model.name} cluster",
        problems=[
            Problem(
                path="storage.dataset_tb",
                message=(
                    f"needs {required_tb:.0f} TB usable; {model.max_nodes} nodes of "
                    f"{drives[-1]} TB drives give {limit:.0f} TB"
                ),
                hint="reduce storage.dataset_tb or storage.checkpoint_keep",
            )
        ],
    )
