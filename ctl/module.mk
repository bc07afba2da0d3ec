# ctl/: rxbneckctl, one binary from every ctl/*.c (one file per subcommand).
CTL_SRCS := $(wildcard ctl/*.c)
ifneq ($(CTL_SRCS),)
BINS += $(O)/rxbneckctl
$(O)/rxbneckctl: $(CTL_SRCS:%.c=$(O)/%.o) $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

install:: $(O)/rxbneckctl
	install -D -m 0755 $(O)/rxbneckctl $(DESTDIR)$(PREFIX)/bin/rxbneckctl
endif
