// SPDX-License-Identifier: GPL-2.0-only
/*
 * affbench: the affinity hash-flooding benchmark's tool (bench/aff/run.sh).
 * Runs only in the kpx test VM, in the benchmark's network namespace.
 *
 *   affbench DEV N collide|random [VIP6 [PORT]]
 *	writes N IPv6 TCP SYNs into the tun device DEV (IFF_TUN, no packet
 *	information; made by the caller), one per client address, to VIP6
 *	(default fd00:96::1) port PORT (default 80), so that each one enters
 *	PRE_ROUTING as a new connection from another client.  A tun write
 *	runs the receive path in the writer's system call, so its duration
 *	is the whole per-connection cost (conntrack, kpx's hook, NAT, the
 *	route).  Clients: "collide": kpx_aff_collide(k), k = 0..N-1, all in
 *	bucket 0 of the affinity table's former fixed-seed hash
 *	(kmod/tests/aff_collide.h); "random": the same /64 with random
 *	interface identifiers (a fixed-seed generator, the same every run).
 *	Prints one JSON object: {"sources", "n", "wall_ms" (the writes),
 *	"write_us" {"mean", "p50", "p99", "max", "first", "last" (the mean
 *	of the first and of the last eighth)}, "busy_ms" (CPU time of every
 *	CPU from /proc/stat, not idle or iowait, over the writes and 2 s
 *	after them, which takes in deferred work such as a table grow),
 *	"busy_us_per_conn"}.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"
#include "tests/aff_collide.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Busy time of every CPU so far, in USER_HZ ticks (/proc/stat "cpu"). */
static unsigned long long busy_ticks(void)
{
	unsigned long long v[10] = { 0 }, sum = 0;
	FILE *f = fopen("/proc/stat", "r");
	int i;

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			 &v[7]) != 8) {
		if (f)
			fclose(f);
		return 0;
	}
	fclose(f);
	for (i = 0; i < 8; i++)
		if (i != 3 && i != 4)	/* idle, iowait */
			sum += v[i];
	return sum;
}

static uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t csum_add(uint32_t s, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		s += (uint32_t)b[len - 1] << 8;
	return s;
}

struct pkt {
	struct ip6_hdr ip;
	struct tcphdr tcp;
} __attribute__((packed));

/* A SYN from @src (16 bytes), source port @sport, to @dst:@dport. */
static void syn(struct pkt *p, const uint8_t *src, uint16_t sport,
		const struct in6_addr *dst, uint16_t dport)
{
	uint32_t s = 0;

	memset(p, 0, sizeof(*p));
	p->ip.ip6_flow = htonl(6u << 28);
	p->ip.ip6_plen = htons(sizeof(p->tcp));
	p->ip.ip6_nxt = IPPROTO_TCP;
	p->ip.ip6_hlim = 64;
	memcpy(&p->ip.ip6_src, src, 16);
	p->ip.ip6_dst = *dst;
	p->tcp.source = htons(sport);
	p->tcp.dest = htons(dport);
	p->tcp.seq = htonl(0x10000000u + sport);
	p->tcp.doff = sizeof(p->tcp) / 4;
	p->tcp.syn = 1;
	p->tcp.window = htons(64240);
	/* pseudo header: addresses, upper-layer length, next header */
	s = csum_add(s, &p->ip.ip6_src, 32);
	s += sizeof(p->tcp) + IPPROTO_TCP;
	s = csum_add(s, &p->tcp, sizeof(p->tcp));
	p->tcp.check = htons(csum_fold(s));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double mean(const double *v, long n)
{
	double s = 0;
	long i;

	for (i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

int main(int argc, char **argv)
{
	const char *vip = argc > 4 ? argv[4] : "fd00:96::1";
	long n = argc > 2 ? atol(argv[2]) : 0, k, e;
	int port = argc > 5 ? atoi(argv[5]) : 80, fd, collide;
	unsigned long long b0, b1, rng = 0x9e3779b97f4a7c15ULL;
	double *lat, t0, wall, first, last;
	struct in6_addr dst;
	struct ifreq ifr;
	struct pkt p;

	kpx_require_guest("affbench");
	if (argc < 4 || argc > 6 || n < 8 ||
	    (strcmp(argv[3], "collide") && strcmp(argv[3], "random")) ||
	    inet_pton(AF_INET6, vip, &dst) != 1) {
		fprintf(stderr, "usage: affbench DEV N collide|random [VIP6 [PORT]]\n");
		return 2;
	}
	collide = !strcmp(argv[3], "collide");
	lat = calloc(n, sizeof(*lat));
	fd = open("/dev/net/tun", O_RDWR);
	if (!lat || fd < 0) {
		perror("affbench: /dev/net/tun");
		return 1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		perror("affbench: TUNSETIFF");
		return 1;
	}
	b0 = busy_ticks();
	t0 = now_us();
	for (k = 0; k < n; k++) {
		uint8_t src[16];
		double t;

		kpx_aff_collide(src, (u32)k);
		if (!collide) {
			/* xorshift64*: the same sequence every run */
			rng ^= rng >> 12;
			rng ^= rng << 25;
			rng ^= rng >> 27;
			e = (long)(rng * 0x2545f4914f6cdd1dULL);
			memcpy(src + 8, &e, 8);
		}
		syn(&p, src, (uint16_t)(20000 + k % 40000), &dst, (uint16_t)port);
		t = now_us();
		if (write(fd, &p, sizeof(p)) != (ssize_t)sizeof(p)) {
			perror("affbench: write");
			return 1;
		}
		lat[k] = now_us() - t;
	}
	wall = now_us() - t0;
	sleep(2);
	b1 = busy_ticks();
	first = mean(lat, n / 8);
	last = mean(lat + n - n / 8, n / 8);
	t0 = mean(lat, n);
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("{\"sources\": \"%s\", \"n\": %ld, \"wall_ms\": %.1f, "
	       "\"write_us\": {\"mean\": %.2f, \"p50\": %.2f, \"p99\": %.2f, "
	       "\"max\": %.1f, \"first\": %.2f, \"last\": %.2f}, "
	       "\"busy_ms\": %.0f, \"busy_us_per_conn\": %.2f}\n", argv[3], n,
	       wall / 1e3, t0, lat[n / 2], lat[n * 99 / 100], lat[n - 1], first,
	       last, (b1 - b0) * 1e3 / sysconf(_SC_CLK_TCK),
	       (b1 - b0) * 1e6 / sysconf(_SC_CLK_TCK) / n);
	free(lat);
	close(fd);
	return 0;
}
