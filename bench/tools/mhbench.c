// SPDX-License-Identifier: GPL-2.0-only
/*
 * mhbench: the Maglev memory benchmark's tool (bench/mh/run.sh).  Runs only
 * in the kpx test VM, in the benchmark's network namespace.
 *
 *   mhbench set N MIN MAX SHARE [MH_SIZE]
 *	one genetlink KPX_CMD_SET_SERVICE per TCP frontend 10.96.0.0 + i,
 *	port 80, i = 0..N-1, scheduler "mh" (largest table MH_SIZE, default
 *	the module's 65537).  Frontend i belongs to Service s = i / SHARE
 *	(SHARE frontends per Service, as a Service's ClusterIP, NodePort and
 *	load balancer frontends): each Service has MIN + s % (MAX - MIN + 1)
 *	backends of its own, 10.0.0.1 + s * MAX + b, port 8080, weight 1.
 *	Prints one JSON object: SETs made and failed, total wall time, and the
 *	wall time of one SET (µs: mean, p50, p99, max).
 *   mhbench flush
 *	KPX_CMD_FLUSH: every frontend of the namespace goes.
 */
#include <arpa/inet.h>
#include <errno.h>
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

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	(void)who;
	*(int *)arg = e->error;
	return NL_STOP;
}

static struct nl_sock *kpx_connect(int *fam, int *err)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk || genl_connect(sk)) {
		fprintf(stderr, "mhbench: genl_connect failed\n");
		return NULL;
	}
	*fam = genl_ctrl_resolve(sk, KPX_GENL_NAME);
	if (*fam < 0) {
		fprintf(stderr, "mhbench: no kpx family\n");
		nl_socket_free(sk);
		return NULL;
	}
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, on_error, err);
	return sk;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int set_all(long n, long min, long max, long share, long mh_size)
{
	double t0, t, *lat = calloc(n ? n : 1, sizeof(*lat)), sum = 0;
	long i, fails = 0;
	struct nl_sock *sk;
	int fam, err = 0;

	if (!lat || n < 1 || min < 1 || max < min || share < 1) {
		fprintf(stderr, "mhbench: bad arguments\n");
		return 2;
	}
	sk = kpx_connect(&fam, &err);
	if (!sk)
		return 1;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		struct nl_msg *m = nlmsg_alloc_size(1 << 16);
		long s = i / share, nb = min + s % (max - min + 1), b;
		uint32_t vip = htonl(0x0a600000u + (uint32_t)i);
		struct nlattr *svc, *list;
		int rc;

		if (!m) {
			fprintf(stderr, "mhbench: out of memory\n");
			return 1;
		}
		svc = kpx_set_begin(m, fam, IPPROTO_TCP, vip, 80);
		nla_put_string(m, KPX_SVC_A_SCHEDULER, "mh");
		if (mh_size)
			nla_put_u32(m, KPX_SVC_A_MH_SIZE, (uint32_t)mh_size);
		list = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		for (b = 0; b < nb; b++) {
			uint32_t a = htonl(0x0a000001u + (uint32_t)(s * max + b));

			kpx_set_put_be(m, a, 8080);
		}
		nla_nest_end(m, list);
		if (!svc || nla_nest_end(m, svc) < 0) {
			fprintf(stderr, "mhbench: message too big\n");
			return 1;
		}
		err = 0;
		t = now_us();
		rc = nl_send_sync(sk, m);
		lat[i] = now_us() - t;
		sum += lat[i];
		if (rc < 0 || err) {
			if (!fails)
				fprintf(stderr, "mhbench: SET %ld: %s\n", i,
					strerror(err ? -err : EIO));
			fails++;
		}
	}
	t = now_us() - t0;
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("{\"sets\": %ld, \"failed\": %ld, \"ms\": %.1f, \"set_us\": "
	       "{\"mean\": %.1f, \"p50\": %.1f, \"p99\": %.1f, \"max\": %.1f}}\n",
	       n, fails, t / 1e3, sum / n, lat[n / 2], lat[n * 99 / 100],
	       lat[n - 1]);
	free(lat);
	nl_socket_free(sk);
	return fails != 0;
}

static int flush(void)
{
	struct nl_sock *sk;
	struct nl_msg *m;
	int fam, err = 0, rc;

	sk = kpx_connect(&fam, &err);
	if (!sk)
		return 1;
	m = nlmsg_alloc();
	if (!m)
		return 1;
	genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, fam, 0, 0, KPX_CMD_FLUSH,
		    KPX_GENL_VERSION);
	rc = nl_send_sync(sk, m);
	nl_socket_free(sk);
	if (rc < 0 || err) {
		fprintf(stderr, "mhbench: flush failed\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	kpx_require_guest("mhbench");
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "set"))
		return set_all(atol(argv[2]), atol(argv[3]), atol(argv[4]),
			       atol(argv[5]), argc == 7 ? atol(argv[6]) : 0);
	if (argc == 2 && !strcmp(argv[1], "flush"))
		return flush();
	fprintf(stderr, "usage: mhbench set N MIN MAX SHARE [MH_SIZE] | flush\n");
	return 2;
}
