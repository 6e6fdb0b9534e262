#!/bin/sh
# rq-tools: the receive-queue checks' tools and helpers.
#
# Run as a check: ud_send and rq_probe (tests/tools, shipped through
# UMADFS_VM_EXTRA_BINS) are in the image and the port has its rq/
# directory.  Sourced by the other 4N-rq-*.sh checks: the helpers below.
# shellcheck disable=SC2034
CA=rxe0 P=1
RQ=$UMADFS_MNT/$CA/ports/$P/rq

# rq_setup: true when the tools and rq/ are there; else one SKIP or FAIL.
rq_setup() {
	for t in ud_send rq_probe; do
		command -v $t >/dev/null || {
			skip tools "no $t in the image (build tests/tools, set UMADFS_VM_EXTRA_BINS)"
			return 1; }
	done
	[ -d "$RQ" ] || { fail rq-dir "no $RQ: $(ls $UMADFS_MNT/$CA/ports/$P | tr '\n' ' ')"; return 1; }
	return 0
}

# send [ud_send options]: to $Q (its qpn and gid); SRC_QP = the sender's QPN
send() {
	rd _qpn $Q/qpn
	rd _gid $Q/gid
	ud_send -d $CA -p $P -q "$_qpn" -g "$_gid" "$@" >/tmp/send.out 2>&1 ||
		fail send "ud_send $*: $(tr '\n' ' ' </tmp/send.out)"
	read -r _l </tmp/send.out
	SRC_QP=${_l#qpn=}
}

# stat_eq NAME DIR "k v k v ...": the queue's stats have these values
stat_eq() {
	_got=$(tr '\n' ' ' <"$2/stats")
	_bad=
	set -- "$1" "$2" $3
	_n=$1 _d=$2
	shift 2
	while [ $# -ge 2 ]; do
		case " $_got" in *" $1 $2 "*) ;; *) _bad="$_bad $1!=$2" ;; esac
		shift 2
	done
	if [ -z "$_bad" ]; then pass "$_n" "$_got"; else fail "$_n" "$_bad; stats: $_got"; fi
}

# wait_stat DIR KEY VALUE [TENTHS]: until the stats line "KEY VALUE" shows
wait_stat() {
	_i=0
	while [ $_i -lt "${4:-50}" ]; do
		grep -qx "$2 $3" "$1/stats" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# verify NAME FILE SIZES COUNT IMM: FILE holds COUNT lines from one ud_send
# run with -P inc (byte j of datagram m is (m + j) & 0xff), payload sizes
# SIZES in turn, from SRC_QP; IMM "-" (none) or the base of -I.
verify() {
	_imm=$5
	[ "$_imm" = - ] || _imm=$((_imm))
	_r=$(awk -v sq="$SRC_QP" -v sizes="$3" -v n="$4" -v imm="$_imm" '
	BEGIN { ns = split(sizes, S, ","); m = 0; bad = "" }
	{
		for (k in F) delete F[k]
		for (i = 1; i <= NF; i++) {
			e = index($i, "=")
			if (e) F[substr($i, 1, e - 1)] = substr($i, e + 1)
		}
		len = S[m % ns + 1]
		# the payload depends on m mod 256 and len only: made once each
		key = (m % 256) "," len
		if (!(key in W)) {
			w = ""
			for (j = 0; j < len; j++) w = w sprintf("%02x", (m + j) % 256)
			W[key] = w
		}
		want = W[key]
		if (F["src_qp"] != sq) bad = bad " #" m ":src_qp=" F["src_qp"]
		if (F["len"] != len) bad = bad " #" m ":len=" F["len"] "!=" len
		if (F["data"] != want) bad = bad " #" m ":data"
		if (imm == "-" && ("imm" in F)) bad = bad " #" m ":imm=" F["imm"]
		if (imm != "-" && F["imm"] != sprintf("0x%08x", imm + m))
			bad = bad " #" m ":imm=" F["imm"]
		m++
	}
	END {
		if (m != n) bad = bad " " m " lines, want " n
		if (bad == "") print "ok"; else print substr(bad, 1, 300)
	}' "$2")
	if [ "$_r" = ok ]; then pass "$1" "$4 datagrams, sizes $3, imm $5, from QP $SRC_QP"
	else fail "$1" "$_r; first: $(head -c 150 "$2")"; fi
}

if [ "$UMADFS_CHECK" = rq-tools ]; then
	. /lib/umadfs-vm/checklib.sh
	if rq_setup; then
		pass tools "$(command -v ud_send) $(command -v rq_probe)"
		pass rq-dir "$RQ"
	fi
	check_exit
fi
