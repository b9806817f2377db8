// SPDX-License-Identifier: GPL-2.0-only
/* Host tests of the ClientIP affinity table (affinity.c). */
#include <stdlib.h>
#include "../../../agent/tests/lib/tap.h"
#include "affinity.h"
#include "../aff_collide.h"

static const struct kpx_hkey test_key = {
	.sip.key = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL },
};

static void addr(u8 *a, u32 i)
{
	memset(a, 0, 16);
	a[0] = 10;
	a[1] = (u8)(i >> 16);
	a[2] = (u8)(i >> 8);
	a[3] = (u8)i;
}

static struct kpx_aff *mk(u32 cap, u32 timeout_s)
{
	struct kpx_aff *t = calloc(1, sizeof(*t));

	kpx_aff_init(t, calloc(cap, sizeof(struct kpx_aff_entry)),
		     calloc(kpx_aff_nbuckets(cap), sizeof(u32)), cap, timeout_s,
		     &test_key);
	return t;
}

static void rm(struct kpx_aff *t)
{
	free(t->e);
	free(t->bucket);
	free(t);
}

static bool keep_not_b2(const void *ctx, const u8 *be, u16 port)
{
	(void)ctx;
	(void)port;
	return be[3] != 2;
}

static u32 max_chain(const struct kpx_aff *t)
{
	u32 b, i, n, m = 0;

	for (b = 0; b < t->nbuckets; b++) {
		n = 0;
		for (i = t->bucket[b]; i != KPX_AFF_NIL; i = t->e[i].hnext)
			n++;
		if (n > m)
			m = n;
	}
	return m;
}

#define NCOLL 65536U

static void test_hash_flood(void)
{
	u8 (*c)[16] = malloc(NCOLL * 16), b1[16], v[16];
	struct kpx_aff *t, *g;
	u32 i, j, same = 0, found = 0, bad = 0, cl[KPX_AFF_CHAIN_MAX + 1];

	for (i = 0; i < 16; i++)
		v[i] = (u8)i;
	ok(kpx_keyed_hash16(v, &test_key) == 0x3f2acc7f57c29bdbULL,
	   "host SipHash-2-4 gives the reference vector for 16 bytes");
	for (i = 0; i < NCOLL; i++) {
		kpx_aff_collide(c[i], i);
		if ((u32)kpx_aff_old_hash(c[i]))
			bad++;
		if (i && !memcmp(c[i], c[i - 1], 16))
			same++;
	}
	ok(!bad && !same,
	   "%u distinct IPv6 sources share bucket 0 under the old hash",
	   NCOLL);
	addr(b1, 0x010001);
	t = mk(2 * NCOLL, 100);
	for (i = 0; i < NCOLL; i++)
		kpx_aff_update(t, c[i], b1, 80, 1000 + i);
	for (i = 0; i < NCOLL; i++)
		found += kpx_aff_lookup(t, c[i], 2000 + NCOLL) != NULL;
	ok(found == NCOLL && t->evictions == 0 &&
	   max_chain(t) <= KPX_AFF_CHAIN_MAX,
	   "keyed hash: all %u found, %llu evictions, longest chain %u",
	   found, (unsigned long long)t->evictions, max_chain(t));
	rm(t);

	/* The same sources through growth by moves: 64 -> 512 -> 4096 ... */
	t = mk(64, 100);
	for (i = 0; i < NCOLL; i++) {
		kpx_aff_update(t, c[i], b1, 80, 1000 + i);
		if (t->used >= t->cap / 4 * 3 && t->cap < 2 * NCOLL) {
			g = mk(t->cap * 8 < 2 * NCOLL ? t->cap * 8 : 2 * NCOLL,
			       0);
			kpx_aff_move(g, t);
			rm(t);
			t = g;
		}
	}
	found = 0;
	for (i = 0; i < NCOLL; i++)
		found += kpx_aff_lookup(t, c[i], 2000 + NCOLL) != NULL;
	ok(found == NCOLL && t->used == NCOLL &&
	   max_chain(t) <= KPX_AFF_CHAIN_MAX,
	   "growing by moves keeps all %u (longest chain %u)", found,
	   max_chain(t));
	rm(t);

	/* A chain of the keyed hash filled on purpose (the key is known). */
	t = mk(1024, 100);
	for (i = 0, j = 0; j <= KPX_AFF_CHAIN_MAX; i++) {
		addr(v, 0x100000 + i);
		if (!(kpx_keyed_hash16(v, &test_key) & (t->nbuckets - 1)))
			cl[j++] = 0x100000 + i;
	}
	for (j = 0; j <= KPX_AFF_CHAIN_MAX; j++) {
		addr(v, cl[j]);
		kpx_aff_update(t, v, b1, 80, 1000 + j);
	}
	addr(v, cl[0]);
	found = kpx_aff_lookup(t, v, 2000) != NULL;
	addr(v, cl[KPX_AFF_CHAIN_MAX]);
	ok(!found && kpx_aff_lookup(t, v, 2000) && t->evictions == 1 &&
	   t->used == KPX_AFF_CHAIN_MAX && max_chain(t) == KPX_AFF_CHAIN_MAX,
	   "a full chain evicts its oldest entry (%llu evictions, %u used)",
	   (unsigned long long)t->evictions, t->used);
	rm(t);
	free(c);
}

