#!/bin/sh
# rq: receive queues (CA/ports/N/rq/NAME) on rxe0 port 1, fed by ud_send
# from a QP of its own on the same port (rxe loops it back).
#
# Results: rq/<step>.  Needs ud_send and rq_probe (tests/tools, through
# UMADFS_VM_EXTRA_BINS); without them every step is one SKIP.
. /lib/umadfs-vm/checklib.sh
. /checks/40-rq-tools.sh

rq_setup || check_exit
Q=$RQ/q1

# ---- mkdir and the address files -------------------------------------------
if mkdir $Q 2>/tmp/err; then pass mkdir "$(ls $Q | tr '\n' ' ')"
else fail mkdir "$(cat /tmp/err)"; check_exit; fi
rd qpn $Q/qpn; rd qkey $Q/qkey; rd gid $Q/gid; rd lid $Q/lid
rd depth $Q/depth; rd msg_size $Q/msg_size
case $qpn in ''|*[!0-9]*) fail qpn "'$qpn' is not a number" ;; *) pass qpn "$qpn" ;; esac
eq qkey "$qkey" 0x11111111
rd g0 $SYSFS_IB/$CA/ports/$P/gids/0
eq gid "$gid" "$g0" "= sysfs gids/0"
rd l0 $SYSFS_IB/$CA/ports/$P/lid
eq lid "$lid" "$l0" "= sysfs lid"
eq depth "$depth" 256 "default"
mtu=$(ibv_devinfo -d $CA -i $P | awk '/active_mtu/ { print $2 }')
eq msg_size "$msg_size" $((mtu + 40)) "active_mtu $mtu + 40"
stat_eq stats-initial $Q "posted 256 completed 0 errors 0 queued 0 dropped 0 read 0"
mkdir $Q 2>/tmp/err; case $(cat /tmp/err) in *xists*) pass mkdir-again "$(cat /tmp/err)" ;;
	*) fail mkdir-again "mkdir of an existing queue: '$(cat /tmp/err)'" ;; esac
mkdir "$RQ/bad name" 2>/tmp/err; case $(cat /tmp/err) in *nvalid*) pass mkdir-bad-name "$(cat /tmp/err)" ;;
	*) fail mkdir-bad-name "mkdir of 'bad name': '$(cat /tmp/err)'" ;; esac

# ---- datagrams waiting before recv is opened, read with head ----------------
send -s 0,1,100,$mtu -n 4
head -n 4 $Q/recv >/tmp/r1
verify datagrams /tmp/r1 "0,1,100,$mtu" 4 -
send -s 7,300 -n 4 -i 0x1234 -I
head -n 4 $Q/recv >/tmp/r2
verify datagrams-imm /tmp/r2 "7,300" 4 0x1234
grep -q ' sgid=' /tmp/r2 && pass grh "$(head -c 200 /tmp/r2 | cut -d' ' -f5-9)" ||
	fail grh "no GRH fields: $(head -c 200 /tmp/r2)"
stat_eq stats-after $Q "posted 256 completed 8 errors 0 queued 0 dropped 0 read 8"

# ---- poll, epoll, O_NONBLOCK, interrupt --------------------------------------
out=$(rq_probe nbread $Q/recv); eq nonblock-empty "$out" "errno=EAGAIN"
out=$(rq_probe poll $Q/recv 300); eq poll-empty "${out%% *}" timeout "$out"
out=$(rq_probe intr $Q/recv 300); eq read-interrupted "${out%% *}" errno=EINTR "$out"
( sleep 1; send -s 5 -n 1 ) &
out=$(rq_probe poll $Q/recv 10000); eq poll-ready "${out%% *}" ready "$out"
wait
out=$(rq_probe epoll $Q/recv 1000); eq epoll-ready "${out%% *}" ready "$out"
out=$(rq_probe nbread $Q/recv); eq nonblock-read "${out%%=*}" read "$out"
out=$(rq_probe poll $Q/recv 200); eq poll-drained "${out%% *}" timeout "$out"

# ---- recv_bin ---------------------------------------------------------------
send -s 33 -n 1 -i 0xabcdef01
out=$(rq_probe bin $Q/recv_bin 100); eq bin-too-small "$out" "errno=EINVAL"
out=$(rq_probe bin $Q/recv_bin)
want_data=$(awk 'BEGIN { for (j = 0; j < 33; j++) printf "%02x", j % 256 }')
case $out in
"read=113 hdr_len=80 flags=0x3 len=33 status=0 src_qp=$SRC_QP imm=0xabcdef01 "*"seq=10 data=$want_data")
	pass bin "$out" ;;
*)	fail bin "got '$out' want read=113 hdr_len=80 flags=0x3 len=33 status=0 src_qp=$SRC_QP imm=0xabcdef01 ... seq=10 data=$want_data" ;;
esac

# ---- rmdir ------------------------------------------------------------------
exec 3<$Q/recv
if rmdir $Q 2>/tmp/err; then fail rmdir-busy "rmdir succeeded with recv open"
else case $(cat /tmp/err) in *usy*) pass rmdir-busy "$(cat /tmp/err)" ;;
	*) fail rmdir-busy "$(cat /tmp/err)" ;; esac; fi
exec 3<&-
if rmdir $Q 2>/tmp/err; then pass rmdir "$(cat /tmp/err)"
else fail rmdir "$(cat /tmp/err)"; fi
eq rmdir-gone "$(ls $RQ | tr '\n' ' ')" "" "ls rq/"
[ -e $Q/qpn ] && fail rmdir-files "$Q/qpn still there" || pass rmdir-files "$Q/qpn gone"
mkdir $Q && rd qpn2 $Q/qpn && rmdir $Q && pass mkdir-after-rmdir "new QPN $qpn2" ||
	fail mkdir-after-rmdir "mkdir/rmdir again failed"
check_exit
