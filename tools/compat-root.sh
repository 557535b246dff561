#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Debian root filesystems for the GStreamer compatibility lanes, made with debootstrap from the
# archive this host's apt uses and cached on the machine, outside any clone.
#
#   tools/compat-root.sh ensure VERSION        make the root unless it is ready; print its path
#   tools/compat-root.sh run VERSION CMD...    run CMD as root inside it (ensure first), in the
#                                              current directory (or the clone's top directory)
#   tools/compat-root.sh path VERSION          print where the root is (made or not)
#   tools/compat-root.sh list                  the roots on this machine, with their stamps
#   tools/compat-root.sh packages VERSION      print the packages its list gives that root
#
# VERSION is the GStreamer version: 1.26 (Debian 13, trixie) or 1.28 (Debian testing, forky).
#
# A root is named after its release and the hash of its package list (the lines of
# tools/compat-packages.txt for that version) and of the recipe below:
# $EDGETENSOR_ROOTS/<codename>-<hash>, its stamp in etc/edgetensor-compat-root. A list that
# changes makes a new root beside the old ones, so clones with different lists on one machine do
# not remake each other's roots; the three newest of a release are kept, older ones go once no
# command runs in them.
#
# `run` works in a mount namespace of its own: the cached root is the lower layer of an overlay
# whose upper layer is a tmpfs, so nothing a command writes outside the clone outlives it and the
# cache stays as made (a package a lane needs goes into the list, never into a root by hand).
# proc, /dev (with /dev/shm and /dev/pts), /sys, a tmpfs /tmp, the host's resolv.conf and this
# clone (read-write, at the same path) are mounted there, and unmounted when CMD ends however it
# ends (a trap, and the namespace dies with its last process). The environment starts clean but
# for the variables named below.
#
# Environment: EDGETENSOR_ROOTS (where the roots live; default /var/cache/edgetensor/roots),
# EDGETENSOR_MIRROR (the archive; default the first one of this host's apt sources),
# EDGETENSOR_BIND (space-separated host paths also mounted at the same path in the root;
# HOST:PATH mounts HOST at PATH).
# Passed into the root: TERM, DEBIAN_FRONTEND, BUILD_DIR, SKIP_DEPS, MESON_ARGS, CC, CXX, and
# every EDGETENSOR_*, ETVM_*, GST_*, G_*, ASAN_*, UBSAN_*, TSAN_*, LSAN_* variable, and
# CCACHE_DISABLE. ccache keeps its files per release in $EDGETENSOR_ROOTS/<codename>.ccache.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
self="$here/tools/compat-root.sh"
list="$here/tools/compat-packages.txt"
roots=${EDGETENSOR_ROOTS:-/var/cache/edgetensor/roots}
# Bumped when the way a root is made changes (not its packages): every root is remade.
recipe=1

log() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'compat-root: %s\n' "$*" >&2
    exit 1
}

codename_of() {
    case "$1" in
    1.26) echo trixie ;;
    1.28) echo forky ;;
    *) die "unknown GStreamer version '$1' (known: 1.26 = Debian 13 trixie, 1.28 = Debian testing forky)" ;;
    esac
}

