# tests/residency — the residency manager end to end: train_sim under budgets, fault injection
# over every driver call libshim makes, random stream timing, small tensors, the moves report,
# threads_sim's many threads on their own streams, and the in-process planner (scripts; need
# train_sim, threads_sim and libshim).
# A new end-to-end test is one file: tests/residency/test_NAME.sh.
TESTS += $(sort $(wildcard tests/residency/test_*.sh))

# The state machine, the policy seam, slabs and failure handling against a fake driver seam:
# the residency rooms and the rooms below them (core, the trace writer) only, as its include path.
tests_residency_CFLAGS = $(CUDA_INC) $(call room_inc,shim/resid)
# Each room's own test links that room and the rooms below it, nothing above.
RESID_STATE_TEST := $(BUILD)/tests/residency/test_resid_state
$(RESID_STATE_TEST): $(BUILD)/tests/residency/test_resid_state.o \
                     $(BUILD)/tests/residency/fake_driver.o $(RESID_BELOW_STATE) $(SHIM_CORE_OBJS) \
                     $(SHIM_TRACE_LIB) $(CONF_LIB) $(BASE_LIB)
	$(CC) -o $@ $^ -lcmocka -ldl -lpthread -lm $(LDFLAGS_ALL)
RESID_POOLS_TEST := $(BUILD)/tests/residency/test_resid_pools
$(RESID_POOLS_TEST): $(BUILD)/tests/residency/test_resid_pools.o \
                     $(BUILD)/tests/residency/fake_driver.o $(RESID_BELOW_POOLS) $(SHIM_CORE_OBJS) \
                     $(SHIM_TRACE_LIB) $(CONF_LIB) $(BASE_LIB)
	$(CC) -o $@ $^ -lcmocka -ldl -lpthread -lm $(LDFLAGS_ALL)
TESTS += $(RESID_STATE_TEST) $(RESID_POOLS_TEST)

# The whole manager through its entry points.
RESID_UNIT := $(BUILD)/tests/residency/test_resid_unit
$(RESID_UNIT): $(BUILD)/tests/residency/test_resid_unit.o $(BUILD)/tests/residency/fake_driver.o \
               $(SHIM_RESID_OBJS) $(SHIM_CORE_OBJS) $(SHIM_TRACE_LIB) $(CONF_LIB) $(BASE_LIB)
	$(CC) -o $@ $^ -lcmocka -ldl -lpthread -lm $(LDFLAGS_ALL)
TESTS += $(RESID_UNIT)

# The full campaigns, beyond what `make test` affords (its runs are sampled for a few minutes):
#   make faults          the fault loop over every N of every entry point, single and sticky
#                        (hours on 2 cores; RESIDENCY_FAULT_MODES picks workloads)
#   make threads-loaded  the contention campaign: 20 idle and 200 loaded runs (about 20 min)
# Both take SAN= as `make test` does.
.PHONY: faults threads-loaded
faults: $(ALL_TARGETS)
	@BUILD=$(BUILD) SAN=$(SAN) RESIDENCY_FAULT_ALL=1 TEST_TIMEOUT=86400 \
		tests/run_tests.sh tests/residency/test_fault_loop.sh
threads-loaded: $(ALL_TARGETS)
	@BUILD=$(BUILD) SAN=$(SAN) RESIDENCY_LOADED_RUNS=200 RESIDENCY_IDLE_RUNS=20 TEST_TIMEOUT=14400 \
		tests/run_tests.sh tests/residency/test_threads_loaded.sh
