#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run-in-vm.sh - run one command inside a throw-away QEMU guest that boots a stock Debian
# kernel with real DMA-BUF exporters (system dma-heap, udmabuf, vgem PRIME, vivid V4L2), so
# code that needs them can be tested on a host that has none. See docs/testing.md.
#
#   usage: run-in-vm.sh [OPTIONS] [--] COMMAND [ARGS...]
#          run-in-vm.sh --check      (exit 0 when the lane can run here, 77 and why when not)
#   options: --timeout=SECONDS, --cache=DIR, --strict (the same as ETVM_TIMEOUT, ETVM_CACHE
#   and ETVM_STRICT=1 below, for callers such as meson that pass arguments more easily)
#
# The host's / is shared read-only (virtio-9p) and mounted in the guest under a tmpfs overlay;
# COMMAND runs chrooted into it, as root, in the caller's working directory and with the
# caller's environment, so programs from a build tree run unchanged. Every write lands in guest
# RAM and is discarded. stdout/stderr of COMMAND come back on this script's stdout/stderr.
#
# Exit status: COMMAND's own, or
#   77   the lane cannot run here (no qemu, no suitable kernel, missing tool): skipped
#   124  the guest did not finish within ETVM_TIMEOUT seconds (qemu killed)
#   125  infrastructure failure (boot or mount failed; no exit status came back)
# With ETVM_STRICT=1 a guest kernel WARNING/BUG/Oops turns a 0 into 1: DMA-BUF misuse often
# shows up only as a kernel warning.
#
# Knobs (environment, all optional):
#   ETVM_KVER      kernel version (default: newest /boot/config-* with CONFIG_DMABUF_HEAPS=y
#                  and CONFIG_UDMABUF=y whose vmlinuz and modules are installed)
#   ETVM_MODULES   modules loaded in the guest before COMMAND (default "vgem vivid")
#   ETVM_MEM       guest RAM (default 1G)      ETVM_CPUS  vCPUs (default 2)
#   ETVM_TIMEOUT   seconds before qemu is killed (default 300)
#   ETVM_ACCEL     auto (default: kvm only with a writable /dev/kvm and a vmx/svm CPU flag,
#                  else tcg) | kvm | tcg
#   ETVM_CACHE     where the initramfs and the extracted vmlinux are cached
#                  (default ${XDG_CACHE_HOME:-$HOME/.cache}/edgetensor-vm)
#   ETVM_RETRIES   boots retried when the guest fails before COMMAND started (default 1)
#   ETVM_STRICT    1 = a guest kernel WARNING/BUG/Oops fails the run
#   ETVM_VERBOSE   1 = stream the guest console (kernel and init log) to stderr
#   ETVM_KEEP      1 = keep the run directory (console.log, cmd.sh) and say where
#   ETVM_TESTS     handed to the guest (the other ETVM_* stay outside): the part of a
#                  vm-batch.sh batch to run (patterns; see tests/vm/vm-batch.sh)
#
# Host packages (Debian 12): qemu-system-x86 busybox-static cpio kmod xz-utils zstd binutils
# util-linux, and a kernel with dma-heap and udmabuf: linux-image-6.12-amd64 (the default 6.1
# kernel has neither).
set -euo pipefail

SELF=run-in-vm
skip() {
    echo "$SELF: SKIP: $*" >&2
    exit 77
}
die() {
    echo "$SELF: $*" >&2
    exit 125
}

CHECK_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
    --)
        shift
        break
        ;;
    --check) CHECK_ONLY=1 ;;
    --timeout=*) ETVM_TIMEOUT=${1#*=} ;;
    --cache=*) ETVM_CACHE=${1#*=} ;;
    --strict) ETVM_STRICT=1 ;;
    -h | --help)
        sed -n '4,44p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "$SELF: unknown option $1 (put -- before a command that starts with a dash)" >&2
        exit 125
        ;;
    *) break ;;
    esac
    shift
done
if [ "$CHECK_ONLY" = 0 ] && [ $# -eq 0 ]; then
    echo "usage: $0 [--check] [--timeout=S] [--cache=DIR] [--strict] [--] COMMAND [ARGS...]" >&2
    exit 125
fi
case "${ETVM_TIMEOUT:-300}" in
'' | *[!0-9]*) echo "$SELF: the timeout must be whole seconds (got '$ETVM_TIMEOUT')" >&2 && exit 125 ;;
esac

