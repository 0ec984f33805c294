#!/usr/bin/env bash
# tests/import/test_import.sh — shim-plan --import: every trace in $SHARED/traces imports to a
# valid, plannable model whose native peak matches an independent reckoning
# (tests/import/kineto_peak.py and et_peak.py read the same JSON by their own logic); a small hand-made trace
# pins step boundaries, resident memory and device filtering; bad input gives a located error
# and exit status 1. Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
set -u
source "$(dirname "$0")/import_env.sh"
# 22 checks of the corpus and the command line; 91 of the recorded traces (4 for each trace without memory events, 5 for one with) in the shared folder,
# or a skip line for them when it is absent.
plan $((22 + $([ -d "$traces" ] && echo 91 || echo 1)))

# ---- a hand-made trace: three steps, one allocation across the step boundary, resident memory,
# a host ([memory] Device Type 0) event that must not count.
syn=$here/data/steps.kineto.json
"$shimplan" --import kineto "$syn" -o "$tmp/syn2.model" 2>"$tmp/syn2.err"
check "default step is the last one another follows (#2)" grep -q 'ProfilerStep#2 ' "$tmp/syn2.err"
check "kernels of step 2 become 3 operations with their durations and streams" \
    test "$(grep '^op ' "$tmp/syn2.model" | tr '\n' ,)" = "op 5,op 6 1,op 7,"
check "resident bytes (Total Allocated minus live events, 1000) are cyclic pieces of the largest recorded allocation (100), each on every op" \
    test "$(grep -cx 'alloc 100 -1 -1 0 1 2' "$tmp/syn2.model")" -eq 10
check "no other cyclic allocation" test "$(grep -c '^alloc [0-9]* -1 -1' "$tmp/syn2.model")" -eq 10
check "an allocation made before the step and freed in it has birth -1" \
    grep -qx 'alloc 100 -1 2 0 1 2' "$tmp/syn2.model"
check "an allocation made and freed in the step spans the launches between" \
    grep -qx 'alloc 50 1 1 1' "$tmp/syn2.model"
check "host memory events are left out" test "$(grep -c '^alloc' "$tmp/syn2.model")" -eq 12
"$shimplan" --import kineto "$syn" --step 1 -o "$tmp/syn1.model" 2>/dev/null
check "--step 1: the allocation outliving the step has death -1" \
    grep -qx 'alloc 100 0 -1 0 1' "$tmp/syn1.model"
"$shimplan" --import kineto "$syn" --step 9 >/dev/null 2>"$tmp/err"
check "--step 9: an error naming the steps there are" grep -q 'no ProfilerStep#9 (the trace has #1 to #3)' "$tmp/err"

# ---- every Kineto trace: valid model, ops and native peak as the independent script finds them.
kineto_check() { # NAME TRACE
    local name=$1 trace=$2
    if ! "$shimplan" --import kineto "$trace" -o "$tmp/$name.model" 2>"$tmp/$name.err"; then
        echo "not ok - $name: import"
        sed 's/^/    # /' "$tmp/$name.err"
        return
    fi
    read -r peak nk < <(python3 "$here/kineto_peak.py" "$trace")
    "$shimplan" "$tmp/$name.model" --budget 100% --planner none >"$tmp/$name.out" 2>"$tmp/$name.perr"
    local rc=$?
    check "$name: $nk kernels of the step are the operations" \
        test "$(grep -c '^op ' "$tmp/$name.model")" -eq "$nk"
    if [ "$peak" = 0 ]; then
        # No [memory] events: the model has no allocations and no budget can be answered.
        check "$name: no memory in the trace: planning it is refused (exit 1, says why)" \
            refused $rc "$tmp/$name.perr"
        for b in 75% 50%; do
            "$shimplan" --import kineto "$trace" --budget $b >"$tmp/$name.$b" 2>"$tmp/$name.$b.err"
            check "$name: no what-if at $b" refused $? "$tmp/$name.$b.err"
        done
        return
    fi
    check "$name: the written model parses back" test $rc -eq 0
    check "$name: native peak $(field native_peak_bytes "$tmp/$name.out") is the trace's own $peak" \
        test "$(field native_peak_bytes "$tmp/$name.out")" = "$peak"
    for b in 75% 50%; do
        "$shimplan" --import kineto "$trace" --budget $b >"$tmp/$name.$b" 2>/dev/null
        check "$name: plans at $b of the peak" test $? -eq 0
    done
}
refused() { [ "$1" -eq 1 ] && grep -q 'error: no memory information' "$2"; } # RC ERRFILE
# The recorded traces of others live in the shared folder beside the checkout (CI has it); a
# clone alone skips what needs them, in one line.
if [ ! -d "$traces" ]; then
    echo "skip - the recorded traces: $traces is absent (the shared folder beside the checkout)"
else
kineto_check hta "$traces/hta-dp-rank1.kineto.json.gz"
for r in 0 1 2 3; do
    kineto_check "dlrm-rank$r" "$traces/dlrm-rank$r.kineto.json.gz"
