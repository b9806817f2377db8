// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_fuzz: structured fuzzer and fault-injection driver for the kpx generic
 * netlink family (uapi/linux/kpx.h).  Runs only in the kpx test VM, as root,
 * with kpx.ko loaded, in a network namespace of its own.
 *
 * kpx_fuzz fuzz [-t THREADS] [-s SECONDS] [-S SEED]
 *   THREADS writers send requests built from the family's attribute grammar
 *   (every command, every attribute, each either well formed or broken in
 *   one of the ways its policy must refuse: wrong length, wrong type, out of
 *   range, unknown bits, missing key, duplicate backends, oversized lists,
 *   unknown attributes and commands), a quarter of them with random bytes of
 *   the payload flipped afterwards.  Keys come from a small pool, so valid
 *   requests keep replacing and deleting each other's frontends.  Meanwhile
 *   one thread dumps (GET_SERVICE with small and large buffers, GET_STATS,
 *   GET_CONFIG, /proc/net/kpx/services), one sends UDP, TCP and SCTP traffic
 *   to the pool (the frontends' LOCAL_OUT hook, conntrack entries for the
 *   UDP/SCTP cleanups) and one keeps creating short-lived namespaces that
 *   program UDP frontends, send to them and exit with work pending.
 *   Every reply must be an ACK or an errno the command may give:
 *     SET_SERVICE, SET_CONFIG: EINVAL, ERANGE (the netlink core's length
 *       check), ENOMEM;  DEL_SERVICE: ENOENT, EINVAL, ERANGE;
 *     FLUSH, GET_STATS, GET_CONFIG, CT_SYNC: none;  GET_SERVICE (dump):
 *       none;
 *     unknown command, or a doit command sent as a dump (or the reverse):
 *       EOPNOTSUPP;  a header without the genetlink header: EINVAL.
 *   Any other errno, or no reply within 20 s, fails the run.  At the end a
 *   known frontend is set, dumped and checked field by field, then flushed.
 *
 * kpx_fuzz failnth [-v] [-p PATH] [-n N] [-q LIMIT:STRIDE [-S SEED]]
 *   For each SET path (create, replace, every scheduler, affinity, source
 *   ranges, ClusterIP, EXT_LOCAL, UDP and SCTP cleanups, a backend set
 *   split over KPX_A_BACKENDS, emptying, SET_CONFIG, DEL, FLUSH): builds the
 *   path's starting state, then for n = 1, 2, ... makes the n-th
 *   fault-injection point of the request fail (/proc/thread-self/fail-nth;
 *   failslab with ignore-gfp-wait=N and fail_usercopy, configured by the
 *   caller) until the request runs without reaching the n-th point.  Each
 *   faulted request must answer ENOMEM (or fail in sendmsg: EFAULT, ENOBUFS,
 *   ENOMEM) with the dump (raw bytes of every GET_SERVICE message), the
 *   stats, the config and the table generation byte-identical to before,
 *   or answer an ACK with the state of the fault-free run (a fault the
 *   module survives); any other errno fails, and so does a reply whose
 *   sequence number is not the request's; a lost ack
 *   (ENOBUFS on the socket) may leave either state.  -q LIMIT:STRIDE
 *   tries points 1..LIMIT of each path and past them every STRIDE-th from
 *   an offset the seed (-S, printed) chooses, a bounded run whose
 *   successive seeds cover every point; -p PATH keeps the paths whose name
 *   contains PATH, -n N tries point N only.
 *
 * Output: "# " comment lines, then "ok"/"not ok"; exit 0 if the run passed,
 * 1 if it failed, 4 (skip) outside the VM or without fail-nth.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/kpx.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"
#include "kpx_attr.h"
#include "nl_ack.h"

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif

#define REPLY_TIMEOUT_S 20

static int family_id;
static volatile sig_atomic_t stop;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static int failures;
static bool verbose;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&report_lock);
	failures++;
	if (failures <= 50) {
		printf("# FAIL: ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	pthread_mutex_unlock(&report_lock);
}

/* --- random numbers (per thread, reproducible from the seed) ------------ */

struct rnd {
	uint64_t s;
};

static uint32_t rnd_u32(struct rnd *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)((z ^ (z >> 31)) >> 16);
}

static uint32_t rn(struct rnd *r, uint32_t n)
{
	return n ? rnd_u32(r) % n : 0;
}

/* true with probability @pct percent */
static bool pct(struct rnd *r, uint32_t p)
{
	return rn(r, 100) < p;
}

/* --- connection --------------------------------------------------------- */

struct conn {
	struct nl_sock *sk;
	int error;		/* kernel errno of the last request, negative */
	bool done;
	bool intr;		/* dump flagged NLM_F_DUMP_INTR */
	int msgs;
	/* raw dump: the genetlink payload of every message, concatenated */
	unsigned char *buf;
	size_t len, cap;
	bool keep;		/* append payloads to buf */
	size_t *off;		/* start of each kept message in buf */
	int noff, capoff;
	uint32_t req_seq;	/* sequence number of the last request */
	uint32_t ack_seq;	/* the request its ack or error answers */
	unsigned long stray;	/* acks, errors, ends for earlier requests */
};

/* A reply that ends an earlier request than the last: skipped, counted. */
static bool stray_reply(struct conn *c, uint32_t seq)
{
	if (seq == c->req_seq)
		return false;
	c->stray++;
	return true;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct conn *c = arg;

	(void)who;
	if (stray_reply(c, e->msg.nlmsg_seq))
		return NL_SKIP;
	c->error = e->error;
	c->ack_seq = e->msg.nlmsg_seq;
	c->done = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct conn *c = arg;

	if (stray_reply(c, ((struct nlmsgerr *)nlmsg_data(nlmsg_hdr(msg)))->msg.nlmsg_seq))
		return NL_SKIP;
	c->error = 0;
	c->ack_seq = ((struct nlmsgerr *)nlmsg_data(nlmsg_hdr(msg)))->msg.nlmsg_seq;
	c->done = true;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct conn *c = arg;
	size_t n = nlh->nlmsg_len - NLMSG_HDRLEN;

	if (stray_reply(c, nlh->nlmsg_seq))
		return NL_SKIP;
	c->msgs++;
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		c->intr = true;
	if (!c->keep)
		return NL_OK;
	if (c->len + n > c->cap) {
		c->cap = (c->len + n) * 2;
		c->buf = realloc(c->buf, c->cap);
		if (!c->buf)
			abort();
	}
	memcpy(c->buf + c->len, nlmsg_data(nlh), n);
	if (c->noff == c->capoff) {
		c->capoff = c->capoff ? 2 * c->capoff : 64;
		c->off = realloc(c->off, (size_t)c->capoff * sizeof(*c->off));
		if (!c->off)
			abort();
	}
	c->off[c->noff++] = c->len;
	c->len += n;
	return NL_OK;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct conn *c = arg;

	if (stray_reply(c, nlh->nlmsg_seq))
		return NL_SKIP;
	c->error = 0;
	c->ack_seq = nlh->nlmsg_seq;
	if (nlmsg_datalen(nlh) >= (int)sizeof(int) &&
	    *(int *)nlmsg_data(nlh) < 0)
		c->error = *(int *)nlmsg_data(nlh);
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		c->intr = true;
	c->done = true;
	return NL_STOP;
}

static int on_intr(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct conn *)arg)->intr = true;
	return NL_OK;
}

