// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_genl: kselftest of the kpx generic netlink family (uapi/linux/kpx.h)
 * with raw libnl messages, so that malformed requests can be sent: each
 * invalid request must fail with EINVAL and a specific extack message and
 * leave the frontends unchanged (dump before == dump after); mutations
 * without CAP_NET_ADMIN fail with EPERM while dumps and stats still work.
 * Runs only in the kpx test VM with the module loaded, as root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/kpx.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "kselftest_harness.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

struct conn {
	struct nl_sock *sk;
	int family;
	int error;		/* last kernel error, as a negative errno */
	bool done;		/* the ack/error of the request arrived */
	char extack[256];	/* last extack message, "" if none */
	char *dump;		/* text form of the last dump */
	size_t dump_len;
	int dump_services, dump_backends, dump_msgs;
	char last_key[128];	/* key of the last dumped message */
};

/* --- replies ----------------------------------------------------------- */

static void save_extack(struct conn *c, struct nlmsgerr *e, struct nlmsghdr *nlh)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX,
				  (struct nlattr *)((char *)e + off), len, NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(c->extack, sizeof(c->extack), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct conn *c = arg;

	(void)who;
	c->error = e->error;
	c->done = true;
	save_extack(c, e, (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN));
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct conn *)arg)->error = 0;
	((struct conn *)arg)->done = true;
	return NL_STOP;
}

static void dump_append(struct conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void dump_append(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	char line[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->dump = realloc(c->dump, c->dump_len + (size_t)n + 1);
	if (!c->dump)
		abort();
	memcpy(c->dump + c->dump_len, line, (size_t)n + 1);
	c->dump_len += (size_t)n;
}

static const char *addr_text(const struct nlattr *a, char *buf)
{
	if (!a)
		return "-";
	if (nla_len(a) == 4)
		return inet_ntop(AF_INET, nla_data(a), buf, INET6_ADDRSTRLEN);
	if (nla_len(a) == 16)
		return inet_ntop(AF_INET6, nla_data(a), buf, INET6_ADDRSTRLEN);
	return "?";
}

/* One frontend of a dump, as one text line (counters included). */
static int on_service(struct nl_msg *msg, void *arg)
{
	struct conn *c = arg;
	struct nlattr *top[KPX_A_MAX + 1], *tb[KPX_SVC_A_MAX + 1];
	struct nlattr *be[KPX_BE_A_MAX + 1], *a;
	char buf[INET6_ADDRSTRLEN], key[128];
	int rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, top, KPX_A_MAX, NULL) ||
	    !top[KPX_A_SERVICE] ||
	    nla_parse_nested(tb, KPX_SVC_A_MAX, top[KPX_A_SERVICE], NULL)) {
		dump_append(c, "unparsable message\n");
		return NL_OK;
	}
	c->dump_msgs++;
	snprintf(key, sizeof(key), "fam=%u proto=%u vip=%s port=%u",
		 tb[KPX_SVC_A_FAMILY] ? nla_get_u16(tb[KPX_SVC_A_FAMILY]) : 0,
		 tb[KPX_SVC_A_PROTOCOL] ? nla_get_u8(tb[KPX_SVC_A_PROTOCOL]) : 0,
		 addr_text(tb[KPX_SVC_A_ADDR], buf),
		 tb[KPX_SVC_A_PORT] ? ntohs(nla_get_u16(tb[KPX_SVC_A_PORT])) : 0);
	if (c->dump_len && !strcmp(key, c->last_key)) {
		/* A continuation: more backends of the same frontend. */
		c->dump_len--;
	} else {
		c->dump_services++;
		snprintf(c->last_key, sizeof(c->last_key), "%s", key);
		dump_append(c, "%s flags=%u conns=%llu rejects=%llu:", key,
			    tb[KPX_SVC_A_FLAGS] ? nla_get_u32(tb[KPX_SVC_A_FLAGS]) : 0,
			    tb[KPX_SVC_A_CONNS] ? (unsigned long long)nla_get_u64(tb[KPX_SVC_A_CONNS]) : 0,
			    tb[KPX_SVC_A_REJECTS] ? (unsigned long long)nla_get_u64(tb[KPX_SVC_A_REJECTS]) : 0);
	}
	if (tb[KPX_SVC_A_BACKENDS]) {
		nla_for_each_nested(a, tb[KPX_SVC_A_BACKENDS], rem) {
			if (nla_parse_nested(be, KPX_BE_A_MAX, a, NULL))
				continue;
			c->dump_backends++;
			dump_append(c, " %s/%u/w%u",
				    addr_text(be[KPX_BE_A_ADDR], buf),
				    be[KPX_BE_A_PORT] ? ntohs(nla_get_u16(be[KPX_BE_A_PORT])) : 0,
				    be[KPX_BE_A_WEIGHT] ? nla_get_u32(be[KPX_BE_A_WEIGHT]) : 0);
		}
	}
	dump_append(c, "\n");
	return NL_OK;
}

