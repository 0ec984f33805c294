#!/usr/bin/env bash
# tests/shim/hostile.sh [ci|full] — the hostile-input campaign: absurd values (empty, huge,
# negative, NaN, overflow, unicode, control bytes, very long) in every option of conf/'s table, as
# its SHIM_ variable, as a TOML string in the file and written bare in the file, and in the other
# variables libshim reads (found in its sources: RANK, PYTORCH_CUDA_ALLOC_CONF); special files
# (FIFO, folder, device, socket, dangling link, a path through a file) at every path libshim and
# its tools read or write; full disks (a 64 KiB tmpfs, filled, in a private mount namespace) and
# a file size limit under the trace, the log and the tools' outputs; unreadable files.
#
# The rule, for every case: no crash (no status above 128), no hang (every command under
# `timeout`), the preloaded program's result unchanged (its output and status as run natively),
# and a configuration that conf/ finds bad is said with its location (the variable, or FILE:LINE)
# by shim-report config and by libshim, which then passes everything through.
#
# ci (tests/shim/test_hostile.sh, `make test`): every option with 2 of the values (a different 2
# for each, so that the values are spread over the options), 5 special files, every disk case.
# full (`make hostile`): every option with every value; PART=K/N runs one part of N (below). One check per option and per group of
# cases; the cases that broke the rule are shown under a failed check; the last line counts them.
set -u
source "$(dirname "$0")/shim_env.sh"
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
source "$root/tests/check.sh"
size=${1:-ci}
REPORT="$B/shim-report" PLAN="$B/shim-plan" prog="$B/tests/shim/shim_prog"
mkdir -p "$tmp/cwd"
cd "$tmp/cwd" || exit 1
# Campaign counts: cases run, and those that crashed, hung, changed the result or said an error
# without its location.
runs=0 crashes=0 hangs=0 changed=0 unlocated=0 bad=0

# The program and its native result.
native_out=$("$prog" basic)
native_rc=$?

# Options: every name `shim-report config` prints (conf/'s table, one line per option).
mapfile -t options < <(env -u SHIM_CONFIG "$REPORT" config | sed -n 's/^\([a-z_.]*\) = .*/\1/p')
# Other variables libshim reads: getenv("NAME") in its sources, and the macros they name.
mapfile -t others < <(grep -rhoE 'getenv\(("[A-Z_]+"|[A-Z_]+)\)' "$root/shim" |
    sed 's/getenv(\(.*\))/\1/' | while read -r v; do
        case $v in
        \"*) echo "${v//\"/}" ;;
        *) grep -rhoE "define $v \"[A-Z_]+\"" "$root/shim" | sed 's/.* "\(.*\)"/\1/' ;;
        esac
    done | sort -u)

long_a=$(printf 'a%.0s' {1..5000})
long_9=$(printf '9%.0s' {1..5000})
long_p=$(printf '%%p%.0s' {1..2000})
values=("" " " "0" "1" "-1" "+1" "-0" "007" "1.5" "1e3" "1e308" "-1e308" "1e-400" "NaN" "nan"
    "inf" "-inf" "Infinity" "0x10" "0b1" "1_000" "9223372036854775807" "9223372036854775808"
    "-9223372036854775809" "18446744073709551616" "99999999999999999999999999999999" "$long_9"
    "1PiB" "1025PiB" "16EiB" "1ZiB" "-1MiB" "1 MiB" " 1MiB " "1mib" "1.0000000001GiB"
    "0.0000000001KiB" "100%" "100.0001%" "0%" "-5%" "0.00001%" "0.0001%" "1e2%" "%" "%%" "%p"
    "%p%r%%" "%x" "$long_p" "auto" "AUTO" "measured" "true" "false" "TRUE" "yes" "off" "record"
    "debug" "all" "allocs,allocs" "allocs," ",," ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,," "1,2"
    "11,25" "0,0" "-1,-1" "1e400,1" "1,2,3" "10" "10ns" "1min" "99999999999min" "-1s"
    "0.5ns" "1.5.5" "é" "１２３" "💥" $'\x01\x02' $'a\nb' $'\t' '\' '"' "'" "[1]" "{}" "a=b"
    "/dev/null" "/dev/full" "/" "." ".." "$tmp/no/such/dir/x" "$long_a")

