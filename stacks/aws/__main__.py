"""podplan AWS stack: the plan's cluster shape on p5 instances (see ../README.md).

Thin entry point: read the validated config, compose the components, export the outputs.
"""

import pulumi
from podplan_aws import config
from podplan_aws.boot import cluster_boot
from podplan_aws.filesystem import SharedFilesystem, SharedFilesystemArgs
from podplan_aws.gpu_nodes import GpuNodeGroup, GpuNodeGroupArgs
from podplan_aws.head import HeadNode, HeadNodeArgs
from podplan_aws.munge import MungeKey, MungeKeyArgs
from podplan_aws.network import Network, NetworkArgs
from podplan_stackkit.bootstrap import SharedMount, compute_user_data, head_user_data

s = config.load()

net = Network(
    s.cluster_name,
    NetworkArgs(
        vpc_cidr=s.vpc_cidr,
        public_subnet_cidr=s.public_subnet_cidr,
        private_subnet_cidr=s.private_subnet_cidr,
        availability_zone=s.availability_zone,
        admin_cidr=s.admin_cidr,
        tags=s.tags,
    ),
)
fs = SharedFilesystem(
    f"{s.cluster_name}-shared",
    SharedFilesystemArgs(
        subnet_id=net.private_subnet_id,
        security_group_id=net.cluster_sg_id,
        capacity_gib=s.fsx_capacity_gib,
        throughput_per_tib=s.fsx_throughput_per_tib,
        kms_key_id=s.kms_key_id,
        tags=s.tags,
    ),
)
munge = MungeKey(
    f"{s.cluster_name}-munge",
    MungeKeyArgs(cluster_name=s.cluster_name, kms_key_id=s.kms_key_id, tags=s.tags),
)
# What every node's bootstrap needs: the mount device and where the munge key is kept.
facts = pulumi.Output.all(fs.mount_device, munge.secret_arn).apply(
    lambda v: (SharedMount(v[0], s.mount_point), cluster_boot(s, v[1]))
)
head = HeadNode(
    f"{s.cluster_name}-head",
    HeadNodeArgs(
        hostname=s.head_hostname,
        instance_type=s.head_instance_type,
        image_id=s.image_id,
        subnet_id=net.public_subnet_id,
        private_ip=s.head_private_ip,
        security_group_ids=[net.cluster_sg_id, net.admin_sg_id],
        ssh_public_key=s.ssh_public_key,
        root_volume_gib=s.root_volume_gib,
        kms_key_id=s.kms_key_id,
        instance_profile_arn=munge.instance_profile_arn,
        user_data=facts.apply(lambda f: head_user_data(f[1], f[0])),
        tags=s.tags,
    ),
)
gpus = GpuNodeGroup(
    f"{s.cluster_name}-gpu",
    GpuNodeGroupArgs(
        node_names=s.node_names(),
        instance_type=s.instance_type,
        efa_interfaces=s.efa_interfaces,
        image_id=s.image_id,
        subnet_id=net.private_subnet_id,
        security_group_id=net.cluster_sg_id,
        key_name=head.key_name,
        root_volume_gib=s.root_volume_gib,
        kms_key_id=s.kms_key_id,
        capacity_reservation_id=s.capacity_reservation_id,
        instance_profile_arn=munge.instance_profile_arn,
        user_data=facts.apply(lambda f: compute_user_data(f[1], f[0])),
        tags=s.tags,
    ),
)

pulumi.export("headPublicIp", head.public_ip)
pulumi.export("headPrivateIp", head.private_ip)
pulumi.export("sshCommand", head.public_ip.apply(lambda ip: f"ssh {s.admin_user}@{ip}"))
pulumi.export("computeNodeNames", s.node_names())
pulumi.export("computeNodePrivateIps", gpus.private_ips)
pulumi.export("placementGroup", gpus.placement_group)
pulumi.export("sharedFilesystem", fs.mount_device)
pulumi.export("mungeKeySecret", munge.secret_arn)
