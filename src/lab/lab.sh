#!/usr/bin/env bash
# The mesh lab: throwaway Debian 12 and 13 machines on this host, for tests and for trying mesh.
#
# `mesh lab` runs this script (it is embedded in the binary); it is not meant to be run by hand,
# though it can be: `bash lab.sh up 3`. Each node is a systemd-nspawn container booting systemd as
# PID 1 with a real sshd, on an overlayfs copy of one cached debootstrap image, in its own network
# namespace on a bridge that has no route out. Root only; never reads stdin.
#
# Commands: up N [SUITES] | down | stop NAME | start NAME | rebuild NAME | status | build [SUITE]
# `up` and `start` print one line per node: NAME ADDRESS PORT HOSTKEY (the ed25519 public key).
# SUITES is one Debian suite per node, comma separated (`bookworm,trixie`); a node left out is
# bookworm. A node running another suite than asked is made again from that suite's image.
#
# Environment (set by `mesh lab`):
#   MESH_LAB_CACHE     base images, shared by every lab   (default /var/tmp/mesh-lab)
#   MESH_LAB_ID        0..99, so that several labs can run at once (default 0)
#   MESH_LAB_PACKAGES  extra Debian packages in the image (comma separated)
#   MESH_LAB_MIRROR    Debian mirror                       (default http://deb.debian.org/debian)
#   MESH_LAB_TIMEOUT   seconds to wait for a node's sshd   (default 180)
set -Eeuo pipefail

CACHE=${MESH_LAB_CACHE:-/var/tmp/mesh-lab}
ID=${MESH_LAB_ID:-0}
[[ $ID =~ ^([0-9]|[1-9][0-9])$ ]] || { echo "lab: MESH_LAB_ID must be 0..99" >&2; exit 2; }
STATE=$CACHE/lab$ID
NODES=$STATE/nodes
BRIDGE=meshbr$ID
SUBNET=10.214.$ID
PREFIX=mesh$ID-
MIRROR=${MESH_LAB_MIRROR:-http://deb.debian.org/debian}
TIMEOUT=${MESH_LAB_TIMEOUT:-180}
# docker.io, redis, systemd-resolved, nftables and prometheus-node-exporter are in every image:
# built-in modules use them (kv, container-runtime, resolver, firewall, node-exporter).
PACKAGES="systemd,systemd-sysv,dbus,libpam-systemd,openssh-server,iproute2,procps,docker.io,redis-server,redis-tools,systemd-resolved,nftables,prometheus-node-exporter${MESH_LAB_PACKAGES:+,$MESH_LAB_PACKAGES}"
IMAGE_VERSION=1

# What a suite's image holds: the same software on every release (Debian 13 ships the docker
# CLI apart from the daemon, as docker-cli).
packages_of() {
    case $1 in
        bookworm) echo "$PACKAGES" ;;
        trixie) echo "$PACKAGES,docker-cli" ;;
        *) fail "the lab boots Debian bookworm (12) or trixie (13), not '$1'" ;;
    esac
}

# One image per suite and package set: a lab asking for docker does not rebuild the image another
# lab uses. Bookworm's keeps the name it always had, so no cached image is built again.
image_of() {
    local packages
    packages=$(packages_of "$1")
    if [ "$1" = bookworm ]; then
        echo "$CACHE/image-$(printf '%s|%s|%s' "$IMAGE_VERSION" "$packages" "$MIRROR" | sha256sum | cut -c1-12)"
    else
        echo "$CACHE/image-$1-$(printf '%s|%s|%s|%s' "$IMAGE_VERSION" "$1" "$packages" "$MIRROR" | sha256sum | cut -c1-12)"
    fi
}
KEY=$STATE/id_ed25519
export DEBIAN_FRONTEND=noninteractive

