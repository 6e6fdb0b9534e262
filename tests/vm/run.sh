#!/bin/bash
# run.sh: the real-kernel test tier by hand.
#
#   tests/vm/run.sh [OUT_DIR]        (default OUT_DIR: /tmp/umadfs-vm)
#
# Installs what is missing, builds the initramfs, boots the Debian kernel in
# qemu (TCG) with Soft-RoCE, runs tests/vm/checks/*.sh inside, and prints the
# results and the console log's path.  Files in OUT_DIR: console.log (the raw
# serial console), results.txt (the UMADFS-VM-RESULT lines), times.txt.
#
# Exit status: 0 all results PASS/SKIP, 1 a FAIL or a missing marker,
#              2 harness error (setup or build), 3 qemu cannot run here.
#
# env: UMADFS_BIN               daemon (default <repo>/build/src/umadfs)
#      UMADFS_VM_CACHE          kernel + base image cache (/var/cache/umadfs-vm)
#      UMADFS_VM_EXTRA_BINS     more binaries for /usr/local/bin in the VM
#      UMADFS_VM_CHECKS         check scripts / dirs (default tests/vm/checks)
#      UMADFS_VM_UMADFS_OPTS    extra umadfs arguments in the VM (e.g. "-o attrs=sysfs")
#      UMADFS_VM_TIMEOUT        host-side hard limit on qemu, s (default 180)
#      UMADFS_VM_ACCEL          tcg (default) or kvm (opt-in: /dev/kvm here is
#                               an emulation under which the guest crawls)
#      UMADFS_VM_KVER           kernel version to use (default: linux-image-amd64's)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${1:-/tmp/umadfs-vm}
export UMADFS_BIN=${UMADFS_BIN:-$REPO/build/src/umadfs}
TIMEOUT=${UMADFS_VM_TIMEOUT:-180}
ACCEL=${UMADFS_VM_ACCEL:-tcg}
mkdir -p "$OUT"
LOG=$OUT/console.log
rm -f "$LOG" "$OUT/results.txt" "$OUT/times.txt"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(now)

# ---- 1. host packages + kernel -----------------------------------------------------
if ! env=$("$HERE/lib/prepare.sh"); then
	echo "run.sh: prepare failed" >&2
	command -v qemu-system-x86_64 >/dev/null || { echo "run.sh: no qemu-system-x86_64" >&2; exit 3; }
	exit 2
fi
eval "$(echo "$env" | grep -E '^(KVER|KROOT)=')"
export KVER KROOT
if ! qemu-system-x86_64 -version >/dev/null 2>&1; then
	echo "run.sh: qemu-system-x86_64 does not run here" >&2
	exit 3
fi
t1=$(now)

# ---- 2. initramfs -------------------------------------------------------------------
"$HERE/lib/build-initramfs.sh" "$OUT" || { echo "run.sh: initramfs build failed" >&2; exit 2; }
t2=$(now)

# ---- 3. boot ------------------------------------------------------------------------
if [ "$ACCEL" = kvm ]; then acc=(-accel kvm -cpu host); else acc=(-accel tcg -cpu qemu64); fi
echo "run.sh: booting $KVER (accel=$ACCEL, limit ${TIMEOUT}s); console: $LOG" >&2
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 "${acc[@]}" -smp 2 -m 512 \
	-nodefaults -display none -serial stdio -no-reboot -nic none \
	-kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$OUT/initrd.img" \
	-append "console=ttyS0 quiet loglevel=3 panic=-1" \
	</dev/null >"$LOG" 2>&1
qrc=$?
t3=$(now)
[ $qrc = 124 ] || [ $qrc = 137 ] && echo "run.sh: qemu killed after ${TIMEOUT}s" >&2
[ $qrc != 0 ] && [ $qrc != 124 ] && [ $qrc != 137 ] && echo "run.sh: qemu exit status $qrc" >&2

# ---- 4. results -----------------------------------------------------------------------
tr -d '\r' <"$LOG" | grep -o 'UMADFS-VM-RESULT .*' >"$OUT/results.txt"
printf 'prepare %s\ninitramfs %s\nboot+checks %s\ntotal %s\n' \
	"$(secs $t0 $t1)" "$(secs $t1 $t2)" "$(secs $t2 $t3)" "$(secs $t0 $t3)" >"$OUT/times.txt"

sed 's/^UMADFS-VM-RESULT //' "$OUT/results.txt" | awk '{ printf "%-4s %s\n", $2, $1 }' | sort -k1,1 -s
npass=$(grep -c ' PASS' "$OUT/results.txt")
nfail=$(grep -c ' FAIL' "$OUT/results.txt")
nskip=$(grep -c ' SKIP' "$OUT/results.txt")
grep ' FAIL' "$OUT/results.txt" | sed 's/^UMADFS-VM-RESULT /FAIL: /' >&2
done=yes
grep -q 'UMADFS-VM-DONE' "$LOG" || { done=no; echo "run.sh: the guest never reached the end of /init; console tail:" >&2; tail -n 30 "$LOG" >&2; }
echo "times (s): $(tr '\n' ' ' <"$OUT/times.txt")"
echo "console log: $LOG"
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" = 0 ] && [ "$done" = yes ] && [ "$npass" -gt 0 ]
