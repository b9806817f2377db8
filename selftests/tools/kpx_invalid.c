// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_invalid: inject a reply segment that conntrack marks INVALID into a
 * live TCP connection through a Service, and report what the client got.
 *
 *     kpx_invalid [-t MS] [-n ADDR=NETNS]... DEST:PORT
 *
 * Run in the client's network namespace.  It connects to DEST:PORT (IPv4),
 * reads kpx_echo's greeting "ID LOCAL peer=PEER" (LOCAL: the backend's own
 * address after DNAT, PEER: the source it saw, the node's when the
 * connection was masqueraded) and learns, from the greeting's segment as a packet
 * socket saw it arrive, the backend's next sequence number and what it
 * acknowledged.  It then enters the network namespace given for the
 * backend's address (-n ADDR=NETNS, a path such as /run/netns/NAME) and
 * sends, from a raw socket there, LOCAL to PEER, a copy of the backend's
 * next segment whose sequence number lies 2^30 beyond it: far above the receiver's
 * window, which conntrack marks INVALID ("SEQ is over upper bound").
 * Back in its own namespace it watches for MS ms (default 500) what
 * arrives, then sends "ping\n" on the connection and waits for its echo.
 * One line on stdout:
 *
 *     backend=ADDR:PORT sent=0|1 leaked=N rsts=N alive=0|1
 *
 * sent: 0 when netfilter dropped the segment in the sending namespace's
 * OUTPUT path (sendto() EPERM: a hostNetwork endpoint's reply dropped on
 * the node itself), 1 when it left;
 * leaked: TCP segments that reached the client with the backend's own
 * address as their source (the stray segment left untranslated); rsts: RST
 * segments the client sent to that address in answer; alive: the
 * connection still echoes.  For a connection without NAT (DEST is the
 * backend itself) "leaked" counts the stray segment delivered as sent.
 * Exit 0 when the run was made, 1 when it could not be, 2 on usage errors.
 * Needs CAP_NET_RAW and CAP_SYS_ADMIN (setns); only in the test VM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

#define MAX_NS 16
#define STRAY "stray\n"

static struct {
	struct in_addr addr;
	const char *path;
} ns_map[MAX_NS];
static int n_ns;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_v4(const char *s, struct sockaddr_in *sin)
{
	char buf[64], *colon;

	snprintf(buf, sizeof(buf), "%s", s);
	colon = strrchr(buf, ':');
	if (!colon)
		return -1;
	*colon = 0;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, buf, &sin->sin_addr) == 1 ? 0 : -1;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	return sum;
}

/* A TCP segment as seen by the packet socket (an IPv4 packet). */
struct seg {
	struct in_addr src, dst;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	size_t paylen;
};

static bool parse_seg(const uint8_t *p, size_t n, struct seg *s)
{
	const struct iphdr *ip = (const void *)p;
	const struct tcphdr *th;
	size_t ihl, thl, tot;

	if (n < sizeof(*ip) || ip->version != 4 || ip->protocol != IPPROTO_TCP)
		return false;
	ihl = ip->ihl * 4u;
	tot = ntohs(ip->tot_len);
	if (tot > n || ihl + sizeof(*th) > tot)
		return false;
	th = (const void *)(p + ihl);
	thl = th->doff * 4u;
	if (ihl + thl > tot)
		return false;
	s->src.s_addr = ip->saddr;
	s->dst.s_addr = ip->daddr;
	s->sport = ntohs(th->source);
	s->dport = ntohs(th->dest);
	s->seq = ntohl(th->seq);
	s->ack = ntohl(th->ack_seq);
	s->flags = ((const uint8_t *)th)[13];
	s->paylen = tot - ihl - thl;
	return true;
}

/* Reads one packet (up to @ms ms); 1 with @s and @out, 0 on timeout. */
static int next_seg(int pfd, int ms, struct seg *s, bool *out)
{
	uint8_t buf[2048];
	struct sockaddr_ll ll;
	socklen_t len = sizeof(ll);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recvfrom(pfd, buf, sizeof(buf), 0, (struct sockaddr *)&ll, &len);
	if (n <= 0)
		return -1;
	*out = ll.sll_pkttype == PACKET_OUTGOING;
	if (ll.sll_protocol != htons(ETH_P_IP) || !parse_seg(buf, (size_t)n, s))
		s->sport = s->dport = 0;
	return 1;
}

static int send_stray(const struct sockaddr_in *from, const struct sockaddr_in *to,
		      uint32_t seq, uint32_t ack)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct tcphdr) + sizeof(STRAY) - 1];
	struct iphdr *ip = (void *)pkt;
	struct tcphdr *th = (void *)(pkt + sizeof(*ip));
	size_t tlen = sizeof(*th) + sizeof(STRAY) - 1;
	uint32_t sum = 0;
	uint8_t pseudo[12];
	int fd, r;

	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt + sizeof(*ip) + sizeof(*th), STRAY, sizeof(STRAY) - 1);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_TCP;
	ip->tot_len = htons(sizeof(pkt));
	ip->saddr = from->sin_addr.s_addr;
	ip->daddr = to->sin_addr.s_addr;
	th->source = from->sin_port;
	th->dest = to->sin_port;
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = 5;
	th->ack = 1;
	th->psh = 1;
	th->window = htons(502);
	memcpy(pseudo, &ip->saddr, 4);
	memcpy(pseudo + 4, &ip->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP;
	pseudo[10] = (uint8_t)(tlen >> 8);
	pseudo[11] = (uint8_t)tlen;
	sum = csum_add(sum, pseudo, sizeof(pseudo));
	sum = csum_add(sum, th, tlen);
	th->check = htons(csum_fold(sum));

	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		perror("kpx_invalid: raw socket");
		return -1;
	}
	r = (int)sendto(fd, pkt, sizeof(pkt), 0, (const struct sockaddr *)to, sizeof(*to));
	if (r < 0 && errno == EPERM) {
		/* a netfilter drop at the sender's OUTPUT: the node's own reply */
		close(fd);
		return 1;
	}
	if (r < 0)
		perror("kpx_invalid: sendto");
	close(fd);
	return r < 0 ? -1 : 0;
}

