# resid_env.sh — sourced by the residency tests: train_sim and threads_sim runs with and without
# the shim, each under a time limit ($RUN_TIMEOUT; exit 124 or 137 when a run reached it), and
# readers for what a run left (checksum, SIMGPU_STATS figures, the shim's two exit lines
# "exit: VERDICT; STEP TIME; STEADY STATE per step; WARM-UP" and "exit: S steps; residency: E
# evictions (C cancelled), R restores, ..., budget B MiB...", and verdict NAME: the first line's
# first words, "fitted" or "did not fit").
# Every run is named; its files are $work/NAME.out, .err, .json and .rc.
source "$(dirname "${BASH_SOURCE[0]}")/../shim/shim_env.sh"
TRAIN="$B/train_sim"
THREADS="$B/threads_sim"
# A run that hangs is a failure, not a stuck suite; sanitizer builds run several times slower.
# The longest plain run here (test_multidev's two devices) takes about 14 s on 2 idle cores and
# more than 30 s with a CPU hog beside it (2026-11-28): 60 s, so that a loaded machine is not
# taken for a hang.
case "${SAN:-}" in
'') RUN_TIMEOUT=${RESIDENCY_RUN_TIMEOUT:-60} ;;
*) RUN_TIMEOUT=${RESIDENCY_RUN_TIMEOUT:-180} ;;
esac
# plan N: the number of checks the script made, as TAP's "1..N" (tests/check.sh's, where the
# script sources only this).
declare -F plan >/dev/null || plan() { echo "1..$1"; }
# RESIDENCY_KEEP=1 keeps every run's files (the folder is named at exit) for a closer look.
work=$(mktemp -d)
if [ "${RESIDENCY_KEEP:-0}" = 1 ]; then
    trap 'echo "# the runs'"'"' files are in $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi

# run_native NAME PROGRAM ARGS...: PROGRAM without the shim; returns its exit status.
run_native() {
    local name=$1
    shift
    rm -f "$work/$name.json"
    SIMGPU_STATS="$work/$name.json" timeout -k 5 "$RUN_TIMEOUT" "$@" \
        >"$work/$name.out" 2>"$work/$name.err"
    local rc=$?
    echo "$rc" >"$work/$name.rc"
    return "$rc"
}

# run_shimmed NAME PROGRAM ARGS...: PROGRAM under the shim (no trace, info log); returns its exit
# status.
run_shimmed() {
    local name=$1
    shift
    rm -f "$work/$name.json"
    SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info SIMGPU_STATS="$work/$name.json" SIMGPU_BACKTRACE=1 \
        LD_PRELOAD="$PRELOAD" timeout -k 5 "$RUN_TIMEOUT" "$@" >"$work/$name.out" 2>"$work/$name.err"
    local rc=$?
    echo "$rc" >"$work/$name.rc"
    return "$rc"
}

# native NAME ARGS... / shimmed NAME ARGS...: train_sim without / under the shim.
native() { run_native "$1" "$TRAIN" "${@:2}"; }
shimmed() { run_shimmed "$1" "$TRAIN" "${@:2}"; }

# rc NAME: the run's exit status (124 or 137: it ran out of time).
rc() { cat "$work/$1.rc" 2>/dev/null || echo none; }
# checksum NAME: the run's checksum, empty when it printed none.
checksum() { sed -n 's/^checksum=\([0-9a-f]*\)$/\1/p' "$work/$1.out" | tail -n 1; }
# figure NAME KEY: a figure from the run's SIMGPU_STATS file, empty when there is none.
figure() {
    python3 -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))[sys.argv[2]])
