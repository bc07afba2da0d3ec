#!/usr/bin/env bash
# The man pages rxbneck-send(1) and rxbneck-recv(1) against the tools'
# --help, the reference: each page names exactly the long options its tool's
# --help lists, renders without a groff warning, and is installed by
# `make install` where man(1) finds it. No root, no network.
set -u
S=${RXB_SRC:-.}
B=${RXB_BUILD:-$S/build}
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v groff > /dev/null || { echo "SKIP: groff not installed" >&2; exit 77; }
T=$(mktemp -d /tmp/rxbt-man.XXXXXX) || fail "mktemp"
trap 'rm -rf "$T"' EXIT

for tool in rxbneck-send rxbneck-recv; do
	page=$S/man/$tool.1
	[ -x "$B/$tool" ] || { echo "SKIP: $B/$tool not built" >&2; exit 77; }
	[ -f "$page" ] || fail "$page missing"
	w=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$w" ] || fail "$page: $w"
	"$B/$tool" --help | grep -o -- '--[a-z][a-z-]*' | sort -u > "$T/help"
	# Options in the page: \-\-name in roff (with \- inside the name too).
	sed 's/\\-/-/g' "$page" | grep -o -- '--[a-z][a-z-]*' | sort -u > "$T/page"
	if ! cmp -s "$T/help" "$T/page"; then
		echo "$tool: --help (<) and $page (>) name different options:" >&2
		diff "$T/help" "$T/page" >&2
		fail "$tool's man page does not match its --help"
	fi
	echo "  $tool.1: $(wc -l < "$T/help") options, as --help lists them; groff -ww clean"
done

make -C "$S" -s O="$B" install DESTDIR="$T/root" PREFIX=/usr > "$T/make.log" 2>&1 ||
	fail "make install: $(tail -5 "$T/make.log")"
for tool in rxbneck-send rxbneck-recv; do
	MANPATH=$T/root/usr/share/man man -w "$tool" > /dev/null 2>&1 ||
		fail "man does not find the installed $tool(1)"
done
echo "PASS"
