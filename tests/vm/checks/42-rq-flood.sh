#!/bin/sh
# rq-flood: 10,000 datagrams at a rate the queue keeps up with, a poll()
# loop reading concurrently: every one arrives, once, in order, intact.
. /lib/umadfs-vm/checklib.sh
. /checks/40-rq-tools.sh

N=${RQ_FLOOD_N:-10000} RATE=${RQ_FLOOD_RATE:-2000}
rq_setup || check_exit
Q=$RQ/flood
mkdir $Q || { fail mkdir "mkdir $Q"; check_exit; }
echo 1024 >$Q/depth
rq_probe lines $Q/recv $N 45 >/tmp/flood 2>/tmp/flood.err &
reader=$!
read -r t0 _ </proc/uptime
send -s 24 -n $N -r $RATE
read -r t1 _ </proc/uptime
wait $reader
rc=$?
read -r t2 _ </proc/uptime
eq flood-reader "$rc" 0 "$(cat /tmp/flood.err) send $(tail -n 1 /tmp/send.out)"
verify flood /tmp/flood 24 $N -
stat_eq flood-stats $Q "completed $N errors 0 queued 0 dropped 0 read $N"
pass flood-time "$N datagrams at $RATE/s: sent in $(awk "BEGIN { print $t1 - $t0 }") s, all read after $(awk "BEGIN { print $t2 - $t0 }") s"
rmdir $Q || fail rmdir "rmdir $Q"
check_exit
