// SPDX-License-Identifier: GPL-2.0-only
/*
 * iptables-restore input for --proxy-mode iptables, and iptables-save
 * parsing; see ipt_rules.h for the chain layout.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kpx.h>
#include <openssl/evp.h>

#include "dp/ipt/ipt_rules.h"

#define NAT_TOP_SERVICES "KPX-SERVICES"
#define NAT_TOP_NONLOCAL "KPX-MASQ-NONLOCAL"
#define NAT_TOP_MARK "KPX-MARK-MASQ"
#define NAT_TOP_POST "KPX-POSTROUTING"
#define FILTER_FORWARD "KPX-FORWARD"
/* Chains of the ipvs mode (ipvs_rules.c): its own to keep or clean up. */
#define IPVS_PREFIX "KPX-IPVS"

/* The jump rules from the built-in chains, as written and as saved. */
static const struct {
	const char *table, *chain, *target, *match;
} hooks[KPX_IPT_NHOOKS] = {
	[KPX_IPT_HOOK_NAT_PREROUTING] = { "nat", "PREROUTING", NAT_TOP_SERVICES,
		"-m comment --comment \"kpx service portals\"" },
	[KPX_IPT_HOOK_NAT_OUTPUT] = { "nat", "OUTPUT", NAT_TOP_SERVICES,
		"-m comment --comment \"kpx service portals\"" },
	[KPX_IPT_HOOK_NAT_POSTROUTING] = { "nat", "POSTROUTING", NAT_TOP_POST,
		"-m comment --comment \"kpx postrouting rules\"" },
	[KPX_IPT_HOOK_FILTER_INPUT] = { "filter", "INPUT", NAT_TOP_SERVICES,
		"-m conntrack --ctstate NEW -m comment --comment \"kpx service portals\"" },
	[KPX_IPT_HOOK_FILTER_FORWARD] = { "filter", "FORWARD", NAT_TOP_SERVICES,
		"-m conntrack --ctstate NEW -m comment --comment \"kpx service portals\"" },
	[KPX_IPT_HOOK_FILTER_OUTPUT] = { "filter", "OUTPUT", NAT_TOP_SERVICES,
		"-m conntrack --ctstate NEW -m comment --comment \"kpx service portals\"" },
	[KPX_IPT_HOOK_FILTER_KPX_FORWARD] = { "filter", "FORWARD", FILTER_FORWARD,
		"-m comment --comment \"kpx forwarding rules\"" },
};

void kpx_ipt_hash(const char *s, char out[17])
{
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, bits = 0, acc = 0;
	size_t i = 0, o = 0;

	if (!EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL))
		memset(md, 0, sizeof(md));	/* cannot happen with libcrypto's sha256 */
	/* 16 base32 characters = 80 bits = the first 10 bytes. */
	while (o < 16) {
		if (bits < 5) {
			acc = (acc << 8) | md[i++];
			bits += 8;
		}
		out[o++] = b32[(acc >> (bits - 5)) & 31];
		bits -= 5;
	}
	out[16] = '\0';
}

static const char *proto_name(uint8_t p)
{
	switch (p) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_SCTP:
		return "sctp";
	}
	return NULL;
}