except Exception:
    pass' "$work/$1.json" "$2"
}
# evictions NAME: E from the shim's exit line, empty when the run printed none.
evictions() { sed -n 's/.*info: exit: .*; residency: \([0-9]*\) evictions .*/\1/p' "$work/$1.err" | tail -n 1; }
# restores NAME: R from the shim's exit line, empty when the run printed none.
restores() { sed -n 's/.*info: exit: .*; residency: .* \([0-9]*\) restores,.*/\1/p' "$work/$1.err" | tail -n 1; }
# verdict NAME: the exit line's verdict ("fitted", "did not fit", "no budget"), empty without one.
verdict() { sed -n 's/.*info: exit: \(fitted\|did not fit\|no budget\): .*/\1/p' "$work/$1.err" | tail -n 1; }
# resident_mib NAME: the resident peak in MiB from the exit line's verdict, empty without one.
resident_mib() { sed -n 's/.*info: exit: [a-z ]*: resident peak \([0-9.]*\) MiB .*/\1/p' "$work/$1.err" | tail -n 1; }
# budget_mib NAME: B from the shim's exit line, empty when the run printed none.
budget_mib() { sed -n 's/.*info: exit: .*; residency: .*, budget \([0-9]*\) MiB\(;.*\)\{0,1\}$/\1/p' "$work/$1.err" | tail -n 1; }
# is NAME KEY OP VALUE: a stats figure compared with a number (false when the figure is missing).
is() {
    local v
    v=$(figure "$1" "$2")
    [ -n "$v" ] && [ "$v" "$3" "$4" ]
}
# tail_err NAME: the last lines of the run's stderr, indented, for a failure's report.
# tail_err NAME [N]: the last N lines of a run's stderr; first, its first unmap hazard with the
# stack of the call that made it (SIMGPU_BACKTRACE), libshim's frames named by addr2line.
tail_err() {
    local f="$work/$1.err" line off
    if grep -q "unmap hazard" "$f"; then
        grep -m1 -A24 "unmap hazard" "$f" | grep -E "unmap hazard|\(\+0x|\(.*\+0x" |
            while IFS= read -r line; do
                off=$(sed -n 's/.*libshim\.so(+\(0x[0-9a-f]*\)).*/\1/p' <<<"$line")
                if [ -n "$off" ] && command -v addr2line >/dev/null; then
                    echo "    | libshim.so+$off $(addr2line -f -i -e "$SHIM_LIB" "$off" | paste -sd' ')"
                else
                    echo "    | $line"
                fi
            done
    fi
    tail -n "${2:-8}" "$f" | sed 's/^/    | /'
}
# summary NAME...: one line per run, "NAME EXIT CHECKSUM ILLEGAL HAZARDS EVICTIONS", '-' for what
# the run did not leave (one process for many runs: a figure each would cost a python start).
summary() {
    python3 - "$work" "$@" <<'PY'
import json, re, sys
work = sys.argv[1]
def read(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""
for name in sys.argv[2:]:
    base = f"{work}/{name}"
    try:
        st = json.load(open(base + ".json"))
    except Exception:
        st = {}
    sums = re.findall(r"^checksum=([0-9a-f]+)$", read(base + ".out"), re.M)
    ev = re.findall(r"info: exit: .*; residency: (\d+) evictions", read(base + ".err"))
    print(name, read(base + ".rc").strip() or "-", sums[-1] if sums else "-",
          st.get("illegal_accesses", "-"), st.get("unmap_hazards", "-"), ev[-1] if ev else "-")
PY
}
# SAN_CHECKS: how many checks check_sanitizers makes (for a script's plan).
SAN_CHECKS=$([ -n "${SAN:-}" ] && echo 1 || echo 0)
# check_sanitizers: under a sanitizer build, one check that no run's stderr holds a report
# (a TSan warning does not stop the program); the first report is shown.
check_sanitizers() {
    [ -n "${SAN:-}" ] || return 0
    local hits
    hits=$(grep -lE 'WARNING: ThreadSanitizer|ERROR: (Address|Leak)Sanitizer|runtime error:' \
        "$work"/*.err 2>/dev/null)
    check "no $SAN report in the stderr of any of $(ls "$work"/*.err | wc -l) runs ($(echo "$hits" | grep -c .) with one)" \
        [ -z "$hits" ]
    [ -n "$hits" ] || return 0
    echo "# runs with a report: $(echo "$hits" | xargs -n1 basename | sed 's/\.err$//' | tr '\n' ' ')"
    grep -m1 -A12 -E 'WARNING: ThreadSanitizer|ERROR: (Address|Leak)Sanitizer|runtime error:' \
        "$(echo "$hits" | head -n 1)" | sed 's/^/    | /'
}
