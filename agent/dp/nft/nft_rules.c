// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rule text of the nftables proxy mode (see nft_rules.h for the layout).
 * Every command is written in the "add|flush|delete <object> <family> kpx
 * ..." form, one per line, so that a transaction is the concatenation of
 * the changed frontends' text.
 */
#define _GNU_SOURCE	/* strchrnul */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kpx.h>

#include "base/addr.h"
#include "dp/nft/nft_rules.h"

const char *kpx_nft_family(int family)
{
	return family == AF_INET6 ? "ip6" : "ip";
}

/* "sctp-" + an IPv6 address + "-65535" fits. */
#define KEYLEN 64

static const char *addr_type(int family)
{
	return family == AF_INET6 ? "ipv6_addr" : "ipv4_addr";
}

/* "ip saddr" / "ip6 saddr" and friends. */
static const char *saddr(int family)
{
	return family == AF_INET6 ? "ip6 saddr" : "ip saddr";
}

static const char *daddr(int family)
{
	return family == AF_INET6 ? "ip6 daddr" : "ip daddr";
}

static void addr_text(int family, const void *addr, char *buf, size_t len)
{
	if (!inet_ntop(family, addr, buf, len))
		snprintf(buf, len, "?");
}

/* Address for an identifier: inet_ntop() with ':' as '-'. */
static void addr_ident(int family, const void *addr, char *buf, size_t len)
{
	addr_text(family, addr, buf, len);
	for (char *p = buf; *p; p++)
		if (*p == ':')
			*p = '-';
}

/* "<proto>-<addr>-<port>" of a frontend. */
static void svc_key(const struct kpx_service *s, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	addr_ident(s->family, &s->addr, a, sizeof(a));
	snprintf(buf, len, "%s-%s-%u", kpx_proto_name(s->protocol), a, s->port);
}

const char *kpx_nft_svc_chain(const struct kpx_service *s, char *buf, size_t len)
{
	char k[KEYLEN];

	svc_key(s, k, sizeof(k));
	snprintf(buf, len, "svc-%s", k);
	return buf;
}

/* "<prefix>-<K>__<addr>-<port>": the ep- chain and aff- set of a backend. */
static void be_name(const char *prefix, const struct kpx_service *s,
		    const struct kpx_backend *be, char *buf, size_t len)
{
	char k[KEYLEN], a[INET6_ADDRSTRLEN];

	svc_key(s, k, sizeof(k));
	addr_ident(s->family, &be->addr, a, sizeof(a));
	snprintf(buf, len, "%s-%s__%s-%u", prefix, k, a, be->port);
}

/* "10.96.0.10 . tcp . 80": the maps' key of a frontend. */
static void elem_key(const struct kpx_service *s, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	addr_text(s->family, &s->addr, a, sizeof(a));
	snprintf(buf, len, "%s . %s . %u", a, kpx_proto_name(s->protocol), s->port);
}

void kpx_nft_name_comment(const struct kpx_service *s, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!s->name || !*s->name || strlen(s->name) >= KPX_NFT_COMMENT_MAX - 16 ||
	    strpbrk(s->name, "\"\\ "))
		return;
	snprintf(buf, len, " comment \"%s %s\"", s->name, kpx_kind_name(s->kind));
}

