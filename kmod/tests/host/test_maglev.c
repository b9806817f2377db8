// SPDX-License-Identifier: GPL-2.0-only
/* Host tests of the Maglev table (maglev.c). */
#include <stdlib.h>
#include <arpa/inet.h>
#include "tap.h"
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

static u32 *build(const u64 *id, const u32 *w, u32 n, u32 size)
{
	u32 *t = malloc(size * sizeof(*t));
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
	u32 *cnt = calloc(n, sizeof(*cnt)), i, *t, lo = ~0U, hi = 0;
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
	u32 *t1, *t2, *map = calloc(n, sizeof(*map)), i, moved = 0, gone = 499;

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
	u32 *a, *b, i;

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
	u32 w[3] = { 1, 2, 3 }, *t, cnt[3] = { 0 }, i;
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
	u32 t[251];
	char s[64];

	ok(kpx_mh_build(t, 250, id, NULL, 2, s) == -EINVAL, "non-prime size");
	ok(kpx_mh_build(t, 251, id, NULL, 0, s) == -EINVAL, "no backend");
	ok(kpx_is_prime(65537) && kpx_is_prime(251) && !kpx_is_prime(65535) &&
	   kpx_is_prime(1048573), "primality");
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
	return tap_done();
}
