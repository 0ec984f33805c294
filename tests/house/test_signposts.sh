#!/usr/bin/env bash
# The signposts are true: check_signposts.py finds, in the checkout, no heading over a function
# its file does not define, no comment citing a file the repository lacks and no comment citing
# one of our names that no code uses; and it does find each of them planted in a copy: a
# heading over another file's function, a path and a bare file name that do not exist, a
# function name no code has. A file cited with its owner ("NCCL's src/include/alloc.h") and a
# placeholder (test_NAME.sh) are not findings.
set -u
source "$(dirname "$0")/../check.sh" # plan, check
plan 10
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tmp=$work

python3 "$root/tests/house/check_signposts.py" "$root" >"$work/out" 2>&1
rc=$?
cat "$work/out"
check "the checkout's signposts are true ($(tail -n 1 "$work/out"))" [ "$rc" -eq 0 ]

# A small house to plant in: a header whose heading names the file that defines what it heads.
mkdir -p "$work/h/room"
cd "$work/h" || exit 1
git init -q .
cat >room/room_a.c <<'EOF'
/* room_a.c — defines shim_room_one. */
int shim_room_one(void) { return 1; }
EOF
cat >room/room_b.c <<'EOF'
/* room_b.c — defines shim_room_two; see room_a.c and room/room_a.c, NCCL's src/include/alloc.h, tests/test_NAME.sh. */
int shim_room_two(void) { return 2; }
EOF
cat >room/room.h <<'EOF'
/* room.h — the room's seam. */
/* room_a.c */
/* One. */
int shim_room_one(void);
/* room_b.c — two */
int shim_room_two(void);
EOF
git add -A >/dev/null
python3 "$root/tests/house/check_signposts.py" . >"$work/clean" 2>&1
check "a true house has no finding ($(tail -n 1 "$work/clean"))" [ $? -eq 0 ]

sed -i 's|^/\* room_b.c — two \*/|/* room_a.c — two */|' room/room.h
python3 "$root/tests/house/check_signposts.py" . >"$work/out" 2>&1
check "a heading over another file's function is refused" [ $? -eq 1 ]
check "... naming the line, the heading and the function" \
    grep -q "^room/room.h:6: heading: room_a.c (line 5) heads shim_room_two, which room_a.c does not define" "$work/out"
git checkout -q room/room.h

echo '/* As room/room_c.c does, and room_d.h. */' >>room/room_a.c
python3 "$root/tests/house/check_signposts.py" . >"$work/out" 2>&1
check "a comment citing files the repository lacks is refused" [ $? -eq 1 ]
check "... the path" grep -q "^room/room_a.c:3: file: cites room/room_c.c, which the repository lacks" "$work/out"
check "... and the bare name" grep -q "^room/room_a.c:3: file: cites room_d.h, which the repository lacks" "$work/out"
git checkout -q room/room_a.c

echo '/* Called by shim_room_three, which no code has. */' >>room/room_a.c
python3 "$root/tests/house/check_signposts.py" . >"$work/out" 2>&1
check "a comment citing a name no code uses is refused" [ $? -eq 1 ]
check "... naming it" grep -q "^room/room_a.c:3: name: cites shim_room_three, which no code uses" "$work/out"
git checkout -q room/room_a.c

python3 "$root/tests/house/check_signposts.py" /nonexistent >/dev/null 2>&1
check "a root that is not a folder is a usage error" [ $? -eq 2 ]
exit $((fails > 0))
