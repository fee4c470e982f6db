"""Pulumi stack settings for the plan's cloud equivalents: ``stacks/<cloud>/Pulumi.<name>.yaml``.

The Pulumi programs in ``stacks/aws``, ``stacks/gcp`` and ``stacks/azure`` are static; every
value they need comes from this file. Python decides every value here (address ranges,
file-system size on the service's steps, zones); the file only serializes the mapping, with
sorted keys, after the provenance header and a comment block saying what it costs and which
secrets the user must set. podplan never writes a secret: ``sshPublicKey`` is set by the user
with ``pulumi config set --secret`` (and ``gcp:project`` on GCP).
"""

from __future__ import annotations

import ipaddress
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from generator.bom.summary import HOURS_PER_MONTH
from generator.plan.models import CloudEquivalent, ClusterPlan
from generator.render.files import OutFile, commented_header, dump_yaml

PROVIDERS = ("aws", "gcp", "azure")
"""Fixed order: each cloud's address block does not move when another cloud is added."""

EXTRA_TAGS = ["managed-by=podplan"]
SECRET_KEYS = {"sshPublicKey": '"$(cat ~/.ssh/id_ed25519.pub)"'}

# Valid file-system sizes, as the stacks validate them (stacks/*/podplan_*/config.py).
FSX_FIRST_GIB, FSX_STEP_GIB = 1200, 2400
GCP_LUSTRE_TIERS = {  # MB/s per TiB -> (min & step GiB, threshold GiB, step above GiB)
    1000: (9_000, 1_530_000, 72_000),
    500: (18_000, 3_060_000, 144_000),
    250: (36_000, 6_120_000, 288_000),
    125: (72_000, 12_240_000, 72_000),
}
AMLFS_STEP_TIB = {40: 48, 125: 16, 250: 8, 500: 4}
ROUNDING_TOLERANCE_GIB = 2.0
"""The plan gives capacity in TiB rounded to 3 decimals (up to 0.5 GiB off a valid size)."""

SEARCH_SPACE = ipaddress.IPv4Network("10.0.0.0/8")
FIRST_BLOCK = ipaddress.IPv4Address("10.64.0.0")


def emit_pulumi(plan: ClusterPlan) -> list[OutFile]:
    """One ``stacks/<provider>/Pulumi.<plan.name>.yaml`` per cloud equivalent in the plan."""
    by_provider: dict[str, CloudEquivalent] = {c.provider: c for c in plan.cloud}
    blocks = _address_blocks(plan, [by_provider[p] for p in PROVIDERS if p in by_provider])
    files = []
    for provider in PROVIDERS:
        ce = by_provider.get(provider)
        if ce is None:
            continue
        config, notes = _STACKS[provider](plan, ce, blocks[provider])
        text = (
            commented_header(plan.spec_file)
            + _comment(_preamble(plan, ce, notes))
            + dump_yaml({"config": config})
        )
        files.append(OutFile(f"stacks/{provider}/Pulumi.{plan.name}.yaml", text))
    return files


# -- per cloud --------------------------------------------------------------------------------


def _common(plan: ClusterPlan, ce: CloudEquivalent) -> dict[str, Any]:
    return {
        "clusterName": plan.name,
        "specFile": plan.spec_file,
        "instanceType": ce.instance_type,
        "nodeCount": ce.count,
        "gpusPerNode": ce.gpus_per_instance,
        "headInstanceType": ce.head_instance_type,
        "adminCidr": plan.admin_cidr,
        "tags": list(EXTRA_TAGS),
    }


def _namespaced(project: str, values: dict[str, Any]) -> dict[str, Any]:
    return {f"{project}:{k}": v for k, v in values.items()}


def _aws(
    plan: ClusterPlan, ce: CloudEquivalent, block: list[ipaddress.IPv4Network]
) -> tuple[dict[str, Any], list[str]]:
    vpc, public, private = block
    need = ce.filesystem.capacity_tib * 1024
    gib = _fsx_gib(need)
    notes = _size_note("FSx for Lustre", need, gib)
    values = {
        **_common(plan, ce),
        "availabilityZone": ce.zone or f"{ce.region}a",
        "efaInterfaces": ce.fabric_interfaces,
        "vpcCidr": str(vpc),
        "publicSubnetCidr": str(public),
        "privateSubnetCidr": str(private),
        "fsxStorageCapacityGib": gib,
        "fsxThroughputPerTib": ce.filesystem.throughput_mb_s_per_tib,
    }
    return {"aws:region": ce.region, **_namespaced("podplan-aws", values)}, notes


