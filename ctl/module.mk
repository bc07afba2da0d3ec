# ctl/: rxbneckctl, one binary from every ctl/*.c (one file per subcommand),
# and ctl/view/, the views that turn the daemon's JSON documents into text
# (libctlview.a). rxbneckd links the views too: `rxbneckd --measure-only`
# prints its record through view_measure(), so one formatter serves both.
CTLVIEW_SRCS := $(wildcard ctl/view/*.c)
ifneq ($(CTLVIEW_SRCS),)
$(O)/libctlview.a: $(CTLVIEW_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
# Appended, not prepended: libdaemon.a (read before this file) uses it.
LIBS := $(LIBS) $(O)/libctlview.a
SYSLIBS += -ljson-c
endif

CTL_SRCS := $(wildcard ctl/*.c)
ifneq ($(CTL_SRCS),)
BINS += $(O)/rxbneckctl
$(O)/rxbneckctl: $(CTL_SRCS:%.c=$(O)/%.o) $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

# `rxbneckctl model --plot` and `streams --plot` run rxbneck-plot-model and
# rxbneck-plot-streams (ctl/plot.h says where it looks): next to the binary
# in the build tree, under share/ once installed.
BINS += $(O)/rxbneck-plot-model $(O)/rxbneck-plot-streams
$(O)/rxbneck-plot-%: ctl/rxbneck-plot-%
	@mkdir -p $(dir $@)
	$(Q)install -m 0755 $< $@
$(O)/ctl/plot.o: CPPFLAGS += -DRXB_DATADIR='"$(PREFIX)/share/rxbneck"'

install:: $(O)/rxbneckctl
	install -D -m 0755 $(O)/rxbneckctl $(DESTDIR)$(PREFIX)/bin/rxbneckctl
	install -D -m 0755 ctl/rxbneck-plot-model $(DESTDIR)$(PREFIX)/share/rxbneck/rxbneck-plot-model
	install -D -m 0755 ctl/rxbneck-plot-streams $(DESTDIR)$(PREFIX)/share/rxbneck/rxbneck-plot-streams
endif

# rxbneckctl's own files are in no archive: a unit test of one links it.
$(O)/tests/unit/test_streams_csv: $(O)/ctl/streams_csv.o
