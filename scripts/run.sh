#!/usr/bin/env bash
# Install what is missing, build, and mount umadfs.
#
#   scripts/run.sh [MOUNTPOINT]        mount (default /run/umadfs)
#   scripts/run.sh stop [MOUNTPOINT]   unmount, stop the simulated fabric
#   scripts/run.sh status
#   scripts/run.sh env                 the diags' environment, as export lines
#
# With real CAs (/sys/class/infiniband not empty) and FORCE_SIM unset, the
# daemon mounts them and daemonizes (logs go to syslog/journal); only what
# building and running it needs is installed (UMADFS_WITH_DIAGS=1 adds
# infiniband-diags): no subnet manager, no test tools.
# Otherwise (or with FORCE_SIM=1) a simulated fabric is started: ibsim on
# tests/topologies/two-switch.net, opensm on node Hca3, and umadfs attached
# to node ${UMADFS_SIM_HOST:-Hca1} under umad2sim, all kept in the state
# directory ${UMADFS_STATE_DIR:-/run/umadfs-sim} (logs there too); opensm is
# installed with its service disabled and never started: the only opensm
# is run.sh's own, on the simulated fabric.  The simulator's console is the
# FIFO STATE/console:
#   echo 'Baselid "Hca1"[1] 0x20' > /run/umadfs-sim/console
# and the diags (smpquery, perfquery, ibnetdiscover...) reach it as clients
# of umadfs's node with the environment `run.sh env` prints:
#   eval "$(scripts/run.sh env)"; smpquery -D nodeinfo 0,1
# Both mount with -o allow_other (as root, or with user_allow_other in
# /etc/fuse.conf): the attribute files are for every user.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ((EUID == 0)); then
	STATE=${UMADFS_STATE_DIR:-/run/umadfs-sim}
	DEFAULT_MNT=/run/umadfs
else
	STATE=${UMADFS_STATE_DIR:-${XDG_RUNTIME_DIR:-/tmp}/umadfs-sim}
	DEFAULT_MNT=${XDG_RUNTIME_DIR:-/tmp}/umadfs
fi
SIM_HOST_NODE=${UMADFS_SIM_HOST:-Hca1}
SM_NODE=Hca3
NETFILE=$UMADFS_REPO/tests/topologies/two-switch.net
BIN=${UMADFS_BIN:-$UMADFS_BUILD/src/umadfs}

state_get() { if [[ -f $STATE/$1 ]]; then cat "$STATE/$1"; fi; }

do_stop() {
	local mnt=${1:-$(state_get mountpoint)} pid
	mnt=${mnt:-$DEFAULT_MNT}
	pid=$(state_get umadfs.pid)
	if is_mounted "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null ||
			fusermount3 -uz "$mnt" 2>/dev/null || true
	fi
	if pid_alive "$pid"; then
		wait_for 10 eval "! kill -0 $pid 2>/dev/null" || stop_pid "$pid" 5
	fi
	stop_pid "$(state_get opensm.pid)"
	stop_pid "$(state_get ibsim.pid)"
	if is_mounted "$mnt"; then
		log "warning: $mnt is still mounted"
	else
		log "unmounted $mnt"
	fi
	if [[ -d $STATE && -f $STATE/mode ]]; then
		rm -rf "$STATE"
	fi
}

do_status() {
	local mnt
	mnt=$(state_get mountpoint)
	if [[ -z $mnt ]]; then
		echo "not running (no state in $STATE)"
		return 1
	fi
	echo "mode: $(state_get mode); mountpoint: $mnt"
	is_mounted "$mnt" && echo "mounted" || echo "NOT mounted"
	for p in ibsim opensm umadfs; do
		[[ -f $STATE/$p.pid ]] || continue
		pid_alive "$(state_get $p.pid)" && echo "$p: running (pid $(state_get $p.pid))" ||
			echo "$p: not running"
	done
}

# do_env: export lines that make the diags clients of the mounted node of
# the simulated fabric (umad2sim preloaded, ibsim's socket, the node):
# without SIM_HOST umad2sim attaches to whichever node ibsim gives it.
do_env() {
	local host
	host=$(state_get sim_host)
	host=${host:-$SIM_HOST_NODE}
	case $(state_get mode) in
	sim) ;;
	real)
		echo "# umadfs runs on this host's CAs: the diags need no environment"
		return 0
		;;
	*) die "not running (no state in $STATE): start it with $0" ;;
	esac
	echo "# the diags as clients of node $host of the simulated fabric" \
		"(umad2sim needs a writable current directory for its ./sys-PID)"
	printf 'export IBSIM_SOCKNAME=%q\n' "$(state_get sockname)"
	printf 'export LD_PRELOAD=%q\n' "$UMAD2SIM_LIB"
	printf 'export SIM_HOST=%q\n' "$host"
}

