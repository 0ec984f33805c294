#!/usr/bin/env bash
# The house stays as built: check_rooms.sh finds no include or symbol against the rooms of the
# house as the build lists them (`make print-rooms`: every room of shim/, residency's rooms one
# level down, tools/, planner/, conf/, each with the rooms it may use), and it refuses a
# back-edge planted on purpose in every room: an object that calls a symbol of a room it may not
# use (the nearest such room above it), and a file that includes that room's header. All the
# plants go into one copy of the tree and of the objects, checked in one run that must name
# each of them in its own line and no other.
set -u
source "$(dirname "$0")/../check.sh" # plan, check
root=$(cd "$(dirname "$0")/../.." && pwd)
B="$root/${BUILD:-build}"
mapfile -t rooms < <(make -s -C "$root" --no-print-directory print-rooms)
headers_only=0 # rooms of headers alone: one plant each (an include), not two
for r in "${rooms[@]%%:*}"; do ls "$root/$r"/*.c >/dev/null 2>&1 || headers_only=$((headers_only + 1)); done
plan $((8 + 2 * ${#rooms[@]} - headers_only))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tmp=$work

check "the build lists the rooms of shim/, residency's inside, tools/, planner/ and conf/" \
    bash -c "printf '%s\n' ${rooms[*]} | cut -d: -f1 | sort | tr '\n' ' ' |
        grep -q 'conf planner planner/base planner/rules shim shim/core shim/hooks shim/plan shim/resid shim/resid/budget shim/resid/driver shim/resid/moves shim/resid/pools shim/resid/state shim/trace tools/import tools/planopt tools/report tools/run tools/trace tools/util'"
"$root/tests/house/check_rooms.sh" "$root" "$B" "${rooms[@]}" >"$work/out" 2>&1
rc=$?
cat "$work/out"
check "the build's rooms have no dependency they do not name" [ "$rc" -eq 0 ]
check "every room has objects in this build ($(grep -o '[0-9]* objects' "$work/out"))" \
    bash -c "for r in ${rooms[*]%%:*}; do ls '$root'/\$r/*.c >/dev/null 2>&1 || continue
        ls '$B'/\$r/*.o >/dev/null 2>&1 || exit 1; done"

# A copy of the tree and of the objects, to plant back-edges in.
mkdir -p "$work/src" "$work/obj"
cp -r "$root/shim" "$root/tools" "$root/planner" "$root/conf" "$work/src/"
for r in "${rooms[@]}"; do
    r=${r%%:*}
    mkdir -p "$work/obj/$r"
    ls "$root/$r"/*.c >/dev/null 2>&1 && cp "$B/$r"/*.o "$work/obj/$r/"
done
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >/dev/null 2>&1
check "the copy passes before anything is planted" [ $? -eq 0 ]

# For each room R, the room T it must not use: the nearest room that uses R, directly or through
# others (so that R using T would close a loop), and that R's entry does not name; for a room
# nothing uses (shim_main.c's, the tools' programs), the nearest room it does not name. T must
# have a header and a symbol only it defines. Printed as "R T SYMBOL HEADER FILE".
python3 - "$root" "$B" "${rooms[@]}" >"$work/plants" <<'PY'
import collections, glob, os, subprocess, sys
root, build, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
uses = {e.split(":")[0]: [d for d in e.split(":", 1)[1].split(",") if d] for e in entries}
names = list(uses)
owners = collections.Counter()
syms = {}
for r in names:
    objs = glob.glob(os.path.join(build, r, "*.o"))
    out = subprocess.run(["nm", "--defined-only", "-g"] + objs, capture_output=True, text=True).stdout
    syms[r] = [l.split()[2] for l in out.splitlines() if len(l.split()) == 3 and l.split()[1] == "T"]
    owners.update(set(syms[r]))
def dist(a, b):  # how many steps of "uses" from a reach b, or None
    seen, todo = {a: 0}, [a]
    while todo:
        x = todo.pop(0)
        for y in uses.get(x, []):
            if y not in seen:
                seen[y] = seen[x] + 1
                todo.append(y)
    return seen.get(b)
for r in names:
    def ok(t):
        return (t != r and t not in uses[r] and glob.glob(os.path.join(root, t, "*.h")) and
                any(owners[s] == 1 and s != "main" for s in syms[t]))
    users = sorted((dist(t, r), t) for t in names if ok(t) and dist(t, r))
    others = [t for t in names if ok(t)]
    t = users[0][1] if users else others[0]
    sym = next(s for s in sorted(syms[t]) if owners[s] == 1 and s != "main")
    hdr = sorted(os.path.basename(h) for h in glob.glob(os.path.join(root, t, "*.h")))[0]
    srcs = sorted(os.path.basename(c) for c in glob.glob(os.path.join(root, r, "*.c")))
    if srcs:
        print(r, t, sym, hdr, srcs[0])
    else:  # a room of headers alone: an include in its header, no object to plant
        print(r, t, "-", hdr, sorted(os.path.basename(h) for h in glob.glob(os.path.join(root, r, "*.h")))[0])
PY
expected=0
: >"$work/want"
while read -r r t sym hdr file; do
    echo "#include \"$hdr\"" >>"$work/src/$r/$file"
    echo "$r/$file: includes $hdr of $t (not used by $r)" >>"$work/want"
    expected=$((expected + 1))
    [ "$sym" = - ] && continue
    printf 'void %s(void);\nvoid planted_%d(void);\nvoid planted_%d(void) { %s(); }\n' \
        "$sym" "$expected" "$expected" "$sym" >"$work/planted.c"
    ${CC:-gcc} -c -o "$work/obj/$r/planted.o" "$work/planted.c"
    echo "$r/planted.o: uses $sym of $t (not used by $r)" >>"$work/want"
    expected=$((expected + 1))
done <"$work/plants"
"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" "${rooms[@]}" >"$work/out" 2>&1
rc=$?
while read -r line; do
    check "refused: $line" grep -qxF "$line" "$work/out"
done <"$work/want"
check "the run with every plant fails" [ "$rc" -eq 1 ]
check "... and names the $expected plants and nothing else" \
    grep -qx "check_rooms: .*: $expected against the order" "$work/out"

"$root/tests/house/check_rooms.sh" "$work/src" "$work/obj" tools/run:tools/nowhere >/dev/null 2>&1
check "a dependency that is not a room is a usage error" [ $? -eq 2 ]
"$root/tests/house/check_rooms.sh" "$work/src" "$work/nothing" "${rooms[@]}" >/dev/null 2>&1
check "no objects at all is a usage error, not a pass" [ $? -eq 2 ]
exit $((fails > 0))