# A TOML basic string holding $1 (escaped: the control bytes of the values above included).
toml_string() {
    local s=${1//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/\\n}
    s=${s//$'\t'/\\t}
    s=${s//$'\r'/\\r}
    s=${s//$'\x01'/\\u0001}
    s=${s//$'\x02'/\\u0002}
    printf '"%s"' "$s"
}
# write_toml NAME TEXT FILE: NAME = TEXT in FILE, under [table] for a dotted name.
write_toml() {
    local name=$1 text=$2
    if [[ $name == *.* ]]; then
        printf '[%s]\n%s = %s\n' "${name%%.*}" "${name#*.}" "$text" >"$3"
    else
        printf '%s = %s\n' "$name" "$text" >"$3"
    fi
}
env_name() { local n=${1//./_}; echo "SHIM_${n^^}"; }

# note WHAT CASE: one broken rule, shown under the check and counted.
note() {
    echo "$1: $2" | head -c 300 >>"$tmp/broken"
    echo >>"$tmp/broken"
}
# bounded COMMAND...: runs it in the scratch folder with 20 s at most; status in $rc, stdout in
# $tmp/out, stderr in $tmp/err.
bounded() {
    timeout -k 2 20 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}
# judge CASE LOCATION: the rule for the preloaded run just made (status $rc, given that
# shim-report config found errors when $bad is 1): no crash, no hang, the native result, and an
# error said with LOCATION.
judge() {
    runs=$((runs + 1))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        hangs=$((hangs + 1)) && note hang "$1"
    elif [ "$rc" -gt 128 ]; then
        crashes=$((crashes + 1)) && note "crash ($rc)" "$1"
    elif [ "$rc" -ne "$native_rc" ] || [ "$(cat "$tmp/out")" != "$native_out" ]; then
        changed=$((changed + 1)) && note "changed result (status $rc)" "$1: $(head -c 200 "$tmp/err")"
    elif [ "$bad" -eq 1 ] && [ "${3:-}" != nolog ] && ! grep -qF -- "$2" "$tmp/err"; then
        unlocated=$((unlocated + 1)) && note "error without '$2'" "$1: $(head -c 200 "$tmp/err")"
    fi
}
# judge_tool CASE LOCATION: the rule for a tool run just made: no crash, no hang; a failure says
# LOCATION.
judge_tool() {
    runs=$((runs + 1))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        hangs=$((hangs + 1)) && note hang "$1"
    elif [ "$rc" -gt 128 ]; then
        crashes=$((crashes + 1)) && note "crash ($rc)" "$1"
    elif [ "$rc" -ne 0 ] && ! grep -qF -- "$2" "$tmp/out" "$tmp/err"; then
        unlocated=$((unlocated + 1)) && note "failure without '$2'" "$1: $(head -c 200 "$tmp/err")"
    fi
}
# config_case CASE LOCATION VAR=VALUE...: shim-report config, then the program under libshim,
# with the variables; sets $bad to whether the configuration has errors.
config_case() {
    local what=$1 where=$2
    shift 2
    bounded env -u SHIM_CONFIG SHIM_TRACE_PATH= "$@" "$REPORT" config
    bad=$((rc == 1))
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || bad=0
    judge_tool "shim-report config: $what" "$where"
    local level=log
    # A log level of off, or a log file, leaves nothing on standard error to look for.
    case " $* " in *" SHIM_LOG_LEVEL=off "* | *" SHIM_LOG_FILE="?*) level=nolog ;; esac
    bounded env -u SHIM_CONFIG SHIM_TRACE_PATH= "$@" LD_PRELOAD="$PRELOAD" "$prog" basic
    judge "libshim: $what" "$where" "$level"
}
# option_cases NAME VALUE...: VALUE as SHIM_NAME, as a TOML string in the file, and bare in it.
option_cases() {
    local name=$1 var f="$tmp/cfg.toml" v
    var=$(env_name "$name")
    shift
    for v in "$@"; do
        config_case "$var='${v:0:40}'" "$var" "$var=$v"
        write_toml "$name" "$(toml_string "$v")" "$f"
        config_case "file $name = '${v:0:40}' (string)" "$f:" SHIM_CONFIG="$f"
        write_toml "$name" "$v" "$f"
        config_case "file $name = ${v:0:40} (bare)" "$f:" SHIM_CONFIG="$f"
    done
}
# The values for option number i: all of them (full), or 6 spread over the list (ci).
pick() {
    local i=$1 n=${#values[@]} k
    if [ "$size" = full ]; then
        picked=("${values[@]}")
        return
    fi
    picked=()
    for k in 0 1; do picked+=("${values[$(((i * 2 + k) * 37 % n))]}"); done
}
# clean: no case leaves a trace or log behind in the scratch folder for the next.
clean() { rm -rf "$tmp/cwd" && mkdir -p "$tmp/cwd" && cd "$tmp/cwd"; }
# verdict: whether the cases since the last verdict kept the rule (their notes are shown).
verdict() {
    local broken=0
    [ -s "$tmp/broken" ] && broken=1 && cat "$tmp/broken" && mv "$tmp/broken" "$tmp/broken.$runs"
    return $broken
}
# progress: the counts so far, as a TAP comment.
progress() {
    echo "# so far: $runs runs, $crashes crashes, $hangs hangs, $changed changed results, $unlocated unlocated"
}
# ---- special files ----
mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
ln -s "$tmp/none" "$tmp/dangling"
ln -s "$tmp/fifo" "$tmp/fifo-link"
touch "$tmp/file"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$tmp/sock"
specials=("$tmp/fifo" "$tmp/dir" "$tmp/sock" "$tmp/file/x" /dev/full)
[ "$size" = full ] && specials+=("$tmp/dangling" "$tmp/fifo-link" /dev/null /dev/zero /dev/tty)
# special_cases: each special file as the configuration, the log, the trace, and as the inputs
# and outputs of shim-report and shim-plan.
special_cases() {
    local s
    for s in "${specials[@]}"; do
        config_case "SHIM_CONFIG=$s" "$s" SHIM_CONFIG="$s"
        bad=0
        bounded env SHIM_TRACE_PATH= SHIM_LOG_FILE="$s" LD_PRELOAD="$PRELOAD" "$prog" basic
        judge "SHIM_LOG_FILE=$s" "$s"
        bounded env SHIM_TRACE_PATH="$s" LD_PRELOAD="$PRELOAD" "$prog" basic
        judge "SHIM_TRACE_PATH=$s" "$s"
        bounded "$REPORT" summary "$s"
        judge_tool "shim-report summary $s" "$s"
        bounded "$REPORT" html -o "$s" "$tmp/t.trace"
        judge_tool "shim-report html -o $s" "$s"
        bounded "$PLAN" "$s" --budget 1GiB
        judge_tool "shim-plan $s" "$s"
        bounded "$PLAN" --generate transformer -o "$s"
        judge_tool "shim-plan -o $s" "$s"
        bounded "$PLAN" --import kineto "$s"
        judge_tool "shim-plan --import kineto $s" "$s"
        clean
    done
}
# full_disk_cases: the trace, the log and the tools' outputs on a full 64 KiB tmpfs, mounted in
# a private namespace (unshare -rm); 1 when that is not possible here.
full_disk_cases() {
    unshare -rm true 2>/dev/null || return 1
    local m="$tmp/full" s
    mkdir -p "$m"
    for s in trace log html plan; do
        # shellcheck disable=SC2016
        bounded unshare -rm bash -c '
            mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
            head -c 1M /dev/zero >"$1/fill" 2>/dev/null
            case $2 in
            trace) SHIM_TRACE_PATH="$1/t.trace" LD_PRELOAD="$3" "$4" basic ;;
            log) SHIM_TRACE_PATH= SHIM_LOG_LEVEL=debug SHIM_LOG_FILE="$1/log" LD_PRELOAD="$3" "$4" basic ;;
            html) "$5" html -o "$1/r.html" "$6" ;;
            plan) "$7" --generate transformer -o "$1/t.model" ;;
            esac' _ "$m" "$s" "$PRELOAD" "$prog" "$REPORT" "$tmp/t.trace" "$PLAN"
        [ "$rc" -eq 99 ] && return 1
        bad=0
        case $s in
        trace | log) judge "full disk: $s" "$m" ;;
        *) judge_tool "full disk: $s" "No space left" ;;
        esac
        [ "$s" = trace ] && [ "$rc" -eq 0 ] && ! grep -q "trace: cannot write .*No space left" "$tmp/err" &&
            note "no message" "full disk: trace: $(head -c 200 "$tmp/err")"
    done
    return 0
}
# limit_cases: the log at the file size limit (a sparse file of 512 GiB under ulimit -f of as
# much: the simulated device's memory file is 256 GiB), and the tools' outputs under a 1 KiB
# limit; the program, and the tools, are not ended by SIGXFSZ.
limit_cases() {
    truncate -s 512G "$tmp/big.log" || return 1
    bounded bash -c 'ulimit -f 536870912 && SHIM_TRACE_PATH= SHIM_LOG_LEVEL=debug SHIM_LOG_FILE="$1" LD_PRELOAD="$2" "$3" basic' _ "$tmp/big.log" "$PRELOAD" "$prog"
    bad=0
    judge "file size limit: the log" "$tmp/big.log"
    rm -f "$tmp/big.log"
    bounded bash -c 'ulimit -f 1 && "$1" html -o "$2" "$3"' _ "$REPORT" "$tmp/lim.html" "$tmp/t.trace"
    judge_tool "file size limit: shim-report html -o" "File too large"
    bounded bash -c 'ulimit -f 1 && "$1" --generate transformer -o "$2"' _ "$PLAN" "$tmp/lim.model"
    judge_tool "file size limit: shim-plan -o" "File too large"
    return 0
}
# unreadable_cases: a configuration and a trace without read permission (not for root, whom
# permissions do not stop: 1 then).
unreadable_cases() {
    [ "$(id -u)" -ne 0 ] || return 1
    printf 'budget = "1GiB"\n' >"$tmp/secret.toml" && chmod 000 "$tmp/secret.toml"
    config_case "SHIM_CONFIG=unreadable" "$tmp/secret.toml" SHIM_CONFIG="$tmp/secret.toml"
    cp "$tmp/t.trace" "$tmp/secret.trace" && chmod 000 "$tmp/secret.trace"
    bounded "$REPORT" summary "$tmp/secret.trace"
    judge_tool "shim-report summary unreadable" "$tmp/secret.trace"
    return 0
}

# A trace for the tools' cases.
env SHIM_TRACE_PATH="$tmp/t.trace" SHIM_LOG_LEVEL=off LD_PRELOAD="$PRELOAD" "$prog" basic >/dev/null

# A part of the campaign (PART=K/N: the options and variables whose place in the list is K modulo
# N, and the files and disks in part 0), so that N runs can share the work.
part=${PART:-0/1}
k=${part%/*} n=${part#*/}
mine() { [ $(($1 % n)) -eq "$k" ]; }
count=0
for ((j = 0; j < ${#options[@]} + ${#others[@]}; j++)); do mine $j && count=$((count + 1)); done
plan $((1 + count + (k == 0 ? 4 : 0)))
table=$(grep -c '^    X([A-Z_]*, "' "$root/conf/conf.h")
check "the program natively (status $native_rc); ${#options[@]} options (conf.h's table: $table); ${#others[@]} other variables (${others[*]})" \
    test "$native_rc" -eq 0 -a "${#options[@]}" -eq "$table" -a "${#others[@]}" -ge 2
i=0
for name in "${options[@]}"; do
    if mine $i; then
        pick $i
        option_cases "$name" "${picked[@]}"
        check "$name: ${#picked[@]} values, each as $(env_name "$name"), in the file as a string and bare" verdict
        progress
        clean
    fi
    i=$((i + 1))
done
for var in "${others[@]}"; do
    if mine $i; then
        pick $i
        for v in "${picked[@]}"; do config_case "$var='${v:0:40}'" "$var" "$var=$v"; done
        check "$var: ${#picked[@]} values" verdict
        progress
        clean
    fi
    i=$((i + 1))
done
if [ "$k" -eq 0 ]; then
    special_cases
    check "${#specials[@]} special files as the configuration, log, trace, and the tools' files" verdict
    if full_disk_cases; then
        check "a full disk under the trace, the log and the tools' outputs" verdict
    else
        echo "skip - a full disk: no private mount namespace here (unshare -rm)"
    fi
    if limit_cases; then
        check "the file size limit under the log and the tools' outputs: no SIGXFSZ" verdict
    else
        echo "skip - the file size limit: no sparse file here"
    fi
    if unreadable_cases; then
        check "unreadable configuration and trace" verdict
    else
        echo "skip - unreadable files: running as root, whom permissions do not stop"
    fi
fi
echo "# hostile ($size): $runs runs, $crashes crashes, $hangs hangs, $changed changed results, $unlocated errors without their location"
exit $((fails > 0))
