// SPDX-License-Identifier: GPL-2.0-or-later
/* The senders, reload and version documents as text. See view_senders.h. */
#include "ctl/view/view_senders.h"

#include <math.h>
#include <string.h>

#include "ctl/view/jpath.h"
#include "common/vfmt.h"
#include "rxbneck/proto.h"

#define TEXT_LEN	256

/* The pushes a sender was granted, in words. */
static const char *granted(char *buf, double bits)
{
	unsigned g = isfinite(bits) && bits >= 0 && bits < 65536 ? (unsigned)bits : 0;

	snprintf(buf, VFMT_LEN, "%s%s%s%s", g & RXBNECK_SUB_RATE ? "rate," : "",
		 g & RXBNECK_SUB_PAUSE ? "pause," : "", g & RXBNECK_SUB_BUFFER ? "buffer," : "",
		 g & RXBNECK_SUB_STREAMS ? "streams," : "");
	if (buf[0])
		buf[strlen(buf) - 1] = '\0';
	else
		snprintf(buf, VFMT_LEN, VFMT_NONE);
	return buf;
}

static void sender_line(FILE *f, const struct json_object *s)
{
	const struct json_object *r = jpath_obj(s, "last_rate");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN],
	     m[VFMT_LEN], rate[2 * VFMT_LEN], addr[64], name[64];

	snprintf(rate, sizeof(rate), VFMT_NONE);
	if (r)
		snprintf(rate, sizeof(rate), "%s @%s", vfmt_rate(a, jpath_num(r, "rate_bps")),
			 vfmt_count(b, jpath_num(r, "epoch")));
	fprintf(f, "%-5s %-26s %-5s %-10s %9s %10s %7s %-22s %s\n",
		vfmt_count(c, jpath_num(s, "id")), vfmt_text(addr, 27, jpath_str(s, "address")),
		vfmt_count(g, jpath_num(s, "flow_port")), granted(h, jpath_num(s, "granted")),
		vfmt_dur(k, jpath_num(s, "rtt_us") / 1e6), vfmt_dur(m, jpath_num(s, "connected_s")),
		vfmt_count(a, jpath_num(s, "frames_out")), rate,
		vfmt_text(name, sizeof(name), jpath_str(s, "name")));
}

void view_senders(FILE *f, const struct json_object *doc, unsigned flags)
{
	size_t n = jpath_len(doc, "senders");

	(void)flags;
	fprintf(f, "%-5s %-26s %-5s %-10s %9s %10s %7s %-22s %s\n", "ID", "ADDRESS", "PORT",
		"GRANTED", "RTT", "CONNECTED", "FRAMES", "LAST RATE", "NAME");
	for (size_t i = 0; i < n; i++)
		sender_line(f, jpath_at(doc, "senders", i));
	if (!n)
		fputs("(no senders connected)\n", f);
}

void view_reload(FILE *f, const struct json_object *doc, unsigned flags)
{
	char t[TEXT_LEN], p[TEXT_LEN];

	(void)flags;
	fprintf(f, "reloaded %s: %s\n", vfmt_text(p, sizeof(p), jpath_str(doc, "config_file")),
		vfmt_text(t, sizeof(t), jpath_str(doc, "changed")));
	for (size_t i = 0; i < jpath_len(doc, "restart_needed"); i++)
		fprintf(f, "restart needed for %s\n",
			vfmt_text(t, sizeof(t), jpath_str(jpath_at(doc, "restart_needed", i), NULL)));
}

void view_version(FILE *f, const struct json_object *doc)
{
	char v[64], a[VFMT_LEN];

	fprintf(f, "rxbneckd %s (control protocol %s)\n", vfmt_text(v, sizeof(v), jpath_str(doc, "version")),
		vfmt_count(a, jpath_num(doc, "ctl_protocol")));
}
