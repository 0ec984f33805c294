# tests/bench/planner.mk — planner benchmarks ($(BUILD)/bench/plan_bench). Built with the rest,
# run by hand or with `make bench-planner`; they print tables and never fail on timing.
# Figures and the commands that produced them: tests/bench/RESULTS-planner.md.

PLAN_BENCH := $(BUILD)/bench/plan_bench
ALL_TARGETS += $(PLAN_BENCH)

$(BUILD)/tests/bench/plan_bench.o: tests/bench/plan_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iplanner -Iplanner/rules -MMD -MP -c $< -o $@

$(PLAN_BENCH): $(BUILD)/tests/bench/plan_bench.o $(PLANNER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(PLANNER_LIB) -lm

.PHONY: bench-planner
bench-planner: $(PLAN_BENCH)
	$(PLAN_BENCH)