def _gcp(
    plan: ClusterPlan, ce: CloudEquivalent, block: list[ipaddress.IPv4Network]
) -> tuple[dict[str, Any], list[str]]:
    _, system, *rest = block
    gpu_subnets, peering = rest[:-1], rest[-1]
    tier = ce.filesystem.throughput_mb_s_per_tib
    need = ce.filesystem.capacity_tib * 1024
    gib = _gcp_lustre_gib(need, tier)
    notes = _size_note("Managed Lustre", need, gib)
    values = {
        **_common(plan, ce),
        "gpuNicCount": ce.fabric_interfaces,
        "systemSubnetCidr": str(system),
        "gpuSubnetCidrs": [str(n) for n in gpu_subnets],
        "lustrePeeringCidr": str(peering),
        "lustreCapacityGib": gib,
        "lustreThroughputPerTib": tier,
    }
    provider = {"gcp:region": ce.region, "gcp:zone": ce.zone or f"{ce.region}-a"}
    return {**provider, **_namespaced("podplan-gcp", values)}, notes


def _azure(
    plan: ClusterPlan, ce: CloudEquivalent, block: list[ipaddress.IPv4Network]
) -> tuple[dict[str, Any], list[str]]:
    vnet, compute, lustre = block
    tier = ce.filesystem.throughput_mb_s_per_tib
    step = AMLFS_STEP_TIB[tier]
    tib = max(step, _ceil_to(ce.filesystem.capacity_tib, step))
    notes = []
    if abs(tib - ce.filesystem.capacity_tib) > 1e-6:
        notes.append(
            f"Azure Managed Lustre rounded up from {ce.filesystem.capacity_tib:g} to {tib} TiB "
            f"(steps of {step} TiB)"
        )
    values = {
        **_common(plan, ce),
        "vnetCidr": str(vnet),
        "computeSubnetCidr": str(compute),
        "lustreSubnetCidr": str(lustre),
        "amlfsSku": ce.filesystem.sku or f"AMLFS-Durable-Premium-{tier}",
        "amlfsCapacityTib": tib,
    }
    zone = _azure_zone(ce.zone)
    if zone:
        values["zone"] = zone
    return {"azure-native:location": ce.region, **_namespaced("podplan-azure", values)}, notes


_STACKS: dict[
    str,
    Callable[
        [ClusterPlan, CloudEquivalent, list[ipaddress.IPv4Network]],
        tuple[dict[str, Any], list[str]],
    ],
] = {"aws": _aws, "gcp": _gcp, "azure": _azure}


def _azure_zone(zone: str | None) -> str | None:
    """Azure zones are "1".."3"; accept "eastus-2" style too; anything else means regional."""
    match = re.search(r"(?:^|-)([1-3])$", zone or "")
    return match.group(1) if match else None


# -- file-system sizes --------------------------------------------------------------------------


def _ceil_to(value: float, step: int) -> int:
    return math.ceil(value / step - 1e-9) * step


def _fsx_gib(gib: float) -> int:
    """FSx for Lustre PERSISTENT_2 SSD: 1200 GiB, then multiples of 2400 GiB."""
    need = gib - ROUNDING_TOLERANCE_GIB
    return FSX_FIRST_GIB if need <= FSX_FIRST_GIB else _ceil_to(need, FSX_STEP_GIB)


def _gcp_lustre_gib(gib: float, tier: int) -> int:
    """Managed Lustre: multiples of the tier's step, a larger step above its threshold."""
    step, threshold, step_above = GCP_LUSTRE_TIERS[tier]
    size = max(step, _ceil_to(gib - ROUNDING_TOLERANCE_GIB, step))
    return size if size <= threshold else _ceil_to(size, step_above)


def _size_note(what: str, gib: float, size: int) -> list[str]:
    if size - gib <= ROUNDING_TOLERANCE_GIB:
        return []
    return [f"{what} rounded up from {gib:.0f} to {size} GiB (the service's steps)"]


# -- address plan --------------------------------------------------------------------------------


def _host_prefix(hosts: int) -> int:
    """Smallest subnet (at most /24) with room for ``hosts`` plus reserved addresses."""
    return min(24, 32 - math.ceil(math.log2(hosts + 16)))


def _amlfs_prefix(capacity_tib: float) -> int:
    """Azure Managed Lustre subnet size by capacity (Microsoft's table; /24 at least)."""
    for limit, prefix in ((196, 24), (400, 23), (800, 22)):
        if capacity_tib <= limit:
            return prefix
    return 21


def _subnet_prefixes(ce: CloudEquivalent) -> list[int]:
    """The sizes of the subnets each cloud's stack needs, in the stack's order."""
    n = ce.count
    if ce.provider == "aws":
        return [24, _host_prefix(n)]
    if ce.provider == "gcp":
        return [_host_prefix(n + 1)] + [_host_prefix(n)] * ce.fabric_interfaces + [20]
    return [_host_prefix(n + 1), _amlfs_prefix(ce.filesystem.capacity_tib)]


