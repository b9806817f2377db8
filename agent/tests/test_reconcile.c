// SPDX-License-Identifier: GPL-2.0-only
/*
 * diff(), the one diff of full and partial syncs: desired vs actual
 * frontends -> SET/DEL ops, at every key (a full sync's keys,
 * kpx_reconcile_keys()) or at some (a partial sync's).  TAP output.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "sync/reconcile.h"
#include "base/service.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

/* A backend "a.b.c.d:port@weight" with @conns read back. */
static struct kpx_backend be4(const char *ip, uint16_t port, uint32_t weight,
			      uint64_t conns)
{
	struct kpx_backend b = fx_backend(AF_INET, ip, port, weight);

	b.conns = conns;
	return b;
}

static void free_all(struct kpx_service *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kpx_service_free(&v[i]);
}

static int svc_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* The desired state of these tests: a sorted array. */
struct desired {
	const struct kpx_service *v;
	size_t n;
};

static const struct kpx_service *in_desired(const void *src,
					    const struct kpx_service *key)
{
	const struct desired *d = src;

	return d->n ? bsearch(key, d->v, d->n, sizeof(*d->v), svc_cmp) : NULL;
}

/* A full sync's diff: kpx_reconcile() at every key of @d and @a. */
static long diff(const struct kpx_service *d, size_t nd,
		 const struct kpx_service *a, size_t na, struct kpx_op **ops)
{
	struct desired src = { d, nd };
	struct kpx_service *keys;
	size_t nkeys;
	long n;

	if (kpx_reconcile_keys(d, nd, a, na, &keys, &nkeys))
		return -1;
	n = kpx_reconcile(in_desired, &src, keys, nkeys, a, na, ops);
	free(keys);
	return n;
}

/* Three frontends, sorted, normalized: the base state of most tests. */
static void base_state(struct kpx_service *v)
{
	struct kpx_backend a[] = {
		be4("10.244.1.2", 8080, 1, 0),
		be4("10.244.2.3", 8080, 1, 0),
		be4("10.244.3.4", 8080, 2, 0),
	};
	struct kpx_backend b[] = { be4("10.244.1.9", 53, 1, 0) };
	struct kpx_backend c[] = { be4("10.244.1.9", 53, 1, 0) };

	v[0] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, a, 3);
	v[1] = fx_service(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, b, 1);
	v[2] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.1", 443, c, 1);
	for (int i = 0; i < 3; i++)
		kpx_service_normalize(&v[i], 4);
	qsort(v, 3, sizeof(*v), svc_cmp);
}

/* Desired and actual, each the base state, and the changes between. */
struct fx {
	struct kpx_service d[3], a[3];
	struct kpx_op *ops;
	long n;
};

static void fx_init(struct fx *f)
{
	base_state(f->d);
	base_state(f->a);
	f->ops = NULL;
	f->n = 0;
}

/* Frees the ops, the @nd desired frontends left and the three actual. */
static void fx_free(struct fx *f, size_t nd)
{
	free(f->ops);
	free_all(f->d, nd);
	free_all(f->a, 3);
}

static void test_identical(void)
{
	struct fx f;

	fx_init(&f);
	f.n = diff(f.d, 3, f.a, 3, &f.ops);
	ok(f.n == 0, "identical states give 0 ops (got %ld)", f.n);
	fx_free(&f, 3);
}

static void test_empty(void)
{
	struct kpx_service a[3];
	struct kpx_op *ops;
	long n;

	n = diff(NULL, 0, NULL, 0, &ops);
	ok(n == 0, "empty vs empty gives 0 ops");
	free(ops);

	base_state(a);
	n = diff(NULL, 0, a, 3, &ops);
	ok(n == 3 && ops[0].type == KPX_OP_DEL && ops[0].service == &a[0] &&
	   ops[1].type == KPX_OP_DEL && ops[1].service == &a[1] &&
	   ops[2].type == KPX_OP_DEL && ops[2].service == &a[2],
	   "nothing desired deletes all 3 in key order");
	free(ops);

	n = diff(a, 3, NULL, 0, &ops);
	ok(n == 3 && ops[0].type == KPX_OP_SET && ops[0].service == &a[0] &&
	   ops[2].type == KPX_OP_SET && ops[2].service == &a[2],
	   "nothing present sets all 3 in key order");
	free(ops);
	free_all(a, 3);
}

