#!/usr/bin/env bash
# Runs the real-GPU checks given on the command line against the system's CUDA driver (never the
# simulated one). Skips cleanly (exit 0, "skip" lines) where no driver or GPU is present.
set -u
unset LD_LIBRARY_PATH
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    for t in "$@"; do echo "skip - $(basename "$t"): no CUDA driver (libcuda.so.1) on this machine"; done
    exit 0
fi
status=0
for t in "$@"; do
    echo "== $(basename "$t")"
    "$t"
    rc=$?
    case $rc in
    0) ;;
    77) echo "skip - $(basename "$t"): no usable GPU" ;;
    *) status=1 ;;
    esac
done
exit $status
