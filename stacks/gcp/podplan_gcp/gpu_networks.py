"""The A3 Mega GPU fabric: one VPC per GPU NIC (8 on a3-megagpu-8g), MTU 8244, each with one
subnet and a firewall rule that admits traffic from that subnet to the cluster's VMs only."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from podplan_gcp.config import GPU_NETWORK_MTU


@dataclass
class GpuNetworksArgs:
    region: str
    subnet_cidrs: list[str]
    node_tag: str


class GpuNetworks(pulumi.ComponentResource):
    """``len(subnet_cidrs)`` VPC + subnet + firewall triples for GPUDirect-TCPXO."""

    network_ids: list[pulumi.Output[str]]
    subnet_ids: list[pulumi.Output[str]]

    def __init__(
        self, name: str, args: GpuNetworksArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:gcp:GpuNetworks", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.network_ids = []
        self.subnet_ids = []
        for i, cidr in enumerate(args.subnet_cidrs):
            vpc = gcp.compute.Network(
                f"{name}-{i}", auto_create_subnetworks=False, mtu=GPU_NETWORK_MTU, opts=child
            )
            subnet = gcp.compute.Subnetwork(
                f"{name}-{i}-sub",
                network=vpc.id,
                region=args.region,
                ip_cidr_range=cidr,
                opts=child,
            )
            gcp.compute.Firewall(
                f"{name}-{i}-fw",
                network=vpc.id,
                direction="INGRESS",
                source_ranges=[cidr],
                target_tags=[args.node_tag],
                allows=[gcp.compute.FirewallAllowArgs(protocol="all")],
                description=f"GPU NIC {i}: traffic between the cluster's own GPU VMs only",
                opts=child,
            )
            self.network_ids.append(vpc.id)
            self.subnet_ids.append(subnet.id)
        self.register_outputs({"network_ids": self.network_ids, "subnet_ids": self.subnet_ids})
