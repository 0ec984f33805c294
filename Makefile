# libshim — one build, one test entry point.
#
#   make                 every artifact under build/
#   make test            unit, conformance and end-to-end tests (tests/run_tests.sh)
#   make test TEST=pin   only the tests whose path contains "pin" (one test: its file name)
#   make SAN=asan test   the same with a sanitizer (asan, ubsan, tsan); artifacts in build/$(SAN)/
#   make lint            clang-format check plus a warning-clean build
#   make clean
#
# Each component adds itself through a module.mk fragment beside its sources
# (*/module.mk, tests/*/module.mk). A fragment appends to:
#   ALL_TARGETS   artifacts built by `make`
#   TESTS         test executables or scripts run by `make test`
#   FUZZ_TARGETS  libFuzzer binaries run by `make fuzz` (clang, FUZZ_SECONDS each)
# and defines the rules for its own artifacts under $(BUILD).

CUDA_HOME ?= /usr/local/cuda
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif

SAN ?=
ifeq ($(SAN),)
BUILD := build
else
BUILD := build/$(SAN)
endif

SAN_FLAGS_asan := -fsanitize=address -fno-omit-frame-pointer
SAN_FLAGS_ubsan := -fsanitize=undefined -fno-sanitize-recover=all
SAN_FLAGS_tsan := -fsanitize=thread
ifneq ($(SAN),)
ifeq ($(SAN_FLAGS_$(SAN)),)
$(error SAN must be one of asan, ubsan, tsan)
endif
endif
SAN_FLAGS := $(SAN_FLAGS_$(SAN))

WARN := -Wall -Wextra -Werror -Wmissing-prototypes -Wstrict-prototypes -Wshadow
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC $(WARN) $(CFLAGS) $(SAN_FLAGS)
LDFLAGS_ALL := $(SAN_FLAGS) $(LDFLAGS)
CUDA_INC := -I$(CUDA_HOME)/include

# Artifacts that several fragments depend on, named before any fragment is included so
# that prerequisites never depend on the order fragments are read in.
CONF_LIB := $(BUILD)/conf/libconf.a
BASE_LIB := $(BUILD)/planner/base/libbase.a
PLANNER_LIB := $(BUILD)/planner/libplanner.a
SIMGPU_LIB := $(BUILD)/simgpu/libcuda.so.1
SHIM_TRACE_LIB := $(BUILD)/shim/libshimtrace.a
# shim-report html's style sheet and script as C strings, generated from
# tools/report/report_html.{css,js} (tools/module.mk); the reader's fuzz target builds them too.
HTML_ASSETS_C := $(BUILD)/tools/report/html_assets.c

ALL_TARGETS :=
TESTS :=
FUZZ_TARGETS :=
# The house (docs/HOUSE.md): every room of the code, as ROOM:USES (the rooms it may use, comma
# separated; none after the colon: it uses none). Each fragment appends its rooms; a room's
# include path is itself and the rooms it uses (room_inc), and tests/house/test_rooms.sh checks
# every object's symbols and every file's includes against the same list (`make print-rooms`).
HOUSE_ROOMS :=
comma := ,
room_uses = $(subst $(comma), ,$(patsubst $(1):%,%,$(filter $(1):%,$(HOUSE_ROOMS))))
room_inc = -I$(1) $(addprefix -I,$(call room_uses,$(1)))
FUZZ_CC ?= clang
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined $(WARN)
FUZZ_SECONDS ?= 60

.PHONY: all test lint clean fuzz format demo print-rooms
all: build-all

include $(sort $(wildcard */*.mk)) $(sort $(wildcard tests/*/*.mk)) # tests last: they link what */*.mk names

build-all: $(ALL_TARGETS)
.PHONY: build-all

# Objects: build/<path>.o from <path>.c; per-directory include flags come from
# the fragments through <dir>_CFLAGS (slashes in dir replaced by _).
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $($(subst /,_,$(patsubst %/,%,$(dir $<)))_CFLAGS) -MMD -MP -c $< -o $@

# An object that only a pattern rule names (a test program's, before its .d file exists) is an
# intermediate file to make, which deletes it after the first build ("rm build/...o") and then
# builds it again on the next make, once the .d file names it. Objects are kept: they are
# artifacts like any other.
.PRECIOUS: $(BUILD)/%.o

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# TEST=TEXT keeps the tests whose path contains TEXT (every artifact is still built: the scripts
# run the programs, libshim.so and the simulated device).
TEST ?=
SELECTED_TESTS = $(strip $(if $(TEST),$(foreach t,$(TESTS),$(if $(findstring $(TEST),$(t)),$(t))),$(TESTS)))
test: $(ALL_TARGETS) $(SELECTED_TESTS)
	@$(if $(SELECTED_TESTS),,echo "no test path contains '$(TEST)'" >&2; exit 1)
	@BUILD=$(BUILD) SAN=$(SAN) tests/run_tests.sh $(SELECTED_TESTS)

fuzz: $(FUZZ_TARGETS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/run_fuzz.sh $(FUZZ_TARGETS)

# The main job: a training-like workload on the simulated device (no GPU needed), run under
# libshim (12 iterations: the in-process plan applies from the ninth), then the report's summary of
# the trace it wrote and its first moves, and the whole report as a page ($(BUILD)/demo.html).
DEMO_ARGS ?= --mode segments --layers 8 --hidden 1024 --batch 4 --iters 12
DEMO_TRACE := $(BUILD)/demo.trace
DEMO_MEMORY ?= 1536MiB
demo: all
	@rm -f $(DEMO_TRACE)
	@echo "== train_sim $(DEMO_ARGS) natively on a simulated device of $(DEMO_MEMORY): runs out of memory =="
	-LD_LIBRARY_PATH=$(BUILD)/simgpu SIMGPU_MEMORY=$(DEMO_MEMORY) $(BUILD)/train_sim $(DEMO_ARGS)
	@echo "== the same under libshim, no configuration: offloads to fit =="
	@# The simulated device charges VMM calls no host time: the plan is told the 10 us per remap
	@# the tests assume, rather than the wall time the simulator's calls take on this machine.
	LD_LIBRARY_PATH=$(BUILD)/simgpu SIMGPU_MEMORY=$(DEMO_MEMORY) SIMGPU_STATS=$(BUILD)/demo-stats.json \
		SHIM_TRACE_PATH=$(DEMO_TRACE) SHIM_LOG_LEVEL=info SHIM_LINK_REMAP=10us LD_PRELOAD=$(BUILD)/libshim.so \
		$(BUILD)/train_sim $(DEMO_ARGS)
	@echo "== shim-report summary $(DEMO_TRACE) =="
	$(BUILD)/shim-report summary $(DEMO_TRACE)
	@echo "== shim-report moves $(DEMO_TRACE): the first moves, each with its reason (all: run it) =="
	@$(BUILD)/shim-report moves $(DEMO_TRACE) | head -n 12
	@$(BUILD)/shim-report moves $(DEMO_TRACE) | tail -n 1
	@echo "== shim-report html $(DEMO_TRACE): the whole report as one page, to open in a browser =="
	$(BUILD)/shim-report html -o $(BUILD)/demo.html $(DEMO_TRACE)

print-rooms:
	@printf '%s\n' $(HOUSE_ROOMS)

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
lint:
	clang-format --dry-run --Werror $(FORMAT_FILES)
	$(MAKE) --no-print-directory all

format:
	clang-format -i $(FORMAT_FILES)

clean:
	rm -rf build
