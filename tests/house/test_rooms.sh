#!/usr/bin/env bash
# The house stays as built: check_rooms.sh finds no include or symbol against the order of the
# shim's rooms (shim_main.c, hooks, plan, resid, core, trace) in this build, and it does find a
# back-edge planted on purpose: a core object that calls the plan room, a core file that
# includes the hooks' seam, and a trace object that calls residency.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
B="$root/${BUILD:-build}"
rooms=(shim shim/hooks shim/plan shim/resid shim/core shim/trace)
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

# A copy of the tree and of the objects, to plant back-edges in.
mkdir -p "$work/src" "$work/obj"
cp -r "$root/shim" "$work/src/"
for r in "${rooms[@]}"; do
    mkdir -p "$work/obj/$r"
    cp "$B/$r"/*.o "$work/obj/$r/"
done
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >/dev/null 2>&1
check "the copy passes before anything is planted" [ $? -eq 0 ]

# plant NAME FILE.c ROOM: compiles FILE.c into ROOM's objects of the copy
plant() {
    ${CC:-gcc} -c -o "$work/obj/$3/$1.o" "$2"
}
printf 'void shim_plan_steady(void);\nvoid planted_core(void);\nvoid planted_core(void) { shim_plan_steady(); }\n' \
    >"$work/core_calls_plan.c"
plant planted_core "$work/core_calls_plan.c" shim/core
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >"$work/out" 2>&1
rc=$?
check "a core object calling the plan room is refused" [ "$rc" -eq 1 ]
check "... naming the object, the symbol and the room" \
    grep -q '^shim/core/planted_core.o: uses shim_plan_steady of shim/plan (above shim/core)$' "$work/out"
rm "$work/obj/shim/core/planted_core.o"

printf 'int shim_resid_started(void);\nint planted_trace(void);\nint planted_trace(void) { return shim_resid_started(); }\n' \
    >"$work/trace_calls_resid.c"
plant planted_trace "$work/trace_calls_resid.c" shim/trace
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >"$work/out" 2>&1
check "a trace object calling residency is refused" \
    grep -q '^shim/trace/planted_trace.o: uses shim_resid_started of shim/resid (above shim/trace)$' "$work/out"
rm "$work/obj/shim/trace/planted_trace.o"

echo '#include "shim_hooks.h"' >>"$work/src/shim/core/shim_steps.c"
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >"$work/out" 2>&1
rc=$?
check "a core file including the hooks' seam is refused" [ "$rc" -eq 1 ]
check "... naming the file, the header and its room" \
    grep -q '^shim/core/shim_steps.c: includes shim_hooks.h of shim/hooks (above shim/core)$' "$work/out"

"$root/tests/house/check_rooms.sh" "$work/src" "$work/nothing" "${rooms[@]}" >/dev/null 2>&1
check "no objects at all is a usage error, not a pass" [ $? -eq 2 ]
exit $((failures > 0))
