# tools/: the reference RBUDP transfer tools, rxbneck-send and rxbneck-recv.
# Every tools/rbudp/*.c but the two *_main.c goes into librbudp.a, so unit
# tests link the modules (codec, bitmap, pacing, delay, integrity) directly.
RBUDP_SRCS := $(filter-out %_main.c,$(wildcard tools/rbudp/*.c))
$(O)/librbudp.a: $(RBUDP_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
LIBS := $(O)/librbudp.a $(LIBS)

BINS += $(O)/rxbneck-send $(O)/rxbneck-recv
$(O)/rxbneck-send: $(O)/tools/rbudp/send_main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)
$(O)/rxbneck-recv: $(O)/tools/rbudp/recv_main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

install:: $(O)/rxbneck-send $(O)/rxbneck-recv
	install -D -m 0755 $(O)/rxbneck-send $(DESTDIR)$(PREFIX)/bin/rxbneck-send
	install -D -m 0755 $(O)/rxbneck-recv $(DESTDIR)$(PREFIX)/bin/rxbneck-recv

# rxbneck-delayline: a fixed delay between two TUN devices, for TCP over the
# e2e experiment's emulated path (no netem here). Built, not installed.
BINS += $(O)/rxbneck-delayline
$(O)/rxbneck-delayline: $(O)/tools/rbudp/delayline_main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

# rbudp-testpeer: daemon/serve/sendsrv publishing a scripted RATE/PAUSE sequence,
# for the --follow integration test. Built, not installed.
BINS += $(O)/rbudp-testpeer
$(O)/rbudp-testpeer: $(O)/tools/rbudp/testpeer_main.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

# nettle: SHA-256 file digest, UMAC-64 datagram tags, HMAC-SHA256 and HKDF
# for the session keys (tools/rbudp/auth.h, digest.h).
SYSLIBS += -lnettle

-include tools/shape/module.mk
