#!/bin/bash
# podplan node bootstrap: turns a fresh cloud VM into the cluster's Slurm head or a GPU node.
#
# cloud-init writes this file and everything it reads (write_files), installs the packages
# with service starts held back (/usr/sbin/policy-rc.d), then runs it once (runcmd). Every
# fact comes from /etc/podplan/bootstrap.env; every cloud-specific action is a seam, one
# script each under /usr/local/lib/podplan/seams/:
#   node-name       print this node's host (and Slurm node) name
#   munge-key       print the cluster's munge key, base64, from the cloud's secret store
#   shared-fs       install the Lustre client if needed and mount the shared file system
#   fabric-setup    (GPU nodes) install and start what the GPU fabric needs
#   fabric-devices  (GPU nodes) list the fabric devices and their state (fabric-check reads it)
#
# It fails fast and loudly, never prints the munge key, and leaves its result in
# /var/lib/podplan/bootstrap.status (status=ok|failed|running, the step, the time); cloud-init
# reports the failure too (`cloud-init status` says error). munge, slurmctld and slurmd refuse
# to start unless /etc/munge/munge.key is the key this script received (check-munge-key).
set -euo pipefail
umask 022

ENV_FILE=/etc/podplan/bootstrap.env
SEAMS=/usr/local/lib/podplan/seams
STATE=/var/lib/podplan
STATUS=$STATE/bootstrap.status
SECRETS=/run/podplan          # tmpfs: the received key touches no disk but /etc/munge
POLICY=/usr/sbin/policy-rc.d
POLICY_MARK="podplan: hold service starts until the bootstrap has placed the munge key"

set -a
# shellcheck source=/dev/null
. "$ENV_FILE"
set +a
STEP=start
NODE=$(hostname -s)

say() {
    echo "podplan-bootstrap[$STEP]: $*" >&2
    logger -t podplan-bootstrap -- "[$STEP] $*" 2>/dev/null || true
}

write_status() {
    install -d -m 0755 "$STATE"
    printf 'status=%s\nstep=%s\nrole=%s\nnode=%s\ntime=%s\n' "$1" "$STEP" "$PODPLAN_ROLE" \
        "$NODE" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$STATUS.tmp"
    mv "$STATUS.tmp" "$STATUS"
}

release_policy() {
    if [[ -f $POLICY ]] && grep -qF "$POLICY_MARK" "$POLICY"; then rm -f "$POLICY"; fi
}

finish() {
    local rc=$?
    rm -rf "$SECRETS"
    release_policy
    if ((rc == 0)); then
        STEP="done"
        write_status ok
        say "node $NODE is up as $PODPLAN_ROLE"
    else
        write_status failed
        say "FAILED (exit $rc): $NODE is NOT part of the cluster." \
            "See journalctl -t podplan-bootstrap and /var/log/cloud-init-output.log"
    fi
}
trap finish EXIT

step() {
    STEP=$1
    write_status running
    say "begin"
}

# Retry a command for up to $1 seconds (services that come up in any order).
wait_for() {
    local what=$1 seconds=$2 deadline
    shift 2
    deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            say "gave up after ${seconds}s waiting for $what"
            return 1
        fi
        sleep 2
    done
}

set_node_name() {
    local name
    name=$("$SEAMS/node-name")
    if [[ ! $name =~ ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ ]]; then
        say "the node-name seam printed an invalid host name: '$name'"
        return 1
    fi
    if [[ $(hostname -s) != "$name" ]]; then hostnamectl set-hostname "$name"; fi
    NODE=$name
}

receive_munge_key() {
    install -d -m 0700 "$SECRETS"
    # stdout goes to a root-only tmpfs file, never to a log or a terminal.
    "$SEAMS/munge-key" >"$SECRETS/munge.key.b64"
    if ! base64 -d <"$SECRETS/munge.key.b64" >"$SECRETS/munge.key" 2>/dev/null; then
        say "the munge-key seam did not print base64"
        return 1
    fi
    rm -f "$SECRETS/munge.key.b64"
    local size
    size=$(stat -c %s "$SECRETS/munge.key")
    if ((size < 32)); then
        say "the received munge key has $size bytes; munge needs at least 32"
        return 1
    fi
}

check_packages() {
    local missing=()
    read -r -a wanted <<<"$PODPLAN_PACKAGES"
    for pkg in "${wanted[@]}"; do
        dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
        say "cloud-init did not install: ${missing[*]} (see cloud-init status --long)"
        return 1
    fi
}

install_munge_key() {
    install -d -m 0700 -o munge -g munge /etc/munge
    install -m 0400 -o munge -g munge "$SECRETS/munge.key" /etc/munge/munge.key
    (umask 077 && sha256sum /etc/munge/munge.key | cut -d' ' -f1 >"$STATE/munge.key.sha256")
    rm -f "$SECRETS/munge.key"
}

start_head() {
    step slurmctld
    install -d -m 0755 -o slurm -g slurm /var/spool/slurmctld /var/log/slurm
    systemctl daemon-reload
    systemctl enable munge slurmctld
    systemctl restart munge
    systemctl restart slurmctld
    wait_for "slurmctld to answer" 120 sh -c 'scontrol ping | grep -q "is UP"'
}

start_compute() {
    step fabric-setup
    "$SEAMS/fabric-setup"
    step fabric-check
    install -d -m 0755 -o slurm -g slurm /var/log/slurm
    systemctl daemon-reload
    systemctl enable podplan-fabric-check.service
    if ! systemctl start podplan-fabric-check.service; then
        journalctl -u podplan-fabric-check.service -b --no-pager -n 30 >&2 || true
        return 1
    fi
    step slurmd
    systemctl enable munge slurmd
    systemctl restart munge
    systemctl restart slurmd
    wait_for "slurmd to stay up" 60 systemctl is-active --quiet slurmd
    sleep 3
    systemctl is-active --quiet slurmd || { say "slurmd stopped right after starting"; return 1; }
}

main() {
    write_status running
    step node-name
    set_node_name
    step munge-key
    receive_munge_key
    step packages
    check_packages
    step install-munge-key
    install_munge_key
    release_policy
    step shared-fs
    "$SEAMS/shared-fs"
    case $PODPLAN_ROLE in
    head) start_head ;;
    compute) start_compute ;;
    *) say "unknown role '$PODPLAN_ROLE'"; return 1 ;;
    esac
}

main "$@"
