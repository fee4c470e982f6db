#!/bin/bash
# Google Cloud A3 Mega: GPUDirect-TCPXO as Google sets it up for its A3 Mega Slurm clusters
# (Cluster Toolkit examples/machine-learning/a3-megagpu-8g: slurm-a3mega-image.yaml and the
# slurm-gcp receive-data-path-manager-mega prolog; Compute Engine "GPUDirect-TCPXO" guide):
#   1. Docker with the NVIDIA container toolkit (the RxDM and the plugin installer are images),
#   2. the dmabuf import-helper kernel module from Google's gpudirect-tcpxo apt repository,
#   3. the aperture devices under /dev/aperture_devices (udev rule of the A3 Mega image),
#   4. the TCPXO NCCL net plugin and its NCCL in /var/lib/tcpxo/lib64 (installer image),
#   5. the receive-datapath manager, podplan-tcpxo-rxdm.service (started before the check),
#   6. the names of the 8 GPU NICs for NCCL (/var/lib/podplan/tcpxo-nics.env).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
keyrings=/usr/share/keyrings
apt-get -q update
apt-get -q install -y --no-install-recommends docker.io dkms "linux-headers-$(uname -r)" curl gpg
curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey |
    gpg --dearmor --yes -o "$keyrings/nvidia-container-toolkit-keyring.gpg"
echo "deb [signed-by=$keyrings/nvidia-container-toolkit-keyring.gpg] https://nvidia.github.io/libnvidia-container/stable/deb/\$(ARCH) /" \
    >/etc/apt/sources.list.d/nvidia-container-toolkit.list
curl -fsSL https://packages.cloud.google.com/apt/doc/apt-key.gpg |
    gpg --dearmor --yes -o "$keyrings/cloud.google.gpg"
echo "deb [signed-by=$keyrings/cloud.google.gpg] https://packages.cloud.google.com/apt apt-transport-artifact-registry-stable main" \
    >/etc/apt/sources.list.d/artifact-registry.list
apt-get -q update
apt-get -q install -y nvidia-container-toolkit apt-transport-artifact-registry
curl -fsSL https://us-apt.pkg.dev/doc/repo-signing-key.gpg |
    gpg --dearmor --yes -o "$keyrings/gce-ai-infra.gpg"
echo "deb [arch=all signed-by=$keyrings/gce-ai-infra.gpg] ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-tcpxo-apt main" \
    >/etc/apt/sources.list.d/gpudirect-tcpxo.list
apt-get -q update
apt-get -q install -y dmabuf-import-helper
nvidia-ctk runtime configure --runtime=docker
systemctl restart docker

cat >/etc/udev/rules.d/00-a3-megagpu.rules <<'RULE'
ACTION=="add", SUBSYSTEM=="pci", ATTR{vendor}=="0x1ae0", ATTR{device}=="0x0084", TAG+="systemd", \
    RUN+="/usr/bin/mkdir --mode=0755 -p /dev/aperture_devices", \
    RUN+="/usr/bin/systemd-mount --type=none --options=bind --collect %S/%p /dev/aperture_devices/%k", \
    RUN+="/usr/bin/bash -c '/usr/bin/chmod 0666 /dev/aperture_devices/%k/resource*'"
RULE
udevadm control --reload
udevadm trigger --action=add --subsystem-match=pci --attr-match=vendor=0x1ae0
udevadm settle
modprobe import-helper

rm -rf /var/lib/tcpxo/lib64
docker run --rm --network=host -v /var/lib:/var/lib "$TCPXO_PLUGIN_IMAGE" install --install-nccl

# The GPU NICs: every gVNIC but the one carrying the default route, in PCI order.
primary=$(ip -o route show default | awk '{print $5; exit}')
mapfile -t gpu_nics < <(
    for dev in /sys/class/net/*/device; do
        nic=$(basename "$(dirname "$dev")")
        [[ $nic != "$primary" ]] || continue
        [[ $(basename "$(readlink -f "$dev/driver")") == gve ]] || continue
        echo "$(readlink -f "$dev") $nic"
    done | sort | awk '{print $2}'
)
printf 'NCCL_FASTRAK_CTRL_DEV=%s\nNCCL_FASTRAK_IFNAME=%s\nTCPXO_GPU_NICS="%s"\n' "$primary" \
    "$(IFS=,; echo "${gpu_nics[*]}")" "${gpu_nics[*]}" >/var/lib/podplan/tcpxo-nics.env

systemctl enable --now podplan-tcpxo-rxdm.service
