"""The Azure stack's configuration, read once from ``pulumi.Config()`` and validated.

The region comes from the provider key ``azure-native:location`` that ``podplan plan``
writes. ``Pulumi.yaml`` declares the project keys; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from podplan_stackkit.config import ConfigReader, step_problem
from podplan_stackkit.settings import ClusterSettings, InstanceTypes, read_cluster

PROJECT = "podplan-azure"

# Azure Managed Lustre SKUs: MB/s per TiB -> (minimum and step, documented maximum) in TiB.
# Larger file systems are available on request (support ticket), so the maximum is not enforced.
AMLFS_SKUS: dict[str, tuple[int, int]] = {
    "AMLFS-Durable-Premium-40": (48, 768),
    "AMLFS-Durable-Premium-125": (16, 128),
    "AMLFS-Durable-Premium-250": (8, 128),
    "AMLFS-Durable-Premium-500": (4, 128),
}
IB_SKUS = ("Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5", "Standard_ND96is_H200_v5")
"""VM sizes whose InfiniBand needs all VMs in one placement group."""
MAX_SINGLE_PLACEMENT_GROUP = 100
"""Default VM limit of a scale set with singlePlacementGroup (raisable on request)."""
HEAD_HOST_NUMBER = 10

IB_DEVICES = {
    "Standard_ND96isr_H100_v5": 8,
    "Standard_ND96isr_H200_v5": 8,
    "Standard_ND96is_H200_v5": 8,
}
"""InfiniBand HCAs per VM (one 400 Gb/s NDR ConnectX-7 per GPU on ND H100/H200 v5)."""
AZURE_SIZES = InstanceTypes(r"Standard_\w+", "a VM size")
IMAGE_PATTERN = r"[^:\s]+:[^:\s]+:[^:\s]+:[^:\s]+"


@dataclass(frozen=True)
class ImageRef:
    publisher: str
    offer: str
    sku: str
    version: str


@dataclass(frozen=True, kw_only=True)
class AzureSettings(ClusterSettings):
    """The shared cluster settings plus what only the Azure program needs."""

    location: str
    zone: str | None
    image: ImageRef
    os_disk_gib: int
    vnet_cidr: str
    compute_subnet_cidr: str
    lustre_subnet_cidr: str
    head_private_ip: str
    amlfs_sku: str
    amlfs_capacity_tib: int
    encryption_at_host: bool

    @property
    def node_name_prefix(self) -> str:
        """Scale-set computer name prefix; VM n is named prefix + n in base 36, 6 digits."""
        return f"{self.cluster_name}-gpu-"

    def node_names(self) -> list[str]:
        """Expected host (and Slurm node) names: scale-set instance ids 0..n-1 without
        overprovisioning."""
        return [self.node_name_prefix + _base36(i).rjust(6, "0") for i in range(self.node_count)]

    @property
    def ib_devices(self) -> int:
        """InfiniBand HCAs the boot-time fabric check expects (0: not an IB size)."""
        return IB_DEVICES.get(self.instance_type, 0)


def amlfs_capacity_problem(tib: int, sku: str) -> str | None:
    """Why ``tib`` is not a valid Azure Managed Lustre capacity for ``sku``, or None."""
    step, _documented_max = AMLFS_SKUS[sku]
    return step_problem(
        tib, step=step, minimum=step, maximum=None, unit="TiB", where=f"Azure Managed Lustre {sku}"
    )


def load(reader: ConfigReader | None = None, provider: ConfigReader | None = None) -> AzureSettings:
    """Read and validate the stack configuration; raises ConfigError listing every problem."""
    r = reader or ConfigReader(PROJECT)
    az = provider or ConfigReader("azure-native")
    location = az.string("location", pattern=r"[a-z][a-z0-9]+", what="an Azure region name")

    cluster = read_cluster(r, AZURE_SIZES, admin_user="azureuser")
    zone = r.string("zone", "", pattern=r"[1-3]", what="an availability zone number, 1-3")
    if (
        r.ok("nodeCount", "instanceType")
        and cluster.instance_type in IB_SKUS
        and cluster.node_count > MAX_SINGLE_PLACEMENT_GROUP
    ):
        pulumi.log.warn(
            f"{PROJECT}:nodeCount ({cluster.node_count}) exceeds the "
            f"{MAX_SINGLE_PLACEMENT_GROUP} VMs an InfiniBand placement group holds by default: "
            "request a larger limit before `up`"
        )
    image = r.string(
        "image",
        "microsoft-dsvm:ubuntu-hpc:2404:latest",
        pattern=IMAGE_PATTERN,
        what="publisher:offer:sku:version",
    )
    disk_gib = r.integer("osDiskGib", 200, minimum=64, maximum=4095)

    vnet = r.cidr("vnetCidr")
    compute = r.cidr("computeSubnetCidr")
    lustre = r.cidr("lustreSubnetCidr")
    r.subnets_inside("vnetCidr", vnet, {"computeSubnetCidr": compute, "lustreSubnetCidr": lustre})
    head_ip = r.host("computeSubnetCidr", compute, HEAD_HOST_NUMBER)

    sku = r.string("amlfsSku", choices=AMLFS_SKUS)
    tib = r.integer("amlfsCapacityTib", minimum=1)
    if r.ok("amlfsSku", "amlfsCapacityTib") and (problem := amlfs_capacity_problem(tib, sku)):
        r.fail("amlfsCapacityTib", problem)
    encryption_at_host = r.boolean("encryptionAtHost", True)
    az.raise_if_invalid()
    r.raise_if_invalid()
    publisher, offer, image_sku, version = image.split(":")
    return AzureSettings(
        **cluster.common(),
        location=location,
        zone=zone or None,
        image=ImageRef(publisher, offer, image_sku, version),
        os_disk_gib=disk_gib,
        vnet_cidr=str(vnet),
        compute_subnet_cidr=str(compute),
        lustre_subnet_cidr=str(lustre),
        head_private_ip=head_ip,
        amlfs_sku=sku,
        amlfs_capacity_tib=tib,
        encryption_at_host=encryption_at_host,
    )


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = digits[d] + out
        if n == 0:
            return out
