# tests/import/import_env.sh — sourced by the import tests: where the build, shim-plan and the
# recorded traces are, check.sh's rules and a scratch folder in $tmp.
BUILD=${BUILD:-build}
SHARED=${SHARED:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/shared}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shimplan=$BUILD/shim-plan
traces=$SHARED/traces
source "$here/../check.sh"
scratch

# field KEY FILE: the value of "KEY: VALUE" in shim-plan's text output.
field() { sed -n "s/^$1: //p" "$2"; }
