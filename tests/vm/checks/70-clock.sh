#!/bin/sh
# clock: a step of the wall clock (`date -s`) neither ends the daemon's
# timed waits early nor puts them off (issue 28: every wait is on
# CLOCK_MONOTONIC, src/base/clock.c).  Only a real clock step tests this:
# libfaketime converts a wait's deadline when the wait starts, so a step
# of its clock during a wait changes nothing there.
#
# It runs the simulated fabric inside the guest: ibsim on two-switch.net and
# a second umadfs on it under umad2sim at /mnt/umadfs-sim (SIM_HOST=Hca1,
# -o fabric_port=ibsim0:1: with no SM no port is ACTIVE; no opensm, whose
# own timers would step too).  The rxe mount lives through the steps.
#
#   clock/sim-mount      ibsim runs and the second mount appears
#   clock/read-blocked   with ibsim stopped (SIGSTOP), a first read of
#                        fabric/links (its open waits for the first sweep,
#                        60 s at most, which waits for answers, 5.6 s at
#                        most) is still blocked 0.5 s after the clock
#                        jumped 2 hours forward: neither wait ended early
#   clock/read-returns   once ibsim goes on (SIGCONT) the read returns the
#                        5 links, status 0, within 10 s (no hang)
#   clock/first-sweep    that sweep: ok 1, timeouts 0, 5 nodes, 5 links
#   clock/timed-sweeps   after a sweep asked by a write of fabric/sweep,
#                        interval_ms is set to 1000 and the clock jumps 2
#                        hours back: a timed sweep (ok 1, timeouts 0)
#                        completes within 3 s (none would for 2 hours if
#                        the sweep thread's wait were on CLOCK_REALTIME);
#                        clock/sweep-write FAILs if that write fails
#   clock/sim-unmount    after umount the daemon exits 0 by itself within
#                        5 s, and its log has no error:, sanitizer or
#                        runtime error: line
#
# The stop of ibsim must stay well under 1.6 s, when the engine ends the
# sweep's unanswered NodeInfo itself (200 ms x 3 tries + 1 s of grace,
# CLOCK_MONOTONIC); it takes about 0.7 s, and read-returns says how long.
# umad2sim emulates poll() with a CLOCK_REALTIME wait of its own
# (gettimeofday + pthread_cond_timedwait): after the backward step the
# daemon's receiver sleeps there until a MAD comes, which the timed sweeps
# bring.  A daemon whose timed sweeps stop after the step also hangs at
# unmount (sim-unmount), in umad2sim.
. /lib/umadfs-vm/checklib.sh

STEP=7200                           # seconds: far beyond any wait's span
W=/tmp/clock                        # ibsim's console, umad2sim's ./sys-PID, logs
M=/mnt/umadfs-sim
F=$M/fabric
NET=/lib/umadfs-vm/two-switch.net
SOCK=umadfs-vm-clock
LIB=$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -n 1)
mkdir -p $W $M

# ms VAR: the guest's uptime in ms (CLOCK_BOOTTIME: no step moves it)
ms() { read -r _u _ </proc/uptime; eval "$1=\$((${_u%.*}${_u#*.}0))"; }

# alive PID: the process exists and is not a zombie
alive() {
	[ -r "/proc/$1/stat" ] || return 1
	read -r _s <"/proc/$1/stat" 2>/dev/null || return 1
	_s=${_s#*) }
	[ "${_s%% *}" != Z ]
}

# wait_gone PID TENTHS: true when PID ended within TENTHS
wait_gone() {
	_i=0
	while alive "$1" && [ $_i -lt "$2" ]; do sleep 0.1; _i=$((_i + 1)); done
	! alive "$1"
}

# step SECONDS: the wall clock jumps by SECONDS (OFFSET: the sum so far)
OFFSET=0
step() {
	date -s "@$(($(date +%s) + $1))" >/dev/null && OFFSET=$((OFFSET + $1))
}

# sweep: the sweep file's lines as S_<key> (S_ok, S_timeouts, S_age_ms ...).
# One cat: the shell's read takes a byte per read(2), here a FUSE round
# trip each (a second or more for the whole file under TCG).
sweep() {
	S_ok= S_timeouts= S_age_ms= S_nodes= S_links= S_error=
	_t=$(cat "$F/sweep")
	while read -r _k _v; do
		case $_k in ok|timeouts|age_ms|nodes|links|error) eval "S_$_k=\$_v" ;; esac
	done <<EOF
$_t
EOF
}
sweep_line() { echo "ok=$S_ok timeouts=$S_timeouts nodes=$S_nodes links=$S_links age_ms=$S_age_ms error='$S_error'"; }

