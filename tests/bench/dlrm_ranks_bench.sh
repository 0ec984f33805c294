#!/usr/bin/env bash
# tests/bench/dlrm_ranks_bench.sh — the DLRM job's ranks replayed under libshim (not a test:
# `make bench-dlrm-ranks`): ranks 0-3 of ../shared/traces, imported (shim-plan --import et ET
# --kineto KINETO), and the ranks derived from each that the job could have had
# (tests/bench/dlrm_variants.py: rows0.5, rows1.5, rowwise, reads4), and the control that keeps
# the optimizer state one row short of its table (apart, of each rank and of its reads4), run
# by tests/bench/real_bench.sh at REAL_BENCH_BUDGETS (default 75) of each native peak. Prints
# real_bench's table, then the spread of libshim against the offline prediction over the ranks
# and over the controls: against the plan, and against the plan as host_resident (by size)
# carries it out. Models are written to a temporary folder, never kept.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
traces=${SHARED:-$root/../shared}/traces
if [ ! -d "$traces" ]; then
    echo "dlrm_ranks_bench: $traces is absent: no ranks to replay" >&2
    exit 1
fi
make -s build/shim-plan
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ranks" "$work/derived" "$work/control"
for r in 0 1 2 3; do
    build/shim-plan --import et "$traces/dlrm-rank$r.et.json.gz" \
        --kineto "$traces/dlrm-rank$r.kineto.json.gz" -o "$work/ranks/dlrm-rank$r.model" 2>/dev/null
    python3 tests/bench/dlrm_variants.py "$work/ranks/dlrm-rank$r.model" "$work/derived" >/dev/null
    mv "$work/derived/dlrm-rank$r-apart.model" "$work/control/"
    mkdir -p "$work/scratch"
    python3 tests/bench/dlrm_variants.py "$work/derived/dlrm-rank$r-reads4.model" "$work/scratch" \
        >/dev/null
    mv "$work/scratch/dlrm-rank$r-reads4-apart.model" "$work/control/"
    rm -f "$work"/scratch/*
done
export REAL_BENCH_MALLOC=${REAL_BENCH_MALLOC:-sync} REAL_BENCH_STEPS=${REAL_BENCH_STEPS:-12}
export REAL_BENCH_REPLAY=${REAL_BENCH_REPLAY:---stride 1048576}
export REAL_BENCH_BUDGETS=${REAL_BENCH_BUDGETS:-75}
tests/bench/real_bench.sh "$work"/ranks/*.model "$work"/derived/*.model "$work"/control/*.model \
    | tee "$work/table"
python3 - "$work/table" <<'PY'
import re, sys
rows = [l.split("|") for l in open(sys.argv[1]) if l.startswith("| dlrm")]
def spread(pick, what):
    for col, against in ((12, "scheduled"), (18, "scheduled as host_resident by size keeps them")):
        r = [(float(c[col].strip().rstrip("x")), c[1].strip()) for c in rows
             if pick(c[1].strip()) and c[col].strip() != "-"]
        if r:
            lo, hi = min(r), max(r)
            print(f"{what}: {len(r)} rows, libshim / {against} {lo[0]:.3f}x ({lo[1]}) to "
                  f"{hi[0]:.3f}x ({hi[1]})")
spread(lambda n: re.fullmatch(r"dlrm-rank\d\.model", n), "shared ranks")
spread(lambda n: "apart" not in n and not re.fullmatch(r"dlrm-rank\d\.model", n), "derived ranks")
spread(lambda n: "apart" in n, "controls (state one row short)")
PY
