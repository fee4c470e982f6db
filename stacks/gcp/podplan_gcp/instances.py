"""Pieces shared by the head node and the GPU nodes."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
from podplan_stackkit.bootstrap import ClusterBoot

from podplan_gcp.config import GcpSettings

MANAGED_LUSTRE_CLIENT_SETUP = (
    # Managed Lustre client packages for Ubuntu (Google Cloud Managed Lustre client docs).
    "curl -fsSL https://us-apt.pkg.dev/doc/repo-signing-key.gpg "
    "| gpg --dearmor > /usr/share/keyrings/lustre-client.gpg",
    'echo "deb [signed-by=/usr/share/keyrings/lustre-client.gpg] '
    "https://us-apt.pkg.dev/projects/lustre-client-binaries lustre-client-ubuntu-"
    '$(. /etc/os-release; echo $VERSION_CODENAME) main" '
    "> /etc/apt/sources.list.d/lustre-client.list",
    "apt-get update -q",
    'apt-get install -y -q "lustre-client-modules-$(uname -r)" lustre-client-utils',
)


def cluster_boot(s: GcpSettings) -> ClusterBoot:
    """The Slurm bootstrap facts of this stack."""
    return ClusterBoot(
        cluster_name=s.cluster_name,
        spec_file=s.spec_file,
        head_hostname=s.head_hostname,
        head_address=s.head_private_ip,
        gpus_per_node=s.gpus_per_node,
        max_nodes=s.node_count,
        node_feature=s.instance_type,
        lustre_client_setup=MANAGED_LUSTRE_CLIENT_SETUP,
    )


def boot_disk(
    image: str, size_gib: int, disk_type: str, kms_key: str | None, labels: dict[str, str]
) -> gcp.compute.InstanceBootDiskArgs:
    """Boot disk, encrypted by Google by default or with the customer key ``kms_key``."""
    return gcp.compute.InstanceBootDiskArgs(
        auto_delete=True,
        kms_key_self_link=kms_key,
        initialize_params=gcp.compute.InstanceBootDiskInitializeParamsArgs(
            image=image, size=size_gib, type=disk_type, labels=labels
        ),
    )


def metadata(
    admin_user: str, ssh_key: pulumi.Input[str], user_data: pulumi.Input[str]
) -> dict[str, pulumi.Input[str]]:
    """Instance metadata: cloud-init user data and the one admin key; no project-wide keys."""
    return {
        "user-data": user_data,
        "ssh-keys": pulumi.Output.concat(admin_user, ":", ssh_key),
        "block-project-ssh-keys": "TRUE",
        "enable-oslogin": "FALSE",
    }


def shielded() -> gcp.compute.InstanceShieldedInstanceConfigArgs:
    """vTPM and integrity monitoring; Secure Boot stays off so the Lustre client's kernel
    modules (installed at first boot) can load."""
    return gcp.compute.InstanceShieldedInstanceConfigArgs(
        enable_secure_boot=False, enable_vtpm=True, enable_integrity_monitoring=True
    )
