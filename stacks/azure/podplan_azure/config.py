"""The Azure stack's configuration, read once from ``pulumi.Config()`` and validated.

The region comes from the provider key ``azure-native:location`` that ``podplan plan``
writes. ``Pulumi.yaml`` declares the project keys; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from podplan_stackkit.config import ConfigReader, admin_cidr_problem, step_problem

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

NAME_PATTERN = r"[a-z][a-z0-9-]{0,38}[a-z0-9]"
"""Spec names (40 chars at most), starting with a letter as GCP resource names must."""
IMAGE_PATTERN = r"[^:\s]+:[^:\s]+:[^:\s]+:[^:\s]+"


@dataclass(frozen=True)
class ImageRef:
    publisher: str
    offer: str
    sku: str
    version: str


@dataclass(frozen=True)
class AzureSettings:
    """Everything the Azure program needs, typed and checked."""

    cluster_name: str
    spec_file: str
    location: str
    zone: str | None
    instance_type: str
    node_count: int
    gpus_per_node: int
    head_instance_type: str
    admin_cidr: str
    admin_user: str
    image: ImageRef
    os_disk_gib: int
    vnet_cidr: str
    compute_subnet_cidr: str
    lustre_subnet_cidr: str
    head_private_ip: str
    amlfs_sku: str
    amlfs_capacity_tib: int
    encryption_at_host: bool
    mount_point: str
    tags: dict[str, str]
    ssh_public_key: pulumi.Output[str]

    @property
    def head_hostname(self) -> str:
        return f"{self.cluster_name}-head"

    @property
    def node_name_prefix(self) -> str:
        """Scale-set computer name prefix; VM n is named prefix + n in base 36, 6 digits."""
        return f"{self.cluster_name}-gpu-"

    def node_names(self) -> list[str]:
        """Expected host (and Slurm node) names: scale-set instance ids 0..n-1 without
        overprovisioning."""
        return [self.node_name_prefix + _base36(i).rjust(6, "0") for i in range(self.node_count)]


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

    cluster = r.string("clusterName", pattern=NAME_PATTERN, what="lower-case letters, digits, -")
    spec = r.string("specFile")
    zone = r.string("zone", "", pattern=r"[1-3]", what="an availability zone number, 1-3")
    instance_type = r.string("instanceType", pattern=r"Standard_\w+", what="a VM size")
    node_count = r.integer("nodeCount", minimum=1)
    if (
        r.ok("nodeCount", "instanceType")
        and instance_type in IB_SKUS
        and node_count > MAX_SINGLE_PLACEMENT_GROUP
    ):
        pulumi.log.warn(
            f"{PROJECT}:nodeCount ({node_count}) exceeds the {MAX_SINGLE_PLACEMENT_GROUP} VMs an "
            "InfiniBand placement group holds by default: request a larger limit before `up`"
        )
    gpus = r.integer("gpusPerNode", minimum=1, maximum=16)
    head_type = r.string("headInstanceType", pattern=r"Standard_\w+", what="a VM size")

    admin = r.cidr("adminCidr")
    if r.ok("adminCidr") and (problem := admin_cidr_problem(admin)):
        r.fail("adminCidr", problem)
    admin_user = r.string(
        "adminUser", "azureuser", pattern=r"[a-z_][a-z0-9_-]{0,31}", what="a user name"
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
    mount_point = r.string("mountPoint", "/shared", pattern=r"/[A-Za-z0-9._/-]+", what="a path")
    tags = r.tags("tags", {"podplan-cluster": cluster, "podplan-spec": spec})
    key = r.secret("sshPublicKey", '"$(cat ~/.ssh/id_ed25519.pub)"')

    az.raise_if_invalid()
    r.raise_if_invalid()
    publisher, offer, image_sku, version = image.split(":")
    return AzureSettings(
        cluster_name=cluster,
        spec_file=spec,
        location=location,
        zone=zone or None,
        instance_type=instance_type,
        node_count=node_count,
        gpus_per_node=gpus,
        head_instance_type=head_type,
        admin_cidr=str(admin),
        admin_user=admin_user,
        image=ImageRef(publisher, offer, image_sku, version),
        os_disk_gib=disk_gib,
        vnet_cidr=str(vnet),
        compute_subnet_cidr=str(compute),
        lustre_subnet_cidr=str(lustre),
        head_private_ip=head_ip,
        amlfs_sku=sku,
        amlfs_capacity_tib=tib,
        encryption_at_host=encryption_at_host,
        mount_point=mount_point,
        tags=tags,
        ssh_public_key=key,
    )


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = digits[d] + out
        if n == 0:
            return out
