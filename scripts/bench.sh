#!/bin/bash
# Benchmark umadfs side by side with direct libibumad and the diags on a
# simulated fabric of its own (tests/bench/README.md):
#
#   scripts/bench.sh            # 1,012-node fabric, 5 repetitions (~2 min)
#   scripts/bench.sh --quick    # 38-node fabric, 1 repetition, 0.5 s a row
#   scripts/bench.sh --reps 9 --seconds 3 --rows 1,2,5
#   scripts/bench.sh --fabric large --reps 3   # fabric/ on 3,984 nodes
#   scripts/bench.sh --fabric huge --reps 3    # 16,266 nodes (~25 min)
#   scripts/bench.sh --growth SMALL.csv LARGE.csv   # how each cost grew
#
# Installs what is missing, builds (optimized, warning-free), then runs
# tests/bench/bench.py with the arguments given: it prints the table and
# the path of the CSV of raw numbers (build/bench/ by default).  Run it on
# an otherwise idle machine: other load moves the absolute numbers (the
# ratios, each measured within one repetition, move less).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ${1:-} == --growth ]]; then
	shift
	exec /usr/bin/python3 "$UMADFS_REPO/tests/bench/growth.py" "$@"
fi

ensure_packages
ensure_fuse_dev
build_umadfs "$UMADFS_BUILD" -Dwerror=true >/dev/null
export UMADFS_BIN=${UMADFS_BIN:-$UMADFS_BUILD/src/umadfs}
export UMADFS_MADBENCH=${UMADFS_MADBENCH:-$UMADFS_BUILD/tests/bench/madbench}
exec /usr/bin/python3 "$UMADFS_REPO/tests/bench/bench.py" --out "$UMADFS_BUILD/bench" "$@"