IBSIM= DAEMON= READER= OLDQ=
cleanup() {
	[ -n "$READER" ] && alive "$READER" && kill "$READER" 2>/dev/null
	[ -n "$IBSIM" ] && kill -CONT "$IBSIM" 2>/dev/null
	[ "$OFFSET" != 0 ] && step $((-OFFSET))
	if [ -n "$DAEMON" ] && alive "$DAEMON"; then
		umount -l $M 2>/dev/null
		wait_gone "$DAEMON" 50 || kill -9 "$DAEMON"
	fi
	[ -n "$IBSIM" ] && { kill "$IBSIM"; wait_gone "$IBSIM" 20 || kill -9 "$IBSIM"; }
	if [ -n "$OLDQ" ]; then   # the AF_UNIX queues as they were
		set -- $OLDQ
		echo "$1" >/proc/sys/net/unix/max_dgram_qlen
		echo "$2" >/proc/sys/net/core/wmem_default
		echo "$3" >/proc/sys/net/core/rmem_default
	fi
}
bail() {   # bail NAME DETAIL: one FAIL, the logs on the console, the end
	fail "$1" "$2"
	for f in $W/umadfs.log $W/ibsim.log; do echo "--- $f"; tail -n 20 "$f" 2>/dev/null; done
	cleanup
	check_exit
}

# ---- the simulated fabric and its mount ------------------------------------
[ -n "$LIB" ] || bail sim-mount "no libumad2sim.so in the image"
[ -x "$(command -v ibsim)" ] || bail sim-mount "no ibsim in the image"
# ibsim and umad2sim deadlock on the default 10-deep AF_UNIX datagram
# queues (tests/integration/simfabric.py, raise_unix_dgram_qlen)
# (with cat: the shell's read takes a byte at a time, and a sysctl file
# answers a read at an offset with nothing)
OLDQ=$(cat /proc/sys/net/unix/max_dgram_qlen /proc/sys/net/core/wmem_default \
	/proc/sys/net/core/rmem_default | tr '\n' ' ')
echo 4096 >/proc/sys/net/unix/max_dgram_qlen
echo 8388608 >/proc/sys/net/core/wmem_default
echo 8388608 >/proc/sys/net/core/rmem_default

rm -f $W/console
mkfifo $W/console
# the console a FIFO ibsim holds open read-write: it never reads EOF
(cd $W && IBSIM_SOCKNAME=$SOCK exec ibsim -s $NET 0<>$W/console >$W/ibsim.log 2>&1) &
IBSIM=$!
i=0
until grep -q "@$SOCK:ctl" /proc/net/unix; do
	[ $i -lt 100 ] && alive $IBSIM || bail sim-mount "ibsim not ready after $((i / 10)) s: $(tail -n 3 $W/ibsim.log)"
	sleep 0.1
	i=$((i + 1))
done
# ASan (the tier's ASan pass): umad2sim comes before the runtime
(cd $W && LD_PRELOAD=$LIB IBSIM_SOCKNAME=$SOCK SIM_HOST=Hca1 \
	ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:suppressions=/lib/umadfs-vm/asan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	exec umadfs -f -o fabric_port=ibsim0:1 $M) >$W/umadfs.log 2>&1 &
DAEMON=$!
i=0
while [ ! -e $M/ibsim0 ]; do
	[ $i -lt 100 ] && alive $DAEMON || bail sim-mount "no $M/ibsim0 after $((i / 10)) s: $(tail -n 3 $W/umadfs.log)"
	sleep 0.1
	i=$((i + 1))
done
pass sim-mount "ibsim on two-switch.net, umadfs on Hca1 after $i polls: $(ls $M | tr '\n' ' ')"

# ---- 1. a forward step while the first read waits for its sweep ---------------
kill -STOP $IBSIM
ms ts
cat $F/links >$W/links.out 2>$W/links.err &
READER=$!
# until the read is in the daemon (the open waits for the first sweep);
# half a second at most, as ibsim's stop counts against its 1.6 s
i=0 wchan=
while [ $i -lt 10 ]; do
	rd wchan /proc/$READER/wchan
	case $wchan in *fuse*|*request_wait*) break ;; esac
	sleep 0.05
	i=$((i + 1))
