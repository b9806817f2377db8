// SPDX-License-Identifier: GPL-2.0-only
/*
 * --proxy-mode ipvs: each frontend is an IPVS virtual service (NAT
 * forwarding) programmed over IPVS's generic-netlink family (ipvs_nl.c),
 * its VIP held by the dummy interface kpx-ipvs0 (ipvs_link.c, unless the
 * address is already the node's own, e.g. a NodePort), and what IPVS cannot
 * express kept in ipsets matched by a small constant iptables ruleset
 * (ipvs_rules.c), as kube-proxy's IPVS mode:
 *
 *   masquerade (KPX_SVC_F_MASQ, _MASQ_NONLOCAL, hairpin) by mark 0x4000 and
 *   MASQUERADE; source ranges and KPX_SVC_F_DROP_EMPTY by DROP in mangle;
 *   new connections to other ports of an address on kpx-ipvs0 REJECTed in
 *   filter INPUT (ipset KPX-IPVS-IPS kept equal to the link's addresses), as
 *   kube-proxy's KUBE-IPVS-FILTER, after the CVE-2020-8558 martian drop
 *   (route_localnet: main.c sets it for localhost NodePorts in every mode);
 *   loopback frontends (127.0.0.1 NodePorts) are not programmed (IPVS
 *   cannot serve them: kpx_ipvs_serves());
 *   a frontend with no destination is rejected by IPVS itself (ip_vs_leave()
 *   answers ICMP / ICMPv6 port unreachable); schedulers rr, wrr, lc, sh, mh
 *   are IPVS's, "random" becomes rr (logged once); ClientIP affinity is IPVS
 *   persistence with the affinity timeout.
 *
 * Ownership: IPVS has no owner tag, so every frontend is also an entry of
 * the ipset KPX-IPVS-SVC (KPX-IPVS6-SVC), whose comment keeps the kpx
 * settings IPVS does not hold (flags, scheduler name); dump() reads IPVS
 * and the ipsets back (KPX_DP_CAP_DUMP), so a restarted agent adopts its
 * state without rewriting it.  cleanup() deletes the IPVS services listed
 * there or whose address is on kpx-ipvs0, and no other.
 *
 * set_service()/del_service() queue; commit() applies, in an order that
 * keeps traffic right in between: ipset additions, IPVS services and
 * destinations (only the changed ones), VIP addresses, ipset deletions.
 * Conntrack: net.ipv4.vs.conntrack=1 (as kube-proxy) so that NATed
 * connections have conntrack entries, which masquerade needs and the
 * syncer's ctnetlink cleanup deletes (no KPX_DP_CAP_CT_CLEANUP here).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/ip_vs.h>
#include <linux/kpx.h>
#include <netlink/netlink.h>
#include <sys/wait.h>

#include "dp/dataplane.h"
#include "dp/ipvs/ipvs_exec.h"
#include "dp/ipvs/ipvs_link.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_rules.h"
#include "base/sysctl.h"
#include "config/ctsysctl.h"
#include "base/log.h"

struct pending {
	bool del;
	struct kpx_service s;	/* deep copy (del: key only) */
};

struct dp_ipvs {
	struct kpx_dp dp;
	struct kpx_ipvs *ipvs;
	struct nl_sock *rt;
	int ifindex;		/* kpx-ipvs0, 0 = not known */
	/* what the kernel holds, sorted by kpx_service_key_cmp() */
	struct kpx_service *cur;
	size_t ncur, capcur;
	struct pending *pend;
	size_t npend, cappend;
	/* services with quiesced (draining) destinations, see reap() */
	struct kpx_ipvs_svc *drain;
	size_t ndrain, capdrain;
	struct kpx_ns_config cfg;
	bool rules_ok;		/* sets, chains, jumps, sysctls written */
	bool ips_synced;	/* KPX-IPVS(6)-IPS known equal to kpx-ipvs0's addresses */
	bool warned_random;
	bool warned_loopback;
};

static struct dp_ipvs *to_ipvs(struct kpx_dp *dp)
{
	return (struct dp_ipvs *)dp;
}

/* --- services in memory ---------------------------------------------------- */

