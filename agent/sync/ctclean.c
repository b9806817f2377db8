// SPDX-License-Identifier: GPL-2.0-only
/*
 * Userspace conntrack cleanup after a sync (see ctclean.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "sync/ctclean.h"
#include "base/log.h"

void kpx_ct_plan_free(struct kpx_ct_plan *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static size_t addr_len(int family)
{
	return family == AF_INET ? sizeof(struct in_addr) : sizeof(struct in6_addr);
}

static bool ct_proto(uint8_t protocol)
{
	return protocol == IPPROTO_UDP || protocol == IPPROTO_SCTP;
}

/* Appends a rule for frontend @s; @be NULL unless KPX_CT_BACKEND. */
static int add_rule(struct kpx_ct_plan *p, const struct kpx_service *s,
		    enum kpx_ct_kind kind, const struct kpx_backend *be)
{
	struct kpx_ct_rule *r;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct kpx_ct_rule *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	r = &p->v[p->n++];
	memset(r, 0, sizeof(*r));
	r->family = s->family;
	r->protocol = s->protocol;
	memcpy(&r->vip, &s->addr, addr_len(s->family));
	r->port = s->port;
	r->kind = kind;
	if (be) {
		memcpy(&r->be, &be->addr, addr_len(s->family));
		r->be_port = be->port;
	}
	p->sorted = false;
	return 0;
}

/* Is @be (addr and port) in @s's sorted backend list? */
static bool has_backend(const struct kpx_service *s, const struct kpx_backend *be)
{
	return s && s->nbackends &&
	       bsearch(be, s->backends, s->nbackends, sizeof(*be), kpx_backend_cmp);
}

int kpx_ct_plan_change(struct kpx_ct_plan *p, const struct kpx_service *old,
		       const struct kpx_service *cur)
{
	const struct kpx_service *s = cur ? cur : old;
	size_t i;
	int n = 0;

	if (!s || !ct_proto(s->protocol))
		return 0;
	if (!cur)
		return add_rule(p, old, KPX_CT_ALL, NULL) ? -ENOMEM : 1;
	for (i = 0; old && i < old->nbackends; i++) {
		if (has_backend(cur, &old->backends[i]))
			continue;
		if (add_rule(p, cur, KPX_CT_BACKEND, &old->backends[i]))
			return -ENOMEM;
		n++;
	}
	if (cur->nbackends && (!old || !old->nbackends)) {
		if (add_rule(p, cur, KPX_CT_UNTRANSLATED, NULL))
			return -ENOMEM;
		n++;
	}
	return n;
}

static int svc_key_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

long kpx_ct_plan_ops(struct kpx_ct_plan *p, const struct kpx_op *ops,
		     size_t nops, const bool *applied,
		     const struct kpx_service *actual, size_t nactual)
{
	const struct kpx_service *old;
	long total = 0;
	size_t i;
	int r;

	for (i = 0; i < nops; i++) {
		if (!applied[i] || !ct_proto(ops[i].service->protocol))
			continue;
		old = nactual ? bsearch(ops[i].service, actual, nactual,
					sizeof(*actual), svc_key_cmp) : NULL;
		if (ops[i].type == KPX_OP_DEL)
			r = old ? kpx_ct_plan_change(p, old, NULL) : 0;
		else
			r = kpx_ct_plan_change(p, old, ops[i].service);
		if (r < 0)
			return r;
		total += r;
	}
	return total;
}

/* Orders rules by frontend key (family, protocol, VIP, port) only. */
static int rule_key_cmp(const void *a, const void *b)
{
	const struct kpx_ct_rule *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->protocol != y->protocol)
		return x->protocol < y->protocol ? -1 : 1;
	r = memcmp(&x->vip, &y->vip, sizeof(x->vip));
	if (r)
		return r;
	return (int)x->port - (int)y->port;
}

static bool rule_match(const struct kpx_ct_rule *r, const struct kpx_ct_tuple *t)
{
	size_t len = addr_len(r->family);

	switch (r->kind) {
	case KPX_CT_ALL:
		return true;
	case KPX_CT_BACKEND:
		return t->reply_sport == r->be_port &&
		       !memcmp(&t->reply_src, &r->be, len);
	case KPX_CT_UNTRANSLATED:
		return t->reply_sport == r->port &&
		       !memcmp(&t->reply_src, &r->vip, len);
	}
	return false;
}