static int conn_open(struct conn *c, size_t bufsize)
{
	struct timeval tv = { .tv_sec = REPLY_TIMEOUT_S };

	memset(c, 0, sizeof(*c));
	c->sk = nl_socket_alloc();
	if (!c->sk || genl_connect(c->sk))
		return -1;
	kpx_nl_ext_ack(nl_socket_get_fd(c->sk));
	setsockopt(nl_socket_get_fd(c->sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	nl_socket_set_buffer_size(c->sk, 4 << 20, 4 << 20);
	nl_socket_set_msg_buf_size(c->sk, bufsize);
	nl_socket_disable_seq_check(c->sk);
	nl_socket_modify_err_cb(c->sk, NL_CB_CUSTOM, on_error, c);
	nl_socket_modify_cb(c->sk, NL_CB_ACK, NL_CB_CUSTOM, on_ack, c);
	nl_socket_modify_cb(c->sk, NL_CB_VALID, NL_CB_CUSTOM, on_valid, c);
	nl_socket_modify_cb(c->sk, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, c);
	nl_socket_modify_cb(c->sk, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_intr, c);
	if (!family_id)
		family_id = genl_ctrl_resolve(c->sk, KPX_GENL_NAME);
	return family_id > 0 ? 0 : -1;
}

static void conn_close(struct conn *c)
{
	nl_socket_free(c->sk);
	free(c->buf);
	free(c->off);
	memset(c, 0, sizeof(*c));
}

/* Room for a SET of KPX_BACKENDS_MAX + 1 IPv6 backends (about 2.7 MiB). */
static struct nl_msg *new_req(uint8_t cmd, int flags)
{
	struct nl_msg *m = nlmsg_alloc_size(4 << 20);

	if (!m || !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, family_id, 0,
			       flags, cmd, KPX_GENL_VERSION))
		abort();
	return m;
}

/* Outcome of one request. */
enum { R_REPLY, R_SENDFAIL, R_SOCKERR, R_TIMEOUT };

/*
 * Sends @m (freed) and reads until its ack, error or NLMSG_DONE.  c->error
 * is the kernel's errno (negative) or 0; *@sys the failing syscall's errno.
 */
static int request(struct conn *c, struct nl_msg *m, int *sys)
{
	int err;

	c->error = 0;
	c->done = false;
	c->intr = false;
	c->msgs = 0;
	c->len = 0;
	c->noff = 0;
	*sys = 0;
	c->ack_seq = 0;
	err = nl_send_auto(c->sk, m);
	c->req_seq = nlmsg_hdr(m)->nlmsg_seq;
	nlmsg_free(m);
	if (err < 0) {
		*sys = -err;
		return R_SENDFAIL;
	}
	return -1;	/* caller continues with finish_request() */
}

static int finish_request(struct conn *c, int *sys)
{
	int err;

	while (!c->done) {
		err = nl_recvmsgs_default(c->sk);
		if (err < 0 && !c->done) {
			*sys = -err;
			return err == -NLE_AGAIN ? R_TIMEOUT : R_SOCKERR;
		}
	}
	return R_REPLY;
}

static int roundtrip(struct conn *c, struct nl_msg *m, int *sys)
{
	int r = request(c, m, sys);

	return r >= 0 ? r : finish_request(c, sys);
}

/* --- the attribute grammar ---------------------------------------------- */

static const uint32_t primes[] = { 251, 257, 1021, 4093, 65537 };
static const uint16_t ports[] = { 53, 80, 443, 8080 };
static const char *const scheds[] = { "random", "rr", "wrr", "lc", "sh", "mh" };

/* A VIP of the pool: 10.96.200.1..4 or fd00:96::1..4. */
static void pool_vip(struct rnd *r, int family, unsigned char *a)
{
	memset(a, 0, 16);
	if (family == AF_INET) {
		a[0] = 10;
		a[1] = 96;
		a[2] = 200;
		a[3] = (unsigned char)(1 + rn(r, 4));
	} else {
		a[0] = 0xfd;
		a[2] = 0;
		a[3] = 0x96;
		a[15] = (unsigned char)(1 + rn(r, 4));
	}
}

/* A backend address: 10.244.200.1..32 or fd00:244::1..32. */
static void pool_be(struct rnd *r, int family, unsigned char *a, int i)
{
	memset(a, 0, 16);
	if (family == AF_INET) {
		a[0] = 10;
		a[1] = 244;
		a[2] = 200;
		a[3] = (unsigned char)(1 + (i >= 0 ? i : (int)rn(r, 32)));
	} else {
		a[0] = 0xfd;
		a[3] = 0x02;
		a[4] = 0x44;
		a[15] = (unsigned char)(1 + (i >= 0 ? i : (int)rn(r, 32)));
	}
}

static int alen(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

/* An attribute of @type holding @n random bytes. */
static void put_junk(struct rnd *r, struct nl_msg *m, int type, int n)
{
	unsigned char b[64];
	int i;

	for (i = 0; i < n && i < (int)sizeof(b); i++)
		b[i] = (unsigned char)rnd_u32(r);
	nla_put(m, type, n < (int)sizeof(b) ? n : (int)sizeof(b), b);
}

/*
 * A scalar attribute: usually right, sometimes of the wrong length, junk,
 * or (@val_bad) an out-of-range value.
 */
static void put_scalar(struct rnd *r, struct nl_msg *m, int type, int size,
		       uint32_t val)
{
	if (pct(r, 4)) {
		put_junk(r, m, type, (int)rn(r, 9));
		return;
	}
	switch (size) {
	case 1:
		nla_put_u8(m, type, (uint8_t)val);
		break;
	case 2:
		nla_put_u16(m, type, (uint16_t)val);
		break;
	default:
		nla_put_u32(m, type, val);
	}
}

static void put_addr(struct rnd *r, struct nl_msg *m, int type, int family,
		     const unsigned char *a)
{
	if (pct(r, 3)) {
		put_junk(r, m, type, (int)rn(r, 20));
		return;
	}
	nla_put(m, type, alen(family), a);
}

static void put_cidrs(struct rnd *r, struct nl_msg *m, int type, int family)
{
	struct nlattr *list = nla_nest_start(m, type);
	int i, n = pct(r, 3) ? 257 : (int)rn(r, 5);

	for (i = 0; i < n; i++) {
		struct nlattr *c = nla_nest_start(m, KPX_CIDRS_A_CIDR);
		int fam = pct(r, 5) ? (family == AF_INET ? AF_INET6 : AF_INET)
				    : family;
		int max = fam == AF_INET ? 32 : 128;
		unsigned char a[16] = {};
		int plen = pct(r, 5) ? max + 1 + (int)rn(r, 10)
				     : (int)rn(r, (uint32_t)max + 1);

		a[0] = fam == AF_INET ? 10 : 0xfd;
		if (pct(r, 20))
			a[alen(fam) - 1] = (unsigned char)rnd_u32(r);
		if (!pct(r, 3))
			put_scalar(r, m, KPX_CIDR_A_FAMILY, 2, (uint32_t)fam);
		if (!pct(r, 3))
			put_addr(r, m, KPX_CIDR_A_ADDR, fam, a);
		if (!pct(r, 3))
			put_scalar(r, m, KPX_CIDR_A_PREFIXLEN, 1, (uint32_t)plen);
		if (pct(r, 2))
			put_junk(r, m, 1 + rn(r, 8), (int)rn(r, 8));
		nla_nest_end(m, c);
	}
	nla_nest_end(m, list);
}

static void put_backends(struct rnd *r, struct nl_msg *m, int type,
			 int family, int first, int n)
{
	struct nlattr *list = nla_nest_start(m, type);
	unsigned char a[16];
	int i;

	for (i = 0; i < n; i++) {
		struct nlattr *be;

		if (pct(r, 1)) {
			put_junk(r, m, pct(r, 50) ? KPX_BACKENDS_A_BACKEND
						 : (int)rn(r, 4),
				 (int)rn(r, 12));
			continue;
		}
		be = nla_nest_start(m, KPX_BACKENDS_A_BACKEND);
		/* mostly distinct; a duplicate now and then */
		pool_be(r, family, a, pct(r, 3) ? -1 : (first + i) % 250);
		if (first + i >= 250)
			a[alen(family) - 2] = (unsigned char)((first + i) / 250);
		if (!pct(r, 2))
			put_addr(r, m, KPX_BE_A_ADDR, family, a);
		if (!pct(r, 2))
			put_scalar(r, m, KPX_BE_A_PORT, 2,
				   htons(pct(r, 2) ? 0 : 8080 + rn(r, 2)));
		if (pct(r, 40))
			put_scalar(r, m, KPX_BE_A_WEIGHT, 4,
				   pct(r, 5) ? (pct(r, 50) ? 0 : 65536 + rn(r, 9))
					     : 1 + rn(r, 100));
		if (pct(r, 2))	/* read-only attributes in a request */
			nla_put_u64(m, KPX_BE_A_CONNS, rnd_u32(r));
		if (pct(r, 1))
			put_junk(r, m, KPX_BE_A_MAX + 1 + rn(r, 4), 4);
		nla_nest_end(m, be);
	}
	nla_nest_end(m, list);
}

static int rand_family(struct rnd *r)
{
	return pct(r, 60) ? AF_INET : AF_INET6;
}

static int rand_proto(struct rnd *r)
{
	static const int p[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP };

	return p[rn(r, 3)];
}

/* The four key attributes, each possibly missing or broken. */
static void put_key(struct rnd *r, struct nl_msg *m, int family, int proto,
		    const unsigned char *vip, uint16_t port)
{
	if (!pct(r, 2))
		put_scalar(r, m, KPX_SVC_A_FAMILY, 2,
			   pct(r, 2) ? rn(r, 50) : (uint32_t)family);
	if (!pct(r, 2))
		put_scalar(r, m, KPX_SVC_A_PROTOCOL, 1,
			   pct(r, 2) ? rn(r, 256) : (uint32_t)proto);
	if (!pct(r, 2))
		put_addr(r, m, KPX_SVC_A_ADDR, family, vip);
	if (!pct(r, 2))
		put_scalar(r, m, KPX_SVC_A_PORT, 2, htons(pct(r, 2) ? 0 : port));
}

static void build_set(struct rnd *r, struct nl_msg *m)
{
	int family = rand_family(r), proto = rand_proto(r);
	unsigned char vip[16], cvip[16];
	uint16_t port = ports[rn(r, 4)];
	uint32_t flags = 0;
	struct nlattr *svc;
	int nbe, i;

	pool_vip(r, family, vip);
	svc = nla_nest_start(m, KPX_A_SERVICE);
	put_key(r, m, family, proto, vip, port);
	if (pct(r, 50)) {
		flags = rnd_u32(r) & __KPX_SVC_F_ALL;
		if (pct(r, 3))
			flags |= 1U << (5 + rn(r, 27));
		put_scalar(r, m, KPX_SVC_A_FLAGS, 4, flags);
	}
	if ((flags & KPX_SVC_F_EXT_LOCAL) ? !pct(r, 5) : pct(r, 3)) {
		pool_vip(r, family, cvip);
		put_addr(r, m, KPX_SVC_A_CLUSTER_ADDR, family, cvip);
		put_scalar(r, m, KPX_SVC_A_CLUSTER_PORT, 2,
			   htons(pct(r, 3) ? 0 : ports[rn(r, 4)]));
	}
	nbe = pct(r, 15) ? 0 : pct(r, 3) ? 200 + (int)rn(r, 400)
					 : 1 + (int)rn(r, 8);
	if (pct(r, 1))
		nbe = KPX_BACKENDS_MAX + 1;
	if (nbe && !pct(r, 5))
		put_backends(r, m, KPX_SVC_A_BACKENDS, family, 0,
			     nbe > 1000 ? 1000 : nbe);
	else if (pct(r, 5))
		nla_nest_end(m, nla_nest_start(m, KPX_SVC_A_BACKENDS));
	if (pct(r, 30)) {
		const char *s = pct(r, 3) ? "wlc" : scheds[rn(r, 6)];

		if (pct(r, 2))
			nla_put(m, KPX_SVC_A_SCHEDULER, 4, "mhmh"); /* no NUL */
		else
			nla_put_string(m, KPX_SVC_A_SCHEDULER, s);
		if (!strcmp(s, "mh") ? pct(r, 70) : pct(r, 3))
			put_scalar(r, m, KPX_SVC_A_MH_SIZE, 4,
				   pct(r, 5) ? 1000 : primes[rn(r, 5)]);
	}
	if (pct(r, 20)) {
		put_scalar(r, m, KPX_SVC_A_AFFINITY_TIMEOUT, 4,
			   pct(r, 5) ? 86401 : rn(r, 10800));
		if (pct(r, 50))
			put_scalar(r, m, KPX_SVC_A_AFFINITY_MAX, 4,
				   pct(r, 5) ? 0 : 1 + rn(r, 1000));
	}
	if (pct(r, 15))
		put_cidrs(r, m, KPX_SVC_A_SOURCE_RANGES, family);
	if (pct(r, 2))	/* read-only counters in a request */
		nla_put_u64(m, KPX_SVC_A_CONNS, rnd_u32(r));
	if (pct(r, 2))
		put_junk(r, m, KPX_SVC_A_MAX + 1 + rn(r, 8), (int)rn(r, 8));
	nla_nest_end(m, svc);
	/* continuation lists of a large set */
	for (i = 1000; i < nbe; i += 1000)
		put_backends(r, m, KPX_A_BACKENDS, family, i,
			     nbe - i > 1000 ? 1000 : nbe - i);
	if (pct(r, 3))
		put_backends(r, m, KPX_A_BACKENDS, family, 600, (int)rn(r, 3));
}

static void build_del(struct rnd *r, struct nl_msg *m)
{
	int family = rand_family(r);
	unsigned char vip[16];
	struct nlattr *svc;

	pool_vip(r, family, vip);
	svc = nla_nest_start(m, KPX_A_SERVICE);
	put_key(r, m, family, rand_proto(r), vip, ports[rn(r, 4)]);
	nla_nest_end(m, svc);
}

static void build_config(struct rnd *r, struct nl_msg *m)
{
	struct nlattr *cfg = nla_nest_start(m, KPX_A_CONFIG);
	static const char *const names[] = { "", "cni0", "veth", "lo",
		"0123456789abcdefXYZ" };

	if (pct(r, 60))
		put_cidrs(r, m, KPX_CFG_A_LOCAL_CIDRS, rand_family(r));
	if (pct(r, 30))
		nla_put_string(m, KPX_CFG_A_LOCAL_IFNAME, names[rn(r, 5)]);
	if (pct(r, 30))
		nla_put_string(m, KPX_CFG_A_LOCAL_IFPREFIX, names[rn(r, 5)]);
	if (pct(r, 5))
		put_junk(r, m, KPX_CFG_A_MAX + 1, 3);
	nla_nest_end(m, cfg);
}

/* Flips a few bytes of the attributes (never the netlink header). */
static void mutate(struct rnd *r, struct nl_msg *m)
{
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	unsigned char *p = (unsigned char *)nlmsg_data(nlh) + GENL_HDRLEN;
	int len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	int i, n = 1 + (int)rn(r, 4);

	for (i = 0; len > 0 && i < n; i++)
		p[rn(r, (uint32_t)len)] ^= (unsigned char)(1 + rn(r, 255));
}

/* --- fuzz mode ---------------------------------------------------------- */

enum { K_SET, K_DEL, K_FLUSH, K_STATS, K_SETCFG, K_GETCFG, K_DUMP,
       K_CTSYNC, K_BADCMD, K_NR };
static const char *const kind_name[K_NR] = { "SET_SERVICE", "DEL_SERVICE",
	"FLUSH", "GET_STATS", "SET_CONFIG", "GET_CONFIG", "GET_SERVICE",
	"CT_SYNC", "bad-command" };

/* errno counts per kind, for the report */
static unsigned long counts[K_NR][140];

static bool allowed(int kind, int err, bool mutated)
{
	if (!err)
		return kind != K_BADCMD;
	if (err == EOPNOTSUPP)
		return kind == K_BADCMD;
	switch (kind) {
	case K_SET:
	case K_SETCFG:
		return err == EINVAL || err == ERANGE || err == ENOMEM;
	case K_DEL:
		return err == ENOENT || err == EINVAL || err == ERANGE;
	case K_BADCMD:
		return err == EINVAL;	/* no genetlink header */
	default:
		/* mutated GET_* may carry a broken attribute: strict parse */
		return mutated && (err == EINVAL || err == ERANGE);
	}
}

struct worker {
	pthread_t th;
	int id;
	uint64_t seed;
	unsigned long reqs;
};

static void *writer(void *arg)
{
	struct worker *w = arg;
	struct rnd r = { .s = w->seed };
	struct conn c;

	if (conn_open(&c, pct(&r, 50) ? 4096 : 65536)) {
		fail("writer %d: cannot open the kpx family", w->id);
		return NULL;
	}
	while (!stop) {
		uint32_t x = rn(&r, 100);
		int kind, flags = 0, res, sys, err;
		bool mutated = false;
		struct nl_msg *m;
		uint8_t cmd;

		kind = x < 55 ? K_SET : x < 70 ? K_DEL : x < 72 ? K_FLUSH :
		       x < 76 ? K_STATS : x < 82 ? K_SETCFG : x < 86 ? K_GETCFG :
		       x < 92 ? K_DUMP : x < 94 ? K_CTSYNC : K_BADCMD;
		cmd = (uint8_t[]){ KPX_CMD_SET_SERVICE, KPX_CMD_DEL_SERVICE,
				   KPX_CMD_FLUSH, KPX_CMD_GET_STATS,
				   KPX_CMD_SET_CONFIG, KPX_CMD_GET_CONFIG,
				   KPX_CMD_GET_SERVICE, KPX_CMD_CT_SYNC, 0 }[kind];
		if (kind == K_DUMP)
			flags = NLM_F_DUMP;
		if (kind == K_BADCMD) {
			/* unknown, or a known one with the wrong dump flag */
			if (pct(&r, 50)) {
				cmd = (uint8_t)(KPX_CMD_MAX + 1 + rn(&r, 200));
			} else if (pct(&r, 50)) {
				cmd = KPX_CMD_GET_SERVICE;
			} else {
				cmd = (uint8_t)(1 + rn(&r, KPX_CMD_MAX));
				if (cmd == KPX_CMD_GET_SERVICE)
					cmd = KPX_CMD_SET_SERVICE;
				flags = NLM_F_DUMP;
			}
		}
		m = new_req(cmd, flags);
		switch (kind) {
		case K_SET:
			build_set(&r, m);
			break;
		case K_DEL:
			build_del(&r, m);
			break;
		case K_SETCFG:
			build_config(&r, m);
			break;
		default:
			break;
		}
		if (kind != K_BADCMD && pct(&r, 25)) {
			mutate(&r, m);
			mutated = true;
		}
		c.keep = false;
		res = roundtrip(&c, m, &sys);
		w->reqs++;
		if (res != R_REPLY) {
			/* sendmsg may refuse a message over the buffer */
			if (res == R_SENDFAIL)
				continue;
			fail("writer %d: %s: %s (%s)", w->id, kind_name[kind],
			     res == R_TIMEOUT ? "no reply" : "socket error",
			     nl_geterror(sys));
			break;
		}
		err = -c.error;
		pthread_mutex_lock(&report_lock);
		counts[kind][err >= 0 && err < 139 ? err : 139]++;
		pthread_mutex_unlock(&report_lock);
		if (!allowed(kind, err, mutated))
			fail("writer %d: %s%s answered %s", w->id,
			     kind_name[kind], mutated ? " (mutated)" : "",
			     err ? strerror(err) : "ACK");
	}
	conn_close(&c);
	return NULL;
}

static void read_proc(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void *dumper(void *arg)
{
	struct worker *w = arg;
	struct rnd r = { .s = w->seed };
	struct conn small, big;

	if (conn_open(&small, 4096) || conn_open(&big, 1 << 16)) {
		fail("dumper: cannot open the kpx family");
		return NULL;
	}
	while (!stop) {
		struct conn *c = pct(&r, 50) ? &small : &big;
		int sys, res;
		uint8_t cmd = pct(&r, 60) ? KPX_CMD_GET_SERVICE :
			      pct(&r, 50) ? KPX_CMD_GET_STATS :
					    KPX_CMD_GET_CONFIG;

		res = roundtrip(c, new_req(cmd, cmd == KPX_CMD_GET_SERVICE ?
					   NLM_F_DUMP : 0), &sys);
		w->reqs++;
		if (res == R_SOCKERR && c == &small && sys == NLE_NOMEM)
			continue;	/* a 4 KiB reader may overrun */
		if (res != R_REPLY) {
			fail("dumper: cmd %u: %s", cmd, nl_geterror(sys));
			break;
		}
		if (c->error)
			fail("dumper: cmd %u answered %s", cmd,
			     strerror(-c->error));
		if (pct(&r, 10))
			read_proc("/proc/net/kpx/services");
		if (pct(&r, 10))
			read_proc("/proc/net/kpx/stats");
	}
	conn_close(&small);
	conn_close(&big);
	return NULL;
}

/* One datagram or connection attempt to a pool VIP. */
static void poke(struct rnd *r)
{
	int family = rand_family(r), proto = rand_proto(r);
	struct sockaddr_storage ss = {};
	unsigned char vip[16];
	socklen_t sl;
	int fd;

	pool_vip(r, family, vip);
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, vip, 4);
		s->sin_port = htons(ports[rn(r, 4)]);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, vip, 16);
		s->sin6_port = htons(ports[rn(r, 4)]);
		sl = sizeof(*s);
	}
	fd = socket(family, (proto == IPPROTO_UDP ? SOCK_DGRAM : SOCK_STREAM) |
		    SOCK_NONBLOCK, proto);
	if (fd < 0)
		return;
	if (proto == IPPROTO_UDP)
		sendto(fd, "kpx", 3, 0, (struct sockaddr *)&ss, sl);
	else
		connect(fd, (struct sockaddr *)&ss, sl);
	close(fd);
}

