#!/usr/bin/env bash
# podplan Slurm lab: one systemd-nspawn container per inventory host, each booted with
# systemd as PID 1 inside its own network namespace, all joined by a bridge that lives in
# yet another namespace. The Ansible control node is a namespace of its own
# (169.254.77.2). Only link-local 169.254.77.0/24 is used, only inside namespaces this
# script creates; the root namespace's network is never touched.
#
#   lab.sh image                 build (or reuse) the cached rootfs + offline apt repo
#   lab.sh up INVENTORY_DIR      boot one container per slurm_cluster host of INVENTORY_DIR
#   lab.sh add INVENTORY_DIR     boot containers for its hosts the running lab lacks (growth)
#   lab.sh playbook INV [ARG...] run ansible/site.yml against the lab (lab-vars.yml applied)
#   lab.sh ops CMD [ARG...]      run CMD in the control-node namespace
#   lab.sh ssh [USER@]HOST CMD...  run CMD on a lab host (as root, or alice/bob)
#   lab.sh down                  stop everything this lab started; safe to run any time
#
# Environment: PODPLAN_LAB_CACHE (default /var/tmp/podplan-lab-cache),
# PODPLAN_LAB_RUN (default /var/tmp/podplan-lab-run), PODPLAN_LAB_MIRROR (default: read
# from this machine's apt sources), PODPLAN_LAB_NS (namespace prefix, default pplab).
set -Eeuo pipefail
shopt -s nullglob

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE_ROOT=${PODPLAN_LAB_CACHE:-/var/tmp/podplan-lab-cache}
RUN=${PODPLAN_LAB_RUN:-/var/tmp/podplan-lab-run}
NS=${PODPLAN_LAB_NS:-pplab}   # prefix of every network namespace the lab creates
NET=169.254.77                # link-local, lab namespaces only
OPS_ADDR=$NET.2
SUITE=bookworm
# Bump IMAGE_REV whenever the image recipe below changes; it is part of the cache key.
IMAGE_REV=6
BASE_INCLUDE=systemd,systemd-sysv,dbus,openssh-server,python3,python3-apt,iproute2,procps,debian-archive-keyring
GPU_COUNT=8
CG_NAME=podplan-lab${PODPLAN_LAB_NS:+-$PODPLAN_LAB_NS}  # the lab's cgroup subtree below
CG_HIERARCHIES=(/sys/fs/cgroup/systemd /sys/fs/cgroup/unified)
# Ordinary (non-root) users in every container, for jobs, pam_slurm_adopt and enroot:
# alice gets an account in the lab's accounts file, bob deliberately none.
LAB_USERS=(alice:2001 bob:2002)

# Messages go to fd 3, a copy of the original stderr, so that they stay visible when a
# trap fires while a command's stderr is redirected.
exec 3>&2
log() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&3; }
die() { log "ERROR: $*"; exit 1; }

need_root() {
    [[ $(id -u) -eq 0 ]] || die "the lab needs root (namespaces, overlay mounts, systemd-nspawn)"
    local tool
    for tool in systemd-nspawn debootstrap dpkg-scanpackages ip ssh ssh-keygen; do
        command -v "$tool" >/dev/null || die "missing tool: $tool"
    done
}

packages() { grep -Ev '^[[:space:]]*(#|$)' "$HERE/packages.txt" | sort -u; }

image_key() {
    local mirror=$1
    { echo "rev=$IMAGE_REV suite=$SUITE mirror=$mirror include=$BASE_INCLUDE"; packages; } |
        sha256sum | cut -c1-16
}

# --- image: debootstrapped rootfs + offline apt repository, cached by key -------------------

