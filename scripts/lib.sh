# shellcheck shell=bash
# Shared code for scripts/test.sh and scripts/run.sh.  Source it; it does
# nothing by itself.  Bash only (uses arrays and [[ ]]).

UMADFS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
UMADFS_BUILD=${UMADFS_BUILD:-$UMADFS_REPO/build}
UMAD2SIM_LIB=${UMAD2SIM_LIB:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}

# Debian 12 packages, by what needs them.  scripts/run.sh on a host with
# CAs installs only UMADFS_BUILD_PACKAGES (plus UMADFS_DIAG_PACKAGES with
# UMADFS_WITH_DIAGS=1); under the simulator also UMADFS_SIM_PACKAGES;
# scripts/test.sh everything.
UMADFS_BUILD_PACKAGES=(
	build-essential gcc pkg-config meson ninja-build
	libfuse3-dev fuse3 libibumad-dev libibverbs-dev libibmad-dev libsystemd-dev
	libudev-dev
)
UMADFS_DIAG_PACKAGES=(infiniband-diags)
# opensm is here for the simulated fabric only: see hold_services.
UMADFS_SIM_PACKAGES=(ibsim-utils libumad2sim0 opensm infiniband-diags)
# Every peer a test needs (tests/integration/checks.py: PACKAGE_OF): under
# CI=true a test whose peer is missing fails instead of skipping.
UMADFS_TEST_PACKAGES=(
	clang libclang-rt-14-dev python3 python3-pytest
	# packaging checks (tests/integration/test_packaging.py)
	man-db groff-base debhelper dpkg dpkg-dev fakeroot lintian systemd binutils
	# mount namespaces and mount(8) there, users for test_security.py
	# (required packages: listed for minimal images)
	util-linux mount passwd
	# the user guide's commands (tests/integration/test_guide.py)
	xxd
	# read() calls counted (tests/integration/test_recv_readers.py)
	strace
	# fabric/ read by Prometheus's tools (tests/integration/test_fabric.py)
	prometheus prometheus-node-exporter
	# credit loops and hop histograms against ibdmchk (test_routing.py)
	ibutils
	# the memcheck pass of scripts/test.sh
	valgrind
)
# Services that a package above enables and starts on installation and that
# must never run because of umadfs: opensm's runs a subnet manager on every
# local port (PORTS=ALL in /etc/default/opensm); prometheus and
# prometheus-node-exporter would scrape and serve this host on ports 9090
# and 9100 (the tests run node_exporter themselves, on ports of their own).
UMADFS_HELD_SERVICES=(opensm prometheus prometheus-node-exporter)
# invoke-rc.d and deb-systemd-invoke ask this program before starting
# anything (a variable only so that tests can point it elsewhere).
UMADFS_POLICY_RC_D=${UMADFS_POLICY_RC_D:-/usr/sbin/policy-rc.d}

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

