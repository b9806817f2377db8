// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx ClientIP affinity table.  Entries live in a caller-provided array,
 * chained from a power-of-two bucket array and linked in least-recently-
 * refreshed order.  A lookup drops an expired entry it meets; an update
 * refreshes or inserts, taking the oldest entry when the table is full (a
 * live one counts as an eviction).  The timeout is checked in milliseconds
 * from the caller's clock, so it holds to the second whatever TCP does.
 * Buckets are chosen by a keyed hash (the caller draws the key at random)
 * and chains are at most KPX_AFF_CHAIN_MAX long, so every operation is
 * O(1) whatever addresses clients use.
 */
#include "affinity.h"

/** kpx_aff_nbuckets - bucket count for @cap entries (power of two). */
u32 kpx_aff_nbuckets(u32 cap)
{
	u32 n = 1;

	while (n < cap && n < (1U << 30))
		n <<= 1;
	return n;
}

/**
 * kpx_aff_init - set up an empty table
 * @t: the table
 * @e: @cap entries
 * @bucket: kpx_aff_nbuckets(@cap) heads
 * @cap: most entries, at least 1
 * @timeout_s: affinity timeout in seconds
 * @key: bucket hash key; draw it at random (get_random_bytes()) for each
 *	table, it is what keeps clients from choosing their bucket
 */
void kpx_aff_init(struct kpx_aff *t, struct kpx_aff_entry *e, u32 *bucket,
		  u32 cap, u32 timeout_s, const struct kpx_hkey *key)
{
	u32 i;

	t->cap = cap;
	t->nbuckets = kpx_aff_nbuckets(cap);
	t->timeout_ms = timeout_s * 1000U;
	t->used = 0;
	t->head = t->tail = KPX_AFF_NIL;
	t->evictions = 0;
	t->bucket = bucket;
	t->e = e;
	t->key = *key;
	for (i = 0; i < t->nbuckets; i++)
		bucket[i] = KPX_AFF_NIL;
	for (i = 0; i < cap; i++) {
		e[i].next = i + 1 < cap ? i + 1 : KPX_AFF_NIL;
		e[i].prev = KPX_AFF_FREE;
	}
	t->free = 0;
}

static u32 bucket_of(const struct kpx_aff *t, const u8 *client16)
{
	return (u32)kpx_keyed_hash16(client16, &t->key) & (t->nbuckets - 1);
}

static void lru_unlink(struct kpx_aff *t, u32 i)
{
	struct kpx_aff_entry *x = &t->e[i];

	if (x->prev != KPX_AFF_NIL)
		t->e[x->prev].next = x->next;
	else
		t->head = x->next;
	if (x->next != KPX_AFF_NIL)
		t->e[x->next].prev = x->prev;
	else
		t->tail = x->prev;
}

static void lru_append(struct kpx_aff *t, u32 i)
{
	t->e[i].prev = t->tail;
	t->e[i].next = KPX_AFF_NIL;
	if (t->tail != KPX_AFF_NIL)
		t->e[t->tail].next = i;
	else
		t->head = i;
	t->tail = i;
}

/*
 * Finds @client16; *@link is set to the pointer that references it.  If
 * @oldest is not NULL, a miss sets it to the chain's least recently
 * refreshed entry (KPX_AFF_NIL unless the chain is full).
 */
static u32 find(struct kpx_aff *t, const u8 *client16, u32 **link,
		u32 *oldest)
{
	u32 *l = &t->bucket[bucket_of(t, client16)];
	u32 len = 0, old = KPX_AFF_NIL;

	while (*l != KPX_AFF_NIL) {
		if (!memcmp(t->e[*l].client, client16, 16)) {
			*link = l;
			return *l;
		}
		if (old == KPX_AFF_NIL || t->e[*l].last_ms < t->e[old].last_ms)
			old = *l;
		len++;
		l = &t->e[*l].hnext;
	}
	if (oldest)
		*oldest = len >= KPX_AFF_CHAIN_MAX ? old : KPX_AFF_NIL;
	return KPX_AFF_NIL;
}

