#!/usr/bin/env bash
# tests/trace/test_report_html.sh — `shim-report html`, rendered in a real browser. The demo
# workload (the Makefile's demo target: train_sim on a simulated device of 1536 MiB under
# libshim, 12 iterations, so that evictions, restores and the in-process plan are all in its
# trace), generated traces (trace_gen synthetic, with kernel names that need escaping; plan;
# moves, with slabs, unfinished moves and every outcome; empty), the fuzz corpus's traces of
# formats 1.0 and 1.1 and half of the demo's trace (truncated) each become a page. Without a browser: the page is self-contained (no address, no
# external resource, a Content-Security-Policy that forbids them) and escapes the trace's text.
# In headless Chromium (Debian's `chromium`): the page's script runs without an error (nothing on
# the console, no error recorded by the page's own handler), the charts drew, and every number
# in the page is that of summary --json and moves --json (tests/trace/check_report_html.py reads
# the DOM); opened as PAGE#selftest, the page clicks every table header twice and checks the
# order, and moves over the memory chart. A page with a failing script is caught (control). At
# 1400 px wide no table of the demo's page scrolls sideways (a planted wide one is seen). The
# demo's screenshot, 1400 px wide, is left in $BUILD/report-html/demo.png (docs/report.png is a
# copy).
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them); the browser checks
# print "skip - ..." when chromium is not installed.
set -u
source "$(dirname "$0")/../residency/resid_env.sh"
source "$root/tests/trace/html_env.sh" # BROWSER, REPORT, GEN, CHECK
# 22 checks without a browser; with one, 330 of the pages as rendered (each page's checker
# items included); without one, a skip line for them.
plan $((22 + $([ -n "$BROWSER" ] && echo 330 || echo 1)))
CORPUS="$root/tests/trace/corpus-fuzz_trace"
# The demo's workload and device, as the Makefile's demo target has them.
read -ra DEMO_ARGS <<<"$(sed -n 's/^DEMO_ARGS ?= //p' "$root/Makefile")"
DEMO_MEMORY=$(sed -n 's/^DEMO_MEMORY ?= //p' "$root/Makefile")
TOP=12
SHOT_DIR="$B/report-html"
# The demo takes about 10 s on the simulated device; several times that under a sanitizer.
case "${SAN:-}" in
'') DEMO_TIMEOUT=120 ;;
*) DEMO_TIMEOUT=600 ;;
esac

# ---- the demo's trace, and the configuration it recorded ----
# Run from the repository's root as `make demo` does, so that the page's title is its command.
demo_env=(SHIM_TRACE_PATH="$work/demo.trace" SHIM_LOG_LEVEL=info)
(cd "$root" && env SIMGPU_MEMORY="$DEMO_MEMORY" "${demo_env[@]}" LD_PRELOAD="$PRELOAD" \
    timeout -k 5 "$DEMO_TIMEOUT" "$BUILD/train_sim" "${DEMO_ARGS[@]}") >"$work/demo.out" 2>"$work/demo.err"
rc=$?
check "demo: train_sim ${DEMO_ARGS[*]} on ${DEMO_MEMORY:-?} under libshim: exit 0 (got $rc)" \
    test "$rc" = 0 -a -s "$work/demo.trace" -a "${#DEMO_ARGS[@]}" -gt 0 -a -n "$DEMO_MEMORY"
[ "$rc" = 0 ] || tail_err demo 8
# What libshim recorded as its configuration is what `shim-report config` says in its environment.
env "${demo_env[@]}" "$REPORT" config >"$work/demo.config" 2>/dev/null

# ---- the other traces ----
"$GEN" synthetic "$work/synthetic.trace"
"$GEN" plan "$work/plan.trace"
"$GEN" moves "$work/moves.trace"
"$GEN" empty "$work/empty.trace"
"$GEN" devices "$work/devices.trace"
cp "$CORPUS/synthetic.trace" "$work/format-1.0.trace"
cp "$CORPUS/residency.trace" "$work/format-1.1.trace"
head -c $(($(stat -c %s "$work/demo.trace") / 2)) "$work/demo.trace" >"$work/truncated.trace"
PAGES=(demo synthetic plan moves empty devices format-1.0 format-1.1 truncated)

# page NAME: the page of $work/NAME.trace, and summary --json and moves --json beside it (the
# same path: the page's data block holds the summary's "trace" key too).
page() {
    (cd "$work" && "$REPORT" html --top "$TOP" -o "$1.html" "$1.trace" 2>"$1.html.err") &&
        (cd "$work" && "$REPORT" summary --json --top "$TOP" "$1.trace" >"$1.sum.json" 2>/dev/null) &&
        (cd "$work" && "$REPORT" moves --json "$1.trace" >"$1.mv.json" 2>/dev/null)
}
for name in "${PAGES[@]}"; do
    page "$name"
    rc=$?
    check "$name: shim-report html --top $TOP -o $name.html: exit 0 (got $rc), a page" \
        sh -c "[ $rc -eq 0 ] && head -n 1 '$work/$name.html' | grep -qx '<!DOCTYPE html>'"
done
check "truncated: the page says the trace is truncated" grep -q 'id="truncated"' "$work/truncated.html"

# ---- without a browser: self-contained, escaped ----
# No address at all, no element or CSS rule that loads something, and a policy forbidding it.
selfcontained() {
    python3 - "$1" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
bad = re.findall(r"""(?i)(?:\b(?:src|href|srcset|action|formaction|xlink:href)\s*=|<(?:link|img|iframe|object|embed|audio|video|source|base)\b|@import|url\(|https?:|//[a-z0-9.-]+\.[a-z]{2,}/)""", page)
csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
sys.exit(0 if not bad and csp in page else 1)
PY
}
for name in "${PAGES[@]}"; do
    check "$name: self-contained (no address or external resource; CSP default-src 'none')" \
        selfcontained "$work/$name.html"