# Already inside a guest (a nested call, e.g. a wrapped test run by a wrapped test runner).
if [ -n "${ETVM_GUEST:-}" ] && [ "$CHECK_ONLY" = 0 ]; then
    exec "$@"
fi

: "${ETVM_MODULES=vgem vivid}"
: "${ETVM_MEM:=1G}"
: "${ETVM_CPUS:=2}"
: "${ETVM_TIMEOUT:=300}"
: "${ETVM_ACCEL:=auto}"
: "${ETVM_RETRIES:=1}"
: "${ETVM_STRICT:=0}"
: "${ETVM_VERBOSE:=0}"
: "${ETVM_KEEP:=0}"
: "${ETVM_CACHE:=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/edgetensor-vm}"

# ------------------------------------------------------------------ prerequisites
command -v qemu-system-x86_64 >/dev/null ||
    skip "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
for tool in cpio:cpio depmod:kmod modprobe:kmod xz:xz-utils zstd:zstd flock:util-linux \
    timeout:coreutils; do
    command -v "${tool%%:*}" >/dev/null ||
        skip "${tool%%:*} not found (apt-get install ${tool#*:})"
done
# The initramfs has no C library: busybox must be the static build (ldd refuses it).
BUSYBOX=""
for b in /bin/busybox /usr/bin/busybox; do
    if [ -x "$b" ] && ! LC_ALL=C ldd "$b" >/dev/null 2>&1; then
        BUSYBOX=$b
        break
    fi
done
[ -n "$BUSYBOX" ] || skip "no statically linked busybox (apt-get install busybox-static)"

if [ -z "${ETVM_KVER:-}" ]; then
    for cfg in $(ls /boot/config-* 2>/dev/null | sort -rV); do
        v=${cfg#/boot/config-}
        if grep -q '^CONFIG_DMABUF_HEAPS=y' "$cfg" && grep -q '^CONFIG_UDMABUF=y' "$cfg" &&
            [ -r "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v" ]; then
            ETVM_KVER=$v
            break
        fi
    done
fi
[ -n "${ETVM_KVER:-}" ] ||
    skip "no installed kernel has dma-heap and udmabuf (apt-get install linux-image-6.12-amd64)"
KVER=$ETVM_KVER
VMLINUZ=/boot/vmlinuz-$KVER
MODDIR=/lib/modules/$KVER
[ -r "$VMLINUZ" ] || skip "$VMLINUZ is missing or unreadable"
[ -d "$MODDIR" ] || skip "$MODDIR is missing (the kernel package is incomplete)"

case "$ETVM_ACCEL" in
auto)
    if [ -w /dev/kvm ] && grep -qw -E 'vmx|svm' /proc/cpuinfo; then ACCEL=kvm; else ACCEL=tcg; fi
    ;;
kvm | tcg) ACCEL=$ETVM_ACCEL ;;
*) die "ETVM_ACCEL must be auto, kvm or tcg (got '$ETVM_ACCEL')" ;;
esac

if [ "$CHECK_ONLY" = 1 ]; then
    echo "$SELF: ready: kernel $KVER, $ACCEL, busybox $BUSYBOX"
    exit 0
fi

# ------------------------------------------------------------------ guest /init
# Runs as PID 1 from the initramfs (busybox). Mounts the run directory and the host root over
# 9p, loads the test drivers, runs cmd.sh in a chroot and records its exit status.
read -r -d '' GUEST_INIT <<'EOF_INIT' || true
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /run
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
say() { echo "etvm-init: $*" > /dev/console; }
fail() {
    say "FATAL: $*"
    [ -d /run/etvm ] && echo 125 > /run/etvm/rc
    sync
    poweroff -f
    sleep 10
}

MODS=""
for w in $(cat /proc/cmdline); do
    case "$w" in etvm.mods=*) MODS=$(echo "${w#*=}" | tr , ' ') ;; esac
done

modprobe -a 9pnet_virtio 9p overlay || fail "cannot load 9p/overlay modules"
mkdir -p /run/etvm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none etvmrun /run/etvm ||
    fail "cannot mount the run directory"

