"""The AWS parts of the Slurm bootstrap: seams, the EFA fabric, the FSx client."""

from __future__ import annotations

from podplan_stackkit.bootstrap import (
    CloudSeams,
    ClusterBoot,
    Fabric,
    StackSeams,
    boot_from_settings,
)

from podplan_aws.config import AwsSettings

FSX_CLIENT_SETUP = (
    # https://docs.aws.amazon.com/fsx/latest/LustreGuide/install-lustre-client.html (Ubuntu)
    "wget -qO - https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/"
    "fsx-ubuntu-public-key.asc | gpg --dearmor > /usr/share/keyrings/fsx-ubuntu-public-key.gpg",
    'echo "deb [signed-by=/usr/share/keyrings/fsx-ubuntu-public-key.gpg] '
    "https://fsx-lustre-client-repo.s3.amazonaws.com/ubuntu $(. /etc/os-release; "
    'echo $VERSION_CODENAME) main" > /etc/apt/sources.list.d/fsxlustreclientrepo.list',
    "apt-get update -q",
    'apt-get install -y -q "lustre-client-modules-$(uname -r)"',
)
EFA_SOFTWARE = ("/opt/amazon/efa/lib", "/opt/amazon/ofi-nccl")
"""Where the Deep Learning Base OSS AMI keeps libfabric (efa provider) and aws-ofi-nccl."""
SEAMS = StackSeams("podplan_aws")


def efa_fabric(devices: int) -> Fabric:
    """Every EFA device of the instance ACTIVE, libfabric and aws-ofi-nccl in place."""
    return SEAMS.fabric(kind="efa", devices=devices, state="ACTIVE", requires=EFA_SOFTWARE)


def cluster_boot(s: AwsSettings, munge_secret_arn: str) -> ClusterBoot:
    """The Slurm bootstrap facts of this stack."""
    return boot_from_settings(
        s,
        head_address=s.head_private_ip,
        seams=CloudSeams(
            node_name=SEAMS.read("node-name.sh"),
            munge_key=SEAMS.read("munge-key.sh"),
            lustre_client_setup=FSX_CLIENT_SETUP,
            renames_host=True,
        ),
        fabric=efa_fabric(s.efa_interfaces),
        env={"PODPLAN_REGION": s.region, "PODPLAN_MUNGE_SECRET": munge_secret_arn},
    )
