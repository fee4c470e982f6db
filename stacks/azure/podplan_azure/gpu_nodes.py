"""The GPU node group: ND H100 v5 VMs in ONE virtual machine scale set with
``singlePlacementGroup`` on — InfiniBand only connects VMs of the same placement group."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import compute

from podplan_azure.config import ImageRef
from podplan_azure.vm import custom_data, image_reference, linux_ssh, security


@dataclass
class GpuNodeGroupArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    zone: str | None
    instance_type: str
    node_count: int
    computer_name_prefix: str
    image: ImageRef
    os_disk_gib: int
    subnet_id: pulumi.Input[str]
    application_security_group_id: pulumi.Input[str]
    admin_user: str
    ssh_public_key: pulumi.Input[str]
    identity_id: pulumi.Input[str]
    """The nodes' managed identity: it may read the munge key, nothing else."""
    user_data: pulumi.Input[str]
    encryption_at_host: bool
    tags: dict[str, str]


class GpuNodeGroup(pulumi.ComponentResource):
    """One uniform scale set, one placement group, no overprovisioning, manual upgrades."""

    scale_set_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:azure:GpuNodeGroup", name, None, opts)
        vmss = compute.VirtualMachineScaleSet(
            f"{name}-vmss",
            resource_group_name=args.resource_group_name,
            location=args.location,
            zones=[args.zone] if args.zone else None,
            sku=compute.SkuArgs(name=args.instance_type, tier="Standard", capacity=args.node_count),
            orchestration_mode="Uniform",
            single_placement_group=True,
            platform_fault_domain_count=1,
            overprovision=False,
            upgrade_policy=compute.UpgradePolicyArgs(mode=compute.UpgradeMode.MANUAL),
            virtual_machine_profile=compute.VirtualMachineScaleSetVMProfileArgs(
                os_profile=compute.VirtualMachineScaleSetOSProfileArgs(
                    computer_name_prefix=args.computer_name_prefix,
                    admin_username=args.admin_user,
                    custom_data=custom_data(args.user_data),
                    linux_configuration=linux_ssh(args.admin_user, args.ssh_public_key),
                ),
                storage_profile=compute.VirtualMachineScaleSetStorageProfileArgs(
                    image_reference=image_reference(args.image),
                    os_disk=compute.VirtualMachineScaleSetOSDiskArgs(
                        create_option="FromImage",
                        disk_size_gb=args.os_disk_gib,
                        caching=compute.CachingTypes.READ_WRITE,
                        managed_disk=compute.VirtualMachineScaleSetManagedDiskParametersArgs(
                            storage_account_type="Premium_LRS"
                        ),
                    ),
                ),
                network_profile=compute.VirtualMachineScaleSetNetworkProfileArgs(
                    network_interface_configurations=[
                        compute.VirtualMachineScaleSetNetworkConfigurationArgs(
                            name="primary",
                            primary=True,
                            enable_accelerated_networking=True,
                            ip_configurations=[
                                compute.VirtualMachineScaleSetIPConfigurationArgs(
                                    name="primary",
                                    primary=True,
                                    subnet=compute.ApiEntityReferenceArgs(id=args.subnet_id),
                                    application_security_groups=[
                                        compute.SubResourceArgs(
                                            id=args.application_security_group_id
                                        )
                                    ],
                                )
                            ],
                        )
                    ]
                ),
                security_profile=security(args.encryption_at_host),
            ),
            identity=compute.VirtualMachineScaleSetIdentityArgs(
                type=compute.ResourceIdentityType.USER_ASSIGNED,
                user_assigned_identities=[args.identity_id],
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.scale_set_name = vmss.name
        self.register_outputs({"scale_set_name": vmss.name})