/* NLMSG_DONE: its payload is the dump's status (0 or -errno). */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct conn *c = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	if (nlmsg_datalen(nlh) >= (int)sizeof(int) &&
	    *(int *)nlmsg_data(nlh) < 0)
		c->error = *(int *)nlmsg_data(nlh);
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		c->error = -EINTR;
	c->done = true;
	return NL_STOP;
}

/* --- requests ---------------------------------------------------------- */

static int conn_open(struct conn *c)
{
	int one = 1;

	memset(c, 0, sizeof(*c));
	c->sk = nl_socket_alloc();
	if (!c->sk || genl_connect(c->sk))
		return -ENOTCONN;
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	/* Large requests (thousands of backends) must fit the send buffer. */
	nl_socket_set_buffer_size(c->sk, 4 << 20, 4 << 20);
	nl_socket_set_msg_buf_size(c->sk, 64 << 10);
	c->family = genl_ctrl_resolve(c->sk, KPX_GENL_NAME);
	if (c->family < 0)
		return -ENOENT;
	nl_socket_modify_err_cb(c->sk, NL_CB_CUSTOM, on_error, c);
	nl_socket_modify_cb(c->sk, NL_CB_ACK, NL_CB_CUSTOM, on_ack, c);
	nl_socket_modify_cb(c->sk, NL_CB_VALID, NL_CB_CUSTOM, on_service, c);
	nl_socket_modify_cb(c->sk, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, c);
	return 0;
}

static void conn_close(struct conn *c)
{
	nl_socket_free(c->sk);
	free(c->dump);
	c->sk = NULL;
	c->dump = NULL;
}

static struct nl_msg *new_req(struct conn *c, uint8_t cmd, int flags)
{
	struct nl_msg *m = nlmsg_alloc_size(1 << 20);

	if (m && !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
			      flags, cmd, KPX_GENL_VERSION)) {
		nlmsg_free(m);
		m = NULL;
	}
	return m;
}

/* Sends @m (freed) and waits for the ack: 0 or the kernel's -errno. */
static int request(struct conn *c, struct nl_msg *m)
{
	int err;

	c->error = -EIO;
	c->done = false;
	c->extack[0] = '\0';
	err = nl_send_auto(c->sk, m);
	nlmsg_free(m);
	if (err < 0)
		return -EMSGSIZE;
	/* A doit with a reply (GET_STATS) sends it before the ack. */
	while (!c->done)
		if (nl_recvmsgs_default(c->sk) < 0 && !c->done)
			break;
	return c->error;
}

/* Dumps the frontends into c->dump; 0 or -errno. */
static int dump(struct conn *c)
{
	struct nl_msg *m = new_req(c, KPX_CMD_GET_SERVICE, NLM_F_DUMP);

	free(c->dump);
	c->dump = strdup("");
	c->dump_len = 0;
	c->dump_services = c->dump_backends = c->dump_msgs = 0;
	c->last_key[0] = '\0';
	c->error = 0;
	c->done = false;
	c->extack[0] = '\0';
	if (!m || nl_send_auto(c->sk, m) < 0) {
		nlmsg_free(m);
		return -EIO;
	}
	nlmsg_free(m);
	while (!c->done)
		if (nl_recvmsgs_default(c->sk) < 0 && !c->done)
			break;
	return c->done ? c->error : -EIO;
}