static void *traffic(void *arg)
{
	struct worker *w = arg;
	struct rnd r = { .s = w->seed };

	while (!stop) {
		poke(&r);
		w->reqs++;
		if (!(w->reqs % 64))
			usleep(1000);
	}
	return NULL;
}

/*
 * A child in a new namespace: program UDP frontends, send to them, change
 * them (conntrack cleanups pending) and exit at once.
 */
static void netns_child(uint64_t seed)
{
	struct rnd r = { .s = seed };
	struct conn c;
	int i, sys;

	if (unshare(CLONE_NEWNET))
		_exit(2);
	if (system("ip link set lo up && ip link add d0 type dummy && "
		   "ip link set d0 up && ip addr add 10.0.0.1/8 dev d0 && "
		   "ip addr add fd00::1/8 dev d0 nodad") != 0)
		_exit(3);
	if (conn_open(&c, 65536))
		_exit(5);
	for (i = 0; i < 40; i++) {
		struct nl_msg *m = new_req(KPX_CMD_SET_SERVICE, 0);
		unsigned char vip[16], a[16];
		struct nlattr *svc, *list, *be;
		int k, n = (int)rn(&r, 4);

		pool_vip(&r, AF_INET, vip);
		svc = nla_nest_start(m, KPX_A_SERVICE);
		nla_put_u16(m, KPX_SVC_A_FAMILY, AF_INET);
		nla_put_u8(m, KPX_SVC_A_PROTOCOL, IPPROTO_UDP);
		nla_put(m, KPX_SVC_A_ADDR, 4, vip);
		nla_put_u16(m, KPX_SVC_A_PORT, htons(53));
		list = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		for (k = 0; k < n; k++) {
			be = nla_nest_start(m, KPX_BACKENDS_A_BACKEND);
			pool_be(&r, AF_INET, a, k + (int)rn(&r, 2));
			nla_put(m, KPX_BE_A_ADDR, 4, a);
			nla_put_u16(m, KPX_BE_A_PORT, htons(53));
			nla_nest_end(m, be);
		}
		nla_nest_end(m, list);
		nla_nest_end(m, svc);
		roundtrip(&c, m, &sys);
		if (c.error && c.error != -EINVAL)
			_exit(6);
		poke(&r);
		poke(&r);
	}
	_exit(0);
}

