"""The cluster's resource group and virtual network.

* ``compute`` subnet — head node and GPU scale set, behind one network security group, with a
  NAT gateway for outbound traffic (VMs without a public address have no default outbound).
* ``lustre`` subnet — dedicated to Azure Managed Lustre, as the service requires.

Network security group, least privilege (rules are evaluated by priority):

* 100: SSH (22/tcp) from ``adminCidr`` to the head node's application security group only;
* 110: everything from the cluster's application security group to itself;
* 120: Lustre (988, 1019-1023/tcp) from the Lustre subnet to the cluster;
* 4096: deny all other inbound — this also overrides Azure's default AllowVnetInBound.

Nothing admits 0.0.0.0/0 or the Internet tag. InfiniBand traffic does not pass through NSGs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import network, resources


@dataclass
class NetworkArgs:
    location: str
    zone: str | None
    vnet_cidr: str
    compute_subnet_cidr: str
    lustre_subnet_cidr: str
    admin_cidr: str
    tags: dict[str, str]


def _allow(
    name: str,
    priority: int,
    protocol: str,
    ports: list[str],
    destination_asg: pulumi.Input[str],
    description: str,
    *,
    source_prefix: str | None = None,
    source_asg: pulumi.Input[str] | None = None,
) -> network.SecurityRuleArgs:
    """An inbound allow rule to one application security group from a prefix or a group."""
    return network.SecurityRuleArgs(
        name=name,
        priority=priority,
        direction="Inbound",
        access="Allow",
        protocol=protocol,
        source_port_range="*",
        source_address_prefix=source_prefix,
        source_application_security_groups=(
            [network.ApplicationSecurityGroupArgs(id=source_asg)] if source_asg else None
        ),
        destination_port_ranges=ports,
        destination_application_security_groups=[
            network.ApplicationSecurityGroupArgs(id=destination_asg)
        ],
        description=description,
    )


class Network(pulumi.ComponentResource):
    """Resource group, VNet, subnets, NSG with application security groups, NAT gateway."""

    resource_group_name: pulumi.Output[str]
    compute_subnet_id: pulumi.Output[str]
    lustre_subnet_id: pulumi.Output[str]
    cluster_asg_id: pulumi.Output[str]
    head_asg_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:azure:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        rg = resources.ResourceGroup(
            f"{name}-rg", location=args.location, tags=args.tags, opts=child
        )
        rg_name, location, tags = rg.name, args.location, args.tags
        cluster_asg = network.ApplicationSecurityGroup(
            f"{name}-cluster-asg",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            opts=child,
        )
        head_asg = network.ApplicationSecurityGroup(
            f"{name}-head-asg",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            opts=child,
        )
        nsg = network.NetworkSecurityGroup(
            f"{name}-nsg",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            security_rules=[
                _allow(
                    "allow-ssh-admin",
                    100,
                    "Tcp",
                    ["22"],
                    head_asg.id,
                    "SSH to the head node from the admin network only",
                    source_prefix=args.admin_cidr,
                ),
                _allow(
                    "allow-intra-cluster",
                    110,
                    "*",
                    ["0-65535"],
                    cluster_asg.id,
                    "all traffic between the cluster's own VMs",
                    source_asg=cluster_asg.id,
                ),
                _allow(
                    "allow-lustre",
                    120,
                    "Tcp",
                    ["988", "1019-1023"],
                    cluster_asg.id,
                    "Azure Managed Lustre servers to the cluster's clients",
                    source_prefix=args.lustre_subnet_cidr,
                ),
                network.SecurityRuleArgs(
                    name="deny-all-inbound",
                    priority=4096,
                    direction="Inbound",
                    access="Deny",
                    protocol="*",
                    source_address_prefix="*",
                    source_port_range="*",
                    destination_address_prefix="*",
                    destination_port_range="*",
                    description="nothing else gets in, not even from the rest of the VNet",
                ),
            ],
            opts=child,
        )
        nat_ip = network.PublicIPAddress(
            f"{name}-nat-ip",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            sku=network.PublicIPAddressSkuArgs(name="Standard"),
            public_ip_allocation_method="Static",
            zones=[args.zone] if args.zone else None,
            opts=child,
        )
        nat = network.NatGateway(
            f"{name}-nat",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            sku=network.NatGatewaySkuArgs(name="Standard"),
            public_ip_addresses=[network.SubResourceArgs(id=nat_ip.id)],
            zones=[args.zone] if args.zone else None,
            opts=child,
        )
        vnet = network.VirtualNetwork(
            f"{name}-vnet",
            resource_group_name=rg_name,
            location=location,
            tags=tags,
            address_space=network.AddressSpaceArgs(address_prefixes=[args.vnet_cidr]),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["subnets"]),
        )
        compute = network.Subnet(
            f"{name}-compute",
            resource_group_name=rg.name,
            virtual_network_name=vnet.name,
            address_prefix=args.compute_subnet_cidr,
            network_security_group=network.NetworkSecurityGroupArgs(id=nsg.id),
            nat_gateway=network.SubResourceArgs(id=nat.id),
            # The munge key's vault admits this subnet only, through its service endpoint.
            service_endpoints=[
                network.ServiceEndpointPropertiesFormatArgs(service="Microsoft.KeyVault")
            ],
            default_outbound_access=False,
            opts=child,
        )
        lustre = network.Subnet(
            f"{name}-lustre",
            resource_group_name=rg.name,
            virtual_network_name=vnet.name,
            address_prefix=args.lustre_subnet_cidr,
            default_outbound_access=False,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[compute]),
        )
        self.resource_group_name = rg.name
        self.compute_subnet_id = compute.id
        self.lustre_subnet_id = lustre.id
        self.cluster_asg_id = cluster_asg.id
        self.head_asg_id = head_asg.id
        self.register_outputs(
            {
                "resource_group_name": rg.name,
                "compute_subnet_id": compute.id,
                "lustre_subnet_id": lustre.id,
            }
        )
