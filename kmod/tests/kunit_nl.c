// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite kpx_netlink: the genl family's policies and checks, driven
 * end to end.  Requests go through a kernel netlink socket of init_net, so
 * the genl core validates them against the family's real policy tables
 * (strictly) and calls the real handlers; the ACK's extended attributes
 * (NETLINK_EXT_ACK, NETLINK_CAP_ACK) give the errno, the message, the
 * offending attribute's offset and a missing attribute's type.
 *
 * Every invalid request must fail with the errno uapi/linux/kpx.h documents
 * (EINVAL, ENOENT, EPERM), carry an extack message and leave the namespace
 * as it was: the frontend already there keeps its backend set (the same
 * object), flags and scheduler settings, and the counters and the
 * generation number do not move.  A valid SET, checked the same way, must
 * change them, so the comparison can fail.
 */
#include <kunit/test.h>
#include <linux/net.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/file.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <linux/kpx.h>

#include "kpx.h"
#include "svc.h"
#include "pernet.h"
#include "netlink.h"
#include "sched.h"
#include "ranges.h"
#include "backend.h"
#include "lb.h"
#include "name.h"
#include "kunit_env.h"

#define RX_SIZE		8192
#define PORT_ZERO	0x10000

struct nl_ctx {
	struct socket *sock;
	struct file *file;
	u32 seq;
	u8 *rx;
	/* the last ACK */
	int err;
	char msg[128];
	int offs;		/* -1: none */
	int miss;		/* -1: none */
	/* offsets (in the request) of attributes, to match offs */
	int at_svc[KPX_SVC_A_MAX + 1];
	int at_weight;
};

/* The frontend every test starts from: TCP 10.96.0.1:80, rr. */
static const u8 vip[16] = { 10, 96, 0, 1 };
/* The ClusterIP frontend of the KPX_SVC_F_EXT_LOCAL requests. */
static const u8 cl_vip[16] = { 10, 96, 0, 2 };

static int nl_open(struct nl_ctx *c)
{
	int one = 1, err;

	err = sock_create_kern(&init_net, AF_NETLINK, SOCK_RAW,
			       NETLINK_GENERIC, &c->sock);
	if (err)
		return err;
	/* A file, as for a user's socket: genl checks its opener's caps. */
	c->file = sock_alloc_file(c->sock, 0, NULL);
	if (IS_ERR(c->file)) {
		err = PTR_ERR(c->file);
		c->file = NULL;
		return err;	/* the socket went with it */
	}
	err = c->sock->ops->setsockopt(c->sock, SOL_NETLINK, NETLINK_EXT_ACK,
				       KERNEL_SOCKPTR(&one), sizeof(one));
	if (!err)
		err = c->sock->ops->setsockopt(c->sock, SOL_NETLINK,
					       NETLINK_CAP_ACK,
					       KERNEL_SOCKPTR(&one),
					       sizeof(one));
	return err;
}

static void nl_close(struct nl_ctx *c)
{
	if (c->file)
		fput(c->file);
	c->file = NULL;
}

static struct sk_buff *req_new(struct nl_ctx *c, u8 cmd, void **hdr)
{
	struct sk_buff *skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);

	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, ++c->seq, &kpx_family,
			   NLM_F_REQUEST | NLM_F_ACK, cmd);
	if (!*hdr) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* Records where attribute @a starts in the request. */
static int off_of(const struct sk_buff *skb, const struct nlattr *a)
{
	return (const u8 *)a - skb->data;
}

/*
 * Sends @skb (consumed) and reads the ACK into c->err, c->msg, c->offs,
 * c->miss.  The genl core handles a request synchronously in sendmsg, so
 * the ACK is queued when it returns.
 */
static int nl_xfer(struct kunit *test, struct nl_ctx *c, void *hdr,
		   struct sk_buff *skb)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct msghdr m = { .msg_name = &sa, .msg_namelen = sizeof(sa) };
	struct kvec iov;
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;
	u8 *tlv;
	int len, err;

	genlmsg_end(skb, hdr);
	iov.iov_base = skb->data;
	iov.iov_len = skb->len;
	len = kernel_sendmsg(c->sock, &m, &iov, 1, skb->len);
	kfree_skb(skb);
	KUNIT_ASSERT_GT(test, len, 0);

	memset(&m, 0, sizeof(m));
	iov.iov_base = c->rx;
	iov.iov_len = RX_SIZE;
	len = kernel_recvmsg(c->sock, &m, &iov, 1, RX_SIZE, MSG_DONTWAIT);
	KUNIT_ASSERT_GE(test, len, (int)(NLMSG_HDRLEN + sizeof(*e)));
	nlh = (struct nlmsghdr *)c->rx;
	KUNIT_ASSERT_TRUE(test, nlmsg_ok(nlh, len));
	KUNIT_ASSERT_EQ(test, nlh->nlmsg_type, (u16)NLMSG_ERROR);
	KUNIT_EXPECT_EQ(test, nlh->nlmsg_seq, c->seq);
	e = nlmsg_data(nlh);
	c->err = e->error;
	c->msg[0] = 0;
	c->offs = -1;
	c->miss = -1;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return c->err;
	/* NETLINK_CAP_ACK: the request is not echoed, TLVs follow. */
	KUNIT_EXPECT_TRUE(test, nlh->nlmsg_flags & NLM_F_CAPPED);
	tlv = (u8 *)e + sizeof(*e);
	err = nla_parse_deprecated(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)tlv,
				   (u8 *)nlh + nlh->nlmsg_len - tlv, NULL,
				   NULL);
	KUNIT_ASSERT_EQ(test, err, 0);
	if (tb[NLMSGERR_ATTR_MSG])
		nla_strscpy(c->msg, tb[NLMSGERR_ATTR_MSG], sizeof(c->msg));
	if (tb[NLMSGERR_ATTR_OFFS])
		c->offs = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
	if (tb[NLMSGERR_ATTR_MISS_TYPE])
		c->miss = nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
	return c->err;
}