/* "ADDR" of a frontend or backend address. */
static const char *addr_str(int family, const void *a, char *buf, size_t len)
{
	if (!inet_ntop(family, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* The key text hashed into chain names: "tcp/10.96.0.10/80". */
static void key_text(const struct kpx_service *s, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	const char *p = proto_name(s->protocol);

	snprintf(buf, len, "%s/%s/%u", p ? p : "?",
		 addr_str(s->family, &s->addr, a, sizeof(a)), s->port);
}

static void chain_name(const char *prefix, const char *text, kpx_ipt_chain_t out)
{
	char h[17];

	kpx_ipt_hash(text, h);
	snprintf(out, KPX_IPT_CHAIN_LEN, "%s%s", prefix, h);
}

void kpx_ipt_chain_svc(const struct kpx_service *s, kpx_ipt_chain_t out)
{
	char k[80];

	key_text(s, k, sizeof(k));
	chain_name("KPX-SVC-", k, out);
}

void kpx_ipt_chain_fw(const struct kpx_service *s, kpx_ipt_chain_t out)
{
	char k[80];

	key_text(s, k, sizeof(k));
	chain_name("KPX-FW-", k, out);
}

void kpx_ipt_chain_sep(const struct kpx_service *s, const struct kpx_backend *b,
		       kpx_ipt_chain_t out)
{
	char k[80], a[INET6_ADDRSTRLEN], t[140];

	key_text(s, k, sizeof(k));
	snprintf(t, sizeof(t), "%s/%s/%u", k, addr_str(s->family, &b->addr, a, sizeof(a)),
		 b->port);
	chain_name("KPX-SEP-", t, out);
}

static int chains_push(kpx_ipt_chain_t **v, size_t *n, const char *name)
{
	kpx_ipt_chain_t *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	snprintf(nv[*n], KPX_IPT_CHAIN_LEN, "%s", name);
	(*n)++;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

const struct kpx_service *kpx_ipt_cluster_frontend(const struct kpx_service *v, size_t n,
						   const struct kpx_service *s)
{
	struct kpx_service k;

	if (!(s->flags & KPX_SVC_F_EXT_LOCAL) || !s->cluster_port)
		return NULL;
	memset(&k, 0, sizeof(k));
	k.family = s->family;
	k.protocol = s->protocol;
	memcpy(&k.addr, &s->cluster_addr, sizeof(s->cluster_addr));
	k.port = s->cluster_port;
	return bsearch(&k, v, n, sizeof(*v), key_cmp);
}

/*
 * Whether @s has nat chains: with backends, or as an eTP Local external
 * frontend, whose chain holds the in-cluster short-circuit even when no
 * endpoint is local.
 */
static bool has_chains(const struct kpx_service *s)
{
	return s->nbackends || ((s->flags & KPX_SVC_F_EXT_LOCAL) && s->cluster_port);
}

int kpx_ipt_frontend_chains(const struct kpx_service *s, kpx_ipt_chain_t **v,
			    size_t *n)
{
	kpx_ipt_chain_t c;
	size_t i;

	if (!has_chains(s))
		return 0;
	kpx_ipt_chain_svc(s, c);
	if (chains_push(v, n, c))
		return -ENOMEM;
	if (s->nsource_ranges) {
		kpx_ipt_chain_fw(s, c);
		if (chains_push(v, n, c))
			return -ENOMEM;
	}
	for (i = 0; i < s->nbackends; i++) {
		kpx_ipt_chain_sep(s, &s->backends[i], c);
		if (chains_push(v, n, c))
			return -ENOMEM;
	}
	return 0;
}

bool kpx_ipt_is_localhost(const struct kpx_service *s)
{
	return s->family == AF_INET &&
	       (ntohl(s->addr.v4.s_addr) >> 24) == 127;
}

/* "-d VIP/32 -p tcp -m tcp --dport 80" */
static void match_frontend(struct kpx_strbuf *b, const struct kpx_service *s)
{
	char a[INET6_ADDRSTRLEN];
	const char *p = proto_name(s->protocol);

	kpx_strbuf_printf(b, "-d %s/%d -p %s -m %s --dport %u",
		       addr_str(s->family, &s->addr, a, sizeof(a)),
		       s->family == AF_INET ? 32 : 128, p, p, s->port);
}

bool kpx_ipt_name_ok(const char *name)
{
	return name && *name && strlen(name) < 200 && !strpbrk(name, "\"\\ ");
}

/*
 * "-m comment --comment \"demo/web:http cluster-ip\"" with a name, as
 * kube-proxy's "ns/name:port cluster IP"; "tcp 10.96.0.10:80" without.
 */
static void comment_frontend(struct kpx_strbuf *b, const struct kpx_service *s,
			     const char *what)
{
	char a[INET6_ADDRSTRLEN];

	if (kpx_ipt_name_ok(s->name)) {
		kpx_strbuf_printf(b, " -m comment --comment \"%s %s%s%s\"", s->name,
				  kpx_kind_name(s->kind), what ? " " : "", what ? what : "");
		return;
	}
	kpx_strbuf_printf(b, " -m comment --comment \"%s %s%s%s:%u%s%s\"",
		       proto_name(s->protocol), s->family == AF_INET6 ? "[" : "",
		       addr_str(s->family, &s->addr, a, sizeof(a)),
		       s->family == AF_INET6 ? "]" : "", s->port,
		       what ? " " : "", what ? what : "");
}

static void cidr_str(const struct kpx_cidr *c, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	snprintf(buf, len, "%s/%u", addr_str(c->family, &c->addr, a, sizeof(a)), c->len);
}

void kpx_ipt_localnet_drop(struct kpx_strbuf *b, const char *chain)
{
	kpx_strbuf_printf(b, "-A %s ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment \"block incoming localnet connections\" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n",
			  chain);
}

/* filter KPX-SERVICES: rejects, drops, the source-range firewall. */
static void filter_rules(const struct kpx_ipt_gen *g, struct kpx_strbuf *b)
{
	const char *empty_target;
	char r[INET6_ADDRSTRLEN + 8];
	bool localhost = false;
	size_t i, j;

	for (i = 0; i < g->n; i++)
		if (g->svcs[i].family == g->family && kpx_ipt_is_localhost(&g->svcs[i]))
			localhost = true;
	/*
	 * As kube-proxy when it sets route_localnet (CVE-2020-8558): only
	 * the node itself may reach 127.0.0.0/8, and only DNATed.
	 */
	if (localhost) {
		kpx_ipt_localnet_drop(b, "KPX-SERVICES");
		/*
		 * That rule lets DNAT through, for the node's own clients;
		 * another host's connection to 127.0.0.1:NodePort is DNATed
		 * to a pod and forwarded: dropped by its original
		 * destination (the kpx module drops loopback destinations
		 * from outside).
		 */
		kpx_strbuf_printf(b, "-A KPX-SERVICES ! -s 127.0.0.0/8 -m comment --comment \"block forwarded localnet connections\" -m conntrack --ctstate DNAT --ctorigdst 127.0.0.0/8 -j DROP\n");
	}
	for (i = 0; i < g->n; i++) {
		const struct kpx_service *s = &g->svcs[i];

		if (s->family != g->family)
			continue;
		if (s->nbackends) {
			if (!s->nsource_ranges)
				continue;
			/* Allowed sources were DNATed in nat: the rest. */
			kpx_strbuf_printf(b, "-A KPX-SERVICES ");
			match_frontend(b, s);
			comment_frontend(b, s, "source not allowed");
			kpx_strbuf_printf(b, " -j DROP\n");
			continue;
		}
		empty_target = s->flags & KPX_SVC_F_DROP_EMPTY ? "DROP" : "REJECT";
		if (s->nsource_ranges && !(s->flags & KPX_SVC_F_DROP_EMPTY)) {
			for (j = 0; j < s->nsource_ranges; j++) {
				cidr_str(&s->source_ranges[j], r, sizeof(r));
				kpx_strbuf_printf(b, "-A KPX-SERVICES -s %s ", r);
				match_frontend(b, s);
				comment_frontend(b, s, "has no endpoints");
				kpx_strbuf_printf(b, " -j REJECT\n");
			}
			empty_target = "DROP";	/* other sources */
		}
		kpx_strbuf_printf(b, "-A KPX-SERVICES ");
		match_frontend(b, s);
		comment_frontend(b, s, s->nsource_ranges ? "has no endpoints, source not allowed" :
				 "has no endpoints");
		kpx_strbuf_printf(b, " -j %s\n", empty_target);
	}
}

/*
 * "-A @chain MATCH -j @target" for each match of the local-traffic
 * detector (--detect-local-mode: the local CIDRs of @g's family, the
 * bridge interface, the interface prefix); nothing without a configuration.
 */
static void local_source_rules(const struct kpx_ipt_gen *g, const char *chain,
			       const char *target, struct kpx_strbuf *b)
{
	const struct kpx_ns_config *c = g->cfg;
	char r[INET6_ADDRSTRLEN + 8];
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nlocal_cidrs && i < KPX_CONFIG_CIDRS_MAX; i++) {
		if (c->local_cidrs[i].family != g->family)
			continue;
		cidr_str(&c->local_cidrs[i], r, sizeof(r));
		kpx_strbuf_printf(b, "-A %s -s %s -j %s\n", chain, r, target);
	}
	if (c->local_ifname[0])
		kpx_strbuf_printf(b, "-A %s -i %.*s -j %s\n", chain, IF_NAMESIZE - 1,
			       c->local_ifname, target);
	if (c->local_ifprefix[0])
		kpx_strbuf_printf(b, "-A %s -i %.*s+ -j %s\n", chain, IF_NAMESIZE - 1,
			       c->local_ifprefix, target);
}

/* KPX-MASQ-NONLOCAL: sources that are local per @c return, others marked. */
static void nonlocal_rules(const struct kpx_ipt_gen *g, struct kpx_strbuf *b)
{
	local_source_rules(g, NAT_TOP_NONLOCAL, "RETURN", b);
	kpx_strbuf_printf(b, "-A " NAT_TOP_NONLOCAL " -j " NAT_TOP_MARK "\n");
}

/*
 * The ClusterIP frontend an eTP Local external frontend @s names
 * (KPX_SVC_F_EXT_LOCAL: cluster_addr, cluster_port), when it has backends
 * (so its chain exists); NULL otherwise.
 */
static const struct kpx_service *cluster_frontend(const struct kpx_ipt_gen *g,
						  const struct kpx_service *s)
{
	const struct kpx_service *c = kpx_ipt_cluster_frontend(g->svcs, g->n, s);

	return c && c->nbackends ? c : NULL;
}

/*
 * kube-proxy's short-circuit of in-cluster traffic to an eTP Local
 * external destination (its KUBE-EXT chain): pods (the local-traffic
 * detector's sources) go to the ClusterIP frontend's chain, the node
 * itself (addrtype LOCAL) too, masqueraded; other sources stay on the
 * local endpoints.  That chain's own masquerade rule matches its ClusterIP
 * only, so the pods' traffic keeps its source as with kube-proxy.
 */
static void shortcut_rules(const struct kpx_ipt_gen *g, const struct kpx_service *s,
			   const char *svc, struct kpx_strbuf *b)
{
	const struct kpx_service *cs = cluster_frontend(g, s);
	kpx_ipt_chain_t cl;

	if (!cs)
		return;
	kpx_ipt_chain_svc(cs, cl);
	local_source_rules(g, svc, cl, b);
	kpx_strbuf_printf(b, "-A %s -m addrtype --src-type LOCAL -j " NAT_TOP_MARK "\n", svc);
	kpx_strbuf_printf(b, "-A %s -m addrtype --src-type LOCAL -j %s\n", svc, cl);
}

/* The chains of one frontend with backends. */
static void frontend_chains(const struct kpx_ipt_gen *g, const struct kpx_service *s,
			    struct kpx_strbuf *b)
{
	kpx_ipt_chain_t svc, fw, sep;
	char a[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN + 8];
	const char *p = proto_name(s->protocol);
	uint64_t rest = 0;
	size_t i;

	kpx_ipt_chain_svc(s, svc);
	if (s->nsource_ranges) {
		kpx_ipt_chain_fw(s, fw);
		for (i = 0; i < s->nsource_ranges; i++) {
			cidr_str(&s->source_ranges[i], r, sizeof(r));
			kpx_strbuf_printf(b, "-A %s -s %s -j %s\n", fw, r, svc);
		}
	}
	shortcut_rules(g, s, svc, b);
	/* Its own destination only: a short-circuit jumping here skips it. */
	if (s->flags & (KPX_SVC_F_MASQ | KPX_SVC_F_MASQ_NONLOCAL)) {
		kpx_strbuf_printf(b, "-A %s ", svc);
		match_frontend(b, s);
		kpx_strbuf_printf(b, " -j %s\n",
			       s->flags & KPX_SVC_F_MASQ ? NAT_TOP_MARK : NAT_TOP_NONLOCAL);
	}
	/* ClientIP affinity: a client seen within T seconds keeps its endpoint. */
	if (s->affinity_timeout)
		for (i = 0; i < s->nbackends; i++) {
			kpx_ipt_chain_sep(s, &s->backends[i], sep);
			kpx_strbuf_printf(b, "-A %s -m recent --name %s --rcheck --seconds %u --reap -j %s\n",
				       svc, sep, s->affinity_timeout, sep);
		}
	for (i = 0; i < s->nbackends; i++)
		rest += s->backends[i].weight ? s->backends[i].weight : 1;
	for (i = 0; i < s->nbackends; i++) {
		const struct kpx_backend *be = &s->backends[i];
		uint32_t w = be->weight ? be->weight : 1;

		kpx_ipt_chain_sep(s, be, sep);
		if (i + 1 < s->nbackends)
			kpx_strbuf_printf(b, "-A %s -m statistic --mode random --probability %0.10f -j %s\n",
				       svc, (double)w / (double)rest, sep);
		else
			kpx_strbuf_printf(b, "-A %s -j %s\n", svc, sep);
		rest -= w;
	}
	for (i = 0; i < s->nbackends; i++) {
		const struct kpx_backend *be = &s->backends[i];

		kpx_ipt_chain_sep(s, be, sep);
		addr_str(s->family, &be->addr, a, sizeof(a));
		/* Hairpin: an endpoint reaching itself through the frontend. */
		kpx_strbuf_printf(b, "-A %s -s %s/%d -j " NAT_TOP_MARK "\n", sep, a,
			       s->family == AF_INET ? 32 : 128);
		kpx_strbuf_printf(b, "-A %s -p %s", sep, p);
		if (s->affinity_timeout)
			kpx_strbuf_printf(b, " -m recent --name %s --set --rsource", sep);
		if (s->family == AF_INET)
			kpx_strbuf_printf(b, " -m %s -j DNAT --to-destination %s:%u\n", p, a, be->port);
		else
			kpx_strbuf_printf(b, " -m %s -j DNAT --to-destination [%s]:%u\n", p, a, be->port);
	}
}

static void hook_rules(const struct kpx_ipt_gen *g, const char *table,
		       struct kpx_strbuf *b)
{
	int h;

	for (h = 0; h < KPX_IPT_NHOOKS; h++)
		if ((g->add_hooks & (1U << h)) && !strcmp(hooks[h].table, table))
			kpx_strbuf_printf(b, "-I %s 1 %s -j %s\n", hooks[h].chain,
				       hooks[h].match, hooks[h].target);
}

int kpx_ipt_restore_text(const struct kpx_ipt_gen *g, struct kpx_strbuf *b)
{
	kpx_ipt_chain_t *wc = NULL;
	size_t nwc = 0, i;
	int r = 0;

	for (i = 0; i < g->n; i++) {
		const struct kpx_service *s = &g->svcs[i];

		if (s->family != g->family)
			continue;
		if (!proto_name(s->protocol))
			return -EINVAL;
		if ((!g->write || g->write[i]) && kpx_ipt_frontend_chains(s, &wc, &nwc)) {
			free(wc);
			return -ENOMEM;
		}
	}

	kpx_strbuf_printf(b, "*filter\n:KPX-SERVICES - [0:0]\n:" FILTER_FORWARD " - [0:0]\n");
	for (i = 0; i < g->ndel_filter; i++)
		kpx_strbuf_printf(b, ":%s - [0:0]\n", g->del_filter[i]);
	hook_rules(g, "filter", b);
	if (g->drop_invalid)
		kpx_strbuf_printf(b, "-A " FILTER_FORWARD " -m conntrack --ctstate INVALID -m comment --comment \"conntrack INVALID: never forwarded untranslated\" -j DROP\n");
	filter_rules(g, b);
	for (i = 0; i < g->ndel_filter; i++)
		kpx_strbuf_printf(b, "-X %s\n", g->del_filter[i]);
	kpx_strbuf_printf(b, "COMMIT\n");

	kpx_strbuf_printf(b, "*nat\n:" NAT_TOP_SERVICES " - [0:0]\n:" NAT_TOP_NONLOCAL
		       " - [0:0]\n:" NAT_TOP_MARK " - [0:0]\n:" NAT_TOP_POST " - [0:0]\n");
	for (i = 0; i < nwc; i++)
		kpx_strbuf_printf(b, ":%s - [0:0]\n", wc[i]);
	for (i = 0; i < g->ndel_nat; i++)
		kpx_strbuf_printf(b, ":%s - [0:0]\n", g->del_nat[i]);
	hook_rules(g, "nat", b);
	kpx_strbuf_printf(b, "-A " NAT_TOP_MARK " -j MARK --or-mark 0x%x\n", KPX_IPT_MASQ_MARK);
	kpx_strbuf_printf(b, "-A " NAT_TOP_POST " -m mark ! --mark 0x%x/0x%x -j RETURN\n",
		       KPX_IPT_MASQ_MARK, KPX_IPT_MASQ_MARK);
	/* The mark would otherwise follow the packet if it is re-routed. */
	kpx_strbuf_printf(b, "-A " NAT_TOP_POST " -j MARK --xor-mark 0x%x\n", KPX_IPT_MASQ_MARK);
	kpx_strbuf_printf(b, "-A " NAT_TOP_POST " -m comment --comment \"kpx service traffic requiring SNAT\" -j MASQUERADE\n");
	nonlocal_rules(g, b);
	for (i = 0; i < g->n; i++) {
		const struct kpx_service *s = &g->svcs[i];
		kpx_ipt_chain_t c;

		if (s->family != g->family || !has_chains(s))
			continue;
		if (s->nsource_ranges)
			kpx_ipt_chain_fw(s, c);
		else
			kpx_ipt_chain_svc(s, c);
		kpx_strbuf_printf(b, "-A " NAT_TOP_SERVICES " ");
		match_frontend(b, s);
		comment_frontend(b, s, NULL);
		kpx_strbuf_printf(b, " -j %s\n", c);
	}
	for (i = 0; i < g->n; i++) {
		const struct kpx_service *s = &g->svcs[i];

		if (s->family == g->family && has_chains(s) && (!g->write || g->write[i]))
			frontend_chains(g, s, b);
	}
	for (i = 0; i < g->ndel_nat; i++)
		kpx_strbuf_printf(b, "-X %s\n", g->del_nat[i]);
	kpx_strbuf_printf(b, "COMMIT\n");
	free(wc);
	if (b->err)
		r = b->err;
	return r;
}

/* --- iptables-save ------------------------------------------------------- */

static int strs_push(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strndup(s, len);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Does the rule line @l (length @len) end with " -j TARGET"? */
static bool ends_with_target(const char *l, size_t len, const char *target)
{
	char want[KPX_IPT_CHAIN_LEN + 8];
	size_t wl;

	snprintf(want, sizeof(want), " -j %s", target);
	wl = strlen(want);
	return len >= wl && !memcmp(l + len - wl, want, wl);
}

int kpx_ipt_parse_save(const char *text, struct kpx_ipt_saved *out)
{
	const char *l = text, *e;
	char table[16] = "";
	int h;

	memset(out, 0, sizeof(*out));
	for (; l && *l; l = *e ? e + 1 : e) {
		size_t len;

		e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l);
		len = (size_t)(e - l);
		if (l[0] == '*') {
			snprintf(table, sizeof(table), "%.*s", (int)(len - 1), l + 1);
		} else if (!strncmp(l, ":KPX-", 5) && strncmp(l, ":" IPVS_PREFIX, 1 + strlen(IPVS_PREFIX))) {
			const char *sp = memchr(l, ' ', len);
			size_t nl = sp ? (size_t)(sp - l - 1) : len - 1;
			char name[KPX_IPT_CHAIN_LEN];
			int r = 0;

			snprintf(name, sizeof(name), "%.*s", (int)nl, l + 1);
			if (!strcmp(table, "nat"))
				r = chains_push(&out->nat, &out->nnat, name);
			else if (!strcmp(table, "filter"))
				r = chains_push(&out->filter, &out->nfilter, name);
			if (r)
				goto oom;
		} else if (!strncmp(l, "-A ", 3) && strncmp(l, "-A KPX-", 7)) {
			const char *j = memmem(l, len, " -j KPX-", 8);
			const char *gt = memmem(l, len, " -g KPX-", 8);
			int r = 0;

			if ((!j && !gt) || memmem(l, len, " KPX-IPVS", 9))
				continue;	/* not ours, or the ipvs mode's */
			for (h = 0; h < KPX_IPT_NHOOKS; h++) {
				size_t cl = strlen(hooks[h].chain);

				if (!strcmp(table, hooks[h].table) &&
				    !strncmp(l + 3, hooks[h].chain, cl) && l[3 + cl] == ' ' &&
				    ends_with_target(l, len, hooks[h].target))
					out->hooks |= 1U << h;
			}
			if (!strcmp(table, "nat"))
				r = strs_push(&out->jumps_nat, &out->njumps_nat, l, len);
			else if (!strcmp(table, "filter"))
				r = strs_push(&out->jumps_filter, &out->njumps_filter, l, len);
			if (r)
				goto oom;
		}
	}
	return 0;
oom:
	kpx_ipt_saved_free(out);
	return -ENOMEM;
}

void kpx_ipt_saved_free(struct kpx_ipt_saved *s)
{
	size_t i;

	for (i = 0; i < s->njumps_nat; i++)
		free(s->jumps_nat[i]);
	for (i = 0; i < s->njumps_filter; i++)
		free(s->jumps_filter[i]);
	free(s->jumps_nat);
	free(s->jumps_filter);
	free(s->nat);
	free(s->filter);
	memset(s, 0, sizeof(*s));
}

static void cleanup_table(const char *table, const kpx_ipt_chain_t *c, size_t nc,
			  char *const *jumps, size_t njumps, struct kpx_strbuf *b)
{
	size_t i;

	if (!nc && !njumps)
		return;
	kpx_strbuf_printf(b, "*%s\n", table);
	for (i = 0; i < nc; i++)
		kpx_strbuf_printf(b, ":%s - [0:0]\n", c[i]);
	for (i = 0; i < njumps; i++)
		kpx_strbuf_printf(b, "-D %s\n", jumps[i] + 3);	/* "-A " -> "-D " */
	for (i = 0; i < nc; i++)
		kpx_strbuf_printf(b, "-X %s\n", c[i]);
	kpx_strbuf_printf(b, "COMMIT\n");
}

int kpx_ipt_cleanup_text(const struct kpx_ipt_saved *s, struct kpx_strbuf *b)
{
	cleanup_table("filter", s->filter, s->nfilter, s->jumps_filter,
		      s->njumps_filter, b);
	cleanup_table("nat", s->nat, s->nnat, s->jumps_nat, s->njumps_nat, b);
	return b->err;
}
