// SPDX-License-Identifier: GPL-2.0-only
/*
 * KPX_CMD_GET's dump read back into frontends: the module's messages
 * parsed (a frontend's source ranges and backends may span several), and
 * the dump retried when a concurrent change interrupts it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/kpx.h>
#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>

#include "base/addr.h"
#include "base/log.h"
#include "dp/kpx/nl.h"
#include "dp/kpx/nl_priv.h"

/* Attempts of a dump before giving up on a table that keeps changing. */
#define KPX_NL_DUMP_TRIES 8

/* ---- dump ---- */

struct nla_policy kpx_nl_svc_policy[KPX_SVC_A_MAX + 1] = {
	[KPX_SVC_A_FAMILY] = { .type = NLA_U16 },
	[KPX_SVC_A_PROTOCOL] = { .type = NLA_U8 },
	[KPX_SVC_A_ADDR] = { .type = NLA_UNSPEC, .minlen = 4, .maxlen = 16 },
	[KPX_SVC_A_PORT] = { .type = NLA_U16 },
	[KPX_SVC_A_FLAGS] = { .type = NLA_U32 },
	[KPX_SVC_A_BACKENDS] = { .type = NLA_NESTED },
	[KPX_SVC_A_CONNS] = { .type = NLA_U64 },
	[KPX_SVC_A_REJECTS] = { .type = NLA_U64 },
	[KPX_SVC_A_SOURCE_RANGES] = { .type = NLA_NESTED },
	[KPX_SVC_A_SCHEDULER] = { .type = NLA_STRING },
	[KPX_SVC_A_MH_SIZE] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_TIMEOUT] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_MAX] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_EVICTIONS] = { .type = NLA_U64 },
	[KPX_SVC_A_CLUSTER_ADDR] = { .type = NLA_UNSPEC, .minlen = 4,
				     .maxlen = 16 },
	[KPX_SVC_A_CLUSTER_PORT] = { .type = NLA_U16 },
	[KPX_SVC_A_NAME] = { .type = NLA_STRING },
	[KPX_SVC_A_KIND] = { .type = NLA_U8 },
	[KPX_SVC_A_FILTERED] = { .type = NLA_U64 },
	[KPX_SVC_A_DROPS] = { .type = NLA_U64 },
};

static struct nla_policy cidr_policy[KPX_CIDR_A_MAX + 1] = {
	[KPX_CIDR_A_FAMILY] = { .type = NLA_U16 },
	[KPX_CIDR_A_ADDR] = { .type = NLA_UNSPEC, .minlen = 4, .maxlen = 16 },
	[KPX_CIDR_A_PREFIXLEN] = { .type = NLA_U8 },
};

int kpx_nl_parse_cidrs(struct nlattr *list, struct kpx_cidr **out, size_t *n)
{
	struct kpx_cidr *v;
	struct nlattr *a;
	size_t cnt = 0;
	int rem;

	*out = NULL;
	*n = 0;
	nla_for_each_nested(a, list, rem)
		cnt++;
	if (!cnt)
		return 0;
	v = calloc(cnt, sizeof(*v));
	if (!v)
		return -ENOMEM;
	nla_for_each_nested(a, list, rem) {
		struct nlattr *tb[KPX_CIDR_A_MAX + 1];
		struct kpx_cidr *c = &v[*n];
		size_t alen;

		if (nla_type(a) != KPX_CIDRS_A_CIDR)
			continue;
		if (nla_parse_nested(tb, KPX_CIDR_A_MAX, a, cidr_policy) < 0 ||
		    !tb[KPX_CIDR_A_FAMILY] || !tb[KPX_CIDR_A_ADDR] ||
		    !tb[KPX_CIDR_A_PREFIXLEN])
			goto bad;
		c->family = nla_get_u16(tb[KPX_CIDR_A_FAMILY]);
		alen = kpx_addr_len(c->family);
		if (!alen || (size_t)nla_len(tb[KPX_CIDR_A_ADDR]) != alen ||
		    nla_get_u8(tb[KPX_CIDR_A_PREFIXLEN]) > alen * 8)
			goto bad;
		memcpy(&c->addr, nla_data(tb[KPX_CIDR_A_ADDR]), alen);
		c->len = nla_get_u8(tb[KPX_CIDR_A_PREFIXLEN]);
		(*n)++;
	}
	*out = v;
	return 0;
bad:
	free(v);
	*n = 0;
	return -EBADMSG;
}

struct nla_policy kpx_nl_be_policy[KPX_BE_A_MAX + 1] = {
	[KPX_BE_A_ADDR] = { .type = NLA_UNSPEC, .minlen = 4, .maxlen = 16 },
	[KPX_BE_A_PORT] = { .type = NLA_U16 },
	[KPX_BE_A_WEIGHT] = { .type = NLA_U32 },
	[KPX_BE_A_CONNS] = { .type = NLA_U64 },
	[KPX_BE_A_ACTIVE] = { .type = NLA_U32 },
};

