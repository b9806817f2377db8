/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx pure core environment: the few types and helpers that maglev.c,
 * sched.c and affinity.c use, mapped to kernel headers in the module and to
 * the C library in host unit tests and benchmarks.  The pure files include
 * nothing else, allocate nothing, never lock or read the clock and sleep
 * only in kpx_pure_resched() (long table builds, process context): callers
 * pass memory, time and random numbers in.
 */
#ifndef _KPX_PURE_H
#define _KPX_PURE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/siphash.h>
#include <linux/sched.h>
/* Long loops of the pure core call this; they run in process context. */
#define kpx_pure_resched()	cond_resched()
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
#define U16_MAX ((u16)~0U)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define kpx_pure_resched() do { } while (0)
#endif

/*
 * struct kpx_hkey, kpx_keyed_hash16() - a keyed hash (SipHash-2-4) of a
 * 16-byte address, for tables whose keys a client chooses: without the
 * key, which each table draws at random, a client cannot aim entries at
 * one bucket.
 * The module uses the kernel's siphash(); the host builds use the same
 * algorithm below (SipHash-2-4, Aumasson and Bernstein, 2012: little-endian
 * words, 2 compression and 4 finalization rounds), so results are equal.
 */
#ifdef __KERNEL__
struct kpx_hkey {
	siphash_key_t sip;
};

static inline u64 kpx_keyed_hash16(const u8 *a, const struct kpx_hkey *key)
{
	return siphash(a, 16, &key->sip);
}
#else
struct kpx_hkey {
	struct {
		u64 key[2];
	} sip;
};

static inline u64 kpx_rotl64(u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define KPX_SIPROUND(v0, v1, v2, v3) do {				\
		v0 += v1; v1 = kpx_rotl64(v1, 13); v1 ^= v0;		\
		v0 = kpx_rotl64(v0, 32);				\
		v2 += v3; v3 = kpx_rotl64(v3, 16); v3 ^= v2;		\
		v0 += v3; v3 = kpx_rotl64(v3, 21); v3 ^= v0;		\
		v2 += v1; v1 = kpx_rotl64(v1, 17); v1 ^= v2;		\
		v2 = kpx_rotl64(v2, 32);				\
	} while (0)

static inline u64 kpx_le64(const u8 *p)
{
	u64 x = 0;
	int i;

	for (i = 7; i >= 0; i--)
		x = (x << 8) | p[i];
	return x;
}

static inline u64 kpx_keyed_hash16(const u8 *a, const struct kpx_hkey *key)
{
	u64 v0 = 0x736f6d6570736575ULL ^ key->sip.key[0];
	u64 v1 = 0x646f72616e646f6dULL ^ key->sip.key[1];
	u64 v2 = 0x6c7967656e657261ULL ^ key->sip.key[0];
	u64 v3 = 0x7465646279746573ULL ^ key->sip.key[1];
	u64 m, b = (u64)16 << 56;
	int i;

	for (i = 0; i < 16; i += 8) {
		m = kpx_le64(a + i);
		v3 ^= m;
		KPX_SIPROUND(v0, v1, v2, v3);
		KPX_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	v3 ^= b;
	KPX_SIPROUND(v0, v1, v2, v3);
	KPX_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		KPX_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
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
