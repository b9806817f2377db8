/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx pure core environment: the few types and helpers that maglev.c,
 * sched.c and affinity.c use, mapped to kernel headers in the module and to
 * the C library in host unit tests and benchmarks.  The pure files include
 * nothing else, allocate nothing and never sleep, lock or read the clock:
 * callers pass memory, time and random numbers in.
 */
#ifndef _KPX_PURE_H
#define _KPX_PURE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#else
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#define U32_MAX ((u32)~0U)
#endif

/*
 * kpx_mix64 - a 64-bit finalizer (xor-shift / multiply rounds with odd
 * constants): every input bit affects every output bit.  Same code in the
 * module and on the host, so both build identical tables.
 */
static inline u64 kpx_mix64(u64 x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

/*
 * kpx_hash16 - hash a 16-byte address (network order, IPv4 in the first 4
 * bytes, rest zero) with a fixed @seed.  Deterministic on every node and
 * independent of the CPU's endianness (bytes are assembled explicitly).
 */
static inline u64 kpx_hash16(const u8 *a, u64 seed)
{
	u64 lo = 0, hi = 0;
	int i;

	for (i = 0; i < 8; i++) {
		lo = (lo << 8) | a[i];
		hi = (hi << 8) | a[8 + i];
	}
	return kpx_mix64(kpx_mix64(seed ^ lo) ^ hi);
}

/* Greatest common divisor (gcd(0, b) = b). */
static inline u32 kpx_gcd32(u32 a, u32 b)
{
	while (b) {
		u32 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Maps a 32-bit @x uniformly onto [0, @n) without a division. */
static inline u32 kpx_scale(u32 x, u32 n)
{
	return (u32)(((u64)x * n) >> 32);
}

#endif /* _KPX_PURE_H */
