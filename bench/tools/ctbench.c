// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctbench: the conntrack-cleanup benchmark's tool (bench/ct/run.sh).  Runs
 * only in the kpx test VM, in the benchmark's network namespace.
 *
 *   ctbench fill N MATCH
 *	injects N unreplied UDP conntrack entries through ctnetlink
 *	(libnetfilter_conntrack, NFCT_Q_CREATE sent without waiting for each
 *	ack, timeout 1 h): every MATCH-th one goes to a frontend of "ctbench
 *	sync" (10.96.X.Y:53), half of those DNATed to its backend
 *	10.244.0.2:53, the other half untranslated; the rest go to
 *	172.16.0.0/12 addresses no frontend has.  The caller counts the
 *	entries made (nf_conntrack_count).
 *   ctbench sync N STEP
 *	one genetlink SET per UDP frontend 10.96.(i / 250).(i % 250 + 1):53,
 *	i = 0..N-1, with backends 10.244.0.1:53 and 10.244.0.2:53 (STEP
 *	"create"), or only 10.244.0.1:53 (STEP "drop": every frontend loses a
 *	backend); prints the wall time of the N SETs in ms as JSON.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/kpx.h>
#include <netinet/in.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guest.h"
#include "setmsg.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fill(long n, long match)
{
	struct nfct_handle *h = nfct_open(CONNTRACK, 0);
	struct nf_conntrack *ct = nfct_new();
	long i, sent = 0, errs = 0;

	if (!h || !ct) {
		perror("ctbench: nfct_open");
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint32_t src = htonl(0x0a010000u + (uint32_t)(i / 60000));
		uint32_t dst;
		uint16_t sport = htons((uint16_t)(1024 + i % 60000));

		nfct_attr_unset(ct, ATTR_DNAT_IPV4);
		nfct_attr_unset(ct, ATTR_DNAT_PORT);
		if (match && i % match == 0) {
			long k = (i / match) % 1000;

			dst = htonl(0x0a600000u | (uint32_t)((k / 250) << 8) |
				    (uint32_t)(k % 250 + 1));
			if ((i / match) % 2) {
				nfct_set_attr_u32(ct, ATTR_DNAT_IPV4,
						  htonl(0x0af40002u));
				nfct_set_attr_u16(ct, ATTR_DNAT_PORT, htons(53));
			}
		} else {
			dst = htonl(0xac100000u + (uint32_t)(i % 1000000));
		}
		nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET);
		nfct_set_attr_u32(ct, ATTR_IPV4_SRC, src);
		nfct_set_attr_u32(ct, ATTR_IPV4_DST, dst);
		nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_UDP);
		nfct_set_attr_u16(ct, ATTR_PORT_SRC, sport);
		nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(53));
		nfct_setobjopt(ct, NFCT_SOPT_SETUP_REPLY);
		nfct_set_attr_u32(ct, ATTR_TIMEOUT, 3600);
		/* the kernel creates it in sendmsg; its ack is not read */
		if (nfct_send(h, NFCT_Q_CREATE, ct) >= 0)
			sent++;
		else if (errno != ENOBUFS && errs++ < 3)
			fprintf(stderr, "ctbench: create %ld: %s\n", i,
				strerror(errno));
	}
	printf("{\"sent\": %ld, \"errors\": %ld}\n", sent, errs);
	nfct_destroy(ct);
	nfct_close(h);
	return sent ? 0 : 1;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	(void)who;
	*(int *)arg = e->error;
	return NL_STOP;
}

static int sync_set(long n, int drop)
{
	struct nl_sock *sk = nl_socket_alloc();
	long i, fails = 0;
	double t0;
	int fam, err = 0;

	if (!sk || genl_connect(sk)) {
		fprintf(stderr, "ctbench: genl_connect failed\n");
		return 1;
	}
	fam = genl_ctrl_resolve(sk, KPX_GENL_NAME);
	if (fam < 0) {
		fprintf(stderr, "ctbench: no kpx family\n");
		return 1;
	}
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, on_error, &err);
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		struct nl_msg *m = nlmsg_alloc();
		struct nlattr *svc, *list;
		uint32_t vip = htonl(0x0a600000u | (uint32_t)((i / 250) << 8) |
				     (uint32_t)(i % 250 + 1));
		int b;

		svc = kpx_set_begin(m, fam, IPPROTO_UDP, vip, 53);
		list = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		for (b = 1; b <= (drop ? 1 : 2); b++)
			kpx_set_put_be(m, htonl(0x0af40000u + (uint32_t)b), 53);
		nla_nest_end(m, list);
		nla_nest_end(m, svc);
		err = 0;
		if (nl_send_sync(sk, m) < 0 || err)
			fails++;
	}
	printf("{\"sets\": %ld, \"failed\": %ld, \"ms\": %.1f}\n", n, fails,
	       now_ms() - t0);
	nl_socket_free(sk);
	return fails != 0;
}

int main(int argc, char **argv)
{
	kpx_require_guest("ctbench");
	if (argc == 4 && !strcmp(argv[1], "fill"))
		return fill(atol(argv[2]), atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "sync"))
		return sync_set(atol(argv[2]), !strcmp(argv[3], "drop"));
	fprintf(stderr, "usage: ctbench fill N MATCH | sync N create|drop\n");
	return 2;
}
