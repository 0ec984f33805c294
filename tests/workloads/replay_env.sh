# replay_env.sh — shell helpers shared by the replay tests (tests/workloads/test_replay*.sh): runs
# kept by name in $work, and the figures read from them.

# run NAME CMD...: the command under a timeout of $RUN_TIMEOUT seconds (120 unless set), its
# output in $work/NAME.out, .err, the simulator's stats in .json, its status in .rc.
run() {
    local name=$1
    shift
    SIMGPU_STATS="$work/$name.json" timeout -k 5 "${RUN_TIMEOUT:-120}" "$@" \
        >"$work/$name.out" 2>"$work/$name.err"
    echo $? >"$work/$name.rc"
}
# rc, sum, field, stat NAME [KEY]: run NAME's status, checksum, KEY=VALUE of its output, and KEY of
# its stats ('' when it left none).
rc() { cat "$work/$1.rc"; }
sum() { sed -n 's/^checksum=\([0-9a-f]\{16\}\)$/\1/p' "$work/$1.out" | tail -n 1; }
field() { grep -o "$2=[^ ]*" "$work/$1.out" | tail -n 1 | cut -d= -f2; }
stat() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/$1.json" "$2" 2>/dev/null; }

# replay_rounded MODEL OUT: MODEL with every allocation's size as the simulated device holds it
# (tests/simgpu/simgpu_alloc.c, rounded(): up to 2 MiB from 2 MiB on, else to 4 KiB pages), in
# plain bytes; sizes with a unit are read as planner/MODEL-FORMAT.md reads them (K, Ki, KiB ...:
# powers of 1024; KB ...: powers of 1000; B: bytes).
replay_rounded() {
    awk '
    function bytes(s, i, n, u, p) {
        i = match(s, /[A-Za-z]/)
        if (!i)
            return s + 0
        n = substr(s, 1, i - 1) + 0
        u = toupper(substr(s, i))
        p = index("KMGTP", substr(u, 1, 1))
        if (u == "B")
            return int(n)
        return int(n * (u ~ /^[KMGTP]B$/ ? 1000 : 1024) ^ p)
    }
    $1 == "alloc" {
        b = bytes($2)
        g = b >= 2097152 ? 2097152 : 4096
        $2 = sprintf("%.0f", int((b + g - 1) / g) * g)
    }
    { print }' "$1" >"$2"
}