/* A request, by its differences from a valid SET of the base frontend. */
struct req {
	const char *name;
	u16 family;		/* 0: AF_INET */
	u8 proto;		/* 0: TCP */
	u8 addr_len;		/* 0: the family's */
	const u8 *addr;		/* NULL: vip */
	u32 port;		/* 0: 80; PORT_ZERO: 0 */
	u32 omit;		/* BIT(KPX_SVC_A_*) left out */
	bool no_service;	/* no KPX_A_SERVICE at all */
	bool put_flags;
	u32 flags;
	const char *sched;	/* NULL: "rr" */
	u32 mh_size;		/* 0: not sent */
	u32 aff_timeout;	/* 0: not sent */
	bool aff_max_zero;
	bool put_weight;
	u32 weight;		/* of the first backend */
	bool dup;		/* the first backend twice */
	u8 be_addr_len;		/* 0: 4 */
	bool be_no_port;	/* first backend without KPX_BE_A_PORT */
	u8 cidr_addr_len;	/* 0: no source range; else 10.1.2.3/plen */
	u8 cidr_plen;		/* 0: 32 */
	u16 extra_svc;		/* also put this u32 in KPX_A_SERVICE */
	u16 extra_top;		/* also put this u32 at the top level */
	bool empty_list;	/* and an empty top-level KPX_A_BACKENDS */
	bool cidr_extra;	/* the source range has an unknown attribute */
	/* KPX_SVC_A_CLUSTER_*: 10.96.0.2 (10.96.0.1 with cl_self) */
	u8 cl_addr_len;		/* 0: no KPX_SVC_A_CLUSTER_ADDR */
	u32 cl_port;		/* 0: no KPX_SVC_A_CLUSTER_PORT; PORT_ZERO: 0 */
	bool cl_self;		/* the frontend's own address */
	const char *svc_name;	/* KPX_SVC_A_NAME; NULL: not sent */
	bool long_name;		/* KPX_SVC_A_NAME of 300 'a's instead */
	bool put_kind;
	u8 kind;		/* KPX_SVC_A_KIND */
	/* expected */
	int err;
	const char *msg;	/* NULL: any non-empty message */
	int miss;		/* 0: none expected */
	u16 at_svc;		/* offs names this KPX_SVC_A_* (0: unchecked) */
	bool at_weight;		/* offs names the first backend's weight */
};

static int put_backends(struct nl_ctx *c, struct sk_buff *skb,
			const struct req *r)
{
	struct nlattr *list, *be;
	u8 addr[16] = { 10, 244, 0, 1 };
	u32 i, n = r->dup ? 3 : 2;

	list = nla_nest_start(skb, KPX_SVC_A_BACKENDS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		addr[3] = (i == 2) ? 1 : i + 1;
		be = nla_nest_start(skb, KPX_BACKENDS_A_BACKEND);
		if (!be ||
		    nla_put(skb, KPX_BE_A_ADDR,
			    i == 0 && r->be_addr_len ? r->be_addr_len : 4,
			    addr) ||
		    (!(i == 0 && r->be_no_port) &&
		     nla_put_be16(skb, KPX_BE_A_PORT, htons(8080))))
			return -EMSGSIZE;
		if (i == 0 && r->put_weight) {
			c->at_weight = off_of(skb, (struct nlattr *)
					      skb_tail_pointer(skb));
			if (nla_put_u32(skb, KPX_BE_A_WEIGHT, r->weight))
				return -EMSGSIZE;
		}
		nla_nest_end(skb, be);
	}
	nla_nest_end(skb, list);
	return 0;
}

/* KPX_SVC_A_SOURCE_RANGES with one CIDR, 10.1.2.3/plen. */
static int put_range(struct sk_buff *skb, const struct req *r)
{
	static const u8 a[16] = { 10, 1, 2, 3 };
	struct nlattr *list, *cidr;

	list = nla_nest_start(skb, KPX_SVC_A_SOURCE_RANGES);
	if (!list)
		return -EMSGSIZE;
	cidr = nla_nest_start(skb, KPX_CIDRS_A_CIDR);
	if (!cidr ||
	    nla_put_u16(skb, KPX_CIDR_A_FAMILY, AF_INET) ||
	    nla_put(skb, KPX_CIDR_A_ADDR, r->cidr_addr_len, a) ||
	    nla_put_u8(skb, KPX_CIDR_A_PREFIXLEN, r->cidr_plen ?: 32) ||
	    (r->cidr_extra && nla_put_u32(skb, KPX_CIDR_A_MAX + 1, 1)))
		return -EMSGSIZE;
	nla_nest_end(skb, cidr);
	nla_nest_end(skb, list);
	return 0;
}

/*
 * want(): true unless @r omits attribute @type; then records where it
 * starts (for the extack offset checks).  PUT() puts it with @expr:
 * nonzero when the put failed.
 */
static bool want(struct nl_ctx *c, struct sk_buff *skb, const struct req *r,
		 int type)
{
	if (r->omit & BIT(type))
		return false;
	c->at_svc[type] = off_of(skb, (struct nlattr *)skb_tail_pointer(skb));
	return true;
}

#define PUT(type, expr) (want(c, skb, r, type) && (expr))

/* KPX_SVC_A_NAME of 300 'a's and its NUL: past KPX_SVC_NAME_MAX. */
static int put_long_name(struct sk_buff *skb)
{
	struct nlattr *a = nla_reserve(skb, KPX_SVC_A_NAME, 301);

	if (!a)
		return -EMSGSIZE;
	memset(nla_data(a), 'a', 300);
	((char *)nla_data(a))[300] = '\0';
	return 0;
}

static int put_service(struct nl_ctx *c, struct sk_buff *skb,
		       const struct req *r)
{
	u16 family = r->family ?: AF_INET;
	struct nlattr *svc;
	u16 port = r->port == PORT_ZERO ? 0 : (r->port ?: 80);

	memset(c->at_svc, 0xff, sizeof(c->at_svc));
	c->at_weight = -1;
	if (r->extra_top && nla_put_u32(skb, r->extra_top, 1))
		return -EMSGSIZE;
	if (r->no_service)
		return 0;
	svc = nla_nest_start(skb, KPX_A_SERVICE);
	if (!svc)
		return -EMSGSIZE;
	if (PUT(KPX_SVC_A_FAMILY, nla_put_u16(skb, KPX_SVC_A_FAMILY, family)) ||
	    PUT(KPX_SVC_A_PROTOCOL,
		nla_put_u8(skb, KPX_SVC_A_PROTOCOL, r->proto ?: IPPROTO_TCP)) ||
	    PUT(KPX_SVC_A_ADDR, nla_put(skb, KPX_SVC_A_ADDR, r->addr_len ?:
					(family == AF_INET6 ? 16 : 4),
					r->addr ?: vip)) ||
	    PUT(KPX_SVC_A_PORT, nla_put_be16(skb, KPX_SVC_A_PORT, htons(port))) ||
	    (r->put_flags &&
	     PUT(KPX_SVC_A_FLAGS, nla_put_u32(skb, KPX_SVC_A_FLAGS, r->flags))) ||
	    PUT(KPX_SVC_A_SCHEDULER,
		nla_put_string(skb, KPX_SVC_A_SCHEDULER, r->sched ?: "rr")) ||
	    (r->mh_size &&
	     PUT(KPX_SVC_A_MH_SIZE,
		 nla_put_u32(skb, KPX_SVC_A_MH_SIZE, r->mh_size))) ||
	    (r->aff_timeout &&
	     PUT(KPX_SVC_A_AFFINITY_TIMEOUT,
		 nla_put_u32(skb, KPX_SVC_A_AFFINITY_TIMEOUT, r->aff_timeout))) ||
	    (r->aff_max_zero &&
	     PUT(KPX_SVC_A_AFFINITY_MAX,
		 nla_put_u32(skb, KPX_SVC_A_AFFINITY_MAX, 0))) ||
	    (r->extra_svc && PUT(r->extra_svc, nla_put_u32(skb, r->extra_svc, 1))) ||
	    (r->cidr_addr_len && put_range(skb, r)) ||
	    (r->cl_addr_len &&
	     PUT(KPX_SVC_A_CLUSTER_ADDR,
		 nla_put(skb, KPX_SVC_A_CLUSTER_ADDR, r->cl_addr_len,
			 r->cl_self ? vip : cl_vip))) ||
	    (r->cl_port &&
	     PUT(KPX_SVC_A_CLUSTER_PORT,
		 nla_put_be16(skb, KPX_SVC_A_CLUSTER_PORT,
			      htons(r->cl_port == PORT_ZERO ? 0 : r->cl_port)))) ||
	    (r->svc_name &&
	     PUT(KPX_SVC_A_NAME,
		 nla_put_string(skb, KPX_SVC_A_NAME, r->svc_name))) ||
	    (r->long_name && PUT(KPX_SVC_A_NAME, put_long_name(skb))) ||
	    (r->put_kind &&
	     PUT(KPX_SVC_A_KIND, nla_put_u8(skb, KPX_SVC_A_KIND, r->kind))))
		return -EMSGSIZE;
	if (!(r->omit & BIT(KPX_SVC_A_BACKENDS)) && put_backends(c, skb, r))
		return -EMSGSIZE;
	nla_nest_end(skb, svc);
	if (r->empty_list) {
		struct nlattr *l = nla_nest_start(skb, KPX_A_BACKENDS);

		if (!l)
			return -EMSGSIZE;
		nla_nest_end(skb, l);
	}
	return 0;
}

