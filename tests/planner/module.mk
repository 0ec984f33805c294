# tests/planner/module.mk — cmocka tests of the planner, the shim-plan CLI test and the fuzz
# target of the model reader (corpus in tests/planner/corpus-plan_model_fuzz/).

tests_planner_CFLAGS := -Iplanner -Iplanner/rules -Iconf -Itests/conf
PLANNER_TEST_NAMES := $(basename $(notdir $(wildcard tests/planner/test_plan_*.c)))
PLANNER_TESTS := $(PLANNER_TEST_NAMES:%=$(BUILD)/tests/planner/%)

ALL_TARGETS += $(PLANNER_TESTS)
TESTS += $(PLANNER_TESTS) tests/planner/test_shimplan.sh tests/planner/test_shimplan_host.sh

$(BUILD)/tests/planner/test_plan_%: $(BUILD)/tests/planner/test_plan_%.o $(PLANNER_LIB) $(CONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(PLANNER_LIB) $(CONF_LIB) -lcmocka -lm

PLANNER_FUZZ := $(BUILD)/fuzz/plan_model_fuzz
FUZZ_TARGETS += $(PLANNER_FUZZ)

$(PLANNER_FUZZ): tests/planner/fuzz_plan_model.c $(PLANNER_SRCS) planner/plan.h planner/plan_internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iplanner -Iplanner/rules -Iplanner/base -Iconf -o $@ tests/planner/fuzz_plan_model.c \
		$(PLANNER_SRCS) -lm
