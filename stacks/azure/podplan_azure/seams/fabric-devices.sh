#!/bin/bash
# Azure: one line per InfiniBand HCA, "<device> <port state>" (from sysfs). Only ports whose
# link layer is InfiniBand count: the accelerated-networking NIC is an mlx5 device too.
# PODPLAN_ROOT prefixes every path (tests run it against a fake tree).
set -euo pipefail
root=${PODPLAN_ROOT:-}
for dev in "$root"/sys/class/infiniband/*; do
    [[ -r $dev/ports/1/link_layer ]] || continue
    [[ $(cat "$dev/ports/1/link_layer") == InfiniBand ]] || continue
    read -r _ state <"$dev/ports/1/state"
    echo "$(basename "$dev") $state"
done
