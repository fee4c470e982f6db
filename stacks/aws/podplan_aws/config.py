"""The AWS stack's configuration, read once from ``pulumi.Config()`` and validated.

``podplan plan`` writes every non-secret key into ``Pulumi.<name>.yaml``; the user adds the
secret ones (``pulumi config set --secret sshPublicKey ...``). ``Pulumi.yaml`` declares the
same keys with descriptions; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

from podplan_stackkit.config import ConfigReader, step_problem
from podplan_stackkit.settings import ClusterSettings, InstanceTypes, read_cluster

PROJECT = "podplan-aws"

# FSx for Lustre PERSISTENT_2 (SSD): 1.2 TiB, then 2.4 TiB steps; four throughput tiers.
FSX_DEPLOYMENT_TYPE = "PERSISTENT_2"
FSX_FIRST_GIB = 1200
FSX_STEP_GIB = 2400
FSX_THROUGHPUTS = (125, 250, 500, 1000)

# EFA devices per instance when every network card carries one (AWS EFA user guide).
EFA_INTERFACES = {"p5.48xlarge": 32, "p5e.48xlarge": 32, "p5en.48xlarge": 16}
MAX_NETWORK_CARDS = 32

HEAD_HOST_NUMBER = 10
"""The head node takes the 10th address of the public subnet (AWS reserves .0-.3)."""

EC2_TYPES = InstanceTypes(r"[a-z0-9]+\.[a-z0-9]+", "an EC2 type")
IMAGE_PATTERN = r"ami-[0-9a-f]{8,17}|resolve:ssm:/\S+"


@dataclass(frozen=True, kw_only=True)
class AwsSettings(ClusterSettings):
    """The shared cluster settings plus what only the AWS program needs."""

    region: str
    availability_zone: str
    efa_interfaces: int
    image_id: str
    root_volume_gib: int
    vpc_cidr: str
    public_subnet_cidr: str
    private_subnet_cidr: str
    head_private_ip: str
    fsx_capacity_gib: int
    fsx_throughput_per_tib: int
    kms_key_id: str | None
    capacity_reservation_id: str | None


def fsx_capacity_problem(gib: int) -> str | None:
    """Why ``gib`` is not a valid PERSISTENT_2 SSD capacity, or None."""
    return step_problem(
        gib,
        step=FSX_STEP_GIB,
        minimum=FSX_STEP_GIB,
        maximum=None,
        unit="GiB",
        where=f"FSx for Lustre {FSX_DEPLOYMENT_TYPE}",
        also=(FSX_FIRST_GIB,),
    )


def load(reader: ConfigReader | None = None, provider: ConfigReader | None = None) -> AwsSettings:
    """Read and validate the stack configuration; raises ConfigError listing every problem."""
    r = reader or ConfigReader(PROJECT)
    aws = provider or ConfigReader("aws")
    region = aws.string("region", pattern=r"[a-z]{2}(-[a-z]+)+-\d", what="an AWS region")
    cluster = read_cluster(r, EC2_TYPES, admin_user="ubuntu")

    az = r.string("availabilityZone", pattern=r"[a-z]{2}(-[a-z]+)+-\d[a-z]", what="an AZ name")
    if r.ok("availabilityZone") and aws.ok("region") and not az.startswith(region):
        r.fail("availabilityZone", f"({az}) must be a zone of aws:region ({region})")
    efa = r.integer("efaInterfaces", minimum=1, maximum=MAX_NETWORK_CARDS)
    expected = EFA_INTERFACES.get(cluster.instance_type)
    if expected is not None and r.ok("efaInterfaces") and efa != expected:
        r.fail("efaInterfaces", f"must be {expected} for {cluster.instance_type} (got {efa})")

    image = r.string(
        "imageId",
        "resolve:ssm:/aws/service/deeplearning/ami/x86_64/"
        "base-oss-nvidia-driver-gpu-ubuntu-24.04/latest/ami-id",
        pattern=IMAGE_PATTERN,
        what="an AMI id or resolve:ssm:<parameter>",
    )
    root_gib = r.integer("rootVolumeGib", 200, minimum=50, maximum=16384)

    vpc = r.cidr("vpcCidr")
    public = r.cidr("publicSubnetCidr")
    private = r.cidr("privateSubnetCidr")
    r.subnets_inside("vpcCidr", vpc, {"publicSubnetCidr": public, "privateSubnetCidr": private})
    head_ip = r.host("publicSubnetCidr", public, HEAD_HOST_NUMBER)

    fsx_gib = r.integer("fsxStorageCapacityGib", minimum=1)
    if r.ok("fsxStorageCapacityGib") and (problem := fsx_capacity_problem(fsx_gib)):
        r.fail("fsxStorageCapacityGib", problem)
    tput = r.integer("fsxThroughputPerTib")
    if r.ok("fsxThroughputPerTib") and tput not in FSX_THROUGHPUTS:
        allowed = ", ".join(str(t) for t in FSX_THROUGHPUTS)
        r.fail(
            "fsxThroughputPerTib",
            f"must be one of {allowed} MB/s per TiB for {FSX_DEPLOYMENT_TYPE} (got {tput})",
        )

    kms = r.string("kmsKeyId", "", pattern=r"arn:aws[a-z-]*:kms:\S+", what="a KMS key ARN")
    reservation = r.string(
        "capacityReservationId", "", pattern=r"cr-[0-9a-f]{8,17}", what="a capacity reservation"
    )

    aws.raise_if_invalid()
    r.raise_if_invalid()
    return AwsSettings(
        **cluster.common(),
        region=region,
        availability_zone=az,
        efa_interfaces=efa,
        image_id=image,
        root_volume_gib=root_gib,
        vpc_cidr=str(vpc),
        public_subnet_cidr=str(public),
        private_subnet_cidr=str(private),
        head_private_ip=head_ip,
        fsx_capacity_gib=fsx_gib,
        fsx_throughput_per_tib=tput,
        kms_key_id=kms or None,
        capacity_reservation_id=reservation or None,
    )


def efa_layout(count: int) -> list[tuple[int, int, str]]:
    """``(network_card_index, device_index, interface_type)`` for ``count`` EFA devices.

    As the AWS EFA guide lays out multi-card instances: the primary interface (card 0,
    device 0) is an EFA with ENA so the node keeps its IP interface, and every other network
    card carries one EFA-only interface at device 0 — one EFA device per card.
    """
    return [(0, 0, "efa")] + [(card, 0, "efa-only") for card in range(1, count)]