pkg_installed() {
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

# The root prefix for commands that change the system ("" when root).
AS_ROOT=()

# True if SERVICE's unit is enabled (works without systemd as PID 1).
service_enabled() {
	[[ $(systemctl is-enabled "$1.service" 2>/dev/null) == enabled* ]]
}

# hold_services: until release_services, nothing an installation starts
# runs: a policy-rc.d that denies every start (the one in place, if any,
# is put back afterwards) and, with systemd running, a runtime mask on the
# held services.
hold_services() {
	local s
	if [[ -e $UMADFS_POLICY_RC_D ]]; then
		"${AS_ROOT[@]}" mv -f "$UMADFS_POLICY_RC_D" "$UMADFS_POLICY_RC_D.umadfs-saved"
	fi
	# shellcheck disable=SC2016 # $1 is sh's
	printf '#!/bin/sh\n# scripts/lib.sh: no service starts during this installation\nexit 101\n' |
		"${AS_ROOT[@]}" sh -c 'cat >"$1" && chmod 0755 "$1"' sh "$UMADFS_POLICY_RC_D"
	if [[ -d /run/systemd/system ]]; then
		for s in "${UMADFS_HELD_SERVICES[@]}"; do
			"${AS_ROOT[@]}" systemctl mask --runtime --quiet "$s.service" 2>/dev/null || true
		done
	fi
}

# release_services PKG...: undo hold_services, and disable each held service
# whose package was among those just installed: their postinst enables it.
release_services() {
	local s
	"${AS_ROOT[@]}" rm -f "$UMADFS_POLICY_RC_D"
	if [[ -e $UMADFS_POLICY_RC_D.umadfs-saved ]]; then
		"${AS_ROOT[@]}" mv -f "$UMADFS_POLICY_RC_D.umadfs-saved" "$UMADFS_POLICY_RC_D"
	fi
	for s in "${UMADFS_HELD_SERVICES[@]}"; do
		[[ " $* " == *" $s "* ]] || continue
		if [[ -d /run/systemd/system ]]; then
			"${AS_ROOT[@]}" systemctl unmask --runtime --quiet "$s.service" 2>/dev/null || true
		fi
		# systemctl works without systemd as PID 1; upgrades then keep
		# the unit off (deb-systemd-helper finds its links gone).
		if command -v systemctl >/dev/null; then
			"${AS_ROOT[@]}" systemctl disable --quiet "$s.service" >/dev/null 2>&1 || true
		else
			"${AS_ROOT[@]}" rm -f /etc/systemd/system/*.wants/"$s.service"
		fi
		"${AS_ROOT[@]}" update-rc.d "$s" disable >/dev/null 2>&1 || true
		! service_enabled "$s" || die "$s.service is enabled after the installation: disable it (systemctl disable $s)"
		log "installed $s without enabling or starting its service"
	done
}

# install_packages PKG...: apt-get install with no service started.
install_packages() {
	local rc=0
	log "installing${AS_ROOT[*]:+ with ${AS_ROOT[*]}}: $*"
	UMADFS_INSTALLING=("$@")
	trap 'release_services "${UMADFS_INSTALLING[@]}"; exit 130' INT TERM
	hold_services
	"${AS_ROOT[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq || rc=$?
	if ((rc == 0)); then
		"${AS_ROOT[@]}" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends "$@" || rc=$?
	fi
	release_services "$@"
	trap - INT TERM
	((rc == 0)) || die "apt-get failed (status $rc)"
}

# True if this host has CAs (and FORCE_SIM is not 1): scripts/run.sh then
# mounts them, else the simulated fabric.
host_has_cas() {
	[[ ${FORCE_SIM:-0} != 1 ]] &&
		[[ -n $(ls -A "${UMADFS_IB_SYSFS:-/sys/class/infiniband}" 2>/dev/null) ]]
}

# run_packages: the packages scripts/run.sh needs on this host.
run_packages() {
	local p=("${UMADFS_BUILD_PACKAGES[@]}")
	if ! host_has_cas; then
		p+=("${UMADFS_SIM_PACKAGES[@]}")
	elif [[ ${UMADFS_WITH_DIAGS:-0} == 1 ]]; then
		p+=("${UMADFS_DIAG_PACKAGES[@]}")
	fi
	echo "${p[*]}"
}

# ensure_packages [PKG...]: install whatever is missing of PKG... (default:
# everything scripts/test.sh needs).
ensure_packages() {
	local want=("$@") missing=() p
	((${#want[@]})) || want=("${UMADFS_BUILD_PACKAGES[@]}" "${UMADFS_SIM_PACKAGES[@]}" \
		"${UMADFS_TEST_PACKAGES[@]}")
	command -v dpkg-query >/dev/null || die "not a Debian system (no dpkg-query); install by hand: ${want[*]}"
	for p in "${want[@]}"; do
		pkg_installed "$p" || [[ " ${missing[*]} " == *" $p "* ]] || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	if ((EUID != 0)); then
		command -v sudo >/dev/null ||
			die "missing packages (run as root to install them): ${missing[*]}"
		AS_ROOT=(sudo)
	fi
	install_packages "${missing[@]}"
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

# sim_opensm STATEDIR HOST: run opensm as a client on HOST of the simulated
# fabric, never on the host's own ports: without umad2sim preloaded and an
# ibsim socket it would bind real CAs, so it refuses to start.
sim_opensm() {
	local dir=$1 host=$2
	[[ -r $UMAD2SIM_LIB && -n ${IBSIM_SOCKNAME:-} ]] ||
		die "opensm runs only on the simulated fabric: no $UMAD2SIM_LIB or no IBSIM_SOCKNAME"
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