static int svc_copy(struct kpx_service *dst, const struct kpx_service *src)
{
	*dst = *src;
	dst->backends = NULL;
	dst->source_ranges = NULL;
	if (src->nbackends) {
		dst->backends = malloc(src->nbackends * sizeof(*dst->backends));
		if (!dst->backends)
			return -ENOMEM;
		memcpy(dst->backends, src->backends, src->nbackends * sizeof(*dst->backends));
	}
	if (src->nsource_ranges) {
		dst->source_ranges = malloc(src->nsource_ranges * sizeof(*dst->source_ranges));
		if (!dst->source_ranges) {
			free(dst->backends);
			dst->backends = NULL;
			return -ENOMEM;
		}
		memcpy(dst->source_ranges, src->source_ranges,
		       src->nsource_ranges * sizeof(*dst->source_ranges));
	}
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* Index of @key in cur, or -(insertion point) - 1. */
static long cur_find(struct dp_ipvs *v, const struct kpx_service *key)
{
	size_t lo = 0, hi = v->ncur;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = kpx_service_key_cmp(&v->cur[mid], key);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

/* Replaces or inserts a copy of @s in cur. */
static int cur_put(struct dp_ipvs *v, const struct kpx_service *s)
{
	long i = cur_find(v, s);
	struct kpx_service c;
	size_t at;

	if (svc_copy(&c, s))
		return -ENOMEM;
	if (i >= 0) {
		kpx_service_free(&v->cur[i]);
		v->cur[i] = c;
		return 0;
	}
	if (v->ncur == v->capcur) {
		size_t cap = v->capcur ? v->capcur * 2 : 64;
		void *p = realloc(v->cur, cap * sizeof(*v->cur));

		if (!p) {
			kpx_service_free(&c);
			return -ENOMEM;
		}
		v->cur = p;
		v->capcur = cap;
	}
	at = (size_t)(-i - 1);
	memmove(&v->cur[at + 1], &v->cur[at], (v->ncur - at) * sizeof(*v->cur));
	v->cur[at] = c;
	v->ncur++;
	return 0;
}

static void cur_del(struct dp_ipvs *v, const struct kpx_service *key)
{
	long i = cur_find(v, key);

	if (i < 0)
		return;
	kpx_service_free(&v->cur[i]);
	memmove(&v->cur[i], &v->cur[i + 1], (v->ncur - (size_t)i - 1) * sizeof(*v->cur));
	v->ncur--;
}

static void cur_clear(struct dp_ipvs *v)
{
	kpx_services_free(v->cur, v->ncur);
	v->cur = NULL;
	v->ncur = v->capcur = 0;
}

static void pend_clear(struct dp_ipvs *v)
{
	size_t i;

	for (i = 0; i < v->npend; i++)
		kpx_service_free(&v->pend[i].s);
	v->npend = 0;
}

static int pend_push(struct dp_ipvs *v, const struct kpx_service *s, bool del)
{
	struct pending *p;

	if (v->npend == v->cappend) {
		size_t cap = v->cappend ? v->cappend * 2 : 64;

		p = realloc(v->pend, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		v->pend = p;
		v->cappend = cap;
	}
	p = &v->pend[v->npend];
	p->del = del;
	if (del) {
		memset(&p->s, 0, sizeof(p->s));
		p->s.family = s->family;
		p->s.protocol = s->protocol;
		p->s.addr = s->addr;
		p->s.port = s->port;
	} else if (svc_copy(&p->s, s)) {
		return -ENOMEM;
	}
	v->npend++;
	return 0;
}

/* --- small helpers ----------------------------------------------------------- */

static bool module_loaded(const char *name)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/module/%s", name);
	return !access(p, F_OK);
}

/* `ipset -exist restore` of @text; 0 or -errno with errmsg set. */
static int ipset_restore(struct dp_ipvs *v, const char *text)
{
	const char *argv[] = { "ipset", "-exist", "restore", NULL };
	char err[400];
	int r;

	if (!text || !*text)
		return 0;
	r = kpx_ipvs_run(argv, text, NULL, err, sizeof(err));
	if (r)
		kpx_dp_fail(&v->dp, r, "ipset restore: %s", err);
	return r;
}

static const char *ipt(int family, bool restore)
{
	if (family == AF_INET)
		return restore ? "iptables-restore" : "iptables";
	return restore ? "ip6tables-restore" : "ip6tables";
}

/* --- the constant ruleset -------------------------------------------------- */

/* Sets, chains and jumps of both families, and the sysctls; idempotent. */
static int write_rules(struct dp_ipvs *v)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	char *text = NULL, err[400];
	size_t len, i, j;
	FILE *f;
	int r;

	/*
	 * kube-proxy's IPVS sysctls (NAT'ed connections get conntrack
	 * entries); a read-only /proc/sys is a warning (--init-only sets them).
	 */
	r = kpx_mode_sysctls("ipvs", false, "", KPX_SYSCTL_TOLERANT, err, sizeof(err));
	if (r < 0)
		return kpx_dp_fail(&v->dp, r, "setting the IPVS sysctls: %s", err);
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	kpx_ipvs_ipset_create(f);
	fclose(f);
	r = ipset_restore(v, text);
	free(text);
	if (r)
		return r;
	for (i = 0; i < 2; i++) {
		const char *rargv[] = { ipt(fams[i], true), "-w", "--noflush", NULL };

		text = NULL;
		f = open_memstream(&text, &len);
		if (!f)
			return -ENOMEM;
		kpx_ipvs_iptables_rules(f, fams[i], &v->cfg);
		fclose(f);
		r = kpx_ipvs_run(rargv, text, NULL, err, sizeof(err));
		free(text);
		if (r)
			return kpx_dp_fail(&v->dp, r, "%s", err);
		for (j = 0; j < kpx_ipvs_njumps; j++) {
			const struct kpx_ipvs_jump *jp = &kpx_ipvs_jumps[j];
			const char *cargv[] = { ipt(fams[i], false), "-w", "-t", jp->table,
						"-C", jp->chain, "-j", jp->target, NULL };
			const char *iargv[] = { ipt(fams[i], false), "-w", "-t", jp->table,
						"-I", jp->chain, "-j", jp->target, NULL };

			if (!kpx_ipvs_run(cargv, NULL, NULL, NULL, 0))
				continue;
			r = kpx_ipvs_run(iargv, NULL, NULL, err, sizeof(err));
			if (r)
				return kpx_dp_fail(&v->dp, r, "%s", err);
		}
	}
	v->rules_ok = true;
	return 0;
}

/* --- open / close -------------------------------------------------------------- */

static int ipvs_open(struct kpx_dp **out, unsigned int flags, char *err,
		     size_t errlen)
{
	static const char *const tools[] = { "ipset", "iptables", "iptables-restore",
					     "ip6tables", "ip6tables-restore" };
	struct dp_ipvs *v = calloc(1, sizeof(*v));
	bool cleanup = flags & KPX_DP_OPEN_CLEANUP;
	size_t i;
	int r;

	if (!v)
		return -ENOMEM;
	v->rt = kpx_ipvs_rtnl_open();
	if (!v->rt) {
		snprintf(err, errlen, "cannot open a NETLINK_ROUTE socket");
		free(v);
		return -EIO;
	}
	r = kpx_ipvs_open(&v->ipvs);
	if (r == -ENOENT && !cleanup && kpx_modprobe("ip_vs")) {
		kpx_info("dataplane", "loaded ip_vs (modprobe ip_vs)");
		r = kpx_ipvs_open(&v->ipvs);
	}
	if (cleanup) {
		/* something of ours may be left: IPVS loaded, the link, the sets */
		if (r && kpx_ipvs_link_index(v->rt) < 0 && !module_loaded("ip_set")) {
			snprintf(err, errlen, "no IPVS, no %s, no ipsets", KPX_IPVS_LINK);
			goto fail;
		}
		*out = &v->dp;
		return 0;
	}
	if (r) {
		snprintf(err, errlen, r == -ENOENT ?
			 "IPVS not available (generic netlink family \"IPVS\" not found, modprobe ip_vs failed)" :
			 "IPVS netlink: %s", strerror(-r));
		goto fail;
	}
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (!kpx_ipvs_have(tools[i])) {
			snprintf(err, errlen, "%s not found in PATH (install ipset and iptables)",
				 tools[i]);
			r = -ENOENT;
			goto fail;
		}
	}
	*out = &v->dp;
	return 0;
fail:
	kpx_ipvs_close(v->ipvs);
	nl_socket_free(v->rt);
	free(v);
	return r ? r : -ENOENT;
}

