/* test_sim_drivergen.c — SIMGPU_DRIVER_VERSION: each driver generation reports its version, knows
 * the host-VMM attributes only from 12.9 and host locations in cuMemCreate only from 12.2 (HOST
 * from 12.9), and SIMGPU_HOST_VMM=0 refuses them on any generation. The simulator reads its
 * environment once per process, so every generation is observed in a child process of its own;
 * the parent, which never calls the driver, checks what the child saw. */
#include "simgpu_test.h"

#include <sys/wait.h>
#include <unistd.h>

enum { A134, A141, A145, NATTR };
enum { C_NUMA0, C_NUMA1, C_HOST, C_CURRENT, NCREATE };

struct seen {
    CUresult init_rc, version_rc;
    int version;
    CUresult attr_rc[NATTR];
    int attr[NATTR];
    CUresult create_rc[NCREATE];
    CUresult release_rc[NCREATE];
};

static CUresult create_at(CUmemLocationType t, int id, CUresult *release_rc)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = t;
    prop.location.id = id;
    CUmemGenericAllocationHandle h = 0;
    CUresult rc = cuMemCreate(&h, 2 * MIB, &prop, 0);
    *release_rc = rc == CUDA_SUCCESS ? cuMemRelease(h) : CUDA_SUCCESS;
    return rc;
}

static void observe(struct seen *s)
{
    static const CUdevice_attribute attrs[NATTR] = {
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID,
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
        CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    };
    static const struct {
        CUmemLocationType t;
        int id;
    } where[NCREATE] = {{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0},
                        {CU_MEM_LOCATION_TYPE_HOST_NUMA, 1},
                        {CU_MEM_LOCATION_TYPE_HOST, 0},
                        {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0}};
    s->init_rc = cuInit(0);
    s->version_rc = cuDriverGetVersion(&s->version);
    for (int i = 0; i < NATTR; i++) {
        s->attr[i] = -7;
        s->attr_rc[i] = cuDeviceGetAttribute(&s->attr[i], attrs[i], 0);
    }
    for (int i = 0; i < NCREATE; i++)
        s->create_rc[i] = create_at(where[i].t, where[i].id, &s->release_rc[i]);
}

/* Runs observe() in a child with SIMGPU_DRIVER_VERSION=version (NULL: unset) and
   SIMGPU_HOST_VMM=host_vmm. */
static struct seen run(const char *version, const char *host_vmm)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        if (version)
            setenv("SIMGPU_DRIVER_VERSION", version, 1);
        else
            unsetenv("SIMGPU_DRIVER_VERSION");
        setenv("SIMGPU_HOST_VMM", host_vmm, 1);
        struct seen s;
        memset(&s, 0, sizeof s);
        observe(&s);
        _exit(write(fd[1], &s, sizeof s) == (ssize_t)sizeof s ? 0 : 1);
    }
    close(fd[1]);
    struct seen s;
    memset(&s, 0, sizeof s);
    ssize_t n = read(fd[0], &s, sizeof s);
    close(fd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(n, (ssize_t)sizeof s);
    CK(s.init_rc);
    CK(s.version_rc);
    return s;
}

static void assert_known(const struct seen *s, int a, int value)
{
    assert_int_equal(s->attr_rc[a], CUDA_SUCCESS);
    assert_int_equal(s->attr[a], value);
}

static void assert_unknown(const struct seen *s, int a)
{
    assert_int_equal(s->attr_rc[a], CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(s->attr[a], -7); /* left alone */
}

/* The creates every generation refuses: another node, and HOST_NUMA_CURRENT (cuda.h). */
static void assert_bad_locations_refused(const struct seen *s)
{
    assert_int_equal(s->create_rc[C_NUMA1], CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(s->create_rc[C_CURRENT], CUDA_ERROR_INVALID_VALUE);
}

SIM_TEST(test_default_is_the_headers_version)
{
    (void)state;
    struct seen s = run(NULL, "1");
    assert_int_equal(s.version, CUDA_VERSION);
    assert_known(&s, A134, 0);
    assert_known(&s, A141, 1);
    assert_known(&s, A145, 1);
    CK(s.create_rc[C_NUMA0]);
    CK(s.release_rc[C_NUMA0]);
    CK(s.create_rc[C_HOST]);
    CK(s.release_rc[C_HOST]);
    assert_bad_locations_refused(&s);
}

SIM_TEST(test_12_9_knows_the_host_vmm_attributes)
{
    (void)state;
    struct seen s = run("12090", "1");
    assert_int_equal(s.version, 12090);
    assert_known(&s, A141, 1);
    assert_known(&s, A145, 1);
    CK(s.create_rc[C_HOST]);
}

SIM_TEST(test_12_4_has_host_numa_without_attributes)
{
    (void)state;
    struct seen s = run("12040", "1");
    assert_int_equal(s.version, 12040);
    assert_known(&s, A134, 0);
    assert_unknown(&s, A141);
    assert_unknown(&s, A145);
    CK(s.create_rc[C_NUMA0]);
    CK(s.release_rc[C_NUMA0]);
    assert_int_equal(s.create_rc[C_HOST], CUDA_ERROR_INVALID_VALUE);
    assert_bad_locations_refused(&s);
}

SIM_TEST(test_12_0_has_no_host_locations)
{
    (void)state;
    struct seen s = run("12000", "1");
    assert_int_equal(s.version, 12000);
    assert_unknown(&s, A134);
    assert_unknown(&s, A141);
    assert_unknown(&s, A145);
    assert_int_equal(s.create_rc[C_NUMA0], CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(s.create_rc[C_HOST], CUDA_ERROR_INVALID_VALUE);
}

SIM_TEST(test_no_host_vmm_on_a_new_driver)
{
    (void)state;
    struct seen s = run("13000", "0");
    assert_known(&s, A141, 0);
    assert_known(&s, A145, 0);
    assert_known(&s, A134, 0);
    assert_int_equal(s.create_rc[C_NUMA0], CUDA_ERROR_NOT_SUPPORTED);
    assert_int_equal(s.create_rc[C_HOST], CUDA_ERROR_NOT_SUPPORTED);
    assert_bad_locations_refused(&s);
}

SIM_TEST(test_no_host_vmm_on_12_4)
{
    (void)state;
    struct seen s = run("12040", "0");
    assert_unknown(&s, A145);
    assert_int_equal(s.create_rc[C_NUMA0], CUDA_ERROR_NOT_SUPPORTED);
}

SIM_TEST(test_bad_versions_are_ignored)
{
    (void)state;
    const char *bad[] = {"12345", "abc", "9000", "99990", "12040x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct seen s = run(bad[i], "1");
        assert_int_equal(s.version, CUDA_VERSION);
        assert_known(&s, A145, 1);
    }
}

int main(void)
{
    setenv("SIMGPU_QUIET", "1", 1);
    return sim_test_run(NULL);
}