static void *churn(void *arg)
{
	struct worker *w = arg;
	struct rnd r = { .s = w->seed };

	while (!stop) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			char seed[32];

			snprintf(seed, sizeof(seed), "%u", rnd_u32(&r));
			execl("/proc/self/exe", "kpx_fuzz", "netns", seed,
			      (char *)NULL);
			_exit(127);
		}
		if (pid < 0)
			break;
		waitpid(pid, &st, 0);
		w->reqs++;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail("namespace child exited with status %#x", st);
	}
	return NULL;
}

/* The module still works: a known frontend round-trips through a dump. */
static void sanity(void)
{
	static const unsigned char vip[4] = { 10, 96, 201, 1 };
	static const unsigned char be[4] = { 10, 244, 201, 7 };
	struct nlattr *tb[KPX_SVC_A_MAX + 1], *top[KPX_A_MAX + 1];
	struct nlattr *svc, *list, *b;
	struct nl_msg *m;
	struct conn c;
	int sys, res;
	char want[256];

	if (conn_open(&c, 65536)) {
		fail("sanity: cannot open the kpx family");
		return;
	}
	if (roundtrip(&c, new_req(KPX_CMD_FLUSH, 0), &sys) || c.error)
		fail("sanity: FLUSH failed");
	m = new_req(KPX_CMD_SET_SERVICE, 0);
	svc = nla_nest_start(m, KPX_A_SERVICE);
	nla_put_u16(m, KPX_SVC_A_FAMILY, AF_INET);
	nla_put_u8(m, KPX_SVC_A_PROTOCOL, IPPROTO_UDP);
	nla_put(m, KPX_SVC_A_ADDR, 4, vip);
	nla_put_u16(m, KPX_SVC_A_PORT, htons(5353));
	nla_put_string(m, KPX_SVC_A_SCHEDULER, "rr");
	list = nla_nest_start(m, KPX_SVC_A_BACKENDS);
	b = nla_nest_start(m, KPX_BACKENDS_A_BACKEND);
	nla_put(m, KPX_BE_A_ADDR, 4, be);
	nla_put_u16(m, KPX_BE_A_PORT, htons(5300));
	nla_put_u32(m, KPX_BE_A_WEIGHT, 3);
	nla_nest_end(m, b);
	nla_nest_end(m, list);
	nla_nest_end(m, svc);
	if (roundtrip(&c, m, &sys) || c.error)
		fail("sanity: SET failed: %s", strerror(-c.error));
	c.keep = true;
	res = roundtrip(&c, new_req(KPX_CMD_GET_SERVICE, NLM_F_DUMP), &sys);
	if (res || c.error || c.msgs != 1) {
		fail("sanity: dump: %d messages, error %d", c.msgs, c.error);
		goto out;
	}
	if (nla_parse(top, KPX_A_MAX, (struct nlattr *)(c.buf + GENL_HDRLEN),
		      (int)c.len - GENL_HDRLEN, NULL) || !top[KPX_A_SERVICE] ||
	    nla_parse_nested(tb, KPX_SVC_A_MAX, top[KPX_A_SERVICE], NULL)) {
		fail("sanity: unparsable dump");
		goto out;
	}
	snprintf(want, sizeof(want), "%u %u %u %s",
		 tb[KPX_SVC_A_FAMILY] ? nla_get_u16(tb[KPX_SVC_A_FAMILY]) : 0,
		 tb[KPX_SVC_A_PROTOCOL] ? nla_get_u8(tb[KPX_SVC_A_PROTOCOL]) : 0,
		 tb[KPX_SVC_A_PORT] ? ntohs(nla_get_u16(tb[KPX_SVC_A_PORT])) : 0,
		 tb[KPX_SVC_A_SCHEDULER] ?
			nla_get_string(tb[KPX_SVC_A_SCHEDULER]) : "-");
	if (strcmp(want, "2 17 5353 rr"))
		fail("sanity: dumped '%s', want '2 17 5353 rr'", want);
	else
		printf("# sanity: the module answers: %s\n", want);
	if (roundtrip(&c, new_req(KPX_CMD_FLUSH, 0), &sys) || c.error)
		fail("sanity: final FLUSH failed");
out:
	conn_close(&c);
}

