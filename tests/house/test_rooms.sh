#!/usr/bin/env bash
# The house stays as built: check_rooms.sh finds no include or symbol against the order of the
# shim's rooms (shim_main.c, hooks, plan, resid, core, trace) nor against the tools' rooms (the
# report uses the trace reader and util, the importers util, the reader util, the launcher
# none) in this build, and it does find a back-edge planted on purpose: a core object that calls
# the plan room, a core file that includes the hooks' seam, a trace object that calls
# residency, a trace reader object that calls the report, and one importer that includes the
# reader's header.
set -u
source "$(dirname "$0")/../check.sh" # plan; check is this file's
plan 16
root=$(cd "$(dirname "$0")/../.." && pwd)
B="$root/${BUILD:-build}"
rooms=(shim shim/hooks shim/plan shim/resid shim/core shim/trace)
tools_rooms=(tools/run: tools/report:tools/trace,tools/util,tools/planopt
    tools/import:tools/util,tools/planopt tools/trace:tools/util tools/planopt: tools/util:)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {
    local name=$1
    shift
    if "$@"; then echo "ok - $name"; else echo "not ok - $name"; failures=$((failures + 1)); fi
}

"$root/tests/house/check_rooms.sh" "$root" "$B" "${rooms[@]}" >"$work/out" 2>&1
rc=$?
cat "$work/out"
check "the build's rooms have no dependency against the order" [ "$rc" -eq 0 ]
check "every room has objects in this build ($(grep -o '[0-9]* objects' "$work/out"))" \
    bash -c "for r in ${rooms[*]}; do ls '$B'/\$r/*.o >/dev/null 2>&1 || exit 1; done"
"$root/tests/house/check_rooms.sh" "$root" "$B" "${tools_rooms[@]}" >"$work/out" 2>&1
rc=$?
cat "$work/out"
check "the tools' rooms have no dependency they do not name" [ "$rc" -eq 0 ]

# A copy of the tree and of the objects, to plant back-edges in.
mkdir -p "$work/src" "$work/obj"
cp -r "$root/shim" "$root/tools" "$work/src/"
for r in "${rooms[@]}" "${tools_rooms[@]}"; do
    r=${r%%:*}
    mkdir -p "$work/obj/$r"
    cp "$B/$r"/*.o "$work/obj/$r/"
done
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >/dev/null 2>&1
check "the copy passes before anything is planted" [ $? -eq 0 ]

# planted_call ROOM OWNER SYMBOL ROOMS...: an object planted in ROOM of the copy that calls
# SYMBOL (defined in OWNER) is refused by check_rooms.sh over ROOMS, in one line that names it.
planted_call() {
    local room=$1 owner=$2 sym=$3
    shift 3
    printf 'void %s(void);\nvoid planted(void);\nvoid planted(void) { %s(); }\n' "$sym" "$sym" \
        >"$work/planted.c"
    ${CC:-gcc} -c -o "$work/obj/$room/planted.o" "$work/planted.c"
    "$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "$@" >"$work/out" 2>&1
    local rc=$?
    rm "$work/obj/$room/planted.o"
    check "an object of $room calling $sym of $owner is refused" [ "$rc" -eq 1 ]
    check "... in one line naming the object, the symbol and its room" \
        grep -qxF "$room/planted.o: uses $sym of $owner (not used by $room)" "$work/out"
}
# planted_include FILE HEADER OWNER ROOMS...: FILE of the copy (ROOM/NAME.c) including HEADER
# (OWNER's) is refused in one line that names it; FILE is left so.
planted_include() {
    local file=$1 header=$2 owner=$3
    shift 3
    echo "#include \"$header\"" >>"$work/src/$file"
    "$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "$@" >"$work/out" 2>&1
    local rc=$?
    check "$file including $header of $owner is refused" [ "$rc" -eq 1 ]
    check "... in one line naming the file, the header and its room" \
        grep -qxF "$file: includes $header of $owner (not used by ${file%/*})" "$work/out"
}
planted_call shim/core shim/plan shim_plan_steady "${rooms[@]}"
planted_call shim/trace shim/resid shim_resid_started "${rooms[@]}"
planted_include shim/core/shim_steps.c shim_hooks.h shim/hooks "${rooms[@]}"
# The tools: the reader calling the report, an importer including the reader's header (rooms
# side by side).
planted_call tools/trace tools/report report_summary_main "${tools_rooms[@]}"
planted_include tools/import/import_json.c report_trace.h tools/trace "${tools_rooms[@]}"
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" tools/run:tools/nowhere >/dev/null 2>&1
check "a dependency that is not a room is a usage error" [ $? -eq 2 ]

"$root/tests/house/check_rooms.sh" "$work/src" "$work/nothing" "${rooms[@]}" >/dev/null 2>&1
check "no objects at all is a usage error, not a pass" [ $? -eq 2 ]
exit $((failures > 0))