static int put_addr(struct nl_msg *m, int type, const char *text)
{
	unsigned char a[16];

	if (strchr(text, ':')) {
		if (inet_pton(AF_INET6, text, a) != 1)
			return -EINVAL;
		return nla_put(m, type, 16, a);
	}
	if (inet_pton(AF_INET, text, a) != 1)
		return -EINVAL;
	return nla_put(m, type, 4, a);
}

/* Key attributes; a negative @family/@proto/@port or NULL @vip omits it. */
static void put_key(struct nl_msg *m, int family, int proto, const char *vip,
		    int port)
{
	if (family >= 0)
		nla_put_u16(m, KPX_SVC_A_FAMILY, (uint16_t)family);
	if (proto >= 0)
		nla_put_u8(m, KPX_SVC_A_PROTOCOL, (uint8_t)proto);
	if (vip)
		put_addr(m, KPX_SVC_A_ADDR, vip);
	if (port >= 0)
		nla_put_u16(m, KPX_SVC_A_PORT, htons((uint16_t)port));
}

/* A backend; @weight 0 omits the attribute, < 0 puts 0. */
static int put_be(struct nl_msg *m, const char *addr, int port, long weight)
{
	struct nlattr *n = nla_nest_start(m, KPX_BACKENDS_A_BACKEND);

	if (!n)
		return -EMSGSIZE;
	put_addr(m, KPX_BE_A_ADDR, addr);
	nla_put_u16(m, KPX_BE_A_PORT, htons((uint16_t)port));
	if (weight)
		nla_put_u32(m, KPX_BE_A_WEIGHT, weight < 0 ? 0 : (uint32_t)weight);
	return nla_nest_end(m, n);
}

/* SET of a v4/v6 TCP frontend with @n generated backends 10.244.x.y:8080. */
static int set_many(struct conn *c, const char *vip, int n, int dup_last)
{
	struct nl_msg *m = new_req(c, KPX_CMD_SET_SERVICE, 0);
	struct nlattr *svc, *list;
	char addr[64];
	int i, err = 0;

	svc = nla_nest_start(m, KPX_A_SERVICE);
	put_key(m, strchr(vip, ':') ? AF_INET6 : AF_INET, IPPROTO_TCP, vip, 80);
	list = nla_nest_start(m, KPX_SVC_A_BACKENDS);
	for (i = 0; i < n && !err; i++) {
		int k = (dup_last && i == n - 1) ? 0 : i;

		if (strchr(vip, ':'))
			snprintf(addr, sizeof(addr), "fd00:10:244::%x", k + 1);
		else
			snprintf(addr, sizeof(addr), "10.244.%d.%d",
				 (k + 1) / 250, (k + 1) % 250 + 1);
		err = put_be(m, addr, 8080, 0);
	}
	if (!err)
		err = nla_nest_end(m, list);
	if (!err)
		err = nla_nest_end(m, svc);
	if (err) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return request(c, m);
}

