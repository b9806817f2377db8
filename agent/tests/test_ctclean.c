// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctclean.c's pure part: which conntrack entries a frontend change deletes
 * (kube-proxy's rules, as kmod/ct.c), and the tuple matcher.  TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "sync/ctclean.h"
#include "base/service.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

/* An entry: original destination vip:dport, reply source src:sport. */
static struct kpx_ct_tuple tup(int family, uint8_t proto, const char *dst,
			       uint16_t dport, const char *rsrc, uint16_t rsport)
{
	struct kpx_ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.family = family;
	t.protocol = proto;
	inet_pton(family, dst, &t.orig_dst);
	t.orig_dport = dport;
	inet_pton(family, rsrc, &t.reply_src);
	t.reply_sport = rsport;
	return t;
}

/* "kind be:port" of rule @i, e.g. "backend 10.244.1.5:53", "all", "untranslated". */
static const char *rule_str(const struct kpx_ct_plan *p, size_t i)
{
	static char buf[128];
	char a[INET6_ADDRSTRLEN];
	const struct kpx_ct_rule *r = &p->v[i];

	switch (r->kind) {
	case KPX_CT_ALL:
		return "all";
	case KPX_CT_UNTRANSLATED:
		return "untranslated";
	case KPX_CT_BACKEND:
		inet_ntop(r->family, &r->be, a, sizeof(a));
		snprintf(buf, sizeof(buf), "backend %s:%u", a, r->be_port);
		return buf;
	}
	return "?";
}

static const char *const AB[] = { "10.244.1.5:53", "10.244.1.6:53" };

static void test_changes(void)
{
	struct kpx_service u0 = fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, NULL, 0);
	struct kpx_service u1 = fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, AB, 1);
	struct kpx_service u2 = fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, AB, 2);
	struct kpx_service t1 = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 53, AB, 1);
	struct kpx_service t0 = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 53, NULL, 0);
	struct kpx_service s2 = fx_service_str(AF_INET, IPPROTO_SCTP, "10.96.0.20", 9, AB, 2);
	static const char *const A54[] = { "10.244.1.5:54" };
	struct kpx_service u1p = fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, A54, 1);
	struct kpx_ct_plan p = { 0 };
	int r;

	r = kpx_ct_plan_change(&p, &t1, &t0);
	ok(r == 0 && p.n == 0, "TCP: a removed backend deletes nothing (r=%d n=%zu)", r, p.n);
	r = kpx_ct_plan_change(&p, &t1, NULL);
	ok(r == 0 && p.n == 0, "TCP: a deleted frontend deletes nothing");
	r = kpx_ct_plan_change(&p, NULL, &t1);
	ok(r == 0 && p.n == 0, "TCP: a new frontend deletes nothing");

	r = kpx_ct_plan_change(&p, &u2, &u2);
	ok(r == 0 && p.n == 0, "UDP: an unchanged frontend deletes nothing");
	r = kpx_ct_plan_change(&p, &u1, &u2);
	ok(r == 0 && p.n == 0, "UDP: an added backend deletes nothing");

	r = kpx_ct_plan_change(&p, &u2, &u1);
	ok(r == 1 && p.n == 1 && !strcmp(rule_str(&p, 0), "backend 10.244.1.6:53"),
	   "UDP: the removed backend's entries (r=%d, %s)", r, p.n ? rule_str(&p, 0) : "-");
	ok(p.n && p.v[0].port == 53 && p.v[0].protocol == IPPROTO_UDP &&
	   p.v[0].vip.v4.s_addr == inet_addr("10.96.0.10"), "UDP: the rule names the frontend");
	kpx_ct_plan_free(&p);

	r = kpx_ct_plan_change(&p, &u2, &u0);
	ok(r == 2 && !strcmp(rule_str(&p, 0), "backend 10.244.1.5:53") &&
	   !strcmp(rule_str(&p, 1), "backend 10.244.1.6:53"),
	   "UDP: some -> zero backends: both backends' entries (r=%d)", r);
	kpx_ct_plan_free(&p);

	r = kpx_ct_plan_change(&p, &u1, &u1p);
	ok(r == 1 && !strcmp(rule_str(&p, 0), "backend 10.244.1.5:53"),
	   "UDP: a backend whose port changed counts as removed (%s)", p.n ? rule_str(&p, 0) : "-");
	kpx_ct_plan_free(&p);

	r = kpx_ct_plan_change(&p, &u0, &u1);
	ok(r == 1 && !strcmp(rule_str(&p, 0), "untranslated"),
	   "UDP: zero -> some backends: the untranslated entries (r=%d)", r);
	kpx_ct_plan_free(&p);
	r = kpx_ct_plan_change(&p, NULL, &u2);
	ok(r == 1 && !strcmp(rule_str(&p, 0), "untranslated"),
	   "UDP: a new frontend with backends: the untranslated entries");
	kpx_ct_plan_free(&p);
	r = kpx_ct_plan_change(&p, NULL, &u0);
	ok(r == 0 && p.n == 0, "UDP: a new frontend without backends deletes nothing");
	r = kpx_ct_plan_change(&p, &u0, &u0);
	ok(r == 0 && p.n == 0, "UDP: zero -> zero deletes nothing");

	r = kpx_ct_plan_change(&p, &u2, NULL);
	ok(r == 1 && !strcmp(rule_str(&p, 0), "all"), "UDP: a deleted frontend: all its entries");
	kpx_ct_plan_free(&p);
	r = kpx_ct_plan_change(&p, &s2, NULL);
	ok(r == 1 && !strcmp(rule_str(&p, 0), "all") && p.v[0].protocol == IPPROTO_SCTP,
	   "SCTP: a deleted frontend: all its entries");
	kpx_ct_plan_free(&p);

	kpx_service_free(&u0);
	kpx_service_free(&u1);
	kpx_service_free(&u2);
	kpx_service_free(&t0);
	kpx_service_free(&t1);
	kpx_service_free(&s2);
	kpx_service_free(&u1p);
}

