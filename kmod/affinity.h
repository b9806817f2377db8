/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx ClientIP session affinity table (pure): a bounded map from client
 * address to backend identity with a timeout since the client's last new
 * connection, least-recently-used eviction and an eviction counter.  The
 * caller provides the memory, the time and the locking.
 */
#ifndef _KPX_AFFINITY_H
#define _KPX_AFFINITY_H

#include "pure.h"

#define KPX_AFF_NIL	U32_MAX
/* An entry's prev while it is on the free list (never a used entry's). */
#define KPX_AFF_FREE	(U32_MAX - 1)
/*
 * Longest hash chain: inserting into a full chain first drops that chain's
 * least recently refreshed entry (an eviction if it was live).  With a
 * random key and at most one entry per bucket on average a chain this long
 * is vanishingly rare; it bounds every lookup whatever the clients send.
 */
#define KPX_AFF_CHAIN_MAX	16

struct kpx_aff_entry {
	u8 client[16];		/* network order */
	u8 be_addr[16];		/* network order */
	u16 be_port;		/* network order */
	u32 hnext;		/* hash chain */
	/* LRU list, oldest first; free list: next, with prev KPX_AFF_FREE */
	u32 prev, next;
	u64 last_ms;		/* time of the client's last new connection */
};

struct kpx_aff {
	u32 cap;		/* entries */
	u32 nbuckets;		/* power of two */
	u32 timeout_ms;
	u32 used;
	u32 head, tail;		/* LRU: head is the oldest */
	u32 free;
	u64 evictions;		/* live entries dropped to make room */
	struct kpx_hkey key;		/* bucket hash key, random per table */
	u32 *bucket;		/* nbuckets heads */
	struct kpx_aff_entry *e;	/* cap entries */
};

u32 kpx_aff_nbuckets(u32 cap);
void kpx_aff_init(struct kpx_aff *t, struct kpx_aff_entry *e, u32 *bucket,
		  u32 cap, u32 timeout_s, const struct kpx_hkey *key);
const struct kpx_aff_entry *kpx_aff_lookup(struct kpx_aff *t,
					   const u8 *client16, u64 now_ms);
bool kpx_aff_peek(const struct kpx_aff *t, const u8 *client16, u64 now_ms,
		  struct kpx_aff_entry *out);
void kpx_aff_update(struct kpx_aff *t, const u8 *client16,
		    const u8 *be_addr16, u16 be_port, u64 now_ms);
bool kpx_aff_forget(struct kpx_aff *t, const u8 *client16);
typedef bool (*kpx_aff_keep_fn)(const void *ctx, const u8 *be_addr16,
				u16 be_port);
u32 kpx_aff_purge(struct kpx_aff *t, kpx_aff_keep_fn keep, const void *ctx);
u32 kpx_aff_purge_step(struct kpx_aff *t, kpx_aff_keep_fn keep,
		       const void *ctx, u32 *pos, u32 budget);
void kpx_aff_move(struct kpx_aff *dst, const struct kpx_aff *src);

#endif /* _KPX_AFFINITY_H */
