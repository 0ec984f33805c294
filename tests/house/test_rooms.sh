#!/usr/bin/env bash
# The house stays as built: check_rooms.sh finds no include or symbol against the order of the
# shim's rooms (shim_main.c, hooks, plan, resid, core, trace) nor against the tools' rooms (the
# report uses the trace reader and util, the importers util, the reader util, the launcher
# none) in this build, and it does find a back-edge planted on purpose: a core object that calls
# the plan room, a core file that includes the hooks' seam, a trace object that calls
# residency, a trace reader object that calls the report, and one importer that includes the
# reader's header.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
B="$root/${BUILD:-build}"
rooms=(shim shim/hooks shim/plan shim/resid shim/core shim/trace)
tools_rooms=(tools/run: tools/report:tools/trace,tools/util tools/import:tools/util
    tools/trace:tools/util tools/util:)
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
    grep -q '^shim/core/planted_core.o: uses shim_plan_steady of shim/plan (not used by shim/core)$' "$work/out"
rm "$work/obj/shim/core/planted_core.o"

printf 'int shim_resid_started(void);\nint planted_trace(void);\nint planted_trace(void) { return shim_resid_started(); }\n' \
    >"$work/trace_calls_resid.c"
plant planted_trace "$work/trace_calls_resid.c" shim/trace
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >"$work/out" 2>&1
check "a trace object calling residency is refused" \
    grep -q '^shim/trace/planted_trace.o: uses shim_resid_started of shim/resid (not used by shim/trace)$' "$work/out"
rm "$work/obj/shim/trace/planted_trace.o"

echo '#include "shim_hooks.h"' >>"$work/src/shim/core/shim_steps.c"
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >"$work/out" 2>&1
rc=$?
check "a core file including the hooks' seam is refused" [ "$rc" -eq 1 ]
check "... naming the file, the header and its room" \
    grep -q '^shim/core/shim_steps.c: includes shim_hooks.h of shim/hooks (not used by shim/core)$' "$work/out"

# The tools: the reader calling the report, an importer including the reader's header.
printf 'int report_summary_main(int, char **);\nint planted_reader(void);\nint planted_reader(void) { return report_summary_main(0, 0); }\n' \
    >"$work/reader_calls_report.c"
plant planted_reader "$work/reader_calls_report.c" tools/trace
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${tools_rooms[@]}" >"$work/out" 2>&1
rc=$?
check "a trace reader object calling the report is refused" [ "$rc" -eq 1 ]
check "... naming the object, the symbol and the room" \
    grep -q '^tools/trace/planted_reader.o: uses report_summary_main of tools/report (not used by tools/trace)$' "$work/out"
rm "$work/obj/tools/trace/planted_reader.o"
echo '#include "report_trace.h"' >>"$work/src/tools/import/import_json.c"
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${tools_rooms[@]}" >"$work/out" 2>&1
check "an importer including the trace reader's header is refused (rooms side by side)" \
    grep -q '^tools/import/import_json.c: includes report_trace.h of tools/trace (not used by tools/import)$' "$work/out"
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" tools/run:tools/nowhere >/dev/null 2>&1
check "a dependency that is not a room is a usage error" [ $? -eq 2 ]

"$root/tests/house/check_rooms.sh" "$work/src" "$work/nothing" "${rooms[@]}" >/dev/null 2>&1
check "no objects at all is a usage error, not a pass" [ $? -eq 2 ]
exit $((failures > 0))
