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
# read from this machine's apt sources by tests/lab/labhelper.py).
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

exec 3>&2
log() { printf '[cloudlab %(%H:%M:%S)T] %s\n' -1 "$*" >&3; }
die() { log "ERROR: $*"; exit 1; }

need_root() {
    [[ $(id -u) -eq 0 ]] || die "the lab needs root (namespaces, overlay mounts, systemd-nspawn)"
    local tool
    for tool in systemd-nspawn debootstrap dpkg-scanpackages ip nsenter; do
        command -v "$tool" >/dev/null || die "missing tool: $tool"
    done
}

packages() { grep -Ev '^[[:space:]]*(#|$)' "$HERE/packages.txt" | sort -u; }

image_key() {
    local mirror=$1
    { echo "rev=$IMAGE_REV suite=$SUITE mirror=$mirror include=$BASE_INCLUDE ${IMAGE_PACKAGES[*]}"; packages; } |
        sha256sum | cut -c1-16
}

# --- image: debootstrapped cloud image + offline apt repository, cached by key --------------

cmd_image() {
    need_root
    local mirror key dir tmp
    mirror=${PODPLAN_LAB_MIRROR:-$(python3 "$REPO/tests/lab/labhelper.py" mirror "$SUITE")}
    key=$(image_key "$mirror")
    dir=$CACHE_ROOT/$key
    if [[ -f $dir/.complete ]]; then
        log "image cache hit: $dir"
        echo "$dir"
        return 0
    fi
    mkdir -p "$CACHE_ROOT"
    tmp=$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")
    # shellcheck disable=SC2064  # expand now: the trap must remove this very directory
    trap "chroot_umount '$tmp/rootfs'; rm -rf '$tmp'" EXIT
    log "debootstrap $SUITE from $mirror (a minute or two)"
    debootstrap --variant=minbase --include="$BASE_INCLUDE" "$SUITE" "$tmp/rootfs" "$mirror" \
        >"$tmp/debootstrap.log" 2>&1 || { tail -n 30 "$tmp/debootstrap.log" >&2; die "debootstrap failed"; }
    build_repo "$tmp/rootfs" "$tmp/repo"
    finish_rootfs "$tmp/rootfs"
    touch "$tmp/.complete"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    trap - EXIT
    local old
    for old in "$CACHE_ROOT"/*; do
        [[ $old == "$dir" ]] || rm -rf "$old"
    done
    log "image ready: $dir"
    echo "$dir"
}

chroot_umount() {
    local root=$1 m
    for m in "$root/proc" "$root/dev/pts" "$root/dev"; do
        if mountpoint -q "$m" 2>/dev/null; then umount -l "$m"; fi
    done
}

build_repo() {
    local root=$1 repo=$2 f
    log "downloading $(packages | wc -l) packages and their dependencies into the offline repo"
    # The chroot borrows this machine's apt sources for the download only (updates and
    # security included): the nodes install what a real Debian 12 host would.
    rm -f "$root/etc/apt/sources.list"
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] && cp "$f" "$root/etc/apt/sources.list.d/host-$(basename "$f")"
    done
    mount -t proc proc "$root/proc"
    local pkgs
    mapfile -t pkgs < <(packages)
    chroot "$root" apt-get -qq update
    # cloud-init belongs to the image (a cloud image ships it); nothing may start in the chroot.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -qq install -y \
        --no-install-recommends "${IMAGE_PACKAGES[@]}" >/dev/null
    rm -f "$root/usr/sbin/policy-rc.d"
    chroot "$root" apt-get clean
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --download-only \
        --no-install-recommends "${pkgs[@]}" >/dev/null
    chroot_umount "$root"
    mkdir -p "$repo"
    mv "$root"/var/cache/apt/archives/*.deb "$repo/"
    (cd "$repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null)
    log "offline repo: $(find "$repo" -name '*.deb' | wc -l) packages, $(du -sh "$repo" | cut -f1)"
    rm -f "$root"/etc/apt/sources.list.d/host-*
    chroot "$root" apt-get clean
    rm -rf "$root"/var/lib/apt/lists/*
}

finish_rootfs() {
    local root=$1 unit
    # The "distribution mirror" of the lab: the offline repository, bound in read-only.
    echo 'deb [trusted=yes] file:/srv/localrepo ./' >"$root/etc/apt/sources.list.d/podplan-lab.list"
    mkdir -p "$root/srv/localrepo" "$root/srv/podplan-lab/cloud" "$root/srv/podplan-lab/stubs" \
        "$root/srv/podplan-lab/shared"
    : >"$root/etc/machine-id"
    rm -f "$root/etc/hostname" "$root/var/lib/dbus/machine-id"
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
    printf '# podplan cloud lab: no DNS\n' >"$root/etc/resolv.conf"
    for unit in apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service \
        e2scrub_all.timer fstrim.timer; do
        ln -sf /dev/null "$root/etc/systemd/system/$unit"
    done
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
    trap 'exit 130' INT TERM
    trap 'rc=$?; if ((rc != 0)); then log "lab up failed; tearing down"; cmd_down quiet; fi' EXIT
    mkdir -p "$RUN/c" "$RUN/fakedev" "$RUN/shared"
    echo "$img" >"$RUN/image"
    local i
    for ((i = 0; i < GPU_COUNT; i++)); do mknod -m 666 "$RUN/fakedev/nvidia$i" c 195 "$i"; done

    ip netns add "$NS-br"
    ip -n "$NS-br" link set lo up
    ip -n "$NS-br" link add br0 type bridge
    ip -n "$NS-br" link set br0 up

    local name addr cidr n=0 binds=()
    for ((i = 0; i < GPU_COUNT; i++)); do binds+=("--bind-ro=$RUN/fakedev/nvidia$i:/dev/nvidia$i"); done
    for name in $(hosts "$seeds"); do
        n=$((n + 1))
        cidr=$(cat "$seeds/$name/address")
        addr=${cidr%/*}
        [[ $addr == "$NET".* && $cidr == */* ]] ||
            die "$name: address $cidr is not an address/prefix in the lab network $NET.0/24"
        local c=$RUN/c/$name
        mkdir -p "$c/upper" "$c/work" "$c/root"
        ip netns add "$NS-$name"
        ip -n "$NS-br" link add "vh$n" type veth peer name eth0 netns "$NS-$name"
        ip -n "$NS-br" link set "vh$n" master br0 up
        ip -n "$NS-$name" link set lo up
        ip -n "$NS-$name" addr add "$cidr" dev eth0
        ip -n "$NS-$name" link set eth0 up
        mount -t overlay overlay -o "lowerdir=$img/rootfs,upperdir=$c/upper,workdir=$c/work" "$c/root"
        systemd-id128 new >"$c/root/etc/machine-id"
        # The NoCloud seed: exactly the files the test prepared (user data untouched).
        mkdir -p "$c/root/var/lib/cloud/seed/nocloud"
        cp "$seeds/$name/nocloud/"* "$c/root/var/lib/cloud/seed/nocloud/"
        local extra=(--hostname="$name")
        if [[ -s $seeds/$name/hostname ]]; then extra=(--hostname="$(cat "$seeds/$name/hostname")"); fi
        # The lab's "cloud" for this instance: its name, its secret store, its fabric devices.
        if [[ -d $seeds/$name/cloud ]]; then
            extra+=("--bind-ro=$seeds/$name/cloud:/srv/podplan-lab/cloud")
        fi
        local cgs=() hier
        for hier in "${CG_HIERARCHIES[@]}"; do
            if [[ -d $hier ]]; then mkdir -p "$hier/$CG_NAME/$name"; cgs+=("$hier/$CG_NAME/$name"); fi
        done
        (
            for hier in "${cgs[@]}"; do echo "$BASHPID" >"$hier/cgroup.procs"; done
            exec setsid systemd-nspawn --quiet -D "$c/root" --boot --machine="$name" \
                --register=no --keep-unit --console=passive \
                --network-namespace-path="/run/netns/$NS-$name" \
                --bind-ro="$img/repo:/srv/localrepo" --bind-ro="$HERE/stubs:/srv/podplan-lab/stubs" \
                --bind="$RUN/shared:/srv/podplan-lab/shared" \
                "${binds[@]}" "${extra[@]}"
        ) </dev/null >"$c/nspawn.log" 2>&1 3>&- &
        echo $! >"$c/pid"
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
            kill -0 "$(cat "$RUN/c/$name/pid")" 2>/dev/null ||
                { cat "$RUN/c/$name/nspawn.log" >&2; die "container $name exited during boot"; }
            ((SECONDS < deadline)) || die "container $name ($addr) did not boot in 120 s"
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

