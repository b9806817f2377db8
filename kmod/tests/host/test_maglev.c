// SPDX-License-Identifier: GPL-2.0-only
/* Host tests of the Maglev table (maglev.c). */
#include <stdlib.h>
#include <arpa/inet.h>
#include "../../../agent/tests/lib/tap.h"
#include "maglev.h"

#define PIN_IDENT 0xe0feb58d2db51c15ULL
#define PIN_SLOT0 33U
#define PIN_SLOTN 2U

/* Backend i: 10.(i>>8).(i&255).1:8080. */
static u64 ident_of(u32 i)
{
	u8 a[16] = { 10, (u8)(i >> 8), (u8)i, 1 };

	return kpx_be_ident(a, htons(8080));
}

static u16 *build(const u64 *id, const u32 *w, u32 n, u32 size)
{
	u16 *t = malloc(size * sizeof(*t));
	void *s = malloc(kpx_mh_scratch_size(n));

	if (!t || !s || kpx_mh_build(t, size, id, w, n, s)) {
		free(t);
		t = NULL;
	}
	free(s);
	return t;
}

static void test_share(u32 n, u32 size)
{
	u64 *id = calloc(n, sizeof(*id));
	u32 *cnt = calloc(n, sizeof(*cnt)), i, lo = ~0U, hi = 0;
	u16 *t;
	double exp = (double)size / n;

	for (i = 0; i < n; i++)
		id[i] = ident_of(i);
	t = build(id, NULL, n, size);
	ok(t != NULL, "build n=%u size=%u", n, size);
	if (!t)
		return;
	for (i = 0; i < size; i++)
		cnt[t[i]]++;
	for (i = 0; i < n; i++) {
		if (cnt[i] < lo)
			lo = cnt[i];
		if (cnt[i] > hi)
			hi = cnt[i];
	}
	/* Maglev fills in turns: shares differ by at most one slot. */
	ok(hi - lo <= 1, "n=%u size=%u: shares %u..%u (expected %.1f)", n,
	   size, lo, hi, exp);
	if (size > 100 * n)
		ok(lo >= exp * 0.99 && hi <= exp * 1.01,
	   "n=%u: every share within 1%% of %.2f", n, exp);
	free(t);
	free(id);
	free(cnt);
}

static void test_remove_one(void)
{
	const u32 n = 1000, size = 65537 * 2 - 3; /* 131071, > 100 x n */
	u64 *id = calloc(n, sizeof(*id)), *id2 = calloc(n, sizeof(*id2));
	u32 *map = calloc(n, sizeof(*map)), i, moved = 0, gone = 499;
	u16 *t1, *t2;

	for (i = 0; i < n; i++)
		id[i] = ident_of(i);
	for (i = 0; i < n; i++) {
		if (i == gone)
			continue;
		map[i] = i < gone ? i : i - 1;
		id2[map[i]] = id[i];
	}
	t1 = build(id, NULL, n, size);
	t2 = build(id2, NULL, n - 1, size);
	ok(t1 && t2, "build 1000 and 999 backends, size %u", size);
	if (!t1 || !t2)
		return;
	for (i = 0; i < size; i++)
		if (t1[i] != gone && map[t1[i]] != t2[i])
			moved++;
	ok(moved <= size / 100,
	   "removing 1 of 1000 moves %u of %u other entries (%.3f%%, <= 1%%)",
	   moved, size, 100.0 * moved / size);
	free(t1);
	free(t2);
	free(id);
	free(id2);
	free(map);
}

static void test_deterministic(void)
{
	static const u8 ip10_0_0_1[16] = { 10, 0, 0, 1 };
	const u32 n = 100, size = 65537;
	u64 id[100], ident;
	u16 *a, *b;
	u32 i;

	for (i = 0; i < n; i++)
		id[i] = ident_of(i);
	a = build(id, NULL, n, size);
	b = build(id, NULL, n, size);
	ok(a && b && !memcmp(a, b, size * sizeof(*a)),
	   "same input twice gives the same table");
	/* Pinned values: a change here would desync nodes and versions. */
	ident = kpx_be_ident(ip10_0_0_1, htons(80));
	ok(ident == PIN_IDENT, "identity of 10.0.0.1:80 is pinned (%#llx)",
	   (unsigned long long)ident);
	ok(a && a[0] == PIN_SLOT0 && a[65536] == PIN_SLOTN,
	   "table slots pinned (%u, %u)", a ? a[0] : 0, a ? a[65536] : 0);
	free(a);
	free(b);
}