static int run_fuzz(int nthreads, int seconds, uint64_t seed)
{
	struct worker w[16 + 3] = {};
	int i, k, n = nthreads + 3;
	unsigned long total = 0;

	if (nthreads < 1 || nthreads > 16)
		nthreads = 4;
	n = nthreads + 3;
	printf("# fuzz: %d writer threads, %d s, seed %llu\n", nthreads,
	       seconds, (unsigned long long)seed);
	for (i = 0; i < n; i++) {
		w[i].id = i;
		w[i].seed = seed * 1000003ULL + (uint64_t)i;
		pthread_create(&w[i].th, NULL,
			       i < nthreads ? writer :
			       i == nthreads ? dumper :
			       i == nthreads + 1 ? traffic : churn, &w[i]);
	}
	sleep((unsigned int)seconds);
	stop = 1;
	for (i = 0; i < n; i++) {
		pthread_join(w[i].th, NULL);
		if (i < nthreads)
			total += w[i].reqs;
	}
	printf("# fuzz: %lu requests, %lu dumps/reads, %lu packets, %lu namespaces\n",
	       total, w[nthreads].reqs, w[nthreads + 1].reqs,
	       w[nthreads + 2].reqs);
	for (k = 0; k < K_NR; k++) {
		char line[512];
		int len = 0;

		for (i = 0; i < 140; i++)
			if (counts[k][i])
				len += snprintf(line + len, sizeof(line) - (size_t)len,
						" %s=%lu", i ? strerrorname_np(i) : "ACK",
						counts[k][i]);
		if (len)
			printf("# %s:%s\n", kind_name[k], line);
	}
	if (total < 100)
		fail("only %lu requests in %d s", total, seconds);
	sanity();
	return failures ? 1 : 0;
}

/* --- fail-nth mode ------------------------------------------------------ */

struct state {
	unsigned char *dump;	/* GET_SERVICE and GET_CONFIG payloads */
	size_t len;
	uint32_t gen, services, backends;
};

static int failnth_fd = -1;

/*
 * Arms (n > 0) or disarms the n-th fault point of this thread.  Disarming
 * may itself be the armed point (fail_usercopy: EFAULT), which disarms too.
 */
static void set_fail_nth(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	if (pwrite(failnth_fd, b, (size_t)len, 0) != len &&
	    !(n == 0 && errno == EFAULT)) {
		perror("fail-nth");
		exit(1);
	}
}

/*
 * 0: the fault was injected (in the request); else it was not reached.  The
 * read's own copy to userspace may be the armed point (EFAULT): then the
 * request did not reach it either.
 */
static unsigned int get_fail_nth(void)
{
	char b[16] = {};

	if (pread(failnth_fd, b, sizeof(b) - 1, 0) <= 0) {
		if (errno == EFAULT)
			return 1;
		perror("fail-nth");
		exit(1);
	}
	return (unsigned int)strtoul(b, NULL, 10);
}

static uint32_t stat_u32(struct nlattr **st, int type)
{
	return st[type] ? nla_get_u32(st[type]) : ~0U;
}

struct msgref {
	const unsigned char *p;
	size_t n;
};

static int msgref_cmp(const void *a, const void *b)
{
	const struct msgref *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return memcmp(x->p, y->p, x->n);
}

/*
 * Appends the kept messages of @c to @s sorted by their bytes: a dump's
 * order follows the frontend hash table, which resizes in the background.
 */
static void append_sorted(struct state *s, const struct conn *c)
{
	struct msgref *m = calloc((size_t)c->noff + 1, sizeof(*m));
	int i;

	if (!m)
		abort();
	for (i = 0; i < c->noff; i++) {
		m[i].p = c->buf + c->off[i];
		m[i].n = (i + 1 < c->noff ? c->off[i + 1] : c->len) - c->off[i];
	}
	qsort(m, (size_t)c->noff, sizeof(*m), msgref_cmp);
	s->dump = realloc(s->dump, s->len + c->len + 1);
	if (!s->dump)
		abort();
	for (i = 0; i < c->noff; i++) {
		memcpy(s->dump + s->len, m[i].p, m[i].n);
		s->len += m[i].n;
	}
	free(m);
}

/*
 * The observable state: the dump (messages in a canonical order) and the
 * config as raw bytes, the stats' counts and generation.
 */
