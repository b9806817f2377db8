// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the nftables mode's tables back (nft_read.h): the layout of
 * nft_rules.h, from libnftables' JSON listing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <nftables/libnftables.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/sysctl.h"
#include "dp/nft/nft_read.h"
#include "dp/nft/nft_rules.h"

/* The listing: its array and the table's family. */
struct listing {
	struct json_object *items;
	int family;
};

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *str_member(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key);

	return v && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) :
		       NULL;
}

/* The object of kind @kind ("map", "set", "chain") named @name. */
static struct json_object *find_obj(const struct listing *l, const char *kind,
				    const char *name)
{
	size_t i, len = json_object_array_length(l->items);

	for (i = 0; i < len; i++) {
		struct json_object *o =
			member(json_object_array_get_idx(l->items, i), kind);
		const char *nm = str_member(o, "name");

		if (nm && !strcmp(nm, name))
			return o;
	}
	return NULL;
}

/* The target of a {"goto": {"target": T}} verdict, NULL for another. */
static const char *goto_target(struct json_object *verdict)
{
	return str_member(member(verdict, "goto"), "target");
}

/* Calls @fn for each expression of each rule of chain @chain. */
static void each_expr(const struct listing *l, const char *chain,
		      void (*fn)(const struct listing *l,
				 struct json_object *expr,
				 struct kpx_service *s),
		      struct kpx_service *s)
{
	size_t i, j, len = json_object_array_length(l->items);

	for (i = 0; i < len; i++) {
		struct json_object *r =
			member(json_object_array_get_idx(l->items, i), "rule");
		const char *c = str_member(r, "chain");
		struct json_object *ex = member(r, "expr");

		if (!c || strcmp(c, chain) || !ex ||
		    !json_object_is_type(ex, json_type_array))
			continue;
		for (j = 0; j < json_object_array_length(ex); j++)
			fn(l, json_object_array_get_idx(ex, j), s);
	}
}