# The command's stdout/stderr travel over two virtio-serial ports (they may appear late).
OUT=""
ERR=""
n=0
while [ $n -lt 200 ]; do
    for p in /sys/class/virtio-ports/*; do
        [ -e "$p/name" ] || continue
        case "$(cat "$p/name")" in
        etvm.out) OUT=/dev/${p##*/} ;;
        etvm.err) ERR=/dev/${p##*/} ;;
        esac
    done
    [ -n "$OUT" ] && [ -n "$ERR" ] && [ -c "$OUT" ] && [ -c "$ERR" ] && break
    n=$((n + 1))
    sleep 0.01
done
[ -n "$OUT" ] && [ -c "$OUT" ] || fail "virtio-serial port etvm.out did not appear"
[ -n "$ERR" ] && [ -c "$ERR" ] || fail "virtio-serial port etvm.err did not appear"

for m in $MODS; do
    modprobe "$m" || echo "run-in-vm: guest: module $m could not be loaded" > "$ERR"
done

NR=/newroot
mkdir -p /lower /upper $NR
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot /lower ||
    fail "cannot mount the host root"
mount -t tmpfs -o mode=755 tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay $NR ||
    fail "overlay mount failed"
for d in proc sys dev dev/pts dev/shm; do
    mount -o bind /$d $NR/$d || fail "cannot bind /$d"
done
mount -t tmpfs -o mode=755 tmpfs $NR/run
mkdir -p $NR/run/etvm $NR/run/lock
mount -o bind /run/etvm $NR/run/etvm

: > /run/etvm/started
chroot $NR /bin/bash /run/etvm/cmd.sh < /dev/null > "$OUT" 2> "$ERR"
echo $? > /run/etvm/rc
sync
poweroff -f
sleep 10
EOF_INIT

# ------------------------------------------------------------------ initramfs (cached)
INITRD_MODS="9pnet_virtio 9p overlay vgem vivid"
KEY=$(printf '%s\n' "$KVER" "$INITRD_MODS" "$GUEST_INIT" "$(stat -Lc %s.%Y "$BUSYBOX" "$VMLINUZ")" |
    sha256sum | cut -c1-16)
INITRD=$ETVM_CACHE/initramfs-$KVER-$KEY.cpio
build_initramfs() {
    local st f rel
    mkdir -p "$ETVM_CACHE"
    st=$(mktemp -d "$ETVM_CACHE/stage.XXXXXX")
    mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,run,tmp,lib/modules/$KVER}
    cp "$BUSYBOX" "$st/bin/busybox"
    for a in $("$BUSYBOX" --list); do
        [ "$a" = busybox ] || ln -s busybox "$st/bin/$a"
    done
    for m in $INITRD_MODS; do
        modprobe -S "$KVER" --show-depends "$m" 2>/dev/null |
            awk '$1 == "insmod" { print $2 }' ||
            echo "$SELF: note: kernel $KVER has no module $m" >&2
    done | sort -u | while read -r f; do
        rel=${f#"$MODDIR"/}
        mkdir -p "$st/lib/modules/$KVER/$(dirname "$rel")"
        # Decompressed here, so neither busybox nor the guest kernel needs a decompressor.
        case "$f" in
        *.xz) xz -dc "$f" >"$st/lib/modules/$KVER/${rel%.xz}" ;;
        *.zst) zstd -qdc "$f" >"$st/lib/modules/$KVER/${rel%.zst}" ;;
        *.gz) gzip -dc "$f" >"$st/lib/modules/$KVER/${rel%.gz}" ;;
        *) cp "$f" "$st/lib/modules/$KVER/$rel" ;;
        esac
    done
    cp "$MODDIR"/modules.builtin* "$st/lib/modules/$KVER/" 2>/dev/null || true
    : >"$st/lib/modules/$KVER/modules.order"
    depmod -b "$st" "$KVER"
    printf '%s\n' "$GUEST_INIT" >"$st/init"
    chmod 755 "$st/init"
    (cd "$st" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
        >"$INITRD.tmp.$$"
    mv "$INITRD.tmp.$$" "$INITRD"
    rm -rf "$st"
    for f in "$ETVM_CACHE"/initramfs-"$KVER"-*.cpio; do
        [ "$f" = "$INITRD" ] || rm -f "$f"
    done
}