static int send_req(struct kunit *test, struct nl_ctx *c, u8 cmd,
		    const struct req *r)
{
	struct sk_buff *skb;
	void *hdr;

	skb = req_new(c, cmd, &hdr);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	if (put_service(c, skb, r)) {
		kfree_skb(skb);
		KUNIT_ASSERT_FAILURE(test, "request does not fit");
	}
	return nl_xfer(test, c, hdr, skb);
}

/* What a refused request must not change. */
struct snap {
	u32 gen, n_svcs, n_backends;
	const struct kpx_svc *svc;
	const struct kpx_bset *bset;
	const struct kpx_cidrs *ranges;
	const struct kpx_nscfg *cfg;
	const struct kpx_ckey *cluster;
	const struct kpx_name *name;
	u32 flags;
	struct kpx_sched_cfg scfg;
};

static void snap_take(struct snap *s)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct kpx_svc *svc;
	struct kpx_key key;

	memset(s, 0, sizeof(*s));
	kpx_key_init(&key, AF_INET, IPPROTO_TCP, vip, htons(80));
	mutex_lock(&kn->lock);
	s->gen = kn->gen;
	s->n_svcs = kn->n_svcs;
	s->n_backends = kn->n_backends;
	s->cfg = rcu_dereference_protected(kn->cfg, lockdep_is_held(&kn->lock));
	svc = kpx_test_svc(kn, &key, &s->bset);
	s->svc = svc;
	if (svc) {
		s->ranges = rcu_dereference_protected(svc->ranges,
						      lockdep_is_held(&kn->lock));
		s->cluster = rcu_dereference_protected(svc->cluster,
						       lockdep_is_held(&kn->lock));
		s->name = rcu_dereference_protected(svc->name,
						    lockdep_is_held(&kn->lock));
		s->flags = svc->flags;
		s->scfg = svc->scfg;
	}
	mutex_unlock(&kn->lock);
}

static void expect_same(struct kunit *test, const struct snap *a,
			const struct snap *b)
{
	KUNIT_EXPECT_EQ(test, a->gen, b->gen);
	KUNIT_EXPECT_EQ(test, a->n_svcs, b->n_svcs);
	KUNIT_EXPECT_EQ(test, a->n_backends, b->n_backends);
	KUNIT_EXPECT_PTR_EQ(test, a->svc, b->svc);
	KUNIT_EXPECT_PTR_EQ(test, a->bset, b->bset);
	KUNIT_EXPECT_PTR_EQ(test, a->ranges, b->ranges);
	KUNIT_EXPECT_PTR_EQ(test, a->cfg, b->cfg);
	KUNIT_EXPECT_PTR_EQ(test, a->cluster, b->cluster);
	KUNIT_EXPECT_PTR_EQ(test, a->name, b->name);
	KUNIT_EXPECT_EQ(test, a->flags, b->flags);
	KUNIT_EXPECT_EQ(test, a->scfg.id, b->scfg.id);
	KUNIT_EXPECT_EQ(test, a->scfg.mh_size, b->scfg.mh_size);
	KUNIT_EXPECT_EQ(test, a->scfg.aff_timeout, b->scfg.aff_timeout);
	KUNIT_EXPECT_EQ(test, a->scfg.aff_max, b->scfg.aff_max);
}

/* Every test starts from it, named (so a refused SET can be seen keep it). */
static const struct req base = { .name = "valid",
				 .svc_name = "default/web:http",
				 .put_kind = true,
				 .kind = KPX_SVC_KIND_CLUSTER_IP };

