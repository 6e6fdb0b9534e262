#!/usr/bin/env bash
# Build the Debian package of umadfs (Debian 12) and check it with lintian.
#
#   packaging/build-deb.sh           from the working tree (what git would
#                                    commit: tracked and untracked files,
#                                    not ignored ones such as build/)
#   packaging/build-deb.sh --head    from the last commit (git archive HEAD)
#
# The source is copied to a temporary directory, packaging/debian becomes
# debian/ (and packaging/umadfs.default debian/umadfs.default, installed as
# /etc/default/umadfs), and `dpkg-buildpackage -us -uc -b` builds it
# without running the tests (nocheck).  The .deb, .buildinfo and .changes
# go to $UMADFS_DEB_OUT (default build/deb); lintian must report no error
# (its warnings are printed).  The last line of output is the .deb's path.
# Installs what it needs with apt-get (as root).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${UMADFS_DEB_OUT:-$REPO/build/deb}
FROM=worktree
case ${1:-} in
--head) FROM=head ;;
"") ;;
-h | --help)
	sed -n '2,15p' "$0"
	exit 0
	;;
*)
	echo "usage: $0 [--head]" >&2
	exit 2
	;;
esac

log() { printf 'build-deb: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# What dpkg-buildpackage and lintian need, and the Build-Depends.
NEEDED=(build-essential debhelper dpkg-dev fakeroot lintian git
	meson ninja-build pkg-config libfuse3-dev libibumad-dev libibverbs-dev
	libibmad-dev libsystemd-dev libudev-dev systemd)
missing=()
for p in "${NEEDED[@]}"; do
	[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	((EUID == 0)) || die "missing packages (run as root to install them): ${missing[*]}"
	log "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$REPO/meson.build" | head -n1)
debversion=$(dpkg-parsechangelog -l "$REPO/packaging/debian/changelog" -S Version)
[[ $debversion == "$version" ]] ||
	log "warning: packaging/debian/changelog says $debversion, meson.build $version"

tmp=$(mktemp -d /tmp/umadfs-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/umadfs-$debversion
mkdir "$src"
if [[ $FROM == head ]]; then
	git -C "$REPO" archive --format=tar HEAD | tar -x -C "$src"
else
	# Tracked and untracked files, minus ignored ones and deleted ones.
	(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[[ -e $f || -L $f ]] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -x -C "$src"
fi
[[ -d $src/packaging/debian ]] || die "no packaging/debian in the source copy"
rm -rf "$src/debian"
cp -a "$src/packaging/debian" "$src/debian"
cp "$src/packaging/umadfs.default" "$src/debian/umadfs.default"

log "building in $src (from the $FROM)"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 || {
	tail -n 40 "$tmp/build.log" >&2
	die "dpkg-buildpackage failed"
}

mkdir -p "$OUT"
arch=$(dpkg --print-architecture)
deb=$OUT/umadfs_${debversion}_$arch.deb
cp "$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes "$OUT"/
cp "$tmp/build.log" "$OUT/build.log"
[[ -f $deb ]] || die "no $deb after the build"

log "lintian $deb"
set +e
lintian --fail-on error --display-info "$deb" >"$OUT/lintian.log" 2>&1
lrc=$?
set -e
if [[ -s $OUT/lintian.log ]]; then
	sed 's/^/  /' "$OUT/lintian.log" >&2
else
	log "lintian: no tags"
fi
((lrc == 0)) || die "lintian reports errors (see $OUT/lintian.log)"
echo "$deb"