static int find_port(const struct kpx_service *v, size_t n, uint16_t port,
		     uint8_t proto)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].port == port && v[i].protocol == proto)
			return (int)i;
	return -1;
}

static void test_backend_removed(void)
{
	struct fx f;
	int k;

	fx_init(&f);
	k = find_port(f.d, 3, 80, IPPROTO_TCP);
	/* Drop the middle backend 10.244.2.3. */
	f.d[k].backends[1] = f.d[k].backends[2];
	f.d[k].nbackends = 2;
	f.n = diff(f.d, 3, f.a, 3, &f.ops);
	ok(f.n == 1, "one backend removed gives exactly one op (got %ld)", f.n);
	ok(f.n >= 1 && f.ops[0].type == KPX_OP_SET && f.ops[0].service == &f.d[k],
	   "the op is a SET of the desired frontend");
	ok(f.n >= 1 && f.ops[0].service->nbackends == 2 &&
	   f.ops[0].service->backends[0].port == 8080 &&
	   ntohl(f.ops[0].service->backends[0].addr.v4.s_addr) == 0x0af40102 &&
	   ntohl(f.ops[0].service->backends[1].addr.v4.s_addr) == 0x0af40304 &&
	   f.ops[0].service->backends[1].weight == 2,
	   "the SET carries the new set 10.244.1.2, 10.244.3.4@2");
	fx_free(&f, 3);
}

static void test_frontend_gone(void)
{
	struct fx f;
	int k;

	fx_init(&f);
	k = find_port(f.d, 3, 53, IPPROTO_UDP);
	kpx_service_free(&f.d[k]);
	memmove(&f.d[k], &f.d[k + 1], (size_t)(2 - k) * sizeof(*f.d));
	f.n = diff(f.d, 2, f.a, 3, &f.ops);
	ok(f.n == 1 && f.ops[0].type == KPX_OP_DEL,
	   "a frontend gone gives one DEL (got %ld ops)", f.n);
	ok(f.n == 1 && f.ops[0].service == &f.a[find_port(f.a, 3, 53, IPPROTO_UDP)] &&
	   f.ops[0].service->protocol == IPPROTO_UDP,
	   "the DEL points at the actual udp/53 frontend");
	fx_free(&f, 2);
}

static void test_weight_change(void)
{
	struct fx f;
	int k;

	fx_init(&f);
	k = find_port(f.d, 3, 80, IPPROTO_TCP);
	f.d[k].backends[0].weight = 5;
	f.n = diff(f.d, 3, f.a, 3, &f.ops);
	ok(f.n == 1 && f.ops[0].type == KPX_OP_SET && f.ops[0].service == &f.d[k] &&
	   f.ops[0].service->backends[0].weight == 5,
	   "weight change gives one SET with weight 5");
	fx_free(&f, 3);
}

static void test_flags_change(void)
{
	struct fx f;

	fx_init(&f);
	f.d[2].flags = 1;
	f.n = diff(f.d, 3, f.a, 3, &f.ops);
	ok(f.n == 1 && f.ops[0].type == KPX_OP_SET && f.ops[0].service == &f.d[2],
	   "flags change gives one SET");
	fx_free(&f, 3);
}

static void test_counters_only(void)
{
	struct fx f;

	fx_init(&f);
	for (int i = 0; i < 3; i++) {
		f.a[i].conns = 1000 + (uint64_t)i;
		f.a[i].rejects = 7;
		for (size_t j = 0; j < f.a[i].nbackends; j++)
			f.a[i].backends[j].conns = 42 + j;
	}
	f.n = diff(f.d, 3, f.a, 3, &f.ops);
	ok(f.n == 0, "counters (conns, rejects) differing only give no op "
	   "(got %ld)", f.n);
	fx_free(&f, 3);
}

