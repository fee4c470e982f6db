"""Launch-template pieces shared by the head node and the GPU nodes."""

from __future__ import annotations

import base64

import pulumi
import pulumi_aws as aws
from podplan_stackkit.bootstrap import ClusterBoot

from podplan_aws.config import AwsSettings

ROOT_DEVICE = "/dev/sda1"
"""Root device name of the Ubuntu-based AMIs the stack uses."""

FSX_CLIENT_SETUP = (
    # https://docs.aws.amazon.com/fsx/latest/LustreGuide/install-lustre-client.html (Ubuntu)
    "wget -qO - https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/"
    "fsx-ubuntu-public-key.asc | gpg --dearmor > /usr/share/keyrings/fsx-ubuntu-public-key.gpg",
    'echo "deb [signed-by=/usr/share/keyrings/fsx-ubuntu-public-key.gpg] '
    "https://fsx-lustre-client-repo.s3.amazonaws.com/ubuntu $(. /etc/os-release; "
    'echo $VERSION_CODENAME) main" > /etc/apt/sources.list.d/fsxlustreclientrepo.list',
    "apt-get update -q",
    'apt-get install -y -q "lustre-client-modules-$(uname -r)"',
)


NAME_FROM_METADATA = (
    "TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token "
    "-H 'X-aws-ec2-metadata-token-ttl-seconds: 300'); "
    'curl -s -H "X-aws-ec2-metadata-token: $TOKEN" '
    "http://169.254.169.254/latest/meta-data/tags/instance/Name"
)
"""Prints the instance's Name tag (instance metadata tags are enabled in the templates)."""


def cluster_boot(s: AwsSettings) -> ClusterBoot:
    """The Slurm bootstrap facts of this stack."""
    return ClusterBoot(
        cluster_name=s.cluster_name,
        spec_file=s.spec_file,
        head_hostname=s.head_hostname,
        head_address=s.head_private_ip,
        gpus_per_node=s.gpus_per_node,
        max_nodes=s.node_count,
        node_feature=s.instance_type,
        lustre_client_setup=FSX_CLIENT_SETUP,
        hostname_command=NAME_FROM_METADATA,
    )


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


def base64_text(text: pulumi.Input[str]) -> pulumi.Output[str]:
    """Launch templates take user data base64-encoded."""
    return pulumi.Output.from_input(text).apply(lambda t: base64.b64encode(t.encode()).decode())


def tag_specifications(tags: dict[str, str]) -> list[aws.ec2.LaunchTemplateTagSpecificationArgs]:
    """Propagate the stack tags to instances, volumes and network interfaces."""
    return [
        aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
        for kind in ("instance", "volume", "network-interface")
    ]
