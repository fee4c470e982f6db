"""The head/login node: runs slurmctld; the only VM with a public address, reachable by SSH
from ``adminCidr`` only (NSG rule on the head application security group)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import compute, network

from podplan_azure.config import ImageRef
from podplan_azure.vm import custom_data, image_reference, linux_ssh, security


@dataclass
class HeadNodeArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    zone: str | None
    hostname: str
    instance_type: str
    image: ImageRef
    os_disk_gib: int
    subnet_id: pulumi.Input[str]
    private_ip: str
    application_security_group_ids: list[pulumi.Input[str]]
    admin_user: str
    ssh_public_key: pulumi.Input[str]
    identity_id: pulumi.Input[str]
    """The nodes' managed identity: it may read the munge key, nothing else."""
    user_data: pulumi.Input[str]
    encryption_at_host: bool
    tags: dict[str, str]


class HeadNode(pulumi.ComponentResource):
    """Public IP, NIC with a fixed private address, and the VM."""

    public_ip: pulumi.Output[str]
    private_ip: pulumi.Output[str]

    def __init__(
        self, name: str, args: HeadNodeArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:azure:HeadNode", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        rg_name, location, tags = args.resource_group_name, args.location, args.tags
        zones = [args.zone] if args.zone else None
        pip = network.PublicIPAddress(
            f"{name}-ip",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            sku=network.PublicIPAddressSkuArgs(name="Standard"),
            public_ip_allocation_method="Static",
            zones=zones,
            opts=child,
        )
        nic = network.NetworkInterface(
            f"{name}-nic",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            enable_accelerated_networking=True,
            ip_configurations=[
                network.NetworkInterfaceIPConfigurationArgs(
                    name="primary",
                    primary=True,
                    subnet=network.SubnetArgs(id=args.subnet_id),
                    private_ip_allocation_method="Static",
                    private_ip_address=args.private_ip,
                    public_ip_address=network.PublicIPAddressArgs(id=pip.id),
                    application_security_groups=[
                        network.ApplicationSecurityGroupArgs(id=asg)
                        for asg in args.application_security_group_ids
                    ],
                )
            ],
            opts=child,
        )
        compute.VirtualMachine(
            f"{name}-vm",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            zones=zones,
            hardware_profile=compute.HardwareProfileArgs(vm_size=args.instance_type),
            os_profile=compute.OSProfileArgs(
                computer_name=args.hostname,
                admin_username=args.admin_user,
                custom_data=custom_data(args.user_data),
                linux_configuration=linux_ssh(args.admin_user, args.ssh_public_key),
            ),
            storage_profile=compute.StorageProfileArgs(
                image_reference=image_reference(args.image),
                os_disk=compute.OSDiskArgs(
                    create_option="FromImage",
                    disk_size_gb=args.os_disk_gib,
                    managed_disk=compute.ManagedDiskParametersArgs(
                        storage_account_type="Premium_LRS"
                    ),
                    delete_option="Delete",
                ),
            ),
            network_profile=compute.NetworkProfileArgs(
                network_interfaces=[compute.NetworkInterfaceReferenceArgs(id=nic.id, primary=True)]
            ),
            security_profile=security(args.encryption_at_host),
            identity=compute.VirtualMachineIdentityArgs(
                type=compute.ResourceIdentityType.USER_ASSIGNED,
                user_assigned_identities=[args.identity_id],
            ),
            opts=child,
        )
        self.public_ip = pip.ip_address.apply(lambda ip: ip or "")
        self.private_ip = pulumi.Output.from_input(args.private_ip)
        self.register_outputs({"public_ip": self.public_ip, "private_ip": self.private_ip})
