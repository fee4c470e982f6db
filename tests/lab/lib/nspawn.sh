# shellcheck shell=bash
# The machinery both podplan labs share (sourced, never run): tests/lab/lab.sh (the Slurm
# lab) and tests/cloudlab/cloudlab.sh (the cloud-init lab) boot "hosts" the same way, as
# systemd-nspawn containers with systemd as PID 1, each in its own network namespace on a
# bridge that lives in yet another namespace, from a cached debootstrapped Debian image with an
# offline apt repository. What differs between the labs (addresses, host list, what the image
# carries, how a host is reached) stays in the lab's own script and comes in as the
# parameters below, so a fix to booting or tearing down is made once for both.
#
# The sourcing script sets, before it calls anything here:
#   LAB_TAG         its name in log lines (lab, cloudlab)
#   LAB_TOOLS       array: the commands it needs besides root (need_root checks them)
#   HERE            its directory: $HERE/packages.txt lists the offline repository's packages
#   CACHE_ROOT RUN  the image cache and the run directory (removed by lab_down)
#   NS              prefix of every network namespace the lab creates
#   SUITE IMAGE_REV BASE_INCLUDE  the image recipe (all of it part of the cache key)
#   IMAGE_PACKAGES  array: packages installed into the image itself (empty for the Slurm lab)
#   GPU_COUNT       /dev/nvidia0..N-1 stand-ins bound into every host
#   CG_NAME CG_HIERARCHIES  the lab's cgroup subtree and the hierarchies it is made in
#   HOSTS_TMPFS     size of the tmpfs that holds the hosts' writable layers, or "off" to keep
#                   them on disk (see lab_up_begin)
# and defines two functions:
#   finish_rootfs ROOT  the lab's own touches to the image, after the offline repository
#   cmd_down [quiet]    its teardown (lab_down plus its own files); lab_up_begin's trap calls it

LAB_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Messages go to fd 3, a copy of the original stderr, so that they stay visible when a
# trap fires while a command's stderr is redirected.
exec 3>&2
log() { printf '[%s %(%H:%M:%S)T] %s\n' "$LAB_TAG" -1 "$*" >&3; }
die() { log "ERROR: $*"; exit 1; }

need_root() {
    [[ $(id -u) -eq 0 ]] || die "the lab needs root (namespaces, overlay mounts, systemd-nspawn)"
    local tool
    for tool in "${LAB_TOOLS[@]}"; do
        command -v "$tool" >/dev/null || die "missing tool: $tool"
    done
}

packages() { grep -Ev '^[[:space:]]*(#|$)' "$HERE/packages.txt" | sort -u; }

# The cache key hashes the whole recipe. The line is spelled exactly as each lab spelled it
# before the labs shared this file (the image packages only where there are any), so that
# existing caches stay valid.
image_key() {
    local mirror=$1 extra=${IMAGE_PACKAGES[*]}
    { echo "rev=$IMAGE_REV suite=$SUITE mirror=$mirror include=$BASE_INCLUDE${extra:+ $extra}"; packages; } |
        sha256sum | cut -c1-16
}

# --- image: debootstrapped rootfs + offline apt repository, cached by key -------------------