void kpx_nft_gen_table(struct kpx_strbuf *b, int family)
{
	const char *f = kpx_nft_family(family), *t = KPX_NFT_TABLE;
	const char *at = addr_type(family), *da = daddr(family);
	static const char *const maps[] = {
		"service-ips", "no-endpoint-services", "firewall-ips",
	};
	static const char *const vmaps[][2] = {
		{ "services", "service-ips" },
		{ "endpoints-check", "no-endpoint-services" },
		{ "firewall-check", "firewall-ips" },
	};
	/* name, type, hook, priority, rules ('\n' separated) */
	static const char *const base[][5] = {
		{ "filter-prerouting", "filter", "prerouting", "dstnat - 10",
		  "ct state new jump firewall-check" },
		{ "filter-input", "filter", "input", "-110",
		  "ct state new jump endpoints-check" },
		{ "filter-forward", "filter", "forward", "-110",
		  "ct state new jump endpoints-check\nct state new jump cluster-ips-check" },
		{ "filter-output", "filter", "output", "-110",
		  "ct state new jump endpoints-check\nct state new jump firewall-check" },
		{ "filter-output-post-dnat", "filter", "output", "-90",
		  "ct state new jump cluster-ips-check" },
		{ "nat-prerouting", "nat", "prerouting", "dstnat", "jump services" },
		{ "nat-output", "nat", "output", "-100", "jump services" },
		{ "nat-postrouting", "nat", "postrouting", "srcnat", "jump masquerading" },
	};
	size_t i;

	/* Delete whatever a previous run left (add first: delete needs it). */
	kpx_strbuf_printf(b, "add table %s %s\ndelete table %s %s\n", f, t, f, t);
	kpx_strbuf_printf(b, "add table %s %s { comment \"kpx-agent --proxy-mode nftables\" ; }\n",
			   f, t);
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		kpx_strbuf_printf(b, "add map %s %s %s { type %s . inet_proto . inet_service : verdict ; }\n",
				   f, t, maps[i], at);
	kpx_strbuf_printf(b, "add set %s %s local-cidrs { type %s ; flags interval ; }\n",
			   f, t, at);
	kpx_strbuf_printf(b, "add set %s %s cluster-ips { type %s ; }\n", f, t, at);
	kpx_strbuf_printf(b, "add chain %s %s reject-chain\n"
			   "add rule %s %s reject-chain reject\n", f, t, f, t);
	kpx_strbuf_printf(b, "add chain %s %s mark-for-masquerade\n"
			   "add rule %s %s mark-for-masquerade meta mark set meta mark or 0x%x\n",
			   f, t, f, t, KPX_NFT_MASQ_MARK);
	kpx_strbuf_printf(b, "add chain %s %s mark-nonlocal\n", f, t);
	kpx_strbuf_printf(b, "add chain %s %s masquerading\n"
			   "add rule %s %s masquerading meta mark and 0x%x == 0 return\n"
			   "add rule %s %s masquerading meta mark set meta mark xor 0x%x\n"
			   "add rule %s %s masquerading masquerade fully-random\n",
			   f, t, f, t, KPX_NFT_MASQ_MARK, f, t, KPX_NFT_MASQ_MARK, f, t);
	/* New connections to a ClusterIP still not DNATed: undefined port. */
	kpx_strbuf_printf(b, "add chain %s %s cluster-ips-check\n"
			   "add rule %s %s cluster-ips-check %s @cluster-ips reject\n",
			   f, t, f, t, da);
	for (i = 0; i < sizeof(vmaps) / sizeof(vmaps[0]); i++)
		kpx_strbuf_printf(b, "add chain %s %s %s\n"
				   "add rule %s %s %s %s . meta l4proto . th dport vmap @%s\n",
				   f, t, vmaps[i][0], f, t, vmaps[i][0], da, vmaps[i][1]);
	/* Base chains last: hooked once everything they jump to exists. */
	for (i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		const char *r = base[i][4], *nl;

		kpx_strbuf_printf(b, "add chain %s %s %s { type %s hook %s priority %s ; policy accept ; }\n",
				   f, t, base[i][0], base[i][1], base[i][2], base[i][3]);
		for (; *r; r = nl + (*nl == '\n')) {
			nl = strchrnul(r, '\n');
			kpx_strbuf_printf(b, "add rule %s %s %s %.*s\n", f, t,
					   base[i][0], (int)(nl - r), r);
		}
		/*
		 * route_localnet (localhost NodePorts) must not open 127/8 to
		 * other hosts: drop what reaches it from outside unless it
		 * was DNATed (CVE-2020-8558; kube-proxy's iptables mode).
		 */
		if (family == AF_INET && !strcmp(base[i][0], "filter-input"))
			kpx_strbuf_printf(b, "add rule %s %s filter-input ip daddr 127.0.0.0/8 ip saddr != 127.0.0.0/8 ct state != { established, related } ct status & dnat == 0 drop\n",
					   f, t);
		/*
		 * ... and what arrives from another host for 127.0.0.0/8
		 * (route_localnet lets it in) is dropped before DNAT: a
		 * localhost NodePort DNATs it to a pod, forwarded, where the
		 * input rule above never sees it.  Same as the kpx module
		 * (loopback destinations from outside dropped).
		 */
		if (family == AF_INET && !strcmp(base[i][0], "filter-prerouting"))
			kpx_strbuf_printf(b, "add rule %s %s filter-prerouting ip daddr 127.0.0.0/8 iif != \"lo\" drop\n",
					   f, t);
	}
}

