#!/bin/sh
# port-summary.sh: one line per port of every CA under a umadfs mount.
#
# usage: port-summary.sh MNT
#
#   MNT   the umadfs mount point (e.g. /run/umadfs)
#
# Prints a header, then for each CA and port:
#   ca port state lid sm_lid rate link_layer
# from the port's attribute files (state and rate as the kernel words
# them: "ACTIVE", "10 Gb/sec (4X SDR)").  Attribute files are readable
# by every user; plain POSIX sh.
set -eu
if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,/^set/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
fi
MNT=$1
printf '%-10s %4s %-12s %6s %6s %-22s %s\n' \
    ca port state lid sm_lid rate link_layer
for ca in "$MNT"/*/; do
    ca=${ca%/}
    for p in "$ca"/ports/*/; do
        p=${p%/}
        [ -r "$p/state" ] || continue
        state=$(cat "$p/state")
        printf '%-10s %4s %-12s %6s %6s %-22s %s\n' \
            "${ca##*/}" "${p##*/}" "${state#*: }" "$(cat "$p/lid")" \
            "$(cat "$p/sm_lid")" "$(cat "$p/rate")" "$(cat "$p/link_layer")"
    done
done
