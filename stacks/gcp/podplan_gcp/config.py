"""The GCP stack's configuration, read once from ``pulumi.Config()`` and validated.

Region and zone come from the provider keys ``gcp:region`` / ``gcp:zone`` that ``podplan
plan`` writes; ``gcp:project`` is the user's to set. ``Pulumi.yaml`` declares the project keys;
a test keeps the two in step.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from podplan_stackkit.config import ConfigReader, step_problem
from podplan_stackkit.settings import ClusterSettings, InstanceTypes, read_cluster

PROJECT = "podplan-gcp"

# Managed Lustre performance tiers (MB/s per TiB) -> (minimum GiB, step GiB up to the
# threshold, step GiB above it, threshold GiB, maximum GiB). Google Cloud Managed Lustre
# "Performance tiers" table.
LUSTRE_TIERS: dict[int, tuple[int, int, int, int, int]] = {
    1000: (9_000, 9_000, 72_000, 1_530_000, 10_008_000),
    500: (18_000, 18_000, 144_000, 3_060_000, 20_016_000),
    250: (36_000, 36_000, 288_000, 6_120_000, 40_032_000),
    125: (72_000, 72_000, 72_000, 12_240_000, 12_240_000),
}
GPU_NICS = {"a3-megagpu-8g": 8, "a3-highgpu-8g": 4}
"""GPU NICs (one VPC each) per machine type: 8 x 200 Gb/s TCPXO on A3 Mega."""
GPU_NETWORK_MTU = 8244
HEAD_HOST_NUMBER = 10
DISK_TYPES = ("pd-ssd", "pd-balanced", "hyperdisk-balanced")

GCE_TYPES = InstanceTypes(r"[a-z0-9]+-[a-z0-9-]+", "a type")


@dataclass(frozen=True, kw_only=True)
class GcpSettings(ClusterSettings):
    """The shared cluster settings plus what only the GCP program needs."""

    region: str
    zone: str
    gpu_nic_count: int
    image: str
    boot_disk_gib: int
    boot_disk_type: str
    system_subnet_cidr: str
    gpu_subnet_cidrs: list[str]
    lustre_peering_cidr: str
    head_private_ip: str
    lustre_capacity_gib: int
    lustre_throughput_per_tib: int
    lustre_filesystem: str
    kms_key: str | None
    reservation_name: str | None
    labels: dict[str, str]

    @property
    def network_tag(self) -> str:
        """Network tag on every cluster VM; firewall rules admit only tagged sources."""
        return f"{self.cluster_name}-node"

    @property
    def head_tag(self) -> str:
        return f"{self.cluster_name}-head"


def lustre_capacity_problem(gib: int, tier: int) -> str | None:
    """Why ``gib`` is not a valid Managed Lustre capacity for the tier, or None."""
    minimum, small_step, big_step, threshold, maximum = LUSTRE_TIERS[tier]
    where = f"Managed Lustre at {tier} MB/s per TiB"
    if gib <= threshold:
        return step_problem(
            gib, step=small_step, minimum=minimum, maximum=threshold, unit="GiB", where=where
        )
    return step_problem(
        gib, step=big_step, minimum=threshold, maximum=maximum, unit="GiB", where=where
    )


def gcp_label(value: str) -> str:
    """A string made valid as a GCP label key/value: lower case, [a-z0-9_-], <= 63 chars."""
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())[:63]


def load(reader: ConfigReader | None = None, provider: ConfigReader | None = None) -> GcpSettings:
    """Read and validate the stack configuration; raises ConfigError listing every problem."""
    r = reader or ConfigReader(PROJECT)
    gcp = provider or ConfigReader("gcp")
    region = gcp.string("region", pattern=r"[a-z]+-[a-z]+\d+", what="a GCP region")
    zone = gcp.string("zone", pattern=r"[a-z]+-[a-z]+\d+-[a-z]", what="a GCP zone")
    if gcp.ok("region", "zone") and not zone.startswith(region + "-"):
        gcp.fail("zone", f"({zone}) must be a zone of gcp:region ({region})")

    cluster = read_cluster(r, GCE_TYPES, admin_user="ubuntu")
    nics = r.integer("gpuNicCount", minimum=0, maximum=8)
    expected = GPU_NICS.get(cluster.instance_type)
    if expected is not None and r.ok("gpuNicCount") and nics != expected:
        r.fail("gpuNicCount", f"must be {expected} for {cluster.instance_type} (got {nics})")
    image = r.string(
        "image",
        "projects/ubuntu-os-accelerator-images/global/images/family/"
        "ubuntu-accelerator-2404-amd64-with-nvidia-570",
        pattern=r"(projects/[a-z0-9-]+/global/images/)?\S+",
        what="an image or image family path",
    )
    disk_gib = r.integer("bootDiskGib", 200, minimum=50, maximum=65536)
    disk_type = r.string("bootDiskType", "pd-ssd", choices=DISK_TYPES)

    system = r.cidr("systemSubnetCidr")
    gpu_nets = r.cidr_list("gpuSubnetCidrs")
    if r.ok("gpuSubnetCidrs", "gpuNicCount") and len(gpu_nets) != nics:
        r.fail("gpuSubnetCidrs", f"must list {nics} subnets, one per GPU NIC (got {len(gpu_nets)})")
    peering = r.cidr("lustrePeeringCidr")
    if r.ok("lustrePeeringCidr") and peering.prefixlen > 24:
        r.fail("lustrePeeringCidr", f"({peering}) must be a /24 or larger for Managed Lustre")
    _no_overlaps(
        r,
        {"systemSubnetCidr": [system], "gpuSubnetCidrs": gpu_nets, "lustrePeeringCidr": [peering]},
    )
    head_ip = r.host("systemSubnetCidr", system, HEAD_HOST_NUMBER)

    tput = r.integer("lustreThroughputPerTib")
    if r.ok("lustreThroughputPerTib") and tput not in LUSTRE_TIERS:
        allowed = ", ".join(str(t) for t in sorted(LUSTRE_TIERS))
        r.fail("lustreThroughputPerTib", f"must be one of {allowed} MB/s per TiB (got {tput})")
    gib = r.integer("lustreCapacityGib", minimum=1)
    if r.ok("lustreCapacityGib", "lustreThroughputPerTib") and (
        problem := lustre_capacity_problem(gib, tput)
    ):
        r.fail("lustreCapacityGib", problem)

    kms = r.string(
        "kmsKey",
        "",
        pattern=r"projects/\S+/locations/\S+/keyRings/\S+/cryptoKeys/\S+",
        what="a Cloud KMS key name",
    )
    reservation = r.string("reservationName", "", pattern=r"[a-z][a-z0-9-]{0,62}", what="a name")
    gcp.raise_if_invalid()
    r.raise_if_invalid()
    return GcpSettings(
        **cluster.common(),
        region=region,
        zone=zone,
        gpu_nic_count=nics,
        image=image,
        boot_disk_gib=disk_gib,
        boot_disk_type=disk_type,
        system_subnet_cidr=str(system),
        gpu_subnet_cidrs=[str(n) for n in gpu_nets],
        lustre_peering_cidr=str(peering),
        head_private_ip=head_ip,
        lustre_capacity_gib=gib,
        lustre_throughput_per_tib=tput,
        lustre_filesystem=re.sub(r"[^a-z0-9]", "", cluster.cluster_name)[:8] or "shared",
        kms_key=kms or None,
        reservation_name=reservation or None,
        labels={gcp_label(k): gcp_label(v) for k, v in cluster.tags.items()},
    )


def _no_overlaps(r: ConfigReader, groups: dict[str, list[ipaddress.IPv4Network]]) -> None:
    """No two networks overlap, within or across the keys' lists."""
    if not r.ok(*groups):
        return
    seen: list[tuple[str, ipaddress.IPv4Network]] = []
    for key, nets in groups.items():
        for net in nets:
            for other_key, other in seen:
                if net.overlaps(other):
                    r.fail(key, f"({net}) overlaps {other_key} ({other})")
            seen.append((key, net))
