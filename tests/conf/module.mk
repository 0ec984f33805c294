# tests/conf/ — the toml-test decoder and conformance runners, unit tests of conf/, the README
# check, and the libFuzzer target of the parser and the loader.
tests_conf_CFLAGS := -Iconf

TOML_DECODE := $(BUILD)/toml-decode
$(TOML_DECODE): $(BUILD)/tests/conf/toml_decode.o $(CONF_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^
ALL_TARGETS += $(TOML_DECODE)

CONF_UNIT_TESTS := $(patsubst tests/conf/%.c,$(BUILD)/tests/conf/%,\
                   $(sort $(wildcard tests/conf/test_conf_*.c)))
$(CONF_UNIT_TESTS): $(BUILD)/tests/conf/%: $(BUILD)/tests/conf/%.o $(CONF_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lcmocka

# A new test is one file: tests/conf/test_conf_NAME.c (cmocka, linked with conf/) or a script
# tests/conf/NAME.sh (every script here is a test).
TESTS += $(CONF_UNIT_TESTS) $(sort $(wildcard tests/conf/*.sh))

# make docs: rewrites the README's option reference from the table (readme_options.sh checks it).
.PHONY: docs docs-conf
docs: docs-conf
docs-conf: $(BUILD)/shim-report
	BUILD=$(BUILD) tests/conf/readme_options.sh --update

FUZZ_CONF := $(BUILD)/fuzz-conf
$(FUZZ_CONF): tests/conf/fuzz_conf.c tests/fuzz.h $(CONF_SRCS) conf/conf.h conf/conf_internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iconf -Itests -o $@ tests/conf/fuzz_conf.c $(CONF_SRCS)
FUZZ_TARGETS += $(FUZZ_CONF)
