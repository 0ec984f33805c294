#!/usr/bin/env bash
# check_rooms.sh — keeps the house as built: no include and no link dependency runs against the
# order of the rooms.
#
#   check_rooms.sh SRC_ROOT OBJ_ROOT ROOM...
#
# ROOMs are folders relative to SRC_ROOT, listed from the top of the dependency order to the
# bottom: a room may use itself and the rooms after it, never one before it. A room's files are
# the ones directly inside its folder (not its subfolders): so `shim` (shim/shim_main.c, which
# may see everything) stands above `shim/hooks`, `shim/plan`, ... Two checks:
#   includes: every #include "NAME" in a room's .c and .h files that names a header of another
#             room must name one of a room after it;
#   symbols:  every undefined symbol of a room's objects (OBJ_ROOT/ROOM/*.o, nm -u) that another
#             room's objects define must be defined by a room after it.
# Prints one line per violation ("FILE: includes NAME of ROOM (above ROOM)"), then a summary;
# exits 1 on any violation, 2 on a usage error (a missing folder, no objects at all).
set -u
if [ $# -lt 3 ]; then
    echo "usage: check_rooms.sh SRC_ROOT OBJ_ROOT ROOM..." >&2
    exit 2
fi
src=$1 obj=$2
shift 2
rooms=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Headers and defined symbols, each with the index of the room that owns it.
: >"$work/headers"
: >"$work/defs"
nobj=0
for i in "${!rooms[@]}"; do
    r=${rooms[$i]}
    if [ ! -d "$src/$r" ]; then
        echo "check_rooms: $src/$r: no such room folder" >&2
        exit 2
    fi
    for h in "$src/$r"/*.h; do
        [ -e "$h" ] && echo "$(basename "$h") $i" >>"$work/headers"
    done
    for o in "$obj/$r"/*.o; do
        [ -e "$o" ] || continue
        nobj=$((nobj + 1))
        nm --defined-only -g "$o" | awk -v i="$i" 'NF == 3 { print $3, i }' >>"$work/defs"
    done
done
if [ "$nobj" -eq 0 ]; then
    echo "check_rooms: no objects under $obj for rooms ${rooms[*]} (build first)" >&2
    exit 2
fi

violations=0
report() {
    echo "$1"
    violations=$((violations + 1))
}
for i in "${!rooms[@]}"; do
    r=${rooms[$i]}
    for f in "$src/$r"/*.c "$src/$r"/*.h; do
        [ -e "$f" ] || continue
        while read -r name; do
            j=$(awk -v n="$name" '$1 == n { print $2; exit }' "$work/headers")
            if [ -n "$j" ] && [ "$j" -lt "$i" ]; then
                report "$r/$(basename "$f"): includes $name of ${rooms[$j]} (above $r)"
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
    for o in "$obj/$r"/*.o; do
        [ -e "$o" ] || continue
        while read -r sym j; do
            report "$r/$(basename "$o"): uses $sym of ${rooms[$j]} (above $r)"
        done < <(nm -u "$o" | awk '{ print $NF }' |
            awk -v i="$i" 'NR == FNR { room[$1] = $2; next } ($1 in room) && room[$1] < i { print $1, room[$1] }' \
                "$work/defs" -)
    done
done
echo "check_rooms: ${#rooms[@]} rooms (${rooms[*]}), $nobj objects: $violations against the order"
[ "$violations" -eq 0 ]
