/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Numbers and strings for people (rxbneckctl's views, rxbneck-shape's
 * status lines and log). Every function writes into a caller's
 * buffer of VFMT_LEN bytes and returns it; a value that is not a finite
 * number prints as "-", so no view ever shows "nan" or "inf". Strings that
 * came from the daemon go through vfmt_text(), which replaces control
 * characters (a garbled or hostile answer cannot move the terminal's cursor
 * or change its colours).
 */
#ifndef RXB_COMMON_VFMT_H
#define RXB_COMMON_VFMT_H

#include <stddef.h>

#define VFMT_LEN	64
#define VFMT_NONE	"-"

/* "%.*f" of @v. */
const char *vfmt_fixed(char *buf, double v, int prec);
/* Three significant digits with an SI prefix: "941", "202 k", "3.30 M". */
const char *vfmt_si(char *buf, double v);
/* A count: "35120". */
const char *vfmt_count(char *buf, double v);
/* Bits per second: "950 kb/s", "412.3 Mb/s", "9.412 Gb/s". */
const char *vfmt_rate(char *buf, double bps);
/* Bytes: "1468 B", "512 kB", "1.00 GB" (SI, powers of 1000). */
const char *vfmt_bytes(char *buf, double bytes);
/* A duration in seconds: "35.0 us", "412 ms", "19.41 s", "5 min 10 s", "3 h 2 min". */
const char *vfmt_dur(char *buf, double s);
/* A fraction as a percentage: 0.2312 -> "23 %" (prec 0). */
const char *vfmt_pct(char *buf, double frac, int prec);
/* A probability: "0" , "1.08e-03 (0.108 %)" style kept short: "0.108 %", "4.2e-07 %". */
const char *vfmt_prob(char *buf, double p);

/*
 * @s made safe to print, at most @size - 1 bytes: control characters and
 * DEL become '?'; NULL or "" becomes "-".
 */
const char *vfmt_text(char *buf, size_t size, const char *s);

#endif