static void drop(struct kpx_aff *t, u32 i)
{
	u32 *l, j;

	j = find(t, t->e[i].client, &l, NULL);
	if (j == i)
		*l = t->e[i].hnext;
	lru_unlink(t, i);
	t->e[i].prev = KPX_AFF_FREE;
	t->e[i].next = t->free;
	t->free = i;
	t->used--;
}

static bool expired(const struct kpx_aff *t, const struct kpx_aff_entry *x,
		    u64 now_ms)
{
	/* @now_ms may be older than a refresh by another CPU */
	return now_ms > x->last_ms && now_ms - x->last_ms >= t->timeout_ms;
}

/**
 * kpx_aff_lookup - find a client's live entry
 * @t: the table
 * @client16: client address, 16 bytes, network order
 * @now_ms: current time, milliseconds, monotonic
 *
 * An expired entry is removed.  The entry is not refreshed: call
 * kpx_aff_update() once the connection is scheduled.
 *
 * Return: the entry (valid until the next call on @t) or NULL.
 */
const struct kpx_aff_entry *kpx_aff_lookup(struct kpx_aff *t,
					   const u8 *client16, u64 now_ms)
{
	u32 *l, i = find(t, client16, &l, NULL);

	if (i == KPX_AFF_NIL)
		return NULL;
	if (expired(t, &t->e[i], now_ms)) {
		drop(t, i);
		return NULL;
	}
	return &t->e[i];
}

/**
 * kpx_aff_peek - copy a client's live entry without changing the table
 * @t: the table
 * @client16: client address, 16 bytes, network order
 * @now_ms: current time, milliseconds, monotonic
 * @out: set to a copy of the entry
 *
 * For lockless readers: reads at most KPX_AFF_CHAIN_MAX + 1 entries, each
 * within the table, so a writer changing @t meanwhile can only make the
 * answer wrong, never the walk unsafe or long; the caller discards an
 * answer a writer overlapped (a seqcount).  An expired entry is a miss.
 *
 * Return: true if @out holds the client's live entry.
 */
bool kpx_aff_peek(const struct kpx_aff *t, const u8 *client16, u64 now_ms,
		  struct kpx_aff_entry *out)
{
	u32 i = t->bucket[bucket_of(t, client16)], k;

	for (k = 0; k <= KPX_AFF_CHAIN_MAX && i < t->cap; k++) {
		const struct kpx_aff_entry *x = &t->e[i];

		if (!memcmp(x->client, client16, 16)) {
			if (expired(t, x, now_ms))
				return false;
			*out = *x;
			return true;
		}
		i = x->hnext;
	}
	return false;
}

/**
 * kpx_aff_update - bind a client to a backend as of @now_ms
 * @t: the table
 * @client16: client address, 16 bytes, network order
 * @be_addr16: backend address, 16 bytes, network order
 * @be_port: backend port, network order
 * @now_ms: current time, milliseconds
 *
 * Refreshes the client's entry, or inserts one, reusing the oldest entry
 * of a full chain or else, if the table is full, the oldest entry (counted
 * in @t->evictions unless it had expired).
 */
void kpx_aff_update(struct kpx_aff *t, const u8 *client16,
		    const u8 *be_addr16, u16 be_port, u64 now_ms)
{
	u32 *l, old, i = find(t, client16, &l, &old);

	if (i != KPX_AFF_NIL) {
		lru_unlink(t, i);
	} else {
		if (old == KPX_AFF_NIL && t->free == KPX_AFF_NIL)
			old = t->head;
		if (old != KPX_AFF_NIL) {
			if (!expired(t, &t->e[old], now_ms))
				t->evictions++;
			drop(t, old);
		}
		i = t->free;
		t->free = t->e[i].next;
		t->used++;
		memcpy(t->e[i].client, client16, 16);
		l = &t->bucket[bucket_of(t, client16)];
		t->e[i].hnext = *l;
		*l = i;
	}
	memcpy(t->e[i].be_addr, be_addr16, 16);
	t->e[i].be_port = be_port;
	t->e[i].last_ms = now_ms;
	lru_append(t, i);
}

