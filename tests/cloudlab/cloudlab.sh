#!/usr/bin/env bash
# podplan cloud-init lab: boots "cloud VMs" as systemd-nspawn containers (systemd as PID 1)
# from a Debian image that carries cloud-init, each seeded through cloud-init's NoCloud
# datasource with the user data a Pulumi stack renders. Every host lives in its own network
# namespace on a bridge in yet another namespace, on link-local 169.254.78.0/24 only; the
# root namespace's network is never touched. Prefix ppcl-, so it never collides with the
# Slurm lab (tests/lab, pplab-, 169.254.77.0/24).
#
#   cloudlab.sh image           build (or reuse) the cached rootfs + offline apt repository
#   cloudlab.sh up SEEDS        boot one container per SEEDS/<host>/ (see README.md)
#   cloudlab.sh exec HOST CMD…  run CMD inside a running host (all its namespaces)
#   cloudlab.sh down            stop everything this lab started; safe to run any time
#
# Environment: PODPLAN_CLOUDLAB_CACHE (default /var/tmp/podplan-cloudlab-cache),
# PODPLAN_CLOUDLAB_RUN (default /var/tmp/podplan-cloudlab-run), PODPLAN_LAB_MIRROR (default:
# read from this machine's apt sources by tests/lab/labhelper.py), PODPLAN_LAB_HOSTS_TMPFS
# (the hosts' writable layers: tmpfs size, default 8g, or off).
set -Eeuo pipefail
shopt -s nullglob

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE_ROOT=${PODPLAN_CLOUDLAB_CACHE:-/var/tmp/podplan-cloudlab-cache}
RUN=${PODPLAN_CLOUDLAB_RUN:-/var/tmp/podplan-cloudlab-run}
NS=ppcl                       # prefix of every network namespace this lab creates
NET=169.254.78                # link-local, lab namespaces only
SUITE=bookworm
# Bump IMAGE_REV whenever the image recipe below changes; it is part of the cache key.
IMAGE_REV=3
BASE_INCLUDE=systemd,systemd-sysv,dbus,python3,iproute2,procps,debian-archive-keyring
IMAGE_PACKAGES=(cloud-init)      # what a cloud image carries besides the base system
GPU_COUNT=8
CG_NAME=podplan-cloudlab
CG_HIERARCHIES=(/sys/fs/cgroup/systemd /sys/fs/cgroup/unified)
HOSTS_TMPFS=${PODPLAN_LAB_HOSTS_TMPFS:-8g}  # the hosts' writable layers (lib/nspawn.sh)

LAB_TAG=cloudlab
LAB_TOOLS=(systemd-nspawn debootstrap dpkg-scanpackages ip nsenter)
# shellcheck source=SCRIPTDIR/../lab/lib/nspawn.sh
. "$REPO/tests/lab/lib/nspawn.sh"

# --- image: the shared Debian image (tests/lab/lib/nspawn.sh) as a cloud image -----------------

cmd_image() {
    need_root
    lab_image
}

finish_rootfs() {
    local root=$1
    base_rootfs "$root" '# podplan cloud lab: no DNS'
    mkdir -p "$root/srv/podplan-lab/cloud" "$root/srv/podplan-lab/stubs" "$root/srv/podplan-lab/shared"
    # What a cloud image's own cloud-init configuration says: where its datasource is, that
    # the platform (here: the lab) configures the network, the image's locale (minbase has
    # none generated but C.UTF-8), and that its apt sources are already right. None of it is
    # user data.
    cat >"$root/etc/cloud/cloud.cfg.d/90-podplan-lab.cfg" <<'EOF'
datasource_list: [NoCloud, None]
network: {config: disabled}
locale: C.UTF-8
apt:
  preserve_sources_list: true
EOF
}

# --- up / exec / down ---------------------------------------------------------------------------

