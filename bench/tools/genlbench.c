// SPDX-License-Identifier: GPL-2.0-only
/*
 * genlbench: the hostile-SET benchmark's tool (bench/genl/run.sh).  Runs
 * only in the kpx test VM, in the benchmark's network namespace.
 *
 *   genlbench CASE REPS
 *	sends REPS KPX_CMD_SET_SERVICE requests of CASE for the TCP frontend
 *	10.96.0.41:80 and times each from send to its ACK or error
 *	(NETLINK_CAP_ACK: the error does not echo the request):
 *	  empty106k  106,000 empty top-level KPX_A_BACKENDS (424 KB);
 *	             expected EINVAL "empty backend list"
 *	  lists      KPX_BACKEND_LISTS_MAX + 1 top-level KPX_A_BACKENDS of
 *	             one backend each; expected EINVAL "too many backend lists"
 *	  max        KPX_BACKENDS_MAX IPv4 backends (lists of 3,000), port
 *	             8080 and 8081 in turn, so each SET replaces every
 *	             backend; expected 0
 *	  max1       KPX_BACKENDS_MAX + 1 backends; expected EINVAL "too
 *	             many backends"
 *	The message is built before the clock starts.  Prints one JSON
 *	object: {"case", "bytes" (the request's nlmsg_len), "reps", "errno"
 *	(of the last reply, 0 or a positive errno), "extack", "unexpected"
 *	(replies other than the expected one), "ms" {"min", "p50", "mean",
 *	"max"}}.  Exit 0 when every reply was the expected one.
 *   genlbench flush
 *	KPX_CMD_FLUSH.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/kpx.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "guest.h"
#include "nl_ack.h"
#include "setmsg.h"

struct reply {
	int error;		/* 0 or a negative errno */
	int done;
	char extack[128];
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct reply *r = arg;
	int len;

	(void)who;
	r->error = e->error;
	r->done = 1;
	/* NETLINK_CAP_ACK: the attributes follow the request's header only */
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(*e);
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && len > 0 &&
	    !nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)(e + 1), len,
		       NULL) && tb[NLMSGERR_ATTR_MSG])
		snprintf(r->extack, sizeof(r->extack), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct reply *)arg)->error = 0;
	((struct reply *)arg)->done = 1;
	return NL_STOP;
}

static struct nl_sock *kpx_connect(int *fam, struct reply *r)
{
	struct nl_sock *sk = nl_socket_alloc();
	int big = 8 << 20;

	if (!sk || genl_connect(sk)) {
		fprintf(stderr, "genlbench: genl_connect failed\n");
		return NULL;
	}
	kpx_nl_ext_ack(nl_socket_get_fd(sk));
	/* a 424 KB request: past wmem_max, hence the FORCE (root) */
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_SNDBUFFORCE, &big,
		   sizeof(big));
	*fam = genl_ctrl_resolve(sk, KPX_GENL_NAME);
	if (*fam < 0) {
		fprintf(stderr, "genlbench: no kpx family\n");
		nl_socket_free(sk);
		return NULL;
	}
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, on_error, r);
	nl_socket_modify_cb(sk, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	return sk;
}

/* Backend @k: 10.200.0.0 + k. */
static void put_be(struct nl_msg *m, long k, int port)
{
	kpx_set_put_be(m, htonl(0x0ac80000u + (uint32_t)k), (uint16_t)port);
}

/*
 * The request of @name (rep @rep); *@want_err and *@want_msg: the expected
 * reply.  NULL on an unknown case or a message that does not fit.
 */
