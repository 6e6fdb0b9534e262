# checklib.sh: shell library for checks run inside the VM (busybox sh).
#
# A check is a script in /checks (tests/vm/checks/*.sh on the host), run as
#   sh /checks/NN-name.sh
# with UMADFS_CHECK=name (the file name less the NN- prefix and .sh),
# UMADFS_MNT=/mnt/umadfs (the mounted daemon) and SYSFS_IB=/sys/class/infiniband.
# It sources this file and reports each result on its own console line:
#
#   UMADFS-VM-RESULT <check>/<name> PASS|FAIL|SKIP <detail>
#
# The host turns the markers into test outcomes; a check that exits non-zero
# or reports FAIL fails its test.

: "${UMADFS_CHECK:=adhoc}" "${UMADFS_MNT:=/mnt/umadfs}" "${SYSFS_IB:=/sys/class/infiniband}"
CHECK_FAILS=0

# Forks are dear under TCG (each costs tens of ms): the helpers below use
# shell builtins where they can.
_NL='
'

# result NAME PASS|FAIL|SKIP [DETAIL...]
result() {
	_n=$1 _s=$2
	shift 2
	[ "$_s" = FAIL ] && CHECK_FAILS=$((CHECK_FAILS + 1))
	_d=$*
	_d=${_d//$_NL/\\n}   # one line, whatever the detail holds
	echo "UMADFS-VM-RESULT $UMADFS_CHECK/$_n $_s $_d"
}
pass() { _n=$1; shift; result "$_n" PASS "$@"; }
fail() { _n=$1; shift; result "$_n" FAIL "$@"; }
skip() { _n=$1; shift; result "$_n" SKIP "$@"; }

# rd VAR FILE: VAR = FILE's first line ('' if none), no fork
rd() {
	eval "$1="
	[ -r "$2" ] && IFS= read -r "$1" <"$2"
	return 0
}

# show FILE: its bytes on one line, newlines as \n, at most 120 bytes
show() {
	head -c 120 "$1" 2>/dev/null |
		awk 'BEGIN { RS = "\001" } { gsub(/\n/, "\\n"); gsub(/\t/, "\\t"); printf "%s", $0 }'
}

# cmp_file NAME A B: PASS when files A and B are equal byte for byte.
cmp_file() {
	if [ ! -e "$2" ]; then
		fail "$1" "missing $2"
	elif [ ! -e "$3" ]; then
		fail "$1" "missing $3"
	elif cmp -s "$2" "$3"; then
		rd _v "$2"
		pass "$1" "$_v"
	else
		fail "$1" "$2=[$(show "$2")] $3=[$(show "$3")]"
	fi
}

# eq NAME GOT WANT [WHAT]: PASS when two strings are equal.
eq() {
	if [ "$2" = "$3" ]; then
		pass "$1" "${4:+$4 }'$2'"
	else
		fail "$1" "${4:+$4 }got '$2' want '$3'"
	fi
}

# cas: the CAs the kernel has, one per line
cas() { ls "$SYSFS_IB" 2>/dev/null; }

# ports CA: the CA's port numbers, one per line
ports() { ls "$SYSFS_IB/$1/ports" 2>/dev/null | sort -n; }

# check_exit: call last; exits 1 if any result failed, else 0
check_exit() { [ "$CHECK_FAILS" -eq 0 ] && exit 0; exit 1; }