static void ipvs_close(struct kpx_dp *dp)
{
	struct dp_ipvs *v = to_ipvs(dp);

	pend_clear(v);
	free(v->pend);
	free(v->drain);
	cur_clear(v);
	kpx_ipvs_close(v->ipvs);
	nl_socket_free(v->rt);
	free(v);
}

/* --- draining destinations ----------------------------------------------------- */

static bool same_svc(const struct kpx_ipvs_svc *a, const struct kpx_ipvs_svc *b)
{
	return a->family == b->family && a->protocol == b->protocol && a->port == b->port &&
	       !memcmp(&a->addr, &b->addr, a->family == AF_INET ? 4 : 16);
}

/* Remembers that @is has quiesced destinations to delete later; 0 or -ENOMEM. */
static int drain_add(struct dp_ipvs *v, const struct kpx_ipvs_svc *is)
{
	size_t i;

	for (i = 0; i < v->ndrain; i++)
		if (same_svc(&v->drain[i], is))
			return 0;
	if (v->ndrain == v->capdrain) {
		size_t cap = v->capdrain ? 2 * v->capdrain : 16;
		struct kpx_ipvs_svc *d = realloc(v->drain, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		v->drain = d;
		v->capdrain = cap;
	}
	v->drain[v->ndrain++] = *is;
	return 0;
}

/*
 * Deletes the quiesced destinations IPVS counts no connection to (see
 * kpx_ipvs_dest_drains()); a service stays on the list while one of its
 * quiesced destinations still has connections.  Errors are logged: the
 * next commit tries again.
 */
static void reap(struct dp_ipvs *v)
{
	size_t i = 0, j, nd;

	while (i < v->ndrain) {
		struct kpx_ipvs_dest *d = NULL;
		bool keep = false;
		int r;

		r = kpx_ipvs_dest_dump(v->ipvs, &v->drain[i], &d, &nd);
		if (r) {
			nd = 0;
			/* service gone (deleted, or cleaned up): nothing to drain */
			keep = r != -ESRCH && r != -ENOENT;
		}
		for (j = 0; j < nd; j++) {
			if (d[j].weight)
				continue;
			if (!kpx_ipvs_dest_reapable(&d[j])) {
				keep = true;
				continue;
			}
			r = kpx_ipvs_dest_del(v->ipvs, &v->drain[i], &d[j]);
			if (r && r != -ENOENT) {
				kpx_warn("ipvs", "deleting a drained destination: %s", strerror(-r));
				keep = true;
			}
		}
		free(d);
		if (keep)
			i++;
		else
			v->drain[i] = v->drain[--v->ndrain];
	}
}

/* --- reading back ------------------------------------------------------------- */

/* Our ipset entries ("ipset save" parsed); *out malloc'd. */
static int read_sets(struct dp_ipvs *v, struct kpx_ipvs_entry **out, size_t *n)
{
	const char *argv[] = { "ipset", "save", NULL };
	struct kpx_ipvs_entry *vec = NULL, e;
	size_t cnt = 0, cap = 0;
	char *text = NULL, *line, *save = NULL, err[400];
	int r;

	*out = NULL;
	*n = 0;
	r = kpx_ipvs_run(argv, NULL, &text, err, sizeof(err));
	if (r)
		return kpx_dp_fail(&v->dp, r, "ipset save: %s", err);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		r = kpx_ipvs_parse_save_line(line, &e);
		if (r < 0) {
			kpx_warn("dataplane", "ipvs: unparsable ipset entry: %s", line);
			continue;
		}
		if (!r)
			continue;
		if (cnt == cap) {
			void *p = realloc(vec, (cap = cap ? cap * 2 : 64) * sizeof(*vec));

			if (!p) {
				free(vec);
				free(text);
				return -ENOMEM;
			}
			vec = p;
		}
		vec[cnt++] = e;
	}
	free(text);
	*out = vec;
	*n = cnt;
	return 0;
}

