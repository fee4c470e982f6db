"""The shared parallel file system: Azure Managed Lustre (AMLFS), sized from the plan.

Azure encrypts the file system at rest with Microsoft-managed keys (customer keys are an
option of the service not used here).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import storagecache

LUSTRE_FSNAME = "lustrefs"
"""Azure Managed Lustre serves one file system named ``lustrefs``."""


@dataclass
class SharedFilesystemArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    zone: str | None
    subnet_id: pulumi.Input[str]
    sku: str
    capacity_tib: int
    tags: dict[str, str]


class SharedFilesystem(pulumi.ComponentResource):
    """One Azure Managed Lustre file system in its dedicated subnet."""

    mount_device: pulumi.Output[str]

    def __init__(
        self, name: str, args: SharedFilesystemArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:azure:SharedFilesystem", name, None, opts)
        fs = storagecache.AmlFilesystem(
            f"{name}-amlfs",
            resource_group_name=args.resource_group_name,
            location=args.location,
            zones=[args.zone] if args.zone else None,
            sku=storagecache.SkuNameArgs(name=args.sku),
            storage_capacity_ti_b=float(args.capacity_tib),
            filesystem_subnet=args.subnet_id,
            maintenance_window=storagecache.AmlFilesystemMaintenanceWindowArgs(
                day_of_week=storagecache.MaintenanceDayOfWeekType.SUNDAY, time_of_day_utc="02:00"
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.mount_device = fs.client_info.apply(
            lambda info: f"{info.mgs_address}@tcp:/{LUSTRE_FSNAME}" if info else ""
        )
        self.register_outputs({"mount_device": self.mount_device})
