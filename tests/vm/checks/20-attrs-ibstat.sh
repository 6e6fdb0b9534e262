#!/bin/sh
# attrs-ibstat: umadfs's files agree with what `ibstat CA` prints (a second
# peer besides sysfs; formats differ, so values are normalised first).
# ibstat reads sysfs through libibumad, as the daemon does with attrs=sysfs.
#
# Results: attrs-ibstat/<ca>/<file>, attrs-ibstat/<ca>/ports/<n>/<file>.
. /lib/umadfs-vm/checklib.sh

command -v ibstat >/dev/null || { skip ibstat "no ibstat in the image"; exit 0; }

# ibstat's "Label: value" lines as shell assignments: CA fields as ca_<key>,
# port N's as pN_<key>, keys being the labels in lowercase with _ for blanks.
parse_ibstat() {
	awk '
	/^[ \t]*Port [0-9]+:/ { p = $2; sub(":", "", p); next }
	/:/ {
		i = index($0, ":"); k = substr($0, 1, i - 1); v = substr($0, i + 1)
		gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v)
		k = tolower(k); gsub(/[^a-z0-9]+/, "_", k)
		gsub(/\047/, "", v)
		printf "%s_%s=\047%s\047\n", (p == "" ? "ca" : "p" p), k, v
	}'
}
# guid VAR: "0x0123..." or "0123:4567:89ab:cdef" -> 16 hex digits, in place
guid() { eval "_g=\$$1"; _g=${_g#0x}; _g=${_g//:/}; eval "$1=\$_g"; }
# num VAR: a decimal or 0x number -> decimal, in place
num() { eval "[ -n \"\$$1\" ] && $1=\$((\$$1))"; return 0; }
# lead VAR SEP: keep what comes before the first SEP
lead() { eval "$1=\${$1%%$2*}"; }

state_num() {
	case $1 in Down) s=1 ;; Initializing) s=2 ;; Armed) s=3 ;; Active) s=4 ;; *) s="?$1" ;; esac
}
phys_num() {
	case $1 in Sleep) s=1 ;; Polling) s=2 ;; Disabled) s=3 ;;
	PortConfigurationTraining) s=4 ;; LinkUp) s=5 ;; LinkErrorRecovery) s=6 ;;
	PhyTest) s=7 ;; *) s="?$1" ;; esac
}

for ca in $(cas); do
	if ! ibstat "$ca" >/tmp/ibstat.out 2>&1; then
		fail "$ca/ibstat" "ibstat $ca failed: $(cat /tmp/ibstat.out)"
		continue
	fi
	eval "$(parse_ibstat </tmp/ibstat.out)"
	m=$UMADFS_MNT/$ca
	rd v $m/hca_type;  eq "$ca/hca_type" "$v" "$ca_ca_type"
	rd v $m/num_ports; eq "$ca/num_ports" "$v" "$ca_number_of_ports"
	rd v $m/fw_ver;    eq "$ca/fw_ver" "$v" "$ca_firmware_version"
	rd v $m/hw_rev;    eq "$ca/hw_rev" "$v" "$ca_hardware_version"
	rd v $m/node_guid; guid v; w=$ca_node_guid; guid w; eq "$ca/node_guid" "$v" "$w"
	rd v $m/sys_image_guid; guid v; w=$ca_system_image_guid; guid w
	eq "$ca/sys_image_guid" "$v" "$w"
	for p in $(ports "$ca"); do
		pm=$m/ports/$p r=$ca/ports/$p
		eval "st=\$p${p}_state ph=\$p${p}_physical_state rate=\$p${p}_rate \
			lid=\$p${p}_base_lid smlid=\$p${p}_sm_lid lmc=\$p${p}_lmc \
			cap=\$p${p}_capability_mask pg=\$p${p}_port_guid ll=\$p${p}_link_layer"
		rd v $pm/state; lead v :; state_num "$st"; eq "$r/state" "$v" "$s" "'$st'"
		rd v $pm/phys_state; lead v :; phys_num "$ph"; eq "$r/phys_state" "$v" "$s" "'$ph'"
		rd v $pm/rate; lead v ' '; eq "$r/rate" "$v" "$rate"
		rd v $pm/lid; num v; num lid; eq "$r/lid" "$v" "$lid"
		rd v $pm/sm_lid; num v; num smlid; eq "$r/sm_lid" "$v" "$smlid"
		rd v $pm/lid_mask_count; eq "$r/lid_mask_count" "$v" "$lmc"
		rd v $pm/cap_mask; num v; num cap; eq "$r/cap_mask" "$v" "$cap"
		rd v $pm/port_guid; guid v; guid pg; eq "$r/port_guid" "$v" "$pg"
		rd v $pm/link_layer; eq "$r/link_layer" "$v" "$ll"
	done
done
check_exit
