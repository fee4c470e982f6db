"""The cluster's system VPC: one subnet, Cloud NAT for egress, least-privilege firewall rules,
and private services access for Managed Lustre.

Firewall rules (GCP denies all ingress that no rule allows):

* SSH (22/tcp) from ``adminCidr`` to VMs with the head tag only;
* all protocols between VMs with the cluster's node tag (Slurm, munge, NCCL bootstrap);
* Lustre (988/tcp) from the Managed Lustre peering range to the cluster's VMs.

Nothing admits 0.0.0.0/0. Egress is GCP's implied allow; VMs without a public address leave
through Cloud NAT. Logical names stay short: GCP names are at most 63 characters, and Pulumi
appends 8 to the cluster name (40 at most) plus the suffix used here.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from podplan_gcp.config import GPU_NETWORK_MTU


@dataclass
class NetworkArgs:
    region: str
    subnet_cidr: str
    lustre_peering_cidr: str
    admin_cidr: str
    node_tag: str
    head_tag: str


class Network(pulumi.ComponentResource):
    """System VPC, subnet, router + NAT, firewall rules, private services access."""

    network_id: pulumi.Output[str]
    subnet_id: pulumi.Output[str]
    peering: gcp.servicenetworking.Connection

    def __init__(
        self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:gcp:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        vpc = gcp.compute.Network(
            f"{name}-net", auto_create_subnetworks=False, mtu=GPU_NETWORK_MTU, opts=child
        )
        subnet = gcp.compute.Subnetwork(
            f"{name}-subnet",
            network=vpc.id,
            region=args.region,
            ip_cidr_range=args.subnet_cidr,
            private_ip_google_access=True,
            opts=child,
        )
        router = gcp.compute.Router(
            f"{name}-router", network=vpc.id, region=args.region, opts=child
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            router=router.name,
            region=args.region,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            opts=child,
        )
        gcp.compute.Firewall(
            f"{name}-fw-ssh",
            network=vpc.id,
            direction="INGRESS",
            source_ranges=[args.admin_cidr],
            target_tags=[args.head_tag],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["22"])],
            description="SSH to the head node from the admin network only",
            opts=child,
        )
        gcp.compute.Firewall(
            f"{name}-fw-internal",
            network=vpc.id,
            direction="INGRESS",
            source_tags=[args.node_tag],
            target_tags=[args.node_tag],
            allows=[gcp.compute.FirewallAllowArgs(protocol="all")],
            description="all traffic between the cluster's own VMs",
            opts=child,
        )
        gcp.compute.Firewall(
            f"{name}-fw-lustre",
            network=vpc.id,
            direction="INGRESS",
            source_ranges=[args.lustre_peering_cidr],
            target_tags=[args.node_tag],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["988"])],
            description="Managed Lustre servers to the cluster's clients",
            opts=child,
        )
        peering_net = ipaddress.IPv4Network(args.lustre_peering_cidr)
        peering_range = gcp.compute.GlobalAddress(
            f"{name}-lustre-psa",
            network=vpc.id,
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            address=str(peering_net.network_address),
            prefix_length=peering_net.prefixlen,
            opts=child,
        )
        self.peering = gcp.servicenetworking.Connection(
            f"{name}-lustre-peering",
            network=vpc.id,
            service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[peering_range.name],
            opts=child,
        )
        self.network_id = vpc.id
        self.subnet_id = subnet.id
        self.register_outputs({"network_id": vpc.id, "subnet_id": subnet.id})
