#!/bin/sh
# mad: the MAD files on the real kernel's ib_umad (rxe0, RoCE: GSI only,
# addressed with a GRH, LID 0).
#
#   mad/gsi-get        a PerfMgt Get written to send gets the kernel's own
#                      answer on recv (no PMA on rxe: a GetResp with a
#                      non-zero status)
#   mad/channel-serves a channel registered for PerfMgt Get answers a
#                      request written by a second client (the port's own
#                      send/recv); the answer carries the requester's TID
#   mad/rmpp           a vendor class in 0x30-0x4F with OUI and RMPP: a
#                      responder channel writes a GetResp larger than one
#                      MAD; the requester's recv shows it as one item with
#                      the whole payload, reassembled by the kernel
#   mad/sa-table-fields an SA GetTable answered by a second channel with a
#                      GetTableResp of three NodeRecords set by name
#                      (NodeRecord[i].Field=, over data=, RMPP): the
#                      requester's recv shows each record's fields with
#                      its index (docs/text-format.md, Named fields)
#   mad/gid1-timeout   a request from GID index 1 is delivered but its
#                      answer never matched: one error=timeout item after
#                      about timeout x (retries + 1)
#   mad/register-*     registration errors of the kernel
#   mad/umad-serves    a channel serves through its umad file (umad_pong,
#                      tests/tools: frames in, GetResp frames out on the
#                      same fd) the requests a second channel writes to
#                      its send; both channels' stats count them
. /lib/umadfs-vm/checklib.sh

CA=$(cas | head -n 1)
P=$UMADFS_MNT/$CA/ports/1
rd GID0 "$SYSFS_IB/$CA/ports/1/gids/0"

# first_line FILE SECONDS: the first line a read of FILE gives, or ''
first_line() {
	timeout "$2" head -n 1 "$1" 2>/dev/null
}

# key LINE KEY: the value of KEY= in LINE
key() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# ---- a Get the kernel answers itself ----
echo "class=perf method=get attr=ClassPortInfo lid=0 qp=1 gid=$GID0 gid_index=0 timeout=500 retries=1 tid=0x77" >"$P/send"
L=$(first_line "$P/recv" 10)
if [ "$(key "$L" method)" = getresp ] && [ "$(key "$L" tid)" = 0x77 ] &&
   [ -z "$(key "$L" error)" ]; then
	pass gsi-get "status=$(key "$L" status)"
else
	fail gsi-get "got [$L]"
fi

# ---- a channel serves PerfMgt Get for a second client ----
S=$UMADFS_MNT/$CA/ports/1/agents/srv
mkdir "$S"
# It answers with data=: its requests come without named fields, which
# would otherwise be set over that data (docs/text-format.md).
echo none >"$S/decode"
if echo "class=perf methods=get" >"$S/register"; then
	# The responder: one request in, the same line back as GetResp with a
	# status of 0 and a recognisable data area.
	(
		R=$(first_line "$S/recv" 15)
		[ -n "$R" ] && echo "${R/method=get /method=getresp } data=00000000000000000000000000000000c0ffee" >"$S/send"
	) &
	RESP=$!
	sleep 0.5
	echo "class=perf method=get attr=PortCounters lid=0 qp=1 gid=$GID0 gid_index=0 timeout=2000 retries=1 tid=0x1234" >"$P/send"
	L=$(first_line "$P/recv" 15)
	wait $RESP
	case "$(key "$L" mad)" in
	*c0ffee*) ok=1 ;;
	*) ok=0 ;;
	esac
	if [ "$(key "$L" method)" = getresp ] && [ "$(key "$L" tid)" = 0x1234 ] &&
	   [ "$(key "$L" status)" = 0x0000 ] && [ $ok = 1 ]; then
		pass channel-serves "the channel's answer reached the client"
	else
		fail channel-serves "got [$L]; srv: $(cat "$S/last_error" "$S/stats" | tr '\n' ' ')"
	fi
else
	fail channel-serves "register: $(cat "$S/last_error")"
fi