/*
 * A purge in steps, with what the packet path does between them while a
 * SET's purge has dropped the lock (new clients, refreshes, a client whose
 * backend is gone forgotten and re-picked from the new set, evictions of
 * nothing here), ends with no entry of the removed backend and every other
 * entry kept.
 */
static void test_purge_steps(void)
{
	struct kpx_aff *t = mk(4096, 100);
	u32 i, pos = 0, steps = 0, dropped = 0, bad = 0, kept = 0;
	u8 c[16], b1[16], b2[16];
	bool forgot = true;

	addr(b1, 0x010001);
	addr(b2, 0x010002);
	for (i = 0; i < 3000; i++) {
		addr(c, i);
		kpx_aff_update(t, c, i % 3 ? b1 : b2, 1, 1000 + i);
	}
	while (pos < t->cap) {
		dropped += kpx_aff_purge_step(t, keep_not_b2, NULL, &pos, 100);
		steps++;
		addr(c, 5000 + steps);			/* a new client */
		kpx_aff_update(t, c, b1, 1, 9000 + steps);
		addr(c, 3 * steps + 2);			/* a refresh */
		kpx_aff_update(t, c, b1, 1, 9000 + steps);
		addr(c, 3 * steps);			/* b2 gone: re-pick */
		kpx_aff_forget(t, c);
		kpx_aff_update(t, c, b1, 1, 9000 + steps);
		addr(c, 3 * steps + 1);			/* a drop */
		forgot &= kpx_aff_forget(t, c);
	}
	ok(steps == 41 && pos == 4096, "4096 slots in 41 steps of 100 (%u)",
	   steps);
	ok(kpx_aff_purge_step(t, keep_not_b2, NULL, &pos, 100) == 0 &&
	   pos == 4096, "a step past the end does nothing");
	ok(forgot, "the entries dropped between steps were there");
	for (i = 0; i < 3000; i++) {
		const struct kpx_aff_entry *e;

		addr(c, i);
		e = kpx_aff_lookup(t, c, 9500);
		if (e && e->be_addr[3] == 2)
			bad++;
		else if (e)
			kept++;
	}
	ok(bad == 0, "no entry of the removed backend is left (%u)", bad);
	ok(kept == 2000, "every other entry kept (%u of 2000)", kept);
	ok(dropped >= 1000 - 41 && dropped <= 1000 && t->used == 2041,
	   "dropped %u, %u used", dropped, t->used);
	rm(t);
}