static void test_weights(void)
{
	u64 id[3] = { ident_of(1), ident_of(2), ident_of(3) };
	u32 w[3] = { 1, 2, 3 }, cnt[3] = { 0 }, i;
	u16 *t;
	const u32 size = 60013;

	t = build(id, w, 3, size);
	ok(t != NULL, "weighted build");
	if (!t)
		return;
	for (i = 0; i < size; i++)
		cnt[t[i]]++;
	ok(abs((int)cnt[1] - 2 * (int)cnt[0]) <= 3 &&
	   abs((int)cnt[2] - 3 * (int)cnt[0]) <= 3,
	   "weights 1:2:3 give %u:%u:%u", cnt[0], cnt[1], cnt[2]);
	free(t);
}

static void test_errors(void)
{
	u64 id[2] = { 1, 2 };
	u16 t[251];
	char s[64];

	ok(kpx_mh_build(t, 250, id, NULL, 2, s) == -EINVAL, "non-prime size");
	ok(kpx_mh_build(t, 251, id, NULL, 0, s) == -EINVAL, "no backend");
	ok(kpx_is_prime(65537) && kpx_is_prime(251) && !kpx_is_prime(65535) &&
	   kpx_is_prime(1048573), "primality");
}

static void test_sizes(void)
{
	static const u32 n[] = { 1, 2, 3, 10, 11, 100, 164, 655, 1000 };
	u32 i, bad = 0;

	for (i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		u32 m = kpx_mh_size_for(n[i], 65537);

		if (!kpx_is_prime(m) || (m <= 100 * n[i] && m != 65537) ||
		    m < 251 || m > 65537)
			bad++;
	}
	ok(!bad, "size_for: a prime > 100 n, >= 251, <= the largest size");
	ok(kpx_mh_size_for(1, 65537) == 251 &&
	   kpx_mh_size_for(3, 65537) == 509 &&
	   kpx_mh_size_for(100, 65537) == 16381 &&
	   kpx_mh_size_for(1000, 65537) == 65537 &&
	   kpx_mh_size_for(1000, 1048573) == 131071 &&
	   kpx_mh_size_for(3, 251) == 251,
	   "size_for: 1 -> 251, 3 -> 509, 100 -> 16381, 1000 -> the cap");
	ok(kpx_mh_size_for(99, 65537) == 16381 &&
	   kpx_mh_size_for(101, 65537) == 16381 &&
	   kpx_mh_size_for(164, 65537) == 32749 &&
	   kpx_mh_size_for(41, 65537) == 8191 &&
	   kpx_mh_size_for(20, 65537) == 2039 &&
	   kpx_mh_size_for(99, 8191) == 8191,
	   "size_for is a function of the count and the largest size only");
}

static void test_scaled_disruption(void)
{
	const u32 n = 10, size = kpx_mh_size_for(n, 65537);
	u64 id[10], id2[9];
	u32 i, moved = 0, cnt[10] = { 0 }, lo = ~0U, hi = 0;
	u16 *t1, *t2;

	for (i = 0; i < n; i++) {
		id[i] = ident_of(i);
		if (i)
			id2[i - 1] = id[i];
	}
	t1 = build(id, NULL, n, size);
	t2 = build(id2, NULL, n - 1, kpx_mh_size_for(n - 1, 65537));
	ok(t1 && t2 && size == 1021, "10 backends: table of %u slots", size);
	if (!t1 || !t2)
		return;
	for (i = 0; i < size; i++) {
		cnt[t1[i]]++;
		if (t1[i] && t1[i] - 1 != t2[i])
			moved++;
	}
	for (i = 0; i < n; i++) {
		lo = cnt[i] < lo ? cnt[i] : lo;
		hi = cnt[i] > hi ? cnt[i] : hi;
	}
	ok(hi - lo <= 1, "10 backends in 1021 slots: shares %u..%u", lo, hi);
	ok(moved <= size / 25,
	   "removing 1 of 10 keeps the size and moves %u of %u others' slots",
	   moved, size);
	free(t1);
	free(t2);
}

int main(void)
{
	test_share(100, 65537);
	test_share(1000, 131071);
	test_share(4, 251);
	test_remove_one();
	test_deterministic();
	test_weights();
	test_errors();
	test_sizes();
	test_scaled_disruption();
	return tap_done();
}