cmd_image() {
    need_root
    local mirror key dir tmp
    mirror=${PODPLAN_LAB_MIRROR:-$(python3 "$HERE/labhelper.py" mirror "$SUITE")}
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
    log "debootstrap $SUITE from $mirror (about a minute)"
    debootstrap --variant=minbase --include="$BASE_INCLUDE" "$SUITE" "$tmp/rootfs" "$mirror" \
        >"$tmp/debootstrap.log" 2>&1 || { tail -n 30 "$tmp/debootstrap.log" >&2; die "debootstrap failed"; }
    build_repo "$tmp/rootfs" "$tmp/repo"
    finish_rootfs "$tmp/rootfs"
    touch "$tmp/.complete"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    trap - EXIT
    # Keep only the current image: an old key is never used again.
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
    # security included, so the lab gets the same versions as a real host would).
    rm -f "$root/etc/apt/sources.list"
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] && cp "$f" "$root/etc/apt/sources.list.d/host-$(basename "$f")"
    done
    # Files that this machine has switched off (other suffixes) are not copied.
    mount -t proc proc "$root/proc"
    local pkgs
    mapfile -t pkgs < <(packages)
    chroot "$root" apt-get -qq update
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
    # apt's cache_valid_time looks at these times: make the empty cache look stale, so the
    # playbook's first apt task refreshes it from the offline repo.
    rm -f "$root/var/lib/apt/periodic/update-success-stamp"
    touch -d @0 "$root/var/lib/apt/lists"
}

finish_rootfs() {
    local root=$1 unit
    echo 'deb [trusted=yes] file:/srv/localrepo ./' >"$root/etc/apt/sources.list.d/podplan-lab.list"
    mkdir -p "$root/srv/localrepo" "$root/root/.ssh"
    chmod 700 "$root/root/.ssh"
    # Every container gets its own identity at boot (lab.sh up writes these per host).
    : >"$root/etc/machine-id"
    rm -f "$root/etc/hostname" "$root/var/lib/dbus/machine-id"
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
    # No DNS inside the lab (debootstrap copied this machine's resolver): names come from
    # /etc/hosts, which the playbook's cluster_hosts role fills in.
    printf '# podplan lab: no DNS; see /etc/hosts\n' >"$root/etc/resolv.conf"
    # Nothing may take the dpkg lock behind the playbook's back.
    for unit in apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service \
        e2scrub_all.timer fstrim.timer; do
        ln -sf /dev/null "$root/etc/systemd/system/$unit"
    done
    cat >"$root/etc/ssh/sshd_config.d/podplan-lab.conf" <<'EOF'
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
EOF
    local user
    for user in "${LAB_USERS[@]}"; do
        chroot "$root" useradd --uid "${user#*:}" --user-group --create-home --shell /bin/sh "${user%%:*}"
        install -d -m 700 -o "${user#*:}" -g "${user#*:}" "$root/home/${user%%:*}/.ssh"
    done
}

# --- up / down --------------------------------------------------------------------------------

ns_exec() { local ns=$1; shift; ip netns exec "$NS-$ns" "$@"; }

SSH_OPTS=(-i "$RUN/id_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=no
    -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=3)

cmd_up() {
    need_root
    local inventory=${1:?usage: lab.sh up INVENTORY_DIR}
    [[ -d $inventory || -f $inventory ]] || die "no such inventory: $inventory"
    cmd_down quiet
    local img
    img=$(cmd_image)
    # Any failure (or signal) from here on tears down whatever was already started.
    trap 'exit 130' INT TERM
    trap 'rc=$?; if ((rc != 0)); then log "lab up failed; tearing down"; cmd_down quiet; fi' EXIT
    mkdir -p "$RUN/c" "$RUN/fakedev" "$RUN/shared"
    python3 "$HERE/labhelper.py" hosts "$inventory" >"$RUN/hosts.txt"
    echo "$img" >"$RUN/image"
    ssh-keygen -q -t ed25519 -N '' -C podplan-lab -f "$RUN/id_ed25519"
    local i
    for ((i = 0; i < GPU_COUNT; i++)); do
        mknod -m 666 "$RUN/fakedev/nvidia$i" c 195 "$i"
    done

    ip netns add "$NS-br"
    ip -n "$NS-br" link set lo up
    ip -n "$NS-br" link add br0 type bridge
    ip -n "$NS-br" link set br0 up
    ip netns add "$NS-ops"
    ip -n "$NS-br" link add vops type veth peer name eth0 netns "$NS-ops"
    ip -n "$NS-br" link set vops master br0 up
    ip -n "$NS-ops" link set lo up
    ip -n "$NS-ops" addr add "$OPS_ADDR/24" dev eth0
    ip -n "$NS-ops" link set eth0 up

    local name addr frontend rails n=0
    while read -r name addr frontend rails; do
        n=$((n + 1))
        boot_host "$img" "$n" "$name" "$addr" "$frontend" "$rails"
    done <"$RUN/hosts.txt"
    log "booting $n containers"
    wait_ssh
    log "lab is up: $(awk '{printf "%s=%s ", $1, $2}' "$RUN/hosts.txt")"
    trap - EXIT INT TERM
}