done
sleep 0.05   # the sweep thread's first MAD out, its wait for the answer begun
ms t0
step $STEP
sleep 0.5
ms t1
early=
if alive $READER; then
	pass read-blocked "still blocked $((t1 - t0)) ms after a +${STEP} s step (waiting in $wchan)"
else
	wait $READER
	rc=$?
	early=" (it ended before SIGCONT)"
	fail read-blocked "the read ended within $((t1 - t0)) ms of a +${STEP} s step, status $rc: [$(show $W/links.out)] [$(show $W/links.err)]"
fi
kill -CONT $IBSIM
ms t2
if [ -z "$early" ] && ! wait_gone $READER 100; then
	fail read-returns "still blocked 10 s after SIGCONT (a hang)"
	kill $READER
else
	ms t3
	[ -z "$early" ] && { wait $READER; rc=$?; }
	n=0 bad=
	while read -r l; do
		n=$((n + 1))
		case $l in guid=0x*" peer_guid=0x"*) ;; *) bad="$bad [$l]" ;; esac
	done <$W/links.out
	if [ -z "$early" ] && [ $rc = 0 ] && [ $n = 5 ] && [ -z "$bad" ]; then
		pass read-returns "5 links, $((t3 - t2)) ms after SIGCONT (ibsim stopped for $((t2 - ts)) ms)"
	else
		fail read-returns "status $rc, $n lines$early:$bad [$(show $W/links.out)] [$(show $W/links.err)]"
	fi
fi
READER=
sweep
if [ "$S_ok" = 1 ] && [ "$S_timeouts" = 0 ] && [ "$S_nodes" = 5 ] && [ "$S_links" = 5 ]; then
	pass first-sweep "$(sweep_line)"
else
	fail first-sweep "$(sweep_line)"
fi

# ---- 2. a backward step while the timed sweeps wait ---------------------------
# A sweep at full speed first: interval_ms may not be shorter than the last
# sweep, and the first one lasted as long as ibsim was stopped.
echo 1 >$F/sweep 2>$W/sweep.err || fail sweep-write "echo 1 >sweep: $(cat $W/sweep.err)"
if echo 1000 >$F/interval_ms; then
	# the sweep thread now waits for its first timed sweep, 1 s away
	ms t0
	step $((-STEP))
	got= S_age_ms=
	while :; do
		ms t1
		sweep
		# a sweep that completed after the step
		[ -n "$S_age_ms" ] && [ "$S_age_ms" -lt $((t1 - t0)) ] && { got=1; break; }
		[ $((t1 - t0)) -ge 3000 ] && break
		sleep 0.2
	done
	if [ -n "$got" ] && [ "$S_ok" = 1 ] && [ "$S_timeouts" = 0 ]; then
		pass timed-sweeps "a sweep $((t1 - t0 - S_age_ms)) ms after a -${STEP} s step: $(sweep_line)"
	elif [ -n "$got" ]; then
		fail timed-sweeps "the sweep after the step: $(sweep_line)"
	else
		fail timed-sweeps "no sweep in $((t1 - t0)) ms after a -${STEP} s step with interval_ms 1000: $(sweep_line)"
	fi
	echo 0 >$F/interval_ms
else
	fail timed-sweeps "interval_ms: $(cat $F/last_error)"
fi

# ---- the end: the daemon leaves by itself, cleanly ----------------------------
if umount $M 2>$W/umount.err; then
	if wait_gone $DAEMON 50; then
		wait $DAEMON
		rc=$?
		if [ $rc != 0 ]; then
			fail sim-unmount "daemon exit status $rc: $(tail -n 3 $W/umadfs.log)"
		elif grep -qiE 'error:|AddressSanitizer|runtime error:' $W/umadfs.log; then
			fail sim-unmount "$(grep -iE 'error:|AddressSanitizer|runtime error:' $W/umadfs.log | head -n 3)"
		else
			pass sim-unmount "daemon exited 0, no errors in its log"
		fi
		DAEMON=
	else
		fail sim-unmount "daemon still running 5 s after umount"
	fi
else
	fail sim-unmount "umount: $(cat $W/umount.err)"
fi
[ "$CHECK_FAILS" = 0 ] || for f in $W/umadfs.log $W/ibsim.log; do echo "--- $f"; tail -n 20 "$f"; done
cleanup
check_exit
