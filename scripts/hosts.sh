#!/usr/bin/env bash
# The hosts test bed on one machine (docs/HOSTS.md): `scripts/hosts.sh up N` makes N network namespaces (the hosts
# h1 … hN), each joined by a veth pair to a bridge that lives in a namespace of its own, each running its own sshd on
# its bed address; `scripts/hosts.sh down` removes all of it. `scripts/lab hosts up N` / `down` call it.
#
# What it makes, and nothing else (each line is written to the state file BEFORE it is made, so `down` after a crash
# finds it):
#   - namespaces PREFIX-br (the bridge) and PREFIX-1 … PREFIX-N (the hosts);
#   - in the root namespace ONE link, PREFIX-root (a veth whose peer is on the bridge), with the bed address .1: the
#     launcher reaches the hosts through it. It is the only change to the root namespace: no route beyond the one the
#     kernel makes for that address's /24, no iptables rule, no forwarding;
#   - /run/sshd when it is missing (sshd's privilege-separation folder), removed again by `down`;
#   - the bed folder (0700): a host key and a client key (0600), sshd's config, authorized_keys, known_hosts, the
#     sshds' pid files and logs, the state file.
# Traffic goes only to the bed's own addresses (SUBNET.0/24 on the bed's links); the hosts have no default route.
set -euo pipefail

bed="${SYNCLAB_HOSTS_DIR:-/run/synclab-hosts}"
prefix="${SYNCLAB_HOSTS_PREFIX:-slh}"
subnet="${SYNCLAB_HOSTS_SUBNET:-10.231.0}"
state="$bed/state"

usage() {
    echo "usage: scripts/hosts.sh up N | down | status | ssh hI COMMAND…    (N: 1-50 hosts; root only)" >&2
    exit 2
}

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "the hosts bed makes network namespaces: run it as root" >&2
        exit 2
    fi
}

# Records one thing about to be made; `down` undoes the lines in reverse order.
record() { echo "$*" >>"$state"; }

host_address() { echo "$subnet.$((10 + $1))"; }

# True when ADDR is reached through the bed's own link: nothing is ever sent to a bed address that would leave by
# another route (after a half-made `up`, or when the bed is down).
on_bed_route() { ip -4 route get "$1" 2>/dev/null | grep -q " dev $prefix-root "; }

up() {
    local n="$1"
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 50 ] || usage
    if [ -f "$state" ]; then
        echo "a bed is already up ($state); scripts/lab hosts down first" >&2
        exit 2
    fi
    if ip -4 route show | grep -q "^$subnet\.0/24"; then
        echo "the bed's subnet $subnet.0/24 is already routed on this machine; set SYNCLAB_HOSTS_SUBNET" >&2
        exit 2
    fi
    for tool in ip /usr/sbin/sshd ssh-keygen iptables; do
        command -v "$tool" >/dev/null 2>&1 || { echo "the hosts bed needs $tool (scripts/deps.sh)" >&2; exit 2; }
    done
    (umask 077 && mkdir -p "$bed")
    chmod 0700 "$bed"
    : >"$state"
    chmod 0600 "$state"
    trap 'echo "hosts up failed; undoing what it made" >&2; down; exit 2' ERR

    ssh-keygen -q -t ed25519 -N "" -C "synclab-bed-host" -f "$bed/host_key"
    ssh-keygen -q -t ed25519 -N "" -C "synclab-bed-client" -f "$bed/id_ed25519"
    chmod 0600 "$bed/host_key" "$bed/id_ed25519"
    (umask 077 && cp "$bed/id_ed25519.pub" "$bed/authorized_keys")
    if [ ! -d /run/sshd ]; then
        record "dir /run/sshd"
        mkdir -m 0755 /run/sshd
    fi

    record "netns $prefix-br"
    ip netns add "$prefix-br"
    ip -n "$prefix-br" link set lo up
    ip -n "$prefix-br" link add br0 type bridge
    ip -n "$prefix-br" link set br0 up

    # The launcher's way in: one veth from the root namespace onto the bridge.
    record "link $prefix-root"
    ip link add "$prefix-root" type veth peer name root-br netns "$prefix-br"
    ip -n "$prefix-br" link set root-br master br0 up
    ip addr add "$subnet.1/24" dev "$prefix-root"
    ip link set "$prefix-root" up

    : >"$bed/known_hosts"
    local i addr
    for i in $(seq 1 "$n"); do
        addr="$(host_address "$i")"
        record "netns $prefix-$i"
        ip netns add "$prefix-$i"
        ip -n "$prefix-$i" link set lo up
        ip -n "$prefix-br" link add "h$i-br" type veth peer name eth0 netns "$prefix-$i"
        ip -n "$prefix-br" link set "h$i-br" master br0 up
        ip -n "$prefix-$i" addr add "$addr/24" dev eth0
        ip -n "$prefix-$i" link set eth0 up
        cat >"$bed/sshd-h$i.conf" <<EOF