# Boot one container: its namespace joined to the bridge as veth vh<N>, the stand-in
# links, an overlay on the image, its identity and keys, then systemd-nspawn in the
# background (its pid in $RUN/c/<name>/pid).
boot_host() {
    local img=$1 n=$2 name=$3 addr=$4 frontend=$5 rails=$6 i binds=()
    for ((i = 0; i < GPU_COUNT; i++)); do
        binds+=("--bind-ro=$RUN/fakedev/nvidia$i:/dev/nvidia$i")
    done
    local c=$RUN/c/$name
    mkdir -p "$c/upper" "$c/work" "$c/root"
    ip netns add "$NS-$name"
    ip -n "$NS-br" link add "vh$n" type veth peer name eth0 netns "$NS-$name"
    ip -n "$NS-br" link set "vh$n" master br0 up
    ip -n "$NS-$name" link set lo up
    ip -n "$NS-$name" addr add "$addr/24" dev eth0
    ip -n "$NS-$name" link set eth0 up
    add_stand_ins "$name" "$frontend" "$rails"
    mount -t overlay overlay -o "lowerdir=$img/rootfs,upperdir=$c/upper,workdir=$c/work" "$c/root"
    echo "$name" >"$c/root/etc/hostname"
    systemd-id128 new >"$c/root/etc/machine-id"
    install -m 600 "$RUN/id_ed25519.pub" "$c/root/root/.ssh/authorized_keys"
    writable_cgroups "$c/root"
    local user
    for user in "${LAB_USERS[@]}"; do
        install -m 600 -o "${user#*:}" -g "${user#*:}" "$RUN/id_ed25519.pub" \
            "$c/root/home/${user%%:*}/.ssh/authorized_keys"
    done
    # Each container gets its own cgroup (name=systemd and unified hierarchies): with
    # --keep-unit, nspawn puts its supervisor and payload below the caller's cgroup, and
    # containers started from one cgroup would share a payload tree.
    local cgs=() hier
    for hier in "${CG_HIERARCHIES[@]}"; do
        if [[ -d $hier ]]; then mkdir -p "$hier/$CG_NAME/$name"; cgs+=("$hier/$CG_NAME/$name"); fi
    done
    (
        for hier in "${cgs[@]}"; do echo "$BASHPID" >"$hier/cgroup.procs"; done
        # CAP_NET_ADMIN (on the container's own network namespace) for systemd-networkd;
        # /shared stands in for the NFS export (StateSaveLocation); the stub GPU and
        # fabric tools of the acceptance ladder (tests/lab/stubs) are read-only.
        exec setsid systemd-nspawn --quiet -D "$c/root" \
            --boot --machine="$name" --hostname="$name" \
            --register=no --keep-unit --console=passive \
            --network-namespace-path="/run/netns/$NS-$name" \
            --capability=CAP_NET_ADMIN \
            --bind="$RUN/shared:/shared" \
            --bind-ro="$HERE/stubs:/usr/local/libexec/podplan-stubs" \
            --bind-ro="$img/repo:/srv/localrepo" "${binds[@]}"
    ) </dev/null >"$c/nspawn.log" 2>&1 3>&- &
    echo $! >"$c/pid"
}