static const struct req bad_reqs[] = {
	{ .name = "no KPX_A_SERVICE", .no_service = true, .err = -EINVAL,
	  .msg = "missing KPX_A_SERVICE", .miss = KPX_A_SERVICE },
	{ .name = "unknown top-level attribute", .extra_top = KPX_A_MAX + 1,
	  .err = -EINVAL },
	{ .name = "read-only KPX_SVC_A_CONNS in SET",
	  .extra_svc = KPX_SVC_A_CONNS, .err = -EINVAL,
	  .at_svc = KPX_SVC_A_CONNS },
	{ .name = "unknown flag bit", .put_flags = true, .flags = BIT(31),
	  .err = -EINVAL, .at_svc = KPX_SVC_A_FLAGS },
	{ .name = "3-byte VIP", .addr_len = 3, .err = -EINVAL,
	  .msg = "address length does not match family",
	  .at_svc = KPX_SVC_A_ADDR },
	{ .name = "family 7", .family = 7, .err = -EINVAL,
	  .msg = "family must be AF_INET or AF_INET6",
	  .at_svc = KPX_SVC_A_FAMILY },
	{ .name = "protocol ICMP", .proto = IPPROTO_ICMP, .err = -EINVAL,
	  .msg = "protocol must be TCP, UDP or SCTP",
	  .at_svc = KPX_SVC_A_PROTOCOL },
	{ .name = "IPv4 key with a 16-byte VIP", .addr_len = 16,
	  .err = -EINVAL, .msg = "address length does not match family",
	  .at_svc = KPX_SVC_A_ADDR },
	{ .name = "port 0", .port = PORT_ZERO, .err = -EINVAL,
	  .msg = "port must not be 0", .at_svc = KPX_SVC_A_PORT },
	{ .name = "no port", .omit = BIT(KPX_SVC_A_PORT), .err = -EINVAL,
	  .msg = "missing frontend key attribute", .miss = KPX_SVC_A_PORT },
	{ .name = "backend weight 0", .put_weight = true, .weight = 0,
	  .err = -EINVAL, .msg = "backend weight must be 1..KPX_WEIGHT_MAX",
	  .at_weight = true },
	{ .name = "backend weight above KPX_WEIGHT_MAX", .put_weight = true,
	  .weight = KPX_WEIGHT_MAX + 1, .err = -EINVAL,
	  .msg = "backend weight must be 1..KPX_WEIGHT_MAX",
	  .at_weight = true },
	{ .name = "duplicate backend", .dup = true, .err = -EINVAL,
	  .msg = "duplicate backend" },
	{ .name = "16-byte backend of an IPv4 frontend", .be_addr_len = 16,
	  .err = -EINVAL,
	  .msg = "backend address length does not match family" },
	{ .name = "3-byte backend", .be_addr_len = 3, .err = -EINVAL,
	  .msg = "backend address length does not match family" },
	{ .name = "backend without a port", .be_no_port = true,
	  .err = -EINVAL, .msg = "backend needs an address and a port",
	  .miss = KPX_BE_A_PORT },
	{ .name = "source range with a 3-byte address", .cidr_addr_len = 3,
	  .err = -EINVAL,
	  .msg = "CIDR address length does not match family" },
	{ .name = "source range with host bits", .cidr_addr_len = 4,
	  .cidr_plen = 8, .err = -EINVAL,
	  .msg = "CIDR has bits set past its prefix length" },
	{ .name = "source range with an unknown attribute",
	  .cidr_addr_len = 4, .cidr_extra = true, .err = -EINVAL },
	{ .name = "empty top-level backend list", .empty_list = true,
	  .err = -EINVAL, .msg = "empty backend list" },
	{ .name = "unknown scheduler", .sched = "wlc", .err = -EINVAL,
	  .msg = "unknown scheduler", .at_svc = KPX_SVC_A_SCHEDULER },
	{ .name = "scheduler name too long", .sched = "roundrobinroundrobin",
	  .err = -EINVAL, .at_svc = KPX_SVC_A_SCHEDULER },
	{ .name = "mh size not a prime", .sched = "mh", .mh_size = 65536,
	  .err = -EINVAL,
	  .msg = "mh size must be a prime in KPX_MH_SIZE_MIN..KPX_MH_SIZE_MAX",
	  .at_svc = KPX_SVC_A_MH_SIZE },
	{ .name = "mh size a prime below the minimum", .sched = "mh",
	  .mh_size = 241, .err = -EINVAL,
	  .msg = "mh size must be a prime in KPX_MH_SIZE_MIN..KPX_MH_SIZE_MAX",
	  .at_svc = KPX_SVC_A_MH_SIZE },
	{ .name = "affinity timeout 86401", .aff_timeout = 86401,
	  .err = -EINVAL, .msg = "affinity timeout must be 0..86400",
	  .at_svc = KPX_SVC_A_AFFINITY_TIMEOUT },
	{ .name = "affinity max 0", .aff_max_zero = true, .err = -EINVAL,
	  .msg = "affinity max must be 1..1048576",
	  .at_svc = KPX_SVC_A_AFFINITY_MAX },
	/* KPX_SVC_F_EXT_LOCAL and its cluster frontend */
	{ .name = "ext-local without a cluster frontend", .put_flags = true,
	  .flags = KPX_SVC_F_EXT_LOCAL, .err = -EINVAL,
	  .msg = "KPX_SVC_F_EXT_LOCAL needs the cluster frontend",
	  .miss = KPX_SVC_A_CLUSTER_ADDR },
	{ .name = "ext-local without a cluster port", .put_flags = true,
	  .flags = KPX_SVC_F_EXT_LOCAL, .cl_addr_len = 4, .err = -EINVAL,
	  .msg = "KPX_SVC_F_EXT_LOCAL needs the cluster frontend",
	  .miss = KPX_SVC_A_CLUSTER_PORT },
	{ .name = "cluster frontend without ext-local", .cl_addr_len = 4,
	  .cl_port = 80, .err = -EINVAL,
	  .msg = "cluster frontend needs KPX_SVC_F_EXT_LOCAL",
	  .at_svc = KPX_SVC_A_CLUSTER_ADDR },
	{ .name = "16-byte cluster address of an IPv4 frontend",
	  .put_flags = true, .flags = KPX_SVC_F_EXT_LOCAL, .cl_addr_len = 16,
	  .cl_port = 80, .err = -EINVAL,
	  .msg = "cluster address length does not match family",
	  .at_svc = KPX_SVC_A_CLUSTER_ADDR },
	{ .name = "cluster port 0", .put_flags = true,
	  .flags = KPX_SVC_F_EXT_LOCAL, .cl_addr_len = 4,
	  .cl_port = PORT_ZERO, .err = -EINVAL,
	  .msg = "cluster port must not be 0",
	  .at_svc = KPX_SVC_A_CLUSTER_PORT },
	{ .name = "cluster frontend is the frontend itself", .put_flags = true,
	  .flags = KPX_SVC_F_EXT_LOCAL, .cl_addr_len = 4, .cl_self = true,
	  .cl_port = 80, .err = -EINVAL,
	  .msg = "cluster frontend is the frontend itself",
	  .at_svc = KPX_SVC_A_CLUSTER_ADDR },
	/* KPX_SVC_A_NAME, KPX_SVC_A_KIND */
	{ .name = "name with a newline", .svc_name = "default/web\n:http",
	  .err = -EINVAL,
	  .msg = "name must be visible ASCII, without space or control characters",
	  .at_svc = KPX_SVC_A_NAME },
	{ .name = "name with a space", .svc_name = "default/web http",
	  .err = -EINVAL,
	  .msg = "name must be visible ASCII, without space or control characters",
	  .at_svc = KPX_SVC_A_NAME },
	{ .name = "name with a control character", .svc_name = "a\x01b",
	  .err = -EINVAL,
	  .msg = "name must be visible ASCII, without space or control characters",
	  .at_svc = KPX_SVC_A_NAME },
	{ .name = "name with a byte above 0x7e", .svc_name = "caf\xc3\xa9",
	  .err = -EINVAL,
	  .msg = "name must be visible ASCII, without space or control characters",
	  .at_svc = KPX_SVC_A_NAME },
	{ .name = "name of 300 bytes", .long_name = true, .err = -EINVAL,
	  .at_svc = KPX_SVC_A_NAME },
	{ .name = "kind past KPX_SVC_KIND_MAX", .put_kind = true,
	  .kind = KPX_SVC_KIND_MAX + 1, .err = -EINVAL,
	  .msg = "unknown frontend kind", .at_svc = KPX_SVC_A_KIND },
};

