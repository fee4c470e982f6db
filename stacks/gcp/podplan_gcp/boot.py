"""The Google Cloud parts of the Slurm bootstrap: seams, GPUDirect-TCPXO, the Lustre client."""

from __future__ import annotations

from podplan_stackkit.bootstrap import (
    CloudSeams,
    ClusterBoot,
    Fabric,
    StackSeams,
    boot_from_settings,
    hostname_seam,
)

from podplan_gcp.config import GPU_NETWORK_MTU, GcpSettings

MANAGED_LUSTRE_CLIENT_SETUP = (
    # Managed Lustre client packages for Ubuntu (Google Cloud Managed Lustre client docs).
    "curl -fsSL https://us-apt.pkg.dev/doc/repo-signing-key.gpg "
    "| gpg --dearmor > /usr/share/keyrings/lustre-client.gpg",
    'echo "deb [signed-by=/usr/share/keyrings/lustre-client.gpg] '
    "https://us-apt.pkg.dev/projects/lustre-client-binaries lustre-client-ubuntu-"
    '$(. /etc/os-release; echo $VERSION_CODENAME) main" '
    "> /etc/apt/sources.list.d/lustre-client.list",
    "apt-get update -q",
    'apt-get install -y -q "lustre-client-modules-$(uname -r)" lustre-client-utils',
)

# The GPUDirect-TCPXO images Google's A3 Mega Slurm prolog runs (slurm-gcp
# tools/prologs-epilogs/receive-data-path-manager-mega); the plugin and the RxDM are released
# in pairs (container-engine-accelerators gpudirect-tcpxo/README.md): upgrade both together.
TCPXO_RXDM_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.16"
TCPXO_PLUGIN_IMAGE = (
    "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.10"
)
TCPXO_SOFTWARE = (
    "/var/lib/tcpxo/lib64/libnccl-net.so",
    "/var/lib/tcpxo/lib64/nccl-env-profile.sh",
    "/var/lib/podplan/tcpxo-nics.env",
)
RXDM_UNIT = "podplan-tcpxo-rxdm.service"
SEAMS = StackSeams("podplan_gcp")


def tcpxo_fabric(gpu_nics: int) -> Fabric:
    """All GPU NICs up at the GPU networks' MTU, with the TCPXO plugin and its RxDM running."""
    return SEAMS.fabric(
        kind="tcpxo",
        devices=gpu_nics,
        state="up",
        requires=TCPXO_SOFTWARE,
        units={RXDM_UNIT: SEAMS.read("rxdm.service")},
        after=(RXDM_UNIT,),
    )


def cluster_boot(s: GcpSettings, munge_secret: str) -> ClusterBoot:
    """The Slurm bootstrap facts of this stack."""
    return boot_from_settings(
        s,
        head_address=s.head_private_ip,
        seams=CloudSeams(
            node_name=hostname_seam(),
            munge_key=SEAMS.read("munge-key.sh"),
            lustre_client_setup=MANAGED_LUSTRE_CLIENT_SETUP,
        ),
        fabric=tcpxo_fabric(s.gpu_nic_count),
        env={
            "PODPLAN_MUNGE_SECRET": munge_secret,
            "TCPXO_RXDM_IMAGE": TCPXO_RXDM_IMAGE,
            "TCPXO_PLUGIN_IMAGE": TCPXO_PLUGIN_IMAGE,
            "TCPXO_MTU": str(GPU_NETWORK_MTU),
        },
    )
