"""Pieces shared by the head node and the GPU nodes."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp


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


def node_identity(email: pulumi.Input[str]) -> gcp.compute.InstanceServiceAccountArgs:
    """The cluster's own service account: its only grant is reading the munge key."""
    return gcp.compute.InstanceServiceAccountArgs(email=email, scopes=["cloud-platform"])
