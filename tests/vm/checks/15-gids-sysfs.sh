#!/bin/sh
# gids-sysfs: each port's gids/ equals the kernel's: the same entries (the
# table's length), gids/0 byte for byte, and every entry's line (one cat of
# each side: a fork an entry is dear under TCG, and rxe's table is long).
#
# Results: gids-sysfs/<ca>/ports/<n>/gids/0, gids-sysfs/<ca>/ports/<n>/gids
. /lib/umadfs-vm/checklib.sh

n=0
for ca in $(cas); do
	for p in $(ports "$ca"); do
		n=$((n + 1))
		rel=$ca/ports/$p/gids
		u=$UMADFS_MNT/$rel s=$SYSFS_IB/$rel
		cmp_file "$rel/0" "$u/0" "$s/0"
		ul=$(ls "$u" 2>/dev/null | sort -n | tr '\n' ' ')
		sl=$(ls "$s" 2>/dev/null | sort -n | tr '\n' ' ')
		if [ "$ul" != "$sl" ]; then
			fail "$rel" "entries differ: umadfs [$(echo $ul | wc -w)] sysfs [$(echo $sl | wc -w)]"
			continue
		fi
		ut= st=
		for i in $ul; do ut="$ut $u/$i" st="$st $s/$i"; done
		# shellcheck disable=SC2086
		ua=$(cat $ut 2>&1) sa=$(cat $st 2>&1)
		if [ "$ua" = "$sa" ]; then
			pass "$rel" "$(echo $ul | wc -w) entries equal"
		else
			fail "$rel" "differ: umadfs [$(echo "$ua" | head -c 200)] sysfs [$(echo "$sa" | head -c 200)]"
		fi
	done
done
[ $n -gt 0 ] || fail ports "no port in $SYSFS_IB"
check_exit
