/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One model input as reported: its value, where it comes from (measured,
 * learned, from history, configured, ...), and, when it is missing or
 * approximate, why. `rxbneckctl status` shows all three.
 */
#ifndef RXB_DAEMON_MODEL_VALUE_H
#define RXB_DAEMON_MODEL_VALUE_H

#define VALUE_WHY_LEN	192

/* Where an input value comes from. */
enum value_src {
	VALUE_MISSING = 0,	/* not known: see why */
	VALUE_MEASURED,		/* counted in this epoch (smoothed) */
	VALUE_LEARNED,		/* counted earlier (since the daemon
				 * started); none this epoch */
	VALUE_HISTORY,		/* from the state directory (an earlier run) */
	VALUE_CONFIG,		/* configured (device did not report it) */
	VALUE_DEVICE,		/* reported by the device */
	VALUE_SYSCTL,		/* a kernel setting (netdev_max_backlog) */
	VALUE_DEFAULT,		/* the documented default: nothing learned
				 * on this host (daemon/model/prior.h) */
};

const char *value_src_name(enum value_src s);

/* One reported input. */
struct value {
	double v;		/* NaN when missing */
	enum value_src src;
	char why[VALUE_WHY_LEN];	/* for MISSING, and notes */
};

void value_set(struct value *v, double val, enum value_src src);

/* Missing: NaN, with the reason printf-formatted into why. */
void value_missing(struct value *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