static bool matches(const char *text, const char *ere)
{
	regex_t re;
	bool ok;

	if (regcomp(&re, ere, REG_EXTENDED | REG_ICASE | REG_NOSUB))
		return false;
	ok = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

/* Removes CAP_NET_ADMIN from this (forked test) process, staying uid 0. */
static int drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_NET_ADMIN / 32].effective &= ~(1U << (CAP_NET_ADMIN % 32));
	data[CAP_NET_ADMIN / 32].permitted &= ~(1U << (CAP_NET_ADMIN % 32));
	data[CAP_NET_ADMIN / 32].inheritable &= ~(1U << (CAP_NET_ADMIN % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/* Becomes nobody (uid/gid 65534), which has no capability at all. */
static int become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return -errno;
	return 0;
}

/* --- tests ------------------------------------------------------------- */

FIXTURE(kpx) {
	struct conn c;
	char before[4096];
};

/* Every test starts from one known frontend, so "unchanged" means something. */
FIXTURE_SETUP(kpx)
{
	struct nl_msg *m;
	struct nlattr *svc, *list;

	ASSERT_EQ(0, conn_open(&self->c)) TH_LOG("kpx family not found: module loaded?");
	m = new_req(&self->c, KPX_CMD_FLUSH, 0);
	ASSERT_EQ(0, request(&self->c, m));
	m = new_req(&self->c, KPX_CMD_SET_SERVICE, 0);
	svc = nla_nest_start(m, KPX_A_SERVICE);
	put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.40", 80);
	list = nla_nest_start(m, KPX_SVC_A_BACKENDS);
	put_be(m, "10.244.1.2", 8080, 0);
	put_be(m, "10.244.2.2", 8080, 3);
	nla_nest_end(m, list);
	nla_nest_end(m, svc);
	ASSERT_EQ(0, request(&self->c, m)) TH_LOG("baseline set: %s", self->c.extack);
	ASSERT_EQ(0, dump(&self->c));
	ASSERT_EQ(1, self->c.dump_services);
	ASSERT_EQ(2, self->c.dump_backends);
	ASSERT_LT(self->c.dump_len, sizeof(self->before));
	strcpy(self->before, self->c.dump);
	TH_LOG("baseline: %s", self->before);
}

FIXTURE_TEARDOWN(kpx)
{
	struct conn c;

	/* The test may have dropped privileges: flush with a fresh socket. */
	if (conn_open(&c) == 0) {
		request(&c, new_req(&c, KPX_CMD_FLUSH, 0));
		conn_close(&c);
	}
	conn_close(&self->c);
}

/*
 * Sends a SET built by @body and checks: EINVAL, an extack message matching
 * @ere, dump unchanged.
 */
#define EXPECT_INVALID(body, ere) do {						\
	struct nl_msg *m = new_req(&self->c, KPX_CMD_SET_SERVICE, 0);		\
	struct nlattr *svc = nla_nest_start(m, KPX_A_SERVICE);			\
	int err;								\
	body;									\
	nla_nest_end(m, svc);							\
	err = request(&self->c, m);						\
	TH_LOG("error %d extack \"%s\"", err, self->c.extack);			\
	EXPECT_EQ(-EINVAL, err);						\
	EXPECT_NE(0, (int)strlen(self->c.extack));				\
	EXPECT_TRUE(matches(self->c.extack, ere))				\
		TH_LOG("extack \"%s\" does not match /%s/", self->c.extack, ere); \
	ASSERT_EQ(0, dump(&self->c));						\
	EXPECT_STREQ(self->before, self->c.dump);				\
} while (0)

TEST_F(kpx, missing_port)
{
	EXPECT_INVALID(put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", -1),
		       "missing|required|key|port");
}

TEST_F(kpx, missing_family)
{
	EXPECT_INVALID(put_key(m, -1, IPPROTO_TCP, "10.96.0.41", 80),
		       "missing|required|key|famil");
}

TEST_F(kpx, missing_addr)
{
	EXPECT_INVALID(put_key(m, AF_INET, IPPROTO_TCP, NULL, 80),
		       "missing|required|key|addr");
}

TEST_F(kpx, wrong_family)
{
	EXPECT_INVALID(put_key(m, AF_UNIX, IPPROTO_TCP, "10.96.0.41", 80),
		       "famil");
}

TEST_F(kpx, addr_length_mismatch)
{
	EXPECT_INVALID(put_key(m, AF_INET6, IPPROTO_TCP, "10.96.0.41", 80),
		       "addr|length|famil");
}

TEST_F(kpx, wrong_protocol)
{
	EXPECT_INVALID(put_key(m, AF_INET, IPPROTO_ICMP, "10.96.0.41", 80),
		       "proto");
}