mount_real() {
	local mnt=$1
	mkdir -p "$mnt" "$STATE"
	echo real >"$STATE/mode"
	echo "$mnt" >"$STATE/mountpoint"
	"$BIN" "${MOUNT_OPTS[@]}" "$mnt" || die "umadfs failed to mount $mnt (see the system log)"
	wait_for 10 is_mounted "$mnt" || die "no mount at $mnt"
	echo "umadfs mounted the CAs of this host on $mnt"
	echo "logs: the system log (journalctl -t umadfs, or /var/log/syslog)"
	echo "stop: $0 stop"
}

mount_sim() {
	local mnt=$1
	mkdir -p "$STATE" "$mnt"
	echo sim >"$STATE/mode"
	echo "$mnt" >"$STATE/mountpoint"
	echo "$SIM_HOST_NODE" >"$STATE/sim_host"
	sim_start "$STATE" "$NETFILE"
	sim_opensm "$STATE" "$SM_NODE"
	sim_wait_active "$STATE" "$SIM_HOST_NODE" 30
	mkdir -p "$STATE/umadfs"
	# umad2sim writes ./sys-PID: the daemon's cwd must be writable.
	(cd "$STATE/umadfs" && exec setsid env LD_PRELOAD="$UMAD2SIM_LIB" \
		IBSIM_SOCKNAME="$IBSIM_SOCKNAME" SIM_HOST="$SIM_HOST_NODE" \
		"$BIN" -f "${MOUNT_OPTS[@]}" "$mnt" </dev/null >"$STATE/umadfs.log" 2>&1) &
	echo $! >"$STATE/umadfs.pid"
	if ! wait_for 10 is_mounted "$mnt"; then
		tail -n 20 "$STATE/umadfs.log" >&2 || true
		do_stop "$mnt"
		die "umadfs did not mount $mnt"
	fi
	if ! timeout 10 stat "$mnt" >/dev/null; then
		tail -n 20 "$STATE/umadfs.log" >&2 || true
		do_stop "$mnt"
		die "$mnt is mounted but umadfs does not answer"
	fi
	cat <<-EOT
	umadfs mounted the simulated node $SIM_HOST_NODE (fabric: ${NETFILE#"$UMADFS_REPO"/}) on $mnt
	  try:  ls $mnt; cat $mnt/*/ports/*/state
	logs:   $STATE/umadfs.log, $STATE/ibsim.log, $STATE/opensm/opensm.log
	sim:    console FIFO $STATE/console (IBSIM_SOCKNAME=$IBSIM_SOCKNAME)
	diags:  eval "\$($0 env)"; smpquery -D nodeinfo 0,1   (as node $SIM_HOST_NODE)
	stop:   $0 stop
	EOT
}

case ${1:-} in
stop)
	do_stop "${2:-}"
	exit 0
	;;
status)
	do_status
	exit $?
	;;
env)
	do_env
	exit $?
	;;
-h | --help)
	sed -n '2,/^[^#]/{/^#/p}' "$0"
	exit 0
	;;
esac

MNT=$(realpath -m "${1:-$DEFAULT_MNT}")
if [[ -f $STATE/mountpoint ]]; then
	if is_mounted "$(state_get mountpoint)" &&
		{ [[ $(state_get mode) == real ]] || pid_alive "$(state_get umadfs.pid)"; }; then
		echo "already running: $(state_get mountpoint) ($0 stop to stop it)"
		exit 0
	fi
	do_stop >/dev/null 2>&1 || true # leftovers of an earlier run
fi

# -o allow_other needs root or user_allow_other in /etc/fuse.conf.
MOUNT_OPTS=(-o allow_other)
if ((EUID != 0)) && ! grep -qs '^[[:space:]]*user_allow_other' /etc/fuse.conf; then
	log "warning: no user_allow_other in /etc/fuse.conf: mounting without allow_other (only you will see the files)"
	MOUNT_OPTS=()
fi

read -ra PACKAGES <<<"$(run_packages)"
ensure_packages "${PACKAGES[@]}"
ensure_fuse_dev
build_umadfs

if host_has_cas; then
	mount_real "$MNT"
else
	mount_sim "$MNT"
fi