static void req_desc(const struct req *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad_req, bad_reqs, req_desc);

static void expect_error(struct kunit *test, struct nl_ctx *c,
			 const struct req *r)
{
	KUNIT_EXPECT_EQ(test, c->err, r->err);
	if (r->msg)
		KUNIT_EXPECT_STREQ(test, c->msg, r->msg);
	else
		KUNIT_EXPECT_NE_MSG(test, c->msg[0], 0, "no extack message");
	if (r->miss)
		KUNIT_EXPECT_EQ(test, c->miss, r->miss);
	if (r->at_svc)
		KUNIT_EXPECT_EQ(test, c->offs, c->at_svc[r->at_svc]);
	if (r->at_weight)
		KUNIT_EXPECT_EQ(test, c->offs, c->at_weight);
}

static void nl_bad_set_test(struct kunit *test)
{
	const struct req *r = test->param_value;
	struct nl_ctx *c = test->priv;
	struct snap before, after;

	snap_take(&before);
	KUNIT_ASSERT_NOT_NULL(test, before.svc);
	send_req(test, c, KPX_CMD_SET_SERVICE, r);
	kunit_info(test, "%s: %d \"%s\"", r->name, c->err, c->msg);
	expect_error(test, c, r);
	snap_take(&after);
	expect_same(test, &before, &after);
}

/* The checks above can fail: a valid replace changes what they compare. */
static void nl_valid_set_test(struct kunit *test)
{
	struct req r = { .name = "wrr, weight 3", .sched = "wrr",
			 .put_weight = true, .weight = 3 };
	struct nl_ctx *c = test->priv;
	struct snap before, after;

	snap_take(&before);
	KUNIT_EXPECT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	snap_take(&after);
	KUNIT_EXPECT_NE(test, before.gen, after.gen);
	KUNIT_EXPECT_PTR_EQ(test, before.svc, after.svc);
	KUNIT_EXPECT_PTR_NE(test, before.bset, after.bset);
	KUNIT_EXPECT_EQ(test, after.scfg.id, (u8)KPX_SCHED_WRR);
	KUNIT_EXPECT_EQ(test, after.n_backends, 2U);
}

/* The base frontend's name and kind, under kn->lock. */
static void expect_name(struct kunit *test, const char *str, u8 kind)
{
	struct snap s;

	snap_take(&s);
	if (!str && !kind) {
		KUNIT_EXPECT_NULL(test, s.name);
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, s.name);
	KUNIT_EXPECT_STREQ(test, s.name->str, str ?: "");
	KUNIT_EXPECT_EQ(test, s.name->kind, kind);
}

/*
 * The name and kind are kept by a SET that leaves them out (the very
 * object), and each part is replaced or cleared on its own.
 */
static void nl_name_test(struct kunit *test)
{
	struct req r = { .name = "no name" };
	struct nl_ctx *c = test->priv;
	struct snap before, after;

	expect_name(test, "default/web:http", KPX_SVC_KIND_CLUSTER_IP);
	snap_take(&before);
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	snap_take(&after);
	KUNIT_EXPECT_NE(test, before.gen, after.gen);
	KUNIT_EXPECT_PTR_EQ(test, before.name, after.name);
	expect_name(test, "default/web:http", KPX_SVC_KIND_CLUSTER_IP);

	r.put_kind = true;
	r.kind = KPX_SVC_KIND_NODE_PORT;
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	expect_name(test, "default/web:http", KPX_SVC_KIND_NODE_PORT);

	r.put_kind = false;
	r.svc_name = "kube-system/kube-dns:dns-tcp";
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	expect_name(test, "kube-system/kube-dns:dns-tcp",
		    KPX_SVC_KIND_NODE_PORT);

	r.svc_name = "";
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	expect_name(test, "", KPX_SVC_KIND_NODE_PORT);

	r.svc_name = NULL;
	r.put_kind = true;
	r.kind = KPX_SVC_KIND_NONE;
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	expect_name(test, NULL, 0);

	/* the longest name there is */
	r.put_kind = false;
	r.svc_name = kunit_kzalloc(test, KPX_SVC_NAME_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r.svc_name);
	memset((char *)r.svc_name, 'z', KPX_SVC_NAME_MAX - 1);
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	expect_name(test, r.svc_name, 0);
}

/*
 * A valid KPX_SVC_F_EXT_LOCAL SET stores the cluster key (TCP
 * 10.96.0.2:8080), kpx_svc_cluster() finds that frontend once it exists,
 * and a SET without the flag drops the key.
 */
static void nl_ext_local_test(struct kunit *test)
{
	struct req r = { .name = "ext-local", .put_flags = true,
			 .flags = KPX_SVC_F_EXT_LOCAL | KPX_SVC_F_DROP_EMPTY,
			 .cl_addr_len = 4, .cl_port = 8080 };
	struct req cl = { .name = "cluster", .addr = cl_vip, .port = 8080 };
	struct kpx_net *kn = kpx_net(&init_net);
	struct nl_ctx *c = test->priv;
	struct kpx_svc *ext, *found;
	struct kpx_key k, fe;
	struct snap s;

	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	snap_take(&s);
	KUNIT_ASSERT_NOT_NULL(test, s.cluster);
	kpx_key_init(&k, AF_INET, IPPROTO_TCP, cl_vip, htons(8080));
	kpx_key_init(&fe, AF_INET, IPPROTO_TCP, vip, htons(80));
	KUNIT_EXPECT_EQ(test, memcmp(&s.cluster->key, &k, sizeof(k)), 0);
	KUNIT_EXPECT_EQ(test, s.flags,
			(u32)(KPX_SVC_F_EXT_LOCAL | KPX_SVC_F_DROP_EMPTY));

	rcu_read_lock();
	ext = kpx_svc_lookup(kn, &fe);
	KUNIT_EXPECT_NOT_NULL(test, ext);
	/* no such frontend yet: the hook behaves as without the flag */
	if (ext)
		KUNIT_EXPECT_NULL(test, kpx_svc_cluster(kn, ext));
	rcu_read_unlock();

	/* the cluster frontend itself */
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &cl), 0);
	rcu_read_lock();
	ext = kpx_svc_lookup(kn, &fe);
	found = ext ? kpx_svc_cluster(kn, ext) : NULL;
	KUNIT_EXPECT_NOT_NULL(test, found);
	if (found)
		KUNIT_EXPECT_EQ(test, memcmp(&found->key, &k, sizeof(k)), 0);
	rcu_read_unlock();

	r.flags = KPX_SVC_F_DROP_EMPTY;
	r.cl_addr_len = 0;
	r.cl_port = 0;
	KUNIT_ASSERT_EQ(test, send_req(test, c, KPX_CMD_SET_SERVICE, &r), 0);
	snap_take(&s);
	KUNIT_EXPECT_NULL(test, s.cluster);
	rcu_read_lock();
	ext = kpx_svc_lookup(kn, &fe);
	KUNIT_EXPECT_NOT_NULL(test, ext);
	if (ext)
		KUNIT_EXPECT_NULL(test, kpx_svc_cluster(kn, ext));
	rcu_read_unlock();
}

