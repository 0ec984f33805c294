# tests/trace/html_env.sh — sourced by the tests of shim-report's HTML page once $B and $root are
# set: the browser that renders the page (CHROMIUM, else chromium on the PATH; empty when there is
# none), shim-report, trace_gen and the checker of a rendered page.
BROWSER=${CHROMIUM-$(command -v chromium || true)}
REPORT="$B/shim-report"
GEN="$B/trace_gen"
CHECK="$root/tests/trace/check_report_html.py"