static bool entry_is(const struct kpx_ipvs_entry *e, const struct kpx_ipvs_svc *s)
{
	return e->family == s->family && e->protocol == s->protocol &&
	       e->port == s->port &&
	       !memcmp(&e->addr, &s->addr, s->family == AF_INET ? 4 : 16);
}

/* Source ranges of @s from FW_SRC entries; the two /1 halves make 0/0. */
static int add_ranges(struct kpx_service *s, const struct kpx_ipvs_svc *is,
		      const struct kpx_ipvs_entry *e, size_t ne)
{
	size_t i, n = 0, halves = 0;

	for (i = 0; i < ne; i++)
		if (e[i].set == KPX_IPVS_SET_FW_SRC && entry_is(&e[i], is))
			n++;
	if (!n)
		return 0;
	s->source_ranges = calloc(n, sizeof(*s->source_ranges));
	if (!s->source_ranges)
		return -ENOMEM;
	for (i = 0; i < ne; i++) {
		if (e[i].set != KPX_IPVS_SET_FW_SRC || !entry_is(&e[i], is))
			continue;
		if (e[i].net.len == 1)
			halves++;
		s->source_ranges[s->nsource_ranges++] = e[i].net;
	}
	if (halves == 2) {	/* written for 0/0: give it back as such */
		size_t o = 0;

		for (i = 0; i < s->nsource_ranges; i++)
			if (s->source_ranges[i].len != 1)
				s->source_ranges[o++] = s->source_ranges[i];
		memset(&s->source_ranges[o], 0, sizeof(s->source_ranges[o]));
		s->source_ranges[o].family = s->family;
		s->nsource_ranges = o + 1;
	}
	return 0;
}

/* One IPVS service as a kpx frontend (comment: the SVC entry's, or NULL). */
static int svc_from_ipvs(struct dp_ipvs *v, const struct kpx_ipvs_svc *is,
			 const char *comment, const struct kpx_ipvs_entry *e,
			 size_t ne, struct kpx_service *s)
{
	struct kpx_ipvs_dest *d = NULL;
	const char *mapped;
	size_t nd = 0, i;
	bool fb;
	int r;

	memset(s, 0, sizeof(*s));
	s->family = is->family;
	s->protocol = is->protocol;
	memcpy(&s->addr, &is->addr, sizeof(s->addr));
	s->port = is->port;
	if (!comment || kpx_ipvs_comment_parse(comment, s))
		snprintf(s->scheduler, sizeof(s->scheduler), "%s", is->sched);
	/* a scheduler changed behind our back reads back as IPVS's own name */
	mapped = kpx_ipvs_sched(s->scheduler, &fb);
	if (!mapped || strcmp(mapped, is->sched))
		snprintf(s->scheduler, sizeof(s->scheduler), "%s", is->sched);
	if (is->flags & IP_VS_SVC_F_PERSISTENT)
		s->affinity_timeout = is->timeout;
	r = kpx_ipvs_dest_dump(v->ipvs, is, &d, &nd);
	if (r)
		return kpx_dp_fail(&v->dp, r, "IPVS dest dump: %s", kpx_ipvs_errmsg(v->ipvs));
	if (nd) {
		s->backends = calloc(nd, sizeof(*s->backends));
		if (!s->backends) {
			free(d);
			return -ENOMEM;
		}
		for (i = 0; i < nd; i++) {
			struct kpx_backend *b = &s->backends[s->nbackends];

			/* quiesced: a removed backend still draining, not a backend */
			if (!d[i].weight) {
				if ((r = drain_add(v, is))) {
					free(d);
					return r;
				}
				continue;
			}
			memcpy(&b->addr, &d[i].addr, sizeof(d[i].addr));
			b->port = d[i].port;
			b->weight = d[i].weight;
			s->nbackends++;
		}
	}
	free(d);
	r = add_ranges(s, is, e, ne);
	if (r)
		return r;
	kpx_service_normalize(s, s->family == AF_INET ? 4 : 16);
	return 0;
}

static int ipvs_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n)
{
	struct dp_ipvs *v = to_ipvs(dp);
	struct kpx_ipvs_svc *svcs = NULL;
	struct kpx_ipvs_entry *e = NULL;
	struct kpx_ipvs_ip *on = NULL, *other = NULL;
	struct kpx_service *res = NULL;
	size_t nsvc = 0, ne = 0, non = 0, nother = 0, nres = 0, i, j;
	int ifindex, r;

	*out = NULL;
	*n = 0;
	r = kpx_ipvs_svc_dump(v->ipvs, &svcs, &nsvc);
	if (r)
		return kpx_dp_fail(dp, r, "IPVS service dump: %s", kpx_ipvs_errmsg(v->ipvs));
	r = read_sets(v, &e, &ne);
	if (r)
		goto out;
	ifindex = kpx_ipvs_link_index(v->rt);
	if (ifindex > 0) {
		r = kpx_ipvs_addrs(v->rt, ifindex, &on, &non, &other, &nother);
		if (r)
			goto out;
	}
	res = calloc(nsvc ? nsvc : 1, sizeof(*res));
	if (!res) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nsvc; i++) {
		const char *comment = NULL;
		struct kpx_ipvs_ip ip = { .family = svcs[i].family, .addr.v6 = svcs[i].addr.v6 };
		bool ours = false;

		for (j = 0; j < ne && !ours; j++)
			if (e[j].set == KPX_IPVS_SET_SVC && entry_is(&e[j], &svcs[i])) {
				ours = true;
				comment = e[j].comment;
			}
		/* an IPVS service on our link but not in our set: ours, stale */
		if (!ours && non && bsearch(&ip, on, non, sizeof(*on), kpx_ipvs_ip_cmp))
			ours = true;
		if (!ours)
			continue;
		r = svc_from_ipvs(v, &svcs[i], comment, e, ne, &res[nres]);
		if (r) {
			kpx_service_free(&res[nres]);
			goto out;
		}
		nres++;
	}
	qsort(res, nres, sizeof(*res), key_cmp);
	/* what is committed from now on is what the kernel holds */
	cur_clear(v);
	for (i = 0; i < nres; i++)
		if ((r = cur_put(v, &res[i])))
			goto out;
	*out = res;
	*n = nres;
	res = NULL;
	nres = 0;