void kpx_nft_gen_config(struct kpx_strbuf *b, int family,
			const struct kpx_ns_config *c, bool fresh)
{
	const char *f = kpx_nft_family(family), *t = KPX_NFT_TABLE;
	char a[INET6_ADDRSTRLEN];
	bool any = false;
	size_t i;

	if (!fresh)
		kpx_strbuf_printf(b, "flush chain %s %s mark-nonlocal\n"
				   "flush set %s %s local-cidrs\n", f, t, f, t);
	for (i = 0; i < c->nlocal_cidrs; i++) {
		const struct kpx_cidr *p = &c->local_cidrs[i];

		if (p->family != family)
			continue;
		addr_text(family, &p->addr, a, sizeof(a));
		if (!any)
			kpx_strbuf_printf(b, "add element %s %s local-cidrs { ", f, t);
		kpx_strbuf_printf(b, "%s%s/%u", any ? ", " : "", a, p->len);
		any = true;
	}
	if (any)
		kpx_strbuf_printf(b, " }\nadd rule %s %s mark-nonlocal %s @local-cidrs return\n",
				   f, t, saddr(family));
	if (c->local_ifname[0])
		kpx_strbuf_printf(b, "add rule %s %s mark-nonlocal iifname \"%s\" return\n",
				   f, t, c->local_ifname);
	if (c->local_ifprefix[0])
		kpx_strbuf_printf(b, "add rule %s %s mark-nonlocal iifname \"%s*\" return\n",
				   f, t, c->local_ifprefix);
	kpx_strbuf_printf(b, "add rule %s %s mark-nonlocal jump mark-for-masquerade\n", f, t);
}

enum kpx_nft_sched kpx_nft_sched(const char *name, bool *supported)
{
	*supported = true;
	if (!name[0] || !strcmp(name, "random"))
		return KPX_NFT_SCHED_RANDOM;
	if (!strcmp(name, "rr") || !strcmp(name, "wrr"))
		return KPX_NFT_SCHED_RR;
	if (!strcmp(name, "sh"))
		return KPX_NFT_SCHED_SH;
	*supported = false;
	return KPX_NFT_SCHED_RANDOM;
}

void kpx_nft_gen_cluster_ip(struct kpx_strbuf *b, int family, const void *addr,
			    bool add)
{
	char a[INET6_ADDRSTRLEN];

	addr_text(family, addr, a, sizeof(a));
	kpx_strbuf_printf(b, "%s element %s %s cluster-ips { %s }\n", add ? "add" : "delete",
			   kpx_nft_family(family), KPX_NFT_TABLE, a);
}

void kpx_nft_gen_delete_table(struct kpx_strbuf *b, int family)
{
	kpx_strbuf_printf(b, "delete table %s %s\n", kpx_nft_family(family), KPX_NFT_TABLE);
}