bool kpx_ct_plan_match(struct kpx_ct_plan *p, const struct kpx_ct_tuple *t)
{
	struct kpx_ct_rule key;
	size_t lo = 0, hi = p->n;

	if (!p->n || (t->family != AF_INET && t->family != AF_INET6))
		return false;
	if (!p->sorted) {
		qsort(p->v, p->n, sizeof(*p->v), rule_key_cmp);
		p->sorted = true;
	}
	memset(&key, 0, sizeof(key));
	key.family = t->family;
	key.protocol = t->protocol;
	memcpy(&key.vip, &t->orig_dst, addr_len(t->family));
	key.port = t->orig_dport;
	/* first rule with this key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rule_key_cmp(&p->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < p->n && !rule_key_cmp(&p->v[lo], &key); lo++)
		if (rule_match(&p->v[lo], t))
			return true;
	return false;
}

/* --- ctnetlink -------------------------------------------------------- */

struct kpx_ctclean {
	struct nfct_handle *dump;	/* the table dump */
	struct nfct_handle *del;	/* deletions, while the dump runs */
};

struct kpx_ctclean *kpx_ctclean_new(void)
{
	struct kpx_ctclean *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->dump = nfct_open(CONNTRACK, 0);
	c->del = c->dump ? nfct_open(CONNTRACK, 0) : NULL;
	if (!c->del) {
		err = errno;
		kpx_ctclean_free(c);
		errno = err;
		return NULL;
	}
	return c;
}

void kpx_ctclean_free(struct kpx_ctclean *c)
{
	if (!c)
		return;
	if (c->dump)
		nfct_close(c->dump);
	if (c->del)
		nfct_close(c->del);
	free(c);
}

struct walk {
	struct kpx_ctclean *c;
	struct kpx_ct_plan *p;
	long deleted;
};

/* Reads the tuple fields a rule needs from a dumped entry. */
static void tuple_of(const struct nf_conntrack *ct, struct kpx_ct_tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->family = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	t->protocol = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	t->orig_dport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
	t->reply_sport = ntohs(nfct_get_attr_u16(ct, ATTR_REPL_PORT_SRC));
	if (t->family == AF_INET) {
		t->orig_dst.v4.s_addr = nfct_get_attr_u32(ct, ATTR_ORIG_IPV4_DST);
		t->reply_src.v4.s_addr = nfct_get_attr_u32(ct, ATTR_REPL_IPV4_SRC);
	} else if (t->family == AF_INET6) {
		memcpy(&t->orig_dst.v6, nfct_get_attr(ct, ATTR_ORIG_IPV6_DST), 16);
		memcpy(&t->reply_src.v6, nfct_get_attr(ct, ATTR_REPL_IPV6_SRC), 16);
	}
}

static int walk_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct,
		   void *data)
{
	struct walk *w = data;
	struct kpx_ct_tuple t;

	if (!ct_proto(nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO)))
		return NFCT_CB_CONTINUE;
	tuple_of(ct, &t);
	if (!kpx_ct_plan_match(w->p, &t))
		return NFCT_CB_CONTINUE;
	if (!nfct_query(w->c->del, NFCT_Q_DESTROY, ct))
		w->deleted++;
	else if (errno != ENOENT)
		kpx_warn("ctclean", "deleting a conntrack entry: %s", strerror(errno));
	return NFCT_CB_CONTINUE;
}

/* One dump of the family's entries, deleting the matches. */
static int walk_family(struct walk *w, uint8_t family)
{
	struct nfct_filter_dump *f = nfct_filter_dump_create();
	int r;

	if (!f)
		return -ENOMEM;
	nfct_filter_dump_set_attr_u8(f, NFCT_FILTER_DUMP_L3NUM, family);
	nfct_callback_register(w->c->dump, NFCT_T_ALL, walk_cb, w);
	r = nfct_query(w->c->dump, NFCT_Q_DUMP_FILTER, f);
	if (r)
		r = errno ? -errno : -EIO;
	nfct_callback_unregister(w->c->dump);
	nfct_filter_dump_destroy(f);
	return r;
}

long kpx_ctclean_apply_family(struct kpx_ctclean *c, struct kpx_ct_plan *p,
			      int family)
{
	struct walk w = { .c = c, .p = p };
	int r;

	r = walk_family(&w, (uint8_t)family);
	return r ? r : w.deleted;
}

long kpx_ctclean_apply(struct kpx_ctclean *c, struct kpx_ct_plan *p)
{
	struct walk w = { .c = c, .p = p };
	bool fam4 = false, fam6 = false;
	size_t i;
	int r;

	for (i = 0; i < p->n; i++) {
		fam4 |= p->v[i].family == AF_INET;
		fam6 |= p->v[i].family == AF_INET6;
	}
	if (fam4 && (r = walk_family(&w, AF_INET)))
		return r;
	if (fam6 && (r = walk_family(&w, AF_INET6)))
		return r;
	return w.deleted;
}