static void nl_del_test(struct kunit *test)
{
	struct req other = { .name = "other port", .port = 81 };
	struct nl_ctx *c = test->priv;
	struct snap before, after;

	snap_take(&before);
	send_req(test, c, KPX_CMD_DEL_SERVICE, &other);
	KUNIT_EXPECT_EQ(test, c->err, -ENOENT);
	KUNIT_EXPECT_STREQ(test, c->msg, "no such frontend");
	snap_take(&after);
	expect_same(test, &before, &after);

	/* A DEL with a bad key is EINVAL, as a SET's. */
	other.port = PORT_ZERO;
	send_req(test, c, KPX_CMD_DEL_SERVICE, &other);
	KUNIT_EXPECT_EQ(test, c->err, -EINVAL);
	KUNIT_EXPECT_STREQ(test, c->msg, "port must not be 0");
	snap_take(&after);
	expect_same(test, &before, &after);

	KUNIT_EXPECT_EQ(test, send_req(test, c, KPX_CMD_DEL_SERVICE, &base),
			0);
	snap_take(&after);
	KUNIT_EXPECT_NULL(test, after.svc);
	KUNIT_EXPECT_EQ(test, after.n_svcs, before.n_svcs - 1);
}

/* SET_CONFIG: an interface name longer than IFNAMSIZ - 1 is refused. */
static void nl_bad_config_test(struct kunit *test)
{
	struct nl_ctx *c = test->priv;
	struct snap before, after;
	struct sk_buff *skb;
	struct nlattr *nest;
	void *hdr;

	snap_take(&before);
	skb = req_new(c, KPX_CMD_SET_CONFIG, &hdr);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	nest = nla_nest_start(skb, KPX_A_CONFIG);
	KUNIT_ASSERT_NOT_NULL(test, nest);
	KUNIT_ASSERT_EQ(test, nla_put_string(skb, KPX_CFG_A_LOCAL_IFNAME,
					     "an-interface-name-too-long"), 0);
	nla_nest_end(skb, nest);
	nl_xfer(test, c, hdr, skb);
	KUNIT_EXPECT_EQ(test, c->err, -EINVAL);
	KUNIT_EXPECT_NE_MSG(test, c->msg[0], 0, "no extack message");
	snap_take(&after);
	expect_same(test, &before, &after);
}

/* A mutation without CAP_NET_ADMIN: EPERM, nothing changed. */
static void nl_eperm_test(struct kunit *test)
{
	struct req r = { .name = "wrr", .sched = "wrr" };
	struct nl_ctx *c = test->priv, u = { .rx = c->rx };
	struct snap before = {}, after = {};
	const struct cred *old;
	struct cred *cred;
	int err;

	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_NET_ADMIN);
	old = override_creds(cred);
	err = nl_open(&u);
	if (!err) {
		snap_take(&before);
		send_req(test, &u, KPX_CMD_SET_SERVICE, &r);
		snap_take(&after);
	}
	revert_creds(old);
	put_cred(cred);
	nl_close(&u);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, u.err, -EPERM);
	expect_same(test, &before, &after);
}

/*
 * Source ranges are matched through merged intervals: overlapping, nested
 * and adjacent prefixes of both families, in any order, match exactly the
 * addresses one of them holds.
 */
static void nl_ranges_match_test(struct kunit *test)
{
	static const struct { u8 fam; u8 a[16]; u8 plen; } in[] = {
		{ AF_INET, { 10, 1, 0, 0 }, 16 },
		{ AF_INET, { 10, 1, 2, 0 }, 24 },	/* inside the /16 */
		{ AF_INET, { 10, 2, 0, 0 }, 16 },	/* adjacent */
		{ AF_INET, { 192, 168, 1, 7 }, 32 },
		{ AF_INET, { 0, 0, 0, 0 }, 32 },
		{ AF_INET6, { 0x20, 0x01, 0x0d, 0xb8 }, 32 },
		{ AF_INET6, { 0xfd }, 8 },
		{ AF_INET6, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  128 },
	};
	static const struct { u8 fam; u8 a[16]; bool hit; } probe[] = {
		{ AF_INET, { 10, 1, 255, 255 }, true },
		{ AF_INET, { 10, 2, 3, 4 }, true },
		{ AF_INET, { 10, 3, 0, 0 }, false },
		{ AF_INET, { 10, 0, 255, 255 }, false },
		{ AF_INET, { 192, 168, 1, 7 }, true },
		{ AF_INET, { 192, 168, 1, 8 }, false },
		{ AF_INET, { 0, 0, 0, 0 }, true },
		{ AF_INET, { 0, 0, 0, 1 }, false },
		{ AF_INET6, { 0x20, 0x01, 0x0d, 0xb8, 0xff }, true },
		{ AF_INET6, { 0x20, 0x01, 0x0d, 0xb9 }, false },
		{ AF_INET6, { 0xfd, 0x12 }, true },
		{ AF_INET6, { 0xfe }, false },
		{ AF_INET6, { 0x0a, 0x01 }, false },	/* not IPv4's 10.1/16 */
		{ AF_INET6, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  true },
	};
	struct nlattr *list, *cidr;
	const struct nlattr *l;
	struct kpx_cidrs *cl;
	struct sk_buff *skb;
	union kpx_addr x;
	u32 i, k;

	skb = alloc_skb(4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	list = nla_nest_start(skb, KPX_SVC_A_SOURCE_RANGES);
	/* in reverse order, so the parser has to sort */
	for (k = ARRAY_SIZE(in); k--; ) {
		cidr = nla_nest_start(skb, KPX_CIDRS_A_CIDR);
		KUNIT_ASSERT_FALSE(test, !cidr ||
			nla_put_u16(skb, KPX_CIDR_A_FAMILY, in[k].fam) ||
			nla_put(skb, KPX_CIDR_A_ADDR,
				in[k].fam == AF_INET ? 4 : 16, in[k].a) ||
			nla_put_u8(skb, KPX_CIDR_A_PREFIXLEN, in[k].plen));
		nla_nest_end(skb, cidr);
	}
	nla_nest_end(skb, list);
	l = list;
	KUNIT_ASSERT_EQ(test, kpx_cidrs_parse(&l, 1, 0, KPX_CIDRS_MAX, &cl,
					      NULL), 0);
	KUNIT_ASSERT_NOT_NULL(test, cl);
	KUNIT_EXPECT_EQ(test, cl->count, (u32)ARRAY_SIZE(in));
	/* the /24 merges into its /16; the adjacent 10.2/16 stays apart */
	KUNIT_EXPECT_EQ(test, cl->niv, (u32)ARRAY_SIZE(in) - 1);
	for (i = 0; i < ARRAY_SIZE(probe); i++) {
		memset(&x, 0, sizeof(x));
		memcpy(x.bytes, probe[i].a, probe[i].fam == AF_INET ? 4 : 16);
		KUNIT_EXPECT_EQ_MSG(test, kpx_cidrs_match(cl, probe[i].fam, &x),
				    probe[i].hit, "probe %u", i);
	}
	KUNIT_EXPECT_FALSE(test, kpx_cidrs_match(NULL, AF_INET, &x));
	kpx_cidrs_free(cl);
	kfree_skb(skb);
}

/*
 * A SET that changes a kept backend's weight builds a new set with the new
 * weight and shares the backend object (its counters go on), while the old
 * set, still visible to readers until its grace period ends (and the live
 * set if a later step of the SET fails), keeps its own weight: the build
 * writes nothing that readers of the old set can see.
 */
static void nl_weights_per_set_test(struct kunit *test)
{
	struct kpx_be_cfg cfg[2] = {};
	struct kpx_bset *a, *b;
	u32 dup;

	cfg[0].addr.ip = htonl(0x0af40001);
	cfg[0].port = htons(8080);
	cfg[0].weight = 1;
	cfg[1].addr.ip = htonl(0x0af40002);
	cfg[1].port = htons(8080);
	cfg[1].weight = 2;
	KUNIT_ASSERT_EQ(test, kpx_be_cfg_sort(cfg, 2, &dup), 0);
	a = kpx_bset_build(NULL, cfg, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(a));
	cfg[0].weight = 7;
	b = kpx_bset_build(a, cfg, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(b));
	KUNIT_EXPECT_PTR_EQ(test, a->be[0], b->be[0]);
	KUNIT_EXPECT_EQ(test, kpx_bset_weight(a, 0), 1U);
	KUNIT_EXPECT_EQ(test, kpx_bset_weight(a, 1), 2U);
	KUNIT_EXPECT_EQ(test, kpx_bset_weight(b, 0), 7U);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->be[0]->ref), 2U);
	kpx_bset_free(b);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->be[0]->ref), 1U);
	kpx_bset_free(a);
}