ListenAddress $addr:22
HostKey $bed/host_key
PidFile $bed/sshd-h$i.pid
AuthorizedKeysFile $bed/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes yes
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
AcceptEnv no
MaxStartups 64:30:128
MaxSessions 64
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
        record "sshd $bed/sshd-h$i.pid"
        ip netns exec "$prefix-$i" /usr/sbin/sshd -f "$bed/sshd-h$i.conf" -E "$bed/sshd-h$i.log"
        echo "$addr $(cut -d' ' -f1,2 "$bed/host_key.pub")" >>"$bed/known_hosts"
    done
    chmod 0600 "$bed/known_hosts"
    # Waits (bounded) until every sshd answers a real login: the bed is usable when `up` returns.
    for i in $(seq 1 "$n"); do
        addr="$(host_address "$i")"
        local ok=""
        on_bed_route "$addr" || { echo "$addr is not routed through $prefix-root" >&2; false; }
        for _ in $(seq 1 50); do
            if ssh -n -o BatchMode=yes -o ConnectTimeout=1 -o UserKnownHostsFile="$bed/known_hosts" \
                -o StrictHostKeyChecking=yes -i "$bed/id_ed25519" -p 22 "root@$addr" true 2>/dev/null; then
                ok=1
                break
            fi
            sleep 0.1
        done
        [ -n "$ok" ] || { echo "sshd of h$i ($addr) does not answer; see $bed/sshd-h$i.log" >&2; false; }
    done
    trap - ERR
    echo "# $n hosts up; paste into a topology (docs/HOSTS.md); scripts/lab hosts down removes them" >&2
    echo "hosts: {"
    for i in $(seq 1 "$n"); do
        echo "  h$i: { user: \"root\", address: \"$(host_address "$i")\", port: 22, identity: \"$bed/id_ed25519\"," \
            "knownHosts: \"$bed/known_hosts\" },"
    done
    echo "  // Only for a run that keeps some processes on this machine: where the hosts reach it."
    echo "  local: { address: \"$subnet.1\" },"
    echo "},"
}

# Removes, in reverse order, every line of the state file; what is already gone is skipped, so `down` is idempotent
# and works after a crash of `up`, of a run, or of the machine's processes.
down() {
    trap - ERR
    set +e
    if [ ! -f "$state" ]; then
        # Nothing recorded; a bed folder without a state file holds only files we made.
        [ -d "$bed" ] && rm -rf "$bed"
        return 0
    fi
    local line kind what pid
    while IFS= read -r line; do
        kind="${line%% *}"
        what="${line#* }"
        case "$kind" in
            sshd)
                if [ -f "$what" ]; then
                    pid="$(cat "$what")"
                    # Only the sshd that this bed started: its command line names the bed's config.
                    if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$bed/sshd-"; then
                        kill "$pid" 2>/dev/null
                    fi
                fi
                ;;
            netns)
                if ip netns list | grep -qw "^$what"; then
                    # Every process still inside the namespace (a run's roles, their ssh sessions) is the bed's.
                    local killed=""
                    for pid in $(ip netns pids "$what" 2>/dev/null); do
                        kill -9 "$pid" 2>/dev/null && killed="$killed $pid"
                    done
                    # SIGKILL is delivered, not finished: wait (up to 5 s) until the namespace holds none of them
                    # and each killed process is gone from the process table (or only a zombie left for its
                    # parent to reap), so that `down` returns with every process of the bed gone. A process leaves
                    # the namespace's list a little before it leaves `ps`: the namespace alone is not enough.
                    for _ in $(seq 100); do
                        local alive=""
                        for pid in $killed; do
                            if [ -e "/proc/$pid" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
                            then alive=1; break; fi
                        done
                        [ -z "$alive" ] && [ -z "$(ip netns pids "$what" 2>/dev/null)" ] && break
                        sleep 0.05
                    done
                    ip netns del "$what"
                fi
                ;;
            link)
                ip link show "$what" >/dev/null 2>&1 && ip link del "$what"
                ;;
            dir)
                [ -d "$what" ] && rmdir "$what" 2>/dev/null
                ;;
        esac
    done < <(tac "$state")
    rm -rf "$bed"
    set -e
    return 0
}

# scripts/hosts.sh ssh hI COMMAND…: a login on a bed host with the bed's key, only through the bed's link.
bed_ssh() {
    local i="${1#h}"
    shift
    [[ "$i" =~ ^[0-9]+$ ]] || usage
    local addr
    addr="$(host_address "$i")"
    [ -f "$state" ] && on_bed_route "$addr" || { echo "no bed host h$i is up" >&2; exit 2; }
    exec ssh -o BatchMode=yes -o UserKnownHostsFile="$bed/known_hosts" -o StrictHostKeyChecking=yes \
        -i "$bed/id_ed25519" "root@$addr" "$@"
}

status() {
    if [ ! -f "$state" ]; then
        echo "no bed is up"
        return 0
    fi
    grep -E '^(netns|link)' "$state"
}

case "${1:-}" in
    up) need_root; [ $# -eq 2 ] || usage; up "$2" ;;
    down) need_root; [ $# -eq 1 ] || usage; down; echo "hosts bed down" >&2 ;;
    status) status ;;
    ssh) [ $# -ge 2 ] || usage; shift; bed_ssh "$@" ;;
    *) usage ;;
esac