TEST_F(kpx, port_zero)
{
	EXPECT_INVALID(put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", 0),
		       "port");
}

TEST_F(kpx, unknown_flag)
{
	EXPECT_INVALID({
		put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", 80);
		nla_put_u32(m, KPX_SVC_A_FLAGS, 1U << 31);
	}, "flag|mask|bit|unsupported|invalid");
}

TEST_F(kpx, backend_port_zero)
{
	EXPECT_INVALID({
		struct nlattr *l;

		put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", 80);
		l = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		put_be(m, "10.244.1.2", 8080, 0);
		put_be(m, "10.244.2.2", 0, 0);
		nla_nest_end(m, l);
	}, "port");
}

TEST_F(kpx, backend_family_mismatch)
{
	EXPECT_INVALID({
		struct nlattr *l;

		put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", 80);
		l = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		put_be(m, "fd00:10:244:1::2", 8080, 0);
		nla_nest_end(m, l);
	}, "addr|length|famil");
}

TEST_F(kpx, backend_weight_zero)
{
	EXPECT_INVALID({
		struct nlattr *l;

		put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", 80);
		l = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		put_be(m, "10.244.1.2", 8080, -1);
		nla_nest_end(m, l);
	}, "weight|range|small|min");
}

TEST_F(kpx, backend_weight_too_big)
{
	EXPECT_INVALID({
		struct nlattr *l;

		put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", 80);
		l = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		put_be(m, "10.244.1.2", 8080, KPX_WEIGHT_MAX + 1L);
		nla_nest_end(m, l);
	}, "weight|range|large|max");
}

TEST_F(kpx, duplicate_backend)
{
	EXPECT_INVALID({
		struct nlattr *l;

		put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.41", 80);
		l = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		put_be(m, "10.244.1.2", 8080, 0);
		put_be(m, "10.244.2.2", 8080, 0);
		put_be(m, "10.244.1.2", 8080, 5);
		nla_nest_end(m, l);
	}, "dup|repeat|twice");
}

/* Replacing the baseline with a duplicate list must not touch it either. */
TEST_F(kpx, duplicate_backend_on_existing_frontend)
{
	EXPECT_INVALID({
		struct nlattr *l;

		put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.40", 80);
		l = nla_nest_start(m, KPX_SVC_A_BACKENDS);
		put_be(m, "10.244.3.2", 8080, 0);
		put_be(m, "10.244.3.2", 8080, 0);
		nla_nest_end(m, l);
	}, "dup|repeat|twice");
}

/*
 * More than KPX_BACKENDS_MAX backends: an IPv4 backend nest takes at least
 * 20 bytes, so the list exceeds the 64 KiB a netlink attribute can hold and
 * cannot even be encoded; either way nothing may change.
 */
TEST_F(kpx, oversized_backend_list)
{
	int err = set_many(&self->c, "10.96.0.41", KPX_BACKENDS_MAX + 1, 0);

	TH_LOG("%d backends: error %d extack \"%s\"", KPX_BACKENDS_MAX + 1,
	       err, self->c.extack);
	EXPECT_TRUE(err == -EMSGSIZE || err == -EINVAL);
	if (err == -EINVAL)
		EXPECT_TRUE(matches(self->c.extack, "many|max|backend"));
	ASSERT_EQ(0, dump(&self->c));
	EXPECT_STREQ(self->before, self->c.dump);
}

/* A large but encodable set (1000 backends) is accepted and dumped back. */
TEST_F(kpx, large_backend_set_roundtrip)
{
	int err = set_many(&self->c, "10.96.0.42", 1000, 0);

	EXPECT_EQ(0, err) TH_LOG("extack \"%s\"", self->c.extack);
	err = dump(&self->c);
	EXPECT_EQ(0, err) TH_LOG("dump: extack \"%s\"", self->c.extack);
	EXPECT_EQ(2, self->c.dump_services) TH_LOG("dump: %.300s", self->c.dump);
	EXPECT_EQ(1002, self->c.dump_backends);
	TH_LOG("1002 backends came in %d messages", self->c.dump_msgs);
	/* And a duplicate in a set that large is still found. */
	err = set_many(&self->c, "10.96.0.43", 1000, 1);
	EXPECT_EQ(-EINVAL, err);
	EXPECT_TRUE(matches(self->c.extack, "dup|repeat|twice"))
		TH_LOG("extack \"%s\"", self->c.extack);
}

