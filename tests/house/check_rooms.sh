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

# Headers and defined symbols, each with the index of the room that owns it; every room's
# includes ("IDX FILE HEADER") and undefined symbols ("IDX OBJECT SYMBOL"). One nm and one awk per
# room, not per file: the whole house is read in about a second.
: >"$work/headers"
: >"$work/defs"
: >"$work/incs"
: >"$work/undef"
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
    files=()
    for f in "$src/$r"/*.c "$src/$r"/*.h; do [ -e "$f" ] && files+=("$f"); done
    [ ${#files[@]} -gt 0 ] &&
        awk -v i="$i" -v r="$r" 'match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"]*"/) {
                h = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", h); sub(/"$/, "", h)
                n = split(FILENAME, p, "/"); print i, r "/" p[n], h }' "${files[@]}" >>"$work/incs"
    objs=()
    for o in "$obj/$r"/*.o; do [ -e "$o" ] && objs+=("$o"); done
    [ ${#objs[@]} -eq 0 ] && continue
    nobj=$((nobj + ${#objs[@]}))
    nm -A --defined-only -g "${objs[@]}" | awk -v i="$i" 'NF == 3 { print $3, i }' >>"$work/defs"
    nm -A -u "${objs[@]}" | awk -v i="$i" -v r="$r" '{ f = $1; sub(/:.*/, "", f)
        n = split(f, p, "/"); print i, r "/" p[n], $NF }' >>"$work/undef"
done
if [ "$nobj" -eq 0 ]; then
    echo "check_rooms: no objects under $obj for rooms ${rooms[*]} (build first)" >&2
    exit 2
fi

# The violations: an include of another room's header, or a use of another room's symbol, that
# the room may not use (a name owned by several rooms belongs to the first listed).
awk -v names="${rooms[*]}" '
    BEGIN { split(names, room, " ") }
    FILENAME == ARGV[1] { may[$1 " " $2] = 1; next }
    FILENAME == ARGV[2] { if (!($1 in hdr)) hdr[$1] = $2; next }
    FILENAME == ARGV[3] { if (!($1 in def)) def[$1] = $2; next }
    FILENAME == ARGV[4] { if (($3 in hdr) && !(($1 " " hdr[$3]) in may))
                              print $2 ": includes " $3 " of " room[hdr[$3] + 1] \
                                  " (not used by " room[$1 + 1] ")"
                          next }
    { if (($3 in def) && !(($1 " " def[$3]) in may))
          print $2 ": uses " $3 " of " room[def[$3] + 1] " (not used by " room[$1 + 1] ")" }
' "$work/may" "$work/headers" "$work/defs" "$work/incs" "$work/undef" >"$work/violations"
cat "$work/violations"
violations=$(wc -l <"$work/violations")
echo "check_rooms: ${#rooms[@]} rooms (${rooms[*]}), $nobj objects: $violations against the order"
[ "$violations" -eq 0 ]
