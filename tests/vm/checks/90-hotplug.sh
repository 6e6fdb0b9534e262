#!/bin/sh
# hotplug: the CA goes and comes while mounted (runs last: it deletes rxe0
# and adds it back, then adds rxe9 on dummy9).
#
#   hotplug/dir-gone       after `rdma link delete rxe0`, MOUNT/rxe0 is gone
#                          from the mount within 3 s
#   hotplug/reader-eio     a `cat recv` blocked before the delete ends with EIO
#   hotplug/poller-pollerr a poll() of an agents/ channel's recv, waiting
#                          before the delete, returns POLLERR
#   hotplug/umad-close     an open umad closes at once; its read fails with EIO
#   hotplug/rq-released    `rdma link delete` completes although an rq/ queue
#                          existed (the kernel waits for verbs contexts: the
#                          daemon closes the queue's at once)
#   hotplug/readd-*        after `rdma link add rxe0 ...`: the directory is
#                          back, ACTIVE, and a GSI Get written to send is
#                          answered (a fresh engine), and rq/ makes a queue
#   hotplug/new-ca-*       rxe9, added on dummy9 while mounted, appears with
#                          its port and answers a GSI Get too
. /lib/umadfs-vm/checklib.sh

CA=rxe0
P=$UMADFS_MNT/$CA/ports/1
ZERO_GID=0000:0000:0000:0000:0000:0000:0000:0000

key() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# wait_for TENTHS CMD...: runs CMD every 0.1 s until it succeeds; the
# tenths it took, or fails after TENTHS.
wait_for() {
	_t=$1 _i=0
	shift
	while [ $_i -lt "$_t" ]; do
		"$@" && { echo $_i; return 0; }
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
gone() { [ ! -e "$1" ]; }
there() { [ -e "$1" ]; }
active() { rd _st "$1/state"; [ "$_st" = "4: ACTIVE" ]; }
gid_ready() { rd _g "$SYSFS_IB/$1/ports/1/gids/0"; [ -n "$_g" ] && [ "$_g" != $ZERO_GID ]; }

# gsi_get NAME CA TID: a PerfMgt ClassPortInfo Get through CA's send; the
# kernel answers it itself (GetResp, no error= key).
gsi_get() {
	_p=$UMADFS_MNT/$2/ports/1
	rd _gid "$SYSFS_IB/$2/ports/1/gids/0"
	if ! echo "class=perf method=get attr=ClassPortInfo lid=0 qp=1 gid=$_gid gid_index=0 timeout=500 retries=1 tid=$3" >"$_p/send" 2>/tmp/hp-send.err; then
		fail "$1" "send: $(cat /tmp/hp-send.err); last_error: $(cat "$_p/last_error")"
		return
	fi
	_l=$(timeout 10 head -n 1 "$_p/recv" 2>/dev/null)
	if [ "$(key "$_l" method)" = getresp ] && [ "$(key "$_l" tid)" = "$3" ] &&
	   [ -z "$(key "$_l" error)" ]; then
		pass "$1" "status=$(key "$_l" status)"
	else
		fail "$1" "got [$_l]"
	fi
}

[ -d "$P" ] || { fail setup "no $P"; check_exit; }
mkdir "$P/agents/hp"
mkdir "$P/rq/hq" || fail rq-released "mkdir rq/hq failed"
(cat "$P/recv" >/tmp/hp-reader.out 2>/tmp/hp-reader.err; echo $? >/tmp/hp-reader.rc) &
(rq_probe poll "$P/agents/hp/recv" 20000 >/tmp/hp-poll.out 2>&1; echo $? >/tmp/hp-poll.rc) &
exec 3<>"$P/umad"
sleep 0.5

(rdma link delete $CA 2>/tmp/hp-del.err; echo $? >/tmp/hp-del.rc) &
if t=$(wait_for 50 there /tmp/hp-del.rc); then
	[ "$(cat /tmp/hp-del.rc)" = 0 ] && pass rq-released "rdma link delete returned after ${t}00 ms" ||
		fail rq-released "rdma link delete: $(cat /tmp/hp-del.err)"
else
	fail rq-released "rdma link delete still blocked 5 s later (a verbs context left open?)"
fi
if t=$(wait_for 30 gone "$UMADFS_MNT/$CA"); then
	pass dir-gone "after ${t}00 ms; ls: $(ls "$UMADFS_MNT" | tr '\n' ' ')"
else
	fail dir-gone "still there 3 s after the delete: $(ls "$UMADFS_MNT" | tr '\n' ' ')"
fi
if t=$(wait_for 30 there /tmp/hp-reader.rc); then
	case "$(cat /tmp/hp-reader.err)" in
	*"Input/output error"*) pass reader-eio "after ${t}00 ms: $(cat /tmp/hp-reader.err)" ;;
	*) fail reader-eio "rc $(cat /tmp/hp-reader.rc): $(cat /tmp/hp-reader.err)" ;;
	esac