say() { printf 'lab: %s\n' "$*" >&2; }
fail() { printf 'lab: error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "the lab needs root (systemd-nspawn, mounts, a bridge)"

host_tools() {
    local want=()
    command -v systemd-nspawn >/dev/null || want+=(systemd-container)
    command -v debootstrap >/dev/null || want+=(debootstrap)
    command -v ssh >/dev/null || want+=(openssh-client)
    command -v ip >/dev/null || want+=(iproute2)
    [ ${#want[@]} = 0 ] && return 0
    say "installing ${want[*]} on this host"
    apt-get -y -q -o DPkg::Lock::Timeout=300 install --no-install-recommends "${want[@]}" </dev/null >&2 ||
        { apt-get -q update </dev/null >&2 &&
          apt-get -y -q -o DPkg::Lock::Timeout=300 install --no-install-recommends "${want[@]}" </dev/null >&2; }
}

# This host's PID 1 is not systemd: nobody made the inodes nspawn uses to mask /proc files, and
# root's inotify limits (shared by every node, as there is no user namespace) run out at ~15 nodes.
host_setup() {
    # (labs booting at once may race here: what another made is as good)
    mkdir -p /run/systemd/inaccessible
    [ -e /run/systemd/inaccessible/reg ] || install -m 0000 /dev/null /run/systemd/inaccessible/reg ||
        [ -e /run/systemd/inaccessible/reg ]
    [ -e /run/systemd/inaccessible/dir ] || install -d -m 0000 /run/systemd/inaccessible/dir
    [ "$(sysctl -n fs.inotify.max_user_instances)" -ge 8192 ] || sysctl -qw fs.inotify.max_user_instances=8192
    [ "$(sysctl -n fs.inotify.max_user_watches)" -ge 524288 ] || sysctl -qw fs.inotify.max_user_watches=524288
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
        sysctl -qw "net.ipv6.conf.$BRIDGE.disable_ipv6=1" || true
    fi
    ip -4 addr show dev "$BRIDGE" | grep -q "inet $SUBNET.1/" || ip addr add "$SUBNET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
}

build_image() {
    local suite=${1:-bookworm} image packages
    image=$(image_of "$suite"); packages=$(packages_of "$suite")
    [ -x "$image/lib/systemd/systemd" ] && return 0
    mkdir -p "$CACHE"
    exec 8>"$CACHE/build.lock"
    flock 8
    if [ -x "$image/lib/systemd/systemd" ]; then exec 8>&-; return 0; fi
    host_tools
    local tmp=$image.partial t0=$SECONDS u
    rm -rf "$tmp"
    say "building the $suite node image (debootstrap $suite: $packages), about a minute"
    if ! debootstrap --variant=minbase --include="$packages" "$suite" "$tmp" "$MIRROR" \
            >"$CACHE/debootstrap.log" 2>&1 </dev/null; then
        tail -15 "$CACHE/debootstrap.log" >&2
        fail "debootstrap failed; its log is $CACHE/debootstrap.log"
    fi
    # identity is per node, made when the node is
    rm -f "$tmp/etc/hostname" "$tmp"/etc/ssh/ssh_host_* "$tmp/var/lib/dbus/machine-id"
    : >"$tmp/etc/machine-id"
    printf '%s\n' '# mesh lab: keys only; root logs in with a key' 'PermitRootLogin prohibit-password' \
        'PasswordAuthentication no' 'KbdInteractiveAuthentication no' 'UseDNS no' \
        'MaxStartups 200:30:400' 'MaxSessions 64' >"$tmp/etc/ssh/sshd_config.d/00-mesh-lab.conf"
    # a node has no route out: nothing in it should try to reach the network on a timer
    for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
             fstrim.timer systemd-timesyncd.service; do
        ln -sf /dev/null "$tmp/etc/systemd/system/$u"
    done
    rm -f "$tmp"/var/cache/apt/archives/*.deb
    mv "$tmp" "$image"
    exec 8>&-
    say "image built in $((SECONDS - t0))s"
}

node_dir() { echo "$NODES/$1"; }
check_name() { [[ ${1:-} =~ ^node[0-9]{1,3}$ ]] || fail "no lab node is called '${1:-}' (nodes are node1, node2, ...)"; }

# The pid of the node's systemd-nspawn, if it runs (a zombie does not count: this host reaps late).
nspawn_pid() {
    local f p st
    f=$(node_dir "$1")/pid
    [ -f "$f" ] || return 1
    p=$(cat "$f")
    [ -n "$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd-nspawn ] || return 1
    st=$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)
    [ "$st" != Z ] || return 1
    echo "$p"
}

make_node() {
    local name=$1 i=$2 image=$3 d root
    d=$(node_dir "$name"); root=$d/root
    mkdir -p "$d/upper" "$d/work" "$root"
    echo "$SUBNET.$((10 + i))" >"$d/address"
    mountpoint -q "$root" || mount -t overlay overlay \
        -o "lowerdir=$image,upperdir=$d/upper,workdir=$d/work" "$root"
    echo "$name" >"$root/etc/hostname"
    printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$name" >"$root/etc/hosts"
    tr -d '-' </proc/sys/kernel/random/uuid >"$root/etc/machine-id"
    ssh-keygen -q -A -f "$root" </dev/null >/dev/null
    install -d -m 0700 "$root/root/.ssh"
    install -m 0600 "$KEY.pub" "$root/root/.ssh/authorized_keys"
    printf '[Match]\nName=host0\n\n[Network]\nAddress=%s/24\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n' \
        "$(cat "$d/address")" >"$root/etc/systemd/network/10-mesh-lab.network"
    ln -sf /lib/systemd/system/systemd-networkd.service \
        "$root/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
    echo "$image" >"$d/image"
    touch "$d/made"
}

# Each node gets cgroups of its own (the name=systemd v1 hierarchy and cgroup2): nspawn puts a
# container in "<its own cgroup>/payload", so nodes started from one cgroup would share one tree.
cgroups_of() {
    local c
    for c in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified; do
        [ -f "$c/cgroup.procs" ] && echo "$c/$PREFIX$1"
    done
    if [ ! -d /sys/fs/cgroup/unified ] && [ -f /sys/fs/cgroup/cgroup.procs ]; then
        echo "/sys/fs/cgroup/$PREFIX$1"
    fi
    return 0
}

start_node() {
    local name=$1 d
    d=$(node_dir "$name")
    nspawn_pid "$name" >/dev/null && return 0
    clean_node "$name"
    mountpoint -q "$d/root" || mount -t overlay overlay \
        -o "lowerdir=$(cat "$d/image"),upperdir=$d/upper,workdir=$d/work" "$d/root"
    cgroups_of "$name" >"$d/cgroups"
    # A detached supervisor: it joins the node's cgroups, then runs nspawn, again after a reboot
    # inside the node (nspawn exits 133 for that).
    SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 setsid bash -c '
        d=$1; shift
        while read -r cg; do mkdir -p "$cg"; echo $$ >"$cg/cgroup.procs"; done <"$d/cgroups"
        while :; do
            systemd-nspawn "$@" </dev/null >>"$d/console.log" 2>&1 &
            echo $! >"$d/pid"
            wait $! && rc=0 || rc=$?
            [ "$rc" = 133 ] || break
        done' lab-node "$d" \
        --quiet --boot --directory="$d/root" --machine="$PREFIX$name" --hostname="$name" \
        --register=no --keep-unit --network-bridge="$BRIDGE" --resolv-conf=off --timezone=off \
        --link-journal=no --console=read-only \
        --system-call-filter=@keyring --system-call-filter=bpf \
        </dev/null >/dev/null 2>&1 &
    local i
    for i in $(seq 50); do nspawn_pid "$name" >/dev/null && return 0; sleep 0.1; done
    tail -5 "$d/console.log" >&2 || true
    fail "$name: systemd-nspawn did not start (log: $d/console.log)"
}

ssh_node() {
    local name=$1 d; shift
    d=$(node_dir "$name")
    ssh -q -i "$KEY" -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=3 \
        -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$d/known_hosts" \
        "root@$(cat "$d/address")" "$@" </dev/null
}

wait_node() {
    local name=$1 d t0=$SECONDS
    d=$(node_dir "$name")
    printf '%s %s\n' "$(cat "$d/address")" "$(cut -d' ' -f1,2 "$d/upper/etc/ssh/ssh_host_ed25519_key.pub")" \
        >"$d/known_hosts"
    until ssh_node "$name" 'systemctl is-system-running --wait >/dev/null 2>&1; true'; do
        nspawn_pid "$name" >/dev/null || { tail -5 "$d/console.log" >&2; fail "$name stopped while booting (log: $d/console.log)"; }
        [ $((SECONDS - t0)) -lt "$TIMEOUT" ] || fail "$name: no SSH after ${TIMEOUT}s (log: $d/console.log)"
        sleep 0.3
    done
}

clean_node() {
    local name=$1 d p cg
    d=$(node_dir "$name")
    # a killed nspawn leaves the node's systemd running, reparented: find it by its cgroups
    if [ -f "$d/cgroups" ]; then
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            p=$(while read -r cg; do
                    if [ -d "$cg" ]; then find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null || true; fi
                done <"$d/cgroups" | sort -un)
            [ -n "$p" ] || break
            kill -KILL $p 2>/dev/null || true
            sleep 0.2
        done
        while read -r cg; do
            if [ -d "$cg" ]; then find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
        done <"$d/cgroups"
    fi
    if mountpoint -q "$d/root" 2>/dev/null; then umount "$d/root" 2>/dev/null || umount -l "$d/root"; fi
    rm -rf "/run/systemd/nspawn/propagate/$PREFIX$name"
    rm -f "$d/pid"
}

stop_node() {
    local name=$1 p i
    if p=$(nspawn_pid "$name"); then
        kill -TERM "$p" 2>/dev/null || true   # nspawn asks the node's systemd to power off
        for i in $(seq 300); do nspawn_pid "$name" >/dev/null || break; sleep 0.1; done
        if p=$(nspawn_pid "$name"); then
            say "$name: no clean shutdown in 30s; killing it"
            kill -KILL "$p" 2>/dev/null || true
        fi
    fi
    clean_node "$name"
}

print_node() {
    local d
    d=$(node_dir "$1")
    printf '%s %s 22 %s\n' "$1" "$(cat "$d/address")" "$(cut -d' ' -f1,2 "$d/upper/etc/ssh/ssh_host_ed25519_key.pub")"
}

cmd_up() {
    local n=${1:-} i name suite image
    local -a suites
    # a machine's address is $SUBNET.(10 + i) in the bridge's /24: 240 is the last that fits
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 240 ] || fail "usage: lab up N [SUITES] (1..240)"
    IFS=, read -r -a suites <<<"${2:-}"
    for suite in $(printf '%s\n' bookworm "${suites[@]}" | sort -u); do build_image "$suite"; done
    host_setup
    mkdir -p "$NODES"
    [ -f "$KEY" ] || ssh-keygen -q -t ed25519 -N '' -C mesh-lab -f "$KEY" </dev/null
    for i in $(seq "$n"); do
        name=node$i suite=${suites[$((i - 1))]:-bookworm}
        image=$(image_of "$suite")
        if [ -f "$NODES/$name/made" ] && [ "$(cat "$NODES/$name/image")" != "$image" ]; then
            say "$name was made from another image: making it again ($suite)"
            stop_node "$name"; rm -rf "${NODES:?}/$name"
        fi
        if [ ! -f "$NODES/$name/made" ]; then
            [ ! -d "$NODES/$name" ] || { clean_node "$name"; rm -rf "${NODES:?}/$name"; }
            make_node "$name" "$i" "$image" &
        fi
    done
    wait
    for i in $(seq "$n"); do start_node "node$i"; done
    for i in $(seq "$n"); do wait_node "node$i"; done
    for i in $(seq "$n"); do print_node "node$i"; done
}

cmd_down() {
    local d p
    if [ -d "$NODES" ]; then
        for d in "$NODES"/*/; do   # every node powers off at once
            [ -d "$d" ] || continue
            if p=$(nspawn_pid "$(basename "$d")"); then kill -TERM "$p" 2>/dev/null || true; fi
        done
        for d in "$NODES"/*/; do [ -d "$d" ] && stop_node "$(basename "$d")"; done
    fi
    if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; fi
    rm -rf "$NODES"
}

# A machine reinstalled at the same address: its disk goes, it boots from the image again with
# new host keys, as a rebuilt server does.
cmd_rebuild() {
    local name=$1 d
    d=$(node_dir "$name")
    stop_node "$name"
    rm -rf "${d:?}/upper" "${d:?}/work" "$d/made"
    make_node "$name" "${name#node}" "$(cat "$d/image")"
    host_setup
    start_node "$name"
    wait_node "$name"
    print_node "$name"
}

cmd_status() {
    local d name st
    [ -d "$NODES" ] || return 0
    for d in "$NODES"/*/; do
        [ -f "$d/made" ] || continue
        name=$(basename "$d")
        if nspawn_pid "$name" >/dev/null; then st=running; else st=stopped; fi
        printf '%s %s 22 %s\n' "$name" "$(cat "$d/address")" "$st"
    done
}

case ${1:-} in
    up) cmd_up "${2:-}" "${3:-}" ;;
    down) cmd_down ;;
    stop) check_name "${2:-}"; [ -f "$NODES/$2/made" ] || fail "no lab node $2"; stop_node "$2" ;;
    start) check_name "${2:-}"; [ -f "$NODES/$2/made" ] || fail "no lab node $2"
           host_setup; start_node "$2"; wait_node "$2"; print_node "$2" ;;
    rebuild) check_name "${2:-}"; [ -f "$NODES/$2/made" ] || fail "no lab node $2"
             cmd_rebuild "$2" ;;
    status) cmd_status ;;
    build) build_image "${2:-bookworm}" ;;
    *) fail "usage: lab up N [SUITES] | down | stop NAME | start NAME | rebuild NAME | status | build [SUITE]" ;;
esac