void kpx_nl_dump_reset(struct kpx_nl_dumpbuf *d)
{
	kpx_services_free(d->v, d->n);
	memset(d, 0, sizeof(*d));
}

/*
 * Appends the backends of nest @list to @s, or with @count_only adds their
 * number to s->nbackends (s->backends stays NULL).  -EBADMSG if malformed.
 */
static int parse_backends(struct kpx_service *s, struct nlattr *list,
			  bool count_only)
{
	size_t alen = kpx_addr_len(s->family), cnt = 0;
	struct kpx_backend *v;
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, list, rem)
		cnt += !count_only || nla_type(a) == KPX_BACKENDS_A_BACKEND;
	if (count_only) {
		s->nbackends += cnt;
		return 0;
	}
	if (!cnt)
		return 0;
	v = realloc(s->backends, (s->nbackends + cnt) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->backends = v;
	nla_for_each_nested(a, list, rem) {
		struct nlattr *tb[KPX_BE_A_MAX + 1];
		struct kpx_backend *b = &s->backends[s->nbackends];
		const struct kpx_nl_counter *c;

		if (nla_type(a) != KPX_BACKENDS_A_BACKEND)
			continue;
		if (nla_parse_nested(tb, KPX_BE_A_MAX, a, kpx_nl_be_policy) < 0 ||
		    !tb[KPX_BE_A_ADDR] || !tb[KPX_BE_A_PORT] ||
		    (size_t)nla_len(tb[KPX_BE_A_ADDR]) != alen)
			return -EBADMSG;
		memset(b, 0, sizeof(*b));
		memcpy(&b->addr, nla_data(tb[KPX_BE_A_ADDR]), alen);
		b->port = ntohs(nla_get_u16(tb[KPX_BE_A_PORT]));
		b->weight = tb[KPX_BE_A_WEIGHT] ?
			    nla_get_u32(tb[KPX_BE_A_WEIGHT]) : 1;
		for (c = kpx_nl_backend_counters; c->name; c++)
			if (tb[c->attr])
				kpx_nl_counter_parse(c, b, tb[c->attr]);
		s->nbackends++;
	}
	return 0;
}

/*
 * One dumped frontend.  A frontend repeated in the next message (same key)
 * is taken as a continuation carrying more backends, so a module that splits
 * a large backend set over several messages is read correctly.  Backends in
 * top-level KPX_A_BACKENDS nests (the SET layout) are appended too.
 */
