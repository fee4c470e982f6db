"""The same cluster on AWS, GCP and Azure (those in ``provisioning.clouds``).

* Instance: the provider's GPU instance with the plan's GPU model, the same GPUs per node
  first, then the fastest GPU fabric (AWS p5.48xlarge, GCP a3-megagpu-8g, Azure
  Standard_ND96isr_H100_v5 for H100); count = the compute nodes' GPUs / GPUs per instance
  (spares are not rented). No instance with the GPU (e.g. L40S) = no equivalent, noted.
* $/hour = count x on-demand price; $ per run = $/hour x the plan's wall-clock hours.
* File system: the provider's managed Lustre sized to the plan's required storage capacity
  and to the on-prem write throughput, on the service's valid capacity steps and throughput
  tiers (catalog ``cloud.yaml: filesystems``); the cheapest tier when prices are known,
  else the smallest capacity (then the lowest tier).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.plan.catalog_models import CloudFilesystemModel, CloudInstance
from generator.plan.models import CloudEquivalent, CloudFilesystem, StoragePlan

GIB_PER_TB = 1e12 / 2**30
TIB_PER_TB = 1e12 / 2**40

FILESYSTEM_FOR = {
    "aws": "aws-fsx-lustre-persistent2",
    "gcp": "gcp-managed-lustre",
    "azure": "azure-managed-lustre",
}


@dataclass(frozen=True)
class _Option:
    tier: int
    capacity_tib: float
    sku: str | None
    over_limit: bool


def _ceil_to(x: float, step: float) -> float:
    return math.ceil(x / step - 1e-9) * step


def _aws_capacity_gib(fs: CloudFilesystemModel, need_gib: float) -> float:
    for size in sorted(fs.capacity_allowed_small_gib):
        if need_gib <= size:
            return size
    step = fs.capacity_step_gib or 1.0
    return max(fs.capacity_min_gib or 0.0, _ceil_to(need_gib, step))


def _options(fs: CloudFilesystemModel, cap_tib: float, mbps: float) -> list[_Option]:
    out: list[_Option] = []
    for tier in fs.throughput_tiers_mbytes_per_s_per_tib:
        need_tib = max(cap_tib, mbps / tier)
        if fs.skus:
            for sku_name, sku in fs.skus.items():
                if sku.mbytes_per_s_per_tib != tier:
                    continue
                cap = max(sku.capacity_min_tib, _ceil_to(need_tib, sku.capacity_step_tib))
                out.append(_Option(tier, cap, sku_name, cap > sku.capacity_max_tib))
        elif tier in fs.tiers:
            t = fs.tiers[tier]
            gib = max(t.capacity_min_gib, _ceil_to(need_tib * 1024, t.capacity_step_gib))
            if t.capacity_step_above_gib and gib > t.capacity_step_above_gib:
                gib = _ceil_to(gib, t.capacity_large_step_gib or t.capacity_step_gib)
            over = t.capacity_max_gib is not None and gib > t.capacity_max_gib
            out.append(_Option(tier, gib / 1024, None, over))
        else:
            gib = _aws_capacity_gib(fs, need_tib * 1024)
            out.append(_Option(tier, gib / 1024, "PERSISTENT_2", False))
    return out


def size_filesystem(
    fs: CloudFilesystemModel, capacity_tb: float, write_gbps: float
) -> tuple[CloudFilesystem, list[str]]:
    """The cheapest valid size/tier for the capacity (TB) and throughput (GB/s)."""
    cap_tib = capacity_tb * TIB_PER_TB
    mbps = write_gbps * 1000.0
    options = _options(fs, cap_tib, mbps)
    ok = [o for o in options if not o.over_limit] or options
    prices = fs.usd_per_tib_month_by_tier or {}
    if prices and all(o.tier in prices for o in ok):
        best = min(ok, key=lambda o: (o.capacity_tib * prices[o.tier], o.tier))
        usd = round(best.capacity_tib * prices[best.tier], 2)
    else:
        best = min(ok, key=lambda o: (o.capacity_tib, o.tier))
        usd = None
    notes = []
    if best.over_limit:
        notes.append(
            f"{fs.name}: {best.capacity_tib:.0f} TiB is above the self-service maximum; "
            "larger sizes need a support request"
        )
    if usd is None:
        notes.append(f"{fs.name}: no price in the catalog (gap)")
    return (
        CloudFilesystem(
            service=fs.id,
            capacity_tib=best.capacity_tib,
            capacity_gib=round(best.capacity_tib * 1024),
            throughput_mb_s_per_tib=best.tier,
            sku=best.sku,
            usd_per_month=usd,
        ),
        notes,
    )


def pick_instance(
    instances: dict[str, CloudInstance], provider: str, gpu: str, gpus_per_node: int
) -> CloudInstance | None:
    """The provider's instance with this GPU: same GPUs per node first, then fastest fabric."""
    found = [
        i
        for i in instances.values()
        if i.provider == provider and i.role == "gpu-compute" and i.gpu == gpu
    ]
    if not found:
        return None
    return min(found, key=lambda i: (i.gpus != gpus_per_node, -i.fabric_gbps, i.usd_per_hour, i.id))


def plan_cloud(
    providers: list[str],
    instances: dict[str, CloudInstance],
    filesystems: dict[str, CloudFilesystemModel],
    gpu: str,
    gpus_per_node: int,
    compute_nodes: int,
    login_nodes: int,
    storage: StoragePlan,
    wallclock_hours: float,
) -> tuple[list[CloudEquivalent], list[str]]:
    """One equivalent per provider that has a matching instance; notes for the rest."""
    out: list[CloudEquivalent] = []
    notes: list[str] = []
    for provider in providers:
        inst = pick_instance(instances, provider, gpu, gpus_per_node)
        heads = sorted(
            (i for i in instances.values() if i.provider == provider and i.role == "head"),
            key=lambda i: i.id,
        )
        fs_model = filesystems.get(FILESYSTEM_FOR[provider])
        if inst is None or not heads or fs_model is None:
            notes.append(f"{provider}: no {gpu} instance in the catalog, no cloud equivalent")
            continue
        fs, fs_notes = size_filesystem(fs_model, storage.required_tb, storage.write_gbps)
        notes += fs_notes
        count = math.ceil(compute_nodes * gpus_per_node / inst.gpus)
        if inst.gpus != gpus_per_node:
            notes.append(
                f"{provider}: {count} x {inst.instance_type} ({inst.gpus} GPUs) stand in for "
                f"{compute_nodes} nodes of {gpus_per_node} GPUs"
            )
        per_hour = round(count * inst.usd_per_hour, 2)
        out.append(
            CloudEquivalent(
                provider=provider,  # type: ignore[arg-type]
                instance_type=inst.instance_type,
                count=count,
                gpus_per_instance=inst.gpus,
                fabric=inst.fabric,
                fabric_interfaces=inst.fabric_interfaces,
                region=inst.default_region,
                zone=inst.default_zone,
                head_instance_type=heads[0].instance_type,
                login_count=login_nodes,
                usd_per_hour=per_hour,
                usd_per_run=round(per_hour * wallclock_hours, 2),
                filesystem=fs,
            )
        )
    return out, notes
