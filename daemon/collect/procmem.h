/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host memory figures receive-buffer adaptation needs (docs/buffer.md):
 *
 *   /proc/meminfo                  MemTotal, MemAvailable: RRDA's alpha,
 *                                  the memory utilisation 1 - avail/total
 *                                  (MemAvailable, not MemFree: page cache
 *                                  the kernel would drop for a socket is
 *                                  not memory in use);
 *   /proc/net/sockstat             "UDP: inuse N mem P": pages charged to
 *                                  UDP sockets host-wide;
 *   /proc/sys/net/ipv4/udp_mem     min pressure max, pages: at "pressure"
 *                                  the host has as much UDP memory out as
 *                                  its administrator meant it to; at "max"
 *                                  the kernel drops what arrives (only the
 *                                  initial network namespace has the file:
 *                                  elsewhere the pressure is unknown);
 *   /proc/sys/net/core/rmem_max    the largest SO_RCVBUF without FORCE.
 *
 * Parsers work on NUL-terminated text (untrusted: every number bounded,
 * lines they do not understand skipped), readers fetch it. Kept apart from
 * procfs.h, whose readers serve the per-epoch measurement.
 */
#ifndef RXB_DAEMON_PROCMEM_H
#define RXB_DAEMON_PROCMEM_H

#include <stdbool.h>
#include <stdint.h>

struct procmem_meminfo {
	uint64_t total_bytes;		/* MemTotal */
	uint64_t available_bytes;	/* MemAvailable */
};

/* 0, or -ENOENT when either line is missing, -ERANGE for a number beyond
 * 2^54 kB, -EINVAL for MemTotal 0. */
int procmem_parse_meminfo(const char *text, struct procmem_meminfo *m);

/* alpha = 1 - available / total, within [0, 1]. */
double procmem_utilisation(const struct procmem_meminfo *m);

/* The UDP line of sockstat: sockets in use and pages charged. 0 or -ENOENT. */
int procmem_parse_sockstat_udp(const char *text, uint64_t *inuse, uint64_t *mem_pages);

/*
 * A sysctl of @n (1..3) unsigned numbers separated by blanks, then at most
 * a newline (udp_mem: 3, rmem_max: 1). 0, -EINVAL or -ERANGE (> 2^62).
 */
int procmem_parse_sysctl(const char *text, uint64_t *v, int n);

/* What the buffer controller reads each step. */
struct procmem_snap {
	struct procmem_meminfo mem;
	bool mem_valid;
	uint64_t udp_mem_pages;		/* sockstat */
	uint64_t udp_inuse;
	uint64_t udp_limit_pages[3];	/* udp_mem: min pressure max */
	bool udp_valid;			/* both read */
	uint64_t rmem_max_bytes;	/* 0: not read */
	uint64_t page_bytes;
};

/* UDP memory at or above udp_mem's pressure threshold (false if unknown). */
bool procmem_udp_pressure(const struct procmem_snap *s);

/*
 * Read everything into @s; what cannot be read stays marked invalid (the
 * first error is returned, 0 when all was read).
 */
int procmem_read(struct procmem_snap *s);

#endif
