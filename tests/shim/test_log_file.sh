#!/usr/bin/env bash
# log.file and the rank: the log path takes %p and %r like trace.path (one expander); a path
# that would expand past PATH_MAX, a symbolic link, a missing folder or a file that is not a
# regular file are refused with one error on standard error naming the path and why, and the
# log stays there while the program runs on unchanged; a log file is appended to with mode
# 0600. RANK is parsed strictly: a value that is not a rank gives one warning naming it, and %r
# (in both paths) and the trace's rank fall back to 0.
set -u
source "$(dirname "$0")/shim_env.sh"
plan 27
scratch work
prog="$B/tests/shim/shim_prog"
plain=$("$prog" basic)
# run [VAR=VALUE...]: shim_prog basic under the shim at log level info, no trace and no RANK
# unless given; stdout to $work/out, stderr to $work/err.
run() {
    env -u RANK SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info "$@" LD_PRELOAD="$PRELOAD" "$prog" basic \
        >"$work/out" 2>"$work/err"
}
same() { [ "$(cat "$work/out")" = "$plain" ]; }
# once PATTERN [FILE]: the (grep -E) pattern is on exactly one line of FILE ($work/err)
once() { [ "$(grep -cE -- "$1" "${2:-$work/err}")" -eq 1 ]; }
# logged_to_stderr: the run's info lines reached standard error
logged_to_stderr() { grep -q 'libshim\[[0-9]*\]: info: ' "$work/err"; }
rank_of() { "$B/shim-report" summary "$1" | sed -n 's/^rank: //p'; }

run RANK=3 SHIM_LOG_FILE="$work/log-%p-r%r.log"
logs=$(ls "$work"/log-*-r3.log 2>/dev/null)
check "log.file expands %r to RANK (3) and %p to the pid (${logs##*/})" \
    bash -c "[ \$(ls '$work'/log-* | wc -l) -eq 1 ] && [[ '$logs' =~ /log-[0-9]+-r3\.log$ ]]"
check "the log goes to the file, not to standard error; the same result" \
    bash -c "grep -q 'libshim\[[0-9]*\]: info: ' '$logs' && [ ! -s '$work/err' ]"
check "  ... the same result" same
check "a new log file has mode 0600" [ "$(stat -c %a "$logs" 2>/dev/null)" = 600 ]
before=$(wc -l <"$logs")
run RANK=3 SHIM_LOG_FILE="$logs"
check "an existing log file is appended to, not truncated ($before lines, then $(wc -l <"$logs"))" \
    [ "$(wc -l <"$logs")" -gt "$before" ]

# a pattern of 4095 bytes (the longest string option) whose expansion passes 4095 bytes (two pids
# of 3 digits or more): refused, never cut short
long="$work/$(head -c 4096 /dev/zero | tr '\0' d)"
long="${long:0:4091}%p%p"
run SHIM_LOG_FILE="$long"
check "a log path past 4095 bytes: one error naming log.file and the pattern, the log on stderr" \
    once "error: log.file \"$work/ddd+\.\.\.\": expands to more than 4095 bytes .*; logging to standard error"
check "  ... the log is on standard error" logged_to_stderr
check "  ... the program runs unchanged, no file made" \
    bash -c "[ \"\$(cat '$work/out')\" = '$plain' ] && [ -z \"\$(find '$work' -name 'ddd*' -print -quit)\" ]"

ln -s "$work/target.log" "$work/link.log"
run SHIM_LOG_FILE="$work/link.log"
check "a symbolic link is not followed: one error with the path" \
    once "error: log.file: cannot open '$work/link.log': it is a symbolic link \(not followed\); logging to standard error"
check "  ... nothing written through it, the log on stderr, the same result" \
    bash -c "[ ! -e '$work/target.log' ] && grep -q 'info: ' '$work/err' && [ \"\$(cat '$work/out')\" = '$plain' ]"

run SHIM_LOG_FILE="$work/no/such/dir/x.log"
check "a log file that cannot be created: one error with the path and strerror" \
    once "error: log.file: cannot open '$work/no/such/dir/x.log': No such file or directory; logging to standard error"
check "  ... the log on stderr, the same result" bash -c "grep -q 'info: ' '$work/err'"
check "  ... the same result" same

mkfifo "$work/fifo"
run SHIM_LOG_FILE="$work/fifo"
check "a FIFO is neither waited on nor written: one error (no reader: ENXIO)" \
    once "error: log.file: cannot (open|use) '$work/fifo': (No such device or address|not a regular file); logging to standard error"
check "  ... the same result" same

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    touch "$work/theirs.log" && chmod 666 "$work/theirs.log" && chown nobody "$work/theirs.log"
    run SHIM_LOG_FILE="$work/theirs.log"
    check "another user's file is not written into, even when it is writable" \
        once "cannot use '$work/theirs.log': it belongs to uid [0-9]+, not to this user"
    check "  ... it stays empty" [ ! -s "$work/theirs.log" ]
else
    echo "skip - another user's file (needs root to make one)"
fi

run RANK=abc SHIM_TRACE_PATH="$work/t-r%r.trace" SHIM_LOG_FILE="$work/bad-rank-r%r.log"
check "RANK=abc: one warning naming the variable and the value; %r is 0 in log.file" \
    once 'warning: RANK="abc" is not a rank' "$work/bad-rank-r0.log"
check "  ... and in trace.path, and the trace's rank is 0" \
    bash -c "[ -e '$work/t-r0.trace' ] && [ \"\$('$B/shim-report' summary '$work/t-r0.trace' | sed -n 's/^rank: //p')\" = 0 ]"
check "  ... the same result" same
for bad in "" " 7" "7x" "-1" "2147483648"; do
    run RANK="$bad" SHIM_TRACE_PATH="$work/q-r%r.trace"
    check "RANK=\"$bad\": one warning, %r is 0" \
        bash -c "[ \$(grep -cF 'warning: RANK=\"$bad\" is not a rank' '$work/err') -eq 1 ] && [ -e '$work/q-r0.trace' ]"
    rm -f "$work/q-r0.trace"
done
run RANK=12 SHIM_TRACE_PATH="$work/t-r%r.trace"
check "RANK=12: no warning, %r is 12, the trace's rank is 12" \
    bash -c "[ -e '$work/t-r12.trace' ] && ! grep -q 'not a rank' '$work/err' && [ \"\$('$B/shim-report' summary '$work/t-r12.trace' | sed -n 's/^rank: //p')\" = 12 ]"
run SHIM_TRACE_PATH="$work/u-r%r.trace"
check "RANK unset: no warning, %r is 0" bash -c "[ -e '$work/u-r0.trace' ] && ! grep -q 'not a rank' '$work/err'"
[ "$failures" -eq 0 ]
