/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test tool: IPv6 client addresses that all fall into bucket 0 of the
 * ClientIP affinity table's former bucket hash (kpx_hash16() with a fixed,
 * public seed), for any table of up to 2^32 buckets.  kpx_mix64() is a
 * bijection, so a wanted hash value is turned back into the address half
 * that produces it.  Used by the host tests, the KUnit suite and
 * bench/core to check that the keyed hash spreads them.
 */
#ifndef _KPX_AFF_COLLIDE_H
#define _KPX_AFF_COLLIDE_H

#include "../pure.h"

/* The seed the affinity table hashed clients with before it had a key. */
#define KPX_AFF_OLD_SEED	0x6b70782d61662d31ULL

/* The former bucket hash of the table (bucket = hash & (nbuckets - 1)). */
static inline u64 kpx_aff_old_hash(const u8 *client16)
{
	return kpx_hash16(client16, KPX_AFF_OLD_SEED);
}

static inline u64 kpx_unxorshift(u64 y, int s)
{
	u64 x = y;
	int k;

	for (k = s; k < 64; k += s)
		x ^= y >> k;
	return x;
}

static inline u64 kpx_inv64(u64 c)
{
	u64 inv = c;	/* correct to 3 bits for odd c; Newton doubles it */
	int k;

	for (k = 0; k < 5; k++)
		inv *= 2 - c * inv;
	return inv;
}

/* The inverse of kpx_mix64(). */
static inline u64 kpx_unmix64(u64 y)
{
	y = kpx_unxorshift(y, 33);
	y *= kpx_inv64(0x81dadef4bc2dd44dULL);
	y = kpx_unxorshift(y, 27);
	y *= kpx_inv64(0x7fb5d329728ea185ULL);
	return kpx_unxorshift(y, 31);
}

/*
 * kpx_aff_collide - the @k-th colliding client (k distinct: addresses
 * distinct): 2001:db8:0:1::/64 with an interface identifier chosen so that
 * the former hash is (k + 1) << 32.
 */
static inline void kpx_aff_collide(u8 *a16, u32 k)
{
	static const u8 prefix[8] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1 };
	u64 lo = 0, hi;
	int i;

	for (i = 0; i < 8; i++) {
		a16[i] = prefix[i];
		lo = (lo << 8) | prefix[i];
	}
	hi = kpx_unmix64((u64)(k + 1) << 32) ^ kpx_mix64(KPX_AFF_OLD_SEED ^ lo);
	for (i = 15; i >= 8; i--) {
		a16[i] = (u8)hi;
		hi >>= 8;
	}
}

#endif /* _KPX_AFF_COLLIDE_H */
