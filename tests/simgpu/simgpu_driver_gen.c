/* simgpu_driver_gen.c — which driver generation the simulator behaves as (SIMGPU_DRIVER_VERSION):
 * the version it reports, the device attributes it knows and the host locations cuMemCreate
 * accepts.
 *
 * The facts each generation rests on:
 * - CU_MEM_LOCATION_TYPE_HOST_NUMA and CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID (134) first appear in
 *   CUDA 12.2: NVSHMEM's cudawrap.h defines both itself "#if CUDART_VERSION < 12020", and
 *   ncclCuMemHostAlloc in NCCL's src/include/alloc.h is compiled only "#if CUDART_VERSION >=
 * 12020". So host-located cuMemCreate works from a 12.2 driver (SIM_GEN_HOST_NUMA).
 * - CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED (141) and
 *   ..._HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED (145) are in CUDA 13.0's cuda.h; a copy of a
 *   12.x cuda.h seen in public code lists 139, 140 and 143 without them. Which 12.x release added
 *   them was not confirmed: the simulator models the worse case for a program that relies on
 *   them, "absent before 12.9" (SIM_GEN_HOST_ATTRS), where a driver answers
 *   CUDA_ERROR_INVALID_VALUE for an attribute it does not know.
 * - CU_MEM_LOCATION_TYPE_HOST in cuMemCreate (a host allocation on no particular node): the
 *   cuMemCreate documentation that describes it is the one that comes with attribute 145; on an
 *   older driver the worse case is modelled, the location type is refused as invalid. HOST_NUMA
 *   is what NCCL uses, with the node from attribute 134 ("if (cpuNumaNodeId < 0) cpuNumaNodeId
 *   = 0", in NCCL's alloc.h).
 * - cuda.h (13.0) on cuMemCreate: HOST_NUMA's id "must specify the NUMA ID of the CPU. On
 *   systems where NUMA is not available ... must be set to 0", and HOST_NUMA_CURRENT "will
 *   result in CUDA_ERROR_INVALID_VALUE". The simulated host has one node, 0.
 * - A driver whose host-located VMM is unusable (SIMGPU_HOST_VMM=0: a platform without it, or a
 *   container that denies the NUMA policy calls, as NCCL's ncclCuMemHostEnable comment says of
 *   Docker without SYS_NICE) answers CUDA_ERROR_NOT_SUPPORTED, which cuMemCreate's documentation
 *   lists among its errors; the exact code a real driver returns there was not found. */
#include "simgpu_internal.h"

#include <stdlib.h>
#include <string.h>

#define SIM_GEN_HOST_NUMA  12020 /* HOST_NUMA locations and attribute 134 */
#define SIM_GEN_HOST_ATTRS 12090 /* attributes 141-147 and the HOST location in cuMemCreate */
#define SIM_GEN_MIN        11030 /* cuGetProcAddress, which the simulated runtime needs */

void sim_driver_gen_read(void)
{
    sim.driver_version = CUDA_VERSION;
    const char *s = getenv("SIMGPU_DRIVER_VERSION");
    if (!s || !*s)
        return;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < SIM_GEN_MIN || v > CUDA_VERSION || v % 10) {
        sim_diag("ignoring SIMGPU_DRIVER_VERSION=%s (want 1000*major + 10*minor, from %d to %d, "
                 "e.g. 12040)",
                 s, SIM_GEN_MIN, CUDA_VERSION);
        return;
    }
    sim.driver_version = (int)v;
}

/* Whether this generation knows attribute a at all. */
static bool knows(CUdevice_attribute a)
{
    switch ((int)a) {
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
        return sim.driver_version >= SIM_GEN_HOST_NUMA;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED:
        return sim.driver_version >= SIM_GEN_HOST_ATTRS;
    default:
        return true;
    }
}

bool sim_driver_gen_attribute(CUdevice_attribute a, int *value)
{
    if (!knows(a))
        return false;
    if (a == CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID)
        *value = 0; /* one host node: the closest is node 0 */
    else if (a == CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED ||
             a == CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)
        *value = sim.host_vmm;
    return true;
}

CUresult sim_driver_gen_host_location(const CUmemLocation *loc)
{
    switch (loc->type) {
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        if (sim.driver_version < SIM_GEN_HOST_NUMA)
            return CUDA_ERROR_INVALID_VALUE; /* a location type this driver does not know */
        if (loc->id != 0)
            return CUDA_ERROR_INVALID_VALUE; /* no such node */
        break;
    case CU_MEM_LOCATION_TYPE_HOST:
        if (sim.driver_version < SIM_GEN_HOST_ATTRS)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE; /* HOST_NUMA_CURRENT included, as cuda.h says */
    }
    return sim.host_vmm ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}
