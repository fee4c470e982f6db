"""The cluster's VPC: a public subnet for the head node and the NAT gateway, a private subnet
for the GPU nodes and the file system, and two security groups.

Security, least privilege:

* ``cluster`` group — every node and the FSx file system are in it; it admits *all* traffic
  from members of the same group and nothing else. EFA requires exactly this self-reference
  (inbound and outbound), and FSx for Lustre needs ports 988 and 1018-1023 between clients and
  servers, which the self-reference covers.
* ``admin`` group — only on the head node; admits SSH (22/tcp) from ``adminCidr`` only.
* Nothing admits traffic from 0.0.0.0/0. Egress to the internet (package mirrors) leaves
  through the NAT gateway for private nodes and the internet gateway for the head node.
* The VPC's default security group is taken over and emptied so nothing can use it by accident.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws


@dataclass
class NetworkArgs:
    vpc_cidr: str
    public_subnet_cidr: str
    private_subnet_cidr: str
    availability_zone: str
    admin_cidr: str
    tags: dict[str, str]


class Network(pulumi.ComponentResource):
    """VPC, subnets, gateways, routes and the two security groups."""

    vpc_id: pulumi.Output[str]
    public_subnet_id: pulumi.Output[str]
    private_subnet_id: pulumi.Output[str]
    cluster_sg_id: pulumi.Output[str]
    admin_sg_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        def tags(suffix: str) -> dict[str, str]:
            return {**args.tags, "Name": f"{name}-{suffix}"}

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            enable_dns_support=True,
            enable_dns_hostnames=True,
            tags=tags("vpc"),
            opts=child,
        )
        aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg",
            vpc_id=vpc.id,
            ingress=[],
            egress=[],
            tags=tags("default"),
            opts=child,
        )
        public = aws.ec2.Subnet(
            f"{name}-public",
            vpc_id=vpc.id,
            cidr_block=args.public_subnet_cidr,
            availability_zone=args.availability_zone,
            map_public_ip_on_launch=False,
            tags=tags("public"),
            opts=child,
        )
        private = aws.ec2.Subnet(
            f"{name}-private",
            vpc_id=vpc.id,
            cidr_block=args.private_subnet_cidr,
            availability_zone=args.availability_zone,
            map_public_ip_on_launch=False,
            tags=tags("private"),
            opts=child,
        )
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=tags("igw"), opts=child)
        eip = aws.ec2.Eip(f"{name}-nat-ip", domain="vpc", tags=tags("nat"), opts=child)
        nat = aws.ec2.NatGateway(
            f"{name}-nat",
            allocation_id=eip.id,
            subnet_id=public.id,
            tags=tags("nat"),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
        )
        for subnet, kind, route in (
            (
                public,
                "public",
                aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id),
            ),
            (
                private,
                "private",
                aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id),
            ),
        ):
            table = aws.ec2.RouteTable(
                f"{name}-{kind}-rt", vpc_id=vpc.id, routes=[route], tags=tags(kind), opts=child
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-{kind}-rta", subnet_id=subnet.id, route_table_id=table.id, opts=child
            )

        cluster_sg = aws.ec2.SecurityGroup(
            f"{name}-cluster-sg",
            vpc_id=vpc.id,
            description="podplan cluster: all traffic between members only (EFA, Slurm, Lustre)",
            tags=tags("cluster"),
            opts=child,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-cluster-in-self",
            security_group_id=cluster_sg.id,
            referenced_security_group_id=cluster_sg.id,
            ip_protocol="-1",
            description="all traffic from cluster members",
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-cluster-out-self",
            security_group_id=cluster_sg.id,
            referenced_security_group_id=cluster_sg.id,
            ip_protocol="-1",
            description="all traffic to cluster members (EFA requires it)",
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-cluster-out-internet",
            security_group_id=cluster_sg.id,
            cidr_ipv4="0.0.0.0/0",
            ip_protocol="-1",
            description="outbound via NAT/IGW for packages and AWS APIs",
            opts=child,
        )
        admin_sg = aws.ec2.SecurityGroup(
            f"{name}-admin-sg",
            vpc_id=vpc.id,
            description="podplan head node: SSH from the admin network only",
            tags=tags("admin"),
            opts=child,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-admin-ssh",
            security_group_id=admin_sg.id,
            cidr_ipv4=args.admin_cidr,
            ip_protocol="tcp",
            from_port=22,
            to_port=22,
            description="SSH from the admin network",
            opts=child,
        )

        self.vpc_id = vpc.id
        self.public_subnet_id = public.id
        self.private_subnet_id = private.id
        self.cluster_sg_id = cluster_sg.id
        self.admin_sg_id = admin_sg.id
        self.register_outputs(
            {
                "vpc_id": vpc.id,
                "public_subnet_id": public.id,
                "private_subnet_id": private.id,
                "cluster_sg_id": cluster_sg.id,
                "admin_sg_id": admin_sg.id,
            }
        )