static void test_unsorted_backends(void)
{
	struct fx f;
	struct kpx_backend shuffled[] = {
		be4("10.244.3.4", 8080, 2, 0),
		be4("10.244.1.2", 8080, 1, 0),
		be4("10.244.3.4", 8080, 1, 0),	/* duplicate, lower weight */
		be4("10.244.2.3", 8080, 1, 0),
	};
	int k;

	fx_init(&f);
	k = find_port(f.d, 3, 80, IPPROTO_TCP);
	kpx_service_free(&f.d[k]);
	f.d[k] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, shuffled, 4);
	/* Garbage past the IPv4 address must not matter once normalized. */
	memset((char *)&f.d[k].backends[1].addr + 4, 0xab, 12);
	kpx_service_normalize(&f.d[k], 4);
	ok(f.d[k].nbackends == 3 &&
	   ntohl(f.d[k].backends[0].addr.v4.s_addr) == 0x0af40102 &&
	   ntohl(f.d[k].backends[1].addr.v4.s_addr) == 0x0af40203 &&
	   ntohl(f.d[k].backends[2].addr.v4.s_addr) == 0x0af40304 &&
	   f.d[k].backends[2].weight == 2,
	   "unsorted input normalized to 3 sorted backends, dup kept at weight 2");
	f.n = diff(f.d, 3, f.a, 3, &f.ops);
	ok(f.n == 0, "normalized unsorted input gives 0 ops (got %ld)", f.n);
	fx_free(&f, 3);
}

static void test_mixed(void)
{
	struct kpx_backend b4[] = { be4("10.244.1.2", 80, 1, 0) };
	struct kpx_backend b6[1];
	struct kpx_service d[3], a[3];
	struct kpx_op *ops;
	long n;

	memset(b6, 0, sizeof(b6));
	inet_pton(AF_INET6, "fd00:10:244::2", &b6[0].addr.v6);
	b6[0].port = 80;
	b6[0].weight = 1;

	/* desired: v4 tcp/80 (same), v6 tcp/80 (new); actual: v4 udp/53 (stale) */
	d[0] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.20", 80, b4, 1);
	d[1] = fx_service(AF_INET6, IPPROTO_TCP, "fd00:96::20", 80, b6, 1);
	a[0] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.20", 80, b4, 1);
	a[1] = fx_service(AF_INET, IPPROTO_UDP, "10.96.0.20", 53, b4, 1);
	qsort(d, 2, sizeof(*d), svc_cmp);
	qsort(a, 2, sizeof(*a), svc_cmp);
	n = diff(d, 2, a, 2, &ops);
	ok(n == 2, "mixed change gives 2 ops (got %ld)", n);
	ok(n == 2 && ops[0].type == KPX_OP_DEL &&
	   ops[0].service->protocol == IPPROTO_UDP &&
	   ops[1].type == KPX_OP_SET && ops[1].service->family == AF_INET6,
	   "ops in key order: DEL udp v4 before SET v6");
	free(ops);
	free_all(d, 2);
	free_all(a, 2);
}

/* A partial sync's diff, at some keys only, and the keys of a full one. */
static void test_keys(void)
{
	struct fx f;
	struct kpx_service *keys;
	struct desired src = { f.d, 3 };
	size_t nkeys;
	int k;

	fx_init(&f);
	k = find_port(f.d, 3, 80, IPPROTO_TCP);
	f.d[k].backends[0].weight = 5;
	f.d[2].flags = 1;
	f.n = kpx_reconcile(in_desired, &src, &f.d[k], 1, f.a, 3, &f.ops);
	ok(f.n == 1 && f.ops[0].type == KPX_OP_SET && f.ops[0].service == &f.d[k],
	   "at one key: only that key's change (got %ld)", f.n);
	free(f.ops);
	f.n = kpx_reconcile(in_desired, &src, NULL, 0, f.a, 3, &f.ops);
	ok(f.n == 0, "at no key: nothing (got %ld)", f.n);
	ok(!kpx_reconcile_keys(f.d, 2, &f.a[1], 2, &keys, &nkeys) && nkeys == 3 &&
	   !kpx_service_key_cmp(&keys[0], &f.d[0]) && !kpx_service_key_cmp(&keys[2], &f.a[2]) &&
	   keys[1].nbackends == 0 && keys[1].backends == NULL,
	   "the keys of two overlapping sets: 3, once each, sorted, key fields only");
	free(keys);
	ok(!kpx_reconcile_keys(NULL, 0, NULL, 0, &keys, &nkeys) && nkeys == 0 && !keys,
	   "no keys: none");
	fx_free(&f, 3);
}

int main(void)
{
	printf("TAP version 13\n");
	test_identical();
	test_empty();
	test_backend_removed();
	test_frontend_gone();
	test_weight_change();
	test_flags_change();
	test_counters_only();
	test_unsorted_backends();
	test_mixed();
	test_keys();
	return tap_done();
}
