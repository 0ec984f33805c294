# tests/planner/shimplan_env.sh — sourced by the shim-plan command-line tests: the binary,
# check.sh's rules, a scratch folder in $tmp, and json_check.
BUILD=${BUILD:-build}
shimplan=$BUILD/shim-plan
source "$(dirname "${BASH_SOURCE[0]}")/../check.sh"
scratch

json_check() { # NAME PYTHON-EXPRESSION over j (the parsed JSON of $tmp/json)
    check "$1" python3 -c "import json,sys; j=json.load(open('$tmp/json')); sys.exit(0 if ($2) else 1)"
}
