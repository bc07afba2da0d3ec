# tools/shape/: rxbneck-shape, the sender-side agent that applies rxbneckd's
# RATE to unmodified senders with the kernel's traffic control (HTB over
# rtnetlink through libnl-route). Every tools/shape/*.c but the *_main.c
# goes into libshape.a, so unit tests link the modules directly.
SHAPE_SRCS := $(filter-out %_main.c,$(wildcard tools/shape/*.c))
$(O)/libshape.a: $(SHAPE_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
LIBS := $(O)/libshape.a $(LIBS)
# conf.c reads the INI file with iniparser; only the programs that link
# conf.o get -liniparser (rxbneckd does not link it).
$(O)/rxbneck-shape $(O)/tests/unit/test_shape_conf: SYSLIBS += -liniparser
BINS += $(O)/rxbneck-shape
$(O)/rxbneck-shape: $(O)/tools/shape/shape_main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

install:: $(O)/rxbneck-shape
	install -D -m 0755 $(O)/rxbneck-shape $(DESTDIR)$(PREFIX)/sbin/rxbneck-shape

# rxbneck-udpsink: the UDP receiver of rxbneck-shape's tests and experiment
# (arrivals, socket drops, loss per interval). Built, not installed.
BINS += $(O)/rxbneck-udpsink
$(O)/rxbneck-udpsink: $(O)/tools/shape/udpsink_main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

# rxbneck-shape-pausecheck: whether a PAUSE schedule can be held by
# changing the class from user space (docs/shape.md §5). Built, not installed.
BINS += $(O)/rxbneck-shape-pausecheck
$(O)/rxbneck-shape-pausecheck: $(O)/tools/shape/pausecheck_main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)
