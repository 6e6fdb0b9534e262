#!/bin/sh
# hotplug-facts: what the kernel does when a CA goes and comes back (issue 13
# section 1), measured, not asserted: the uevents of `rdma link delete/add`
# (raw netlink and libudev's "kernel" monitor), what an open umad fd and a
# verbs context see, whether the delete waits for them, and how soon after
# `rdma link add` libibumad can use the CA.  Not in tests/vm/checks (it
# deletes rxe0 under the mounted daemon); run it alone:
#
#   ninja -C build && UMADFS_VM_CHECKS=tests/vm/hotplug \
#     UMADFS_VM_EXTRA_BINS=$PWD/build/tests/tools/hotplug_probe \
#     UMADFS_VM_CHECK_TIMEOUT=140 UMADFS_VM_GUEST_TIMEOUT=240 \
#     UMADFS_VM_TIMEOUT=300 tests/vm/run.sh /tmp/hp
#   grep '^HP ' /tmp/hp/console.log
#
# Every line of interest is printed as "HP <uptime> <what>".
. /lib/umadfs-vm/checklib.sh

t() { read -r _t _ </proc/uptime; echo "HP $_t $*"; }
dumpf() { sed "s/^/HP /" "$1"; }
command -v hotplug_probe >/dev/null || { skip probe "no hotplug_probe in the VM"; check_exit; }

# rxe_add CA NETDEV: rdma link add, timed, with libibumad's view after it
rxe_add() {
	hotplug_probe ready "$1" 20 >/tmp/ready.$1 2>&1 &
	_r=$!
	t "rdma link add $1 netdev $2: start"
	rdma link add "$1" type rxe netdev "$2"
	t "rdma link add $1: returned $?"
	wait $_r
	t "ready $1: exit $?"
	dumpf /tmp/ready.$1
}

# rxe_del CA: rdma link delete in the background, timed
rxe_del() {
	( t "rdma link delete $1: start"; rdma link delete "$1"; t "rdma link delete $1: returned $?" ) &
	DEL=$!
}

identity() {   # identity CA: what could tell a re-added CA from the old one
	t "identity $1: node_guid=$(cat $SYSFS_IB/$1/node_guid 2>/dev/null)" \
		"sysfs_ino=$(stat -L -c %i $SYSFS_IB/$1 2>/dev/null)" \
		"rdma_dev=[$(rdma dev show $1 2>/dev/null | head -n1)]" \
		"umad=$(ls $SYSFS_IB/$1/device/infiniband_mad 2>/dev/null | tr '\n' ' ')"
	for u in /sys/class/infiniband_mad/umad*; do
		[ -e "$u/ibdev" ] || continue
		t "  $(basename $u): ibdev=$(cat $u/ibdev) port=$(cat $u/port) dev=$(cat $u/dev) ino=$(stat -L -c %i $u)"
	done
}

# ---- the guest ----
t "udevd: $(ps | grep -c '[u]devd') processes; /run/udev: $(ls -d /run/udev 2>/dev/null || echo absent);" \
	"uevent_helper: '$(cat /proc/sys/kernel/hotplug 2>/dev/null)'"
t "classes: $(ls -d /sys/class/infiniband* | tr '\n' ' ')"
t "rxe0 devpath: $(readlink -f $SYSFS_IB/rxe0)"
t "rxe0 files: $(ls $SYSFS_IB/rxe0 | tr '\n' ' ')"
t "/dev/infiniband: $(ls /dev/infiniband | tr '\n' ' ')"
identity rxe0

hotplug_probe uevents 200 >/tmp/ue.raw 2>&1 &
UE=$!
hotplug_probe udev 200 >/tmp/ue.udev 2>&1 &
UD=$!
sleep 1

# ---- A: delete and re-add with only the daemon holding umad fds ----
t "=== A: delete rxe0 (umadfs mounted)"
rxe_del rxe0
wait $DEL
sleep 1
t "after delete: sysfs [$(ls $SYSFS_IB | tr '\n' ' ')] dev [$(ls /dev/infiniband | tr '\n' ' ')] mount [$(ls $UMADFS_MNT | tr '\n' ' ')]"
t "=== A: re-add rxe0"
rxe_add rxe0 dummy0
identity rxe0
sleep 1

# ---- B1: an open umad fd with a registered agent ----
t "=== B1: delete rxe0 under an open umad fd (closed after 8 s)"
hotplug_probe umad rxe0 1 8 >/tmp/umad.out 2>&1 &
H=$!
sleep 2
rxe_del rxe0
wait $H
t "umad holder exited"
wait $DEL
dumpf /tmp/umad.out
rxe_add rxe0 dummy0
sleep 1

t "=== B1b: delete rxe0 under a blocking read(2) of a umad fd"
hotplug_probe umadread rxe0 1 6 >/tmp/umad.out 2>&1 &
H=$!
sleep 2
rxe_del rxe0
wait $H
t "umad reader exited"
wait $DEL
dumpf /tmp/umad.out
rxe_add rxe0 dummy0
sleep 1

# ---- B2: a verbs context with a UD QP ----
t "=== B2: delete rxe0 under a verbs context (closed after 12 s)"
hotplug_probe verbs rxe0 12 >/tmp/verbs.out 2>&1 &
H=$!
sleep 3
rxe_del rxe0
sleep 2
t "2 s after delete start: sysfs [$(ls $SYSFS_IB | tr '\n' ' ')] dev [$(ls /dev/infiniband | tr '\n' ' ')]" \
	"ports [$(ls $SYSFS_IB/rxe0/ports 2>&1 | tr '\n' ' ')] state [$(cat $SYSFS_IB/rxe0/ports/1/state 2>&1)]"
hotplug_probe scan >/tmp/scan.out 2>&1
dumpf /tmp/scan.out
wait $H
t "verbs holder exited"
wait $DEL
dumpf /tmp/verbs.out
rxe_add rxe0 dummy0
identity rxe0
sleep 1

# ---- C: a new CA on a new netdev ----
t "=== C: rxe9 on dummy9"
ip link add dummy9 type dummy
ip link set dummy9 up
t "dummy9 up"
rxe_add rxe9 dummy9
identity rxe9
sleep 2
t "mount now: [$(ls $UMADFS_MNT | tr '\n' ' ')]"

# ---- D: the daemon itself holds a verbs context (an rq/ queue) ----
t "=== D: delete rxe0 while umadfs has rq/q on it"
if mkdir $UMADFS_MNT/rxe0/ports/1/rq/q 2>/tmp/err; then
	t "mkdir rq/q: ok"
	rxe_del rxe0
	sleep 5
	t "5 s later: delete $(kill -0 $DEL 2>/dev/null && echo 'still running' || echo done);" \
		"sysfs [$(ls $SYSFS_IB | tr '\n' ' ')]"
	t "rmdir rq/q: $(rmdir $UMADFS_MNT/rxe0/ports/1/rq/q 2>&1 && echo ok)"
	sleep 2
	t "2 s after rmdir: delete $(kill -0 $DEL 2>/dev/null && echo 'still running' || echo done)"
else
	t "mkdir rq/q: $(cat /tmp/err)"
fi

kill $UE $UD 2>/dev/null
wait $UE $UD 2>/dev/null
t "=== raw uevents"
dumpf /tmp/ue.raw
t "=== libudev kernel monitor"
dumpf /tmp/ue.udev
pass facts "see the HP lines"
check_exit
