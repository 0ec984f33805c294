#!/usr/bin/env bash
# check_rooms.sh — keeps the house as built: no include and no link dependency runs against the
# order of the rooms.
#
#   check_rooms.sh SRC_ROOT OBJ_ROOT ROOM...
#
# ROOMs are folders relative to SRC_ROOT, listed from the top of the dependency order to the
# bottom. A room written DIR may use itself and the rooms after it, never one before it (an
# order); a room written DIR:DEP,DEP... may use itself and exactly the rooms it names (rooms
# side by side, such as tools/report and tools/import; DIR: alone uses none). A room's files are
# the ones directly inside its folder (not its subfolders): so `shim` (shim/shim_main.c, which
# may see everything) stands above `shim/hooks`, `shim/plan`, ... Two checks:
#   includes: every #include "NAME" in a room's .c and .h files that names a header of another
#             room must name one of a room it may use;
#   symbols:  every undefined symbol of a room's objects (OBJ_ROOT/ROOM/*.o, nm -u) that another
#             room's objects define must be defined by a room it may use.
# Prints one line per violation ("FILE: includes NAME of ROOM (not used by ROOM)"), then a
# summary; exits 1 on any violation, 2 on a usage error (a missing folder, a room named as a
# dependency that is not listed, no objects at all).
set -u
if [ $# -lt 3 ]; then
    echo "usage: check_rooms.sh SRC_ROOT OBJ_ROOT ROOM..." >&2
    exit 2
fi
src=$1 obj=$2
shift 2
rooms=() deps=()
for arg in "$@"; do
    rooms+=("${arg%%:*}")
    case $arg in *:*) deps+=("${arg#*:}") ;; *) deps+=("-") ;; esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# may I J: whether room I may use room J (as indices).
: >"$work/may"
for i in "${!rooms[@]}"; do
    for j in "${!rooms[@]}"; do
        if [ "$i" -eq "$j" ]; then
            echo "$i $j" >>"$work/may"
        elif [ "${deps[$i]}" = "-" ]; then
            [ "$j" -gt "$i" ] && echo "$i $j" >>"$work/may"
        else
            case ",${deps[$i]}," in *",${rooms[$j]},"*) echo "$i $j" >>"$work/may" ;; esac
        fi
    done
    if [ "${deps[$i]}" != "-" ]; then
        IFS=, read -r -a named <<<"${deps[$i]}"
        for d in "${named[@]}"; do
            case " ${rooms[*]} " in *" $d "*) ;; *)
                echo "check_rooms: ${rooms[$i]} names $d, which is not a room here" >&2
                exit 2
                ;;
            esac
        done
    fi
done

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
        while read -r name j; do
            report "$r/$(basename "$f"): includes $name of ${rooms[$j]} (not used by $r)"
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
            awk -v i="$i" 'FILENAME == ARGV[1] { may[$1 " " $2] = 1; next }
                           FILENAME == ARGV[2] { if (!($1 in room)) room[$1] = $2; next }
                           ($1 in room) && !((i " " room[$1]) in may) { print $1, room[$1] }' \
                "$work/may" "$work/headers" -)
    done
    for o in "$obj/$r"/*.o; do
        [ -e "$o" ] || continue
        while read -r sym j; do
            report "$r/$(basename "$o"): uses $sym of ${rooms[$j]} (not used by $r)"
        done < <(nm -u "$o" | awk '{ print $NF }' |
            awk -v i="$i" 'FILENAME == ARGV[1] { may[$1 " " $2] = 1; next }
                           FILENAME == ARGV[2] { if (!($1 in room)) room[$1] = $2; next }
                           ($1 in room) && !((i " " room[$1]) in may) { print $1, room[$1] }' \
                "$work/may" "$work/defs" -)
    done
done
echo "check_rooms: ${#rooms[@]} rooms (${rooms[*]}), $nobj objects: $violations against the order"
[ "$violations" -eq 0 ]