static const char *ns_for(struct in_addr a)
{
	int i;

	for (i = 0; i < n_ns; i++)
		if (ns_map[i].addr.s_addr == a.s_addr)
			return ns_map[i].path;
	return NULL;
}

/*
 * Sends the stray segment from the network namespace at @path: 0, 1 when
 * netfilter dropped it on its way out (EPERM), -1 on errors.
 */
static int stray_from_ns(const char *path, const struct sockaddr_in *from,
			 const struct sockaddr_in *to, uint32_t seq, uint32_t ack)
{
	int self, other, r;

	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	other = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || other < 0 || setns(other, CLONE_NEWNET)) {
		fprintf(stderr, "kpx_invalid: cannot enter %s: %s\n", path, strerror(errno));
		return -1;
	}
	r = send_stray(from, to, seq, ack);
	if (setns(self, CLONE_NEWNET)) {
		perror("kpx_invalid: setns back");
		r = -1;
	}
	close(self);
	close(other);
	return r;
}

static void usage(void)
{
	fprintf(stderr, "usage: kpx_invalid [-t MS] [-n ADDR=NETNS]... DEST:PORT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst, local, backend, peer;
	socklen_t slen = sizeof(local);
	char line[256], addr[64], *sp;
	int c, fd, pfd, wait_ms = 500, leaked = 0, rsts = 0, alive = 0, r;
	uint32_t next_seq = 0, ack = 0;
	bool have_seq = false, out;
	const char *path;
	struct seg s;
	int64_t end;
	ssize_t n;

	kpx_require_guest("kpx_invalid");
	while ((c = getopt(argc, argv, "t:n:")) != -1) {
		switch (c) {
		case 't':
			wait_ms = atoi(optarg);
			break;
		case 'n':
			sp = strchr(optarg, '=');
			if (!sp || n_ns == MAX_NS)
				usage();
			*sp = 0;
			if (inet_pton(AF_INET, optarg, &ns_map[n_ns].addr) != 1)
				usage();
			ns_map[n_ns++].path = sp + 1;
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc || parse_v4(argv[optind], &dst))
		usage();

	/* ETH_P_ALL: only such sockets see what the namespace sends */
	pfd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (pfd < 0 || fd < 0) {
		perror("kpx_invalid: socket");
		return 1;
	}
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
	    getsockname(fd, (struct sockaddr *)&local, &slen)) {
		perror("kpx_invalid: connect");
		return 1;
	}
	n = read(fd, line, sizeof(line) - 1);
	if (n <= 0) {
		fprintf(stderr, "kpx_invalid: no greeting from %s\n", argv[optind]);
		return 1;
	}
	line[n] = 0;
	sp = strchr(line, ' ');
	if (!sp || sscanf(sp + 1, "%63s", addr) != 1 || parse_v4(addr, &backend) ||
	    !strstr(sp, " peer=") || parse_v4(strstr(sp, " peer=") + 6, &peer)) {
		fprintf(stderr, "kpx_invalid: greeting not 'ID ADDR:PORT peer=...': %s", line);
		return 1;
	}
	/* The greeting's segment, as it arrived (translated back to DEST). */
	end = now_ms() + 2000;
	while (!have_seq && now_ms() < end) {
		if (next_seg(pfd, 200, &s, &out) <= 0 || out)
			continue;
		if (s.src.s_addr == dst.sin_addr.s_addr && s.sport == ntohs(dst.sin_port) &&
		    s.dport == ntohs(local.sin_port) && s.paylen > 0) {
			next_seq = s.seq + (uint32_t)s.paylen;
			ack = s.ack;
			have_seq = true;
		}
	}
	if (!have_seq) {
		fprintf(stderr, "kpx_invalid: the greeting's segment was not seen\n");
		return 1;
	}
	path = ns_for(backend.sin_addr);
	if (!path) {
		fprintf(stderr, "kpx_invalid: no -n for the backend %s\n", inet_ntoa(backend.sin_addr));
		return 1;
	}
	r = stray_from_ns(path, &backend, &peer, next_seq + (1u << 30), ack);
	if (r < 0)
		return 1;

	end = now_ms() + wait_ms;
	while (now_ms() < end) {
		if (next_seg(pfd, (int)(end - now_ms()), &s, &out) <= 0)
			continue;
		if (!out && s.src.s_addr == backend.sin_addr.s_addr &&
		    s.sport == ntohs(backend.sin_port) && s.dport == ntohs(local.sin_port))
			leaked++;
		if (out && (s.flags & 0x04) && s.dst.s_addr == backend.sin_addr.s_addr &&
		    s.dport == ntohs(backend.sin_port))
			rsts++;
	}
	if (write(fd, "ping\n", 5) == 5) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 2000) == 1 && read(fd, line, sizeof(line)) == 5 &&
		    !memcmp(line, "ping\n", 5))
			alive = 1;
	}
	printf("backend=%s sent=%d leaked=%d rsts=%d alive=%d\n", addr, r == 0, leaked, rsts,
	       alive);
	close(fd);
	close(pfd);
	return 0;
}
