// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the /proc text receive-buffer adaptation reads:
 * /proc/meminfo, /proc/net/sockstat, sysctl files (daemon/collect/procmem.c),
 * /proc/PID/fd links and /proc/PID/status (daemon/act/rcvbuf.c). The input
 * is the file's text. Besides "no crash, no sanitizer report": a parser
 * that fails leaves its output alone, and a utilisation is always within
 * [0, 1].
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/act/rcvbuf.h"
#include "daemon/collect/procfs.h"
#include "daemon/collect/procmem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct procmem_meminfo m = { .total_bytes = 7, .available_bytes = 3 };
	uint64_t in = 11, mem = 13, v[3] = { 1, 2, 3 };
	double a;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (procmem_parse_meminfo(text, &m) && (m.total_bytes != 7 || m.available_bytes != 3))
		abort();
	a = procmem_utilisation(&m);
	if (!(a >= 0.0 && a <= 1.0))
		abort();
	if (procmem_parse_sockstat_udp(text, &in, &mem) && (in != 11 || mem != 13))
		abort();
	for (int n = 1; n <= 3; n++) {
		v[0] = 1, v[1] = 2, v[2] = 3;
		if (procmem_parse_sysctl(text, v, n) && (v[0] != 1 || v[1] != 2 || v[2] != 3))
			abort();
		/* a success sets exactly the n values asked for */
		if (n < 3 && v[2] != 3)
			abort();
	}
	{
		uint64_t ino = 17;
		uint32_t uid = 19;

		/* the link is not NUL-terminated: only @size bytes may be read */
		if (rcvbuf_parse_socket_link((const char *)data, size, &ino) && ino != 17)
			abort();
		if (rcvbuf_parse_status_uid(text, &uid) && uid != 19)
			abort();
	}
	{
		uint64_t hz = 23;

		if (procfs_parse_kconfig_u64(text, "HZ", &hz) && hz != 23)
			abort();
	}
	free(text);
	return 0;
}
