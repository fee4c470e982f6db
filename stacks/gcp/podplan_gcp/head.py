"""The head/login node: runs slurmctld; the only VM with a public address, reachable by SSH
from ``adminCidr`` only (firewall rule on the head tag)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from podplan_gcp.instances import boot_disk, metadata, node_identity, shielded


@dataclass
class HeadNodeArgs:
    hostname: str
    zone: str
    instance_type: str
    image: str
    boot_disk_gib: int
    boot_disk_type: str
    kms_key: str | None
    subnet_id: pulumi.Input[str]
    private_ip: str
    tags: list[str]
    labels: dict[str, str]
    admin_user: str
    ssh_public_key: pulumi.Input[str]
    service_account_email: pulumi.Input[str]
    user_data: pulumi.Input[str]


class HeadNode(pulumi.ComponentResource):
    """One VM with a fixed private address and an ephemeral public one."""

    public_ip: pulumi.Output[str]
    private_ip: pulumi.Output[str]

    def __init__(
        self, name: str, args: HeadNodeArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:gcp:HeadNode", name, None, opts)
        vm = gcp.compute.Instance(
            f"{name}-vm",
            name=args.hostname,
            zone=args.zone,
            machine_type=args.instance_type,
            boot_disk=boot_disk(
                args.image, args.boot_disk_gib, args.boot_disk_type, args.kms_key, args.labels
            ),
            network_interfaces=[
                gcp.compute.InstanceNetworkInterfaceArgs(
                    subnetwork=args.subnet_id,
                    network_ip=args.private_ip,
                    nic_type="GVNIC",
                    access_configs=[gcp.compute.InstanceNetworkInterfaceAccessConfigArgs()],
                )
            ],
            metadata=metadata(args.admin_user, args.ssh_public_key, args.user_data),
            tags=args.tags,
            labels=args.labels,
            shielded_instance_config=shielded(),
            service_account=node_identity(args.service_account_email),
            allow_stopping_for_update=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.private_ip = vm.network_interfaces.apply(lambda nics: nics[0].network_ip or "")
        self.public_ip = vm.network_interfaces.apply(_nat_ip)
        self.register_outputs({"public_ip": self.public_ip, "private_ip": self.private_ip})


def _nat_ip(nics: Sequence[gcp.compute.outputs.InstanceNetworkInterface]) -> str:
    """The ephemeral public address of the first NIC ("" until assigned)."""
    configs = nics[0].access_configs if nics else None
    return (configs[0].nat_ip or "") if configs else ""
