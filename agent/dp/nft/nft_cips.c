// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reference counts of the nftables mode's cluster-ips set (nft_cips.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kpx.h>

#include "base/addr.h"
#include "dp/nft/nft_cips.h"

struct kpx_nft_cip {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;			/* network byte order, unused bytes zero */
	long n;			/* frontends (committed) or change (staged) */
};

static int cip_cmp(const void *pa, const void *pb)
{
	const struct kpx_nft_cip *a = pa, *b = pb;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(&a->addr, &b->addr, sizeof(a->addr));
}

static int stage_one(struct kpx_nft_cips *c, const struct kpx_service *s, long n)
{
	struct kpx_nft_cip *e;

	if (c->nd == c->capd) {
		size_t cap = c->capd ? 2 * c->capd : 64;
		struct kpx_nft_cip *v = realloc(c->d, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->d = v;
		c->capd = cap;
	}
	e = &c->d[c->nd++];
	memset(e, 0, sizeof(*e));
	e->family = s->family;
	memcpy(&e->addr, &s->addr, kpx_addr_len(s->family));
	e->n = n;
	return 0;
}

int kpx_nft_cips_stage(struct kpx_nft_cips *c, const struct kpx_service *old,
		       const struct kpx_service *new)
{
	if (old && (old->flags & KPX_SVC_F_CLUSTER_IP) && stage_one(c, old, -1))
		return -ENOMEM;
	if (new && (new->flags & KPX_SVC_F_CLUSTER_IP) && stage_one(c, new, 1))
		return -ENOMEM;
	return 0;
}

int kpx_nft_cips_gen(struct kpx_nft_cips *c, struct kpx_strbuf *b)
{
	size_t i, k = 0;

	/* One entry per address, the net change. */
	qsort(c->d, c->nd, sizeof(*c->d), cip_cmp);
	for (i = 0; i < c->nd; i++) {
		if (k && !cip_cmp(&c->d[k - 1], &c->d[i]))
			c->d[k - 1].n += c->d[i].n;
		else
			c->d[k++] = c->d[i];
	}
	c->nd = k;
	for (i = 0; i < k; i++) {
		const struct kpx_nft_cip *e = bsearch(&c->d[i], c->v, c->n,
						      sizeof(*c->v), cip_cmp);
		long before = e ? e->n : 0, after = before + c->d[i].n;

		if (!before && after > 0)
			kpx_nft_gen_cluster_ip(b, c->d[i].family, &c->d[i].addr, true);
		else if (before > 0 && after <= 0)
			kpx_nft_gen_cluster_ip(b, c->d[i].family, &c->d[i].addr, false);
	}
	return b->err;
}

int kpx_nft_cips_apply(struct kpx_nft_cips *c)
{
	struct kpx_nft_cip *v = malloc((c->n + c->nd + 1) * sizeof(*v));
	size_t i = 0, j = 0, k = 0;

	if (!v)
		return -ENOMEM;
	/* Both sorted (gen sorted d): merge, summing equal addresses. */
	while (i < c->n || j < c->nd) {
		int r = i == c->n ? 1 : j == c->nd ? -1 : cip_cmp(&c->v[i], &c->d[j]);
		struct kpx_nft_cip e = r <= 0 ? c->v[i] : c->d[j];

		if (r == 0)
			e.n += c->d[j].n;
		i += r <= 0;
		j += r >= 0;
		if (e.n > 0)
			v[k++] = e;
	}
	free(c->v);
	c->v = v;
	c->n = k;
	c->nd = 0;
	return 0;
}

void kpx_nft_cips_unstage(struct kpx_nft_cips *c)
{
	c->nd = 0;
}

void kpx_nft_cips_clear(struct kpx_nft_cips *c)
{
	free(c->v);
	free(c->d);
	memset(c, 0, sizeof(*c));
}