# Prints the image directory (rootfs/ and repo/), building it unless the cache has it.
lab_image() {
    local mirror key dir tmp
    mirror=${PODPLAN_LAB_MIRROR:-$(python3 "$LAB_LIB/../labhelper.py" mirror "$SUITE")}
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
    # security included, so the hosts get the same versions as a real Debian 12 host would).
    # Files that this machine has switched off (other suffixes) are not copied.
    rm -f "$root/etc/apt/sources.list"
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] && cp "$f" "$root/etc/apt/sources.list.d/host-$(basename "$f")"
    done
    mount -t proc proc "$root/proc"
    local pkgs
    mapfile -t pkgs < <(packages)
    chroot "$root" apt-get -qq update
    if ((${#IMAGE_PACKAGES[@]})); then
        # These belong to the image (a cloud image ships cloud-init); nothing may start in the chroot.
        printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
        chmod 755 "$root/usr/sbin/policy-rc.d"
        chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -qq install -y \
            --no-install-recommends "${IMAGE_PACKAGES[@]}" >/dev/null
        rm -f "$root/usr/sbin/policy-rc.d"
        chroot "$root" apt-get clean
    fi
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

# What every lab host's image has: the offline repository as its only apt source, no identity
# of its own (each host gets one at boot), no DNS (names come from /etc/hosts), and nothing
# that may take the dpkg lock behind the test's back. $2: the resolv.conf line that says so.
base_rootfs() {
    local root=$1 resolv_note=$2 unit
    echo 'deb [trusted=yes] file:/srv/localrepo ./' >"$root/etc/apt/sources.list.d/podplan-lab.list"
    mkdir -p "$root/srv/localrepo"
    : >"$root/etc/machine-id"
    rm -f "$root/etc/hostname" "$root/var/lib/dbus/machine-id"
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
    printf '%s\n' "$resolv_note" >"$root/etc/resolv.conf"
    for unit in apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service \
        e2scrub_all.timer fstrim.timer; do
        ln -sf /dev/null "$root/etc/systemd/system/$unit"
    done
}

# --- up: the bridge, one namespace + overlay + nspawn per host --------------------------------

# Starts a lab run with image $1: from here on any failure (or signal) tears down whatever
# was already started. Makes the run directory, the GPU device stand-ins and the bridge
# namespace $NS-br.
#
# The hosts' writable layers ($RUN/c: overlay upper and work directories, about 1.5 GB and
# 40,000 files once the Slurm lab's playbook has installed its packages) live on a tmpfs.
# On disk, removing them was most of every teardown: this machine's root file system is ext4
# mounted with discard, and unlinking that many files took 50 s to over two minutes under
# load, with the CPU idle. A tmpfs goes in one umount and spares the disk the lab's writes.
lab_up_begin() {
    local img=$1 i
    trap 'exit 130' INT TERM
    trap 'rc=$?; if ((rc != 0)); then log "lab up failed; tearing down"; cmd_down quiet; fi' EXIT
    mkdir -p "$RUN/c" "$RUN/fakedev" "$RUN/shared"
    if [[ $HOSTS_TMPFS != off ]]; then
        mount -t tmpfs -o "mode=0755,size=$HOSTS_TMPFS" "$NS-hosts" "$RUN/c"
    fi
    echo "$img" >"$RUN/image"
    for ((i = 0; i < GPU_COUNT; i++)); do mknod -m 666 "$RUN/fakedev/nvidia$i" c 195 "$i"; done
    ip netns add "$NS-br"
    ip -n "$NS-br" link set lo up
    ip -n "$NS-br" link add br0 type bridge
    ip -n "$NS-br" link set br0 up
}

# Namespace $NS-$1 with eth0 (address/prefix $3) on the bridge, through the bridge's port $2.
lab_netns() {
    local name=$1 port=$2 cidr=$3
    ip netns add "$NS-$name"
    ip -n "$NS-br" link add "$port" type veth peer name eth0 netns "$NS-$name"
    ip -n "$NS-br" link set "$port" master br0 up
    ip -n "$NS-$name" link set lo up
    ip -n "$NS-$name" addr add "$cidr" dev eth0
    ip -n "$NS-$name" link set eth0 up
}

# Host $1's root: an overlay on the image's rootfs at $RUN/c/$1/root, with its own machine-id.
lab_rootfs() {
    local name=$1 c=$RUN/c/$1 img
    img=$(cat "$RUN/image")
    mkdir -p "$c/upper" "$c/work" "$c/root"
    mount -t overlay overlay -o "lowerdir=$img/rootfs,upperdir=$c/upper,workdir=$c/work" "$c/root"
    systemd-id128 new >"$c/root/etc/machine-id"
}

# Boots host $1 (systemd-nspawn in the background, its PID in $RUN/c/$1/pid) in its namespace,
# with the offline repository and the GPU stand-ins bound in; the rest of "$@" are more
# systemd-nspawn arguments.
# A host may also join a running lab (lab.sh add): everything comes from $RUN.
lab_boot() {
    local name=$1 c=$RUN/c/$1 img i gpus=()
    shift
    img=$(cat "$RUN/image")
    for ((i = 0; i < GPU_COUNT; i++)); do gpus+=("--bind-ro=$RUN/fakedev/nvidia$i:/dev/nvidia$i"); done
    # Each container gets its own cgroup (name=systemd and unified hierarchies): with
    # --keep-unit, nspawn puts its supervisor and payload below the caller's cgroup, and
    # containers started from one cgroup would share a payload tree.
    local cgs=() hier
    for hier in "${CG_HIERARCHIES[@]}"; do
        if [[ -d $hier ]]; then mkdir -p "$hier/$CG_NAME/$name"; cgs+=("$hier/$CG_NAME/$name"); fi
    done
    (
        for hier in "${cgs[@]}"; do echo "$BASHPID" >"$hier/cgroup.procs"; done
        exec setsid systemd-nspawn --quiet -D "$c/root" --boot --machine="$name" \
            --register=no --keep-unit --console=passive \
            --network-namespace-path="/run/netns/$NS-$name" \
            --bind-ro="$img/repo:/srv/localrepo" "${gpus[@]}" "$@"
    ) </dev/null >"$c/nspawn.log" 2>&1 3>&- &
    echo $! >"$c/pid"
}

# While waiting for host $1 to boot: die if its nspawn is gone or the deadline ($2, in
# $SECONDS) has passed ($3 says what it did not do in time).
lab_still_booting() {
    local name=$1 deadline=$2 what=$3
    kill -0 "$(cat "$RUN/c/$name/pid")" 2>/dev/null ||
        { cat "$RUN/c/$name/nspawn.log" >&2; die "container $name exited during boot"; }
    ((SECONDS < deadline)) || die "container $name $what"
}

# --- down ---------------------------------------------------------------------------------------

# Stops everything lab_up_begin and lab_boot started and removes $RUN; safe to run any time.
# $1: quiet (no progress lines); $2: a file with one name a line whose slurm_<name> cgroups
# (slurmd makes them in the v1 controllers) are to be removed.
lab_down() {
    local quiet=${1:-} slurm_names=${2:-} c pid ns deadline started=$SECONDS
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
    down_progress "$quiet" "$started" "containers stopped"
    # 2. Anything still living in a lab namespace (the ssh control masters of a control
    #    node, a stuck container payload) is killed by namespace, then the namespaces go.
    for ns in $(ip netns list 2>/dev/null | awk -v p="^$NS-" '$1 ~ p {print $1}'); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    done
    sleep 0.2
    for ns in $(ip netns list 2>/dev/null | awk -v p="^$NS-" '$1 ~ p {print $1}'); do
        ip netns del "$ns" 2>/dev/null || log "could not delete namespace $ns"
    done
    down_progress "$quiet" "$started" "namespaces deleted"
    # 3. Overlays, then the tmpfs under them (lazily, if a straggler still holds it: the
    #    memory goes back when it lets go).
    for c in "$RUN"/c/*/; do
        if mountpoint -q "$c/root"; then umount "$c/root" 2>/dev/null || umount -l "$c/root"; fi
    done
    if mountpoint -q "$RUN/c"; then umount "$RUN/c" 2>/dev/null || umount -l "$RUN/c"; fi
    down_progress "$quiet" "$started" "overlays unmounted"
    # 4. cgroups the containers' systemd (or slurmd) created and left behind.
    lab_remove_cgroups "$slurm_names"
    down_progress "$quiet" "$started" "cgroups removed"
    rm -rf "$RUN"
    down_progress "$quiet" "$started" "lab is down"
}

# One line of lab_down's progress, with the seconds since it began (unless $1 says quiet).
down_progress() { [[ -n $1 ]] || log "$3 ($((SECONDS - $2)) s)"; }

lab_remove_cgroups() {
    local slurm_names=$1 name dir hier top
    if [[ -n $slurm_names && -f $slurm_names ]]; then
        while read -r name _; do
            for dir in /sys/fs/cgroup/*/slurm_"$name"; do
                find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
                [[ ! -d $dir ]] || log "could not remove $dir (processes left?)"
            done
        done <"$slurm_names"
    fi
    # The lab's own subtree: <hierarchy>/$CG_NAME/<host>/{supervisor,payload/...}.
    for hier in "${CG_HIERARCHIES[@]}"; do
        top=$hier/$CG_NAME
        [[ -d $top ]] || continue
        find "$top" -depth -type d -exec rmdir {} + 2>/dev/null || true
        [[ ! -d $top ]] || log "could not remove every cgroup under $top (processes left?)"
    done
}
