#!/bin/bash
# Azure ND H100 v5: the Ubuntu HPC image (microsoft-dsvm:ubuntu-hpc) carries the InfiniBand
# stack, NCCL and the NDv5 topology file (Azure/azhpc-images customizations/ndv5.sh). What
# that script does at image build and GPUDirect RDMA needs at run time: NVIDIA Fabric Manager
# (NVSwitch) running and the nvidia-peermem module loaded.
set -euo pipefail
systemctl enable --now nvidia-fabricmanager
modprobe nvidia-peermem
