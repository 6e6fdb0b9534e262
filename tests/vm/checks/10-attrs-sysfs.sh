#!/bin/sh
# attrs-sysfs: every CA and port attribute file umadfs shows equals the
# kernel's own sysfs file of the same name, byte for byte.
#
# Results: attrs-sysfs/<ca>/<file> and attrs-sysfs/<ca>/ports/<n>/<file>
# (pkeys: attrs-sysfs/<ca>/ports/<n>/pkeys, one result for the whole table).
. /lib/umadfs-vm/checklib.sh

CA_FILES="node_type node_guid sys_image_guid fw_ver hw_rev hca_type"
PORT_FILES="state phys_state rate lid sm_lid lid_mask_count sm_sl cap_mask link_layer"
# umadfs-only files (no sysfs peer); compared by other checks
EXTRA="ca_name num_ports port_guid gid_prefix port_num"

# compare_dir REL EXPECTED: REL is a directory under both trees
compare_dir() {
	rel=$1 expected=$2
	names=$( { for f in $expected; do echo "$f"; done
		   for f in "$UMADFS_MNT/$rel"/*; do [ -f "$f" ] && echo "${f##*/}"; done; } | sort -u)
	for f in $names; do
		case " $EXTRA " in *" $f "*) continue ;; esac
		u=$UMADFS_MNT/$rel/$f s=$SYSFS_IB/$rel/$f
		case " $expected " in
		*" $f "*) ;;
		*) [ -e "$s" ] || continue ;;   # umadfs's own file, no peer: not ours
		esac
		if [ ! -e "$u" ]; then
			fail "$rel/$f" "umadfs lacks $f (sysfs: [$(show "$s")])"
		elif [ ! -e "$s" ]; then
			skip "$rel/$f" "no sysfs file $s"
		else
			cmp_file "$rel/$f" "$u" "$s"
		fi
	done
}

n=0
for ca in $(cas); do
	n=$((n + 1))
	compare_dir "$ca" "$CA_FILES"
	for p in $(ports "$ca"); do
		compare_dir "$ca/ports/$p" "$PORT_FILES"
		# P_Key table: same entries, same contents
		u=$UMADFS_MNT/$ca/ports/$p/pkeys s=$SYSFS_IB/$ca/ports/$p/pkeys
		ul=$(ls "$u" 2>/dev/null | sort -n | tr '\n' ' ')
		sl=$(ls "$s" 2>/dev/null | sort -n | tr '\n' ' ')
		if [ "$ul" != "$sl" ]; then
			fail "$ca/ports/$p/pkeys" "entries differ: umadfs [$ul] sysfs [$sl]"
		else
			bad=
			for i in $ul; do cmp -s "$u/$i" "$s/$i" || bad="$bad $i:[$(show "$u/$i")]vs[$(show "$s/$i")]"; done
			if [ -z "$bad" ]; then pass "$ca/ports/$p/pkeys" "$(echo $ul | wc -w) entries equal"
			else fail "$ca/ports/$p/pkeys" "differ:$bad"; fi
		fi
	done
	# umadfs shows the same ports as sysfs
	eq "$ca/ports" "$(ls "$UMADFS_MNT/$ca/ports" 2>/dev/null | sort -n | tr '\n' ' ')" \
		"$(ports "$ca" | tr '\n' ' ')" "port list"
done
# umadfs shows the same CAs as sysfs
# The root holds one directory per CA, and fabric/ (the fabric view).
eq cas "$(ls "$UMADFS_MNT" | sort | tr '\n' ' ')" "$( (cas; echo fabric) | sort | tr '\n' ' ')" "CA list and fabric/"
[ $n -gt 0 ] || fail cas "no CA in $SYSFS_IB"
check_exit
