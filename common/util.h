/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers without a better home: clocks, counters, bounded copies, I/O. */
#ifndef RXB_COMMON_UTIL_H
#define RXB_COMMON_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#define RXB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define RXB_NSEC_PER_SEC 1000000000ULL
#define RXB_NSEC_PER_MSEC 1000000ULL
#define RXB_NSEC_PER_USEC 1000ULL

static inline uint64_t rxb_clock_ns(clockid_t clk)
{
	struct timespec ts;

	/* clock_gettime cannot fail for the clocks used here. */
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * RXB_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC, the time base of bpf_ktime_get_ns(). */
static inline uint64_t rxb_mono_ns(void)
{
	return rxb_clock_ns(CLOCK_MONOTONIC);
}

/* Unix time in whole seconds (CLOCK_REALTIME): timestamps shown to people. */
static inline uint64_t rxb_wall_s(void)
{
	return rxb_clock_ns(CLOCK_REALTIME) / RXB_NSEC_PER_SEC;
}

/*
 * @a - @b, or 0 when @b is larger: the delta of a cumulative counter whose
 * previous reading may come from an object that was replaced in between
 * (a restarted task, a re-created map), which must not wrap to 2^64.
 */
static inline uint64_t rxb_sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * @names[@v]: the name of value @v of an enum whose names sit in a table of
 * @n entries indexed by value (designated initializers, gaps left NULL);
 * @fallback for a value past the table or in a gap. One lookup instead of a
 * switch per enum; use RXB_NAME() on the table itself.
 */
static inline const char *rxb_name(const char *const *names, size_t n, unsigned long v,
				   const char *fallback)
{
	return v < n && names[v] ? names[v] : fallback;
}

#define RXB_NAME(names, v, fallback) \
	rxb_name((names), RXB_ARRAY_SIZE(names), (unsigned long)(v), (fallback))

/* @num / @den, NaN when @den is not positive (nothing to average over). */
static inline double rxb_ratio(double num, double den)
{
	return den > 0 ? num / den : NAN;
}

/*
 * Copy @src into @dst of @size bytes, always NUL-terminated.
 * Returns strlen(src); a result >= size means the copy was truncated.
 */
/*
 * The index of the first of the @n elements of @base (each @size bytes,
 * sorted by the uint32_t at byte @key_off) whose key is >= @key; @n if
 * none. For the snapshots sorted by thread id.
 */
size_t rxb_lower_bound_u32(const void *base, size_t n, size_t size, size_t key_off,
			   uint32_t key);

size_t rxb_strlcpy(char *dst, const char *src, size_t size);

/*
 * An unsigned integer field of @size bytes (1, 2, 4, else 8) seen through a
 * void pointer, as the table-driven configuration parsers (daemon/config,
 * tools/shape/conf) keep their fields: @v stored truncated to its width,
 * and read back.
 */
void rxb_store_uint(void *field, size_t size, uint64_t v);
uint64_t rxb_load_uint(const void *field, size_t size);

/*
 * @arr, an array of @n elements of @size bytes in use and *@cap allocated,
 * with room for one more: @arr itself while n < *cap, else @arr realloc'd
 * to twice the capacity (16 elements at first) and *@cap updated. NULL
 * when out of memory or past UINT32_MAX elements; @arr is then unchanged.
 */
void *rxb_grow(void *arr, uint32_t n, uint32_t *cap, size_t size);

/*
 * One more element at the end of *@arr (*@n in use, *@cap allocated),
 * grown as by rxb_grow(): zeroed, counted in *@n and returned. NULL when
 * out of memory or full; *@arr, *@n and *@cap are then unchanged.
 */
void *rxb_append(void **arr, uint32_t *n, uint32_t *cap, size_t size);

/*
 * @ss as "192.0.2.7:40000" or "[2001:db8::1]:40000"; an IPv4-mapped IPv6
 * address (a dual-stack socket's IPv4 peer) as the IPv4 address it is,
 * another family as "(family N)". Returns snprintf-style length.
 */
int rxb_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t size);

/*
 * Write all @len bytes of @buf to @fd, retrying after EINTR and short
 * writes (a blocking fd: EAGAIN is an error here). 0 or -errno.
 */
int rxb_write_all(int fd, const void *buf, size_t len);

/*
 * Read @fd to its end into @buf (@size bytes), retrying after EINTR:
 * *@len the bytes read. 0; -EFBIG when more follows a full @buf (*@len is
 * then @size); -errno on a read error (EAGAIN included).
 */
int rxb_read_all(int fd, void *buf, size_t size, size_t *len);

/*
 * One read from a source into @dst (@room bytes): the bytes read, 0 at its
 * end, or -errno (-EINTR is retried).
 */
typedef long (*rxb_read_fn)(void *src, void *dst, size_t room);

/*
 * Read a source of unknown size to its end into a malloc'd buffer that
 * doubles as it fills, NUL-terminated (text files): *@text (the caller
 * frees it), *@len (if not NULL) the bytes read. 0; -EFBIG once more than
 * @max bytes came; -ENOMEM; the reader's -errno. On error *@text is NULL.
 */
int rxb_read_grow(rxb_read_fn rd, void *src, size_t max, char **text, size_t *len);

/* rxb_read_grow() over read(2) of @fd. */
int rxb_read_fd_grow(int fd, size_t max, char **text, size_t *len);

/* rxb_read_fd_grow() of the file @path, opened read-only and closed again. */
int rxb_read_path(const char *path, size_t max, char **text, size_t *len);

/*
 * Open @name in the directory @dirfd (AT_FDCWD: a path) to read a file
 * that someone other than the caller may have put there: never through a
 * symbolic link, never blocking (a FIFO in its place must not hang the
 * reader), and only a regular file of at most @max_bytes (0: any size).
 * The fd, its stat in *@st; or -errno: -ELOOP a symbolic link, -EINVAL
 * not a regular file (*@st says what it is), -EFBIG too large (*@st
 * zeroed where the open failed).
 */
int rxb_open_regular(int dirfd, const char *name, size_t max_bytes, struct stat *st);

/*
 * Replace the file @name in the directory @dirfd by @len bytes of @data,
 * atomically: written whole to @tmp (mode @mode; made afresh, whatever was
 * in its place - a FIFO, a link - removed first), fsync'd, renamed over
 * @name, the directory fsync'd. A crash at any point leaves the old file
 * or the new one. 0 or -errno (@tmp removed).
 */
int rxb_replace_file(int dirfd, const char *name, const char *tmp, const void *data,
		     size_t len, unsigned int mode);

#endif