TEST_F(kpx, del_missing_is_enoent)
{
	struct nl_msg *m = new_req(&self->c, KPX_CMD_DEL_SERVICE, 0);
	struct nlattr *svc = nla_nest_start(m, KPX_A_SERVICE);

	put_key(m, AF_INET, IPPROTO_UDP, "10.96.0.40", 80);
	nla_nest_end(m, svc);
	EXPECT_EQ(-ENOENT, request(&self->c, m));
	ASSERT_EQ(0, dump(&self->c));
	EXPECT_STREQ(self->before, self->c.dump);
}

/* What an unprivileged child saw (negative errnos; dump_same 1 if equal). */
struct unpriv_result {
	int drop, set, del, flush, stats, dump, dump_same;
};

/*
 * Mutations need CAP_NET_ADMIN; dump and stats do not.  The checks run in
 * a child that drops the privilege, so that the fixture's teardown (in
 * this process) can still flush.
 */
static struct unpriv_result unprivileged(int (*drop)(void), const char *before)
{
	struct unpriv_result r = { .drop = -EIO };
	struct nl_msg *m;
	struct nlattr *svc;
	struct conn c;
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return r;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		r.drop = drop();
		if (!r.drop && conn_open(&c) == 0) {
			m = new_req(&c, KPX_CMD_SET_SERVICE, 0);
			svc = nla_nest_start(m, KPX_A_SERVICE);
			put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.44", 80);
			nla_nest_end(m, svc);
			r.set = request(&c, m);
			m = new_req(&c, KPX_CMD_DEL_SERVICE, 0);
			svc = nla_nest_start(m, KPX_A_SERVICE);
			put_key(m, AF_INET, IPPROTO_TCP, "10.96.0.40", 80);
			nla_nest_end(m, svc);
			r.del = request(&c, m);
			r.flush = request(&c, new_req(&c, KPX_CMD_FLUSH, 0));
			r.stats = request(&c, new_req(&c, KPX_CMD_GET_STATS, 0));
			r.dump = dump(&c);
			r.dump_same = c.dump && !strcmp(before, c.dump);
			conn_close(&c);
		}
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &r, sizeof(r)) != sizeof(r))
		r.drop = -EIO;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r;
}

#define EXPECT_UNPRIVILEGED(r) do {					\
	ASSERT_EQ(0, (r).drop);						\
	EXPECT_EQ(-EPERM, (r).set);					\
	EXPECT_EQ(-EPERM, (r).del);					\
	EXPECT_EQ(-EPERM, (r).flush);					\
	EXPECT_EQ(0, (r).stats);					\
	EXPECT_EQ(0, (r).dump);						\
	EXPECT_EQ(1, (r).dump_same);					\
	ASSERT_EQ(0, dump(&self->c));					\
	EXPECT_STREQ(self->before, self->c.dump);			\
} while (0)

TEST_F(kpx, root_without_cap_net_admin)
{
	struct unpriv_result r = unprivileged(drop_net_admin, self->before);

	EXPECT_UNPRIVILEGED(r);
}

static int become_nobody_checked(void)
{
	int err = become_nobody();

	return err ? err : (getuid() == 65534 ? 0 : -EPERM);
}

TEST_F(kpx, nobody)
{
	struct unpriv_result r = unprivileged(become_nobody_checked,
					      self->before);

	EXPECT_UNPRIVILEGED(r);
}

/* Runs before the harness's main (kselftest_harness.h defines main). */
static void __attribute__((constructor(200))) guest_only(void)
{
	kpx_require_guest("kpx_genl");
}

TEST_HARNESS_MAIN
