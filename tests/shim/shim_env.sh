# shim_env.sh — sourced by the shim's test scripts: paths, and the LD_PRELOAD line for this build.
# Under a sanitizer build the sanitizer's runtime must come first in the preload list.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
B="$root/$BUILD"
SHIM_LIB="$B/libshim.so"
case "${SAN:-}" in
asan) PRELOAD="$(${CC:-gcc} -print-file-name=libasan.so) $SHIM_LIB" ;;
tsan) PRELOAD="$(${CC:-gcc} -print-file-name=libtsan.so) $SHIM_LIB" ;;
*) PRELOAD="$SHIM_LIB" ;;
esac
# The sanitizer's runtime alone (empty in a plain build): shim-run keeps what LD_PRELOAD holds at
# the head of the command's, so under a sanitizer build it is given the runtime, and only
# shim-run is (the test's own tools are not instrumented). shim_run ARGS... runs it so.
SAN_RT=${PRELOAD%"$SHIM_LIB"}
SAN_RT=${SAN_RT% }
shim_run() { LD_PRELOAD="$SAN_RT" "$B/shim-run" "$@"; }
export LD_LIBRARY_PATH="$B/simgpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SIMGPU_QUIET=1
# The simulated device charges the host no time for VMM calls, and a remap's wall time here
# varies from run to run: the planner is told the fixed cost the simulated figures always used,
# so that plans, and the virtual times tests compare with them, are the same every run.
export SHIM_LINK_REMAP=${SHIM_LINK_REMAP:-10us}
# plan, all and checker (tests/check.sh: the rules of a check); check is this file's.
source "$root/tests/check.sh"
failures=0
# check NAME COMMAND...: runs the command, prints ok / not ok.
check() {
    local name=$1
    shift
    if "$@"; then echo "ok - $name"; else echo "not ok - $name"; failures=$((failures + 1)); fi
}
