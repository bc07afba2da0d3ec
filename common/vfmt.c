// SPDX-License-Identifier: GPL-2.0-or-later
/* Numbers and strings for people. See vfmt.h. */
#include "common/vfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

/* Past this, fixed-point formats would print hundreds of digits. */
#define HUGE_ABS	1e15

static const char *none(char *buf)
{
	snprintf(buf, VFMT_LEN, VFMT_NONE);
	return buf;
}

static bool usable(double v)
{
	return isfinite(v) && fabs(v) < HUGE_ABS;
}

/* @v that usable() refused: "-", or in %g with its unit. */
static const char *unusable(char *buf, double v, const char *unit)
{
	if (!isfinite(v))
		return none(buf);
	snprintf(buf, VFMT_LEN, "%.3g %s", v, unit);
	return buf;
}

const char *vfmt_fixed(char *buf, double v, int prec)
{
	if (!isfinite(v))
		return none(buf);
	if (fabs(v) >= HUGE_ABS)
		snprintf(buf, VFMT_LEN, "%.3g", v);
	else
		snprintf(buf, VFMT_LEN, "%.*f", prec < 0 ? 0 : prec > 9 ? 9 : prec, v);
	return buf;
}

const char *vfmt_si(char *buf, double v)
{
	static const char prefix[] = { 'k', 'M', 'G', 'T', 'P' };
	double a = fabs(v);
	int i = -1;

	if (!isfinite(v))
		return none(buf);
	if (a < 1000 || a >= HUGE_ABS) {
		snprintf(buf, VFMT_LEN, "%.3g", v);
		return buf;
	}
	while (a >= 999.5 && i < (int)sizeof(prefix) - 1) {
		a /= 1000;
		v /= 1000;
		i++;
	}
	snprintf(buf, VFMT_LEN, "%.3g %c", v, prefix[i]);
	return buf;
}

const char *vfmt_count(char *buf, double v)
{
	return vfmt_fixed(buf, v, 0);
}

const char *vfmt_rate(char *buf, double bps)
{
	double a = fabs(bps);

	if (!usable(bps))
		return unusable(buf, bps, "b/s");
	if (a >= 1e9)
		snprintf(buf, VFMT_LEN, "%.3f Gb/s", bps / 1e9);
	else if (a >= 1e6)
		snprintf(buf, VFMT_LEN, "%.1f Mb/s", bps / 1e6);
	else if (a >= 1e3)
		snprintf(buf, VFMT_LEN, "%.1f kb/s", bps / 1e3);
	else
		snprintf(buf, VFMT_LEN, "%.0f b/s", bps);
	return buf;
}

const char *vfmt_bytes(char *buf, double bytes)
{
	static const char *const unit[] = { "kB", "MB", "GB", "TB" };
	double a = fabs(bytes);
	int i = -1;

	if (!usable(bytes))
		return unusable(buf, bytes, "B");
	if (a < 10000) {
		snprintf(buf, VFMT_LEN, "%.0f B", bytes);
		return buf;
	}
	while (a >= 1000 && i < 3) {
		a /= 1000;
		bytes /= 1000;
		i++;
	}
	snprintf(buf, VFMT_LEN, "%.*f %s", a >= 100 ? 0 : a >= 10 ? 1 : 2, bytes, unit[i]);
	return buf;
}

const char *vfmt_dur(char *buf, double s)
{
	double a = fabs(s);

	if (!usable(s))
		return unusable(buf, s, "s");
	if (a == 0)
		snprintf(buf, VFMT_LEN, "0 s");
	else if (a < 1e-3)
		snprintf(buf, VFMT_LEN, "%.1f us", s * 1e6);
	else if (a < 1)
		snprintf(buf, VFMT_LEN, "%.1f ms", s * 1e3);
	else if (a < 120)
		snprintf(buf, VFMT_LEN, "%.2f s", s);
	else if (a < 7200)
		snprintf(buf, VFMT_LEN, "%.0f min %.0f s", floor(a / 60), fmod(a, 60));
	else if (a < 172800)
		snprintf(buf, VFMT_LEN, "%.0f h %.0f min", floor(a / 3600), floor(fmod(a, 3600) / 60));
	else
		snprintf(buf, VFMT_LEN, "%.1f days", a / 86400);
	return buf;
}

const char *vfmt_pct(char *buf, double frac, int prec)
{
	if (!usable(frac * 100))
		return none(buf);
	snprintf(buf, VFMT_LEN, "%.*f %%", prec < 0 ? 0 : prec > 6 ? 6 : prec, frac * 100);
	return buf;
}

const char *vfmt_prob(char *buf, double p)
{
	if (!usable(p))
		return none(buf);
	if (p == 0)
		snprintf(buf, VFMT_LEN, "0 %%");
	else if (fabs(p) >= 1e-3)
		snprintf(buf, VFMT_LEN, "%.3g %%", p * 100);
	else
		snprintf(buf, VFMT_LEN, "%.2g %%", p * 100);
	return buf;
}

const char *vfmt_text(char *buf, size_t size, const char *s)
{
	size_t i = 0;

	if (!size)
		return "";
	if (!s || !s[0]) {
		snprintf(buf, size, VFMT_NONE);
		return buf;
	}
	for (; s[i] && i + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	buf[i] = '\0';
	return buf;
}
