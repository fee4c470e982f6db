#!/bin/bash
# Every boot of a GPU node (podplan-fabric-check.service, before slurmd): the GPU fabric
# devices the instance type must have are all there and all in the expected state. Fails
# loudly otherwise, and slurmd (which requires this unit) stays down: a node with a missing
# or dead fabric device would slow every multi-node job it joins.
set -euo pipefail
set -a
# shellcheck source=/dev/null
. /etc/podplan/bootstrap.env
set +a
report=/var/lib/podplan/fabric.status

fail() {
    echo "podplan: FABRIC CHECK FAILED: $*" >&2
    logger -p daemon.crit -t podplan-fabric-check -- "FABRIC CHECK FAILED: $*" 2>/dev/null || true
    printf 'status=failed\nkind=%s\nreason=%s\n' "$FABRIC_KIND" "$*" >"$report"
    exit 1
}

missing=()
for path in $FABRIC_REQUIRES; do
    [[ -e $path ]] || missing+=("$path")
done
((${#missing[@]} == 0)) || fail "$FABRIC_KIND software missing: ${missing[*]}"

listing=$(/usr/local/lib/podplan/seams/fabric-devices) || fail "$FABRIC_KIND devices could not be listed"
total=0
ready=0
bad=()
while read -r device state _; do
    [[ -n $device ]] || continue
    total=$((total + 1))
    if [[ $state == "$FABRIC_STATE" ]]; then ready=$((ready + 1)); else bad+=("$device=$state"); fi
done <<<"$listing"

if ((ready != FABRIC_DEVICES)); then
    fail "expected $FABRIC_DEVICES $FABRIC_KIND devices $FABRIC_STATE, found $ready of $total" \
        "${bad[*]:+(not $FABRIC_STATE: ${bad[*]})}"
fi
printf 'status=ok\nkind=%s\ndevices=%s\nstate=%s\n' "$FABRIC_KIND" "$ready" "$FABRIC_STATE" >"$report"
echo "podplan: fabric ok: $ready/$FABRIC_DEVICES $FABRIC_KIND devices $FABRIC_STATE"
