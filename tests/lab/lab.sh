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
# from this machine's apt sources), PODPLAN_LAB_NS (namespace prefix, default pplab),
# PODPLAN_LAB_HOSTS_TMPFS (the hosts' writable layers: tmpfs size, default 8g, or off).
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
HOSTS_TMPFS=${PODPLAN_LAB_HOSTS_TMPFS:-8g}  # the hosts' writable layers (lib/nspawn.sh)
# Ordinary (non-root) users in every container, for jobs, pam_slurm_adopt and enroot:
# alice gets an account in the lab's accounts file, bob deliberately none.
LAB_USERS=(alice:2001 bob:2002)

LAB_TAG=lab
LAB_TOOLS=(systemd-nspawn debootstrap dpkg-scanpackages ip ssh ssh-keygen)
IMAGE_PACKAGES=()             # the Slurm lab's image carries only the base system
# shellcheck source=SCRIPTDIR/lib/nspawn.sh
. "$HERE/lib/nspawn.sh"

# --- image: the shared Debian image (lib/nspawn.sh) plus the Slurm lab's touches ---------------

cmd_image() {
    need_root
    lab_image
}

finish_rootfs() {
    local root=$1
    # apt's cache_valid_time looks at these times: make the empty cache look stale, so the
    # playbook's first apt task refreshes it from the offline repo.
    rm -f "$root/var/lib/apt/periodic/update-success-stamp"
    touch -d @0 "$root/var/lib/apt/lists"
    # No DNS inside the lab (debootstrap copied this machine's resolver): names come from
    # /etc/hosts, which the playbook's cluster_hosts role fills in.
    base_rootfs "$root" '# podplan lab: no DNS; see /etc/hosts'
    mkdir -p "$root/root/.ssh"
    chmod 700 "$root/root/.ssh"
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
    lab_up_begin "$img"
    python3 "$HERE/labhelper.py" hosts "$inventory" >"$RUN/hosts.txt"
    ssh-keygen -q -t ed25519 -N '' -C podplan-lab -f "$RUN/id_ed25519"
    lab_netns ops vops "$OPS_ADDR/24"

    local name addr frontend rails n=0
    while read -r name addr frontend rails; do
        n=$((n + 1))
        boot_host "$n" "$name" "$addr" "$frontend" "$rails"
    done <"$RUN/hosts.txt"
    log "booting $n containers"
    wait_ssh
    log "lab is up: $(awk '{printf "%s=%s ", $1, $2}' "$RUN/hosts.txt")"
    trap - EXIT INT TERM
}

# Boot one container (lib/nspawn.sh): its namespace joined to the bridge as veth vh<N>, the
# stand-in links, an overlay on the image, its identity and keys, then systemd-nspawn in the
# background (its pid in $RUN/c/<name>/pid).
boot_host() {
    local n=$1 name=$2 addr=$3 frontend=$4 rails=$5
    lab_netns "$name" "vh$n" "$addr/24"
    add_stand_ins "$name" "$frontend" "$rails"
    lab_rootfs "$name"
    local root=$RUN/c/$name/root user
    echo "$name" >"$root/etc/hostname"
    install -m 600 "$RUN/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
    writable_cgroups "$root"
    for user in "${LAB_USERS[@]}"; do
        install -m 600 -o "${user#*:}" -g "${user#*:}" "$RUN/id_ed25519.pub" \
            "$root/home/${user%%:*}/.ssh/authorized_keys"
    done
    # CAP_NET_ADMIN (on the container's own network namespace) for systemd-networkd;
    # /shared stands in for the NFS export (StateSaveLocation); the stub GPU and fabric
    # tools of the acceptance ladder (tests/lab/stubs) are read-only.
    lab_boot "$name" --hostname="$name" --capability=CAP_NET_ADMIN --bind="$RUN/shared:/shared" \
        --bind-ro="$HERE/stubs:/usr/local/libexec/podplan-stubs"
}

# Racking new machines into the running lab: boot a container for every host of
# INVENTORY_DIR that has none yet (the grown plan's new nodes); running ones are left alone.
cmd_add() {
    need_root
    local inventory=${1:?usage: lab.sh add INVENTORY_DIR}
    [[ -f $RUN/hosts.txt ]] || die "no lab is up (lab.sh up first)"
    local n name addr frontend rails added=()
    n=$(wc -l <"$RUN/hosts.txt")
    while read -r name addr frontend rails; do
        if awk -v h="$name" '$1 == h {found = 1} END {exit !found}' "$RUN/hosts.txt"; then
            [[ $(awk -v h="$name" '$1 == h {print $2}' "$RUN/hosts.txt") == "$addr" ]] ||
                die "$name moved to $addr: a running host keeps its address"
            continue
        fi
        n=$((n + 1))
        echo "$name $addr $frontend $rails" >>"$RUN/hosts.txt"
        boot_host "$n" "$name" "$addr" "$frontend" "$rails"
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
            lab_still_booting "$name" "$deadline" "($addr) not reachable over ssh after 120 s"
            sleep 0.5
        done
    done <"$RUN/hosts.txt"
}

# hosts.txt names the hosts, whose slurm_<host> cgroups slurmd made in the v1 controllers.
cmd_down() { lab_down "${1:-}" "$RUN/hosts.txt"; }

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
*) sed -n '2,19p' "$0" >&2; exit 2 ;;
esac
