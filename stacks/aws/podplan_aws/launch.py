"""Launch-template pieces shared by the head node and the GPU nodes."""

from __future__ import annotations

import base64

import pulumi
import pulumi_aws as aws

ROOT_DEVICE = "/dev/sda1"
"""Root device name of the Ubuntu-based AMIs the stack uses."""


def encrypted_root(
    size_gib: int, kms_key_id: str | None
) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    """An encrypted gp3 root volume (customer KMS key when given, else the EBS default key)."""
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=ROOT_DEVICE,
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=size_gib,
            volume_type="gp3",
            encrypted="true",
            kms_key_id=kms_key_id,
            delete_on_termination="true",
        ),
    )


def imds_v2() -> aws.ec2.LaunchTemplateMetadataOptionsArgs:
    """Instance metadata with session tokens only (IMDSv2), tags readable (node names)."""
    return aws.ec2.LaunchTemplateMetadataOptionsArgs(
        http_endpoint="enabled",
        http_tokens="required",
        http_put_response_hop_limit=2,
        instance_metadata_tags="enabled",
    )


def instance_profile(arn: pulumi.Input[str]) -> aws.ec2.LaunchTemplateIamInstanceProfileArgs:
    """The node role: it may read the cluster's munge key from Secrets Manager, nothing else."""
    return aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=arn)


def base64_text(text: pulumi.Input[str]) -> pulumi.Output[str]:
    """Launch templates take user data base64-encoded."""
    return pulumi.Output.from_input(text).apply(lambda t: base64.b64encode(t.encode()).decode())


def tag_specifications(tags: dict[str, str]) -> list[aws.ec2.LaunchTemplateTagSpecificationArgs]:
    """Propagate the stack tags to instances, volumes and network interfaces."""
    return [
        aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
        for kind in ("instance", "volume", "network-interface")
    ]
