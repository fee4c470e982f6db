#!/bin/bash
# AWS: one line per EFA device, "<device> <port state>" (from sysfs), once libfabric's efa
# provider is seen to find the devices and the aws-ofi-nccl plugin is in place (AWS EFA user
# guide, "Get started with EFA and NCCL": fi_info -p efa -t FI_EP_RDM).
# PODPLAN_ROOT prefixes every path (tests run it against a fake tree).
set -euo pipefail
root=${PODPLAN_ROOT:-}
if ! "$root/opt/amazon/efa/bin/fi_info" -p efa -t FI_EP_RDM >/dev/null; then
    echo "podplan: libfabric's efa provider finds no EFA device (fi_info -p efa -t FI_EP_RDM)" >&2
    exit 1
fi
if [[ -z $(find "$root/opt/amazon/ofi-nccl" -name 'libnccl-net*.so*' -print -quit 2>/dev/null) ]]; then
    echo "podplan: the aws-ofi-nccl plugin (libnccl-net*.so) is not under /opt/amazon/ofi-nccl" >&2
    exit 1
fi
for dev in "$root"/sys/class/infiniband/*; do
    [[ -e $dev/device/driver ]] || continue
    [[ $(basename "$(readlink -f "$dev/device/driver")") == efa ]] || continue
    read -r _ state <"$dev/ports/1/state"
    echo "$(basename "$dev") $state"
done
