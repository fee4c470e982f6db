#!/bin/bash
# Google Cloud A3 Mega: one line per GPU NIC, "<nic> <operstate>" (or "mtu-<n>" when the NIC
# does not carry the GPU networks' MTU), once the rest of GPUDirect-TCPXO is seen in place:
# the import-helper module, the aperture devices and a running receive-datapath manager.
# PODPLAN_ROOT prefixes every path (tests run it against a fake tree).
set -euo pipefail
root=${PODPLAN_ROOT:-}
if [[ ! -d $root/sys/module/import_helper ]]; then
    echo "podplan: the dmabuf import-helper kernel module is not loaded" >&2
    exit 1
fi
if [[ -z $(ls -A "$root/dev/aperture_devices" 2>/dev/null) ]]; then
    echo "podplan: no GPUDirect-TCPXO aperture devices under /dev/aperture_devices" >&2
    exit 1
fi
if ! systemctl is-active --quiet podplan-tcpxo-rxdm.service; then
    echo "podplan: the TCPXO receive-datapath manager (podplan-tcpxo-rxdm) is not running" >&2
    exit 1
fi
# shellcheck source=/dev/null
. "$root/var/lib/podplan/tcpxo-nics.env"
for nic in $TCPXO_GPU_NICS; do
    state=$(cat "$root/sys/class/net/$nic/operstate")
    mtu=$(cat "$root/sys/class/net/$nic/mtu")
    [[ $mtu == "$TCPXO_MTU" ]] || state=mtu-$mtu
    echo "$nic $state"
done