# ---- registration errors ----
if echo "class=perf methods=get" >"$P/register" 2>/dev/null; then
	fail register-conflict "a second registration of PerfMgt Get was accepted"
else
	rd E "$P/last_error"
	case "$E" in *already*) pass register-conflict "$E" ;; *) fail register-conflict "last_error: $E" ;; esac
fi
if echo "class=0x31 methods=get" >"$P/register" 2>/dev/null; then
	fail register-no-oui "vendor class without OUI accepted"
else
	rd E "$P/last_error"
	pass register-no-oui "$E"
fi
rmdir "$S" && pass rmdir "agents/srv removed" || fail rmdir "rmdir agents/srv failed"

# ---- RMPP through two channels ----
A=$UMADFS_MNT/$CA/ports/1/agents/rmpp-server
B=$UMADFS_MNT/$CA/ports/1/agents/rmpp-client
mkdir "$A" "$B"
if echo "class=0x30 oui=0x0a0b0c methods=get rmpp=1" >"$A/register"; then
	# 600 bytes of payload: 0x00..0xff, 0x00..., more than one MAD holds.
	DATA=$(awk 'BEGIN { for (i = 0; i < 600; i++) printf "%02x", i % 256 }')
	(
		R=$(first_line "$A/recv" 15)
		[ -n "$R" ] && echo "${R/method=get /method=getresp } data=$DATA" >"$A/send"
	) &
	RESP=$!
	sleep 0.5
	echo "class=0x30 method=get oui=0x0a0b0c attr=0x10 lid=0 qp=1 gid=$GID0 gid_index=0 timeout=2000 retries=1 tid=0x55" >"$B/send"
	L=$(first_line "$B/recv" 20)
	wait $RESP
	LEN=$(key "$L" len)
	MAD=$(key "$L" mad)
	case "$MAD" in
	*"$DATA"*) whole=1 ;;
	*) whole=0 ;;
	esac
	if [ "$(key "$L" method)" = getresp ] && [ "${LEN:-0}" -gt 256 ] && [ $whole = 1 ]; then
		pass rmpp "one item, len=$LEN, the whole 600-byte payload"
	else
		fail rmpp "len=$LEN method=$(key "$L" method) error=$(key "$L" error); A: $(cat "$A/last_error" "$A/stats" "$A/register" | tr '\n' ' ') B: $(cat "$B/last_error" "$B/stats" | tr '\n' ' ')"
	fi
else
	fail rmpp "register: $(cat "$A/last_error")"
fi
rmdir "$A" "$B"

# ---- an SA GetTableResp of several records, named fields both ways ----
A=$UMADFS_MNT/$CA/ports/1/agents/sa-server
B=$UMADFS_MNT/$CA/ports/1/agents/sa-client
mkdir "$A" "$B"
echo none >"$A/decode"
if echo "class=sa methods=gettable rmpp=1" >"$A/register"; then
	# Three 112-byte NodeRecords (attr_offset 14 words): more than one MAD.
	DATA=$(awk 'BEGIN { for (i = 0; i < 336; i++) printf "00" }')
	(
		R=$(first_line "$A/recv" 15)
		[ -n "$R" ] && echo "${R/method=gettable /method=gettableresp } attr_offset=14 data=$DATA NodeRecord[0].Lid=1 NodeRecord[1].Lid=2 NodeRecord[2].Lid=3 NodeRecord[1].Guid=0x1122334455667788 NodeRecord[2].NodeDesc=\"rec \\\"two\\\"\"" >"$A/send"
	) &
	RESP=$!
	sleep 0.5
	echo "class=sa method=gettable attr=NodeRecord lid=0 qp=1 gid=$GID0 gid_index=0 timeout=2000 retries=1 tid=0x56" >"$B/send"
	L=$(first_line "$B/recv" 20)
	wait $RESP
	if [ "$(key "$L" method)" = gettableresp ] &&
	   [ "$(key "$L" 'NodeRecord\[0\]\.Lid')" = 1 ] &&
	   [ "$(key "$L" 'NodeRecord\[1\]\.Guid')" = 0x1122334455667788 ] &&
	   echo "$L" | grep -q ' NodeRecord\[2\]\.NodeDesc="rec \\"two\\"" ' &&
	   [ -z "$(key "$L" 'NodeRecord\[3\]\.Lid')" ]; then
		pass sa-table-fields "three records, len=$(key "$L" len)"
	else
		fail sa-table-fields "$(echo "$L" | cut -c1-600); A: $(cat "$A/last_error" "$A/stats" | tr '\n' ' ') B: $(cat "$B/last_error" | tr '\n' ' ')"
	fi