hosts() { local d; for d in "$1"/*/; do basename "$d"; done; }

cmd_up() {
    need_root
    local seeds=${1:?usage: cloudlab.sh up SEEDS_DIR}
    [[ -d $seeds ]] || die "no such seeds directory: $seeds"
    seeds=$(cd "$seeds" && pwd)
    cmd_down quiet
    local img
    img=$(cmd_image)
    lab_up_begin "$img"

    local name addr cidr n=0
    for name in $(hosts "$seeds"); do
        n=$((n + 1))
        cidr=$(cat "$seeds/$name/address")
        addr=${cidr%/*}
        [[ $addr == "$NET".* && $cidr == */* ]] ||
            die "$name: address $cidr is not an address/prefix in the lab network $NET.0/24"
        lab_netns "$name" "vh$n" "$cidr"
        lab_rootfs "$name"
        local root=$RUN/c/$name/root
        # The NoCloud seed: exactly the files the test prepared (user data untouched).
        mkdir -p "$root/var/lib/cloud/seed/nocloud"
        cp "$seeds/$name/nocloud/"* "$root/var/lib/cloud/seed/nocloud/"
        local extra=(--hostname="$name")
        if [[ -s $seeds/$name/hostname ]]; then extra=(--hostname="$(cat "$seeds/$name/hostname")"); fi
        # The lab's "cloud" for this instance: its name, its secret store, its fabric devices.
        if [[ -d $seeds/$name/cloud ]]; then
            extra+=("--bind-ro=$seeds/$name/cloud:/srv/podplan-lab/cloud")
        fi
        lab_boot "$name" --bind-ro="$HERE/stubs:/srv/podplan-lab/stubs" \
            --bind="$RUN/shared:/srv/podplan-lab/shared" "${extra[@]}"
        echo "$name $addr" >>"$RUN/hosts.txt"
        if [[ -s $seeds/$name/cloud/name ]]; then cat "$seeds/$name/cloud/name" >>"$RUN/node-names.txt"; fi
    done
    ((n > 0)) || die "no hosts under $seeds"
    log "booting $n containers"
    wait_booted
    log "lab is up: $(awk '{printf "%s=%s ", $1, $2}' "$RUN/hosts.txt")"
    trap - EXIT INT TERM
}

# PID (in the root namespace) of a host's systemd, the container's PID 1.
leader() {
    local name=$1 pid
    for pid in $(ip netns pids "$NS-$name" 2>/dev/null); do
        if awk '/^NSpid:/ {exit !($NF == 1)}' "/proc/$pid/status" 2>/dev/null; then
            echo "$pid"
            return 0
        fi
    done
    return 1
}

in_host() {
    local name=$1 pid
    shift
    pid=$(leader "$name") || die "host $name is not running"
    nsenter --target "$pid" --mount --uts --ipc --net --pid --root -- \
        /usr/bin/env -i -C / PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 "$@"
}

wait_booted() {
    local name addr deadline=$((SECONDS + 120))
    while read -r name addr; do
        # Booted = systemd answers (running, degraded, or still starting cloud-init's units).
        until in_host "$name" systemctl is-system-running >/dev/null 2>&1 ||
            [[ $(in_host "$name" systemctl is-system-running 2>/dev/null) =~ ^(starting|degraded|running)$ ]]; do
            lab_still_booting "$name" "$deadline" "($addr) did not boot in 120 s"
            sleep 0.5
        done
    done <"$RUN/hosts.txt"
}

cmd_exec() {
    need_root
    local name=${1:?usage: cloudlab.sh exec HOST CMD...}
    shift
    in_host "$name" "$@"
}

# node-names.txt: the nodes' Slurm names, whose slurm_<node> cgroups slurmd made in the v1
# controllers (the vendor data makes them writable so that production's cgroup plugins run).
cmd_down() { lab_down "${1:-}" "$RUN/node-names.txt"; }

case ${1:-} in
image) cmd_image ;;
up) shift; cmd_up "$@" ;;
exec) shift; cmd_exec "$@" ;;
down) cmd_down ;;
*) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
