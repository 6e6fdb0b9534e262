#!/usr/bin/env bash
# Install what is missing, build, run the unit tests and the integration
# tests (simulated fabric).  Idempotent.  Extra arguments go to pytest, e.g.
#   scripts/test.sh -k live -x
# The last line printed is pytest's summary line; the exit status is
# non-zero if the unit tests or the integration tests failed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$UMADFS_REPO"

ensure_packages
ensure_fuse_dev
build_umadfs

unit_rc=0
meson test -C "$UMADFS_BUILD" --print-errorlogs || unit_rc=$?
if ((unit_rc != 0)); then
	log "unit tests FAILED (status $unit_rc); running the integration tests anyway"
fi

it_rc=0
UMADFS_BIN=${UMADFS_BIN:-$UMADFS_BUILD/src/umadfs} \
	/usr/bin/python3 -m pytest -p no:cacheprovider -v tests/integration tests/vm "$@" || it_rc=$?

if ((it_rc != 0)); then
	exit "$it_rc"
fi
exit "$unit_rc"