static struct nl_msg *build(int fam, const char *name, int rep,
			    int *want_err, const char **want_msg)
{
	struct nl_msg *m = nlmsg_alloc_size(8 << 20);
	long n = 0, per = 3000, i = 0;
	uint32_t vip = htonl(0x0a600029u);	/* 10.96.0.41 */
	int port = 8080 + rep % 2, err = 0;
	struct nlattr *svc, *l;

	if (!m)
		return NULL;
	svc = kpx_set_begin(m, fam, IPPROTO_TCP, vip, 80);
	if (!svc) {
		nlmsg_free(m);
		return NULL;
	}
	if (!strcmp(name, "empty106k")) {
		nla_nest_end(m, svc);
		/* put directly: libnl's nla_nest_end() drops an empty nest */
		for (i = 0; i < 106000 && !err; i++)
			err = nla_put(m, KPX_A_BACKENDS | NLA_F_NESTED, 0, NULL);
		*want_err = -EINVAL;
		*want_msg = "empty backend list";
		return err ? (nlmsg_free(m), NULL) : m;
	}
	if (!strcmp(name, "lists")) {
		n = KPX_BACKEND_LISTS_MAX + 2;
		per = 1;
		*want_err = -EINVAL;
		*want_msg = "too many backend lists";
	} else if (!strcmp(name, "max")) {
		n = KPX_BACKENDS_MAX;
		*want_err = 0;
		*want_msg = "";
	} else if (!strcmp(name, "max1")) {
		n = KPX_BACKENDS_MAX + 1;
		*want_err = -EINVAL;
		*want_msg = "too many backends";
	} else {
		nlmsg_free(m);
		return NULL;
	}
	/* the first list in KPX_SVC_A_BACKENDS, the others top-level */
	l = nla_nest_start(m, KPX_SVC_A_BACKENDS);
	for (; i < n && i < per; i++)
		put_be(m, i, port);
	err = nla_nest_end(m, l) < 0 || nla_nest_end(m, svc) < 0;
	while (i < n && !err) {
		long end = i + per;

		l = nla_nest_start(m, KPX_A_BACKENDS);
		for (; i < n && i < end; i++)
			put_be(m, i, port);
		err = !l || nla_nest_end(m, l) < 0;
	}
	if (err) {
		nlmsg_free(m);
		return NULL;
	}
	return m;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int bench(const char *name, int reps)
{
	double *ms = calloc(reps > 0 ? reps : 1, sizeof(*ms)), sum = 0, t;
	int fam, rep, bad = 0, want_err = 0;
	const char *want_msg = "";
	struct reply r = { 0 };
	unsigned int bytes = 0;
	struct nl_sock *sk;

	if (!ms || reps < 1)
		return 2;
	sk = kpx_connect(&fam, &r);
	if (!sk)
		return 1;
	for (rep = 0; rep < reps; rep++) {
		struct nl_msg *m = build(fam, name, rep, &want_err, &want_msg);

		if (!m) {
			fprintf(stderr, "genlbench: cannot build \"%s\"\n", name);
			return 2;
		}
		bytes = nlmsg_hdr(m)->nlmsg_len;
		memset(&r, 0, sizeof(r));
		r.error = -EIO;
		t = now_ms();
		if (nl_send_auto(sk, m) < 0) {
			fprintf(stderr, "genlbench: send failed\n");
			return 1;
		}
		while (!r.done)
			if (nl_recvmsgs_default(sk) < 0 && !r.done)
				break;
		ms[rep] = now_ms() - t;
		nlmsg_free(m);
		sum += ms[rep];
		if (r.error != want_err || strcmp(r.extack, want_msg))
			bad++;
	}
	qsort(ms, reps, sizeof(*ms), cmp_double);
	printf("{\"case\": \"%s\", \"bytes\": %u, \"reps\": %d, \"errno\": %d, "
	       "\"extack\": \"%s\", \"unexpected\": %d, \"ms\": {\"min\": %.3f, "
	       "\"p50\": %.3f, \"mean\": %.3f, \"max\": %.3f}}\n", name, bytes,
	       reps, -r.error, r.extack, bad, ms[0], ms[reps / 2], sum / reps,
	       ms[reps - 1]);
	free(ms);
	nl_socket_free(sk);
	return bad != 0;
}

static int flush(void)
{
	struct reply r = { 0 };
	struct nl_sock *sk;
	struct nl_msg *m;
	int fam, rc;

	sk = kpx_connect(&fam, &r);
	m = sk ? nlmsg_alloc() : NULL;
	if (!m)
		return 1;
	genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, fam, 0, 0, KPX_CMD_FLUSH,
		    KPX_GENL_VERSION);
	rc = nl_send_sync(sk, m);
	nl_socket_free(sk);
	return rc < 0 || r.error;
}

int main(int argc, char **argv)
{
	kpx_require_guest("genlbench");
	if (argc == 3)
		return bench(argv[1], atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "flush"))
		return flush();
	fprintf(stderr, "usage: genlbench empty106k|lists|max|max1 REPS | flush\n");
	return 2;
}
