# tests/base — unit tests of the base room (planner/base/): every tests/base/test_base_NAME.c is
# a cmocka program linked with $(BASE_LIB). Allocation failures are injected by wrapping the
# allocator (--wrap): calloc for the map's tables, realloc
# (and malloc, which the compiler may call for a realloc of NULL) for the growable array.
tests_base_CFLAGS := -Iplanner/base
BASE_TESTS := $(patsubst tests/base/%.c,$(BUILD)/tests/base/%,$(sort $(wildcard tests/base/test_base_*.c)))

$(BUILD)/tests/base/test_base_map: BASE_TEST_LDFLAGS := -Wl,--wrap=calloc
$(BUILD)/tests/base/test_base_array: BASE_TEST_LDFLAGS := -Wl,--wrap=realloc -Wl,--wrap=malloc
$(BASE_TESTS): $(BUILD)/tests/base/%: $(BUILD)/tests/base/%.o $(BASE_LIB)
	$(CC) -o $@ $^ $(BASE_TEST_LDFLAGS) -lcmocka -lpthread $(LDFLAGS_ALL)

TESTS += $(BASE_TESTS)
