# systemd/: the service unit, and the configuration file it starts the
# daemon with. ExecStart and the config path follow PREFIX and SYSCONFDIR;
# an existing configuration file is never overwritten.
SYSCONFDIR     ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

install:: systemd/rxbneckd.service conf/rxbneckd.conf
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed -e 's|/usr/local/sbin/rxbneckd|$(PREFIX)/sbin/rxbneckd|' \
	    -e 's|/etc/rxbneckd/rxbneckd.conf|$(SYSCONFDIR)/rxbneckd/rxbneckd.conf|' \
	    systemd/rxbneckd.service > $(DESTDIR)$(SYSTEMDUNITDIR)/rxbneckd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/rxbneckd.service
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/rxbneckd/rxbneckd.conf ]; then \
		echo "  keeping the existing $(DESTDIR)$(SYSCONFDIR)/rxbneckd/rxbneckd.conf"; \
	else \
		install -D -m 0644 conf/rxbneckd.conf $(DESTDIR)$(SYSCONFDIR)/rxbneckd/rxbneckd.conf; \
	fi

# rxbneck-shape@.service: the sender-side agent, one instance per
# configuration file $(SYSCONFDIR)/rxbneck-shape/NAME.conf (not installed:
# each site writes its own; rxbneck-shape(8) has an example).
install:: systemd/rxbneck-shape@.service
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/rxbneck-shape
	sed -e 's|/usr/local/sbin/rxbneck-shape|$(PREFIX)/sbin/rxbneck-shape|g' \
	    -e 's|/etc/rxbneck-shape/|$(SYSCONFDIR)/rxbneck-shape/|g' \
	    systemd/rxbneck-shape@.service > $(DESTDIR)$(SYSTEMDUNITDIR)/rxbneck-shape@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/rxbneck-shape@.service