done
kineto_check linear "$traces/linear.kineto.json.gz"
check "hta: the native peak is not zero (the check would pass on an empty model)" \
    test "$(field native_peak_bytes "$tmp/hta.out")" -gt 0
touches() { awk '$1 == "alloc" { n += NF - 4 } END { print n + 0 }' "$1"; }
"$shimplan" --import kineto "$traces/hta-dp-rank1.kineto.json.gz" --touches all -o "$tmp/all.model" \
    2>/dev/null
check "hta --touches all: more touches ($(touches "$tmp/all.model")) than the guess ($(touches "$tmp/hta.model"))" \
    test "$(touches "$tmp/all.model")" -gt "$(touches "$tmp/hta.model")"
check "hta --touches all: the same allocations" \
    test "$(grep -c '^alloc' "$tmp/all.model")" -eq "$(grep -c '^alloc' "$tmp/hta.model")"
read -r peak3 _ < <(python3 "$here/kineto_peak.py" "$traces/hta-dp-rank1.kineto.json.gz" 3)
"$shimplan" --import kineto "$traces/hta-dp-rank1.kineto.json.gz" --step 3 --budget 100% \
    --planner none >"$tmp/hta3.out" 2>/dev/null
check "hta --step 3: native peak is the trace's own" \
    test "$(field native_peak_bytes "$tmp/hta3.out")" = "$peak3"

# ---- every ET with its Kineto trace: valid, plannable, and its storages as the independent
# script (et_storages.py) counts them: the largest allocation is the largest storage, the cyclic
# allocations are the storages that exist before the step, the native peak lies between those
# and the sum of all storages. The native peak and the allocations kept equal et_peak.py's,
# which applies tools/import/IMPORT.md's rules to the ET itself, given only which node launched each
# operation (--join-map).
model_stats() { # MODEL: LARGEST CYCLIC_TOTAL
    python3 - "$1" <<'PY'
import sys
big = cyc = 0
for line in open(sys.argv[1]):
    t = line.split()
    if t and t[0] == "alloc":
        big = max(big, int(t[1]))
        cyc += int(t[1]) if t[2] == "-1" and t[3] == "-1" else 0
print(big, cyc)
PY
}
et_check() { # NAME ET KINETO
    local name=$1 et=$2 kt=$3
    if ! "$shimplan" --import et "$et" --kineto "$kt" -o "$tmp/$name.model" --join-map "$tmp/$name.map" \
        2>"$tmp/$name.err"; then
        echo "not ok - $name: import"
        sed 's/^/    # /' "$tmp/$name.err"
        return
    fi
    "$shimplan" "$tmp/$name.model" --budget 100% --planner none >"$tmp/$name.out"
    check "$name: the written model parses back" test $? -eq 0
    read -r big pre all < <(python3 "$here/et_storages.py" "$et")
    read -r mbig mcyc < <(model_stats "$tmp/$name.model")
    check "$name: largest allocation $mbig is the largest storage $big" test "$mbig" = "$big"
    check "$name: cyclic allocations $mcyc are the storages made before the step $pre" \
        test "$mcyc" = "$pre"
    local peak
    peak=$(field native_peak_bytes "$tmp/$name.out")
    check "$name: native peak $peak within [$pre, $all]" test "$peak" -ge "$pre" -a "$peak" -le "$all"
    local epeak nalloc nop
    read -r epeak nalloc nop < <(python3 "$here/et_peak.py" "$et" "$tmp/$name.map")
    check "$name: native peak $peak is et_peak.py's $epeak" test "$peak" = "$epeak"
    check "$name: $(grep -c '^alloc' "$tmp/$name.model") allocations, et_peak.py keeps $nalloc" \
        test "$(grep -c '^alloc' "$tmp/$name.model")" = "$nalloc"
    check "$name: the join map has a line per operation ($nop)" \
        test "$(grep -c '^op ' "$tmp/$name.model")" = "$nop"
    check "$name: most nodes join (notes say N of M)" \
        python3 -c "import re,sys; m=re.search(r'(\d+) of (\d+) nodes joined', open('$tmp/$name.err').read()); sys.exit(0 if m and int(m[1]) * 5 >= int(m[2]) * 4 else 1)"
    for b in 75% 50%; do
        "$shimplan" --import et "$et" --kineto "$kt" --budget $b >"$tmp/$name.$b" 2>/dev/null
        check "$name: plans at $b of the peak" test $? -eq 0
    done
}
for r in 0 1 2 3; do
    et_check "et dlrm-rank$r" "$traces/dlrm-rank$r.et.json.gz" "$traces/dlrm-rank$r.kineto.json.gz"
done
et_check "et linear" "$traces/linear.et.json.gz" "$traces/linear.kineto.json.gz"
python3 - "$tmp/et dlrm-rank0.model" >"$tmp/tables" <<'PY'
import sys
for line in open(sys.argv[1]):
    t = line.split()
    if t and t[0] == "alloc" and int(t[1]) > 2 << 30:
        print(len(set(t[4:])))
