// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pure parts of --proxy-mode ipvs: scheduler mapping, ipset entries and
 * restore text, the constant iptables ruleset, `ipset save` parsing.
 * See ipvs_rules.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/ip_vs.h>

#include <linux/kpx.h>

#include "base/addr.h"
#include "dp/ipt/ipt_rules.h"
#include "dp/ipvs/ipvs_rules.h"
#include "base/strbuf.h"

static const struct {
	const char *name, *type;
} sets[KPX_IPVS_SET_N] = {
	[KPX_IPVS_SET_SVC] = { "SVC", "hash:ip,port" },
	[KPX_IPVS_SET_MASQ] = { "MASQ", "hash:ip,port" },
	[KPX_IPVS_SET_MASQ_NONLOCAL] = { "MASQ-NONLOCAL", "hash:ip,port" },
	[KPX_IPVS_SET_EMPTY_DROP] = { "EMPTY-DROP", "hash:ip,port" },
	[KPX_IPVS_SET_FW] = { "FW", "hash:ip,port" },
	[KPX_IPVS_SET_FW_SRC] = { "FW-SRC", "hash:ip,port,net" },
	[KPX_IPVS_SET_LOOP] = { "LOOP", "hash:ip,port,ip" },
	[KPX_IPVS_SET_IPS] = { "IPS", "hash:ip" },
};

int kpx_ipvs_svc_of(const struct kpx_service *s, struct kpx_ipvs_svc *out)
{
	const char *sched;
	bool fb;

	sched = kpx_ipvs_sched(s->scheduler, &fb);
	if (!sched)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->family = s->family;
	out->protocol = s->protocol;
	memcpy(&out->addr, &s->addr, sizeof(out->addr));
	out->port = s->port;
	snprintf(out->sched, sizeof(out->sched), "%s", sched);
	if (s->affinity_timeout) {
		out->flags = IP_VS_SVC_F_PERSISTENT;
		out->timeout = s->affinity_timeout;
	}
	return 0;
}

/* "ADDR,PROTO:PORT" of a frontend or backend. */
static void ipport(char *buf, size_t len, int family, const void *addr,
		   uint8_t proto, uint16_t port)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, a, sizeof(a));
	snprintf(buf, len, "%s,%s:%u", a, kpx_proto_name(proto), port);
}

int kpx_ipvs_entries(const struct kpx_service *s, char (*lines)[KPX_IPVS_LINE_MAX],
		     int max)
{
	char key[INET6_ADDRSTRLEN + 16], net[INET6_ADDRSTRLEN + 8];
	char comment[KPX_IPVS_COMMENT_MAX];
	int n = 0;
	size_t i;

#define LINE(...) do {							\
		if (n >= max)						\
			return -ENOSPC;					\
		snprintf(lines[n++], KPX_IPVS_LINE_MAX, __VA_ARGS__);	\
	} while (0)
#define SET(x) kpx_ipvs_set_name(s->family, x)

	ipport(key, sizeof(key), s->family, &s->addr, s->protocol, s->port);
	kpx_ipvs_comment(s, comment, sizeof(comment));
	LINE("%s %s comment \"%s\"", SET(KPX_IPVS_SET_SVC), key, comment);
	if (s->flags & KPX_SVC_F_MASQ)
		LINE("%s %s", SET(KPX_IPVS_SET_MASQ), key);
	if (s->flags & KPX_SVC_F_MASQ_NONLOCAL)
		LINE("%s %s", SET(KPX_IPVS_SET_MASQ_NONLOCAL), key);
	if ((s->flags & KPX_SVC_F_DROP_EMPTY) && !s->nbackends)
		LINE("%s %s", SET(KPX_IPVS_SET_EMPTY_DROP), key);
	if (s->nsource_ranges)
		LINE("%s %s", SET(KPX_IPVS_SET_FW), key);
	for (i = 0; i < s->nsource_ranges; i++) {
		const struct kpx_cidr *c = &s->source_ranges[i];

		if (!c->len) {
			/* ipset nets are /1 at least: 0/0 is the two halves */
			const char *h0 = c->family == AF_INET ? "0.0.0.0/1" : "::/1";
			const char *h1 = c->family == AF_INET ? "128.0.0.0/1" : "8000::/1";

			LINE("%s %s,%s", SET(KPX_IPVS_SET_FW_SRC), key, h0);
			LINE("%s %s,%s", SET(KPX_IPVS_SET_FW_SRC), key, h1);
			continue;
		}
		inet_ntop(c->family, &c->addr, net, sizeof(net));
		LINE("%s %s,%s/%u", SET(KPX_IPVS_SET_FW_SRC), key, net, c->len);
	}
