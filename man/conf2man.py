#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/config.md -> man/rxbneckd.conf.5 (roff, man macros).

Handles exactly the markdown docs/config.md uses: "##" sections, "###"
subsections or `key` entries (a tagged paragraph: the key, its "Type:"
line, then its text), paragraphs, "* " bullets, "*term*" + ":   "
definitions, indented literal blocks, `code` (bold) and *term* (italic).

    man/conf2man.py docs/config.md > man/rxbneckd.conf.5

The generated page is committed; tests/integration/daemon_install.sh
checks that it is up to date.
"""
import re
import sys

SYMBOLS = {"×": r"\(mu", "—": r"\(em", "–": r"\(en", "≥": r"\(>=", "≤": r"\(<=", "§": r"\(sc",
           "·": r"\[pc]", "−": r"\(mi", "µ": r"\(mc", "λ": r"\(*l", "μ": r"\(*m"}


def inline(t):
    t = t.replace("\\", r"\e")
    t = re.sub(r"`([^`]+)`", lambda m: r"\fB" + m.group(1) + r"\fR", t)
    t = re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", lambda m: r"\fI" + m.group(1) + r"\fR", t)
    for k, v in SYMBOLS.items():
        t = t.replace(k, v)
    if t.startswith(".") or t.startswith("'"):
        t = r"\&" + t
    return t


def convert(lines):
    out = [r'.\" rxbneckd.conf(5), generated from docs/config.md by man/conf2man.py:',
           r'.\" edit docs/config.md, not this file.',
           '.TH RXBNECKD.CONF 5 "2026-11-22" "rxbneck 0.1.0" "File Formats"']
    para, in_key, k = [], False, 0

    def flush():
        if para:
            out.append(".IP" if in_key else ".PP")
            out.append(inline(" ".join(para)))
            para.clear()

    while k < len(lines):
        line = lines[k]
        if line.startswith("    ") and not para and (k == 0 or lines[k - 1] == ""):
            flush()
            out += [".PP", ".RS 4", ".nf"]
            while k < len(lines) and lines[k].startswith("    "):
                out.append(lines[k][4:].replace("\\", r"\e"))
                k += 1
            out += [".fi", ".RE"]
        elif line.startswith("## "):
            flush()
            in_key = False
            h = line[3:]
            out.append(".SH " + (h if h.startswith("[") else h.upper()))
            k += 1
        elif line.startswith("### ") and line[4:].startswith("`"):
            flush()
            in_key = True
            out += [".TP", inline(line[4:])]
            k += 1
            while k < len(lines) and lines[k] == "":
                k += 1
            first = []
            while k < len(lines) and lines[k] != "":
                first.append(lines[k])
                k += 1
            out.append(inline(" ".join(first)))
        elif line.startswith("### "):
            flush()
            in_key = False
            out.append(".SS " + inline(line[4:]))
            k += 1
        elif line.startswith("* "):
            flush()
            item = [line[2:]]
            k += 1
            while k < len(lines) and lines[k].startswith("  ") and not lines[k].startswith("    "):
                item.append(lines[k].strip())
                k += 1
            out += [r".IP \(bu 2", inline(" ".join(item))]
        elif line.startswith(":   "):
            flush()
            item = [line[4:]]
            k += 1
            while k < len(lines) and lines[k].startswith("    "):
                item.append(lines[k].strip())
                k += 1
            out += [".RS 4", inline(" ".join(item)), ".RE"]
        elif line == "":
            flush()
            k += 1
        else:
            para.append(line)
            k += 1
    flush()
    return out


if __name__ == "__main__":
    src = open(sys.argv[1], encoding="utf-8").read().splitlines()
    # The first line is the page's title ("# rxbneckd.conf(5)"): .TH has it.
    page = convert(src[1:])
    # troff takes ASCII: a character without an escape in SYMBOLS would be
    # printed as garbage (and troff only warns), so refuse it here.
    for n, line in enumerate(page, 1):
        bad = sorted({c for c in line if ord(c) > 127})
        if bad:
            sys.exit(f"conf2man: output line {n}: no roff escape for "
                     f"{', '.join(repr(c) for c in bad)}: add it to SYMBOLS")
    print("\n".join(page))
