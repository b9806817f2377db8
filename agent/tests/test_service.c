// SPDX-License-Identifier: GPL-2.0-only
/*
 * service.c: key order, backend order, same_config, normalize, str.  TAP.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "base/service.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

static void test_key_cmp(void)
{
	struct kpx_service a = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.2", 80);
	struct kpx_service b = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.10", 80);
	struct kpx_service c = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.2", 443);
	struct kpx_service u = fx_frontend(AF_INET, IPPROTO_UDP, "10.0.0.1", 1);
	struct kpx_service s6 = fx_frontend(AF_INET6, IPPROTO_TCP, "::1", 1);
	struct kpx_service a2 = a;

	ok(kpx_service_key_cmp(&a, &b) < 0 && kpx_service_key_cmp(&b, &a) > 0,
	   "10.96.0.2 sorts before 10.96.0.10 (network byte order)");
	ok(kpx_service_key_cmp(&a, &c) < 0, "port 80 before 443 on same VIP");
	ok(kpx_service_key_cmp(&b, &u) < 0, "tcp (6) before udp (17)");
	ok(kpx_service_key_cmp(&u, &s6) < 0, "AF_INET before AF_INET6");
	a2.flags = 1;
	a2.conns = 99;
	a2.nbackends = 0;
	/* Garbage past the IPv4 VIP is not part of the key. */
	memset((char *)&a2.addr + 4, 0x5a, 12);
	ok(kpx_service_key_cmp(&a, &a2) == 0,
	   "flags, counters and bytes past the v4 VIP are not in the key");
}

static void test_backend_cmp(void)
{
	struct kpx_backend x = fx_backend(AF_INET, "10.0.0.9", 8080, 1);
	struct kpx_backend y = fx_backend(AF_INET, "10.0.0.10", 80, 1);
	struct kpx_backend z = fx_backend(AF_INET, "10.0.0.9", 9090, 7);
	struct kpx_backend x2 = x;

	x2.weight = 3;
	x2.conns = 5;
	ok(kpx_backend_cmp(&x, &y) < 0, "10.0.0.9 before 10.0.0.10");
	ok(kpx_backend_cmp(&x, &z) < 0, "same addr: port 8080 before 9090");
	ok(kpx_backend_cmp(&x, &x2) == 0, "weight and conns not compared");
}

static void test_same_config(void)
{
	struct kpx_service a = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.1", 80);
	struct kpx_service b = a;
	struct kpx_backend va[2] = {
		fx_backend(AF_INET, "10.1.0.1", 80, 1), fx_backend(AF_INET, "10.1.0.2", 80, 2),
	};
	struct kpx_backend vb[2];

	memcpy(vb, va, sizeof(va));
	a.backends = va;
	a.nbackends = 2;
	b.backends = vb;
	b.nbackends = 2;
	vb[0].conns = 100;
	b.conns = 100;
	b.rejects = 3;
	ok(kpx_service_same_config(&a, &b), "counters ignored");
	vb[1].weight = 3;
	ok(!kpx_service_same_config(&a, &b), "weight differs");
	vb[1].weight = 2;
	vb[1].port = 81;
	ok(!kpx_service_same_config(&a, &b), "backend port differs");
	vb[1].port = 80;
	b.nbackends = 1;
	ok(!kpx_service_same_config(&a, &b), "backend count differs");
	b.nbackends = 2;
	b.flags = 1;
	ok(!kpx_service_same_config(&a, &b), "flags differ");
	b.flags = 0;
	inet_pton(AF_INET, "10.1.0.3", &vb[1].addr.v4);
	ok(!kpx_service_same_config(&a, &b), "backend address differs");
}

static void test_normalize_v6(void)
{
	struct kpx_service s = fx_frontend(AF_INET6, IPPROTO_UDP, "fd00::a", 53);
	struct kpx_backend *v = calloc(4, sizeof(*v));
	char buf[INET6_ADDRSTRLEN];

	v[0] = fx_backend(AF_INET6, "fd00::20", 53, 0);
	v[1] = fx_backend(AF_INET6, "fd00::3", 53, 4);
	v[2] = fx_backend(AF_INET6, "fd00::20", 53, 9);
	v[3] = fx_backend(AF_INET6, "fd00::3", 5353, 1);
	s.backends = v;
	s.nbackends = 4;
	kpx_service_normalize(&s, 16);
	ok(s.nbackends == 3, "v6 duplicate removed (3 left, got %zu)",
	   s.nbackends);
	inet_ntop(AF_INET6, &s.backends[0].addr, buf, sizeof(buf));
	ok(!strcmp(buf, "fd00::3") && s.backends[0].port == 53 &&
	   s.backends[1].port == 5353 && s.backends[0].weight == 4,
	   "fd00::3 ports 53, 5353 first");
	inet_ntop(AF_INET6, &s.backends[2].addr, buf, sizeof(buf));
	ok(!strcmp(buf, "fd00::20") && s.backends[2].weight == 9,
	   "fd00::20 last, duplicate kept with the higher weight 9");
	kpx_service_free(&s);
	ok(s.backends == NULL && s.nbackends == 0, "free clears the array");
	kpx_service_free(&s);	/* idempotent */
}

static void test_normalize_weight0(void)
{
	struct kpx_service s = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.1", 80);
	struct kpx_backend v[1] = { fx_backend(AF_INET, "10.1.0.1", 80, 0) };

	s.backends = v;
	s.nbackends = 1;
	kpx_service_normalize(&s, 4);
	ok(s.backends[0].weight == 1, "weight 0 becomes the default 1");
}

static void test_str(void)
{
	struct kpx_service a = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.10", 80);
	struct kpx_service b = fx_frontend(AF_INET6, IPPROTO_UDP, "fd00::1", 53);
	struct kpx_service c = fx_frontend(AF_INET6, IPPROTO_SCTP, "fd00::1", 9);
	char buf[KPX_SERVICE_STRLEN];

	ok(!strcmp(kpx_service_str(&a, buf, sizeof(buf)), "10.96.0.10:80/tcp"),
	   "str v4: %s", buf);
	ok(!strcmp(kpx_service_str(&b, buf, sizeof(buf)), "[fd00::1]:53/udp"),
	   "str v6: %s", buf);
	ok(!strcmp(kpx_service_str(&c, buf, sizeof(buf)), "[fd00::1]:9/sctp"),
	   "str sctp: %s", buf);
}

int main(void)
{
	printf("TAP version 13\n");
	test_key_cmp();
	test_backend_cmp();
	test_same_config();
	test_normalize_v6();
	test_normalize_weight0();
	test_str();
	return tap_done();
}
