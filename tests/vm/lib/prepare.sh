#!/bin/bash
# prepare.sh: make sure the host has what the VM tier needs, and that the
# Debian kernel package is downloaded and extracted into the cache.
#
# Idempotent: installs packages only when a tool is missing (apt-get update
# first, once), downloads the kernel .deb only when the cache lacks it.
#
# Prints, on its last lines, shell assignments for the caller to eval:
#   KVER=6.1.0-NN-amd64
#   KROOT=/var/cache/umadfs-vm/linux-image-6.1.0-NN-amd64
#
# env: UMADFS_VM_CACHE  (default /var/cache/umadfs-vm)
#      UMADFS_VM_KVER   (pin a kernel version; default: the one
#                        linux-image-amd64 depends on, else the newest cached)
set -euo pipefail

CACHE=${UMADFS_VM_CACHE:-/var/cache/umadfs-vm}
log() { echo "prepare: $*" >&2; }
die() { echo "prepare: error: $*" >&2; exit 1; }

# ---- host packages ------------------------------------------------------------
# tool -> Debian package providing it.  busybox must be the static one: it runs
# in the initramfs with no libc beside it.
declare -A NEED=(
	[qemu-system-x86_64]=qemu-system-x86
	[cpio]=cpio
	[modinfo]=kmod
	[ibstat]=infiniband-diags
	[ibv_devinfo]=ibverbs-utils
	[rdma]=iproute2
	[dpkg-deb]=dpkg
	[ibsim]=ibsim-utils
)
missing=()
for tool in "${!NEED[@]}"; do
	PATH=$PATH:/usr/sbin:/sbin command -v "$tool" >/dev/null 2>&1 || missing+=("${NEED[$tool]}")
done
# the static busybox: /bin/busybox from busybox-static (the dynamic 'busybox'
# package would need its libc in the image too)
if ! { [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; }; then
	missing+=(busybox-static)
fi
ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 || missing+=(ibverbs-providers)
# the simulated fabric in the guest (checks/70-clock.sh)
ls /usr/lib/*/umad2sim/libumad2sim.so >/dev/null 2>&1 || missing+=(libumad2sim0)

if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}) and not root to install them"
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# ---- kernel package -----------------------------------------------------------
mkdir -p "$CACHE"
KVER=${UMADFS_VM_KVER:-}
if [ -z "$KVER" ]; then
	# The image package linux-image-amd64 points at, e.g. linux-image-6.1.0-56-amd64.
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1 || true)
	if [ -z "$pkg" ]; then
		# apt lists may be empty (no apt-get update yet): reuse the cache if
		# it has a kernel, else refresh the lists and ask again.
		cached=$(ls -d "$CACHE"/linux-image-*/boot 2>/dev/null | sort -V | tail -n1 || true)
		if [ -n "$cached" ]; then
			pkg=$(basename "$(dirname "$cached")")
		else
			[ "$(id -u)" = 0 ] || die "apt-cache knows no linux-image-amd64; run apt-get update"
			apt-get update -qq >&2
			pkg=$(apt-cache depends linux-image-amd64 |
				sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
		fi
	fi
	[ -n "$pkg" ] || die "cannot tell which kernel linux-image-amd64 names"
	KVER=${pkg#linux-image-}
fi
pkg=linux-image-$KVER
KROOT=$CACHE/$pkg

if [ ! -e "$KROOT/.extracted" ]; then
	deb=$(ls "$CACHE/${pkg}"_*.deb 2>/dev/null | sort -V | tail -n1 || true)
	if [ -z "$deb" ]; then
		log "downloading $pkg into $CACHE"
		(cd "$CACHE" && apt-get download "$pkg" >&2) ||
			{ apt-get update -qq >&2 && (cd "$CACHE" && apt-get download "$pkg" >&2); }
		deb=$(ls "$CACHE/${pkg}"_*.deb | sort -V | tail -n1)
	fi
	log "extracting $(basename "$deb")"
	rm -rf "$KROOT.tmp"
	dpkg-deb -x "$deb" "$KROOT.tmp"
	rm -rf "$KROOT"
	mv "$KROOT.tmp" "$KROOT"
	touch "$KROOT/.extracted"
fi
[ -f "$KROOT/boot/vmlinuz-$KVER" ] || die "no $KROOT/boot/vmlinuz-$KVER"
[ -d "$KROOT/lib/modules/$KVER" ] || die "no $KROOT/lib/modules/$KVER"

echo "KVER=$KVER"
echo "KROOT=$KROOT"
