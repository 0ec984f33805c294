#!/usr/bin/env bash
# tests/import/test_shimplan_cli.sh — the planner's options on both command lines (one parser:
# tools/planopt/): shim-plan and shim-report plan refuse each bad value in the same words and
# with the same status (2), print the same help for those options, and say which argument is
# missing; a budget without a unit is questioned by shim-plan, shim-report plan and shim-run
# alike; every link figure a plan assumes is printed with where it came from (--remap, the
# model's hw line, the trace's moves, an import's assumption), in text and JSON.
# Needs no ../shared: a generated model, a trace trace_gen writes, and a tiny profile.
set -u
source "$(dirname "$0")/../check.sh"
scratch
BUILD=${BUILD:-build}
PLAN=$BUILD/shim-plan REPORT=$BUILD/shim-report RUN=$BUILD/shim-run

"$PLAN" --generate transformer:layers=2 -o "$tmp/t.model"
"$BUILD/trace_gen" synthetic "$tmp/s.trace" 2>/dev/null

# Each bad value, as the planner's options take it (ARGS, then the message both tools give).
bad_args=(
    "--budget 75" "bad --budget '75': a number without a unit is bytes: did you mean 75% or 75GiB? (write 75B for bytes)"
    "--budget 512" "bad --budget '512': a number without a unit is bytes: did you mean 512MiB or 512GiB? (write 512B for bytes)"
    "--budget 150%" 'bad --budget: invalid budget "150%": a size, or a share of the native peak in (0%, 100%]'
    "--budget lots" 'bad --budget: invalid size "lots": expected a number of bytes, alone or with a unit (B; K, Ki, KiB, M, Mi, MiB, G, Gi, GiB, T, Ti, TiB, P, Pi, PiB: powers of 1024; KB, MB, GB, TB, PB: powers of 1000), a percentage, or auto'
    "--planner magic" "unknown planner 'magic' (none, reactive, scheduled or exact)"
    "--proposals 0" "--proposals takes a count in [1, 100000], not '0'"
    "--remap -1" "--remap takes a time in microseconds in [0, 1e9], not '-1'"
    "--h2d 0" "--h2d takes a bandwidth in GB/s in [1e-6, 1e6], not '0'"
    "--duplex 2" "--duplex takes 0 or 1, not '2'"
    "--link-both 5" "--link-both takes H2D,D2H: the rates in GB/s in [1e-6, 1e6] of each direction while the other copies too, not '5'"
    "--budget" "--budget needs a value"
    "--bugdet 75%" "unknown option '--bugdet'"
)
nbad=$((${#bad_args[@]} / 2))
plan $((3 * nbad + 3 + 2 + 5 + 7))

# first_error TOOL OUT: the first line of OUT without "TOOL: ".
first_error() { head -n 1 "$2" | sed "s/^$1: //"; }
# refused WANT RC ERRFILE TOOL: status 2 and WANT as TOOL's first line.
refused() {
    local got
    got=$(first_error "$4" "$3")
    echo "status $2, said: $got"
    [ "$2" -eq 2 ] && [ "$got" = "$1" ]
}
for ((i = 0; i < ${#bad_args[@]}; i += 2)); do
    read -r -a a <<<"${bad_args[i]}"
    want=${bad_args[i + 1]}
    "$PLAN" "$tmp/t.model" "${a[@]}" >"$tmp/p.out" 2>"$tmp/p.err"
    prc=$?
    "$REPORT" plan "$tmp/s.trace" "${a[@]}" >"$tmp/r.out" 2>"$tmp/r.err"
    rrc=$?
    check "shim-plan ${bad_args[i]}: status 2, '$want'" refused "$want" $prc "$tmp/p.err" shim-plan
    check "shim-report plan ${bad_args[i]}: the same words and status" \
        refused "$want" $rrc "$tmp/r.err" shim-report
    check "... neither printed a plan" all [ ! -s "$tmp/p.out" ] '&&' [ ! -s "$tmp/r.out" ]
done

# A budget without a unit: shim-run (libshim's budget option) asks the same question.
"$RUN" --budget 75 -- true >/dev/null 2>"$tmp/run.err"
run_rc=$?
check "shim-run --budget 75: status 2, the same question" \
    all [ $run_rc -eq 2 ] '&&' grep -qF "a number without a unit is bytes: did you mean 75% or 75GiB?" "$tmp/run.err"
"$PLAN" "$tmp/t.model" --budget 75B --json >"$tmp/b.json" 2>&1
check "shim-plan --budget 75B: 75 bytes, planned (infeasible) with status 0" \
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["budget_bytes"] == 75 and not j["feasible"] else 1)' "$tmp/b.json"
"$PLAN" "$tmp/t.model" --budget 100000 --json >"$tmp/b.json" 2>&1
check "shim-plan --budget 100000: a bare number of 100000 or more is bytes, as libshim reads it" \
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["budget_bytes"] == 100000 else 1)' "$tmp/b.json"

# The same help for the planner's options in both tools: the paragraphs from --budget on.
"$PLAN" --help >"$tmp/p.help" 2>&1
prc=$?
"$REPORT" plan --help >"$tmp/r.help" 2>&1
rrc=$?
options_help() { sed -n '/^--budget SIZE:/,$p' "$1" | sed '/^--step N:/,/^--[a-z]/{/^--step N:/d;/^  /d}'; }
check "--help exits 0 in both (shim-plan $prc, shim-report plan $rrc)" all [ $prc -eq 0 ] '&&' [ $rrc -eq 0 ]
check "... the planner's options have the same help in both" \
    all [ -n "$(options_help "$tmp/p.help")" ] '&&' diff <(options_help "$tmp/p.help") <(options_help "$tmp/r.help")

# A missing argument is named.
says() { # STATUS TEXT CMD...: CMD exits STATUS and its first line of stderr holds TEXT
    local want=$1 text=$2 rc
    shift 2
    "$@" >/dev/null 2>"$tmp/says.err"
    rc=$?
    head -n 1 "$tmp/says.err"
    [ $rc -eq "$want" ] && head -n 1 "$tmp/says.err" | grep -qF -- "$text"
}
check "shim-plan alone: names the missing model" says 2 "shim-plan: no model given: MODEL" "$PLAN"
check "shim-plan MODEL: names the missing budget" \
    says 2 "shim-plan: --budget or --proposals is required" "$PLAN" "$tmp/t.model"
check "shim-plan --import et: names the missing trace" \
    says 2 "shim-plan: --import et needs a trace file" "$PLAN" --import et
check "shim-report plan: names the missing trace" \
    says 2 "shim-report: no trace given" "$REPORT" plan --budget 75%
check "shim-report plan TRACE: names the missing budget" \
    says 2 "shim-report: --budget or --proposals is required" "$REPORT" plan "$tmp/s.trace"

# Every link figure with its source.
"$PLAN" "$tmp/t.model" --budget 75% --remap 936 >"$tmp/remap.txt" 2>&1
check "shim-plan --remap 936: the remap it used, and that it came from --remap" \
    grep -qx 'link: h2d 25.000 GB/s, d2h 25.000 GB/s, duplex 1 (the model.s hw line); remap 936.000 us (--remap)' "$tmp/remap.txt"
"$PLAN" "$tmp/t.model" --budget 75% >"$tmp/plain.txt" 2>&1
check "shim-plan without link options: every figure from the model's hw line" \
    grep -qx "link: h2d 25.000 GB/s, d2h 25.000 GB/s, duplex 1, remap 10.000 us (the model's hw line)" "$tmp/plain.txt"
"$PLAN" "$tmp/t.model" --budget 75% --h2d 12 --link-both 5,20 --json >"$tmp/link.json" 2>&1
check "shim-plan --json: the link and the source of each figure" \
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); s=j["link_sources"]
sys.exit(0 if j["h2d_gbps"] == 12 and j["both_h2d_gbps"] == 5 and s["h2d_gbps"] == "--h2d" and s["link_both"] == "--link-both" and s["d2h_gbps"] == "the model'"'"'s hw line" else 1)' "$tmp/link.json"
"$PLAN" "$tmp/t.model" --budget 75% --duplex 0 --link-both 5,20 >/dev/null 2>"$tmp/lb.err"
lb_rc=$?
check "shim-plan --link-both on a shared link: refused (status 1), in the model's rule" \
    all [ $lb_rc -eq 1 ] '&&' grep -q "the link given: link_both needs DUPLEX 1" "$tmp/lb.err"
"$REPORT" plan "$tmp/s.trace" --budget 75% --remap 936 >"$tmp/rr.txt" 2>&1
check "shim-report plan --remap 936: the trace's measured link and the remap from --remap" \
    grep -qx "link: h2d 13.981 GB/s, d2h 13.981 GB/s (measured: the trace's moves, by their wall-clock times); duplex 1 (assumed: the step model builder's default); remap 936.000 us (--remap)" "$tmp/rr.txt"
"$REPORT" plan "$tmp/s.trace" --budget 75% --json >"$tmp/rr.json" 2>&1
check "shim-report plan --json: the remap assumed, and said so" \
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["remap_us"] == 10 and j["link_sources"]["remap_us"].startswith("assumed") else 1)' "$tmp/rr.json"
cat >"$tmp/k.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 2, "pid": 1, "tid": 1, "args": {"correlation": 1}},
 {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "ts": 5, "pid": 1, "tid": 1, "args": {"Addr": 4096, "Bytes": 8388608, "Total Allocated": 8388608, "Total Reserved": 8388608, "Device Type": 1, "Device Id": 0}},
 {"ph": "X", "cat": "kernel", "name": "k", "ts": 20, "dur": 30, "pid": 0, "tid": 7, "args": {"correlation": 1, "stream": 7, "device": 0}}
]}
JSON
"$PLAN" --import kineto "$tmp/k.json" --budget 100% >"$tmp/k.txt" 2>/dev/null
check "an imported profile: its link assumed, and said so" \
    grep -q "^link: .*remap 10.000 us (assumed: a profile holds no link figures" "$tmp/k.txt"
exit $((fails > 0))
