# client/: librxbneck, the sender-side library (include/rxbneck/client.h).
#
# Built twice from the same sources (client/*.c + the proto/ codec):
#
#  * $(O)/libclient.a - internal archive on $(LIBS), for the project's own
#    programs and tests; the codec comes from libproto.a as for the daemon.
#  * the installed librxbneck.a, librxbneck.so.$(VERSION) and rxbneck.pc -
#    self-contained (nothing from common/ or other internal archives) and
#    exporting only rxbneck_* symbols: objects are compiled with
#    -fvisibility=hidden (the public API is marked RXBNECK_API); the .so
#    uses a version script, and the .a is one relocatable object whose
#    hidden symbols are made local (ld -r + objcopy --localize-hidden), so
#    the codec's internal rxbp_* names cannot clash with a user's symbols.
#    Both artefacts are checked after linking.

CLIENT_SRCS := $(wildcard client/*.c)
CLIENT_SO_MAJOR := 0
CLIENT_SO := $(O)/librxbneck.so.$(VERSION)
LIBDIR ?= $(PREFIX)/lib
# rxbneck.pc names libdir relative to the prefix when it is below it, so
# `pkg-config --define-variable=prefix=...` relocates it.
PC_LIBDIR = $(patsubst $(PREFIX)/%,$${exec_prefix}/%,$(LIBDIR))

$(O)/libclient.a: $(CLIENT_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
LIBS := $(O)/libclient.a $(LIBS)

# Objects of the installable library: own directory, hidden visibility.
RXBNECK_OBJS := $(patsubst %.c,$(O)/rxbneck/%.o,$(CLIENT_SRCS) $(wildcard proto/*.c))

$(O)/rxbneck/%.o: %.c | $(GENERATED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (librxbneck)")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@

# Fails the build if a library defines a global symbol outside rxbneck_*.
define check_exports
	$(Q)bad=$$(nm $(1) --defined-only $(2) | awk 'NF == 3 && $$2 ~ /[A-Z]/ {print $$3}' \
		| grep -v -e '^rxbneck_' -e '^RXBNECK_0$$' || true); \
	if [ -n "$$bad" ]; then echo "$(2) exports non-API symbols:" $$bad; exit 1; fi
endef

$(O)/librxbneck.a: $(RXBNECK_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)$(LD) -r -o $(O)/rxbneck/librxbneck.o $^
	$(Q)objcopy --localize-hidden $(O)/rxbneck/librxbneck.o
	$(Q)rm -f $@ && $(AR) rcs $@ $(O)/rxbneck/librxbneck.o
	$(call check_exports,-g,$@)

# Sanitizer runtimes are provided by the executable, so only the plain build
# can insist that the .so resolves everything itself.
CLIENT_SO_LDFLAGS := $(if $(filter 1,$(SAN)),,-Wl,--no-undefined)

$(CLIENT_SO): $(RXBNECK_OBJS) client/librxbneck.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(LDFLAGS) $(CLIENT_SO_LDFLAGS) \
		-Wl,-soname,librxbneck.so.$(CLIENT_SO_MAJOR) \
		-Wl,--version-script=client/librxbneck.map \
		-o $@ $(RXBNECK_OBJS) -lpthread
	$(call check_exports,-D,$@)
	$(Q)ln -sf librxbneck.so.$(VERSION) $(O)/librxbneck.so.$(CLIENT_SO_MAJOR)
	$(Q)ln -sf librxbneck.so.$(CLIENT_SO_MAJOR) $(O)/librxbneck.so

# Example: a follower that prints what the daemon pushes. Linked against the
# installable static library alone, which proves it is self-contained.
BINS += $(O)/librxbneck.a $(CLIENT_SO) $(O)/rxbneck-watch
$(O)/rxbneck-watch: $(O)/client/examples/rxbneck-watch.o $(O)/librxbneck.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lpthread

install:: $(O)/librxbneck.a $(CLIENT_SO)
	install -D -m 0644 include/rxbneck/proto.h $(DESTDIR)$(PREFIX)/include/rxbneck/proto.h
	install -D -m 0644 include/rxbneck/client.h $(DESTDIR)$(PREFIX)/include/rxbneck/client.h
	install -D -m 0644 $(O)/librxbneck.a $(DESTDIR)$(LIBDIR)/librxbneck.a
	install -D -m 0755 $(CLIENT_SO) $(DESTDIR)$(LIBDIR)/librxbneck.so.$(VERSION)
	ln -sf librxbneck.so.$(VERSION) $(DESTDIR)$(LIBDIR)/librxbneck.so.$(CLIENT_SO_MAJOR)
	ln -sf librxbneck.so.$(CLIENT_SO_MAJOR) $(DESTDIR)$(LIBDIR)/librxbneck.so
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		client/rxbneck.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/rxbneck.pc
