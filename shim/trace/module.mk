# shim/trace.mk — the trace writer, $(BUILD)/shim/libshimtrace.a (shim_trace_*.c, and
# shim_path.c, the path expander it shares with the log), linked into libshim.so by
# shim/module.mk. Hidden visibility: only shim_trace.h's callers inside the library see these
# functions; nothing here is exported from libshim.so.
SHIM_TRACE_SRCS := $(sort $(wildcard shim/shim_trace_*.c)) shim/shim_path.c
SHIM_TRACE_OBJS := $(SHIM_TRACE_SRCS:%.c=$(BUILD)/%.o)
SHIM_TRACE_LIB := $(BUILD)/shim/libshimtrace.a

# Pattern-specific, so that shim/module.mk's shim_CFLAGS stays its own.
$(BUILD)/shim/shim_trace_%.o $(BUILD)/shim/shim_path.o: shim_CFLAGS += -fvisibility=hidden

$(SHIM_TRACE_LIB): $(SHIM_TRACE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

ALL_TARGETS += $(SHIM_TRACE_LIB)