/**
 * kpx_aff_forget - drop a client's entry
 * @t: the table
 * @client16: client address
 *
 * Return: true if there was one.
 */
bool kpx_aff_forget(struct kpx_aff *t, const u8 *client16)
{
	u32 *l, i = find(t, client16, &l, NULL);

	if (i == KPX_AFF_NIL)
		return false;
	drop(t, i);
	return true;
}

/**
 * kpx_aff_purge_step - drop the entries of slots [*@pos, *@pos + @budget)
 *	whose backend @keep rejects
 * @t: the table
 * @keep: returns true to keep an entry's backend
 * @ctx: passed to @keep
 * @pos: first slot to look at (start at 0); advanced past the last one
 *	looked at, @t->cap once every slot has been
 * @budget: slots to look at, at least 1
 *
 * Walks slots in array order, which entries keep whatever is inserted,
 * refreshed or dropped between two steps: a caller may drop its lock
 * between steps, and a walk from 0 to @t->cap then looks at every entry
 * that was in the table at its start and is still there (entries added
 * meanwhile may or may not be looked at).
 *
 * Return: entries dropped.
 */
u32 kpx_aff_purge_step(struct kpx_aff *t, kpx_aff_keep_fn keep,
		       const void *ctx, u32 *pos, u32 budget)
{
	u32 i, end, dropped = 0;

	if (*pos >= t->cap)
		return 0;
	end = t->cap - *pos > budget ? *pos + budget : t->cap;
	for (i = *pos; i < end; i++) {
		if (t->e[i].prev == KPX_AFF_FREE)
			continue;
		if (!keep(ctx, t->e[i].be_addr, t->e[i].be_port)) {
			drop(t, i);
			dropped++;
		}
	}
	*pos = end;
	return dropped;
}

/**
 * kpx_aff_purge - drop every entry whose backend @keep rejects
 * @t: the table
 * @keep: returns true to keep an entry's backend
 * @ctx: passed to @keep
 *
 * One kpx_aff_purge_step() over the whole table: O(@t->cap).
 *
 * Return: entries dropped.
 */
u32 kpx_aff_purge(struct kpx_aff *t, kpx_aff_keep_fn keep, const void *ctx)
{
	u32 pos = 0;

	return kpx_aff_purge_step(t, keep, ctx, &pos, t->cap);
}

/**
 * kpx_aff_move - copy every entry of @src into the empty table @dst
 * @dst: initialized (kpx_aff_init()), empty, cap >= @src->used and
 *	nbuckets >= @src->nbuckets
 * @src: the table to copy; unchanged
 *
 * Keeps the entries' order, times and backends, the timeout, the eviction
 * count and the hash key (so that a chain of @dst holds entries of one
 * chain of @src only, and stays within KPX_AFF_CHAIN_MAX): used to grow a
 * table.  Entries are linked without lookups (the keys are distinct), so
 * the move is O(@src->used) whatever the chains.
 */
void kpx_aff_move(struct kpx_aff *dst, const struct kpx_aff *src)
{
	u32 i, j, *l;

	dst->timeout_ms = src->timeout_ms;
	dst->key = src->key;
	for (i = src->head; i != KPX_AFF_NIL; i = src->e[i].next) {
		j = dst->free;
		dst->free = dst->e[j].next;
		dst->used++;
		dst->e[j] = src->e[i];
		l = &dst->bucket[bucket_of(dst, dst->e[j].client)];
		dst->e[j].hnext = *l;
		*l = j;
		lru_append(dst, j);
	}
	dst->evictions = src->evictions;
}
