#!/usr/bin/env bash
# tests/conf/libshim_diags.sh — a configuration's diagnostics as libshim logs them name their
# severity once: "libshim[PID]: error: FILE:1:1: unknown option 'bogus'", the log's level and
# then conf/'s line without its own (conf_diag's bare), where it read
# "libshim[PID]: error: FILE:1:1: error: ..."; the tools still print conf/'s whole line
# ("FILE:1:1: error: ..."), which names no level of its own otherwise. A file's error, a
# variable's error and a variable's warning, each under libshim and under shim-report config.
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
scratch
plan 7
PROG="$B/tests/shim/shim_prog"
printf 'bogus = 1\n' >"$tmp/bad.toml"

# logged LINE VAR=VALUE...: a program under libshim with the variables logs LINE (after
# "libshim[PID]: ") exactly once, and no line of its log names a severity twice.
logged() {
    local line=$1
    shift
    env "$@" LD_PRELOAD="$PRELOAD" "$PROG" basic >/dev/null 2>"$tmp/err"
    cat "$tmp/err"
    [ "$(sed -n 's/^libshim\[[0-9]*\]: //p' "$tmp/err" | grep -cxF -- "$line")" -eq 1 ] &&
        ! grep -qE '^libshim\[[0-9]+\]: (error|warning): .*: (error|warning): ' "$tmp/err"
}
check "a configuration file's error: 'error' once, the file's line and column" \
    logged "error: $tmp/bad.toml:1:1: unknown option 'bogus'" SHIM_CONFIG="$tmp/bad.toml"
check "a variable's error: 'error' once" \
    logged "error: SHIM_MODE: invalid value \"fast\" (expected one of: off, record, auto)" \
    SHIM_MODE=fast
check "a variable's warning: 'warning' once" \
    logged "warning: SHIM_BUGDET: unknown variable, ignored (did you mean SHIM_BUDGET?)" \
    SHIM_BUGDET=1GiB
# reported LINE VAR=VALUE...: shim-report config prints conf/'s whole line LINE.
reported() {
    local line=$1
    shift
    env "$@" "$B/shim-report" config >/dev/null 2>"$tmp/err"
    cat "$tmp/err"
    grep -qxF -- "$line" "$tmp/err"
}
check "shim-report config: the file's whole line, severity included" \
    reported "$tmp/bad.toml:1:1: error: unknown option 'bogus'" SHIM_CONFIG="$tmp/bad.toml"
check "shim-report config: the variable's whole line" \
    reported "SHIM_BUGDET: warning: unknown variable, ignored (did you mean SHIM_BUDGET?)" \
    SHIM_BUGDET=1GiB
check "shim-run: the file's whole line" \
    sh -c "LD_PRELOAD='${PRELOAD%"$SHIM_LIB"}' '$B/shim-run' --config '$tmp/bad.toml' true 2>&1 | grep -qxF \"shim-run: $tmp/bad.toml:1:1: error: unknown option 'bogus'\""
check "the program still ran (libshim steps aside on a configuration error)" \
    sh -c "SHIM_CONFIG='$tmp/bad.toml' LD_PRELOAD='$PRELOAD' '$PROG' basic 2>/dev/null | grep -q checksum="
[ "$failures" -eq 0 ]
