#!/usr/bin/env bash
# `make install` of the daemon's pieces into a DESTDIR: binaries, the unit
# (ExecStart following PREFIX), the configuration (never overwritten), the
# man pages (clean roff, found by man(1), rxbneckd.conf(5) up to date with
# docs/config.md and listing every key of the shipped file), the documents
# they name (docs/NAME, under share/doc/rxbneck). And the unit's
# `systemd-analyze security --offline=yes` exposure: "OK" or better (<= 4.9
# by systemd's scale), and `systemd-analyze verify` clean.
. "$(dirname "$0")/daemon_lib.inc"

R=$T/root
make -C "$S" -s install DESTDIR="$R" PREFIX=/usr >"$T/make.log" 2>&1 || die "make install: $(tail "$T/make.log")"
for f in usr/sbin/rxbneckd usr/bin/rxbneckctl etc/rxbneckd/rxbneckd.conf \
	 usr/lib/systemd/system/rxbneckd.service usr/share/man/man8/rxbneckd.8 \
	 usr/share/man/man8/rxbneckctl.8 usr/share/man/man5/rxbneckd.conf.5 \
	 usr/share/man/man3/librxbneck.3; do
	[ -f "$R/$f" ] || die "not installed: /$f"
done
UNIT=$R/usr/lib/systemd/system/rxbneckd.service
grep -q '^ExecStart=/usr/sbin/rxbneckd -f -c /etc/rxbneckd/rxbneckd.conf$' "$UNIT" || die "ExecStart: $(grep ExecStart "$UNIT")"
"$R/usr/sbin/rxbneckd" -t -c "$R/etc/rxbneckd/rxbneckd.conf" >/dev/null || die "the installed configuration does not load"

# An existing configuration is kept.
echo "# local edit" >> "$R/etc/rxbneckd/rxbneckd.conf"
make -C "$S" -s install DESTDIR="$R" PREFIX=/usr >"$T/make.log" 2>&1 || die "second make install"
grep -q '^# local edit$' "$R/etc/rxbneckd/rxbneckd.conf" || die "make install overwrote the configuration"

# Every document a man page names (docs/NAME) is installed with it.
for d in $(grep -ho 'docs/[A-Za-z0-9_.-]*\.\(md\|png\)' "$S"/man/*.[1-8] | sort -u); do
	[ -f "$R/usr/share/doc/rxbneck/${d#docs/}" ] || die "a man page names $d: not installed"
done

# Man pages.
for m in "$S"/man/*.[1-8]; do
	w=$(groff -man -ww -z "$m" 2>&1)
	[ -z "$w" ] || die "$m: $w"
done
MANPATH=$R/usr/share/man man -w rxbneckd.conf >/dev/null 2>&1 || die "man does not find rxbneckd.conf(5)"
python3 "$S/man/conf2man.py" "$S/docs/config.md" | cmp -s - "$S/man/rxbneckd.conf.5" ||
	die "man/rxbneckd.conf.5 is not up to date with docs/config.md: run 'make man'"
for k in $(sed -n 's/^#\([a-z_]*\) =.*/\1/p' "$S/conf/rxbneckd.conf"); do
	grep -q "^\\\\fB$k\\\\fR\$" "$S/man/rxbneckd.conf.5" || die "rxbneckd.conf(5) lacks key $k"
done

# The unit.
command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed"
systemd-analyze security --offline=yes "$UNIT" > "$T/sec.txt" 2>&1
score=$(sed -n 's/.*Overall exposure level for rxbneckd.service: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p' "$T/sec.txt")
log "systemd-analyze security --offline=yes: $score"
python3 -c "import sys; s, w = sys.argv[1], sys.argv[2]; assert float(s) <= 4.9 and w in ('SAFE', 'OK', 'PERFECT')" $score ||
	die "exposure $score is worse than OK"
sed "s|^ExecStart=/usr/sbin/rxbneckd|ExecStart=$R/usr/sbin/rxbneckd|" "$UNIT" > "$T/rxbneckd.service"
MANPATH=$R/usr/share/man systemd-analyze verify "$T/rxbneckd.service" > "$T/verify.txt" 2>&1 ||
	die "systemd-analyze verify: $(cat "$T/verify.txt")"
log "PASS"
