"""podplan Azure stack: the plan's cluster shape on ND H100 v5 (see ../README.md).

Thin entry point: read the validated config, compose the components, export the outputs.
"""

import pulumi
from podplan_azure import config
from podplan_azure.boot import cluster_boot
from podplan_azure.filesystem import SharedFilesystem, SharedFilesystemArgs
from podplan_azure.gpu_nodes import GpuNodeGroup, GpuNodeGroupArgs
from podplan_azure.head import HeadNode, HeadNodeArgs
from podplan_azure.munge import MungeKey, MungeKeyArgs
from podplan_azure.network import Network, NetworkArgs
from podplan_stackkit.bootstrap import SharedMount, compute_user_data, head_user_data

s = config.load()

net = Network(
    s.cluster_name,
    NetworkArgs(
        location=s.location,
        zone=s.zone,
        vnet_cidr=s.vnet_cidr,
        compute_subnet_cidr=s.compute_subnet_cidr,
        lustre_subnet_cidr=s.lustre_subnet_cidr,
        admin_cidr=s.admin_cidr,
        tags=s.tags,
    ),
)
fs = SharedFilesystem(
    f"{s.cluster_name}-shared",
    SharedFilesystemArgs(
        resource_group_name=net.resource_group_name,
        location=s.location,
        zone=s.zone,
        subnet_id=net.lustre_subnet_id,
        sku=s.amlfs_sku,
        capacity_tib=s.amlfs_capacity_tib,
        tags=s.tags,
    ),
)
munge = MungeKey(
    f"{s.cluster_name}-munge",
    MungeKeyArgs(
        cluster_name=s.cluster_name,
        resource_group_name=net.resource_group_name,
        location=s.location,
        subnet_id=net.compute_subnet_id,
        tags=s.tags,
    ),
)
# What every node's bootstrap needs: the mount device and where the munge key is kept.
facts = pulumi.Output.all(fs.mount_device, munge.secret_url, munge.identity_client_id).apply(
    lambda v: (SharedMount(v[0], s.mount_point), cluster_boot(s, v[1], v[2]))
)
head = HeadNode(
    f"{s.cluster_name}-head",
    HeadNodeArgs(
        resource_group_name=net.resource_group_name,
        location=s.location,
        zone=s.zone,
        hostname=s.head_hostname,
        instance_type=s.head_instance_type,
        image=s.image,
        os_disk_gib=s.os_disk_gib,
        subnet_id=net.compute_subnet_id,
        private_ip=s.head_private_ip,
        application_security_group_ids=[net.cluster_asg_id, net.head_asg_id],
        admin_user=s.admin_user,
        ssh_public_key=s.ssh_public_key,
        identity_id=munge.identity_id,
        user_data=facts.apply(lambda f: head_user_data(f[1], f[0])),
        encryption_at_host=s.encryption_at_host,
        tags=s.tags,
    ),
)
gpus = GpuNodeGroup(
    f"{s.cluster_name}-gpu",
    GpuNodeGroupArgs(
        resource_group_name=net.resource_group_name,
        location=s.location,
        zone=s.zone,
        instance_type=s.instance_type,
        node_count=s.node_count,
        computer_name_prefix=s.node_name_prefix,
        image=s.image,
        os_disk_gib=s.os_disk_gib,
        subnet_id=net.compute_subnet_id,
        application_security_group_id=net.cluster_asg_id,
        admin_user=s.admin_user,
        ssh_public_key=s.ssh_public_key,
        identity_id=munge.identity_id,
        user_data=facts.apply(lambda f: compute_user_data(f[1], f[0])),
        encryption_at_host=s.encryption_at_host,
        tags=s.tags,
    ),
)

pulumi.export("headPublicIp", head.public_ip)
pulumi.export("headPrivateIp", head.private_ip)
pulumi.export("sshCommand", head.public_ip.apply(lambda ip: f"ssh {s.admin_user}@{ip}"))
pulumi.export("computeNodeNames", s.node_names())
pulumi.export("scaleSet", gpus.scale_set_name)
pulumi.export("sharedFilesystem", fs.mount_device)
pulumi.export("mungeKeySecret", munge.secret_url)
