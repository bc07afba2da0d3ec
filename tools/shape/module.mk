# tools/shape/: rxbneck-shape, the sender-side agent that applies rxbneckd's
# RATE to unmodified senders with the kernel's traffic control (HTB over
# rtnetlink through libnl-route). Every tools/shape/*.c but the *_main.c
# goes into libshape.a, so unit tests link the modules directly.
SHAPE_SRCS := $(filter-out %_main.c,$(wildcard tools/shape/*.c))
$(O)/libshape.a: $(SHAPE_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
LIBS := $(O)/libshape.a $(LIBS)
