#!/bin/sh
# rq-limits: depth, msg_size and qkey of a receive queue.
#
# depth: a shrink lets posted buffers retire as they come back; a datagram
# that lands while depth are queued is dropped by the daemon and counted.
# msg_size: settable until first use; a datagram larger than a buffer is an
# error completion (a line with error=), never a truncated datagram.
# qkey: datagrams with another Q_Key never arrive.
. /lib/umadfs-vm/checklib.sh
. /checks/40-rq-tools.sh

rq_setup || check_exit

# ---- depth ------------------------------------------------------------------
Q=$RQ/d1
mkdir $Q || { fail mkdir "mkdir $Q"; check_exit; }
echo 4 >$Q/depth; rd v $Q/depth; eq depth-set "$v" 4
send -s 16 -n 10
wait_stat $Q completed 10 || fail depth-sent "stats: $(tr '\n' ' ' <$Q/stats)"
stat_eq depth-shrunk $Q "posted 246 completed 10 queued 4 dropped 6 read 0"
rq_probe lines $Q/recv 10 1 >/tmp/d1 2>/dev/null
eq depth-read "$(wc -l </tmp/d1 | tr -d ' ')" 4 "lines read"
verify depth-first4 /tmp/d1 16 4 -
stat_eq depth-after-read $Q "posted 246 queued 0 dropped 6 read 4"
echo 300 >$Q/depth
stat_eq depth-grown $Q "posted 300 queued 0"
for bad in 0 5000 -1 abc; do
	if echo $bad >$Q/depth 2>/dev/null; then fail "depth-$bad" "accepted"
	else pass "depth-$bad" "refused"; fi
done
rmdir $Q || fail rmdir "rmdir $Q"

# ---- msg_size ---------------------------------------------------------------
Q=$RQ/m1
mkdir $Q || { fail mkdir "mkdir $Q"; check_exit; }
if echo 140 >$Q/msg_size 2>/tmp/err; then rd v $Q/msg_size; eq msg_size-set "$v" 140
else fail msg_size-set "$(cat /tmp/err)"; fi
rd qpn $Q/qpn
stat_eq msg_size-reposted $Q "posted 256 completed 0"
send -s 100 -n 1
send -s 101 -n 1
# rxe takes the QP to the error state with the error completion: the
# daemon resets it (same QPN); until then datagrams are the sender's loss
if wait_stat $Q resets 1 30; then pass msg_size-reset "$(tr '\n' ' ' <$Q/stats)"
elif wait_stat $Q errors 1 1; then pass msg_size-reset "no reset needed: $(tr '\n' ' ' <$Q/stats)"
else fail msg_size-reset "$(tr '\n' ' ' <$Q/stats)"; fi
send -s 7 -n 1
head -n 3 $Q/recv >/tmp/m1
l1=$(sed -n 1p /tmp/m1) l2=$(sed -n 2p /tmp/m1) l3=$(sed -n 3p /tmp/m1)
case $l1 in *" len=100 data="*) pass msg_size-fits "${l1%% data=*}" ;;
	*) fail msg_size-fits "'$l1'" ;; esac
case $l2 in *"error="*) pass msg_size-too-large "$l2" ;;
	*) fail msg_size-too-large "'$l2'" ;; esac
case $l3 in *" len=7 data=00010203040506") pass msg_size-next "${l3%% data=*}" ;;
	*) fail msg_size-next "'$l3'" ;; esac
stat_eq msg_size-stats $Q "completed 3 errors 1 read 3"
if echo 200 >$Q/msg_size 2>/tmp/err; then fail msg_size-busy "accepted after first use"
else case $(cat /tmp/err) in *usy*) pass msg_size-busy "$(cat /tmp/err)" ;;
	*) fail msg_size-busy "$(cat /tmp/err)" ;; esac; fi
rmdir $Q || fail rmdir "rmdir $Q"

# ---- qkey -------------------------------------------------------------------
Q=$RQ/k1
mkdir $Q || { fail mkdir "mkdir $Q"; check_exit; }
echo 0x2345 >$Q/qkey; rd v $Q/qkey; eq qkey-set "$v" 0x00002345
echo 4660 >$Q/qkey; rd v $Q/qkey; eq qkey-decimal "$v" 0x00001234
send -s 8 -n 1 -k 0x11111111
send -s 9 -n 1 -k 0x1234
head -n 1 $Q/recv >/tmp/k1
case $(cat /tmp/k1) in *" len=9 "*) pass qkey-filter "$(cut -c1-60 /tmp/k1)" ;;
	*) fail qkey-filter "'$(cat /tmp/k1)'" ;; esac
stat_eq qkey-stats $Q "completed 1 queued 0"
rmdir $Q || fail rmdir "rmdir $Q"
check_exit