static void test_ops(void)
{
	static const char *const C[] = { "10.244.2.7:9" };
	/* before: UDP .10:53 {A,B}, UDP .11:53 {A}, TCP .12:80 {A}, SCTP .13:9 {} */
	struct kpx_service actual[4] = {
		fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.12", 80, AB, 1),
		fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, AB, 2),
		fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.11", 53, AB, 1),
		fx_service_str(AF_INET, IPPROTO_SCTP, "10.96.0.13", 9, NULL, 0),
	};
	struct kpx_service desired[4] = {
		fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.12", 80, NULL, 0),
		fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, AB, 1),
		fx_service_str(AF_INET, IPPROTO_SCTP, "10.96.0.13", 9, C, 1),
		fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.14", 53, AB, 1),
	};
	struct kpx_op ops[5] = {
		{ KPX_OP_SET, &desired[0] },	/* TCP: nothing */
		{ KPX_OP_SET, &desired[1] },	/* B removed */
		{ KPX_OP_DEL, &actual[2] },	/* deleted: all */
		{ KPX_OP_SET, &desired[2] },	/* zero -> some: untranslated */
		{ KPX_OP_SET, &desired[3] },	/* new: untranslated, but failed */
	};
	bool applied[5] = { true, true, true, true, false };
	struct kpx_ct_plan p = { 0 };
	struct kpx_ct_tuple t;
	long r;
	int i;

	qsort(actual, 4, sizeof(actual[0]),
	      (int (*)(const void *, const void *))kpx_service_key_cmp);
	r = kpx_ct_plan_ops(&p, ops, 5, applied, actual, 4);
	ok(r == 3 && p.n == 3, "ops: 3 rules for 5 changes, one TCP and one failed (r=%ld)", r);
	ok(p.n == 3 && !strcmp(rule_str(&p, 0), "backend 10.244.1.6:53") &&
	   !strcmp(rule_str(&p, 1), "all") && !strcmp(rule_str(&p, 2), "untranslated") &&
	   p.v[1].vip.v4.s_addr == inet_addr("10.96.0.11") &&
	   p.v[2].vip.v4.s_addr == inet_addr("10.96.0.13"),
	   "ops: backend rule for .10, all for .11, untranslated for .13");

	t = tup(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, "10.244.1.6", 53);
	ok(kpx_ct_plan_match(&p, &t), "match: .10:53 translated to the removed backend");
	t = tup(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, "10.244.1.5", 53);
	ok(!kpx_ct_plan_match(&p, &t), "no match: .10:53 translated to the kept backend");
	t = tup(AF_INET, IPPROTO_UDP, "10.96.0.10", 54, "10.244.1.6", 53);
	ok(!kpx_ct_plan_match(&p, &t), "no match: another port of the VIP");
	t = tup(AF_INET, IPPROTO_TCP, "10.96.0.10", 53, "10.244.1.6", 53);
	ok(!kpx_ct_plan_match(&p, &t), "no match: TCP to the same VIP:port");
	t = tup(AF_INET, IPPROTO_UDP, "10.96.0.10", 53, "10.244.1.6", 5353);
	ok(!kpx_ct_plan_match(&p, &t), "no match: the removed backend's address, other port");
	t = tup(AF_INET, IPPROTO_UDP, "10.96.0.11", 53, "10.96.0.11", 53);
	ok(kpx_ct_plan_match(&p, &t), "match: deleted frontend, untranslated entry");
	t = tup(AF_INET, IPPROTO_UDP, "10.96.0.11", 53, "10.244.1.5", 53);
	ok(kpx_ct_plan_match(&p, &t), "match: deleted frontend, translated entry");
	t = tup(AF_INET, IPPROTO_SCTP, "10.96.0.13", 9, "10.96.0.13", 9);
	ok(kpx_ct_plan_match(&p, &t), "match: zero -> some, untranslated SCTP entry");
	t = tup(AF_INET, IPPROTO_SCTP, "10.96.0.13", 9, "10.244.2.7", 9);
	ok(!kpx_ct_plan_match(&p, &t), "no match: zero -> some, entry already to the new backend");
	t = tup(AF_INET, IPPROTO_UDP, "10.96.0.14", 53, "10.96.0.14", 53);
	ok(!kpx_ct_plan_match(&p, &t), "no match: the frontend whose change failed");
	t = tup(AF_INET6, IPPROTO_UDP, "::ffff:10.96.0.11", 53, "::1", 53);
	ok(!kpx_ct_plan_match(&p, &t), "no match: IPv6 entry vs IPv4 rules");
	kpx_ct_plan_free(&p);

	r = kpx_ct_plan_ops(&p, ops, 5, applied, NULL, 0);
	ok(r == 2 && p.n == 2 && !strcmp(rule_str(&p, 0), "untranslated") &&
	   !strcmp(rule_str(&p, 1), "untranslated"),
	   "ops without a previous state: SETs are new frontends, DELs of nothing (r=%ld)", r);
	kpx_ct_plan_free(&p);

	for (i = 0; i < 4; i++) {
		kpx_service_free(&actual[i]);
		kpx_service_free(&desired[i]);
	}
}

