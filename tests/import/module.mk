# tests/import/module.mk — shim-plan's trace importers: the end-to-end test over every trace in
# ../shared/traces (with an independent peak check in Python) and the importers' fuzz targets
# (seed corpora in tests/import/corpus-*/).

TESTS += tests/import/test_import.sh

IMPORT_KINETO_FUZZ := $(BUILD)/fuzz/import_kineto_fuzz
FUZZ_TARGETS += $(IMPORT_KINETO_FUZZ)

$(IMPORT_KINETO_FUZZ): tests/import/fuzz_import_kineto.c $(IMPORT_SRCS) $(PLANNER_SRCS) tools/import.h tools/import_kineto.h tools/import_et.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itools -Iplanner -Iconf -o $@ tests/import/fuzz_import_kineto.c \
		$(IMPORT_SRCS) $(PLANNER_SRCS) -ljson-c -lz -lm

IMPORT_ET_FUZZ := $(BUILD)/fuzz/import_et_fuzz
FUZZ_TARGETS += $(IMPORT_ET_FUZZ)

$(IMPORT_ET_FUZZ): tests/import/fuzz_import_et.c $(IMPORT_SRCS) $(PLANNER_SRCS) tools/import.h tools/import_kineto.h tools/import_et.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itools -Iplanner -Iconf -o $@ tests/import/fuzz_import_et.c \
		$(IMPORT_SRCS) $(PLANNER_SRCS) -ljson-c -lz -lm
