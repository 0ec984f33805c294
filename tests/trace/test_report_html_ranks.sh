#!/usr/bin/env bash
# tests/trace/test_report_html_ranks.sh — `shim-report html TRACE...`: the page of four ranks of
# one job (trace_gen with TRACE_GEN_RANK 0 to 3, given out of order: synthetic traces, one with
# moves and no step, one with a plan), rendered in headless Chromium. Checked against
# `summary --json TRACE...` and `summary TRACE...` of the same traces and `moves --json` of each
# (tests/trace/check_report_html.py --ranks-summary): the ranks table (steps, median step, peak,
# moves, bytes each way, stall), the grouped per-step bars of every rank, one part per rank behind
# the selector (each checked as the page of its trace alone), no console error, and #selftest
# (headers sorted, every rank selected in turn, every memory readout). Without a browser: exit
# status, self-containment, a trace that cannot be read among several, one trace's page unchanged.
# A page whose numbers were altered fails the checker (control). Prints "ok - NAME" lines; the
# browser checks print "skip - ..." when chromium is not installed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/check.sh" # plan; check is this file's
B="$root/${BUILD:-build}"
source "$root/tests/trace/html_env.sh" # BROWSER, REPORT, GEN, CHECK
# 7 checks without a browser; with one, 106 of the page as rendered (the checker's items
# included); without one, a skip line for them.
plan $((7 + $([ -n "$BROWSER" ] && echo 108 || echo 1)))
TOP=5
scratch work
failures=0
check() { # NAME, then a command whose success is the check
    local name=$1
    shift
    if "$@"; then echo "ok - $name"; else echo "not ok - $name" && failures=$((failures + 1)); fi
}

cd "$work" || exit 1
TRACE_GEN_RANK=0 "$GEN" synthetic r0.trace
TRACE_GEN_RANK=1 "$GEN" moves r1.trace
TRACE_GEN_RANK=2 "$GEN" plan r2.trace
TRACE_GEN_RANK=3 "$GEN" synthetic r3.trace
GIVEN=(r2.trace r0.trace r3.trace r1.trace)

"$REPORT" html --top "$TOP" -o ranks.html "${GIVEN[@]}" 2>ranks.err
rc=$?
check "four ranks: html -o ranks.html (given 2, 0, 3, 1): exit 0 (got $rc), nothing on stderr" \
    sh -c "[ $rc -eq 0 ] && [ ! -s ranks.err ] && head -n 1 ranks.html | grep -qx '<!DOCTYPE html>'"
"$REPORT" summary --json --top "$TOP" "${GIVEN[@]}" >ranks.sum.json
"$REPORT" summary "${GIVEN[@]}" >ranks.sum.txt
for r in 0 1 2 3; do "$REPORT" moves --json "r$r.trace" >"r$r.mv.json"; done
check "four ranks: one part per rank, in rank order (r0- to r3-)" sh -c \
    "[ \"\$(grep -o '<section class=\"rank\" id=\"r[0-9]-section\" data-rank=\"[0-9]\"' ranks.html |
        sed 's/.*id=\"\\(r[0-9]\\)-section\" data-rank=\"\\([0-9]\\)\"/\\1:\\2/' | tr '\n' ' ')\" = 'r0:0 r1:1 r2:2 r3:3 ' ]"
check "four ranks: every element id once" sh -c \
    "[ -z \"\$(grep -o ' id=\"[^\"]*\"' ranks.html | sort | uniq -d)\" ]"
check "four ranks: self-contained (the policy, no address)" sh -c \
    "grep -qF \"default-src 'none'\" ranks.html && ! grep -qiE 'https?:|<link|<img|url\\(' ranks.html"

# One trace: the page of one trace, no ranks overview.
"$REPORT" html --top "$TOP" -o one.html r0.trace
check "one trace: the page of one trace (no ranks section, no selector)" sh -c \
    "grep -q 'id=\"memory-chart\"' one.html && ! grep -qE 'id=\"(ranks|rank-select|r0-section)\"' one.html"
# A trace that cannot be read among several: exit 1, the page of the others.
"$REPORT" html -o part.html r0.trace missing.trace r3.trace 2>part.err
rc=$?
check "a missing trace: exit 1 (got $rc), named on stderr, the page of the two others" sh -c \
    "[ $rc -eq 1 ] && grep -q missing.trace part.err && [ \$(grep -c '<section class=\"rank\"' part.html) -eq 2 ]"
"$REPORT" html --json r0.trace r1.trace >/dev/null 2>usage.err
rc=$?
check "html --json TRACE...: usage, exit 2 (got $rc)" sh -c \
    "[ $rc -eq 2 ] && grep -qx 'usage: shim-report html \[--top N\] \[-o FILE\] TRACE...' usage.err"

BROWSER=${CHROMIUM-$(command -v chromium || true)}
if [ -z "$BROWSER" ]; then
    echo "skip - chromium is not installed: the page of four ranks is not rendered"
    [ "$failures" -eq 0 ]
    exit
fi
mkdir -p home
chrome() { # LOG ARGS...: headless Chromium, its log (console lines: ":CONSOLE") in LOG
    local log=$1
    shift
    HOME="$work/home" timeout -k 5 90 "$BROWSER" --headless --no-sandbox --disable-gpu \
        --no-first-run --user-data-dir="$work/chrome" --enable-logging=stderr --v=0 "$@" 2>"$log"
}
chrome ranks.log --dump-dom "file://$work/ranks.html" >ranks.dom
chrome ranks.selftest.log --dump-dom "file://$work/ranks.html#selftest" >ranks.selftest.dom
check "four ranks: rendered by $(basename "$BROWSER"), nothing on the console" \
    sh -c "[ -s ranks.dom ] && [ -s ranks.selftest.dom ] && ! grep -q ':CONSOLE' ranks.log ranks.selftest.log"
python3 "$CHECK" --name "four ranks" --dom ranks.dom --ranks-summary ranks.sum.json \
    --ranks-text ranks.sum.txt --rank-moves r0.mv.json r1.mv.json r2.mv.json r3.mv.json \
    --selftest ranks.selftest.dom || failures=$((failures + 1))

# Control: the checker sees a number that is not summary's (rank 2's peak in the ranks table).
python3 - ranks.dom altered.dom <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
row = re.search(r'<tr data-rank-index="2">(?:<td[^>]*>[^<]*</td>){4}<td data-value="(\d+)"', dom)
a, b = row.span(1)
open(sys.argv[2], "w", encoding="utf-8").write(dom[:a] + str(int(row.group(1)) + 1) + dom[b:])
PY
python3 "$CHECK" --name control --dom altered.dom --ranks-summary ranks.sum.json \
    --ranks-text ranks.sum.txt --rank-moves r0.mv.json r1.mv.json r2.mv.json r3.mv.json \
    >control.out
rc=$?
check "control: a page with rank 2's peak altered fails the checker (exit $rc, the ranks table)" \
    sh -c "[ $rc -eq 1 ] && grep -q '^not ok - control: ranks table: every cell' control.out"
[ "$failures" -eq 0 ]