cmd_down() {
    local quiet=${1:-} c pid ns deadline
    [[ $(id -u) -eq 0 ]] || die "the lab needs root"
    for c in "$RUN"/c/*/; do
        pid=$(cat "$c/pid" 2>/dev/null || true)
        if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    deadline=$((SECONDS + 20))
    for c in "$RUN"/c/*/; do
        pid=$(cat "$c/pid" 2>/dev/null || true)
        [[ -n $pid ]] || continue
        while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            log "container $(basename "$c") ignored SIGTERM; killing nspawn pid $pid"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    for ns in $(ip netns list 2>/dev/null | awk -v p="^$NS-" '$1 ~ p {print $1}'); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    done
    sleep 0.2
    for ns in $(ip netns list 2>/dev/null | awk -v p="^$NS-" '$1 ~ p {print $1}'); do
        ip netns del "$ns" 2>/dev/null || log "could not delete namespace $ns"
    done
    for c in "$RUN"/c/*/; do
        if mountpoint -q "$c/root"; then umount "$c/root" 2>/dev/null || umount -l "$c/root"; fi
    done
    # Slurm's cgroups of the lab's nodes (slurm_<node> in each v1 controller: the vendor data
    # makes the controllers writable so that production's cgroup plugins run).
    local node dir
    if [[ -f $RUN/node-names.txt ]]; then
        while read -r node; do
            for dir in /sys/fs/cgroup/*/slurm_"$node"; do
                find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
                [[ ! -d $dir ]] || log "could not remove $dir (processes left?)"
            done
        done <"$RUN/node-names.txt"
    fi
    local hier top
    for hier in "${CG_HIERARCHIES[@]}"; do
        top=$hier/$CG_NAME
        [[ -d $top ]] || continue
        find "$top" -depth -type d -exec rmdir {} + 2>/dev/null || true
        [[ ! -d $top ]] || log "could not remove every cgroup under $top (processes left?)"
    done
    rm -rf "$RUN"
    [[ -n $quiet ]] || log "lab is down"
}

case ${1:-} in
image) cmd_image ;;
up) shift; cmd_up "$@" ;;
exec) shift; cmd_exec "$@" ;;
down) cmd_down ;;
*) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