static bool has_backend(const struct kpx_service *s, const struct kpx_backend *be)
{
	size_t alen = kpx_addr_len(s->family);

	for (size_t i = 0; s && i < s->nbackends; i++)
		if (s->backends[i].port == be->port &&
		    !memcmp(&s->backends[i].addr, &be->addr, alen))
			return true;
	return false;
}

/* The main map element of a frontend: map name and verdict. */
static void main_elem(const struct kpx_service *s, const char **map,
		      char *verdict, size_t len)
{
	char c[KPX_NFT_NAMELEN], cm[KPX_NFT_COMMENT_MAX + 16];

	kpx_nft_name_comment(s, cm, sizeof(cm));
	if (s->nbackends) {
		*map = "service-ips";
		snprintf(verdict, len, "%s : goto %s", cm, kpx_nft_svc_chain(s, c, sizeof(c)));
	} else {
		*map = "no-endpoint-services";
		snprintf(verdict, len, "%s : %s", cm, s->flags & KPX_SVC_F_DROP_EMPTY ?
			 "drop" : "goto reject-chain");
	}
}

/* "numgen random mod N vmap { 0 : goto ep-..., ... }" for @s's backends. */
static void gen_dispatch(struct kpx_strbuf *b, const struct kpx_service *s,
			 const char *svc)
{
	const char *f = kpx_nft_family(s->family), *t = KPX_NFT_TABLE;
	bool supported, weighted = false;
	enum kpx_nft_sched sched = kpx_nft_sched(s->scheduler, &supported);
	char ep[KPX_NFT_NAMELEN];
	uint64_t total = 0, at = 0;
	size_t i;

	/* Weights count for random and wrr, as the module's schedulers. */
	if (sched == KPX_NFT_SCHED_RANDOM || !strcmp(s->scheduler, "wrr"))
		for (i = 1; i < s->nbackends; i++)
			if (s->backends[i].weight != s->backends[0].weight)
				weighted = true;
	for (i = 0; i < s->nbackends; i++)
		total += weighted ? (s->backends[i].weight ? s->backends[i].weight : 1) : 1;
	kpx_strbuf_printf(b, "add rule %s %s %s ", f, t, svc);
	if (sched == KPX_NFT_SCHED_SH)
		kpx_strbuf_printf(b, "jhash %s mod %llu", saddr(s->family),
				   (unsigned long long)total);
	else
		kpx_strbuf_printf(b, "numgen %s mod %llu",
				   sched == KPX_NFT_SCHED_RR ? "inc" : "random",
				   (unsigned long long)total);
	kpx_strbuf_printf(b, " vmap { ");
	for (i = 0; i < s->nbackends; i++) {
		uint64_t w = weighted ? (s->backends[i].weight ? s->backends[i].weight : 1) : 1;

		be_name("ep", s, &s->backends[i], ep, sizeof(ep));
		if (w == 1)
			kpx_strbuf_printf(b, "%s%llu : goto %s", i ? ", " : "",
					   (unsigned long long)at, ep);
		else
			kpx_strbuf_printf(b, "%s%llu-%llu : goto %s", i ? ", " : "",
					   (unsigned long long)at,
					   (unsigned long long)(at + w - 1), ep);
		at += w;
	}
	kpx_strbuf_printf(b, " }\n");
}