static void snapshot(struct conn *c, struct state *s)
{
	struct nlattr *top[KPX_A_MAX + 1], *st[KPX_STATS_A_MAX + 1];
	static const uint8_t cmds[] = { KPX_CMD_GET_SERVICE, KPX_CMD_GET_CONFIG,
					KPX_CMD_GET_STATS };
	int i, sys;

	free(s->dump);
	memset(s, 0, sizeof(*s));
	for (i = 0; i < 3; i++) {
		c->keep = true;
		if (roundtrip(c, new_req(cmds[i], i ? 0 : NLM_F_DUMP), &sys) ||
		    c->error || c->intr) {
			fail("snapshot: cmd %u failed (%d, %s)", cmds[i],
			     c->error, nl_geterror(sys));
			return;
		}
		if (cmds[i] == KPX_CMD_GET_STATS)
			break;
		append_sorted(s, c);
	}
	if (c->len > GENL_HDRLEN &&
	    !nla_parse(top, KPX_A_MAX, (struct nlattr *)(c->buf + GENL_HDRLEN),
		       (int)c->len - GENL_HDRLEN, NULL) &&
	    top[KPX_A_STATS] &&
	    !nla_parse_nested(st, KPX_STATS_A_MAX, top[KPX_A_STATS], NULL)) {
		s->gen = stat_u32(st, KPX_STATS_A_GENERATION);
		s->services = stat_u32(st, KPX_STATS_A_SERVICES);
		s->backends = stat_u32(st, KPX_STATS_A_BACKENDS);
	} else {
		fail("snapshot: unparsable stats");
	}
}

/* Byte-identical dump and config, same counts; the generation too? */
static bool same_state(const struct state *a, const struct state *b,
		       bool with_gen)
{
	return (!with_gen || a->gen == b->gen) && a->len == b->len &&
	       a->services == b->services && a->backends == b->backends &&
	       !memcmp(a->dump, b->dump, a->len);
}

/* A scenario: a starting state and the request under test. */
struct path {
	const char *name;
	void (*setup)(struct conn *c);
	struct nl_msg *(*req)(void);
	bool config;	/* SET_CONFIG: the table generation stays */
};

static void must(struct conn *c, struct nl_msg *m, const char *what)
{
	int sys;

	if (roundtrip(c, m, &sys) || c->error)
		fail("setup %s: %s", what, c->error ? strerror(-c->error) :
		     nl_geterror(sys));
}

struct svc_spec {
	int family, proto;
	const char *vip;
	uint16_t port;
	uint32_t flags;
	int nbe, be_first;
	const char *sched;
	uint32_t mh, aff;
	int nranges;
	const char *cvip;
	uint16_t cport;
	int split;		/* backends per list; the rest in KPX_A_BACKENDS */
};

static void put_ip(struct nl_msg *m, int type, int family, const char *s)
{
	unsigned char a[16];

	inet_pton(family, s, a);
	nla_put(m, type, alen(family), a);
}

static struct nl_msg *set_req(const struct svc_spec *s)
{
	struct nl_msg *m = new_req(KPX_CMD_SET_SERVICE, 0);
	struct nlattr *svc, *list, *rl;
	unsigned char a[16];
	int i;

	svc = nla_nest_start(m, KPX_A_SERVICE);
	nla_put_u16(m, KPX_SVC_A_FAMILY, (uint16_t)s->family);
	nla_put_u8(m, KPX_SVC_A_PROTOCOL, (uint8_t)s->proto);
	put_ip(m, KPX_SVC_A_ADDR, s->family, s->vip);
	nla_put_u16(m, KPX_SVC_A_PORT, htons(s->port));
	if (s->flags)
		nla_put_u32(m, KPX_SVC_A_FLAGS, s->flags);
	if (s->cvip) {
		put_ip(m, KPX_SVC_A_CLUSTER_ADDR, s->family, s->cvip);
		nla_put_u16(m, KPX_SVC_A_CLUSTER_PORT, htons(s->cport));
	}
	if (s->sched)
		nla_put_string(m, KPX_SVC_A_SCHEDULER, s->sched);
	if (s->mh)
		nla_put_u32(m, KPX_SVC_A_MH_SIZE, s->mh);
	if (s->aff) {
		nla_put_u32(m, KPX_SVC_A_AFFINITY_TIMEOUT, s->aff);
		nla_put_u32(m, KPX_SVC_A_AFFINITY_MAX, 64);
	}
	if (s->nranges) {
		rl = nla_nest_start(m, KPX_SVC_A_SOURCE_RANGES);
		for (i = 0; i < s->nranges; i++) {
			memset(a, 0, sizeof(a));
			a[0] = s->family == AF_INET ? 10 : 0xfd;
			a[1] = (unsigned char)i;
			kpx_put_cidr(m, s->family, a, 16);
		}
		nla_nest_end(m, rl);
	}
	list = s->nbe ? nla_nest_start(m, KPX_SVC_A_BACKENDS) : NULL;
	for (i = 0; i < s->nbe; i++) {
		struct nlattr *be;
		int k = s->be_first + i;

		if (s->split && i && i % s->split == 0) {
			/* the rest as top-level KPX_A_BACKENDS lists */
			nla_nest_end(m, list);
			if (svc)
				nla_nest_end(m, svc);
			svc = NULL;
			list = nla_nest_start(m, KPX_A_BACKENDS);
		}
		be = nla_nest_start(m, KPX_BACKENDS_A_BACKEND);
		memset(a, 0, sizeof(a));
		if (s->family == AF_INET) {
			a[0] = 10;
			a[1] = 244;
			a[2] = (unsigned char)(k / 250);
			a[3] = (unsigned char)(1 + k % 250);
		} else {
			a[0] = 0xfd;
			a[13] = 0x44;
			a[14] = (unsigned char)(k / 250);
			a[15] = (unsigned char)(1 + k % 250);
		}
		nla_put(m, KPX_BE_A_ADDR, alen(s->family), a);
		nla_put_u16(m, KPX_BE_A_PORT, htons(8080));
		nla_put_u32(m, KPX_BE_A_WEIGHT, 1 + (uint32_t)(k % 7));
		nla_nest_end(m, be);
	}
	if (list)
		nla_nest_end(m, list);
	if (svc)
		nla_nest_end(m, svc);
	return m;
}

#define SPEC(...) (&(const struct svc_spec){ __VA_ARGS__ })
#define V4 .family = AF_INET
#define V6 .family = AF_INET6
#define TCP .proto = IPPROTO_TCP
#define UDP .proto = IPPROTO_UDP
#define SCTP .proto = IPPROTO_SCTP

static void setup_none(struct conn *c)
{
	(void)c;
}

static void setup_base(struct conn *c)
{
	must(c, set_req(SPEC(V4, TCP, .vip = "10.96.0.1", .port = 80, .nbe = 4)),
	     "tcp");
	must(c, set_req(SPEC(V4, UDP, .vip = "10.96.0.10", .port = 53, .nbe = 3,
			     .flags = KPX_SVC_F_CLUSTER_IP)), "udp");
	must(c, set_req(SPEC(V6, SCTP, .vip = "fd00:96::5", .port = 9, .nbe = 2)),
	     "sctp");
	must(c, set_req(SPEC(V4, TCP, .vip = "10.96.0.2", .port = 80, .nbe = 5,
			     .sched = "mh", .mh = 251)), "mh");
	must(c, set_req(SPEC(V4, TCP, .vip = "10.96.0.3", .port = 80, .nbe = 3,
			     .aff = 60)), "affinity");
}

static struct nl_msg *r_create(void)
{
	return set_req(SPEC(V4, TCP, .vip = "10.96.1.1", .port = 443, .nbe = 3));
}

static struct nl_msg *r_create6_ranges(void)
{
	return set_req(SPEC(V6, TCP, .vip = "fd00:96::1", .port = 443, .nbe = 3,
			    .nranges = 8, .flags = KPX_SVC_F_MASQ_NONLOCAL));
}

static struct nl_msg *r_replace(void)
{
	/* keeps 2 of 4, adds 3, new weights */
	return set_req(SPEC(V4, TCP, .vip = "10.96.0.1", .port = 80, .nbe = 5,
			    .be_first = 2));
}