out:
	kpx_services_free(res, nres);
	free(svcs);
	free(e);
	free(on);
	free(other);
	return r;
}

/* --- changes ------------------------------------------------------------------- */

static int ipvs_set_config(struct kpx_dp *dp, const struct kpx_ns_config *c)
{
	struct dp_ipvs *v = to_ipvs(dp);

	if (memcmp(&v->cfg, c, sizeof(*c))) {
		v->cfg = *c;
		v->rules_ok = false;	/* rewritten by the next commit() */
	}
	return 0;
}

static int ipvs_set_service(struct kpx_dp *dp, const struct kpx_service *s)
{
	struct dp_ipvs *v = to_ipvs(dp);
	bool fb;

	if (!kpx_ipvs_sched(s->scheduler, &fb))
		return kpx_dp_fail(dp, -EINVAL, "scheduler \"%s\" is not supported", s->scheduler);
	if (!kpx_ipvs_serves(s)) {
		char key[KPX_SERVICE_STRLEN];

		/*
		 * Not programmed, so refused at once on the node (nothing
		 * listens); one an older agent programmed is deleted.
		 */
		if (!v->warned_loopback)
			kpx_warn("dataplane", "ipvs: loopback frontends such as %s (127.0.0.1 NodePorts) are not served in this mode: IPVS drops loopback-sourced connections to other hosts (kubernetes#96879, as kube-proxy's IPVS mode): refused on the node; other hosts' packets to 127.0.0.0/8 are dropped (KPX-IPVS-INPUT, CVE-2020-8558); use --proxy-mode iptables or kpx for localhost NodePorts",
				 kpx_service_str(s, key, sizeof(key)));
		v->warned_loopback = true;
		return pend_push(v, s, true);
	}
	if (fb && !v->warned_random) {
		v->warned_random = true;
		kpx_warn("dataplane", "ipvs: scheduler \"%s\" is not supported in this mode; IPVS \"rr\" is used instead (kube-proxy's IPVS default)",
			 s->scheduler[0] ? s->scheduler : "random");
	}
	return pend_push(v, s, false);
}

static int ipvs_del_service(struct kpx_dp *dp, const struct kpx_service *key)
{
	return pend_push(to_ipvs(dp), key, true);
}

static void dest_of(const struct kpx_backend *b, struct kpx_ipvs_dest *d)
{
	memset(d, 0, sizeof(*d));
	memcpy(&d->addr, &b->addr, sizeof(d->addr));
	d->port = b->port;
	d->weight = b->weight ? b->weight : 1;
}

/* Error text of a failed IPVS call on @s. */
static int ipvs_fail(struct dp_ipvs *v, int r, const char *what,
		     const struct kpx_service *s)
{
	char key[KPX_SERVICE_STRLEN];

	return kpx_dp_fail(&v->dp, r, "IPVS %s %s: %s%s%s", what,
			   kpx_service_str(s, key, sizeof(key)), strerror(-r),
			   *kpx_ipvs_errmsg(v->ipvs) ? ": " : "", kpx_ipvs_errmsg(v->ipvs));
}

/* Programs IPVS for one SET: the service, then only the changed dests. */
static int apply_set(struct dp_ipvs *v, const struct kpx_service *old,
		     const struct kpx_service *s)
{
	struct kpx_ipvs_svc is, was;
	struct kpx_ipvs_dest d;
	size_t i;
	int r;

	if (kpx_ipvs_svc_of(s, &is))
		return kpx_dp_fail(&v->dp, -EINVAL, "scheduler \"%s\" is not supported", s->scheduler);
	if (!old) {
		r = kpx_ipvs_svc_put(v->ipvs, &is, 1);
		if (r == -EEXIST)
			r = kpx_ipvs_svc_put(v->ipvs, &is, 0);
		if (r)
			return ipvs_fail(v, r, "add service", s);
	} else if (!kpx_ipvs_svc_of(old, &was) &&
		   (strcmp(was.sched, is.sched) || was.flags != is.flags ||
		    was.timeout != is.timeout)) {
		r = kpx_ipvs_svc_put(v->ipvs, &is, 0);
		if (r == -ESRCH) {
			old = NULL;
			r = kpx_ipvs_svc_put(v->ipvs, &is, 1);
		}
		if (r)
			return ipvs_fail(v, r, "set service", s);
	}
	for (i = 0; i < s->nbackends; i++) {
		const struct kpx_backend *ob = kpx_ipvs_find_backend(old,
								     &s->backends[i]);

		if (ob && ob->weight == s->backends[i].weight)
			continue;
		dest_of(&s->backends[i], &d);
		r = kpx_ipvs_dest_put(v->ipvs, &is, &d, !ob);
		if (r == -EEXIST)
			r = kpx_ipvs_dest_put(v->ipvs, &is, &d, 0);
		else if (r == -ENOENT && ob)
			r = kpx_ipvs_dest_put(v->ipvs, &is, &d, 1);
		if (r)
			return ipvs_fail(v, r, "add destination to", s);
	}
	for (i = 0; old && i < old->nbackends; i++) {
		if (kpx_ipvs_find_backend(s, &old->backends[i]))
			continue;
		dest_of(&old->backends[i], &d);
		if (kpx_ipvs_dest_drains(s->protocol)) {
			/* no new connection; deleted by reap() once drained */
			d.weight = 0;
			r = kpx_ipvs_dest_put(v->ipvs, &is, &d, 0);
			if (!r)
				r = drain_add(v, &is);
			if (r && r != -ENOENT)
				return ipvs_fail(v, r, "quiesce destination of", s);
			continue;
		}
		r = kpx_ipvs_dest_del(v->ipvs, &is, &d);
		if (r && r != -ENOENT)
			return ipvs_fail(v, r, "delete destination of", s);
	}
	return 0;
}

