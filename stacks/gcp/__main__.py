"""podplan GCP stack: the plan's cluster shape on A3 Mega VMs (see ../README.md).

Thin entry point: read the validated config, compose the components, export the outputs.
"""

import pulumi
from podplan_gcp import config
from podplan_gcp.boot import cluster_boot
from podplan_gcp.filesystem import SharedFilesystem, SharedFilesystemArgs
from podplan_gcp.gpu_networks import GpuNetworks, GpuNetworksArgs
from podplan_gcp.gpu_nodes import GpuNodeGroup, GpuNodeGroupArgs
from podplan_gcp.head import HeadNode, HeadNodeArgs
from podplan_gcp.munge import MungeKey, MungeKeyArgs
from podplan_gcp.network import Network, NetworkArgs
from podplan_stackkit.bootstrap import SharedMount, compute_user_data, head_user_data

s = config.load()

net = Network(
    s.cluster_name,
    NetworkArgs(
        region=s.region,
        subnet_cidr=s.system_subnet_cidr,
        lustre_peering_cidr=s.lustre_peering_cidr,
        admin_cidr=s.admin_cidr,
        node_tag=s.network_tag,
        head_tag=s.head_tag,
    ),
)
gpu_nets = GpuNetworks(
    f"{s.cluster_name}-gpunet",
    GpuNetworksArgs(region=s.region, subnet_cidrs=s.gpu_subnet_cidrs, node_tag=s.network_tag),
)
fs = SharedFilesystem(
    f"{s.cluster_name}-shared",
    SharedFilesystemArgs(
        instance_id=f"{s.cluster_name}-shared",
        zone=s.zone,
        network_id=net.network_id,
        filesystem=s.lustre_filesystem,
        capacity_gib=s.lustre_capacity_gib,
        throughput_per_tib=s.lustre_throughput_per_tib,
        kms_key=s.kms_key,
        labels=s.labels,
        peering=net.peering,
    ),
)
munge = MungeKey(
    f"{s.cluster_name}-munge", MungeKeyArgs(cluster_name=s.cluster_name, labels=s.labels)
)
# What every node's bootstrap needs: the mount device and where the munge key is kept.
facts = pulumi.Output.all(fs.mount_device, munge.secret_name).apply(
    lambda v: (SharedMount(v[0], s.mount_point), cluster_boot(s, v[1]))
)
head = HeadNode(
    f"{s.cluster_name}-head",
    HeadNodeArgs(
        hostname=s.head_hostname,
        zone=s.zone,
        instance_type=s.head_instance_type,
        image=s.image,
        boot_disk_gib=s.boot_disk_gib,
        boot_disk_type=s.boot_disk_type,
        kms_key=s.kms_key,
        subnet_id=net.subnet_id,
        private_ip=s.head_private_ip,
        tags=[s.network_tag, s.head_tag],
        labels=s.labels,
        admin_user=s.admin_user,
        ssh_public_key=s.ssh_public_key,
        service_account_email=munge.service_account_email,
        user_data=facts.apply(lambda f: head_user_data(f[1], f[0])),
    ),
)
gpus = GpuNodeGroup(
    f"{s.cluster_name}-gpu",
    GpuNodeGroupArgs(
        node_names=s.node_names(),
        region=s.region,
        zone=s.zone,
        instance_type=s.instance_type,
        image=s.image,
        boot_disk_gib=s.boot_disk_gib,
        boot_disk_type=s.boot_disk_type,
        kms_key=s.kms_key,
        subnet_id=net.subnet_id,
        gpu_subnet_ids=gpu_nets.subnet_ids,
        reservation_name=s.reservation_name,
        tags=[s.network_tag],
        labels=s.labels,
        admin_user=s.admin_user,
        ssh_public_key=s.ssh_public_key,
        service_account_email=munge.service_account_email,
        user_data=facts.apply(lambda f: compute_user_data(f[1], f[0])),
    ),
)

pulumi.export("headPublicIp", head.public_ip)
pulumi.export("headPrivateIp", head.private_ip)
pulumi.export("sshCommand", head.public_ip.apply(lambda ip: f"ssh {s.admin_user}@{ip}"))
pulumi.export("computeNodeNames", s.node_names())
pulumi.export("computeNodePrivateIps", gpus.private_ips)
pulumi.export("placementPolicy", gpus.placement_policy)
pulumi.export("sharedFilesystem", fs.mount_device)
pulumi.export("mungeKeySecret", munge.secret_name)
