#!/usr/bin/env bash
# Install what is missing, build, run the unit tests and the integration
# tests.  Idempotent.  Extra arguments go to the final pytest run, e.g.
#   scripts/test.sh -k live -x
#
# 1. the C unit tests, in the normal build and in an ASan+UBSan build, and
#    15 s of libFuzzer on each parser (UMADFS_SKIP_FUZZ=1 skips it);
# 2. the simulated-fabric integration tests and the real-kernel VM tier
#    against the ASan+UBSan daemon (UMADFS_SKIP_ASAN=1 skips this pass);
# 3. a subset of them (about 4 minutes) against the normal daemon under
#    valgrind memcheck: any memcheck error or definite leak fails the test
#    (UMADFS_SKIP_VALGRIND=1 skips this pass);
# 4. the integration tests and the real-kernel VM tier (tests/vm;
#    UMADFS_SKIP_VM=1 skips it) against the normal daemon.
# Installs everything the tests need (scripts/lib.sh: opensm, prometheus
# and prometheus-node-exporter with their services disabled and never
# started); with CI=true (.ci/run) a test whose peer is missing fails
# instead of skipping.  Both builds are warning-free (-Dwerror=true).  The
# last line printed is pytest's summary line; the exit status is non-zero
# if anything failed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$UMADFS_REPO"

ensure_packages
ensure_fuse_dev
build_umadfs "$UMADFS_BUILD" -Dwerror=true

rc=0
meson test -C "$UMADFS_BUILD" --print-errorlogs || rc=$?

# libFuzzer on the parsers, briefly: 30 s shared by the targets, as two
# targets of 15 s took before (scripts/fuzz.sh for longer).
if [[ ${UMADFS_SKIP_FUZZ:-0} != 1 ]]; then
	bash scripts/fuzz.sh "${UMADFS_FUZZ_SECONDS:-30}" || rc=$?
fi

if [[ ${UMADFS_SKIP_ASAN:-0} != 1 ]]; then
	asan_build=${UMADFS_ASAN_BUILD:-$UMADFS_REPO/build-asan}
	build_umadfs "$asan_build" -Dwerror=true -Db_sanitize=address,undefined \
		-Db_lundef=false
	# umad2sim is preloaded before the ASan runtime: allow that order.
	export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:suppressions=$UMADFS_REPO/tests/integration/asan.supp"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
	meson test -C "$asan_build" --print-errorlogs || rc=$?
	log "integration tests and the VM tier against the ASan+UBSan daemon"
	UMADFS_BIN=$asan_build/src/umadfs UMADFS_VM_OUT=/tmp/umadfs-vm-asan \
		/usr/bin/python3 -m pytest -p no:cacheprovider -q tests/integration tests/vm || rc=$?
	unset ASAN_OPTIONS UBSAN_OPTIONS
fi

# memcheck: valgrind exits 99 on an error or a definite leak, and the
# harness fails a test whose daemon did not exit 0 or whose log has a
# non-zero ERROR SUMMARY.  The subset leaves out, by their pytest markers
# (tests/integration/conftest.py), the tests that only load (`load`:
# thousands of MADs, or bash's byte-by-byte reads, 10-40 s each under
# valgrind, which outlast their timeouts there), the 13 bad send lines
# (`fuzzed`: the parser is fuzzed), and the tests that run node_exporter
# (`node_exporter`: under valgrind its scrape of fabric/ takes 13-23 s and
# outlasts the test's): about 4 minutes on 2 cores.
VALGRIND_DESELECT="not load and not fuzzed and not node_exporter"
if [[ ${UMADFS_SKIP_VALGRIND:-0} != 1 ]]; then
	log "integration tests (a subset) under valgrind memcheck"
	UMADFS_BIN=${UMADFS_BIN:-$UMADFS_BUILD/src/umadfs} \
	UMADFS_WRAPPER="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --suppressions=$UMADFS_REPO/tests/integration/umad2sim.supp" \
		/usr/bin/python3 -m pytest -p no:cacheprovider -q \
		tests/integration/test_attrs.py tests/integration/test_send_vs_diags.py \
		tests/integration/test_timeouts.py tests/integration/test_umad_file.py \
		tests/integration/test_recv_readers.py tests/integration/test_blocked_reads.py \
		tests/integration/test_madfiles_bad_input.py \
		tests/integration/test_agents.py tests/integration/test_security.py \
		tests/integration/test_fields.py tests/integration/test_fabric.py \
		tests/integration/test_faults.py::test_simulator_drops_daemon \
		tests/integration/test_faults.py::test_simulator_killed \
		tests/integration/test_faults.py::test_simulator_frozen_then_back \
		-m "$VALGRIND_DESELECT" || rc=$?
fi

it_rc=0
UMADFS_BIN=${UMADFS_BIN:-$UMADFS_BUILD/src/umadfs} \
	/usr/bin/python3 -m pytest -p no:cacheprovider -v tests/integration tests/vm "$@" || it_rc=$?

if ((it_rc != 0)); then
	exit "$it_rc"
fi
exit "$rc"