# Racking new machines into the running lab: boot a container for every host of
# INVENTORY_DIR that has none yet (the grown plan's new nodes); running ones are left alone.
cmd_add() {
    need_root
    local inventory=${1:?usage: lab.sh add INVENTORY_DIR}
    [[ -f $RUN/hosts.txt ]] || die "no lab is up (lab.sh up first)"
    local img n name addr frontend rails added=()
    img=$(cat "$RUN/image")
    n=$(wc -l <"$RUN/hosts.txt")
    while read -r name addr frontend rails; do
        if awk -v h="$name" '$1 == h {found = 1} END {exit !found}' "$RUN/hosts.txt"; then
            [[ $(awk -v h="$name" '$1 == h {print $2}' "$RUN/hosts.txt") == "$addr" ]] ||
                die "$name moved to $addr: a running host keeps its address"
            continue
        fi
        n=$((n + 1))
        echo "$name $addr $frontend $rails" >>"$RUN/hosts.txt"
        boot_host "$img" "$n" "$name" "$addr" "$frontend" "$rails"
        added+=("$name")
    done < <(python3 "$HERE/labhelper.py" hosts "$inventory")
    ((${#added[@]})) || { log "no new hosts in $inventory"; return 0; }
    log "booting ${added[*]}"
    wait_ssh
    log "added: ${added[*]}"
}

# Interfaces the containers cannot have: veth pairs (this kernel loads no modules, so no
# dummy links) stand in for the front-end NIC (fe0, with the plan's front-end address; its
# peer fe0-peer stays unused) and for each rail's IPoIB interface (ib0, ib1, ...; the
# fabric role addresses them).
add_stand_ins() {
    local name=$1 frontend=$2 rails=$3 i link
    local links=()
    [[ $frontend == - ]] || links+=(fe0)
    for ((i = 0; i < rails; i++)); do links+=("ib$i"); done
    for link in "${links[@]}"; do
        ip -n "$NS-$name" link add "$link" type veth peer name "$link-peer"
        ip -n "$NS-$name" link set "$link-peer" up
        ip -n "$NS-$name" link set "$link" up
    done
    [[ $frontend == - ]] || ip -n "$NS-$name" addr add "$frontend/24" dev fe0
}

# nspawn mounts this machine's cgroup-v1 controllers read-only in the containers; Slurm's
# proctrack/cgroup needs freezer and ConstrainDevices needs devices, both of which can be
# remounted read-write from inside (memory cannot: "busy"). A unit in each container does
# that at boot; Slurm then names its cgroups slurm_<node>, so containers never collide.
# Only the mount's own flag changes (remount,bind): a plain remount reconfigures the
# hierarchy, which the kernel refuses (EBUSY) once it holds cgroups, as it does when
# `lab.sh add` boots a container after Slurm runs on the others.
writable_cgroups() {
    local root=$1 unit=podplan-lab-cgroups.service
    cat >"$root/etc/systemd/system/$unit" <<'EOF'
[Unit]
Description=podplan lab: writable freezer and devices cgroups for Slurm
DefaultDependencies=no
After=sysinit.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/mount -o remount,bind,rw /sys/fs/cgroup/freezer
ExecStart=/bin/mount -o remount,bind,rw /sys/fs/cgroup/devices

[Install]
WantedBy=multi-user.target
EOF
    mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
    ln -sf "/etc/systemd/system/$unit" "$root/etc/systemd/system/multi-user.target.wants/$unit"
}

wait_ssh() {
    local name addr frontend rails deadline=$((SECONDS + 120))
    while read -r name addr frontend rails; do
        # Ready = sshd answers and systemd has finished booting (running or degraded).
        # shellcheck disable=SC2016  # expanded on the container, not here
        until ns_exec ops ssh "${SSH_OPTS[@]}" "root@$addr" \
            's=$(systemctl is-system-running --wait 2>/dev/null); [ "$s" = running ] || [ "$s" = degraded ]' \
            </dev/null 2>/dev/null; do
            kill -0 "$(cat "$RUN/c/$name/pid")" 2>/dev/null ||
                { cat "$RUN/c/$name/nspawn.log" >&2; die "container $name exited during boot"; }
            ((SECONDS < deadline)) || die "container $name ($addr) not reachable over ssh after 120 s"
            sleep 0.5
        done
    done <"$RUN/hosts.txt"
}

cmd_down() {
    local quiet=${1:-} c pid ns deadline
    [[ $(id -u) -eq 0 ]] || die "the lab needs root"
    # 1. Ask every container to shut down (SIGTERM to systemd-nspawn = clean poweroff).
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
    [[ -n $quiet ]] || log "containers stopped"
    # 2. Anything still living in a lab namespace (the ssh control masters of the control
    #    node, a stuck container payload) is killed by namespace, then the namespaces go.
    for ns in $(ip netns list 2>/dev/null | awk -v p="^$NS-" '$1 ~ p {print $1}'); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    done
    sleep 0.2
    for ns in $(ip netns list 2>/dev/null | awk -v p="^$NS-" '$1 ~ p {print $1}'); do
        ip netns del "$ns" 2>/dev/null || log "could not delete namespace $ns"
    done
    [[ -n $quiet ]] || log "namespaces deleted"
    # 3. Overlays.
    for c in "$RUN"/c/*/; do
        if mountpoint -q "$c/root"; then umount "$c/root" 2>/dev/null || umount -l "$c/root"; fi
    done
    # 4. cgroups the containers' systemd (or slurmd) created and left behind.
    [[ -n $quiet ]] || log "overlays unmounted"
    cleanup_cgroups
    rm -rf "$RUN"
    [[ -n $quiet ]] || log "lab is down"
}

cleanup_cgroups() {
    # The lab's own subtree: <hierarchy>/podplan-lab/<host>/{supervisor,payload/...}, and the
    # slurm_<host> trees slurmd made in the v1 controllers for this lab's hosts.
    local hier top name
    if [[ -f $RUN/hosts.txt ]]; then
        while read -r name _; do
            for top in /sys/fs/cgroup/{freezer,devices,cpuset,memory,cpu,cpuacct,pids,systemd}/slurm_"$name"; do
                [[ -d $top ]] && find "$top" -depth -type d -exec rmdir {} + 2>/dev/null
            done
        done <"$RUN/hosts.txt"
    fi
    for hier in "${CG_HIERARCHIES[@]}"; do
        top=$hier/$CG_NAME
        [[ -d $top ]] || continue
        find "$top" -depth -type d -exec rmdir {} + 2>/dev/null || true
        [[ ! -d $top ]] || log "could not remove every cgroup under $top (processes left?)"
    done
}

cmd_ops() { need_root; ns_exec ops "$@"; }

# ansible-playbook from the control-node namespace, with the lab's key and overrides.
cmd_playbook() {
    need_root
    local inventory=${1:?usage: lab.sh playbook INVENTORY_DIR [ANSIBLE_ARGS...]}
    shift
    # SSH control sockets live in this lab's run directory: every lab uses the same
    # addresses, and a shared ~/.ansible/cp would let one lab's ansible ride another lab's
    # open connection into the other lab's hosts.
    mkdir -p "$RUN/cp"
    ns_exec ops env \
        ANSIBLE_CONFIG="$REPO/ansible/ansible.cfg" \
        ANSIBLE_SSH_CONTROL_PATH_DIR="$RUN/cp" \
        ANSIBLE_PRIVATE_KEY_FILE="$RUN/id_ed25519" \
        ANSIBLE_HOST_KEY_CHECKING=False \
        ANSIBLE_SSH_ARGS="-o ControlMaster=auto -o ControlPersist=300s -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR" \
        ansible-playbook -i "$inventory" -e "@$HERE/lab-vars.yml" "$REPO/ansible/site.yml" "$@"
}

cmd_ssh() {
    need_root
    local host=${1:?usage: lab.sh ssh [USER@]HOST CMD...} addr user=root
    shift
    if [[ $host == *@* ]]; then user=${host%%@*} host=${host#*@}; fi
    addr=$(awk -v h="$host" '$1 == h {print $2}' "$RUN/hosts.txt")
    [[ -n $addr ]] || die "unknown lab host: $host"
    ns_exec ops ssh "${SSH_OPTS[@]}" "$user@$addr" "$@"
}

case ${1:-} in
image) cmd_image ;;
up) shift; cmd_up "$@" ;;
add) shift; cmd_add "$@" ;;
down) cmd_down ;;
ops) shift; cmd_ops "$@" ;;
playbook) shift; cmd_playbook "$@" ;;
ssh) shift; cmd_ssh "$@" ;;
*) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
