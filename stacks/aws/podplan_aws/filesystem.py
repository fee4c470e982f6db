"""The shared parallel file system: FSx for Lustre PERSISTENT_2, sized from the plan.

FSx for Lustre always encrypts data at rest (with the AWS-managed key unless ``kmsKeyId``
names a customer key) and, on PERSISTENT_2, in transit between supported instances.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from podplan_aws.config import FSX_DEPLOYMENT_TYPE


@dataclass
class SharedFilesystemArgs:
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    capacity_gib: int
    throughput_per_tib: int
    kms_key_id: str | None
    tags: dict[str, str]


class SharedFilesystem(pulumi.ComponentResource):
    """One FSx for Lustre file system in the private subnet, in the cluster security group."""

    dns_name: pulumi.Output[str]
    mount_name: pulumi.Output[str]
    mount_device: pulumi.Output[str]

    def __init__(
        self, name: str, args: SharedFilesystemArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:aws:SharedFilesystem", name, None, opts)
        fs = aws.fsx.LustreFileSystem(
            f"{name}-lustre",
            deployment_type=FSX_DEPLOYMENT_TYPE,
            storage_type="SSD",
            storage_capacity=args.capacity_gib,
            per_unit_storage_throughput=args.throughput_per_tib,
            file_system_type_version="2.15",
            data_compression_type="LZ4",
            subnet_ids=args.subnet_id,
            security_group_ids=[args.security_group_id],
            kms_key_id=args.kms_key_id,
            tags={**args.tags, "Name": f"{name}-lustre"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.dns_name = fs.dns_name
        self.mount_name = fs.mount_name
        self.mount_device = pulumi.Output.concat(fs.dns_name, "@tcp:/", fs.mount_name)
        self.register_outputs(
            {
                "dns_name": fs.dns_name,
                "mount_name": fs.mount_name,
                "mount_device": self.mount_device,
            }
        )