/* Does any committed frontend of (family, proto) have backend @b? */
static bool backend_used(struct dp_ipvs *v, int family, uint8_t proto,
			 const struct kpx_backend *b)
{
	size_t i;

	for (i = 0; i < v->ncur; i++)
		if (v->cur[i].family == family && v->cur[i].protocol == proto &&
		    kpx_ipvs_find_backend(&v->cur[i], b))
			return true;
	return false;
}

/*
 * Keeps KPX-IPVS-IPS / KPX-IPVS6-IPS equal to kpx-ipvs0's addresses
 * (sorted @want: to be on it, sorted @on: on it now).  @adding: the
 * additions (before the addresses are added), else the deletions (after
 * they are removed).  The first time, both sets are flushed and refilled
 * from @want (a set left by an earlier run may hold anything).
 */
static int ips_update(struct dp_ipvs *v, const struct kpx_ipvs_ip *want, size_t nwant,
		      const struct kpx_ipvs_ip *on, size_t non, bool adding)
{
	char *text = NULL;
	size_t len, i;
	FILE *f;
	int r;

	if (!adding && !v->ips_synced) {
		v->ips_synced = true;	/* the additions were a full refill */
		return 0;
	}
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	if (adding && !v->ips_synced)
		kpx_ipvs_ips_flush(f);
	if (adding) {
		for (i = 0; i < nwant; i++)
			if (!v->ips_synced ||
			    !(non && bsearch(&want[i], on, non, sizeof(*on), kpx_ipvs_ip_cmp)))
				kpx_ipvs_ips_cmd(f, "add", want[i].family, &want[i].addr);
	} else {
		for (i = 0; i < non; i++)
			if (!(nwant && bsearch(&on[i], want, nwant, sizeof(*want), kpx_ipvs_ip_cmp)))
				kpx_ipvs_ips_cmd(f, "del", on[i].family, &on[i].addr);
	}
	fclose(f);
	r = ipset_restore(v, text);
	free(text);
	return r;
}

/* Adds the VIPs of cur to kpx-ipvs0, removes the others from it. */
static int sync_addrs(struct dp_ipvs *v)
{
	struct kpx_ipvs_ip *want = NULL, *on = NULL, *other = NULL;
	size_t nwant = 0, non = 0, nother = 0, i;
	int r;

	if (v->ifindex <= 0 || kpx_ipvs_link_index(v->rt) != v->ifindex) {
		r = kpx_ipvs_link_ensure(v->rt);
		if (r < 0)
			return kpx_dp_fail(&v->dp, r, "creating %s: %s", KPX_IPVS_LINK, strerror(-r));
		v->ifindex = r;
	}
	r = kpx_ipvs_addrs(v->rt, v->ifindex, &on, &non, &other, &nother);
	if (r)
		return kpx_dp_fail(&v->dp, r, "listing addresses: %s", strerror(-r));
	want = calloc(v->ncur ? v->ncur : 1, sizeof(*want));
	if (!want) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < v->ncur; i++) {
		struct kpx_ipvs_ip ip = { .family = v->cur[i].family };

		memcpy(&ip.addr, &v->cur[i].addr, sizeof(ip.addr));
		if (!kpx_ipvs_serves(&v->cur[i]))
			continue;	/* adopted from an older agent: lo has it */
		/* the node's own address (NodePorts): not ours to hold */
		if (nother && bsearch(&ip, other, nother, sizeof(*other), kpx_ipvs_ip_cmp))
			continue;
		want[nwant++] = ip;
	}
	if (nwant)
		qsort(want, nwant, sizeof(*want), kpx_ipvs_ip_cmp);
	/* KPX-IPVS-IPS first: a new VIP never answers on a host port */
	r = ips_update(v, want, nwant, on, non, true);
	if (r)
		goto out;
	for (i = 0; i < nwant; i++) {
		if ((i && !kpx_ipvs_ip_cmp(&want[i - 1], &want[i])) ||
		    (non && bsearch(&want[i], on, non, sizeof(*on), kpx_ipvs_ip_cmp)))
			continue;
		r = kpx_ipvs_addr_add(v->rt, v->ifindex, &want[i]);
		if (r) {
			kpx_dp_fail(&v->dp, r, "adding a VIP to %s: %s", KPX_IPVS_LINK, strerror(-r));
			goto out;
		}
	}
	for (i = 0; i < non; i++) {
		if (nwant && bsearch(&on[i], want, nwant, sizeof(*want), kpx_ipvs_ip_cmp))
			continue;
		r = kpx_ipvs_addr_del(v->rt, v->ifindex, &on[i]);
		if (r) {
			kpx_dp_fail(&v->dp, r, "removing a VIP from %s: %s", KPX_IPVS_LINK, strerror(-r));
			goto out;
		}
	}
	r = ips_update(v, want, nwant, on, non, false);
