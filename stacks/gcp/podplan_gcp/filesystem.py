"""The shared parallel file system: Google Cloud Managed Lustre, sized from the plan.

Data is encrypted at rest by Google by default, or with the Cloud KMS key in ``kmsKey``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp


@dataclass
class SharedFilesystemArgs:
    instance_id: str
    zone: str
    network_id: pulumi.Input[str]
    filesystem: str
    capacity_gib: int
    throughput_per_tib: int
    kms_key: str | None
    labels: dict[str, str]
    peering: pulumi.Resource
    """The private services access connection the instance needs first."""


class SharedFilesystem(pulumi.ComponentResource):
    """One Managed Lustre instance in the cluster's zone and VPC."""

    mount_device: pulumi.Output[str]

    def __init__(
        self, name: str, args: SharedFilesystemArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:gcp:SharedFilesystem", name, None, opts)
        fs = gcp.lustre.Instance(
            f"{name}-lustre",
            instance_id=args.instance_id,
            location=args.zone,
            network=args.network_id,
            filesystem=args.filesystem,
            capacity_gib=str(args.capacity_gib),
            per_unit_storage_throughput=str(args.throughput_per_tib),
            kms_key=args.kms_key,
            labels=args.labels,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[args.peering]),
        )
        self.mount_device = fs.mount_point
        self.register_outputs({"mount_device": fs.mount_point})