# ------------------------------------------------------------------ kernel image (cached)
# Booting the uncompressed vmlinux through its PVH entry point skips the bzImage
# decompressor, which is ~0.4 s of a ~3 s boot under TCG. Falls back to the bzImage when the
# ELF inside cannot be found or has no PVH note.
KERNEL=$VMLINUZ
VMLINUX=$ETVM_CACHE/vmlinux-$KVER-$(stat -Lc %s.%Y "$VMLINUZ")
extract_vmlinux() {
    local fmt magic off tmp=$VMLINUX.tmp.$$
    command -v readelf >/dev/null || return 0
    for fmt in 'zstd:\x28\xb5\x2f\xfd' 'xz:\xfd7zXZ\x00' 'gzip:\x1f\x8b\x08'; do
        magic=${fmt#*:}
        for off in $(LC_ALL=C grep -aboP "$magic" "$VMLINUZ" 2>/dev/null | cut -d: -f1 | head -n 3); do
            tail -c +$((off + 1)) "$VMLINUZ" | "${fmt%%:*}" -dc 2>/dev/null >"$tmp" || true
            if [ "$(head -c 4 "$tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
                readelf -n "$tmp" 2>/dev/null | grep -q -E '0x00000012|PHYS32_ENTRY'; then
                mv "$tmp" "$VMLINUX"
                return 0
            fi
        done
    done
    rm -f "$tmp"
    : >"$VMLINUX.nopvh"
}

# Two lane runs may start at once (parallel test runs): the cache is filled under a lock.
mkdir -p "$ETVM_CACHE"
(
    flock 9
    [ -s "$INITRD" ] || build_initramfs
    if [ ! -s "$VMLINUX" ] && [ ! -e "$VMLINUX.nopvh" ]; then
        for f in "$ETVM_CACHE"/vmlinux-*; do rm -f "$f"; done
        extract_vmlinux
    fi
) 9>"$ETVM_CACHE/.lock"
[ -s "$INITRD" ] || die "could not build the initramfs in $ETVM_CACHE"
[ -s "$VMLINUX" ] && KERNEL=$VMLINUX

# ------------------------------------------------------------------ per-run directory
RUNDIR=$(mktemp -d "${TMPDIR:-/tmp}/etvm-run.XXXXXX")
QPID=""
cleanup() {
    if [ -n "$QPID" ]; then
        kill "$QPID" 2>/dev/null || true
        wait "$QPID" 2>/dev/null || true
    fi
    if [ "$ETVM_KEEP" = 1 ]; then
        echo "$SELF: run directory kept: $RUNDIR" >&2
    else
        rm -rf "$RUNDIR"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

case "$PWD" in
/proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /run | /run/*)
    die "the working directory $PWD is not visible in the guest (it has its own /proc, /sys, /dev, /run)"
    ;;
esac

# cmd.sh: the caller's environment, working directory and command, for bash in the guest.
{
    echo "# generated by run-in-vm.sh"
    skipvars=" PWD OLDPWD SHLVL _ TERM_PROGRAM DISPLAY WAYLAND_DISPLAY XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS SSH_AUTH_SOCK "
    while IFS= read -r v; do
        case "$v" in ETVM_TESTS) ;; ETVM_* | BASH_FUNC_*) continue ;; esac
        case "$skipvars" in *" $v "*) continue ;; esac
        [[ "$v" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
        printf 'export %s=%q\n' "$v" "${!v}"
    done < <(compgen -e)
    echo "export ETVM_GUEST=1"
    printf 'cd %q || exit 125\n' "$PWD"
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
} >"$RUNDIR/cmd.sh"

# Pipes and terminals are reopened by qemu through /proc/self/fd (live output); a regular
# file is not (qemu would not share the caller's offset), so output is collected and copied.
OUTP=$RUNDIR/out
ERRP=$RUNDIR/err
{ [ -p /proc/self/fd/1 ] || [ -c /proc/self/fd/1 ]; } && OUTP=/proc/self/fd/1
{ [ -p /proc/self/fd/2 ] || [ -c /proc/self/fd/2 ]; } && ERRP=/proc/self/fd/2
CONP=$RUNDIR/console.log
[ "$ETVM_VERBOSE" = 1 ] && CONP=$ERRP

case "$ACCEL" in
kvm) ACCEL_ARGS=(-accel kvm -cpu host) ;;
tcg) ACCEL_ARGS=(-accel tcg,thread=multi,tb-size=256 -cpu max) ;;
esac
APPEND="console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init"
[ -n "$ETVM_MODULES" ] && APPEND+=" etvm.mods=$(echo $ETVM_MODULES | tr ' ' ,)"

# qemu dies with this script (pdeathsig), and with the timeout that bounds it.
PDEATH=()
setpriv --help 2>&1 | grep -q pdeathsig && PDEATH=(setpriv --pdeathsig KILL --)

boot_once() {
    rm -f "$RUNDIR/rc" "$RUNDIR/started" "$RUNDIR/out" "$RUNDIR/err" "$RUNDIR/qemu.pid"
    [ "$ETVM_VERBOSE" = 1 ] || rm -f "$RUNDIR/console.log"
    "${PDEATH[@]}" timeout -k 5 "$ETVM_TIMEOUT" "${PDEATH[@]}" \
        qemu-system-x86_64 "${ACCEL_ARGS[@]}" -m "$ETVM_MEM" -smp "$ETVM_CPUS" \
        -nodefaults -no-user-config -display none -no-reboot \
        -chardev "file,id=con,path=$CONP,append=on" -serial chardev:con \
        -device virtio-serial-pci \
        -chardev "file,id=out,path=$OUTP,append=on" -device virtserialport,chardev=out,name=etvm.out \
        -chardev "file,id=err,path=$ERRP,append=on" -device virtserialport,chardev=err,name=etvm.err \
        -fsdev "local,id=fsrun,path=$RUNDIR,security_model=none" \
        -device virtio-9p-pci,fsdev=fsrun,mount_tag=etvmrun \
        -fsdev "local,id=fsroot,path=/,security_model=none,readonly=on,multidevs=remap" \
        -device virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot \
        -kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND" \
        -pidfile "$RUNDIR/qemu.pid" </dev/null &
    QPID=$!
    set +e
    wait "$QPID"
    QRC=$?
    set -e
    QPID=""
}

T0=$(date +%s.%N)
attempt=0
while :; do
    boot_once
    [ -s "$RUNDIR/rc" ] && [ "$(cat "$RUNDIR/rc")" != 125 ] && break
    # Once COMMAND started, a retry could repeat its side effects: never retry then.
    [ -e "$RUNDIR/started" ] && break
    { [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; } && break
    [ "$attempt" -ge "$ETVM_RETRIES" ] && break
    attempt=$((attempt + 1))
    echo "$SELF: guest failed before the command started (qemu exit $QRC); retry $attempt/$ETVM_RETRIES" >&2
    [ -f "$RUNDIR/console.log" ] && tail -n 15 "$RUNDIR/console.log" >&2
done
T1=$(date +%s.%N)
[ -f "$RUNDIR/out" ] && cat "$RUNDIR/out"
[ -f "$RUNDIR/err" ] && cat "$RUNDIR/err" >&2

ELAPSED=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.1f", b - a }')
console_tail() { [ -f "$RUNDIR/console.log" ] && tail -n "$1" "$RUNDIR/console.log" >&2 || true; }

if [ -s "$RUNDIR/rc" ]; then
    rc=$(cat "$RUNDIR/rc")
    if [ "$rc" = 125 ] || [ "$QRC" != 0 ]; then
        echo "$SELF: guest console (tail):" >&2
        console_tail 30
    fi
    if [ -f "$RUNDIR/console.log" ] &&
        grep -q -E 'WARNING:|BUG:|Oops|general protection|UBSAN|KASAN' "$RUNDIR/console.log"; then
        echo "$SELF: the guest kernel reported problems:" >&2
        grep -E -A25 'WARNING:|BUG:|Oops|general protection|UBSAN|KASAN' "$RUNDIR/console.log" |
            head -n 60 >&2 || true
        if [ "$ETVM_STRICT" = 1 ] && [ "$rc" = 0 ]; then
            echo "$SELF: ETVM_STRICT=1: failing the run" >&2
            rc=1
        fi
    fi
    echo "$SELF: kernel $KVER ($ACCEL): exit status $rc after ${ELAPSED} s from qemu start to power-off" >&2
    exit "$rc"
fi
if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
    echo "$SELF: the guest did not finish within ${ETVM_TIMEOUT} s; qemu was killed. Console (tail):" >&2
    console_tail 30
    exit 124
fi
echo "$SELF: the guest produced no exit status (qemu exit $QRC). Console (tail):" >&2
console_tail 40
exit 125
