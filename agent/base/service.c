// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ordering, comparison and normalization of frontends and backends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"
#include "base/service.h"
#include <linux/kpx.h>

static int cmp_num(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int kpx_service_key_cmp(const struct kpx_service *a,
			const struct kpx_service *b)
{
	int r;

	r = cmp_num((uint64_t)a->family, (uint64_t)b->family);
	if (r)
		return r;
	r = cmp_num(a->protocol, b->protocol);
	if (r)
		return r;
	r = memcmp(&a->addr, &b->addr, kpx_addr_len(a->family));
	if (r)
		return r < 0 ? -1 : 1;
	return cmp_num(a->port, b->port);
}

struct kpx_service kpx_service_key(const struct kpx_service *s)
{
	struct kpx_service k;

	memset(&k, 0, sizeof(k));
	k.family = s->family;
	k.protocol = s->protocol;
	memcpy(&k.addr, &s->addr, kpx_addr_len(s->family));
	k.port = s->port;
	return k;
}

int kpx_service_copy(struct kpx_service *dst, const struct kpx_service *src)
{
	*dst = *src;
	dst->backends = NULL;
	dst->source_ranges = NULL;
	dst->name = NULL;
	if (src->name && !(dst->name = strdup(src->name)))
		goto nomem;
	if (src->nbackends) {
		dst->backends = malloc(src->nbackends * sizeof(*src->backends));
		if (!dst->backends)
			goto nomem;
		memcpy(dst->backends, src->backends,
		       src->nbackends * sizeof(*src->backends));
	}
	if (src->nsource_ranges) {
		dst->source_ranges = malloc(src->nsource_ranges *
					    sizeof(*src->source_ranges));
		if (!dst->source_ranges)
			goto nomem;
		memcpy(dst->source_ranges, src->source_ranges,
		       src->nsource_ranges * sizeof(*src->source_ranges));
	}
	return 0;
nomem:
	free(dst->backends);
	free(dst->name);
	memset(dst, 0, sizeof(*dst));
	return -ENOMEM;
}

long kpx_service_find(const struct kpx_service *v, size_t n,
		      const struct kpx_service *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = kpx_service_key_cmp(&v[mid], key);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

/*
 * All 16 bytes of the address union are compared: an IPv4 backend must have
 * the rest zeroed, which kpx_service_normalize() and the parsers ensure.
 */
int kpx_backend_cmp(const void *pa, const void *pb)
{
	const struct kpx_backend *a = pa, *b = pb;
	int r = memcmp(&a->addr, &b->addr, sizeof(a->addr));

	if (r)
		return r < 0 ? -1 : 1;
	return cmp_num(a->port, b->port);
}

/* Same (addr, port), then the higher weight first: dedup keeps that one. */
static int backend_cmp_weight(const void *pa, const void *pb)
{
	const struct kpx_backend *a = pa, *b = pb;
	int r = kpx_backend_cmp(a, b);

	return r ? r : cmp_num(b->weight, a->weight);
}

/* Scheduler settings equal once defaults are applied ("" is
 * "random", 0 the default size and bound). */
static bool kpx_service_same_sched(const struct kpx_service *a,
				   const struct kpx_service *b)
{
	const char *sa = a->scheduler[0] ? a->scheduler : "random";
	const char *sb = b->scheduler[0] ? b->scheduler : "random";
	uint32_t ma = a->mh_size ? a->mh_size : KPX_MH_SIZE_DEFAULT;
	uint32_t mb = b->mh_size ? b->mh_size : KPX_MH_SIZE_DEFAULT;
	uint32_t xa = a->affinity_max ? a->affinity_max : KPX_AFFINITY_MAX_DEFAULT;
	uint32_t xb = b->affinity_max ? b->affinity_max : KPX_AFFINITY_MAX_DEFAULT;

	return !strcmp(sa, sb) && ma == mb && xa == xb &&
	       a->affinity_timeout == b->affinity_timeout;
}

bool kpx_service_same_config(const struct kpx_service *a,
			     const struct kpx_service *b)
{
	size_t alen = kpx_addr_len(a->family);

	if (a->flags != b->flags || a->nbackends != b->nbackends ||
	    a->nsource_ranges != b->nsource_ranges)
		return false;
	if (!kpx_service_same_sched(a, b))
		return false;
	if (a->cluster_port != b->cluster_port ||
	    memcmp(&a->cluster_addr, &b->cluster_addr, alen))
		return false;
	/*
	 * A side without a name does not know names (an IPVS read-back).  A
	 * name is only missing or not: which of two Services claiming one
	 * key names it is not worth a SET (the claim is logged).
	 */
	if (a->name && b->name &&
	    (!*a->name != !*b->name || a->kind != b->kind))
		return false;
	for (size_t i = 0; i < a->nsource_ranges; i++)
		if (kpx_cidr_cmp(&a->source_ranges[i], &b->source_ranges[i]))
			return false;
	for (size_t i = 0; i < a->nbackends; i++) {
		const struct kpx_backend *x = &a->backends[i];
		const struct kpx_backend *y = &b->backends[i];

		if (memcmp(&x->addr, &y->addr, alen) || x->port != y->port ||
		    x->weight != y->weight)
			return false;
	}
	return true;
}

/*
 * Also zero-fills each backend address past @addrlen and turns weight 0 into
 * the module's default 1, so equal configurations compare equal.  Of
 * duplicates, the one with the highest weight is kept.
 */
void kpx_service_normalize(struct kpx_service *s, size_t addrlen)
{
	size_t i, out;

	if (addrlen > sizeof(s->addr))
		addrlen = sizeof(s->addr);
	if (addrlen < sizeof(s->addr))
		memset((char *)&s->addr + addrlen, 0,
		       sizeof(s->addr) - addrlen);
	for (i = 0; i < s->nbackends; i++) {
		struct kpx_backend *be = &s->backends[i];

		if (addrlen < sizeof(be->addr))
			memset((char *)&be->addr + addrlen, 0,
			       sizeof(be->addr) - addrlen);
		if (!be->weight)
			be->weight = 1;
	}
	if (s->nsource_ranges > 1) {
		qsort(s->source_ranges, s->nsource_ranges,
		      sizeof(*s->source_ranges), kpx_cidr_cmp);
		for (i = 1, out = 1; i < s->nsource_ranges; i++) {
			if (!kpx_cidr_cmp(&s->source_ranges[out - 1],
					  &s->source_ranges[i]))
				continue;
			s->source_ranges[out++] = s->source_ranges[i];
		}
		s->nsource_ranges = out;
	}
	if (s->nbackends < 2)
		return;
	qsort(s->backends, s->nbackends, sizeof(*s->backends),
	      backend_cmp_weight);
	for (i = 1, out = 1; i < s->nbackends; i++) {
		if (!kpx_backend_cmp(&s->backends[out - 1], &s->backends[i]))
			continue;
		if (out != i)
			s->backends[out] = s->backends[i];
		out++;
	}
	s->nbackends = out;
}

void kpx_service_free(struct kpx_service *s)
{
	if (!s)
		return;
	free(s->backends);
	s->backends = NULL;
	s->nbackends = 0;
	free(s->source_ranges);
	s->source_ranges = NULL;
	s->nsource_ranges = 0;
	free(s->name);
	s->name = NULL;
}

int kpx_service_set_name(struct kpx_service *s, const char *name)
{
	char *n = NULL;

	if (name && !(n = strdup(name)))
		return -ENOMEM;
	free(s->name);
	s->name = n;
	return 0;
}

static const char *const kind_names[] = KPX_SVC_KIND_NAMES;

_Static_assert(sizeof(kind_names) / sizeof(kind_names[0]) == KPX_SVC_KIND_MAX + 1,
	       "a name for every kind");

const char *kpx_kind_name(uint8_t kind)
{
	return kind <= KPX_SVC_KIND_MAX ? kind_names[kind] : "?";
}

int kpx_kind_parse(const char *name)
{
	if (!*name)
		return KPX_SVC_KIND_NONE;
	for (int k = 0; k <= KPX_SVC_KIND_MAX; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -EINVAL;
}

static const char *const flag_names[] = {
	"drop-empty", "masq-nonlocal", "masq", "cluster-ip", "ext-local",
};

_Static_assert((1U << sizeof(flag_names) / sizeof(flag_names[0])) - 1 == __KPX_SVC_F_ALL,
	       "a name for every flag");

const char *kpx_flag_name(unsigned int bit)
{
	return bit < sizeof(flag_names) / sizeof(flag_names[0]) ? flag_names[bit] : NULL;
}

int kpx_backend_parse(const char *s, int *family, struct kpx_backend *be)
{
	/* "[" 45 "]:" 10: a longer ADDR:PORT is not one */
	char hostport[64];
	const char *at = strchr(s, '@');
	size_t hplen = at ? (size_t)(at - s) : strlen(s);
	unsigned long w = 1;
	struct in6_addr a;
	uint16_t port;
	int fam, err;

	if (at && kpx_uint_parse(at + 1, strlen(at + 1), 1, KPX_WEIGHT_MAX, &w))
		return -EINVAL;
	if (hplen >= sizeof(hostport))
		return -EINVAL;
	memcpy(hostport, s, hplen);
	hostport[hplen] = '\0';
	err = kpx_hostport_parse(hostport, &fam, &a, &port);
	if (err)
		return err;
	memset(be, 0, sizeof(*be));
	memcpy(&be->addr, &a, sizeof(a));
	be->port = port;
	be->weight = (uint32_t)w;
	*family = fam;
	return 0;
}

void kpx_services_free(struct kpx_service *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		kpx_service_free(&v[i]);
	free(v);
}

const char *kpx_service_str(const struct kpx_service *s, char *buf, size_t len)
{
	char hp[KPX_HOSTPORT_STRLEN];

	snprintf(buf, len, "%s/%s",
		 kpx_hostport_str(s->family, &s->addr, s->port, hp, sizeof(hp)),
		 kpx_proto_name(s->protocol));
	return buf;
}

int kpx_hc_service_cmp(const void *pa, const void *pb)
{
	const struct kpx_hc_service *a = pa, *b = pb;
	int r = strcmp(a->namespace, b->namespace);

	return r ? r : strcmp(a->name, b->name);
}