else
	fail reader-eio "still blocked 3 s after the delete"
fi
if t=$(wait_for 30 there /tmp/hp-poll.rc); then
	case "$(cat /tmp/hp-poll.out)" in
	*revents=0x*[89a-f]) pass poller-pollerr "after ${t}00 ms: $(cat /tmp/hp-poll.out)" ;;
	*) fail poller-pollerr "$(cat /tmp/hp-poll.out)" ;;
	esac
else
	fail poller-pollerr "poll still waiting 3 s after the delete"
fi
if timeout 3 dd bs=320 count=1 <&3 >/dev/null 2>/tmp/hp-umad.err; then
	fail umad-close "a read of the open umad succeeded"
else
	case "$(cat /tmp/hp-umad.err)" in
	*"Input/output error"*) exec 3>&- && pass umad-close "read: EIO; closed" ;;
	*) exec 3>&-; fail umad-close "read: $(cat /tmp/hp-umad.err)" ;;
	esac
fi

# ---- the same CA again ----
if rdma link add $CA type rxe netdev dummy0 2>/tmp/hp-add.err; then
	if t=$(wait_for 50 active "$P") && wait_for 50 gid_ready $CA >/dev/null; then
		pass readd-active "MOUNT/$CA/ports/1 ACTIVE after ${t}00 ms"
		gsi_get readd-gsi-get $CA 0x91
		if mkdir "$P/rq/hq2" 2>/tmp/hp-rq.err; then
			rd qpn "$P/rq/hq2/qpn"
			rmdir "$P/rq/hq2" && pass readd-rq "rq/hq2 made (QPN $qpn) and removed" ||
				fail readd-rq "rmdir rq/hq2 failed"
		else
			fail readd-rq "mkdir rq/hq2: $(cat /tmp/hp-rq.err)"
		fi
	else
		fail readd-active "not ACTIVE 5 s after the add: $(ls "$UMADFS_MNT" | tr '\n' ' ')"
	fi
else
	fail readd-active "rdma link add: $(cat /tmp/hp-add.err)"
fi

# ---- a new CA ----
ip link add dummy9 type dummy && ip link set dummy9 up
if rdma link add rxe9 type rxe netdev dummy9 2>/tmp/hp-add9.err; then
	if t=$(wait_for 50 active "$UMADFS_MNT/rxe9/ports/1") &&
	   wait_for 50 gid_ready rxe9 >/dev/null; then
		pass new-ca-appears "MOUNT/rxe9/ports/1 ACTIVE after ${t}00 ms"
		gsi_get new-ca-gsi-get rxe9 0x92
	else
		fail new-ca-appears "no active MOUNT/rxe9 5 s after the add: $(ls "$UMADFS_MNT" | tr '\n' ' ')"
	fi
else
	fail new-ca-appears "rdma link add rxe9: $(cat /tmp/hp-add9.err)"
fi
# Nothing of this check may stay open on the mount: /init unmounts next.
open_files=$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep "$UMADFS_MNT" | tr '\n' ' ')
[ -z "$open_files" ] && pass nothing-open "no fd on the mount" ||
	fail nothing-open "$open_files"
check_exit
