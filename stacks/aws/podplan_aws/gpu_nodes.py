"""The GPU node group: p5-class instances in one cluster placement group, each with an EFA
device on every network card (32 on p5.48xlarge), from one launch template."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from podplan_aws.config import efa_layout
from podplan_aws.launch import (
    base64_text,
    encrypted_root,
    imds_v2,
    instance_profile,
    tag_specifications,
)


@dataclass
class GpuNodeGroupArgs:
    node_names: list[str]
    instance_type: str
    efa_interfaces: int
    image_id: str
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    key_name: pulumi.Input[str]
    root_volume_gib: int
    kms_key_id: str | None
    instance_profile_arn: pulumi.Input[str]
    """The node role that may read the munge key (and nothing else)."""
    capacity_reservation_id: str | None
    user_data: pulumi.Input[str]
    """cloud-init user data, the same for every node (each takes its name from its tag)."""
    tags: dict[str, str]


class GpuNodeGroup(pulumi.ComponentResource):
    """Cluster placement group + EFA launch template + one instance per node."""

    placement_group: pulumi.Output[str]
    launch_template_id: pulumi.Output[str]
    private_ips: pulumi.Output[list[str]]

    def __init__(
        self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:aws:GpuNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        placement = aws.ec2.PlacementGroup(
            f"{name}-pg", strategy="cluster", tags=args.tags, opts=child
        )
        interfaces = [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                network_card_index=card,
                device_index=device,
                interface_type=kind,
                subnet_id=args.subnet_id,
                security_groups=[args.security_group_id],
                delete_on_termination="true",
                description=f"{kind} on network card {card}",
            )
            for card, device, kind in efa_layout(args.efa_interfaces)
        ]
        reservation = (
            aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                    capacity_reservation_id=args.capacity_reservation_id
                )
            )
            if args.capacity_reservation_id
            else None
        )
        template = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            image_id=args.image_id,
            instance_type=args.instance_type,
            key_name=args.key_name,
            network_interfaces=interfaces,
            placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=placement.name),
            block_device_mappings=[encrypted_root(args.root_volume_gib, args.kms_key_id)],
            metadata_options=imds_v2(),
            iam_instance_profile=instance_profile(args.instance_profile_arn),
            capacity_reservation_specification=reservation,
            user_data=base64_text(args.user_data),
            tag_specifications=tag_specifications(args.tags),
            tags=args.tags,
            opts=child,
        )
        instances = [
            aws.ec2.Instance(
                host,
                launch_template=aws.ec2.InstanceLaunchTemplateArgs(
                    id=template.id, version=template.latest_version.apply(str)
                ),
                tags={**args.tags, "Name": host},
                opts=child,
            )
            for host in args.node_names
        ]
        self.placement_group = placement.name
        self.launch_template_id = template.id
        self.private_ips = pulumi.Output.all(*[i.private_ip for i in instances])
        self.register_outputs(
            {
                "placement_group": placement.name,
                "launch_template_id": template.id,
                "private_ips": self.private_ips,
            }
        )