static struct nl_msg *r_replace_wrr(void)
{
	return set_req(SPEC(V4, TCP, .vip = "10.96.0.1", .port = 80, .nbe = 4,
			    .sched = "wrr"));
}

static struct nl_msg *r_mh_create(void)
{
	return set_req(SPEC(V4, TCP, .vip = "10.96.1.2", .port = 80, .nbe = 7,
			    .sched = "mh", .mh = 1021));
}

static struct nl_msg *r_mh_replace(void)
{
	return set_req(SPEC(V4, TCP, .vip = "10.96.0.2", .port = 80, .nbe = 6,
			    .be_first = 1, .sched = "mh", .mh = 251));
}

static struct nl_msg *r_to_mh(void)
{
	return set_req(SPEC(V4, TCP, .vip = "10.96.0.1", .port = 80, .nbe = 4,
			    .sched = "mh", .mh = 257));
}

static struct nl_msg *r_lc_sh(void)
{
	return set_req(SPEC(V4, TCP, .vip = "10.96.0.3", .port = 80, .nbe = 3,
			    .sched = "lc", .aff = 60));
}

static struct nl_msg *r_aff_create(void)
{
	return set_req(SPEC(V6, UDP, .vip = "fd00:96::2", .port = 53, .nbe = 4,
			    .aff = 10800, .sched = "sh"));
}

static struct nl_msg *r_aff_off(void)
{
	return set_req(SPEC(V4, TCP, .vip = "10.96.0.3", .port = 80, .nbe = 3));
}

static struct nl_msg *r_udp_drop(void)
{
	/* drops a backend: UDP conntrack cleanup */
	return set_req(SPEC(V4, UDP, .vip = "10.96.0.10", .port = 53, .nbe = 2,
			    .flags = KPX_SVC_F_CLUSTER_IP));
}

static struct nl_msg *r_udp_create_cip(void)
{
	return set_req(SPEC(V4, UDP, .vip = "10.96.0.11", .port = 53, .nbe = 2,
			    .flags = KPX_SVC_F_CLUSTER_IP));
}

static struct nl_msg *r_sctp_empty(void)
{
	return set_req(SPEC(V6, SCTP, .vip = "fd00:96::5", .port = 9));
}

static struct nl_msg *r_ext_local(void)
{
	return set_req(SPEC(V4, UDP, .vip = "192.168.50.1", .port = 30053,
			    .nbe = 1, .flags = KPX_SVC_F_EXT_LOCAL |
			    KPX_SVC_F_DROP_EMPTY, .cvip = "10.96.0.10",
			    .cport = 53));
}

static struct nl_msg *r_big_split(void)
{
	return set_req(SPEC(V6, TCP, .vip = "fd00:96::9", .port = 80,
			    .nbe = 300, .split = 100));
}

static struct nl_msg *r_config(void)
{
	struct nl_msg *m = new_req(KPX_CMD_SET_CONFIG, 0);
	struct nlattr *cfg = nla_nest_start(m, KPX_A_CONFIG);
	struct nlattr *l = nla_nest_start(m, KPX_CFG_A_LOCAL_CIDRS);
	int i;

	for (i = 0; i < 3; i++) {
		unsigned char a[4] = { 10, (unsigned char)(244 + i) };

		kpx_put_cidr(m, AF_INET, a, 16);
	}
	nla_nest_end(m, l);
	nla_put_string(m, KPX_CFG_A_LOCAL_IFPREFIX, "veth");
	nla_nest_end(m, cfg);
	return m;
}

static struct nl_msg *del_req(int family, int proto, const char *vip,
			      uint16_t port)
{
	struct nl_msg *m = new_req(KPX_CMD_DEL_SERVICE, 0);
	struct nlattr *svc = nla_nest_start(m, KPX_A_SERVICE);

	nla_put_u16(m, KPX_SVC_A_FAMILY, (uint16_t)family);
	nla_put_u8(m, KPX_SVC_A_PROTOCOL, (uint8_t)proto);
	put_ip(m, KPX_SVC_A_ADDR, family, vip);
	nla_put_u16(m, KPX_SVC_A_PORT, htons(port));
	nla_nest_end(m, svc);
	return m;
}

static struct nl_msg *r_del_udp(void)
{
	return del_req(AF_INET, IPPROTO_UDP, "10.96.0.10", 53);
}

static struct nl_msg *r_del_aff(void)
{
	return del_req(AF_INET, IPPROTO_TCP, "10.96.0.3", 80);
}

static struct nl_msg *r_flush(void)
{
	return new_req(KPX_CMD_FLUSH, 0);
}

static const struct path paths[] = {
	{ "create into an empty table", setup_none, r_create, false },
	{ "create", setup_base, r_create, false },
	{ "create IPv6 with source ranges", setup_base, r_create6_ranges, false },
	{ "replace backends", setup_base, r_replace, false },
	{ "replace, random to wrr", setup_base, r_replace_wrr, false },
	{ "create mh", setup_base, r_mh_create, false },
	{ "replace mh backends", setup_base, r_mh_replace, false },
	{ "random to mh", setup_base, r_to_mh, false },
	{ "affinity frontend to lc", setup_base, r_lc_sh, false },
	{ "create UDP with affinity, sh", setup_base, r_aff_create, false },
	{ "affinity off", setup_base, r_aff_off, false },
	{ "UDP drops a backend (conntrack cleanup)", setup_base, r_udp_drop, false },
	{ "create UDP ClusterIP", setup_base, r_udp_create_cip, false },
	{ "SCTP to no backends", setup_base, r_sctp_empty, false },
	{ "create EXT_LOCAL", setup_base, r_ext_local, false },
	{ "300 backends over 3 lists", setup_base, r_big_split, false },
	{ "SET_CONFIG", setup_base, r_config, true },
	{ "DEL UDP", setup_base, r_del_udp, false },
	{ "DEL affinity frontend", setup_base, r_del_aff, false },
	{ "FLUSH", setup_base, r_flush, false },
};

/*
 * The path's starting state.  The config is set to one local prefix (not
 * cleared): an emptied list and one never set may dump differently.
 */
static void reset(struct conn *c, const struct path *p)
{
	struct nl_msg *m = new_req(KPX_CMD_SET_CONFIG, 0);
	struct nlattr *cfg = nla_nest_start(m, KPX_A_CONFIG);
	struct nlattr *l = nla_nest_start(m, KPX_CFG_A_LOCAL_CIDRS);
	unsigned char a[4] = { 10, 200 };

	kpx_put_cidr(m, AF_INET, a, 16);
	nla_nest_end(m, l);
	nla_put_string(m, KPX_CFG_A_LOCAL_IFNAME, "");
	nla_put_string(m, KPX_CFG_A_LOCAL_IFPREFIX, "");
	nla_nest_end(m, cfg);
	must(c, new_req(KPX_CMD_FLUSH, 0), "flush");
	must(c, m, "config");
	p->setup(c);
}

static uint32_t next_gen(uint32_t g, const struct path *p)
{
	if (p->config)
		return g;
	return g + 1 ? g + 1 : 1;
}

/*
 * Which fault points a run tries: every one (the default), or with
 * -q LIMIT:STRIDE points 1..LIMIT of each path and past them every
 * STRIDE-th, starting at an offset drawn from the seed (-S), so that
 * successive short runs cover different points; -p keeps the paths whose
 * name contains a string, -n tries one point only.
 */
static const char *failnth_path;
static unsigned int failnth_only, failnth_limit, failnth_stride = 1;
static unsigned int failnth_offset;
static unsigned long long failnth_seed;

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool failnth_try(unsigned int n)
{
	if (failnth_only)
		return n == failnth_only;
	if (!failnth_limit || n <= failnth_limit)
		return true;
	return (n - failnth_limit - 1) % failnth_stride == failnth_offset;
}

