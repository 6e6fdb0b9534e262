# shellcheck shell=bash
# Shared code for scripts/test.sh and scripts/run.sh.  Source it; it does
# nothing by itself.  Bash only (uses arrays and [[ ]]).

UMADFS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
UMADFS_BUILD=${UMADFS_BUILD:-$UMADFS_REPO/build}
UMAD2SIM_LIB=${UMAD2SIM_LIB:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}

# Debian 12 packages needed to build, test and fuzz umadfs.
UMADFS_PACKAGES=(
	build-essential gcc pkg-config meson ninja-build clang libclang-rt-14-dev
	libfuse3-dev fuse3
	libibumad-dev libibverbs-dev libibmad-dev
	infiniband-diags opensm ibsim-utils libumad2sim0
	python3 python3-pytest
	# packaging checks (tests/integration/test_packaging.py)
	man-db groff-base debhelper dpkg-dev fakeroot lintian systemd
	# the user guide's commands (tests/integration/test_guide.py)
	xxd
	# the memcheck pass of scripts/test.sh
	valgrind
)

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

pkg_installed() {
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

# Install whatever is missing (apt-get update only when something is).
ensure_packages() {
	local missing=() p
	command -v dpkg-query >/dev/null || die "not a Debian system (no dpkg-query); install by hand: ${UMADFS_PACKAGES[*]}"
	for p in "${UMADFS_PACKAGES[@]}"; do
		pkg_installed "$p" || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	if ((EUID != 0)); then
		if command -v sudo >/dev/null; then
			log "installing with sudo: ${missing[*]}"
			sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
			sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
			return
		fi
		die "missing packages (run as root to install them): ${missing[*]}"
	fi
	log "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# /dev/fuse must exist for any mount.
ensure_fuse_dev() {
	[[ -c /dev/fuse ]] && return 0
	if ((EUID == 0)); then
		modprobe fuse 2>/dev/null || true
		[[ -c /dev/fuse ]] || mknod -m 0666 /dev/fuse c 10 229 2>/dev/null || true
	fi
	[[ -c /dev/fuse ]] || die "/dev/fuse is missing and could not be created (load the fuse module)"
}

# build_umadfs [DIR [MESON OPTIONS...]]: configure (or reconfigure) and
# build; DIR defaults to $UMADFS_BUILD.
build_umadfs() {
	local dir=${1:-$UMADFS_BUILD}
	shift || true
	if [[ -f $dir/build.ninja ]]; then
		meson setup --reconfigure "$@" "$dir" "$UMADFS_REPO" >/dev/null ||
			die "meson setup --reconfigure failed"
	else
		meson setup "$@" "$dir" "$UMADFS_REPO" || die "meson setup failed"
	fi
	ninja -C "$dir" || die "build failed"
}

# True if PATH is a mount point in this namespace.
is_mounted() {
	local mp
	mp=$(realpath -m "$1")
	awk -v mp="$mp" '{ gsub(/\\040/, " ", $5); if ($5 == mp) f = 1 } END { exit !f }' /proc/self/mountinfo
}

# wait_for SECONDS COMMAND...: poll every 0.2 s until COMMAND succeeds.
wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }

# stop_pid PID [SECONDS]: SIGTERM, wait, SIGKILL.
stop_pid() {
	local pid=${1:-} t=${2:-5}
	pid_alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null || true
	wait_for "$t" eval "! kill -0 $pid 2>/dev/null" && return 0
	kill -KILL "$pid" 2>/dev/null || true
	wait_for 2 eval "! kill -0 $pid 2>/dev/null" || true
}

# ---------------------------------------------------------------------------
# Simulated fabric (ibsim + umad2sim), state kept in a directory.

# sim_client HOST CMD...: run CMD as a umad2sim client attached to HOST.
sim_client() {
	local host=$1
	shift
	env LD_PRELOAD="$UMAD2SIM_LIB" IBSIM_SOCKNAME="$IBSIM_SOCKNAME" SIM_HOST="$host" "$@"
}

# sim_start STATEDIR NETFILE: start ibsim with its console on STATEDIR/console
# (a FIFO ibsim itself holds open read-write, so it never reads EOF; send a
# command with: echo 'Baselid "Hca1"[1] 0x20' > STATEDIR/console).
sim_start() {
	local dir=$1 net=$2 qlen=/proc/sys/net/unix/max_dgram_qlen
	mkdir -p "$dir/clients"
	# ibsim and umad2sim deadlock when their AF_UNIX datagram queues (10
	# deep by default) fill up with ~20 MADs in flight: deepen them.
	if [[ -w $qlen ]] && (($(cat "$qlen") < 4096)); then
		echo 4096 >"$qlen"
	fi
	# ... and their buffers (~700 MADs in flight by default).
	for b in /proc/sys/net/core/wmem_default /proc/sys/net/core/rmem_default; do
		if [[ -w $b ]] && (($(cat "$b") < 8388608)); then
			echo 8388608 >"$b"
		fi
	done
	rm -f "$dir/console"
	mkfifo -m 0600 "$dir/console"
	export IBSIM_SOCKNAME=${IBSIM_SOCKNAME:-umadfs-run-$$}
	echo "$IBSIM_SOCKNAME" >"$dir/sockname"
	(cd "$dir" && exec setsid ibsim -s "$net" 0<>"$dir/console" >"$dir/ibsim.log" 2>&1) &
	echo $! >"$dir/ibsim.pid"
	wait_for 10 grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix ||
		die "ibsim did not start; see $dir/ibsim.log"
}

# sim_opensm STATEDIR HOST: run opensm as a client on HOST.
sim_opensm() {
	local dir=$1 host=$2
	mkdir -p "$dir/opensm"
	(cd "$dir/opensm" && OSM_CACHE_DIR="$dir/opensm" exec setsid \
		env LD_PRELOAD="$UMAD2SIM_LIB" IBSIM_SOCKNAME="$IBSIM_SOCKNAME" SIM_HOST="$host" \
		opensm -f "$dir/opensm/opensm.log" </dev/null >"$dir/opensm/opensm.out" 2>&1) &
	echo $! >"$dir/opensm.pid"
}

sim_port_active() {
	(cd "$1/clients" && sim_client "$2" timeout 5 ibstat 2>/dev/null) | grep -q 'State: Active'
}

# sim_wait_active STATEDIR HOST [SECONDS]
sim_wait_active() {
	wait_for "${3:-30}" sim_port_active "$1" "$2" ||
		die "$2 not Active after ${3:-30}s; see $1/opensm/opensm.log"
}
