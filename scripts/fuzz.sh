#!/usr/bin/env bash
# Build the libFuzzer targets and run each for a while.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   # default 60 s, every target
#
# Builds build-fuzz (CC=clang, -Dfuzzers=true, ASan+UBSan; directory
# $UMADFS_FUZZ_BUILD to override), then runs each target
# (tests/fuzz/fuzz_TARGET; all of them unless named) on a fresh copy of its
# seed corpus (tests/fuzz/corpus/TARGET; the seeds themselves are never
# written).  SECONDS is the whole run's fuzzing time, shared by the targets
# run in proportion to their WEIGHT (at least 1 s each): the parsers of
# MADs get the most, the small parsers of settings and options the least.
# Prints one summary line per target; exits non-zero if a target crashed,
# leaked, hung or failed an assertion, and says where the input that did it
# is.  Idempotent.  Installs nothing except, through apt, clang and its
# runtime libraries (libclang-rt-14-dev: libFuzzer, ASan, UBSan) if they are
# missing; the other build dependencies are scripts/test.sh's business.
# Targets, rates and longer campaigns: docs/bad-input.md.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$UMADFS_REPO"

TOTAL_SECONDS=${1:-60}
[[ $TOTAL_SECONDS =~ ^[1-9][0-9]*$ ]] ||
	die "usage: ${0##*/} [SECONDS] [TARGET...] (SECONDS a positive whole number)"
BUILD=${UMADFS_FUZZ_BUILD:-$UMADFS_REPO/build-fuzz}
ALL_TARGETS=(madtext umadframe madformat register number options expected)
# Inputs each target takes: what exercises it at its full rate.  madtext and
# umadframe keep to about one MAD (1 KiB: a send line with mad= of one MAD
# and its keys, a frame of a few RMPP segments); madformat has the big
# frames, a little over the 64 KiB a umad write may hold.  A register line
# stops at 511 bytes, a number at 32 (a settings file's), an -o value is
# short; an expected topology of a few nodes (the seeds: 1-5 KiB) is 8 KiB.
declare -A MAX_LEN=([madtext]=1024 [umadframe]=1024 [madformat]=66000
	[register]=600 [number]=64 [options]=256 [expected]=8192)
# Shares of SECONDS.
declare -A WEIGHT=([madtext]=3 [umadframe]=3 [madformat]=2
	[register]=1 [number]=1 [options]=1 [expected]=1)
