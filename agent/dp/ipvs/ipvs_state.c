// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ipvs data plane's state: the frontends IPVS holds, as the agent
 * last wrote them (sorted, deep copies), the changes queued until commit(),
 * and the read-back of IPVS and the ownership ipsets (dump()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/ip_vs.h>
#include <linux/kpx.h>

#include "base/log.h"
#include "dp/ipvs/ipvs_exec.h"
#include "dp/ipvs/ipvs_link.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_priv.h"
#include "dp/ipvs/ipvs_rules.h"

/* --- services in memory ---------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* Index of @key in cur, or -(insertion point) - 1. */
long ipvs_cur_find(struct dp_ipvs *v, const struct kpx_service *key)
{
	return kpx_service_find(v->cur, v->ncur, key);
}

/* Replaces or inserts a copy of @s in cur. */
int ipvs_cur_put(struct dp_ipvs *v, const struct kpx_service *s)
{
	long i = ipvs_cur_find(v, s);
	struct kpx_service c;
	size_t at;

	if (kpx_service_copy(&c, s))
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

void ipvs_cur_del(struct dp_ipvs *v, const struct kpx_service *key)
{
	long i = ipvs_cur_find(v, key);

	if (i < 0)
		return;
	kpx_service_free(&v->cur[i]);
	memmove(&v->cur[i], &v->cur[i + 1], (v->ncur - (size_t)i - 1) * sizeof(*v->cur));
	v->ncur--;
}

void ipvs_cur_clear(struct dp_ipvs *v)
{
	kpx_services_free(v->cur, v->ncur);
	v->cur = NULL;
	v->ncur = v->capcur = 0;
}

void ipvs_pend_clear(struct dp_ipvs *v)
{
	size_t i;

	for (i = 0; i < v->npend; i++)
		kpx_service_free(&v->pend[i].s);
	v->npend = 0;
}

int ipvs_pend_push(struct dp_ipvs *v, const struct kpx_service *s, bool del)
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
	} else if (kpx_service_copy(&p->s, s)) {
		return -ENOMEM;
	}
	v->npend++;
	return 0;
}

/* --- reading back ------------------------------------------------------------- */

static void bad_entry(const char *line)
{
	kpx_warn("dataplane", "ipvs: unparsable ipset entry: %s", line);
}

/* Our ipset entries ("ipset save" parsed); *out malloc'd. */
int ipvs_read_sets(struct dp_ipvs *v, struct kpx_ipvs_entry **out, size_t *n)
{
	const char *argv[] = { "ipset", "save", NULL };
	char *text = NULL, err[400];
	int r;

	*out = NULL;
	*n = 0;
	r = kpx_ipvs_run(argv, NULL, &text, err, sizeof(err));
	if (r)
		return kpx_dp_fail(&v->dp, r, "ipset save: %s", err);
	r = kpx_ipvs_parse_save(text, bad_entry, out, n);
	free(text);
	return r;
}

/* One IPVS service as a kpx frontend (comment: the SVC entry's, or NULL);
 * its quiesced destinations are draining. */
static int svc_from_ipvs(struct dp_ipvs *v, const struct kpx_ipvs_svc *is,
			 const char *comment, const struct kpx_ipvs_entry *e,
			 size_t ne, struct kpx_service *s)
{
	struct kpx_ipvs_dest *d = NULL;
	size_t nd = 0, i;
	int r;

	memset(s, 0, sizeof(*s));
	r = kpx_ipvs_dest_dump(v->ipvs, is, &d, &nd);
	if (r)
		return kpx_dp_fail(&v->dp, r, "IPVS dest dump: %s", kpx_ipvs_errmsg(v->ipvs));
	r = kpx_ipvs_frontend(is, comment, d, nd, e, ne, s);
	for (i = 0; !r && i < nd; i++)
		if (!d[i].weight)
			r = ipvs_drain_add(v, is);
	free(d);
	return r;
}

/* Whether ipvs.excludeCIDRs holds @s's address: kpx does not touch it. */
static bool ipvs_excluded(const struct kpx_ipvs_svc *s)
{
	const struct kpx_dp_params *p = kpx_dp_params();
	size_t i;

	for (i = 0; i < p->n_ipvs_exclude; i++)
		if (kpx_cidr_contains(&p->ipvs_exclude[i], s->family, &s->addr))
			return true;
	return false;
}

int ipvs_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n)
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
	r = ipvs_read_sets(v, &e, &ne);
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
			if (e[j].set == KPX_IPVS_SET_SVC && ipvs_entry_is(&e[j], &svcs[i])) {
				ours = true;
				comment = e[j].comment;
			}
		/* an IPVS service on our link but not in our set: ours, stale,
		 * unless ipvs.excludeCIDRs holds its address (not touched) */
		if (!ours && non && bsearch(&ip, on, non, sizeof(*on), kpx_ipvs_ip_cmp) &&
		    !ipvs_excluded(&svcs[i]))
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
	ipvs_cur_clear(v);
	for (i = 0; i < nres; i++)
		if ((r = ipvs_cur_put(v, &res[i])))
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