int kpx_nl_parse_service(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *stb[KPX_SVC_A_MAX + 1];
	struct kpx_nl_dumpbuf *d = arg;
	const struct kpx_nl_counter *c;
	struct kpx_service s = { 0 }, *cur;
	struct nlattr *a;
	size_t alen;
	int ret, rem;

	ret = genlmsg_parse(nlh, 0, tb, KPX_A_MAX, NULL);
	if (ret < 0)
		return -EBADMSG;
	if (!tb[KPX_A_SERVICE])
		return 0;
	if (nla_parse_nested(stb, KPX_SVC_A_MAX, tb[KPX_A_SERVICE],
			     kpx_nl_svc_policy) < 0)
		return -EBADMSG;
	if (!stb[KPX_SVC_A_FAMILY] || !stb[KPX_SVC_A_PROTOCOL] ||
	    !stb[KPX_SVC_A_ADDR] || !stb[KPX_SVC_A_PORT])
		return -EBADMSG;
	s.family = nla_get_u16(stb[KPX_SVC_A_FAMILY]);
	alen = kpx_addr_len(s.family);
	if (!alen || (size_t)nla_len(stb[KPX_SVC_A_ADDR]) != alen)
		return -EBADMSG;
	s.protocol = nla_get_u8(stb[KPX_SVC_A_PROTOCOL]);
	memcpy(&s.addr, nla_data(stb[KPX_SVC_A_ADDR]), alen);
	s.port = ntohs(nla_get_u16(stb[KPX_SVC_A_PORT]));
	if (stb[KPX_SVC_A_FLAGS])
		s.flags = nla_get_u32(stb[KPX_SVC_A_FLAGS]);
	for (c = kpx_nl_frontend_counters; c->name; c++)
		if (stb[c->attr])
			kpx_nl_counter_parse(c, &s, stb[c->attr]);
	if (stb[KPX_SVC_A_SCHEDULER])
		nla_strlcpy(s.scheduler, stb[KPX_SVC_A_SCHEDULER],
			    sizeof(s.scheduler));
	if (stb[KPX_SVC_A_MH_SIZE])
		s.mh_size = nla_get_u32(stb[KPX_SVC_A_MH_SIZE]);
	if (stb[KPX_SVC_A_AFFINITY_TIMEOUT])
		s.affinity_timeout = nla_get_u32(stb[KPX_SVC_A_AFFINITY_TIMEOUT]);
	if (stb[KPX_SVC_A_AFFINITY_MAX])
		s.affinity_max = nla_get_u32(stb[KPX_SVC_A_AFFINITY_MAX]);
	if (stb[KPX_SVC_A_AFFINITY_EVICTIONS])
		s.affinity_evictions =
			nla_get_u64(stb[KPX_SVC_A_AFFINITY_EVICTIONS]);
	if (stb[KPX_SVC_A_CLUSTER_ADDR] && stb[KPX_SVC_A_CLUSTER_PORT]) {
		if ((size_t)nla_len(stb[KPX_SVC_A_CLUSTER_ADDR]) != alen)
			return -EBADMSG;
		memcpy(&s.cluster_addr, nla_data(stb[KPX_SVC_A_CLUSTER_ADDR]),
		       alen);
		s.cluster_port = ntohs(nla_get_u16(stb[KPX_SVC_A_CLUSTER_PORT]));
	}

	if (d->n && !kpx_service_key_cmp(&d->v[d->n - 1], &s)) {
		cur = &d->v[d->n - 1];
	} else {
		if (d->n == d->cap) {
			size_t cap = d->cap ? d->cap * 2 : 16;
			struct kpx_service *v = realloc(d->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			d->v = v;
			d->cap = cap;
		}
		cur = &d->v[d->n++];
		*cur = s;
		/* a module with names always says the kind; "" for no name */
		if (stb[KPX_SVC_A_KIND]) {
			cur->kind = nla_get_u8(stb[KPX_SVC_A_KIND]);
			cur->name = stb[KPX_SVC_A_NAME] ?
				    strndup(nla_data(stb[KPX_SVC_A_NAME]),
					    (size_t)nla_len(stb[KPX_SVC_A_NAME])) :
				    strdup("");
			if (!cur->name)
				return -ENOMEM;
		}
	}
	/*
	 * The module sends a long range list over several messages, before
	 * any backend: they extend the list.  Ranges in a message that
	 * follows backends repeat the list (modules that put all of it in
	 * every message) and are skipped.
	 */
	if (stb[KPX_SVC_A_SOURCE_RANGES] && !cur->nbackends) {
		struct kpx_cidr *more, *v;
		size_t nmore;

		ret = kpx_nl_parse_cidrs(stb[KPX_SVC_A_SOURCE_RANGES], &more,
					 &nmore);
		if (ret)
			return ret;
		if (!cur->source_ranges) {
			cur->source_ranges = more;
			cur->nsource_ranges = nmore;
		} else if (nmore) {
			v = realloc(cur->source_ranges,
				    (cur->nsource_ranges + nmore) * sizeof(*v));
			if (!v) {
				free(more);
				return -ENOMEM;
			}
			memcpy(v + cur->nsource_ranges, more,
			       nmore * sizeof(*v));
			cur->source_ranges = v;
			cur->nsource_ranges += nmore;
			free(more);
		} else {
			free(more);
		}
	}
	if (stb[KPX_SVC_A_BACKENDS]) {
		ret = parse_backends(cur, stb[KPX_SVC_A_BACKENDS],
				     d->count_backends);
		if (ret)
			return ret;
	}
	/* Top-level KPX_A_BACKENDS extend the list, as in a SET. */
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlh), 0),
			  genlmsg_attrlen(nlmsg_data(nlh), 0), rem) {
		if (nla_type(a) != KPX_A_BACKENDS)
			continue;
		ret = parse_backends(cur, a, d->count_backends);
		if (ret)
			return ret;
	}
	return 0;
}

static int dump(struct kpx_nl *nl, struct kpx_service **out, size_t *n,
		bool count_backends)
{
	struct kpx_nl_dumpbuf d = { .count_backends = count_backends };
	int ret = -EAGAIN;

	nl->g.errmsg[0] = '\0';
	for (int tries = 0; tries < KPX_NL_DUMP_TRIES; tries++) {
		struct kpx_genl_req r = { .parse = kpx_nl_parse_service, .arg = &d };
		struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_GET_SERVICE,
					     NLM_F_DUMP, 64);

		if (!msg) {
			ret = -ENOMEM;
			break;
		}
		ret = kpx_nl_transact(nl, msg, &r);
		if (!ret && r.intr) {
			kpx_dbg(2, "nl", "dump interrupted, retrying (%d)",
				tries + 1);
			kpx_nl_dump_reset(&d);
			d.count_backends = count_backends;
			ret = -EAGAIN;
			continue;
		}
		break;
	}
	if (ret) {
		kpx_nl_dump_reset(&d);
		return ret;
	}
	for (size_t i = 0; i < d.n && !count_backends; i++)
		kpx_service_normalize(&d.v[i], kpx_addr_len(d.v[i].family));
	*out = d.v;
	*n = d.n;
	return 0;
}

int kpx_nl_dump(struct kpx_nl *nl, struct kpx_service **out, size_t *n)
{
	return dump(nl, out, n, false);
}

int kpx_nl_dump_frontends(struct kpx_nl *nl, struct kpx_service **out,
			  size_t *n)
{
	return dump(nl, out, n, true);
}

