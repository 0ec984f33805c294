# replay_env.sh — shell helpers shared by tests/workloads/test_replay.sh and tests/bench/real_bench.sh.

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
