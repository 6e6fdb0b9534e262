#!/bin/bash
# build-initramfs.sh: pack the VM's initramfs.
#
# usage: build-initramfs.sh OUT_DIR
#   env: KROOT, KVER                kernel package root and version (prepare.sh)
#        UMADFS_BIN                 the daemon to test
#        UMADFS_VM_EXTRA_BINS       more host binaries (space separated); each
#                                   lands in /usr/local/bin with its libraries
#        UMADFS_VM_CHECKS           check scripts (space separated files or
#                                   directories of *.sh); default tests/vm/checks
#        UMADFS_VM_UMADFS_OPTS      extra umadfs arguments inside the VM
#        UMADFS_VM_GUEST_TIMEOUT    guest-side watchdog, seconds (default 150)
#        UMADFS_VM_CHECK_TIMEOUT    limit on one check script, seconds (default 60)
#
# The initrd is two concatenated gzip'd cpio archives (the kernel unpacks
# both): a cached "base" (busybox, kernel modules, host tools and their
# libraries, the verbs provider), rebuilt only when its inputs change, and a
# small per-run part (umadfs, extra binaries, /init, the check library, the
# checks, the config).  Writes OUT_DIR/initrd.img.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)   # tests/vm
OUT=${1:?usage: build-initramfs.sh OUT_DIR}
: "${KROOT:?}" "${KVER:?}" "${UMADFS_BIN:?}"
KMOD=$KROOT/lib/modules/$KVER
CACHE=${UMADFS_VM_CACHE:-/var/cache/umadfs-vm}
mkdir -p "$OUT"
log() { echo "initramfs: $*" >&2; }
die() { echo "initramfs: error: $*" >&2; exit 1; }

# Modules wanted (dependencies are added).  crc32_generic: rdma_rxe asks the
# crypto layer for "crc32" and there is no modprobe in the image to find it.
MODULES="dummy fuse crc32_generic ib_core ib_uverbs ib_umad rdma_rxe"
# Host tools in every image (rdma: iproute2's, creates the rxe link).
TOOLS="ibstat ibv_devinfo ibv_devices rdma"
# The simulated fabric (checks/70-clock.sh): ibsim into /usr/local/bin,
# umad2sim's preload library at its own path.
UMAD2SIM=$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -n1) || true

# copy_elf FILE ROOT DEST_DIR: FILE into ROOT/DEST_DIR, plus every shared
# library ldd names (and the loader) at the same absolute path under ROOT.
copy_elf() {
	local f=$1 root=$2 dest=$3 l
	mkdir -p "$root$dest"
	cp -L "$f" "$root$dest/"
	{ ldd "$f" 2>/dev/null || true; } | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' |
	while read -r l; do
		[ -e "$root$l" ] && continue
		mkdir -p "$root$(dirname "$l")"
		cp -L "$l" "$root$l"
	done
}

pack() {   # pack DIR FILE
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
		gzip -1 > "$2.$$.tmp"
	mv "$2.$$.tmp" "$2"
}

# ---- base image (cached) ---------------------------------------------------------
tool_paths=()
for t in $TOOLS; do
	p=$(PATH=$PATH:/usr/sbin:/sbin command -v "$t") || die "host tool $t missing (prepare.sh installs it)"
	tool_paths+=("$(readlink -f "$p")")