/*
 * Dumps while frontends come and go, with each creation held (the test
 * hook in __kpx_svc_set(), test builds only) while the new frontend is on
 * the dump list but not in the table, and again once it is in the table
 * but the generation has not moved: a dump that stops before it resumes
 * by its key in either state.  A dump that resumed onto a frontend in the
 * table but not on the list would walk from uninitialised list pointers
 * (KASAN, or a crash).  Every dump must end with NLMSG_DONE, every message
 * must parse, carry a frontend of the test with its whole backend slice,
 * and a dump that saw no change must list every frontend once.
 */
#define RACE_SVCS	24
#define RACE_BE		20	/* about 1 KiB a frontend: several a part */
#define RACE_ROUNDS	40
#define RACE_RX		4096	/* a small reader: many parts, many resumes */

struct race_ctx {
	struct kunit *test;
	atomic_t holds;		/* creations held so far */
	atomic_t stop;
	atomic_t dumps, overlapped, intr, bad;
	char why[96];
};

static struct race_ctx *race;

static void race_hook(const struct kpx_svc *svc, int step)
{
	if (!race || svc->key.addr.bytes[1] != 97)
		return;
	atomic_inc(&race->holds);
	usleep_range(1000, 2000);
}

static void race_bad(struct race_ctx *r, const char *why, int v)
{
	if (atomic_inc_return(&r->bad) == 1)
		snprintf(r->why, sizeof(r->why), "%s (%d)", why, v);
}

static void race_key(u8 *a, u32 i)
{
	memset(a, 0, 16);
	a[0] = 10;
	a[1] = 97;
	a[3] = (u8)(i + 1);
}

/*
 * One dump through @c: *@n counts the test's frontends dumped whole and
 * once (a frontend's backends may continue in the next message), *@odd the
 * others (repeated, or with a backend count that is not RACE_BE).
 */
static void race_count(int id, int nbe, unsigned long *seen, int *n,
		       int *odd)
{
	if (nbe == RACE_BE && !test_and_set_bit(id, seen))
		(*n)++;
	else
		(*odd)++;
}

static int race_dump(struct race_ctx *r, struct nl_ctx *c, u8 *rx, int *n,
		     int *odd, bool *intr)
{
	DECLARE_BITMAP(seen, RACE_SVCS) = {};
	int cur = -1, nbe = 0;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct msghdr m = { .msg_name = &sa, .msg_namelen = sizeof(sa) };
	struct nlmsghdr *nlh;
	struct sk_buff *skb;
	struct kvec iov;
	void *hdr;
	int len;

	*n = 0;
	*odd = 0;
	*intr = false;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	hdr = genlmsg_put(skb, 0, ++c->seq, &kpx_family,
			  NLM_F_REQUEST | NLM_F_DUMP, KPX_CMD_GET_SERVICE);
	if (!hdr) {
		kfree_skb(skb);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	iov.iov_base = skb->data;
	iov.iov_len = skb->len;
	len = kernel_sendmsg(c->sock, &m, &iov, 1, skb->len);
	kfree_skb(skb);
	if (len <= 0)
		return len ? len : -EIO;
	for (;;) {
		memset(&m, 0, sizeof(m));
		iov.iov_base = rx;
		iov.iov_len = RACE_RX;
		len = kernel_recvmsg(c->sock, &m, &iov, 1, RACE_RX,
				     MSG_DONTWAIT);
		if (len <= 0)
			return len ? len : -EIO;
		for (nlh = (struct nlmsghdr *)rx; nlmsg_ok(nlh, len);
		     nlh = nlmsg_next(nlh, &len)) {
			struct nlattr *top[KPX_A_MAX + 1];
			struct nlattr *tb[KPX_SVC_A_MAX + 1];
			struct nlattr *a;
			int rem, id;

			if (nlh->nlmsg_seq != c->seq)
				return -EPROTO;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				*intr = true;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				if (cur >= 0)
					race_count(cur, nbe, seen, n, odd);
				return 0;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)nlmsg_data(nlh))->error ?: -EPROTO;
			if (genlmsg_parse_deprecated(nlh, &kpx_family, top,
						     KPX_A_MAX, NULL, NULL) ||
			    !top[KPX_A_SERVICE] ||
			    nla_parse_nested_deprecated(tb, KPX_SVC_A_MAX,
							top[KPX_A_SERVICE],
							NULL, NULL) ||
			    !tb[KPX_SVC_A_ADDR] ||
			    nla_len(tb[KPX_SVC_A_ADDR]) != 4) {
				race_bad(r, "unparsable message", len);
				continue;
			}
			if (((u8 *)nla_data(tb[KPX_SVC_A_ADDR]))[1] != 97)
				continue;	/* the suite's base frontend */
			id = ((u8 *)nla_data(tb[KPX_SVC_A_ADDR]))[3] - 1;
			if (id < 0 || id >= RACE_SVCS) {
				race_bad(r, "unknown frontend", id);
				continue;
			}
			if (id != cur) {
				if (cur >= 0)
					race_count(cur, nbe, seen, n, odd);
				cur = id;
				nbe = 0;
			}
			if (tb[KPX_SVC_A_BACKENDS])
				nla_for_each_nested(a, tb[KPX_SVC_A_BACKENDS],
						    rem)
					nbe++;
		}
	}
}

