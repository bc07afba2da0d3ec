# common/: logging, JSON writer, strict parsing, small helpers.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(O)/%.o)

$(O)/libcommon.a: $(COMMON_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# libcommon is the last internal archive: everything may use it.
LIBS_TAIL := $(O)/libcommon.a
