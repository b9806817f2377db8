// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx Maglev consistent hashing (Eisenbud et al., "Maglev: A Fast and
 * Reliable Software Network Load Balancer", NSDI 2016, section 3.4).
 *
 * Each backend has a permutation of the table slots given by an offset and
 * a skip derived from its identity (address and port) with fixed seeds; the
 * backends take turns claiming their next free slot until the table is
 * full.  A backend of weight w claims w slots per turn (weights reduced by
 * their gcd first), so its share is proportional to its weight.  The result
 * depends only on the backend identities, weights, order and table size.
 *
 * Slots are u16 backend indexes and the size follows the backend count
 * (kpx_mh_size_for()): a few backends take a few KiB, not a fixed 128 KiB.
 */
#include "maglev.h"

/**
 * kpx_be_ident - stable identity of a backend
 * @addr16: address, 16 bytes, network order (IPv4 in the first 4)
 * @port_be: port, network byte order
 *
 * Return: a 64-bit value equal on every node for the same backend.
 */
u64 kpx_be_ident(const u8 *addr16, u16 port_be)
{
	return kpx_mix64(kpx_hash16(addr16, 0x6b70782d62652d31ULL) ^ port_be);
}

/**
 * kpx_is_prime - trial division primality test
 * @n: the number (at most KPX_MH_SIZE_MAX in practice)
 *
 * Return: true if @n is prime.
 */
bool kpx_is_prime(u32 n)
{
	u32 d;

	if (n < 2)
		return false;
	if (n % 2 == 0)
		return n == 2;
	for (d = 3; (u64)d * d <= n; d += 2)
		if (n % d == 0)
			return false;
	return true;
}

/*
 * Table sizes to choose from: primes, each about twice the one before, so
 * that a table is at most about twice the size it needs.
 */
static const u32 mh_sizes[] = {
	251, 509, 1021, 2039, 4093, 8191, 16381, 32749, 65521, 131071,
	262139, 524287, 1048573,
};

/**
 * kpx_mh_size_for - Maglev table size for a set of backends
 * @n: number of backends, at least 1
 * @max: the frontend's largest size (KPX_SVC_A_MH_SIZE), a prime > @n
 *
 * The smallest size of the list with more than KPX_MH_SLOTS_PER_BE slots
 * per backend (Maglev's M > 100 N keeps every share within about 1% of
 * the others), at most @max (then @max itself).  A function of @n and @max
 * alone, so that every node, an agent restart and every frontend of one
 * Service build the same table for the same backends (the point of
 * consistent hashing across nodes behind ECMP); a count that crosses a
 * step of the list changes the size, and then most clients move.
 *
 * Return: a prime above @n.
 */
u32 kpx_mh_size_for(u32 n, u32 max)
{
	u64 want = (u64)n * KPX_MH_SLOTS_PER_BE;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(mh_sizes); i++)
		if (mh_sizes[i] > want)
			return mh_sizes[i] < max ? mh_sizes[i] : max;
	return max;
}

struct mh_perm {
	u32 offset;
	u32 skip;
	u32 next;	/* index of the next permutation entry to try */
	u32 turns;	/* slots to claim per round (reduced weight) */
};

/**
 * kpx_mh_scratch_size - bytes of scratch memory kpx_mh_build() needs
 * @n: number of backends
 */
size_t kpx_mh_scratch_size(u32 n)
{
	return (size_t)n * sizeof(struct mh_perm);
}

/**
 * kpx_mh_build - fill a Maglev lookup table
 * @table: @size entries, each set to a backend index below @n
 * @size: table size, a prime larger than @n
 * @ident: backend identities (kpx_be_ident()), @n entries
 * @weight: backend weights (>= 1), or NULL for all 1
 * @n: number of backends, 1..KPX_MH_BACKENDS_MAX
 * @scratch: kpx_mh_scratch_size(@n) bytes
 *
 * O(@size) expected (plus @n); reschedules every few thousand slots
 * (kpx_pure_resched()), so call it from process context.
 *
 * Return: 0, or -EINVAL if @size is not a prime above @n or @n is 0 or
 * above KPX_MH_BACKENDS_MAX.
 */
int kpx_mh_build(u16 *table, u32 size, const u64 *ident, const u32 *weight,
		 u32 n, void *scratch)
{
	struct mh_perm *p = scratch;
	u32 i, g = 0, filled = 0, maxw = 0;

	if (!n || n > KPX_MH_BACKENDS_MAX || size <= n || !kpx_is_prime(size))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		u32 w = weight ? weight[i] : 1;

		g = kpx_gcd32(g, w);
		if (w > maxw)
			maxw = w;
	}
	/* Keep a round (sum of turns) well below the table size. */
	for (i = 0; i < n; i++) {
		u32 w = (weight ? weight[i] : 1) / g;
		u32 shift = 0;

		while ((maxw / g) >> shift > 64)
			shift++;
		w >>= shift;
		p[i].turns = w ? w : 1;
		p[i].offset = (u32)(kpx_mix64(ident[i] ^ KPX_MH_SEED_OFFSET) %
				    size);
		p[i].skip = (u32)(kpx_mix64(ident[i] ^ KPX_MH_SEED_SKIP) %
				  (size - 1)) + 1;
		p[i].next = 0;
	}
	for (i = 0; i < size; i++)
		table[i] = U16_MAX;

	for (;;) {
		for (i = 0; i < n; i++) {
			u32 t;

			for (t = 0; t < p[i].turns; t++) {
				u32 c;

				do {
					c = (u32)(((u64)p[i].skip * p[i].next +
						   p[i].offset) % size);
					p[i].next++;
				} while (table[c] != U16_MAX);
				table[c] = (u16)i;
				if (++filled == size)
					return 0;
				if (!(filled & 4095))
					kpx_pure_resched();
			}
		}
	}
}

/**
 * kpx_mh_lookup - backend index for a client address
 * @table: built by kpx_mh_build()
 * @size: its size
 * @client16: client address, 16 bytes, network order
 *
 * Return: the backend index stored in the client's slot.
 */
u32 kpx_mh_lookup(const u16 *table, u32 size, const u8 *client16)
{
	return table[kpx_hash16(client16, KPX_MH_SEED_CLIENT) % size];
}
