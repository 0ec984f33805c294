# tests/import/module.mk — shim-plan's trace importers (tools/import/): the end-to-end test over
# every trace in ../shared/traces (with an independent peak check in Python), and one fuzz target
# per tests/import/fuzz_import_NAME.c, $(BUILD)/fuzz/import_NAME_fuzz, built from the importers
# and the planner (seed corpus in tests/import/corpus-import_NAME_fuzz/).

TESTS += $(sort $(wildcard tests/import/test_*.sh))

IMPORT_FUZZ_NAMES := $(patsubst tests/import/fuzz_import_%.c,%,$(wildcard tests/import/fuzz_import_*.c))
IMPORT_FUZZ := $(IMPORT_FUZZ_NAMES:%=$(BUILD)/fuzz/import_%_fuzz)
FUZZ_TARGETS += $(IMPORT_FUZZ)

$(IMPORT_FUZZ): $(BUILD)/fuzz/import_%_fuzz: tests/import/fuzz_import_%.c tests/import/fuzz_import.h $(IMPORT_SRCS) \
                $(UTIL_SRCS) $(PLANNER_SRCS) $(wildcard tools/import/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itools/import -Itools/util -Iplanner/base -Iplanner -Iplanner/rules -Iconf -o $@ $< \
		$(IMPORT_SRCS) $(UTIL_SRCS) $(PLANNER_SRCS) $(IMPORT_LIBS) -lm

# Unit tests of the importers' parts: tests/import/test_NAME.c (cmocka), linked with the
# importers' objects.
tests_import_CFLAGS := -Itools/import -Itools/util -Iplanner/base -Iplanner -Iplanner/rules -Iconf
IMPORT_UNIT_TESTS := $(patsubst tests/import/%.c,$(BUILD)/tests/import/%,\
                     $(sort $(wildcard tests/import/test_*.c)))
$(IMPORT_UNIT_TESTS): $(BUILD)/tests/import/%: $(BUILD)/tests/import/%.o $(IMPORT_OBJS) \
                      $(UTIL_OBJS) $(PLANNER_LIB)
	$(CC) -o $@ $^ $(IMPORT_LIBS) -lcmocka -lm $(LDFLAGS_ALL)
TESTS += $(IMPORT_UNIT_TESTS)
