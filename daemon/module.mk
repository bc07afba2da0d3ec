# daemon/: rxbneckd, in rooms that follow the pipeline:
#   collect/  measurements: the probes' snapshots, /proc, netlink -> one epoch record
#   model/    per-flow model inputs, the solve and what is published, learned state
#   serve/    the sender protocol server, the rxbneckctl server and its answers, systemd
#   act/      what the daemon changes on the host itself (receivers' socket buffers)
# with main.c (wiring), daemon.c (the event loop) and config.c at the top.
# Every daemon source but main.c goes into libdaemon.a so unit tests can link
# the modules; main.c only wires them together.
DAEMON_SRCS := $(filter-out daemon/main.c,$(wildcard daemon/*.c daemon/*/*.c))
$(O)/libdaemon.a: $(DAEMON_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
LIBS := $(O)/libdaemon.a $(LIBS)

ifneq ($(wildcard daemon/main.c),)
BINS += $(O)/rxbneckd
$(O)/rxbneckd: $(O)/daemon/main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

install:: $(O)/rxbneckd
	install -D -m 0755 $(O)/rxbneckd $(DESTDIR)$(PREFIX)/sbin/rxbneckd
endif

# The metrics endpoint's HTTP server (daemon/serve/metricsrv.c).
SYSLIBS += -lmicrohttpd