done
# trace_gen's kernel names "softmax_kernel<float>" and 'loss "readback"': escaped in the HTML,
# and as \u003c in the data block, so never raw.
check "synthetic: kernel names escaped for HTML (softmax_kernel&lt;float&gt;, loss &quot;readback&quot;)" \
    sh -c "grep -qF 'softmax_kernel&lt;float&gt;' '$work/synthetic.html' &&
           grep -qF 'loss &quot;readback&quot;' '$work/synthetic.html' &&
           ! grep -qF 'softmax_kernel<float>' '$work/synthetic.html' &&
           grep -qF 'softmax_kernel\\u003cfloat\\u003e' '$work/synthetic.html'"
"$REPORT" html --json "$work/demo.trace" >/dev/null 2>"$work/usage.err"
rc=$?
check "html --json: usage, exit 2 (got $rc)" \
    sh -c "[ $rc -eq 2 ] && grep -q '^usage: shim-report html' '$work/usage.err'"

# ---- in the browser ----
# CHROMIUM names another browser binary (set and empty: none, to see the skip).
BROWSER=${CHROMIUM-$(command -v chromium || true)}
if [ -z "$BROWSER" ]; then
    echo "skip - chromium is not installed: the page is not rendered (apt-get install chromium)"
    [ "$failures" -eq 0 ]
    exit
fi
mkdir -p "$work/home"
# chrome LOG ARGS...: headless Chromium with a profile in $work; its log (console messages are
# "...:CONSOLE..." lines) in LOG.
chrome() {
    local log=$1
    shift
    HOME="$work/home" timeout -k 5 90 "$BROWSER" --headless --no-sandbox --disable-gpu \
        --no-first-run --user-data-dir="$work/chrome" --enable-logging=stderr --v=0 "$@" 2>"$log"
}
# quiet LOG: nothing was written to the console (the page logs nothing; an error would be there).
quiet() { ! grep -q ':CONSOLE' "$1"; }

for name in "${PAGES[@]}"; do
    url="file://$work/$name.html"
    chrome "$work/$name.log" --dump-dom "$url" >"$work/$name.dom"
    chrome "$work/$name.selftest.log" --dump-dom "$url#selftest" >"$work/$name.selftest.dom"
    check "$name: rendered by $(basename "$BROWSER"), nothing on the console" \
        sh -c "[ -s '$work/$name.dom' ] && [ -s '$work/$name.selftest.dom' ] &&
               ! grep -q ':CONSOLE' '$work/$name.log' '$work/$name.selftest.log'"
    quiet "$work/$name.log" || grep ':CONSOLE' "$work/$name.log" | head -n 3 | sed 's/^/    | /'
    extra=()
    [ "$name" = demo ] && extra=(--config "$work/demo.config" --expect-moves --expect-plan)
    [ "$name" = plan ] && extra=(--expect-plan)
    python3 "$CHECK" --name "$name" --dom "$work/$name.dom" --summary "$work/$name.sum.json" \
        --moves "$work/$name.mv.json" --selftest "$work/$name.selftest.dom" "${extra[@]}" ||
        failures=$((failures + 1))
done

# At 1400 px wide every table of the demo's page fits its column: none scrolls sideways (the
# page's script lists those that would in <body data-wide-tables>).
chrome "$work/wide.log" --window-size=1400,3000 --dump-dom "file://$work/demo.html" >"$work/wide.dom"
check "demo at 1400 px: every table fits (body data-wide-tables is empty)" \
    grep -q '<body[^>]* data-wide-tables=""' "$work/wide.dom"
sed 's|</main>|<div class="table-wrap"><table id="planted-wide"><tr><td>'"$(printf 'x%.0s' $(seq 600))"'</td></tr></table></div></main>|' \
    "$work/demo.html" >"$work/wide-control.html"
chrome "$work/wide-control.log" --window-size=1400,3000 --dump-dom "file://$work/wide-control.html" \
    >"$work/wide-control.dom"
check "control: a planted table 600 characters wide is listed in data-wide-tables" \
    grep -q '<body[^>]* data-wide-tables="planted-wide"' "$work/wide-control.dom"

# The demo's screenshot: the page as a person sees it at 1400 px (docs/report.png is a copy).
mkdir -p "$SHOT_DIR"
rm -f "$SHOT_DIR/demo.png"
chrome "$work/shot.log" --hide-scrollbars --window-size=1400,2600 \
    --screenshot="$SHOT_DIR/demo.png" "file://$work/demo.html" >/dev/null
check "demo: a screenshot of the page ($SHOT_DIR/demo.png, $(stat -c %s "$SHOT_DIR/demo.png" 2>/dev/null || echo 0) bytes)" \
    sh -c "head -c 8 '$SHOT_DIR/demo.png' | od -An -tx1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a &&
           [ \$(stat -c %s '$SHOT_DIR/demo.png') -gt 50000 ]"

# Control: the checks see a failing script (the console line, the page's own error record).
sed 's|</body>|<script>null.boom();</script></body>|' "$work/demo.html" >"$work/control.html"
chrome "$work/control.log" --dump-dom "file://$work/control.html" >"$work/control.dom"
check "control: a page whose script fails is caught (console line, html data-errors)" \
    sh -c "grep -q ':CONSOLE' '$work/control.log' && grep -q '<html[^>]*data-errors=\"1\"' '$work/control.dom'"
[ "$failures" -eq 0 ]