static int run_failnth(void)
{
	struct state before = {}, after = {}, now = {};
	unsigned long faults = 0, errnos = 0, acks = 0, lost = 0;
	unsigned long npaths = 0, sendfails = 0;
	size_t i;

	bool dry;

	if (failnth_limit)
		printf("# failnth: points 1..%u of each path, then one in %u from %u on (-S %llu)\n",
		       failnth_limit, failnth_stride,
		       failnth_limit + 1 + failnth_offset, failnth_seed);
	failnth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	dry = failnth_fd < 0;
	if (dry)
		printf("# failnth: /proc/thread-self/fail-nth: %s: only the fault-free runs\n",
		       strerror(errno));
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct path *p = &paths[i];
		unsigned int n, points = 0, tried = 0, last = 0;
		bool fresh = false;
		struct conn c;
		int sys, res, err;
		double t0 = mono_s();

		if (failnth_path && !strstr(p->name, failnth_path))
			continue;
		npaths++;
		if (conn_open(&c, 1 << 16)) {
			fail("cannot open the kpx family");
			break;
		}
		/* the fault-free run: the state a success leaves */
		reset(&c, p);
		snapshot(&c, &before);
		if (roundtrip(&c, p->req(), &sys) || c.error) {
			fail("%s: fails without a fault: %s", p->name,
			     strerror(-c.error));
			conn_close(&c);
			continue;
		}
		snapshot(&c, &after);
		if (after.gen != next_gen(before.gen, p))
			fail("%s: generation %u -> %u", p->name, before.gen,
			     after.gen);
		if (dry) {
			printf("# failnth: %-42s fault-free run ok\n", p->name);
			conn_close(&c);
			continue;
		}
		for (n = 1; n < 100000; n++) {
			struct nl_msg *m;
			unsigned int left;
			bool injected;

			if (!failnth_try(n)) {
				if (failnth_only && n > failnth_only)
					break;
				continue;
			}
			tried++;
			/*
			 * A refused request left the starting state (checked
			 * byte for byte below): the next one starts from it
			 * again without a reset.
			 */
			if (!fresh) {
				reset(&c, p);
				snapshot(&c, &before);
			}
			fresh = false;
			m = p->req();
			set_fail_nth(n);
			res = request(&c, m, &sys);
			left = get_fail_nth();
			set_fail_nth(0);
			if (res < 0)
				res = finish_request(&c, &sys);
			injected = left == 0;
			/* the answer, before the snapshot's requests */
			err = c.error;
			if (verbose)
				printf("#   %s n=%u: %s: %s\n", p->name, n,
				       injected ? "injected" : "not reached",
				       res == R_SENDFAIL ? nl_geterror(sys) :
				       res == R_SOCKERR ? "socket error" :
				       res == R_TIMEOUT ? "no reply" :
				       err ? strerror(-err) : "ACK");
			snapshot(&c, &now);
			if (c.stray) {
				fail("%s: n=%u: %lu replies to earlier requests",
				     p->name, n, c.stray);
				c.stray = 0;
			}
			if (!injected) {
				/* past the last point: the clean run */
				if (res != R_REPLY || err)
					fail("%s: n=%u not reached but failed",
					     p->name, n);
				else if (!same_state(&now, &after, false))
					fail("%s: n=%u: state differs from the fault-free run",
					     p->name, n);
				points = n - 1;
				break;
			}
			faults++;
			last = n;
			if (res == R_TIMEOUT) {
				fail("%s: n=%u: no reply", p->name, n);
				break;
			}
			if (res == R_SOCKERR) {
				/* the ack was lost: either state */
				lost++;
				if (!same_state(&now, &before, true) &&
				    !same_state(&now, &after, false))
					fail("%s: n=%u: lost ack, state is neither",
					     p->name, n);
				continue;
			}
			if (res == R_SENDFAIL || err) {
				/*
				 * A failed send never reached kpx (EFAULT:
				 * fail_usercopy; ENOBUFS, ENOMEM: the
				 * request's skb); an answer must be ENOMEM,
				 * the one errno uapi gives for a fault.
				 */
				if (res == R_SENDFAIL) {
					/* libnl's codes: EFAULT is NLE_INVAL */
					sendfails++;
					if (sys != NLE_INVAL && sys != NLE_NOMEM)
						fail("%s: n=%u: send failed: %s",
						     p->name, n, nl_geterror(sys));
				} else {
					errnos++;
					if (err != -ENOMEM)
						fail("%s: n=%u: answered %s",
						     p->name, n, strerror(-err));
				}
				if (!same_state(&now, &before, true))
					fail("%s: n=%u: %s changed the state (dump %zu -> %zu bytes, generation %u -> %u)",
					     p->name, n,
					     res == R_SENDFAIL ? "failed send" :
					     strerror(-err), before.len,
					     now.len, before.gen, now.gen);
				else
					fresh = true;
				continue;
			}
			/* ACK despite the fault: must be the full change */
			acks++;
			if (!same_state(&now, &after, false) ||
			    now.gen != next_gen(before.gen, p))
				fail("%s: n=%u: ACK but not the fault-free state: generation %u -> %u, frontends %u (want %u), backends %u (want %u), dump %zu bytes (want %zu)%s",
				     p->name, n, before.gen, now.gen,
				     now.services, after.services,
				     now.backends, after.backends, now.len,
				     after.len, now.len == after.len &&
				     memcmp(now.dump, after.dump, now.len) ?
				     ", bytes differ" : "");
		}
		/* past the limit, the count is known to lie in last..points */
		if (last < points)
			printf("# failnth: %-42s %3u..%u fault points, %3u tried, %.0f s\n",
			       p->name, last, points, tried, mono_s() - t0);
		else
			printf("# failnth: %-42s %3u fault points, %3u tried, %.0f s\n",
			       p->name, points, tried, mono_s() - t0);
		fflush(stdout);
		if (points == 0 && !failnth_only)
			fail("%s: no fault point reached (is failslab's ignore-gfp-wait N?)",
			     p->name);
		conn_close(&c);
	}
	printf("# failnth: %lu paths, %lu faults injected: %lu ENOMEM, %lu failed sends, %lu ACK, %lu lost ack\n",
	       npaths, faults, errnos, sendfails, acks, lost);
	if (!npaths)
		fail("no path matches -p %s", failnth_path);
	if (dry && !failures) {
		printf("ok 1 kpx_fuzz failnth # SKIP no fail-nth (fault-free runs passed)\n");
		return KPX_EXIT_NOT_GUEST;
	}
	free(before.dump);
	free(after.dump);
	free(now.dump);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int threads = 4, seconds = 60, opt, rc;
	uint64_t seed = (uint64_t)time(NULL);
	const char *mode;

	kpx_require_guest("kpx_fuzz");
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		fprintf(stderr, "usage: kpx_fuzz fuzz [-t THREADS] [-s SECONDS] [-S SEED] | failnth [-v] [-p PATH] [-n N] [-q LIMIT:STRIDE [-S SEED]]\n");
		return 2;
	}
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "t:s:S:vp:n:q:")) != -1) {
		switch (opt) {
		case 't':
			threads = atoi(optarg);
			break;
		case 's':
			seconds = atoi(optarg);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			verbose = true;
			break;
		case 'p':
			failnth_path = optarg;
			break;
		case 'n':
			failnth_only = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'q':
			if (sscanf(optarg, "%u:%u", &failnth_limit,
				   &failnth_stride) != 2 || !failnth_stride)
				return 2;
			break;
		default:
			return 2;
		}
	}
	failnth_offset = (unsigned int)(seed % failnth_stride);
	failnth_seed = (unsigned long long)seed;
	rc = 2;
	if (!strcmp(mode, "fuzz"))
		rc = run_fuzz(threads, seconds, seed);
	else if (!strcmp(mode, "netns"))	/* the churn thread's child */
		netns_child(argc > 2 ? strtoull(argv[2], NULL, 0) : 1);
	else if (!strcmp(mode, "failnth"))
		rc = run_failnth();
	else
		return 2;
	if (rc == KPX_EXIT_NOT_GUEST)
		return rc;
	printf("%s kpx_fuzz %s (%d failure%s)\n", rc ? "not ok" : "ok", mode,
	       failures, failures == 1 ? "" : "s");
	return rc;
}