if (($# > 1)); then
	TARGETS=("${@:2}")
	for t in "${TARGETS[@]}"; do
		[[ -n ${MAX_LEN[$t]:-} ]] || die "no fuzz target '$t' (targets: ${ALL_TARGETS[*]})"
	done
else
	TARGETS=("${ALL_TARGETS[@]}")
fi
declare -A SECS=()
weights=0
for t in "${TARGETS[@]}"; do
	weights=$((weights + WEIGHT[$t]))
done
for t in "${TARGETS[@]}"; do
	SECS[$t]=$((TOTAL_SECONDS * WEIGHT[$t] / weights))
	((SECS[$t] >= 1)) || SECS[$t]=1
done
# libFuzzer dictionaries (tests/fuzz/NAME.dict), where there is one.
FUZZ_PACKAGES=(clang libclang-rt-14-dev)

# True if clang can build and link a libFuzzer target with ASan and UBSan.
fuzzer_toolchain_ok() {
	local tmp rc=0
	command -v clang >/dev/null || return 1
	tmp=$(mktemp -d)
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n; }' \
		>"$tmp/t.c"
	clang -fsanitize=fuzzer,address,undefined -o "$tmp/t" "$tmp/t.c" \
		>/dev/null 2>&1 || rc=1
	rm -rf "$tmp"
	return $rc
}

ensure_fuzzer_toolchain() {
	fuzzer_toolchain_ok && return 0
	command -v apt-get >/dev/null ||
		die "clang cannot build libFuzzer targets; install clang and its libFuzzer/ASan runtime"
	local sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null ||
			die "clang cannot build libFuzzer targets; as root: apt-get install ${FUZZ_PACKAGES[*]}"
		sudo=(sudo)
	fi
	log "installing: ${FUZZ_PACKAGES[*]}"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${FUZZ_PACKAGES[@]}"
	fuzzer_toolchain_ok || die "clang still cannot link -fsanitize=fuzzer,address,undefined"
}

# Configure build-fuzz with clang (a directory configured with another
# compiler is wiped: meson cannot change it in place), build the targets.
build_fuzzers() {
	local opts=(-Dfuzzers=true "-Db_sanitize=address,undefined" -Db_lundef=false)
	if [[ -f $BUILD/build.ninja ]]; then
		if grep -qE '^ *command = clang(-[0-9]+)? ' "$BUILD/build.ninja"; then
			CC=clang meson setup --reconfigure "${opts[@]}" "$BUILD" >/dev/null ||
				die "meson setup --reconfigure $BUILD failed"
		else
			log "$BUILD was not configured with clang: wiping it"
			CC=clang meson setup --wipe "${opts[@]}" "$BUILD" >/dev/null ||
				die "meson setup --wipe $BUILD failed"
		fi
	else
		CC=clang meson setup "${opts[@]}" "$BUILD" >/dev/null ||
			die "meson setup $BUILD failed (missing build dependencies? run scripts/test.sh once)"
	fi
	local t ninja_targets=()
	for t in "${TARGETS[@]}"; do
		ninja_targets+=("tests/fuzz/fuzz_$t")
	done
	ninja -C "$BUILD" "${ninja_targets[@]}" >"$BUILD/fuzz-build.log" 2>&1 || {
		cat "$BUILD/fuzz-build.log" >&2
		die "building the fuzz targets failed"
	}
}

# run_target NAME: fuzz one target; prints its summary line; returns
# non-zero on a finding.
run_target() {
	local name=$1 exe=$BUILD/tests/fuzz/fuzz_$1
	local work=$BUILD/fuzz-work/$name art=$BUILD/fuzz-artifacts/$name
	local logf=$BUILD/fuzz-work/$name.log rc=0 extra=()
	[[ -f tests/fuzz/$name.dict ]] && extra+=(-dict="tests/fuzz/$name.dict")
	rm -rf "$work"
	mkdir -p "$work" "$art"
	cp tests/fuzz/corpus/"$name"/* "$work"/
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		"$exe" "$work" -max_total_time="${SECS[$name]}" \
		-max_len="${MAX_LEN[$name]}" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art/" "${extra[@]}" \
		>"$logf" 2>&1 || rc=$?
	local execs cov ft corp speed
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logf" | tail -1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logf" | tail -1)
	cov=$(grep -oE '(DONE|pulse|NEW|REDUCE|INITED) +cov: [0-9]+' "$logf" | tail -1 | grep -oE '[0-9]+$' || true)
	ft=$(grep -oE ' ft: [0-9]+' "$logf" | tail -1 | grep -oE '[0-9]+$' || true)
	corp=$(grep -oE ' corp: [0-9]+/[0-9]+[a-zA-Z]*' "$logf" | tail -1 | sed 's/ corp: //' || true)
	if ((rc == 0)); then
		printf '  %-10s ok     %4ss  %10s execs  %7s/s  cov %-5s ft %-6s corpus %s\n' \
			"$name" "${SECS[$name]}" "${execs:-?}" "${speed:-?}" \
			"${cov:-?}" "${ft:-?}" "${corp:-?}"
		return 0
	fi
	printf '  %-10s FAILED (exit %d) after %s execs; log %s\n' "$name" "$rc" "${execs:-?}" "$logf"
	grep -E 'ERROR: |runtime error:|fuzz_[a-z]+: |SUMMARY:' "$logf" | head -5 | sed 's/^/      /'
	grep -E 'Test unit written to' "$logf" | sed 's/^/      /' || true
	return 1
}

ensure_fuzzer_toolchain
build_fuzzers

printf 'fuzz: %s: %ss in all (build %s)\n' "${TARGETS[*]}" "$TOTAL_SECONDS" "$BUILD"
failed=0
for t in "${TARGETS[@]}"; do
	run_target "$t" || failed=$((failed + 1))
done
if ((failed)); then
	printf 'fuzz: %d target(s) FAILED; reproduce with %s/tests/fuzz/fuzz_NAME ARTIFACT\n' \
		"$failed" "$BUILD"
	exit 1
fi
printf 'fuzz: no findings\n'
