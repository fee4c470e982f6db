"""Pieces shared by the head VM and the GPU scale set."""

from __future__ import annotations

import base64

import pulumi
from podplan_stackkit.bootstrap import ClusterBoot
from pulumi_azure_native import compute

from podplan_azure.config import AzureSettings, ImageRef

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


def cluster_boot(s: AzureSettings) -> ClusterBoot:
    """The Slurm bootstrap facts of this stack."""
    return ClusterBoot(
        cluster_name=s.cluster_name,
        spec_file=s.spec_file,
        head_hostname=s.head_hostname,
        head_address=s.head_private_ip,
        gpus_per_node=s.gpus_per_node,
        max_nodes=s.node_count,
        node_feature=s.instance_type,
        lustre_client_setup=AMLFS_CLIENT_SETUP,
    )


def custom_data(user_data: pulumi.Input[str]) -> pulumi.Output[str]:
    """cloud-init user data, base64-encoded as Azure's customData wants it."""
    return pulumi.Output.from_input(user_data).apply(
        lambda text: base64.b64encode(text.encode()).decode()
    )


def image_reference(image: ImageRef) -> compute.ImageReferenceArgs:
    return compute.ImageReferenceArgs(
        publisher=image.publisher, offer=image.offer, sku=image.sku, version=image.version
    )


def linux_ssh(admin_user: str, ssh_public_key: pulumi.Input[str]) -> compute.LinuxConfigurationArgs:
    """Key-only SSH for the admin user; password logins disabled."""
    return compute.LinuxConfigurationArgs(
        disable_password_authentication=True,
        ssh=compute.SshConfigurationArgs(
            public_keys=[
                compute.SshPublicKeyArgs(
                    path=f"/home/{admin_user}/.ssh/authorized_keys", key_data=ssh_public_key
                )
            ]
        ),
    )


def security(encryption_at_host: bool) -> compute.SecurityProfileArgs:
    """Encryption at host: temp disks and disk caches encrypted too (managed disks always are)."""
    return compute.SecurityProfileArgs(encryption_at_host=encryption_at_host)