out:
	if (r)
		v->ips_synced = false;	/* rewritten whole by the next commit */
	free(want);
	free(on);
	free(other);
	return r;
}

/* Backends a commit took away from a frontend: hairpin entries to re-check. */
struct gone {
	struct {
		int family;
		uint8_t protocol;
		struct kpx_backend b;
	} *v;
	size_t n, cap;
};

static int gone_push(struct gone *g, const struct kpx_service *s,
		     const struct kpx_backend *b)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 32;
		void *p = realloc(g->v, cap * sizeof(*g->v));

		if (!p)
			return -ENOMEM;
		g->v = p;
		g->cap = cap;
	}
	g->v[g->n].family = s->family;
	g->v[g->n].protocol = s->protocol;
	g->v[g->n].b = *b;
	g->n++;
	return 0;
}

static int ipvs_commit(struct kpx_dp *dp)
{
	struct dp_ipvs *v = to_ipvs(dp);
	char (*ol)[KPX_IPVS_LINE_MAX] = NULL, (*nl)[KPX_IPVS_LINE_MAX] = NULL;
	char *adds = NULL, *dels = NULL, line[KPX_IPVS_LINE_MAX];
	size_t addlen, dellen, i, j;
	FILE *fa = NULL, *fd = NULL;
	struct gone gone = { 0 };
	int r = 0, first = 0;

	if (!v->rules_ok && (r = write_rules(v)))
		goto out;
	reap(v);
	if (!v->npend)
		goto out;
	fa = open_memstream(&adds, &addlen);
	fd = open_memstream(&dels, &dellen);
	if (!fa || !fd) {
		r = -ENOMEM;
		goto out;
	}
	/* 1. ipset additions (and the deletions for later) */
	for (i = 0; i < v->npend; i++) {
		const struct kpx_service *s = &v->pend[i].s;
		long k = cur_find(v, s);
		const struct kpx_service *old = k >= 0 ? &v->cur[k] : NULL;
		int no = 0, nn = 0;

		if (old) {
			ol = calloc((size_t)kpx_ipvs_entries_max(old), sizeof(*ol));
			no = ol ? kpx_ipvs_entries(old, ol, kpx_ipvs_entries_max(old)) : -ENOMEM;
		}
		if (!v->pend[i].del) {
			nl = calloc((size_t)kpx_ipvs_entries_max(s), sizeof(*nl));
			nn = nl ? kpx_ipvs_entries(s, nl, kpx_ipvs_entries_max(s)) : -ENOMEM;
		}
		if (no < 0 || nn < 0) {
			r = -ENOMEM;
			goto out;
		}
		kpx_ipvs_ipset_diff(fa, fd, ol, no, nl, nn);
		free(ol);
		free(nl);
		ol = nl = NULL;
		for (j = 0; old && j < old->nbackends; j++) {
			if (!v->pend[i].del && kpx_ipvs_find_backend(s, &old->backends[j]))
				continue;
			if ((r = gone_push(&gone, old, &old->backends[j])))
				goto out;
		}
		/* hairpin entries of new backends (old is NULL for a new frontend) */
		if (!v->pend[i].del)
			kpx_ipvs_loop_adds(fa, old, s);
	}
	fflush(fa);
	if ((r = ipset_restore(v, adds)))
		goto out;
	/* 2. IPVS, in order; cur follows what succeeded */
	for (i = 0; i < v->npend; i++) {
		const struct kpx_service *s = &v->pend[i].s;
		long k = cur_find(v, s);
		struct kpx_service *old = k >= 0 ? &v->cur[k] : NULL;
		struct kpx_ipvs_svc is;
		int e;

		if (v->pend[i].del) {
			memset(&is, 0, sizeof(is));
			is.family = s->family;
			is.protocol = s->protocol;
			is.addr.v6 = s->addr.v6;
			is.port = s->port;
			e = kpx_ipvs_svc_del(v->ipvs, &is);
			if (e && e != -ESRCH) {
				e = ipvs_fail(v, e, "delete service", s);
			} else {
				e = 0;
				cur_del(v, s);
			}
		} else {
			e = apply_set(v, old, s);
			if (!e)
				e = cur_put(v, s);
		}
		if (e && !first)
			first = e;
	}
	/* 3. VIPs on kpx-ipvs0 */
	r = sync_addrs(v);
	if (r && !first)
		first = r;
	/* 4. ipset deletions: flags gone, hairpin entries no frontend uses */
	for (i = 0; i < gone.n; i++) {
		if (backend_used(v, gone.v[i].family, gone.v[i].protocol, &gone.v[i].b))
			continue;
		kpx_ipvs_loop_entry(gone.v[i].family, gone.v[i].protocol, &gone.v[i].b,
				    line, sizeof(line));
		fprintf(fd, "del %s\n", line);
	}
	fflush(fd);
	r = ipset_restore(v, dels);
	if (r && !first)
		first = r;
	r = first;
out:
	if (fa)
		fclose(fa);
	if (fd)
		fclose(fd);
	free(adds);
	free(dels);
	free(ol);
	free(nl);
	free(gone.v);
	pend_clear(v);
	return r;
}

/* --- cleanup ------------------------------------------------------------------- */