int main(void)
{
	struct kpx_aff *t = mk(4, 10);
	const struct kpx_aff_entry *e;
	u8 c1[16], c2[16], b1[16], b2[16], c[16];
	u32 i;

	addr(c1, 1);
	addr(c2, 2);
	addr(b1, 0x010001);
	addr(b2, 0x010002);
	ok(kpx_aff_lookup(t, c1, 0) == NULL, "empty table: no entry");
	kpx_aff_update(t, c1, b1, 0x5000, 1000);
	e = kpx_aff_lookup(t, c1, 1000 + 9999);
	ok(e && !memcmp(e->be_addr, b1, 16) && e->be_port == 0x5000,
	   "entry found 9.999 s later");
	ok(kpx_aff_lookup(t, c1, 1000 + 10000) == NULL,
	   "entry expired at exactly 10 s");
	ok(t->used == 0, "expired entry was removed");

	kpx_aff_update(t, c1, b1, 1, 0);
	kpx_aff_update(t, c1, b1, 1, 8000);	/* new connection refreshes */
	ok(kpx_aff_lookup(t, c1, 17000) != NULL,
	   "refresh extends the timeout from the last new connection");
	kpx_aff_update(t, c2, b2, 1, 17000);
	ok(kpx_aff_purge(t, keep_not_b2, NULL) == 1 &&
	   kpx_aff_lookup(t, c2, 17000) == NULL &&
	   kpx_aff_lookup(t, c1, 17000) != NULL,
	   "purge drops entries of a removed backend only");
	ok(kpx_aff_forget(t, c1) && !kpx_aff_forget(t, c1) && t->used == 0,
	   "forget removes once");

	/* Eviction: capacity 4, insert 6 live clients. */
	for (i = 0; i < 6; i++) {
		addr(c, 100 + i);
		kpx_aff_update(t, c, b1, 1, 20000 + i);
	}
	addr(c, 100);
	e = kpx_aff_lookup(t, c, 20010);
	addr(c, 105);
	ok(t->used == 4 && t->evictions == 2 && !e &&
	   kpx_aff_lookup(t, c, 20010),
	   "full table evicts the oldest (%llu evictions, %u used)",
	   (unsigned long long)t->evictions, t->used);
	/* Expired oldest entries are reused without counting evictions. */
	for (i = 0; i < 4; i++) {
		addr(c, 200 + i);
		kpx_aff_update(t, c, b2, 1, 40000 + i);
	}
	ok(t->evictions == 2 && t->used == 4,
	   "reusing expired entries is not an eviction");
	rm(t);

	/* Many clients, chains and LRU stay consistent. */
	t = mk(1000, 100);
	for (i = 0; i < 5000; i++) {
		addr(c, i % 1500);
		if (!kpx_aff_lookup(t, c, i))
			kpx_aff_update(t, c, b1, (u16)i, i);
	}
	{
		u32 n = 0, j;

		for (j = t->head; j != KPX_AFF_NIL; j = t->e[j].next)
			n++;
		ok(n == t->used && t->used == 1000,
		   "LRU list length %u = used %u = cap", n, t->used);
	}
	{
		struct kpx_aff *g = mk(8000, 1);
		u32 j, same = 1;

		kpx_aff_move(g, t);
		for (i = t->head, j = g->head; i != KPX_AFF_NIL;
		     i = t->e[i].next, j = g->e[j].next)
			if (j == KPX_AFF_NIL ||
			    memcmp(t->e[i].client, g->e[j].client, 16) ||
			    t->e[i].last_ms != g->e[j].last_ms ||
			    t->e[i].be_port != g->e[j].be_port)
				same = 0;
		addr(c, 4999 % 1500);
		ok(same && g->used == t->used && g->timeout_ms == 100000 &&
		   g->evictions == t->evictions && kpx_aff_lookup(g, c, 5000),
		   "move to a bigger table keeps order, times, timeout, count");
		rm(g);
	}
	rm(t);
	test_hash_flood();
	test_purge_steps();
	return tap_done();
}