else
	fail sa-table-fields "register: $(cat "$A/last_error")"
fi
rmdir "$A" "$B"

# ---- a binary server on agents/NAME/umad ----
U=$UMADFS_MNT/$CA/ports/1/agents/umad-server
C=$UMADFS_MNT/$CA/ports/1/agents/umad-client
mkdir "$U" "$C"
if ! command -v umad_pong >/dev/null; then
	skip umad-serves "no umad_pong in the image (build tests/tools)"
elif echo "class=0x32 oui=0x1405 methods=get" >"$U/register"; then
	umad_pong "$U/umad" 3 20 >/tmp/pong.out 2>&1 &
	PONG=$!
	sleep 0.5
	got=0
	for t in 0x61 0x62 0x63; do
		echo "class=0x32 method=get oui=0x1405 lid=0 qp=1 gid=$GID0 gid_index=0 timeout=2000 retries=1 tid=$t" >"$C/send"
		L=$(first_line "$C/recv" 10)
		if [ "$(key "$L" method)" = getresp ] && [ "$(key "$L" tid)" = $t ] &&
		   [ -z "$(key "$L" error)" ]; then
			case "$(key "$L" mad)" in *c0ffee*) got=$((got + 1)) ;; esac
		fi
	done
	wait $PONG
	PONG_RC=$?
	srv=$(tr '\n' ' ' <"$U/stats")
	cli=$(tr '\n' ' ' <"$C/stats")
	case "$srv $cli" in
	"sent 3 received 3 "*"sent 3 received 3 "*) counted=1 ;;
	*) counted=0 ;;
	esac
	if [ $got = 3 ] && [ $PONG_RC = 0 ] && [ $counted = 1 ]; then
		pass umad-serves "3 of 3 answered through umad; stats: $srv"
	else
		fail umad-serves "answered $got of 3; umad_pong: $(tr '\n' ' ' </tmp/pong.out); server: $srv $(cat "$U/last_error"); client: $cli"
	fi
else
	fail umad-serves "register: $(cat "$U/last_error")"
fi
rmdir "$U" "$C"

# ---- a request from GID index 1 times out ----
# GID 1 needs an IPv4 address on the netdev (an IPv4-mapped GID; answers
# to it are never matched): a documentation-range address (RFC 5737) on
# the VM's dummy device, from which no packet leaves the VM.
ip addr add 192.0.2.1/24 dev dummy0 2>/dev/null
i=0
GID1=
while [ $i -lt 20 ]; do
	rd GID1 "$SYSFS_IB/$CA/ports/1/gids/1"
	case "$GID1" in ""|0000:0000:0000:0000:0000:0000:0000:0000) sleep 0.2 ;; *) break ;; esac
	i=$((i + 1))
done
case "$GID1" in
""|0000:0000:0000:0000:0000:0000:0000:0000)
	skip gid1-timeout "no GID at index 1" ;;
*)
	T0=$(date +%s)
	echo "class=perf method=get attr=ClassPortInfo lid=0 qp=1 gid=$GID1 gid_index=1 timeout=500 retries=2 tid=0x99" >"$P/send"
	L=$(first_line "$P/recv" 15)
	T1=$(date +%s)
	if [ "$(key "$L" error)" = timeout ] && [ "$(key "$L" tid)" = 0x99 ] &&
	   [ $((T1 - T0)) -ge 1 ]; then
		pass gid1-timeout "error=timeout after $((T1 - T0)) s (timeout 500 ms x 3)"
	else
		fail gid1-timeout "after $((T1 - T0)) s got [$L]"
	fi
	;;
esac

check_exit