done
PROV=$(ls /usr/lib/*/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n1) ||
	true
[ -n "$PROV" ] || die "no librxe-rdmav*.so (package ibverbs-providers)"
[ -n "$UMAD2SIM" ] || die "no libumad2sim.so (package libumad2sim0)"
IBSIM=$(command -v ibsim) || die "no ibsim (package ibsim-utils)"
BUSYBOX=$(readlink -f "$(command -v busybox)")

# The key covers everything the base holds: change a tool, the kernel or this
# script, and the base is rebuilt.
key=$( {
	echo "$KVER $MODULES"
	for f in "${tool_paths[@]}" "$PROV" "$UMAD2SIM" "$IBSIM" "$BUSYBOX" \
		/etc/libibverbs.d/rxe.driver "${BASH_SOURCE[0]}" "$HERE/lib/prepare.sh"; do
		stat -c '%n %s %Y' "$(readlink -f "$f")"
	done
} | sha1sum | cut -c1-16)
BASE=$CACHE/base-$key.cpio.gz

if [ ! -s "$BASE" ]; then
	log "building base image $BASE"
	B=$(mktemp -d /tmp/vm-base.XXXXXX)
	trap 'rm -rf "$B"' EXIT
	mkdir -p "$B"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,run,mnt,etc,lib/modules,etc/libibverbs.d}
	cp "$BUSYBOX" "$B/bin/busybox"
	ln -s /proc/self/mounts "$B/etc/mtab"   # libfuse's mount looks at it
	echo "root:x:0:0:root:/:/bin/sh" > "$B/etc/passwd"
	echo "root:x:0:" > "$B/etc/group"

	for p in "${tool_paths[@]}"; do copy_elf "$p" "$B" /usr/local/bin; done
	# verbs provider: dlopen'ed by libibverbs, so ldd of the tools misses it
	copy_elf "$PROV" "$B" "$(dirname "$PROV")"
	cp /etc/libibverbs.d/rxe.driver "$B/etc/libibverbs.d/"
	copy_elf "$IBSIM" "$B" /usr/local/bin
	copy_elf "$UMAD2SIM" "$B" "$(dirname "$UMAD2SIM")"
	# glibc dlopens libgcc_s for pthread_cancel and pthread_exit (the
	# unwinder); ldd never names it
	for l in $(ldconfig -p | awk '$1 == "libgcc_s.so.1" && /x86-64/ { print $NF }'); do
		mkdir -p "$B$(dirname "$l")"; cp -L "$l" "$B$l"
	done

	# kernel modules: dependency closure via modinfo -F depends, in load order
	declare -A MODPATH=() SEEN=()
	while read -r f; do
		n=${f##*/}; n=${n%%.ko*}; MODPATH[${n//-/_}]=$f
	done < <(cd "$KMOD" && find kernel -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst')
	ORDER=()
	resolve() {
		local m=${1//-/_} d
		[ -n "${SEEN[$m]:-}" ] && return 0
		SEEN[$m]=1
		[ -n "${MODPATH[$m]:-}" ] || die "module $m not in $KMOD"
		for d in $(modinfo -F depends "$KMOD/${MODPATH[$m]}" | tr , ' '); do resolve "$d"; done
		ORDER+=("$m")
	}
	for m in $MODULES; do resolve "$m"; done
	for m in "${ORDER[@]}"; do
		src=$KMOD/${MODPATH[$m]}
		case $src in   # busybox insmod takes plain .ko only
		*.ko.xz) xz -dc "$src" > "$B/lib/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$src" > "$B/lib/modules/$m.ko" ;;
		*) cp "$src" "$B/lib/modules/$m.ko" ;;
		esac
		echo "$m" >> "$B/lib/modules/load-order"
	done
	log "modules (load order): ${ORDER[*]}"
	mkdir -p "$CACHE"
	find "$CACHE" -maxdepth 1 -name 'base-*.cpio.gz' -mmin +60 -delete   # stale keys
	pack "$B" "$BASE"
	rm -rf "$B"; trap - EXIT
fi

# ---- per-run part -------------------------------------------------------------
R=$OUT/run-root
rm -rf "$R"
mkdir -p "$R/usr/local/bin" "$R/lib/umadfs-vm" "$R/checks" "$R/etc"
[ -x "$UMADFS_BIN" ] || die "UMADFS_BIN=$UMADFS_BIN is not an executable (build umadfs first)"
copy_elf "$UMADFS_BIN" "$R" /usr/local/bin
# The test tools built beside the daemon (tests/tools) go in by default.
tools=$(dirname "$UMADFS_BIN")/../tests/tools
for t in ud_send rq_probe umad_pong; do
	if [ -x "$tools/$t" ]; then copy_elf "$tools/$t" "$R" /usr/local/bin; fi
done
for b in ${UMADFS_VM_EXTRA_BINS:-}; do
	[ -f "$b" ] || die "UMADFS_VM_EXTRA_BINS: no file $b"
	if [ "$(head -c4 "$b")" = $'\x7fELF' ]; then copy_elf "$b" "$R" /usr/local/bin
	else cp "$b" "$R/usr/local/bin/"; chmod +x "$R/usr/local/bin/$(basename "$b")"; fi
done
# Libraries the base already has are shipped again if a per-run binary needs
# them: harmless (same bytes, the later archive wins).

install -m 0755 "$HERE/guest/init" "$R/init"
install -m 0644 "$HERE/guest/checklib.sh" "$R/lib/umadfs-vm/checklib.sh"
# the simulated fabric's net file, and the ASan suppressions of a daemon
# under umad2sim (checks/70-clock.sh)
install -m 0644 "$HERE/../topologies/two-switch.net" "$R/lib/umadfs-vm/two-switch.net"
install -m 0644 "$HERE/../integration/asan.supp" "$R/lib/umadfs-vm/asan.supp"
n=0
for c in ${UMADFS_VM_CHECKS:-$HERE/checks}; do
	if [ -d "$c" ]; then set -- "$c"/*.sh; else set -- "$c"; fi
	for f in "$@"; do
		[ -f "$f" ] || continue
		install -m 0755 "$f" "$R/checks/$(basename "$f")"
		n=$((n + 1))
	done
done
[ "$n" -gt 0 ] || die "no check scripts (UMADFS_VM_CHECKS=${UMADFS_VM_CHECKS:-})"
{
	printf 'UMADFS_OPTS=%q\n' "${UMADFS_VM_UMADFS_OPTS:-}"
	printf 'GUEST_TIMEOUT=%q\n' "${UMADFS_VM_GUEST_TIMEOUT:-150}"
	printf 'CHECK_TIMEOUT=%q\n' "${UMADFS_VM_CHECK_TIMEOUT:-60}"
} > "$R/etc/umadfs-vm.conf"

pack "$R" "$OUT/run.cpio.gz"
cat "$BASE" "$OUT/run.cpio.gz" > "$OUT/initrd.img"
log "$OUT/initrd.img: $(stat -c %s "$OUT/initrd.img") bytes ($n checks)"