PY
check "et dlrm-rank0: the embedding tables are touched in their backward too (fused update)" \
    test "$(sort -n "$tmp/tables" | head -1)" -gt 1
printf '{"nodes": [{"name": "aten::mm", "id": 1, "tid": "x"}]}' >"$tmp/badet.json"
"$shimplan" --import et "$tmp/badet.json" --kineto "$syn" >/dev/null 2>"$tmp/bad.err"
check "et: a mistyped node field is an error at its place" \
    grep -q "badet.json:1:12: error: nodes\[0\]: 'tid' must be an integer" "$tmp/bad.err"
"$shimplan" --import et "$traces/linear.et.json.gz" --kineto "$traces/linear.kineto.json.gz" \
    --touches all --budget 100% --planner none >"$tmp/etall.out" 2>/dev/null
check "et --touches all: nothing can leave, the floor is the peak as libshim holds it" \
    test "$(field floor_bytes "$tmp/etall.out")" = "$(field held_peak_bytes "$tmp/etall.out")"
check "et (touches from operands): the floor is below the native peak" \
    test "$(field floor_bytes "$tmp/et linear.out")" -lt "$(field native_peak_bytes "$tmp/et linear.out")"
"$shimplan" "$tmp/et linear.model" --step 3 --budget 75% >/dev/null 2>&1
check "--step without --import is a usage error (2)" test $? -eq 2
"$shimplan" --import et "$tmp/badet.json" >/dev/null 2>&1
check "et without --kineto reads the ET alone: a mistyped field there is exit 1" test $? -eq 1
"$shimplan" --import kineto "$syn" --join-map "$tmp/none.map" >/dev/null 2>&1
check "--join-map with --import kineto is a usage error (2)" test $? -eq 2
"$shimplan" --import et "$traces/linear.et.json.gz" --kineto "$traces/linear.kineto.json.gz" \
    --join-map "$tmp/no/such/dir.map" -o "$tmp/x.model" >/dev/null 2>&1
check "--join-map to a file that cannot be made: exit 1" test $? -eq 1
fi

# ---- bad input: a located error, exit status 1, never a crash.
bad() { # NAME FILE PATTERN [ARGS...]: exit 1 and stderr matching FILE:LINE:COL: error: PATTERN
    local name=$1 file=$2 pat=$3
    shift 3
    "$shimplan" --import kineto "$file" "$@" >/dev/null 2>"$tmp/bad.err"
    local rc=$?
    check "$name: exit status 1 (got $rc)" test $rc -eq 1
    check "$name: message names the place" \
        grep -qE "^$(printf '%s' "$file" | sed 's/[.[\*^$/]/\\&/g'):[0-9]+:[0-9]+: error: .*$pat" \
        "$tmp/bad.err"
}
if [ -d "$traces" ]; then
    head -c 20000 "$traces/dlrm-rank0.kineto.json.gz" >"$tmp/cut.json.gz"
    bad "truncated gzip" "$tmp/cut.json.gz" "truncated gzip data"
    zcat "$traces/dlrm-rank0.kineto.json.gz" | head -c 30000 >"$tmp/cut.json"
    bad "truncated JSON" "$tmp/cut.json" "truncated JSON"
fi
printf '{"traceEvents": [\n  {"cat": "kernel", "ts": 1, "dur": "x", "args": {"stream": 7}}]}' \
    >"$tmp/type.json"
bad "wrong type" "$tmp/type.json" "traceEvents\[0\]: kernel event: 'dur' must be a number"
check "wrong type: line 2, column 3" grep -q 'type.json:2:3: ' "$tmp/bad.err"
printf '{"traceEvents": [{"cat": "kernel", "ts": 1, "dur": 2, "args": {"stream": 7}},\n{"name": "[memory]", "ts": 1, "tid": 1, "args": {"Bytes": 5}}]}' \
    >"$tmp/miss.json"
bad "missing field" "$tmp/miss.json" "traceEvents\[1\]: \[memory\] event has no 'Addr'"
check "missing field: line 2, column 1" grep -q 'miss.json:2:1: ' "$tmp/bad.err"
printf '{"traceEvents": [{"cat": "kernel", "ts": 1,, "dur": 2}]}' >"$tmp/syntax.json"
bad "malformed JSON" "$tmp/syntax.json" "malformed JSON"
printf '{"traceEvents": 7}' >"$tmp/notarray.json"
bad "traceEvents not an array" "$tmp/notarray.json" "must be an array"
printf '{"traceEvents": [{"cat": "cpu_op", "name": "x", "ts": 1, "dur": 1, "tid": 1}]}' \
    >"$tmp/nokern.json"
"$shimplan" --import kineto "$tmp/nokern.json" >/dev/null 2>"$tmp/bad.err"
check "no kernels: exit 1 with a reason" test $? -eq 1 -a -s "$tmp/bad.err"
check "missing file: exit 1" bash -c "! '$shimplan' --import kineto '$tmp/none.json' 2>/dev/null"
"$shimplan" --import bogus x >/dev/null 2>&1
check "unknown importer is a usage error (2)" test $? -eq 2
exit $((fails > 0))