# packages_of VERSION: the list's lines without versions, or naming VERSION.
packages_of() {
    awk -v v="$1" '
        /^[[:space:]]*(#|$)/ { next }
        NF == 1 { print $1; next }
        { for (i = 2; i <= NF; i++) if ($i == v) { print $1; next } }
    ' "$list"
}

stamp_of() {
    { echo "recipe $recipe"; packages_of "$1"; } | sha256sum | cut -d' ' -f1
}

# The archive this host's apt uses: the first source of this release's own suite with a main
# component (deb822 files first, then one-line ones), so a third-party repository listed earlier
# (its own suite or component) or the security archive is not taken for it.
mirror() {
    if [ -n "${EDGETENSOR_MIRROR:-}" ]; then
        echo "$EDGETENSOR_MIRROR"
        return
    fi
    local release m
    release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    m=$(awk -v rel="$release" '
        function flush() {
            if (uris != "" && (" " suites " ") ~ (" " rel " ") && (" " comps " ") ~ / main /) {
                split(uris, u, " "); print u[1]; found = 1; exit
            }
            uris = suites = comps = ""
        }
        /^[[:space:]]*$/ { flush(); next }
        /^URIs:/ { uris = $0; sub(/^URIs:[[:space:]]*/, "", uris) }
        /^Suites:/ { suites = $0; sub(/^Suites:[[:space:]]*/, "", suites) }
        /^Components:/ { comps = $0; sub(/^Components:[[:space:]]*/, "", comps) }
        END { if (!found) flush() }
    ' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$m" ] || m=$(awk -v rel="$release" '
        /^deb[[:space:]]/ {
            sub(/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?/, "")
            if ($2 == rel && (" " $0 " ") ~ / main /) { print $1; exit }
        }' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
    [ -n "$m" ] || die "no source for Debian $release with a main component in this host's apt" \
        "sources (set EDGETENSOR_MIRROR to the archive's URL)"
    echo "$m"
}

need_root() {
    [ "$(id -u)" -eq 0 ] || die "debootstrap, mounts and chroot need root: run this as root (sudo $0 $*)"
}

# remove_tree DIR: only a tree nothing is mounted in (a mount would take host files with it).
remove_tree() {
    [ -e "$1" ] || return 0
    if awk -v d="$1/" 'index($5 "/", d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
        die "$1 has something mounted in it; not removing it"
    fi
    rm -rf --one-file-system "$1"
}

ready() {
    [ -f "$1/etc/edgetensor-compat-root" ] &&
        grep -qx "stamp $2" "$1/etc/edgetensor-compat-root"
}

root_of() {
    echo "$roots/$(codename_of "$1")-$(stamp_of "$1" | cut -c1-12)"
}

# prune CODENAME: keep the three newest roots of a release; an older one goes unless a command
# runs in it (it holds the root's lock shared).
prune() {
    local old
    for old in $(ls -1dt "$roots/$1"-*/ 2>/dev/null | tail -n +4); do
        old=${old%/}
        (
            flock -n -x 7 || exit 0
            log "removing the old root $old"
            remove_tree "$old"
            rm -f "$old.lock"
        ) 7>"$old.lock"
    done
}

# make_root VERSION CODENAME DIR STAMP (the caller holds the release's lock)
make_root() {
    local version=$1 codename=$2 dir=$3 stamp=$4
    local new="$roots/$codename.new" logs="$roots/$codename" archive script t0=$SECONDS
    archive=$(mirror)
    # A bootstrap whose package installation failed is kept and used again (the list is what
    # changes between such tries, not the base system).
    local base="recipe $recipe $codename $archive"
    if [ "$(cat "$new/.edgetensor-bootstrapped" 2>/dev/null)" != "$base" ]; then
        remove_tree "$new"
        # Debian 12's debootstrap knows trixie but not forky; sid's script makes any newer suite.
        script=/usr/share/debootstrap/scripts/$codename
        [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
        command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap)"
        log "debootstrap $codename from $archive into $new"
        if ! debootstrap --variant=minbase --components=main "$codename" "$new" "$archive" \
            "$script" >"$logs.log" 2>&1; then
            tail -n 30 "$logs.log" >&2
            die "debootstrap of $codename failed (whole log: $logs.log)"
        fi
        echo "$base" >"$new/.edgetensor-bootstrapped"
    fi
    local t_boot=$((SECONDS - t0))

    # Nothing of this host stays in the root: it may become a VM guest's / later.
    printf 'edgetensor-%s\n' "$codename" >"$new/etc/hostname"
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$new/etc/hosts"
    : >"$new/etc/resolv.conf"
    cat >"$new/etc/apt/apt.conf.d/90edgetensor" <<'EOF'
// edgetensor compat root: no recommends, no translations
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
    if [ "$codename" = forky ]; then
        # Debian testing's Release file on the archive can be past its Valid-Until date.
        echo 'Acquire::Check-Valid-Until "false";' >>"$new/etc/apt/apt.conf.d/90edgetensor"
    fi
    cat >"$new/etc/dpkg/dpkg.cfg.d/90edgetensor" <<'EOF'
# edgetensor compat root: a disposable cache, so no fsync per file; no manuals or translations
force-unsafe-io
path-exclude=/usr/share/man/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
EOF
    printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
    chmod 755 "$new/usr/sbin/policy-rc.d"

    local pkgs
    pkgs=$(packages_of "$version" | tr '\n' ' ')
    log "installing into $codename: $pkgs"
    t0=$SECONDS
    if ! unshare --mount --propagation private -- "$self" __inside build "$new" / \
        sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs &&
               apt-get clean" >"$logs.install.log" 2>&1; then
        tail -n 40 "$logs.install.log" >&2
        die "installing the packages into $codename failed (whole log: $logs.install.log)"
    fi
    local t_install=$((SECONDS - t0))
    rm -f "$new/usr/sbin/policy-rc.d" "$new/.edgetensor-bootstrapped"
    {
        echo "stamp $stamp"
        echo "codename $codename"
        echo "archive $archive"
        echo "made $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "gstreamer $(chroot "$new" dpkg-query -W -f='${Version}' libgstreamer1.0-0 2>/dev/null || true)"
        echo "seconds bootstrap $t_boot install $t_install"
    } >"$new/etc/edgetensor-compat-root"

    if [ -e "$dir" ]; then
        mv "$dir" "$dir.old"
        mv "$new" "$dir"
        remove_tree "$dir.old"
    else
        mv "$new" "$dir"
    fi
    log "root $codename ready in $dir (bootstrap ${t_boot} s, install ${t_install} s)"
}

# ensure VERSION: the root's path on stdout once it is ready.
ensure() {
    local version=$1 codename dir stamp
    codename=$(codename_of "$version")
    dir=$(root_of "$version")
    stamp=$(stamp_of "$version")
    if ! ready "$dir" "$stamp"; then
        need_root ensure "$version"
        mkdir -p "$roots"
        # One maker per release at a time; another ensure waits here, then finds it ready.
        exec 8>"$roots/$codename.lock"
        flock -x 8
        if ! ready "$dir" "$stamp"; then
            make_root "$version" "$codename" "$dir" "$stamp"
            prune "$codename"
        fi
        exec 8>&-
    fi
    echo "$dir"
}

# Everything inside() mounted, innermost last; the namespace's EXIT trap unmounts it.
mounted=()
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -R -l "${mounted[i]}" 2>/dev/null || true
    done
    mounted=()
}

# __inside MODE ROOT CWD CMD...: the namespace's side (run via unshare). MODE build mounts on
# ROOT itself (debootstrap's tree, apt writing to it); MODE run puts a tmpfs overlay on top.
inside() {
    local mode=$1 root=$2 cwd=$3
    shift 3
    local top="$root"
    trap unmount_all EXIT
    if [ "$mode" = run ]; then
        local scratch="$roots/.mnt"
        mkdir -p "$scratch"
        mount -t tmpfs -o mode=0755 edgetensor-compat "$scratch"
        mounted+=("$scratch")
        mkdir "$scratch/upper" "$scratch/work" "$scratch/root"
        mount -t overlay overlay \
            -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/root"
        top="$scratch/root"
    fi
    mount -t proc proc "$top/proc"
    mounted+=("$top/proc")
    mount --rbind /dev "$top/dev"
    mounted+=("$top/dev")
    mount --rbind /sys "$top/sys"
    mounted+=("$top/sys")
    mount -t tmpfs -o mode=1777 tmpfs "$top/tmp"
    mounted+=("$top/tmp")
    if [ -f /etc/resolv.conf ]; then
        [ -e "$top/etc/resolv.conf" ] || : >"$top/etc/resolv.conf"
        mount --bind /etc/resolv.conf "$top/etc/resolv.conf"
        mounted+=("$top/etc/resolv.conf")
    fi
    local binds=() b
    if [ "$mode" = run ]; then
        binds=("$here")
        local extra=()
        IFS=' ' read -r -a extra <<<"${EDGETENSOR_BIND:-}"
        for b in "${extra[@]}"; do
            binds+=("$b")
        done
        # One compiler per release: its roots share a ccache.
        local cache="$roots/$(basename "${root%-*}").ccache"
        mkdir -p "$cache"
        binds+=("$cache:/var/cache/ccache")
    fi
    for b in "${binds[@]}"; do
        local src=${b%%:*} dst=${b#*:}
        [ "$dst" != "$b" ] || dst=$src
        [ -e "$src" ] || die "EDGETENSOR_BIND: $src does not exist"
        if [ -d "$src" ]; then mkdir -p "$top$dst"; else
            mkdir -p "$(dirname "$top$dst")"
            : >"$top$dst"
        fi
        mount --bind "$src" "$top$dst"
        mounted+=("$top$dst")
    done

    local envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
        LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
    if [ "$mode" = build ]; then
        # The kernel is for qemu's -kernel (tests/vm builds its own initramfs): no initrd.
        envs+=(INITRD=No)
    else
        # Paths relative to the clones' parent, as on the host: another worktree's objects hit.
        envs+=(CCACHE_DIR=/var/cache/ccache CCACHE_BASEDIR="$(dirname "$here")"
            CCACHE_NOHASHDIR=true)
    fi
    local name
    while IFS='=' read -r -d '' name _; do
        case "$name" in
        TERM | DEBIAN_FRONTEND | BUILD_DIR | SKIP_DEPS | MESON_ARGS | CC | CXX | EDGETENSOR_* | \
            ETVM_* | GST_* | G_* | ASAN_* | UBSAN_* | TSAN_* | LSAN_* | CCACHE_DISABLE)
            envs+=("$name=${!name}")
            ;;
        esac
    done < <(env -0)
    # Not exec: the trap unmounts once the command is done.
    local rc=0
    chroot "$top" /usr/bin/env -i "${envs[@]}" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh \
        "$cwd" "$@" || rc=$?
    unmount_all
    return $rc
}

main() {
    local verb=${1:-}
    case "$verb" in
    ensure)
        [ $# -eq 2 ] || die "usage: $0 ensure VERSION"
        ensure "$2"
        ;;
    path)
        [ $# -eq 2 ] || die "usage: $0 path VERSION"
        root_of "$2"
        ;;
    packages)
        [ $# -eq 2 ] || die "usage: $0 packages VERSION"
        codename_of "$2" >/dev/null
        packages_of "$2"
        ;;
    list)
        local r
        for r in "$roots"/*-*/; do
            [ -f "$r/etc/edgetensor-compat-root" ] || continue
            echo "${r%/}"
            sed 's/^/    /' "$r/etc/edgetensor-compat-root"
        done
        ;;
    run)
        [ $# -ge 3 ] || die "usage: $0 run VERSION CMD [ARGS...]"
        local version=$2 dir cwd rc=0
        shift 2
        need_root run "$version"
        dir=$(ensure "$version")
        # Shared while the command runs: pruning (exclusive) leaves the root alone.
        exec 9>"$dir.lock"
        flock -s 9
        ready "$dir" "$(stamp_of "$version")" || die "$dir was removed meanwhile: run again"
        cwd=$PWD
        case "$cwd/" in "$here"/*) ;; *) cwd=$here ;; esac
        unshare --mount --propagation private -- "$self" __inside run "$dir" "$cwd" "$@" 9>&- ||
            rc=$?
        return $rc
        ;;
    __inside)
        shift
        inside "$@"
        ;;
    *)
        sed -n '4,37p' "$0" >&2
        return 2
        ;;
    esac
}

# One line, read whole before it runs: editing this file under a running command is safe.
main "$@"; exit $?
