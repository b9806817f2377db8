// SPDX-License-Identifier: GPL-2.0-only
/*
 * addr.c: "ADDR:PORT[@WEIGHT]", "[v6]:PORT", protocol names.  TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "base/addr.h"
#include "base/service.h"

#include "lib/tap.h"

static void test_hostport_ok(void)
{
	unsigned char addr[16], zero[12] = { 0 };
	char buf[KPX_HOSTPORT_STRLEN];
	uint16_t port = 0;
	int fam = 0;

	memset(addr, 0xff, sizeof(addr));
	ok(kpx_hostport_parse("10.96.0.10:80", &fam, addr, &port) == 0 &&
	   fam == AF_INET && port == 80 &&
	   addr[0] == 10 && addr[1] == 96 && addr[2] == 0 && addr[3] == 10 &&
	   !memcmp(addr + 4, zero, 12),
	   "10.96.0.10:80 -> AF_INET, port 80, bytes 10.96.0.10, rest zeroed");
	ok(kpx_hostport_parse("[fd00::1]:65535", &fam, addr, &port) == 0 &&
	   fam == AF_INET6 && port == 65535 && addr[0] == 0xfd &&
	   addr[15] == 1, "[fd00::1]:65535 -> AF_INET6, port 65535");
	ok(kpx_hostport_parse("[::ffff:10.0.0.1]:1", &fam, addr, &port) == 0 &&
	   fam == AF_INET6 && port == 1 && addr[10] == 0xff && addr[12] == 10,
	   "v4-mapped v6 in brackets is AF_INET6");
	ok(!strcmp(kpx_hostport_str(AF_INET6, addr, 8080, buf, sizeof(buf)),
		   "[::ffff:10.0.0.1]:8080"), "format v6: %s", buf);
	kpx_hostport_parse("192.168.1.254:443", &fam, addr, &port);
	ok(!strcmp(kpx_hostport_str(fam, addr, port, buf, sizeof(buf)),
		   "192.168.1.254:443"), "round trip v4: %s", buf);
	ok(!strcmp(kpx_hostport_str(AF_UNIX, addr, 1, buf, sizeof(buf)), "?"),
	   "format unknown family gives ?");
}

static void test_hostport_bad(void)
{
	static const char *const bad[] = {
		"", "10.0.0.1", "10.0.0.1:", ":80", "10.0.0.1:0",
		"10.0.0.1:65536", "10.0.0.1:80x", "10.0.0.1:+80",
		"10.0.0.1:-1", " 10.0.0.1:80", "10.0.0.1:80 ",
		"10.0.0.256:80", "10.0.0:80", "fd00::1:80", "[fd00::1]80",
		"[fd00::1]:", "[fd00::1", "[]:80", "[10.0.0.1]:80",
		"[fd00::1%eth0]:80", "[fd00::1]:99999999999", "host:80",
		"10.0.0.1:80:80", "10.0.0.1:0080000",
	};
	unsigned char addr[16];
	uint16_t port = 7;
	int fam = 99;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = kpx_hostport_parse(bad[i], &fam, addr, &port);

		ok(r == -EINVAL, "rejects '%s' with -EINVAL (got %d)", bad[i], r);
	}
	ok(fam == 99 && port == 7, "nothing written on failure");
}

static void test_backend(void)
{
	struct kpx_backend b;
	int fam;
	char ip[INET6_ADDRSTRLEN];

	ok(kpx_backend_parse("10.244.1.2:8080", &fam, &b) == 0 &&
	   fam == AF_INET && b.port == 8080 && b.weight == 1 && b.conns == 0,
	   "backend without weight gets weight 1");
	inet_ntop(AF_INET, &b.addr, ip, sizeof(ip));
	ok(!strcmp(ip, "10.244.1.2"), "backend address 10.244.1.2");
	ok(kpx_backend_parse("[fd00:10:244::5]:80@65535", &fam, &b) == 0 &&
	   fam == AF_INET6 && b.port == 80 && b.weight == 65535,
	   "v6 backend with weight 65535");
	ok(kpx_backend_parse("10.0.0.1:80@7", &fam, &b) == 0 && b.weight == 7,
	   "weight 7");
	ok(kpx_backend_parse("10.0.0.1:80@0", &fam, &b) == -EINVAL,
	   "weight 0 rejected");
	ok(kpx_backend_parse("10.0.0.1:80@65536", &fam, &b) == -EINVAL,
	   "weight 65536 rejected");
	ok(kpx_backend_parse("10.0.0.1:80@", &fam, &b) == -EINVAL,
	   "empty weight rejected");
	ok(kpx_backend_parse("10.0.0.1:80@1x", &fam, &b) == -EINVAL,
	   "weight 1x rejected");
	ok(kpx_backend_parse("10.0.0.1:80@1@2", &fam, &b) == -EINVAL,
	   "two @ rejected");
	ok(kpx_backend_parse("10.0.0.1@3", &fam, &b) == -EINVAL,
	   "missing port rejected");
	ok(kpx_backend_parse("fd00::1:80@3", &fam, &b) == -EINVAL,
	   "unbracketed v6 rejected");
}

static void test_proto(void)
{
	uint8_t p = 0;

	ok(kpx_proto_parse("tcp", &p) == 0 && p == IPPROTO_TCP, "tcp");
	ok(kpx_proto_parse("UDP", &p) == 0 && p == IPPROTO_UDP, "UDP");
	ok(kpx_proto_parse("sctp", &p) == 0 && p == IPPROTO_SCTP, "sctp");
	p = 0;
	ok(kpx_proto_parse("icmp", &p) == -EINVAL && p == 0, "icmp rejected");
	ok(kpx_proto_parse("", &p) == -EINVAL, "empty rejected");
	ok(!strcmp(kpx_proto_name(IPPROTO_SCTP), "sctp") &&
	   !strcmp(kpx_proto_name(IPPROTO_TCP), "tcp") &&
	   !strcmp(kpx_proto_name(1), "proto-1"), "protocol names");
}

int main(void)
{
	printf("TAP version 13\n");
	test_hostport_ok();
	test_hostport_bad();
	test_backend();
	test_proto();
	return tap_done();
}