/* The ep- chain of one backend (created if @create). */
static void gen_endpoint(struct kpx_strbuf *b, const struct kpx_service *s,
			 const struct kpx_backend *be, bool create)
{
	const char *f = kpx_nft_family(s->family), *t = KPX_NFT_TABLE;
	char ep[KPX_NFT_NAMELEN], aff[KPX_NFT_NAMELEN], a[INET6_ADDRSTRLEN];

	be_name("ep", s, be, ep, sizeof(ep));
	be_name("aff", s, be, aff, sizeof(aff));
	addr_text(s->family, &be->addr, a, sizeof(a));
	if (create)
		kpx_strbuf_printf(b, "add chain %s %s %s\n", f, t, ep);
	/* Hairpin: a backend reaching itself through the frontend. */
	kpx_strbuf_printf(b, "add rule %s %s %s %s %s jump mark-for-masquerade\n",
			   f, t, ep, saddr(s->family), a);
	if (s->affinity_timeout)
		kpx_strbuf_printf(b, "add rule %s %s %s update @%s { %s }\n",
				   f, t, ep, aff, saddr(s->family));
	if (s->family == AF_INET6)
		kpx_strbuf_printf(b, "add rule %s %s %s meta l4proto %s dnat to [%s]:%u\n",
				   f, t, ep, kpx_proto_name(s->protocol), a, be->port);
	else
		kpx_strbuf_printf(b, "add rule %s %s %s meta l4proto %s dnat to %s:%u\n",
				   f, t, ep, kpx_proto_name(s->protocol), a, be->port);
}

/* Deletes what @old has and @new does not (chains already flushed). */
static void gen_delete_old(struct kpx_strbuf *b, const struct kpx_service *old,
			   const struct kpx_service *new)
{
	const char *f = kpx_nft_family(old->family), *t = KPX_NFT_TABLE;
	char name[KPX_NFT_NAMELEN], k[KEYLEN];
	size_t i;

	for (i = 0; i < old->nbackends; i++) {
		const struct kpx_backend *be = &old->backends[i];
		bool kept = new && has_backend(new, be);

		if (!kept) {
			be_name("ep", old, be, name, sizeof(name));
			kpx_strbuf_printf(b, "delete chain %s %s %s\n", f, t, name);
		}
		if (old->affinity_timeout &&
		    (!kept || new->affinity_timeout != old->affinity_timeout)) {
			be_name("aff", old, be, name, sizeof(name));
			kpx_strbuf_printf(b, "delete set %s %s %s\n", f, t, name);
		}
	}
	if (old->nbackends && (!new || !new->nbackends))
		kpx_strbuf_printf(b, "delete chain %s %s %s\n", f, t,
				   kpx_nft_svc_chain(old, name, sizeof(name)));
	if (old->nsource_ranges && (!new || !new->nsource_ranges)) {
		svc_key(old, k, sizeof(k));
		kpx_strbuf_printf(b, "delete chain %s %s fw-%s\n", f, t, k);
	}
}

/* Creates @new's sets, chains and rules (@old's kept objects are reused). */
static void gen_create_new(struct kpx_strbuf *b, const struct kpx_service *old,
			   const struct kpx_service *new)
{
	const char *f = kpx_nft_family(new->family), *t = KPX_NFT_TABLE;
	char svc[KPX_NFT_NAMELEN], name[KPX_NFT_NAMELEN], ep[KPX_NFT_NAMELEN];
	char k[KEYLEN], a[INET6_ADDRSTRLEN];
	size_t i;

	svc_key(new, k, sizeof(k));
	kpx_nft_svc_chain(new, svc, sizeof(svc));
	if (new->nsource_ranges) {
		if (!old || !old->nsource_ranges)
			kpx_strbuf_printf(b, "add chain %s %s fw-%s\n", f, t, k);
		kpx_strbuf_printf(b, "add rule %s %s fw-%s %s != { ", f, t, k,
				   saddr(new->family));
		for (i = 0; i < new->nsource_ranges; i++) {
			addr_text(new->family, &new->source_ranges[i].addr, a, sizeof(a));
			kpx_strbuf_printf(b, "%s%s/%u", i ? ", " : "", a,
					   new->source_ranges[i].len);
		}
		kpx_strbuf_printf(b, " } drop\n");
	}
	if (!new->nbackends)
		return;
	for (i = 0; i < new->nbackends; i++) {
		const struct kpx_backend *be = &new->backends[i];
		bool kept = old && has_backend(old, be);

		if (new->affinity_timeout &&
		    (!kept || old->affinity_timeout != new->affinity_timeout)) {
			be_name("aff", new, be, name, sizeof(name));
			kpx_strbuf_printf(b, "add set %s %s %s { type %s ; flags dynamic,timeout ; timeout %us ; }\n",
					   f, t, name, addr_type(new->family),
					   new->affinity_timeout);
		}
		gen_endpoint(b, new, be, !kept);
	}
	if (!old || !old->nbackends)
		kpx_strbuf_printf(b, "add chain %s %s %s\n", f, t, svc);
	if (new->flags & KPX_SVC_F_MASQ)
		kpx_strbuf_printf(b, "add rule %s %s %s jump mark-for-masquerade\n", f, t, svc);
	else if (new->flags & KPX_SVC_F_MASQ_NONLOCAL)
		kpx_strbuf_printf(b, "add rule %s %s %s jump mark-nonlocal\n", f, t, svc);
	for (i = 0; new->affinity_timeout && i < new->nbackends; i++) {
		be_name("aff", new, &new->backends[i], name, sizeof(name));
		be_name("ep", new, &new->backends[i], ep, sizeof(ep));
		kpx_strbuf_printf(b, "add rule %s %s %s %s @%s goto %s\n",
				   f, t, svc, saddr(new->family), name, ep);
	}
	gen_dispatch(b, new, svc);
}

