# conf/ — TOML 1.0 parser, option table and layered configuration: $(BUILD)/conf/libconf.a,
# linked by the preload library and the tools. libc only. Hidden visibility: linked into
# libshim.so, conf_* must not become part of the preload library's exported interface.
HOUSE_ROOMS += conf:
conf_CFLAGS := -Iconf -fvisibility=hidden

CONF_SRCS := $(sort $(wildcard conf/conf_*.c))
CONF_OBJS := $(CONF_SRCS:%.c=$(BUILD)/%.o)
CONF_LIB := $(BUILD)/conf/libconf.a

$(CONF_LIB): $(CONF_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

ALL_TARGETS += $(CONF_LIB)
