# train_sim_env.sh — sourced by the train_sim test scripts: the build's paths, a scratch folder
# ($tmp, removed at exit) and the ok / not_ok / field helpers.
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them); $failed is 1 once a
# check failed.
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export LD_LIBRARY_PATH="$root/$BUILD/simgpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin="$root/$BUILD/train_sim"
failed=0
source "$root/tests/check.sh" # plan (ok and not_ok below are these scripts' checks)
scratch

ok() { echo "ok - $1"; }
not_ok() {
    echo "not ok - $1"
    failed=1
}
# field NAME FILE: the value of NAME=... on the summary line (or the checksum).
field() { grep -o "$1=[^ ]*" "$2" | tail -n 1 | cut -d= -f2; }