static int ipvs_cleanup(struct kpx_dp *dp)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	struct dp_ipvs *v = to_ipvs(dp);
	struct kpx_ipvs_entry *e = NULL;
	struct kpx_ipvs_ip *on = NULL, *other = NULL;
	struct kpx_ipvs_svc *svcs = NULL;
	size_t ne = 0, non = 0, nother = 0, nsvc = 0, i, j, ndel = 0;
	char err[400];
	int ifindex, r, first = 0;

	if (module_loaded("ip_set") && (r = read_sets(v, &e, &ne)))
		first = r;
	ifindex = kpx_ipvs_link_index(v->rt);
	if (ifindex > 0 && (r = kpx_ipvs_addrs(v->rt, ifindex, &on, &non, &other, &nother)) &&
	    !first)
		first = kpx_dp_fail(dp, r, "listing addresses: %s", strerror(-r));
	/* IPVS services: those in our set or on kpx-ipvs0's addresses */
	if (v->ipvs && !(r = kpx_ipvs_svc_dump(v->ipvs, &svcs, &nsvc))) {
		for (i = 0; i < nsvc; i++) {
			struct kpx_ipvs_ip ip = { .family = svcs[i].family,
						  .addr.v6 = svcs[i].addr.v6 };
			bool ours = non && bsearch(&ip, on, non, sizeof(*on), kpx_ipvs_ip_cmp);

			for (j = 0; j < ne && !ours; j++)
				ours = e[j].set == KPX_IPVS_SET_SVC && entry_is(&e[j], &svcs[i]);
			if (!ours)
				continue;
			r = kpx_ipvs_svc_del(v->ipvs, &svcs[i]);
			if (r && r != -ESRCH && !first)
				first = kpx_dp_fail(dp, r, "IPVS delete service: %s", strerror(-r));
			ndel++;
		}
		kpx_info("dataplane", "ipvs cleanup: deleted %zu IPVS services (those in KPX-IPVS-SVC / KPX-IPVS6-SVC or on %s addresses; IPVS has no owner tag, others are left)",
			 ndel, KPX_IPVS_LINK);
	} else if (v->ipvs && !first) {
		first = kpx_dp_fail(dp, r, "IPVS service dump: %s", strerror(-r));
	}
	/* jumps and chains (only where a table module is loaded: load nothing) */
	for (i = 0; i < 2; i++) {
		bool loaded = module_loaded("nf_tables") ||
			      module_loaded(fams[i] == AF_INET ? "ip_tables" : "ip6_tables");
		char *text = NULL;
		size_t len;
		FILE *f;

		if (!loaded || !kpx_ipvs_have(ipt(fams[i], true)))
			continue;
		/* only where our chains are: iptables-restore would create tables */
		{
			const char *sargv[] = { fams[i] == AF_INET ? "iptables-save" :
						"ip6tables-save", NULL };
			char *dump = NULL;
			bool ours = !kpx_ipvs_run(sargv, NULL, &dump, NULL, 0) &&
				    strstr(dump, ":KPX-IPVS-");

			free(dump);
			if (!ours)
				continue;
		}
		for (j = 0; j < kpx_ipvs_njumps; j++) {
			const struct kpx_ipvs_jump *jp = &kpx_ipvs_jumps[j];
			const char *dargv[] = { ipt(fams[i], false), "-w", "-t", jp->table,
						"-D", jp->chain, "-j", jp->target, NULL };
			int k;

			for (k = 0; k < 16 && !kpx_ipvs_run(dargv, NULL, NULL, NULL, 0); k++)
				;
		}
		f = open_memstream(&text, &len);
		if (!f)
			return -ENOMEM;
		kpx_ipvs_iptables_delete(f);
		fclose(f);
		{
			const char *rargv[] = { ipt(fams[i], true), "-w", "--noflush", NULL };

			r = kpx_ipvs_run(rargv, text, NULL, err, sizeof(err));
		}
		free(text);
		if (r && !first)
			first = kpx_dp_fail(dp, r, "%s", err);
	}
	/* our ipsets, now unreferenced */
	if (module_loaded("ip_set")) {
		const char *largv[] = { "ipset", "list", "-n", NULL };
		char *names = NULL, *save = NULL, *nm;
		char *script = NULL;
		size_t len;
		FILE *f = open_memstream(&script, &len);

		if (!f)
			return -ENOMEM;
		if (!kpx_ipvs_run(largv, NULL, &names, NULL, 0)) {
			for (nm = strtok_r(names, "\n", &save); nm; nm = strtok_r(NULL, "\n", &save))
				for (j = 0; j < KPX_IPVS_SET_N; j++)
					if (!strcmp(nm, kpx_ipvs_set_name(AF_INET, j)) ||
					    !strcmp(nm, kpx_ipvs_set_name(AF_INET6, j)))
						fprintf(f, "destroy %s\n", nm);
		}
		fclose(f);
		free(names);
		r = ipset_restore(v, script);
		free(script);
		if (r && !first)
			first = r;
	}
	r = kpx_ipvs_link_delete(v->rt);
	if (r && !first)
		first = kpx_dp_fail(dp, r, "deleting %s: %s", KPX_IPVS_LINK, strerror(-r));
	free(e);
	free(on);
	free(other);
	free(svcs);
	cur_clear(v);
	v->rules_ok = false;
	v->ips_synced = false;
	return first;
}

const struct kpx_dp_ops kpx_dp_ipvs = {
	.name = "ipvs",
	.caps = KPX_DP_CAP_DUMP,
	.open = ipvs_open,
	.close = ipvs_close,
	.dump = ipvs_dump,
	.set_config = ipvs_set_config,
	.set_service = ipvs_set_service,
	.del_service = ipvs_del_service,
	.commit = ipvs_commit,
	.cleanup = ipvs_cleanup,
};
