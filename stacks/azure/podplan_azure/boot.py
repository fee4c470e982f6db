"""The Azure parts of the Slurm bootstrap: seams, the InfiniBand fabric, the AMLFS client."""

from __future__ import annotations

from podplan_stackkit.bootstrap import (
    CloudSeams,
    ClusterBoot,
    Fabric,
    StackSeams,
    boot_from_settings,
    hostname_seam,
)

from podplan_azure.config import AzureSettings

AMLFS_CLIENT_SETUP = (
    # The Azure HPC images carry the Managed Lustre client; on others, install the
    # amlfs-lustre-client package matching the kernel (Azure Managed Lustre client docs).
    "curl -fsSL https://packages.microsoft.com/keys/microsoft.asc "
    "| gpg --dearmor > /usr/share/keyrings/microsoft-prod.gpg",
    'echo "deb [arch=amd64 signed-by=/usr/share/keyrings/microsoft-prod.gpg] '
    "https://packages.microsoft.com/repos/amlfs-$(. /etc/os-release; echo $VERSION_CODENAME)/ "
    '$(. /etc/os-release; echo $VERSION_CODENAME) main" > /etc/apt/sources.list.d/amlfs.list',
    "apt-get update -q",
    "apt-get install -y -q \"$(apt-cache search --names-only '^amlfs-lustre-client-' "
    "| sort -V | tail -1 | cut -d' ' -f1)=$(uname -r)\"",
)
NDV5_TOPOLOGY = "/opt/microsoft/ndv5-topo.xml"
"""NCCL topology file of ND H100 v5, shipped in the Ubuntu HPC image (azhpc-images)."""
SEAMS = StackSeams("podplan_azure")


def infiniband_fabric(devices: int) -> Fabric:
    """Every InfiniBand HCA of the VM ACTIVE, with the NDv5 NCCL topology file in place."""
    return SEAMS.fabric(
        kind="infiniband", devices=devices, state="ACTIVE", requires=(NDV5_TOPOLOGY,)
    )


def cluster_boot(s: AzureSettings, munge_secret_url: str, identity_client_id: str) -> ClusterBoot:
    """The Slurm bootstrap facts of this stack."""
    return boot_from_settings(
        s,
        head_address=s.head_private_ip,
        seams=CloudSeams(
            node_name=hostname_seam(),
            munge_key=SEAMS.read("munge-key.sh"),
            lustre_client_setup=AMLFS_CLIENT_SETUP,
        ),
        fabric=infiniband_fabric(s.ib_devices) if s.ib_devices else None,
        env={
            "PODPLAN_MUNGE_SECRET": munge_secret_url,
            "PODPLAN_IDENTITY_CLIENT_ID": identity_client_id,
        },
    )