#undef SET
#undef LINE
	return n;
}

void kpx_ipvs_loop_entry(int family, uint8_t protocol, const struct kpx_backend *b,
			 char *line, size_t len)
{
	char key[INET6_ADDRSTRLEN + 16], a[INET6_ADDRSTRLEN];

	ipport(key, sizeof(key), family, &b->addr, protocol, b->port);
	inet_ntop(family, &b->addr, a, sizeof(a));
	snprintf(line, len, "%s %s,%s", kpx_ipvs_set_name(family, KPX_IPVS_SET_LOOP),
		 key, a);
}

const struct kpx_backend *kpx_ipvs_find_backend(const struct kpx_service *s,
						const struct kpx_backend *b)
{
	size_t i, alen;

	if (!s)
		return NULL;
	alen = s->family == AF_INET ? 4 : 16;
	for (i = 0; i < s->nbackends; i++)
		if (s->backends[i].port == b->port &&
		    !memcmp(&s->backends[i].addr, &b->addr, alen))
			return &s->backends[i];
	return NULL;
}

int kpx_ipvs_loop_adds(FILE *f, const struct kpx_service *old,
		       const struct kpx_service *s)
{
	char line[KPX_IPVS_LINE_MAX];
	size_t i;
	int n = 0;

	for (i = 0; i < s->nbackends; i++) {
		if (old && kpx_ipvs_find_backend(old, &s->backends[i]))
			continue;
		kpx_ipvs_loop_entry(s->family, s->protocol, &s->backends[i], line,
				    sizeof(line));
		fprintf(f, "add %s\n", line);
		n++;
	}
	return n;
}

void kpx_ipvs_ipset_create(FILE *f)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < KPX_IPVS_SET_N; j++)
			fprintf(f, "create %s %s family %s%s\n",
				kpx_ipvs_set_name(fams[i], j), sets[j].type,
				fams[i] == AF_INET ? "inet" : "inet6",
				j == KPX_IPVS_SET_SVC ? " comment" : "");
}

static bool in_list(const char *l, char (*v)[KPX_IPVS_LINE_MAX], int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(l, v[i]))
			return true;
	return false;
}

void kpx_ipvs_ipset_diff(FILE *adds, FILE *dels,
			 char (*old)[KPX_IPVS_LINE_MAX], int nold,
			 char (*new)[KPX_IPVS_LINE_MAX], int nnew)
{
	int i;

	for (i = 0; i < nnew; i++)
		if (!in_list(new[i], old, nold))
			fprintf(adds, "add %s\n", new[i]);
	for (i = 0; i < nold; i++) {
		if (in_list(old[i], new, nnew))
			continue;
		/* a changed comment is an "add -exist" (above), not a del */
		if (!strncmp(old[i], "KPX-IPVS-SVC ", 13) ||
		    !strncmp(old[i], "KPX-IPVS6-SVC ", 14)) {
			size_t k = strcspn(old[i], " ") + 1;
			size_t e = k + strcspn(old[i] + k, " ");
			int j;
			bool kept = false;

			for (j = 0; j < nnew; j++)
				if (!strncmp(old[i], new[j], e) &&
				    (new[j][e] == ' ' || !new[j][e]))
					kept = true;
			if (kept)
				continue;
		}
		/* del takes the set and the entry only, no comment */
		{
			size_t w = strcspn(old[i], " ");

			w += w ? 1 + strcspn(old[i] + w + 1, " ") : 0;
			fprintf(dels, "del %.*s\n", (int)w, old[i]);
		}
	}
}

