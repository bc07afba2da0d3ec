// SPDX-License-Identifier: GPL-2.0-or-later
/* CRC32C and the file digest. See integ.h. */
#include "tools/rbudp/integ.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY_REV 0x82f63b78u	/* 0x1edc6f41 bit-reversed */

/* Slicing-by-8 tables: constants, computed once on first use; 8 KiB. */
static uint32_t crc_tab[8][256];
static pthread_once_t crc_tab_once = PTHREAD_ONCE_INIT;

static void crc_tab_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY_REV & (0u - (c & 1)));
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^
					crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

uint32_t rbudp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc_tab_once, crc_tab_build);
	crc = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		/* The slicing tables assume little-endian loads. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		w ^= crc;
		crc = crc_tab[7][w & 0xff] ^ crc_tab[6][(w >> 8) & 0xff] ^
		      crc_tab[5][(w >> 16) & 0xff] ^ crc_tab[4][(w >> 24) & 0xff] ^
		      crc_tab[3][(w >> 32) & 0xff] ^ crc_tab[2][(w >> 40) & 0xff] ^
		      crc_tab[1][(w >> 48) & 0xff] ^ crc_tab[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

bool rbudp_crc32c_is_hw(void)
{
	return __builtin_cpu_supports("sse4.2");
}

uint32_t rbudp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, buf, len);
	return rbudp_crc32c_sw(crc, buf, len);
}
#else
bool rbudp_crc32c_is_hw(void)
{
	return false;
}

uint32_t rbudp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return rbudp_crc32c_sw(crc, buf, len);
}
#endif

uint64_t rbudp_digest_buf(const void *data, uint64_t file_bytes, uint32_t payload_bytes)
{
	const uint8_t *p = data;
	uint64_t sum = 0, off = 0;
	uint32_t seq = 0;

	while (off < file_bytes) {
		uint64_t left = file_bytes - off;
		size_t len = left < payload_bytes ? (size_t)left : payload_bytes;

		sum += rbudp_digest_term(seq, p + off, len);
		off += len;
		seq++;
	}
	return sum;
}