void kpx_nft_gen_service(struct kpx_strbuf *b, const struct kpx_service *old,
			 const struct kpx_service *new)
{
	const struct kpx_service *s = new ? new : old;
	const char *f, *t = KPX_NFT_TABLE, *omap = NULL, *nmap = NULL;
	char key[2 * INET6_ADDRSTRLEN], name[KPX_NFT_NAMELEN], k[KEYLEN];
	char ov[KPX_NFT_NAMELEN + KPX_NFT_COMMENT_MAX + 32] = "";
	char nv[KPX_NFT_NAMELEN + KPX_NFT_COMMENT_MAX + 32] = "";
	bool same_elem;
	size_t i;

	if (!s)
		return;
	f = kpx_nft_family(s->family);
	elem_key(s, key, sizeof(key));
	svc_key(s, k, sizeof(k));
	if (old) {
		/* Flush first: rules hold references to chains and sets. */
		if (old->nbackends)
			kpx_strbuf_printf(b, "flush chain %s %s %s\n", f, t,
					   kpx_nft_svc_chain(old, name, sizeof(name)));
		for (i = 0; i < old->nbackends; i++) {
			be_name("ep", old, &old->backends[i], name, sizeof(name));
			kpx_strbuf_printf(b, "flush chain %s %s %s\n", f, t, name);
		}
		if (old->nsource_ranges)
			kpx_strbuf_printf(b, "flush chain %s %s fw-%s\n", f, t, k);
		main_elem(old, &omap, ov, sizeof(ov));
	}
	if (new)
		main_elem(new, &nmap, nv, sizeof(nv));
	same_elem = old && new && !strcmp(omap, nmap) && !strcmp(ov, nv);
	if (old && !same_elem)
		kpx_strbuf_printf(b, "delete element %s %s %s { %s }\n", f, t, omap, key);
	if (old && old->nsource_ranges && (!new || !new->nsource_ranges))
		kpx_strbuf_printf(b, "delete element %s %s firewall-ips { %s }\n", f, t, key);
	if (old)
		gen_delete_old(b, old, new);
	if (!new)
		return;
	gen_create_new(b, old, new);
	if (!same_elem)
		kpx_strbuf_printf(b, "add element %s %s %s { %s%s }\n", f, t, nmap, key, nv);
	if (new->nsource_ranges && (!old || !old->nsource_ranges))
		kpx_strbuf_printf(b, "add element %s %s firewall-ips { %s : goto fw-%s }\n",
				   f, t, key, k);
}