const struct kpx_ipvs_jump kpx_ipvs_jumps[] = {
	{ "nat", "PREROUTING", "KPX-IPVS-PREROUTING" },
	{ "nat", "OUTPUT", "KPX-IPVS-OUTPUT" },
	{ "nat", "POSTROUTING", "KPX-IPVS-POSTROUTING" },
	{ "mangle", "PREROUTING", "KPX-IPVS-FILTER" },
	{ "mangle", "OUTPUT", "KPX-IPVS-FILTER" },
	{ "filter", "INPUT", "KPX-IPVS-INPUT" },
	{ "filter", "FORWARD", "KPX-IPVS-FORWARD" },
};
const size_t kpx_ipvs_njumps = sizeof(kpx_ipvs_jumps) / sizeof(kpx_ipvs_jumps[0]);

static const char *const nat_chains[] = {
	"KPX-IPVS-PREROUTING", "KPX-IPVS-OUTPUT", "KPX-IPVS-NONLOCAL",
	"KPX-IPVS-NONLOCAL-OUT", "KPX-IPVS-MARK-MASQ", "KPX-IPVS-POSTROUTING",
};

void kpx_ipvs_ips_cmd(FILE *f, const char *verb, int family, const void *addr)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, a, sizeof(a));
	fprintf(f, "%s %s %s\n", verb, kpx_ipvs_set_name(family, KPX_IPVS_SET_IPS), a);
}

void kpx_ipvs_ips_flush(FILE *f)
{
	fprintf(f, "flush %s\nflush %s\n", kpx_ipvs_set_name(AF_INET, KPX_IPVS_SET_IPS),
		kpx_ipvs_set_name(AF_INET6, KPX_IPVS_SET_IPS));
}

/*
 * filter KPX-IPVS-INPUT: martian drop, then host ports of kpx-ipvs0
 * refused; KPX-IPVS-FORWARD: the INVALID drop when @drop_invalid.
 */
static void filter_rules(FILE *f, int fi, bool drop_invalid)
{
	fprintf(f, "*filter\n:KPX-IPVS-INPUT - [0:0]\n:KPX-IPVS-FORWARD - [0:0]\n");
	if (drop_invalid)
		fprintf(f, "-A KPX-IPVS-FORWARD -m conntrack --ctstate INVALID -m comment --comment \"conntrack INVALID: never forwarded untranslated\" -j DROP\n");
	if (!fi) {
		struct kpx_strbuf b = { 0 };

		kpx_ipt_localnet_drop(&b, "KPX-IPVS-INPUT");
		if (b.s)
			fputs(b.s, f);
		kpx_strbuf_free(&b);
	}
	fprintf(f, "-A KPX-IPVS-INPUT -m set --match-set %s dst,dst -j RETURN\n",
		kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_SVC));
	fprintf(f, "-A KPX-IPVS-INPUT -m conntrack --ctstate NEW -m set --match-set %s dst -j REJECT\n",
		kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_IPS));
	fprintf(f, "COMMIT\n");
}

bool kpx_ipvs_serves(const struct kpx_service *s)
{
	if (s->family == AF_INET)
		return (ntohl(s->addr.v4.s_addr) >> 24) != 127;
	return !IN6_IS_ADDR_LOOPBACK(&s->addr.v6);
}

