#!/usr/bin/env bash
# A C program that is not part of the build uses the simulated device exactly as
# the issue states it:
#   cc FILE.c -Itests/simgpu -I$CUDA_HOME/include -Lbuild/simgpu -lcudart -lcuda
# registers a kernel, launches it through cudaLaunchKernel and cuLaunchKernel,
# maps and unmaps VMM memory, measures simgpu_set_cost through events, hits
# SIMGPU_MEMORY, gets CUDA_ERROR_ILLEGAL_ADDRESS from a kernel touching an
# unmapped range, and leaves a SIMGPU_STATS file that is then checked.
set -u
source "$(dirname "$0")/../check.sh" # plan; check is this file's
# The compile, 17 checks of the program, 6 of its SIMGPU_STATS file.
plan 24
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
san=""
case "${SAN:-}" in asan) san=-fsanitize=address ;; ubsan) san=-fsanitize=undefined ;; tsan) san=-fsanitize=thread ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/prog.c" <<'PROG'
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include "simgpu.h"

static int failures;
#define CHECK(name, cond) do { int ok_ = (cond); printf("%s - %s\n", ok_ ? "ok" : "not ok", name); failures += !ok_; } while (0)

static void add_one(void **p)
{
    int *x = *(int **)p[0];
    int n = *(int *)p[1];
    for (int i = 0; i < n; i++)
        x[i] += 1;
}

int main(void)
{
    size_t sizes[] = {sizeof(void *), sizeof(int)};
    CUfunction f = simgpu_register("add_one", add_one, 2, sizes);
    CHECK("register", f != NULL);
    simgpu_set_cost(f, 250.0);

    int *d = NULL, n = 1000, host[1000];
    CHECK("cudaMalloc", cudaMalloc((void **)&d, n * sizeof(int)) == cudaSuccess);
    CHECK("cudaMemset", cudaMemset(d, 0, n * sizeof(int)) == cudaSuccess);
    void *args[] = {&d, &n};
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, 0);
    CHECK("cudaLaunchKernel", cudaLaunchKernel((const void *)add_one, (dim3){1, 1, 1}, (dim3){128, 1, 1}, args, 0, 0) == cudaSuccess);
    CHECK("cuLaunchKernel", cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL) == CUDA_SUCCESS);
    cudaEventRecord(b, 0);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    CHECK("event time equals two registered costs (0.5 ms)", ms > 0.4999f && ms < 0.5001f);
    cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
    CHECK("both launches ran", host[0] == 2 && host[999] == 2);

    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    size_t gran = 0;
    cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CHECK("reserve", cuMemAddressReserve(&va, gran, 0, 0, 0) == CUDA_SUCCESS);
    CHECK("create", cuMemCreate(&h, gran, &prop, 0) == CUDA_SUCCESS);
    CHECK("map", cuMemMap(va, gran, 0, h, 0) == CUDA_SUCCESS);
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK("set access", cuMemSetAccess(va, gran, &acc, 1) == CUDA_SUCCESS);
    CHECK("memcpy into mapped VMM", cuMemcpyHtoD(va, host, sizeof host) == CUDA_SUCCESS);
    void *vargs[] = {&va, &n};
    CHECK("kernel on mapped VMM", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, vargs, NULL) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS);
    CHECK("unmap", cuMemUnmap(va, gran) == CUDA_SUCCESS);

    void *big = NULL;
    CHECK("SIMGPU_MEMORY enforced", cudaMalloc(&big, (size_t)300 << 20) == cudaErrorMemoryAllocation);
    cudaGetLastError();

    CHECK("launch on unmapped range queued", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, vargs, NULL) == CUDA_SUCCESS);
    CHECK("CUDA_ERROR_ILLEGAL_ADDRESS", cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS);
    return failures ? 1 : 0;
}
PROG
cc "$work/prog.c" $san -I"$root/tests/simgpu" -I"$CUDA_HOME/include" -L"$root/$BUILD/simgpu" -lcudart -lcuda \
    -o "$work/prog" || { echo "not ok - compile"; exit 1; }
echo "ok - compile"
SIMGPU_MEMORY=256MiB SIMGPU_QUIET=1 SIMGPU_STATS="$work/stats.json" \
    LD_LIBRARY_PATH="$root/$BUILD/simgpu" "$work/prog"
rc=$?
python3 - "$work/stats.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"not ok - SIMGPU_STATS file readable ({e})")
    sys.exit(1)
checks = [
    ("stats: capacity is SIMGPU_MEMORY", s["capacity_bytes"] == 256 << 20),
    ("stats: one illegal access", s["illegal_accesses"] == 1),
    ("stats: four kernels ran (the fifth faulted)", s["kernels"] == 4),
    ("stats: peak covers the 2 MiB mapping", s["peak_device_bytes"] >= 2 << 20),
    ("stats: bytes copied to the device", s["bytes_h2d"] == 4000),
    ("stats: device time covers the kernels", s["device_time_us"] >= 500),
]
bad = 0
for name, ok in checks:
    print(("ok" if ok else "not ok") + " - " + name)
    bad += not ok
sys.exit(1 if bad else 0)
PY
prc=$?
[ $rc -eq 0 ] && [ $prc -eq 0 ]
