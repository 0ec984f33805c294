# tests/residency — the residency manager end to end: train_sim under budgets, fault injection
# over every driver call libshim makes, random stream timing, small tensors, the moves report,
# threads_sim's many threads on their own streams, and the in-process planner (scripts; need
# train_sim, threads_sim and libshim).
# A new end-to-end test is one file: tests/residency/test_NAME.sh.
TESTS += $(sort $(wildcard tests/residency/test_*.sh))

# The state machine, the policy seam, slabs and failure handling against a fake driver seam:
# the residency room and the rooms below it (core, the trace writer) only, as its include path.
tests_residency_CFLAGS := $(CUDA_INC) -Ishim/resid -Ishim/core -Ishim/trace -Iconf
RESID_UNIT := $(BUILD)/tests/residency/test_resid_unit
$(RESID_UNIT): $(BUILD)/tests/residency/test_resid_unit.o $(BUILD)/tests/residency/fake_driver.o \
               $(SHIM_RESID_OBJS) $(SHIM_CORE_OBJS) $(SHIM_TRACE_LIB) $(CONF_LIB)
	$(CC) -o $@ $^ -lcmocka -ldl -lpthread -lm $(LDFLAGS_ALL)
TESTS += $(RESID_UNIT)
