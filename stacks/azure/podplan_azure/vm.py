"""Pieces shared by the head VM and the GPU scale set."""

from __future__ import annotations

import base64

import pulumi
from pulumi_azure_native import compute

from podplan_azure.config import ImageRef


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
