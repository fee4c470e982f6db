"""The AWS parts of the Slurm bootstrap: seams, the EFA fabric, the FSx client."""

from __future__ import annotations

from importlib import resources

from podplan_stackkit.bootstrap import CloudSeams, ClusterBoot, Fabric

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


def seam(name: str) -> str:
    """One of this stack's seam scripts (``seams/<name>``)."""
    return (resources.files("podplan_aws") / "seams" / name).read_text(encoding="utf-8")


def efa_fabric(devices: int) -> Fabric:
    """Every EFA device of the instance ACTIVE, libfabric and aws-ofi-nccl in place."""
    return Fabric(
        kind="efa",
        devices=devices,
        state="ACTIVE",
        setup=seam("fabric-setup.sh"),
        devices_script=seam("fabric-devices.sh"),
        env=seam("fabric.env"),
        requires=EFA_SOFTWARE,
    )


def cluster_boot(s: AwsSettings, munge_secret_arn: str) -> ClusterBoot:
    """The Slurm bootstrap facts of this stack."""
    return ClusterBoot(
        cluster_name=s.cluster_name,
        spec_file=s.spec_file,
        head_hostname=s.head_hostname,
        head_address=s.head_private_ip,
        gpus_per_node=s.gpus_per_node,
        max_nodes=s.node_count,
        node_feature=s.instance_type,
        seams=CloudSeams(
            node_name=seam("node-name.sh"),
            munge_key=seam("munge-key.sh"),
            lustre_client_setup=FSX_CLIENT_SETUP,
            renames_host=True,
        ),
        fabric=efa_fabric(s.efa_interfaces),
        env={"PODPLAN_REGION": s.region, "PODPLAN_MUNGE_SECRET": munge_secret_arn},
    )