static int add_backend(struct kpx_service *s, const struct kpx_backend *b)
{
	struct kpx_backend *nb =
		realloc(s->backends, (s->nbackends + 1) * sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	s->backends = nb;
	nb[s->nbackends++] = *b;
	return 0;
}

/* ep- chain: the "dnat to ADDR:PORT" is the backend. */
static void ep_expr(const struct listing *l, struct json_object *e,
		    struct kpx_service *s)
{
	struct json_object *d = member(e, "dnat"), *port = member(d, "port");
	struct kpx_backend *b = &s->backends[s->nbackends - 1];
	const char *a = str_member(d, "addr");

	if (a && port && inet_pton(l->family, a, &b->addr) == 1)
		b->port = (uint16_t)json_object_get_int(port);
}

/* svc- chain: masquerade jumps, the dispatch map, the affinity sets. */
static void svc_expr(const struct listing *l, struct json_object *e,
		     struct kpx_service *s)
{
	struct json_object *vm = member(e, "vmap"), *key, *set, *m;
	const char *t = str_member(member(e, "jump"), "target");
	size_t i;

	if (t && !strcmp(t, "mark-for-masquerade"))
		s->flags |= KPX_SVC_F_MASQ;
	if (t && !strcmp(t, "mark-nonlocal"))
		s->flags |= KPX_SVC_F_MASQ_NONLOCAL;
	/* "ip saddr @aff-..." : the set's timeout is the affinity's */
	m = member(e, "match");
	t = str_member(m, "right");
	if (t && !strncmp(t, "@aff-", 5)) {
		struct json_object *to =
			member(find_obj(l, "set", t + 1), "timeout");

		if (to)
			s->affinity_timeout =
				(uint32_t)json_object_get_int64(to);
	}
	if (!vm)
		return;
	key = member(vm, "key");
	if (member(key, "jhash"))
		snprintf(s->scheduler, sizeof(s->scheduler), "sh");
	else if ((t = str_member(member(key, "numgen"), "mode")) &&
		 !strcmp(t, "inc"))
		snprintf(s->scheduler, sizeof(s->scheduler), "rr");
	else
		snprintf(s->scheduler, sizeof(s->scheduler), "random");
	set = member(member(vm, "data"), "set");
	if (!set || !json_object_is_type(set, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(set); i++) {
		struct json_object *el = json_object_array_get_idx(set, i);
		struct json_object *k = json_object_array_get_idx(el, 0);
		struct json_object *range = member(k, "range");
		struct kpx_backend b = { .weight = 1 };
		const char *ep = goto_target(json_object_array_get_idx(el, 1));

		if (!ep)
			continue;
		if (range)
			b.weight = (uint32_t)(json_object_get_int64(
						      json_object_array_get_idx(
							      range, 1)) -
					      json_object_get_int64(
						      json_object_array_get_idx(
							      range, 0)) +
					      1);
		if (add_backend(s, &b))
			return;
		each_expr(l, ep, ep_expr, s);
	}
}

/* fw- chain: "ip saddr != { RANGES } drop". */
static void fw_expr(const struct listing *l, struct json_object *e,
		    struct kpx_service *s)
{
	struct json_object *m = member(e, "match"),
			   *set = member(member(m, "right"), "set");
	const char *op = str_member(m, "op");
	size_t i;

	if (!set || !op || strcmp(op, "!=") ||
	    !json_object_is_type(set, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(set); i++) {
		struct json_object *el = json_object_array_get_idx(set, i);
		struct json_object *p = member(el, "prefix");
		const char *a = p ? str_member(p, "addr") :
				    json_object_get_string(el);
		struct kpx_cidr c = { .family = l->family };
		struct kpx_cidr *nv;

		c.len = p ? (uint8_t)json_object_get_int(member(p, "len")) :
			    (l->family == AF_INET ? 32 : 128);
		if (!a || inet_pton(l->family, a, &c.addr) != 1)
			continue;
		nv = realloc(s->source_ranges,
			     (s->nsource_ranges + 1) * sizeof(*nv));
		if (!nv)
			return;
		s->source_ranges = nv;
		nv[s->nsource_ranges++] = c;
	}
}

/* The frontend key of a map element's key {"concat": [ADDR, PROTO, PORT]}. */
static int elem_key(const struct listing *l, struct json_object *k,
		    struct kpx_service *s)
{
	struct json_object *c = member(k, "concat");
	const char *a = json_object_get_string(json_object_array_get_idx(c, 0));
	const char *p = json_object_get_string(json_object_array_get_idx(c, 1));
	struct json_object *port = json_object_array_get_idx(c, 2);

	if (!c || !a || !p || !port || inet_pton(l->family, a, &s->addr) != 1 ||
	    kpx_proto_parse(p, &s->protocol))
		return -EINVAL;
	s->family = l->family;
	s->port = (uint16_t)json_object_get_int(port);
	return 0;
}

/* "ns/name:port kind" into the name and kind. */
static int name_comment(const char *c, struct kpx_service *s)
{
	const char *sp = strrchr(c, ' ');
	int kind;

	if (!sp)
		return kpx_service_set_name(s, c);
	kind = kpx_kind_parse(sp + 1);
	if (kind < 0)
		return kpx_service_set_name(s, c);
	s->kind = (uint8_t)kind;
	s->name = strndup(c, (size_t)(sp - c));
	return s->name ? 0 : -ENOMEM;
}

static long find_key(struct kpx_service *v, size_t n,
		     const struct kpx_service *k)
{
	for (size_t i = 0; i < n; i++)
		if (!kpx_service_key_cmp(&v[i], k))
			return (long)i;
	return -1;
}

/* The elements of map @name: one frontend each (service-ips,
 * no-endpoint-services) or source ranges of one (firewall-ips). */
static int read_map(const struct listing *l, const char *name,
		    struct kpx_service **v, size_t *n)
{
	struct json_object *elems = member(find_obj(l, "map", name), "elem");
	size_t i;

	if (!elems || !json_object_is_type(elems, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(elems); i++) {
		struct json_object *el = json_object_array_get_idx(elems, i);
		struct json_object *k = json_object_array_get_idx(el, 0);
		struct json_object *verdict = json_object_array_get_idx(el, 1);
		struct json_object *inner = member(k, "elem");
		const char *comment = inner ? str_member(inner, "comment") :
					      NULL;
		const char *target = goto_target(verdict);
		struct kpx_service key = { 0 }, *s, *nv;
		long at;

		if (elem_key(l, inner ? member(inner, "val") : k, &key))
			continue;
		at = find_key(*v, *n, &key);
		if (!strcmp(name, "firewall-ips")) {
			if (at >= 0 && target)
				each_expr(l, target, fw_expr, &(*v)[at]);
			continue;
		}
		if (at >= 0)
			continue;
		nv = realloc(*v, (*n + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		s = &nv[(*n)++];
		*s = key;
		if (comment && name_comment(comment, s))
			return -ENOMEM;
		if (verdict && json_object_object_get_ex(verdict, "drop", NULL))
			s->flags |= KPX_SVC_F_DROP_EMPTY;
		if (target && !strncmp(target, "svc-", 4))
			each_expr(l, target, svc_expr, s);
	}
	return 0;
}

int kpx_nft_parse_json(const char *json, struct kpx_service **v, size_t *n)
{
	struct json_object *root = json_tokener_parse(json), *cips;
	struct listing l = { .items = member(root, "nftables") };
	size_t first = *n, i, j, alen;
	const char *fam = NULL;
	int r;

	if (!l.items || !json_object_is_type(l.items, json_type_array)) {
		json_object_put(root);
		return -EINVAL;
	}
	for (i = 0; i < json_object_array_length(l.items) && !fam; i++)
		fam = str_member(member(json_object_array_get_idx(l.items, i),
					"table"),
				 "family");
	l.family = fam && !strcmp(fam, "ip6") ? AF_INET6 : AF_INET;
	alen = kpx_addr_len(l.family);
	r = read_map(&l, "service-ips", v, n);
	if (!r)
		r = read_map(&l, "no-endpoint-services", v, n);
	if (!r)
		r = read_map(&l, "firewall-ips", v, n);
	/* the addresses of ClusterIP frontends */
	cips = member(find_obj(&l, "set", "cluster-ips"), "elem");
	for (i = 0; !r && cips && i < json_object_array_length(cips); i++) {
		const char *a = json_object_get_string(
			json_object_array_get_idx(cips, i));
		struct in6_addr addr;

		if (!a || inet_pton(l.family, a, &addr) != 1)
			continue;
		for (j = first; j < *n; j++)
			if (!memcmp(&(*v)[j].addr, &addr, alen))
				(*v)[j].flags |= KPX_SVC_F_CLUSTER_IP;
	}
	for (j = first; j < *n; j++)
		kpx_service_normalize(&(*v)[j], alen);
	json_object_put(root);
	return r;
}

int kpx_nft_read(struct kpx_service **out, size_t *n, char *err, size_t errlen)
{
	static const char *const fams[] = { "ip", "ip6" };
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int r = 0, tables = 0;
	char cmd[64];

	*out = NULL;
	*n = 0;
	/* asking would load nf_tables */
	if (!kpx_module_loaded("nf_tables")) {
		snprintf(err, errlen, "nf_tables not loaded");
		if (nft)
			nft_ctx_free(nft);
		return -ENOENT;
	}
	if (!nft || nft_ctx_buffer_output(nft) || nft_ctx_buffer_error(nft)) {
		snprintf(err, errlen, "libnftables: cannot create a context");
		if (nft)
			nft_ctx_free(nft);
		return -ENOMEM;
	}
	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON);
	for (size_t i = 0; i < 2 && !r; i++) {
		snprintf(cmd, sizeof(cmd), "list table %s %s", fams[i],
			 KPX_NFT_TABLE);
		if (nft_run_cmd_from_buffer(nft, cmd))
			continue; /* no such table */
		tables++;
		r = kpx_nft_parse_json(nft_ctx_get_output_buffer(nft), out, n);
		if (r)
			snprintf(err, errlen, "nft list table %s %s: %s",
				 fams[i], KPX_NFT_TABLE, strerror(-r));
	}
	nft_ctx_free(nft);
	if (!r && !tables) {
		snprintf(err, errlen, "no nftables table %s (ip or ip6)",
			 KPX_NFT_TABLE);
		r = -ENOENT;
	}
	if (r) {
		kpx_services_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return r;
}