static void test_v6(void)
{
	static const char *const B6[] = { "[fd00:10:244:1::5]:53", "[fd00:10:244:1::6]:53" };
	struct kpx_service a = fx_service_str(AF_INET6, IPPROTO_UDP, "fd00:10:96::a", 53, B6, 2);
	struct kpx_service b = fx_service_str(AF_INET6, IPPROTO_UDP, "fd00:10:96::a", 53, B6, 1);
	struct kpx_ct_plan p = { 0 };
	struct kpx_ct_tuple t;

	ok(kpx_ct_plan_change(&p, &a, &b) == 1 && !strcmp(rule_str(&p, 0), "backend fd00:10:244:1::6:53"),
	   "IPv6: removed backend rule (%s)", p.n ? rule_str(&p, 0) : "-");
	t = tup(AF_INET6, IPPROTO_UDP, "fd00:10:96::a", 53, "fd00:10:244:1::6", 53);
	ok(kpx_ct_plan_match(&p, &t), "IPv6: match the removed backend's entry");
	t = tup(AF_INET6, IPPROTO_UDP, "fd00:10:96::a", 53, "fd00:10:244:1::5", 53);
	ok(!kpx_ct_plan_match(&p, &t), "IPv6: keep the other backend's entry");
	kpx_ct_plan_free(&p);
	kpx_service_free(&a);
	kpx_service_free(&b);
}

int main(void)
{
	test_changes();
	test_ops();
	test_v6();
	return tap_done();
}
