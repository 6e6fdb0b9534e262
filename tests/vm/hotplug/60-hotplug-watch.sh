#!/bin/sh
# hotplug-watch: the daemon's hot-plug thread (src/hotplug.c, run by
# tests/tools/hotplug_watch) on the real kernel: each `rdma link delete/add`
# is reported within 2 s, a delete and add in a row as a removal then an
# addition, a delete under an open verbs context (which blocks the delete
# itself) at once, a new CA on a new netdev, nothing when nothing happens,
# and the thread stops at once.  Run it as 50-hotplug-facts.sh says, with
# build/tests/tools/hotplug_watch in UMADFS_VM_EXTRA_BINS too.
. /lib/umadfs-vm/checklib.sh

command -v hotplug_watch >/dev/null || { skip watch "no hotplug_watch (UMADFS_VM_EXTRA_BINS)"; check_exit; }
W=/tmp/watch.out
SEEN=0

now() { read -r _now _ </proc/uptime; echo "$_now"; }
new_lines() { tail -n +$((SEEN + 1)) $W; }

# expect NAME PATTERN: a new line of the watcher matches PATTERN within 2 s
# of $T_ACT (the action's uptime); the detail says how long it took.
expect() {
	_i=0
	while [ $_i -lt 25 ]; do
		_l=$(new_lines | grep -m1 -- "$2")
		if [ -n "$_l" ]; then
			_d=$(echo "$_l $T_ACT" | awk '{ printf "%.2f", $1 - $NF }')
			if awk -v d="$_d" 'BEGIN { exit !(d <= 2.0) }'; then
				pass "$1" "after ${_d} s: ${_l#* }"
			else
				fail "$1" "after ${_d} s (more than 2): ${_l#* }"
			fi
			SEEN=$(wc -l <$W)
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	fail "$1" "no '$2' within 2.5 s; watcher said: $(new_lines | tr '\n' ' ')"
	SEEN=$(wc -l <$W)
}

rxe_add() { T_ACT=$(now); rdma link add "$1" type rxe netdev "$2"; }
rxe_del() { T_ACT=$(now); rdma link delete "$1"; }

[ -e "$SYSFS_IB/rxe0" ] || rdma link add rxe0 type rxe netdev dummy0
T_ACT=$(now)
hotplug_watch -d >$W 2>/tmp/watch.err &
WATCH=$!
expect started "started 0"

rxe_del rxe0
expect delete "removed=rxe0 added=-"
rxe_add rxe0 dummy0
expect add "removed=- added=rxe0"

# delete and add in a row: a removal, then an addition (one change or two)
T_ACT=$(now)
rdma link delete rxe0
rdma link add rxe0 type rxe netdev dummy0
S0=$SEEN
expect readd "added=rxe0"
SEEN=$S0
if new_lines | grep -q "removed=rxe0"; then pass readd-removed "$(new_lines | tr '\n' ' ')"
else fail readd-removed "no removal of rxe0: $(new_lines | tr '\n' ' ')"; fi
SEEN=$(wc -l <$W)

# a verbs context keeps `rdma link delete` (and /sys/class/infiniband/rxe0)
# waiting; the umad devices go at once, and so does the CA for us
if command -v hotplug_probe >/dev/null; then
	hotplug_probe verbs rxe0 6 >/tmp/verbs.out 2>&1 &
	H=$!
	sleep 2
	T_ACT=$(now)
	rdma link delete rxe0 &
	DEL=$!
	expect delete-verbs-open "removed=rxe0"
	if kill -0 $DEL 2>/dev/null; then pass delete-blocked "rdma link delete still waits for the verbs context"
	else skip delete-blocked "rdma link delete did not wait"; fi
	wait $H
	wait $DEL
	rxe_add rxe0 dummy0
	expect add-after-verbs "removed=- added=rxe0"
else
	skip delete-verbs-open "no hotplug_probe"
fi

# a new CA on a new netdev
ip link add dummy9 type dummy
ip link set dummy9 up
rxe_add rxe9 dummy9
expect new-ca "removed=- added=rxe9"

# nothing happens: nothing reported
sleep 1
if [ -z "$(new_lines)" ]; then pass quiet "no change reported in 1 s"
else fail quiet "$(new_lines | tr '\n' ' ')"; fi

T_ACT=$(now)
kill -TERM $WATCH
expect stop "stopped in"
wait $WATCH
eq exit-status "$?" 0
if grep -qiE 'error|warning' /tmp/watch.err; then
	fail log "$(grep -iE 'error|warning' /tmp/watch.err | head -n 3 | tr '\n' ' ')"
else
	pass log "$(grep -c uevent /tmp/watch.err) uevents logged, no warning"
fi
rdma link delete rxe9
check_exit
