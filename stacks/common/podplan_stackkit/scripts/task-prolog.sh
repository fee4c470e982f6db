#!/bin/bash
# Slurm TaskProlog (slurm.conf): every task on a GPU node starts with the fabric's NCCL and
# libfabric environment from /etc/podplan/fabric.env, whatever the submitting shell had.
# Slurm reads "export NAME=value" lines from this script's output.
set -eo pipefail
env_file=/etc/podplan/fabric.env
[[ -r $env_file ]] || exit 0
set -a
# shellcheck source=/dev/null
. "$env_file"
set +a
env | grep -E '^(NCCL_|FI_|OFI_NCCL_|UCX_|CUDA_DEVICE_ORDER=|LD_LIBRARY_PATH=)' | sed 's/^/export /'
