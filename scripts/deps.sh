# Sourced by scripts/test and scripts/lab: installs what the build needs when it is missing (libzmq3-dev,
# libsqlite3-dev, and the NATS and Redis C clients the bench target links), and, for `scripts/lab bench` only, the
# servers the bench starts as its peers (nats-server, redis-server).
# For scripts/test, also Debian's chromium (the browser test renders report.html in it) and pyzmq (PROTOCOL.md's
# snippets are run with it).
synclab_need_packages() {
    local missing=()
    [ -f /usr/include/zmq.h ] || missing+=(libzmq3-dev)
    [ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
    [ -f /usr/include/nats/nats.h ] || missing+=(libnats-dev)
    [ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev)
    synclab_install "${missing[@]}"
}
# The bench's peers: nats-server (Debian puts it in /usr/sbin) and redis-server.
synclab_need_bench_peers() {
    local missing=()
    command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
    command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
    synclab_install "${missing[@]}"
}
# The hosts bed (scripts/hosts.sh) and runs on hosts: sshd for the bed's hosts, the ssh/scp clients the launcher
# starts roles with, iptables for the partitions, ip for the namespaces.
synclab_need_hosts_bed() {
    local missing=()
    [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
    command -v ssh >/dev/null 2>&1 && command -v scp >/dev/null 2>&1 || missing+=(openssh-client)
    command -v iptables >/dev/null 2>&1 || [ -x /usr/sbin/iptables ] || missing+=(iptables)
    command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || missing+=(iproute2)
    synclab_install_for "SyncLab's hosts bed" "network namespaces with an sshd each" "${missing[@]}"
}
# Installs the Debian packages named (none: nothing to do) with apt-get; exits 2 when it cannot.
synclab_install() {
    synclab_install_for "SyncLab" "" "$@"
}
# The same, saying who needs the packages and (if not empty) why, in its messages.
synclab_install_for() {
    local who="$1" why="$2"
    shift 2
    local missing=("$@")
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "$who needs ${missing[*]}; run as root or: sudo apt-get install -y ${missing[*]}" >&2
        exit 2
    fi
    echo "installing ${missing[*]}${why:+ ($why)} …" >&2
    if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
        apt-get update -qq >&2 || { echo "apt-get update failed" >&2; exit 2; }
    fi
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; then
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 \
            || { echo "could not install ${missing[*]} with apt-get" >&2; exit 2; }
    fi
}
synclab_need_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        if [ -x /opt/swift/usr/bin/swift ]; then
            export PATH=/opt/swift/usr/bin:$PATH
        else
            echo "SyncLab needs a Swift 6 toolchain on PATH (swift.org/install)" >&2
            exit 2
        fi
    fi
}
# For scripts/test: pyzmq from PyPI, with which a doc test runs PROTOCOL.md's Python snippets against a real server.
# Not fatal: without pip or a network the test says it was skipped.
synclab_need_pyzmq() {
    python3 -c 'import zmq' >/dev/null 2>&1 && return 0
    if ! command -v python3 >/dev/null 2>&1; then
        echo "no python3: the PROTOCOL.md snippet test and the outside-device tests are skipped" >&2
        return 0
    fi
    echo "installing pyzmq (PROTOCOL.md's snippets and examples/python-device run with it) …" >&2
    python3 -m pip install -q pyzmq >&2 \
        || echo "could not install pyzmq with pip: the PROTOCOL.md snippet and outside-device tests are skipped" >&2
}
synclab_need_chromium() {
    if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
        return 0
    fi
    synclab_install_for "SyncLab's browser test" "the browser test renders report.html in it" chromium
}
