"""The GPU node group: a3-megagpu-8g VMs under one compact placement policy, each with its
system NIC plus one gVNIC in each of the 8 GPU VPCs (GPUDirect-TCPXO)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from podplan_gcp.instances import boot_disk, metadata, node_identity, shielded


@dataclass
class GpuNodeGroupArgs:
    node_names: list[str]
    region: str
    zone: str
    instance_type: str
    image: str
    boot_disk_gib: int
    boot_disk_type: str
    kms_key: str | None
    subnet_id: pulumi.Input[str]
    gpu_subnet_ids: list[pulumi.Output[str]]
    reservation_name: str | None
    tags: list[str]
    labels: dict[str, str]
    admin_user: str
    ssh_public_key: pulumi.Input[str]
    service_account_email: pulumi.Input[str]
    user_data: pulumi.Input[str]
    """cloud-init user data, the same for every node (the VM name is its host name)."""


class GpuNodeGroup(pulumi.ComponentResource):
    """Compact placement resource policy + one VM per node."""

    placement_policy: pulumi.Output[str]
    private_ips: pulumi.Output[list[str]]

    def __init__(
        self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:gcp:GpuNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        policy = gcp.compute.ResourcePolicy(
            f"{name}-compact",
            region=args.region,
            group_placement_policy=gcp.compute.ResourcePolicyGroupPlacementPolicyArgs(
                collocation="COLLOCATED", vm_count=len(args.node_names)
            ),
            opts=child,
        )
        nics = [
            gcp.compute.InstanceNetworkInterfaceArgs(subnetwork=args.subnet_id, nic_type="GVNIC")
        ]
        nics += [
            gcp.compute.InstanceNetworkInterfaceArgs(subnetwork=subnet, nic_type="GVNIC")
            for subnet in args.gpu_subnet_ids
        ]
        affinity = (
            gcp.compute.InstanceReservationAffinityArgs(
                type="SPECIFIC_RESERVATION",
                specific_reservation=gcp.compute.InstanceReservationAffinitySpecificReservationArgs(
                    key="compute.googleapis.com/reservation-name", values=[args.reservation_name]
                ),
            )
            if args.reservation_name
            else None
        )
        node_metadata = metadata(args.admin_user, args.ssh_public_key, args.user_data)
        vms = [
            gcp.compute.Instance(
                host,
                name=host,
                zone=args.zone,
                machine_type=args.instance_type,
                boot_disk=boot_disk(
                    args.image, args.boot_disk_gib, args.boot_disk_type, args.kms_key, args.labels
                ),
                network_interfaces=nics,
                resource_policies=policy.self_link,
                scheduling=gcp.compute.InstanceSchedulingArgs(
                    on_host_maintenance="TERMINATE", automatic_restart=True
                ),
                reservation_affinity=affinity,
                metadata=node_metadata,
                tags=args.tags,
                labels=args.labels,
                shielded_instance_config=shielded(),
                service_account=node_identity(args.service_account_email),
                allow_stopping_for_update=True,
                opts=child,
            )
            for host in args.node_names
        ]
        self.placement_policy = policy.self_link
        self.private_ips = pulumi.Output.all(
            *[vm.network_interfaces.apply(lambda n: n[0].network_ip or "") for vm in vms]
        )
        self.register_outputs(
            {"placement_policy": policy.self_link, "private_ips": self.private_ips}
        )