void kpx_ipvs_iptables_rules(FILE *f, int family, const struct kpx_ns_config *c,
			     bool drop_invalid)
{
	const int fi = family == AF_INET6;
	const char *svc = kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_SVC);
	const char *masq = kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_MASQ);
	const char *nonl = kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_MASQ_NONLOCAL);
	char a[INET6_ADDRSTRLEN];
	size_t i;

	fprintf(f, "*nat\n");
	for (i = 0; i < sizeof(nat_chains) / sizeof(nat_chains[0]); i++)
		fprintf(f, ":%s - [0:0]\n", nat_chains[i]);
	fprintf(f, "-A KPX-IPVS-PREROUTING -m set --match-set %s dst,dst -j KPX-IPVS-MARK-MASQ\n", masq);
	fprintf(f, "-A KPX-IPVS-PREROUTING -m set --match-set %s dst,dst -j KPX-IPVS-NONLOCAL\n", nonl);
	fprintf(f, "-A KPX-IPVS-OUTPUT -m set --match-set %s dst,dst -j KPX-IPVS-MARK-MASQ\n", masq);
	fprintf(f, "-A KPX-IPVS-OUTPUT -m set --match-set %s dst,dst -j KPX-IPVS-NONLOCAL-OUT\n", nonl);
	fprintf(f, "-A KPX-IPVS-OUTPUT -m set --match-set %s src,dst -j KPX-IPVS-MARK-MASQ\n", svc);
	for (i = 0; i < c->nlocal_cidrs; i++) {
		const struct kpx_cidr *l = &c->local_cidrs[i];

		if (l->family != family)
			continue;
		inet_ntop(family, &l->addr, a, sizeof(a));
		fprintf(f, "-A KPX-IPVS-NONLOCAL -s %s/%u -j RETURN\n", a, l->len);
		fprintf(f, "-A KPX-IPVS-NONLOCAL-OUT -s %s/%u -j RETURN\n", a, l->len);
	}
	if (c->local_ifname[0])
		fprintf(f, "-A KPX-IPVS-NONLOCAL -i %s -j RETURN\n", c->local_ifname);
	if (c->local_ifprefix[0])
		fprintf(f, "-A KPX-IPVS-NONLOCAL -i %s+ -j RETURN\n", c->local_ifprefix);
	fprintf(f, "-A KPX-IPVS-NONLOCAL -j KPX-IPVS-MARK-MASQ\n");
	fprintf(f, "-A KPX-IPVS-NONLOCAL-OUT -j KPX-IPVS-MARK-MASQ\n");
	fprintf(f, "-A KPX-IPVS-MARK-MASQ -j MARK --or-mark 0x%x\n", KPX_IPVS_MASQ_MARK);
	fprintf(f, "-A KPX-IPVS-POSTROUTING -m set --match-set %s dst,dst,src -j MASQUERADE\n",
		kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_LOOP));
	fprintf(f, "-A KPX-IPVS-POSTROUTING -m mark ! --mark 0x%x/0x%x -j RETURN\n",
		KPX_IPVS_MASQ_MARK, KPX_IPVS_MASQ_MARK);
	fprintf(f, "-A KPX-IPVS-POSTROUTING -j MARK --xor-mark 0x%x\n", KPX_IPVS_MASQ_MARK);
	fprintf(f, "-A KPX-IPVS-POSTROUTING -j MASQUERADE\n");
	fprintf(f, "COMMIT\n*mangle\n:KPX-IPVS-FILTER - [0:0]\n");
	fprintf(f, "-A KPX-IPVS-FILTER -m set --match-set %s dst,dst -m conntrack --ctstate NEW -j DROP\n",
		kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_EMPTY_DROP));
	fprintf(f, "-A KPX-IPVS-FILTER -m set --match-set %s dst,dst -m set ! --match-set %s dst,dst,src -m conntrack --ctstate NEW -j DROP\n",
		kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_FW),
		kpx_ipvs_set_name(fi ? AF_INET6 : AF_INET, KPX_IPVS_SET_FW_SRC));
	fprintf(f, "COMMIT\n");
	filter_rules(f, fi, drop_invalid);
}

void kpx_ipvs_iptables_delete(FILE *f)
{
	size_t i;

	fprintf(f, "*nat\n");
	for (i = 0; i < sizeof(nat_chains) / sizeof(nat_chains[0]); i++)
		fprintf(f, ":%s - [0:0]\n", nat_chains[i]);
	for (i = 0; i < sizeof(nat_chains) / sizeof(nat_chains[0]); i++)
		fprintf(f, "-X %s\n", nat_chains[i]);
	fprintf(f, "COMMIT\n*mangle\n:KPX-IPVS-FILTER - [0:0]\n-X KPX-IPVS-FILTER\nCOMMIT\n");
	fprintf(f, "*filter\n:KPX-IPVS-INPUT - [0:0]\n:KPX-IPVS-FORWARD - [0:0]\n"
		"-X KPX-IPVS-INPUT\n-X KPX-IPVS-FORWARD\nCOMMIT\n");
}

bool kpx_ipvs_dest_drains(uint8_t protocol)
{
	return protocol == IPPROTO_TCP || protocol == IPPROTO_SCTP;
}

bool kpx_ipvs_dest_reapable(const struct kpx_ipvs_dest *d)
{
	return !d->weight && !d->active_conns && !d->inact_conns;
}