static int race_dumper(void *arg)
{
	struct race_ctx *r = arg;
	struct nl_ctx c = {};
	u8 *rx = kmalloc(RACE_RX, GFP_KERNEL);
	int err, n, odd, holds;
	bool intr;

	if (!rx || nl_open(&c)) {
		race_bad(r, "dumper setup", 0);
		goto out;
	}
	while (!atomic_read(&r->stop)) {
		cond_resched();
		holds = atomic_read(&r->holds);
		err = race_dump(r, &c, rx, &n, &odd, &intr);
		if (err) {
			race_bad(r, "dump failed", err);
			break;
		}
		atomic_inc(&r->dumps);
		if (intr)
			atomic_inc(&r->intr);
		if (atomic_read(&r->holds) != holds)
			atomic_inc(&r->overlapped);
		if (intr)
			continue;
		/* consistent: each frontend whole and once, one may be gone */
		if (odd)
			race_bad(r, "consistent dump with a broken frontend", odd);
		else if (n != RACE_SVCS - 1 && n != RACE_SVCS)
			race_bad(r, "consistent dump lost frontends", n);
	}
out:
	nl_close(&c);
	kfree(rx);
	while (!kthread_should_stop())
		usleep_range(1000, 2000);
	return 0;
}

static int race_set(struct kpx_net *kn, u32 i)
{
	struct kpx_be_cfg cfg[RACE_BE];
	struct kpx_svc_req req;
	struct kpx_key key;
	u8 a[16];
	u32 j;

	race_key(a, i);
	kpx_key_init(&key, AF_INET, IPPROTO_TCP, a, htons(80));
	for (j = 0; j < RACE_BE; j++) {
		memset(&cfg[j], 0, sizeof(cfg[j]));
		cfg[j].addr.bytes[0] = 10;
		cfg[j].addr.bytes[1] = 244;
		cfg[j].addr.bytes[2] = (u8)i;
		cfg[j].addr.bytes[3] = (u8)(j + 1);
		cfg[j].port = htons(8080);
		cfg[j].weight = 1;
		cfg[j].pos = j;
	}
	kpx_test_req(&req, &key, cfg, RACE_BE);
	return kpx_net_svc_set(kn, &req);
}

static void nl_dump_race_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct race_ctx *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct task_struct *t;
	struct kpx_key key;
	u32 i, k;
	u8 a[16];

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->test = test;
	for (i = 0; i < RACE_SVCS; i++)
		KUNIT_ASSERT_EQ(test, race_set(kn, i), 0);
	race = r;
	kpx_test_svc_hook = race_hook;
	t = kthread_run(race_dumper, r, "kpx_race_dump");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* delete and create again, front to back and back to front */
	for (k = 0; k < RACE_ROUNDS && !atomic_read(&r->bad); k++) {
		i = k % 2 ? RACE_SVCS - 1 - k % RACE_SVCS : k % RACE_SVCS;
		race_key(a, i);
		kpx_key_init(&key, AF_INET, IPPROTO_TCP, a, htons(80));
		KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &key), 0);
		KUNIT_EXPECT_EQ(test, race_set(kn, i), 0);
	}
	/* let a few dumps run on the quiet table too */
	msleep(50);
	atomic_set(&r->stop, 1);
	kthread_stop(t);
	kpx_test_svc_hook = NULL;
	race = NULL;
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&r->bad), 0, "%s", r->why);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->holds), 2 * k);
	KUNIT_EXPECT_GT(test, atomic_read(&r->dumps), 0);
	/* the window was exercised: dumps ran while creations were held */
	KUNIT_EXPECT_GT(test, atomic_read(&r->overlapped), 0);
	kunit_info(test, "%d dumps, %d during held creations, %d interrupted",
		   atomic_read(&r->dumps), atomic_read(&r->overlapped),
		   atomic_read(&r->intr));
}

static int nl_test_init(struct kunit *test)
{
	struct nl_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int err;

	if (!c)
		return -ENOMEM;
	c->rx = kunit_kzalloc(test, RX_SIZE, GFP_KERNEL);
	if (!c->rx)
		return -ENOMEM;
	test->priv = c;
	err = nl_open(c);
	if (err) {
		nl_close(c);
		return err;
	}
	/* The base frontend, created through the family as well. */
	err = send_req(test, c, KPX_CMD_SET_SERVICE, &base);
	if (err)
		kunit_err(test, "base SET: %d %s", err, c->msg);
	return err;
}

static void nl_test_exit(struct kunit *test)
{
	struct nl_ctx *c = test->priv;

	kpx_svc_flush(kpx_net(&init_net));
	if (c)
		nl_close(c);
}

static struct kunit_case nl_cases[] = {
	KUNIT_CASE_PARAM(nl_bad_set_test, bad_req_gen_params),
	KUNIT_CASE(nl_valid_set_test),
	KUNIT_CASE(nl_name_test),
	KUNIT_CASE(nl_ext_local_test),
	KUNIT_CASE(nl_del_test),
	KUNIT_CASE(nl_bad_config_test),
	KUNIT_CASE(nl_eperm_test),
	KUNIT_CASE(nl_ranges_match_test),
	KUNIT_CASE(nl_weights_per_set_test),
	KUNIT_CASE(nl_dump_race_test),
	{}
};

static struct kunit_suite nl_suite = {
	.name = "kpx_netlink",
	.init = nl_test_init,
	.exit = nl_test_exit,
	.suite_init = kpx_test_suite_init,
	.suite_exit = kpx_test_suite_exit,
	.test_cases = nl_cases,
};

kunit_test_suites(&nl_suite);
