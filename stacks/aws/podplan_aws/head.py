"""The head/login node: runs slurmctld, is the only node reachable by SSH (from adminCidr)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from podplan_aws.launch import encrypted_root, imds_v2, instance_profile, tag_specifications


@dataclass
class HeadNodeArgs:
    hostname: str
    instance_type: str
    image_id: str
    subnet_id: pulumi.Input[str]
    private_ip: str
    security_group_ids: list[pulumi.Input[str]]
    ssh_public_key: pulumi.Input[str]
    root_volume_gib: int
    kms_key_id: str | None
    instance_profile_arn: pulumi.Input[str]
    """The node role that may read the munge key (and nothing else)."""
    user_data: pulumi.Input[str]
    tags: dict[str, str]


class HeadNode(pulumi.ComponentResource):
    """SSH key pair, head launch template and the head instance (public IP, fixed private IP)."""

    key_name: pulumi.Output[str]
    public_ip: pulumi.Output[str]
    private_ip: pulumi.Output[str]

    def __init__(
        self, name: str, args: HeadNodeArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:aws:HeadNode", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = {**args.tags, "Name": args.hostname}
        key = aws.ec2.KeyPair(
            f"{name}-key",
            key_name_prefix=f"{args.hostname}-",
            public_key=args.ssh_public_key,
            tags=tags,
            opts=child,
        )
        template = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            image_id=args.image_id,
            instance_type=args.instance_type,
            key_name=key.key_name,
            block_device_mappings=[encrypted_root(args.root_volume_gib, args.kms_key_id)],
            metadata_options=imds_v2(),
            iam_instance_profile=instance_profile(args.instance_profile_arn),
            tag_specifications=tag_specifications(tags),
            tags=tags,
            opts=child,
        )
        instance = aws.ec2.Instance(
            f"{name}-vm",
            launch_template=aws.ec2.InstanceLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            subnet_id=args.subnet_id,
            private_ip=args.private_ip,
            associate_public_ip_address=True,
            vpc_security_group_ids=args.security_group_ids,
            user_data=args.user_data,
            user_data_replace_on_change=True,
            tags=tags,
            opts=child,
        )
        self.key_name = key.key_name
        self.public_ip = instance.public_ip
        self.private_ip = instance.private_ip
        self.register_outputs(
            {
                "key_name": key.key_name,
                "public_ip": instance.public_ip,
                "private_ip": instance.private_ip,
            }
        )
