// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx conntrack hygiene (kube-proxy's stale-UDP bug class, issue 3 point 6).
 *
 * A UDP (or SCTP) client that keeps its socket keeps refreshing its
 * conntrack entry, so the NAT decision of its first datagram would hold
 * forever.  After a change of a UDP or SCTP frontend kpx therefore deletes
 * the entries that the change made wrong:
 *   - a SET that drops backends: the frontend's DNATed entries whose
 *     backend (reply source) is not in the new set; their next datagram is
 *     a new connection and is scheduled (or refused) afresh;
 *   - a SET that gives a frontend without backends (or a new frontend) some:
 *     the frontend's entries without DNAT (traffic that reached the VIP
 *     untranslated before; kpx's own refusals never confirm an entry);
 *   - a DEL or FLUSH: every entry of the deleted frontends.
 * Nothing else is deleted: a SET that changes nothing, an agent restart or
 * a module load leave every entry alone.  TCP is left to its own state
 * machine (a connection to a removed backend fails and is re-opened).
 *
 * The walk (nf_ct_iterate_cleanup_net(), the whole conntrack table, with
 * cond_resched()) runs in the writer's context under kpx_net.lock: a SET
 * that needs it costs one table walk plus one RCU grace period, which
 * serializes other writers of the namespace meanwhile.  Fine at kube-proxy
 * sync rates; a later version may defer and batch the walks.
 */
#include <linux/rcupdate.h>
#include <linux/bsearch.h>
#include <linux/sort.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <net/netfilter/nf_conntrack.h>

#include "ct.h"
#include "svc.h"

struct ct_match {
	const struct kpx_key *keys;	/* sorted by memcmp */
	u32 n;
	const struct kpx_bset *set;	/* for a SET: the new backends */
	bool stale_be;			/* delete DNATed, backend not in set */
	bool no_nat;			/* delete entries without DNAT */
};

/**
 * kpx_ct_wants_cleanup - does a change of this frontend need one?
 * @key: the frontend
 *
 * Return: true for UDP and SCTP frontends.
 */
bool kpx_ct_wants_cleanup(const struct kpx_key *key)
{
	return key->protocol == IPPROTO_UDP || key->protocol == IPPROTO_SCTP;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct kpx_key));
}

static bool set_has(const struct kpx_bset *set, const union kpx_addr *addr,
		    __be16 port)
{
	u32 lo = 0, hi = set ? set->count : 0;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct kpx_backend *be = set->be[mid];
		int r = memcmp(be->addr.bytes, addr->bytes, sizeof(*addr));

		if (!r)
			r = (int)ntohs(be->port) - (int)ntohs(port);
		if (!r)
			return true;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int ct_iter(struct nf_conn *ct, void *data)
{
	const struct nf_conntrack_tuple *o, *r;
	const struct ct_match *m = data;
	union kpx_addr be;
	struct kpx_key key;

	o = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	if (o->dst.protonum != IPPROTO_UDP && o->dst.protonum != IPPROTO_SCTP)
		return 0;
	if (o->src.l3num != AF_INET && o->src.l3num != AF_INET6)
		return 0;
	kpx_key_init(&key, o->src.l3num, o->dst.protonum, &o->dst.u3,
		     o->dst.u.all);
	if (m->n == 1 ? key_cmp(&key, m->keys) :
	    !bsearch(&key, m->keys, m->n, sizeof(key), key_cmp))
		return 0;
	if (!(ct->status & IPS_DST_NAT))
		return m->no_nat;
	if (!m->stale_be)
		return 0;
	r = &ct->tuplehash[IP_CT_DIR_REPLY].tuple;
	memset(&be, 0, sizeof(be));
	memcpy(be.bytes, &r->src.u3, key.family == AF_INET ? 4 : 16);
	return !set_has(m->set, &be, r->src.u.all);
}

static void ct_walk(struct net *net, struct ct_match *m)
{
	struct nf_ct_iter_data d = { .net = net, .data = m };

	nf_ct_iterate_cleanup_net(ct_iter, &d);
}

/* Is a backend of @old missing from @set?  Both sorted. */
static bool lost_backend(const struct kpx_bset *old,
			 const struct kpx_bset *set)
{
	u32 i;

	for (i = 0; old && i < old->count; i++)
		if (!set_has(set, &old->be[i]->addr, old->be[i]->port))
			return true;
	return false;
}

/**
 * kpx_ct_after_set - delete the entries a SET made stale
 * @net: the frontend's namespace
 * @key: the frontend (UDP or SCTP, see kpx_ct_wants_cleanup())
 * @old: the replaced set (still allocated), or NULL
 * @set: the new, published set, or NULL; stays published meanwhile
 * @created: the frontend is new
 *
 * Call from process context after publishing @set, under the writer lock.
 * Waits for an RCU grace period first when backends went, so that no
 * packet still scheduling from @old can create an entry after the walk.
 */
void kpx_ct_after_set(struct net *net, const struct kpx_key *key,
		      const struct kpx_bset *old, const struct kpx_bset *set,
		      bool created)
{
	struct ct_match m = { .keys = key, .n = 1, .set = set };

	m.stale_be = lost_backend(old, set);
	m.no_nat = set && set->count && (created || !old || !old->count);
	if (!m.stale_be && !m.no_nat)
		return;
	if (m.stale_be)
		synchronize_rcu();
	ct_walk(net, &m);
}

/**
 * kpx_ct_after_del - delete every entry of deleted frontends
 * @net: their namespace
 * @keys: the frontends (any protocol; only UDP and SCTP entries are
 *	looked at); sorted here
 * @n: number of @keys; nothing is done for 0
 *
 * Call from process context after unlinking them.
 */
void kpx_ct_after_del(struct net *net, struct kpx_key *keys, u32 n)
{
	struct ct_match m = { .keys = keys, .n = n, .no_nat = true,
			      .stale_be = true };

	if (!n)
		return;
	sort(keys, n, sizeof(*keys), key_cmp, NULL);
	synchronize_rcu();
	ct_walk(net, &m);
}