def _carve(block: ipaddress.IPv4Network, prefixes: Sequence[int]) -> list[ipaddress.IPv4Network]:
    """Consecutive subnets of ``block``, each aligned to its size."""
    cursor = int(block.network_address)
    out = []
    for prefix in prefixes:
        size = 2 ** (32 - prefix)
        cursor = -(-cursor // size) * size
        net = ipaddress.IPv4Network((cursor, prefix))
        if not net.subnet_of(block):
            raise ValueError(f"{block} cannot hold subnets /{', /'.join(map(str, prefixes))}")
        out.append(net)
        cursor += size
    return out


def _address_blocks(
    plan: ClusterPlan, clouds: list[CloudEquivalent]
) -> dict[str, list[ipaddress.IPv4Network]]:
    """Per cloud: [block, *subnets], each block a /16 or larger in 10/8 that overlaps neither
    the plan's on-prem networks nor another cloud's block (so VPN bursting stays possible)."""
    n = plan.network
    taken = [
        ipaddress.IPv4Network(c)
        for c in (n.oob_cidr, n.mgmt_cidr, n.frontend_cidr, n.fabric_cidr, *n.rail_cidrs)
    ]
    out: dict[str, list[ipaddress.IPv4Network]] = {}
    for ce in clouds:
        prefixes = _subnet_prefixes(ce)
        span = sum(2 ** (32 - p) for p in prefixes)
        block_prefix = min(16, 32 - math.ceil(math.log2(span)) - 1)
        for block in SEARCH_SPACE.subnets(new_prefix=block_prefix):
            if block.network_address < FIRST_BLOCK or any(block.overlaps(t) for t in taken):
                continue
            try:
                subnets = _carve(block, prefixes)
            except ValueError:
                continue
            out[ce.provider] = [block, *subnets]
            taken.append(block)
            break
        else:
            raise ValueError(f"no free address block in {SEARCH_SPACE} for {ce.provider}")
    return out


# -- header comments -------------------------------------------------------------------------------


PROVIDER_NAMES = {"aws": "AWS", "gcp": "Google Cloud", "azure": "Azure"}


def _comment(lines: list[str]) -> str:
    wrapped = []
    for line in lines:
        indent = " " * (len(line) - len(line.lstrip()))
        wrapped += textwrap.wrap(line, 96, subsequent_indent=indent + "  ") or [""]
    return "".join(f"# {line}".rstrip() + "\n" for line in wrapped)


def _period_cost(plan: ClusterPlan, ce: CloudEquivalent) -> str:
    """The run's cost; a serving-only plan has no run ('$0 for the planned run' read as
    free), so its month around the clock instead."""
    if plan.reliability.wallclock_hours > 0:
        return f"${ce.usd_per_run:,.0f} for the planned run"
    return (f"${ce.usd_per_hour * HOURS_PER_MONTH:,.0f} a month around the clock: serving "
            "only, no training run to time")


def _preamble(plan: ClusterPlan, ce: CloudEquivalent, notes: list[str]) -> list[str]:
    fs = ce.filesystem
    storage = f"{fs.capacity_tib:g} TiB at {fs.throughput_mb_s_per_tib} MB/s per TiB"
    if fs.usd_per_month is not None:
        storage += f", about ${fs.usd_per_month:,.0f}/month"
    lines = [
        "",
        f"Cloud equivalent of {plan.name} on {PROVIDER_NAMES[ce.provider]}: {ce.count} x "
        f"{ce.instance_type} ({ce.gpus_per_instance} GPUs, {ce.fabric_interfaces} x "
        f"{ce.fabric} each) in {ce.region}; head node {ce.head_instance_type}; shared Lustre "
        f"{storage}.",
        f"Cost: ${ce.usd_per_hour:,.2f}/hour on demand for the GPU instances "
        f"({_period_cost(plan, ce)}); head node, storage and traffic extra.",
        *(f"Note: {note}." for note in notes),
        "",
        "Set what podplan never writes, then deploy (from this directory):",
        f"  pulumi stack init {plan.name}",
        *(f"  pulumi config set --secret {k} {hint}" for k, hint in SECRET_KEYS.items()),
    ]
    if ce.provider == "gcp":
        lines.append("  pulumi config set gcp:project <your-project-id>")
    if ce.provider == "azure":
        lines.append("  az feature register --namespace Microsoft.Compute --name EncryptionAtHost")
    lines += [
        "  pulumi preview --policy-pack ../policy",
        "  pulumi up",
        "Pulumi stores the secret in this file; podplan plan keeps it (and the salt) when it",
        "regenerates the file.",
        "",
    ]
    return lines
