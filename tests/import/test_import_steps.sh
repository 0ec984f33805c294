#!/usr/bin/env bash
# tests/import/test_import_steps.sh — a Kineto trace without ProfilerStep#N annotations: the step
# is found from the repeating pattern of kernel names (tools/import/import_kineto_period.c). A
# made trace pins the period, the phase (the launch after the host's longest pause), the choice
# of the last whole occurrence another follows, a first step unlike the rest, and a trace
# that never repeats; the HTA trace with its annotations removed gives the model its annotated
# step gives, byte for byte.
set -u
source "$(dirname "$0")/import_env.sh"

# make NAME PATTERN REPEATS PAUSE_BEFORE [WARMUP]: a trace of REPEATS steps of the kernels named
# by the letters of PATTERN (kernel k runs 10 + index us), the host pausing 500 us before the
# launch of letter PAUSE_BEFORE (else 5 us between launches); WARMUP letters run first, once.
make() {
    python3 - "$tmp/$1.json" "$2" "$3" "$4" "${5:-}" <<'PY'
import json, sys
out, pattern, reps, pause, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
ev, t, corr = [], 0.0, 0
seq = list(warm) + list(pattern) * reps
for i, name in enumerate(seq):
    t += 500.0 if name == pause and i else 5.0
    corr += 1
    dur = 10.0 + "abcdefgh".index(name)
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t, "dur": 2,
               "pid": 1, "tid": 1, "args": {"correlation": corr}})
    ev.append({"ph": "X", "cat": "kernel", "name": "k_" + name, "ts": t + 3, "dur": dur,
               "pid": 0, "tid": 7, "args": {"correlation": corr, "stream": 7, "device": 0}})
json.dump({"traceEvents": ev}, open(out, "w"))
PY
    "$shimplan" --import kineto "$tmp/$1.json" -o "$tmp/$1.model" 2>"$tmp/$1.err"
}
durs() { grep '^op ' "$tmp/$1.model" | cut -d' ' -f2 | tr '\n' ' '; } # NAME: op durations
is() { [ "$(durs "$1")" = "$2" ] || { echo "durations: '$(durs "$1")', want '$2'"; false; }; }

make plain abcd 5 a
make phase abcd 5 c
make warm abcd 4 a ghh
make never abcdefgh 1 a
make short abcab 1 a

plan $((7 + $([ -d "$traces" ] && echo 1 || echo 0)))
check "5 steps of abcd, pause before a: one step, a b c d" is plain "10 11 12 13 "
check "the note says the step was found from the pattern, its length and occurrences" \
    grep -q 'a step of 4 kernels found from their repeating pattern (5 occurrences' "$tmp/plain.err"
check "pause before c: the step starts at c (c d a b)" is phase "12 13 10 11 "
check "a first step unlike the rest (ghh): still a b c d" is warm "10 11 12 13 "
check "the last whole occurrence another follows: launches 11 to 14 of 15 (warm-up 3 + 4x4)" \
    grep -q 'launches 11 to 14)' "$tmp/warm.err"
never() { [ "$(grep -c '^op ' "$tmp/never.model")" = 8 ] &&
    grep -q 'no repeating pattern of kernels: the model is the whole trace' "$tmp/never.err"; }
check "a trace that never repeats: the whole trace, and the note says so" never
check "abcab: a pattern shorter than two whole periods is no step (5 ops, whole trace)" \
    test "$(grep -c '^op ' "$tmp/short.model")" = 5

if [ ! -d "$traces" ]; then
    echo "# $traces is absent: the HTA comparison is not run"
    exit 0
fi
zcat "$traces/hta-dp-rank1.kineto.json.gz" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["traceEvents"] = [e for e in d["traceEvents"] if not str(e.get("name", "")).startswith("ProfilerStep#")]
json.dump(d, open(sys.argv[1], "w"))' "$tmp/hta.json"
"$shimplan" --import kineto "$tmp/hta.json" -o "$tmp/hta.model" 2>"$tmp/hta.err"
"$shimplan" --import kineto "$traces/hta-dp-rank1.kineto.json.gz" -o "$tmp/hta5.model" 2>/dev/null
same() { grep -q 'a step of 3874 kernels' "$tmp/hta.err" && [ -s "$tmp/hta5.model" ] &&
    cmp "$tmp/hta.model" "$tmp/hta5.model"; }
check "HTA without its annotations: the model of its annotated default step (#5), byte for byte" same
