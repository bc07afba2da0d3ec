# man/: rxbneckd(8), rxbneckctl(8), rxbneck-shape(8), rxbneck-send(1) and
# rxbneck-recv(1) written
# by hand (the last two checked against the tools' --help by
# tests/integration/rbudp_man.sh); rxbneckd.conf(5)
# generated from docs/config.md by man/conf2man.py (`make man`; the
# generated page is committed, tests check that it is up to date).
MANDIR ?= $(PREFIX)/share/man

.PHONY: man
man:
	python3 man/conf2man.py docs/config.md > man/rxbneckd.conf.5

# The documents the man pages name as docs/NAME go to $(DOCDIR)/NAME.
DOCDIR ?= $(PREFIX)/share/doc/rxbneck

install:: man/rxbneckd.8 man/rxbneckctl.8 man/rxbneckd.conf.5 man/librxbneck.3
	install -D -m 0644 man/librxbneck.3 $(DESTDIR)$(MANDIR)/man3/librxbneck.3
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 $(wildcard docs/*.md docs/*.png) $(DESTDIR)$(DOCDIR)/
	install -D -m 0644 man/rxbneckd.8 $(DESTDIR)$(MANDIR)/man8/rxbneckd.8
	install -D -m 0644 man/rxbneckctl.8 $(DESTDIR)$(MANDIR)/man8/rxbneckctl.8
	install -D -m 0644 man/rxbneckd.conf.5 $(DESTDIR)$(MANDIR)/man5/rxbneckd.conf.5

install:: man/rxbneck-send.1 man/rxbneck-recv.1
	install -D -m 0644 man/rxbneck-send.1 $(DESTDIR)$(MANDIR)/man1/rxbneck-send.1
	install -D -m 0644 man/rxbneck-recv.1 $(DESTDIR)$(MANDIR)/man1/rxbneck-recv.1

install:: man/rxbneck-shape.8
	install -D -m 0644 man/rxbneck-shape.8 $(DESTDIR)$(MANDIR)/man8/rxbneck-shape.8
