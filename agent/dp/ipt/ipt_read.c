// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the iptables mode's rules back (ipt_read.h): iptables-save's
 * lines cut into arguments, then the chains of ipt_rules.h followed from
 * KPX-SERVICES.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/sysctl.h"
#include "dp/ipt/ipt_read.h"
#include "dp/ipt/ipt_rules.h"

/* What one "-A CHAIN ..." line says, as far as the layout uses. */
struct rule {
	bool nat; /* table nat, else filter */
	char chain[KPX_IPT_CHAIN_LEN], target[KPX_IPT_CHAIN_LEN];
	bool has_d, has_s, neg_s, has_dport;
	struct kpx_cidr d, s;
	uint8_t proto;
	uint16_t dport;
	char comment[256];
	double probability;	     /* -1: none */
	unsigned int rcheck_seconds; /* -m recent --rcheck --seconds */
	bool has_to;		     /* DNAT --to-destination */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} to;
	uint16_t to_port;
};

/* Cuts @line into arguments at spaces, "..." quoted (\" and \\ inside). */
static size_t split(char *line, char **argv, size_t max)
{
	size_t n = 0;
	char *p = line, *o;

	while (*p && n < max) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		argv[n++] = o = p;
		if (*p == '"') {
			argv[n - 1] = o = ++p;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1])
					p++;
				*o++ = *p++;
			}
			if (*p)
				p++;
		} else {
			while (*p && *p != ' ')
				*o++ = *p++;
		}
		if (*p)
			p++;
		*o = '\0';
	}
	return n;
}

static int parse_rule(char *line, bool nat, int family, struct rule *r)
{
	char *argv[64];
	size_t n = split(line, argv, 64), i;
	bool neg = false;

	memset(r, 0, sizeof(*r));
	r->nat = nat;
	r->probability = -1;
	if (n < 2 || strcmp(argv[0], "-A"))
		return -EINVAL;
	snprintf(r->chain, sizeof(r->chain), "%s", argv[1]);
	for (i = 2; i < n; i++) {
		const char *a = argv[i], *v = i + 1 < n ? argv[i + 1] : NULL;

		if (!strcmp(a, "!")) {
			neg = true;
			continue;
		}
		if (v && !strcmp(a, "-d")) {
			r->has_d = !neg && !kpx_cidr_parse(v, &r->d) &&
				   r->d.family == family;
			i++;
		} else if (v && !strcmp(a, "-s")) {
			r->has_s = !kpx_cidr_parse(v, &r->s) &&
				   r->s.family == family;
			r->neg_s = neg;
			i++;
		} else if (v && !strcmp(a, "-p")) {
			kpx_proto_parse(v, &r->proto);
			i++;
		} else if (v && !strcmp(a, "--dport")) {
			unsigned long p = strtoul(v, NULL, 10);

			r->has_dport = !neg && p && p <= 65535;
			r->dport = (uint16_t)p;
			i++;
		} else if (v && !strcmp(a, "--comment")) {
			snprintf(r->comment, sizeof(r->comment), "%s", v);
			i++;
		} else if (v && !strcmp(a, "--probability")) {
			r->probability = strtod(v, NULL);
			i++;
		} else if (v && !strcmp(a, "--seconds")) {
			r->rcheck_seconds = (unsigned int)strtoul(v, NULL, 10);
			i++;
		} else if (v && (!strcmp(a, "-j") || !strcmp(a, "-g"))) {
			snprintf(r->target, sizeof(r->target), "%s", v);
			i++;
		} else if (v && !strcmp(a, "--to-destination")) {
			int fam;

			r->has_to = !kpx_hostport_parse(v, &fam, &r->to,
							&r->to_port) &&
				    fam == family;
			i++;
		}
		neg = false;
	}
	return 0;
}

struct rules {
	struct rule *v;
	size_t n;
};

static int read_rules(const char *text, int family, struct rules *rs,
		      bool *found)
{
	const char *l = text, *e;
	bool nat = false;

	for (; l && *l; l = *e ? e + 1 : e) {
		char *line;
		struct rule r, *nv;

		e = strchrnul(l, '\n');
		if (*l == '*')
			nat = !strncmp(l, "*nat", 4) && (e - l == 4);
		if (!strncmp(l, ":KPX-SERVICES ", 14))
			*found = true;
		if (strncmp(l, "-A KPX-", 7))
			continue;
		line = strndup(l, (size_t)(e - l));
		if (!line)
			return -ENOMEM;
		if (!parse_rule(line, nat, family, &r)) {
			nv = realloc(rs->v, (rs->n + 1) * sizeof(*nv));
			if (!nv) {
				free(line);
				return -ENOMEM;
			}
			rs->v = nv;
			nv[rs->n++] = r;
		}
		free(line);
	}
	return 0;
}

/* The frontend key of a rule matching "-d VIP -p P --dport N". */
static bool rule_key(const struct rule *r, int family, struct kpx_service *k)
{
	if (!r->has_d || !r->has_dport || !r->proto ||
	    r->d.len != (family == AF_INET ? 32 : 128))
		return false;
	memset(k, 0, sizeof(*k));
	k->family = family;
	k->protocol = r->proto;
	memcpy(&k->addr, &r->d.addr, kpx_addr_len(family));
	k->port = r->dport;
	return true;
}

/* "ns/name:port kind[ what]" (a name has a '/'); else nothing. */
static int rule_name(const char *c, struct kpx_service *s)
{
	const char *sp = strchr(c, ' '), *k2;
	char kind[32];
	int kd;

	if (!sp || !memchr(c, '/', (size_t)(sp - c)))
		return 0;
	k2 = strchrnul(sp + 1, ' ');
	snprintf(kind, sizeof(kind), "%.*s", (int)(k2 - sp - 1), sp + 1);
	kd = kpx_kind_parse(kind);
	s->kind = kd > 0 ? (uint8_t)kd : 0;
	s->name = strndup(c, (size_t)(sp - c));
	return s->name ? 0 : -ENOMEM;
}

static long find_key(const struct kpx_service *v, size_t n,
		     const struct kpx_service *k)
{
	for (size_t i = 0; i < n; i++)
		if (!kpx_service_key_cmp(&v[i], k))
			return (long)i;
	return -1;
}

static int add_range(struct kpx_service *s, const struct kpx_cidr *c)
{
	struct kpx_cidr *nv = realloc(s->source_ranges,
				      (s->nsource_ranges + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	s->source_ranges = nv;
	nv[s->nsource_ranges++] = *c;
	return 0;
}

/* KPX-SVC- chain @chain of @s: flags, affinity, backends and weights. */
static int read_svc(const struct rules *rs, const char *chain,
		    struct kpx_service *s)
{
	double rest = 1, *share = NULL, least = 0;
	size_t i, j;

	for (i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->v[i];
		struct kpx_backend *nb;
		double *ns;

		if (!r->nat || strcmp(r->chain, chain))
			continue;
		if (!strcmp(r->target, "KPX-MARK-MASQ"))
			s->flags |= KPX_SVC_F_MASQ;
		else if (!strcmp(r->target, "KPX-MASQ-NONLOCAL"))
			s->flags |= KPX_SVC_F_MASQ_NONLOCAL;
		if (strncmp(r->target, "KPX-SEP-", 8))
			continue;
		if (r->rcheck_seconds) {
			s->affinity_timeout = r->rcheck_seconds;
			continue;
		}
		nb = realloc(s->backends, (s->nbackends + 1) * sizeof(*nb));
		ns = realloc(share, (s->nbackends + 1) * sizeof(*ns));
		if (nb)
			s->backends = nb;
		if (ns)
			share = ns;
		if (!nb || !ns) {
			free(share);
			return -ENOMEM;
		}
		memset(&nb[s->nbackends], 0, sizeof(*nb));
		/* the share of new connections the rule takes */
		share[s->nbackends] =
			rest * (r->probability >= 0 ? r->probability : 1);
		rest -= share[s->nbackends];
		if (!least ||
		    (share[s->nbackends] > 0 && share[s->nbackends] < least))
			least = share[s->nbackends];
		for (j = 0; j < rs->n; j++)
			if (rs->v[j].nat && rs->v[j].has_to &&
			    !strcmp(rs->v[j].chain, r->target)) {
				memcpy(&nb[s->nbackends].addr, &rs->v[j].to,
				       sizeof(rs->v[j].to));
				nb[s->nbackends].port = rs->v[j].to_port;
			}
		s->nbackends++;
	}
	for (i = 0; i < s->nbackends; i++) {
		long w = least > 0 ? (long)(share[i] / least + 0.5) : 1;

		s->backends[i].weight = w < 1 ? 1 : (uint32_t)w;
	}
	free(share);
	return 0;
}

static int new_frontend(struct kpx_service **v, size_t *n,
			const struct kpx_service *k, const char *comment,
			struct kpx_service **out)
{
	struct kpx_service *nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	*out = &nv[(*n)++];
	**out = *k;
	snprintf((*out)->scheduler, sizeof((*out)->scheduler), "random");
	return rule_name(comment, *out);
}

int kpx_ipt_parse_frontends(const char *text, int family,
			    struct kpx_service **v, size_t *n, bool *found)
{
	struct rules rs = { 0 };
	size_t first = *n, i, j;
	int r = read_rules(text, family, &rs, found);

	/* nat: the frontends with backends */
	for (i = 0; !r && i < rs.n; i++) {
		const struct rule *x = &rs.v[i];
		const char *svc = x->target;
		struct kpx_service k, *s;

		if (!x->nat || strcmp(x->chain, "KPX-SERVICES") ||
		    !rule_key(x, family, &k) ||
		    find_key(*v + first, *n - first, &k) >= 0)
			continue;
		if (strncmp(svc, "KPX-SVC-", 8) && strncmp(svc, "KPX-FW-", 7))
			continue;
		r = new_frontend(v, n, &k, x->comment, &s);
		if (r)
			break;
		if (!strncmp(svc, "KPX-FW-", 7)) {
			for (j = 0; !r && j < rs.n; j++)
				if (rs.v[j].nat &&
				    !strcmp(rs.v[j].chain, x->target) &&
				    rs.v[j].has_s && !rs.v[j].neg_s) {
					svc = rs.v[j].target;
					r = add_range(s, &rs.v[j].s);
				}
		}
		if (!r)
			r = read_svc(&rs, svc, s);
	}
	/* filter: those without, rejected (or dropped: drop-empty) */
	for (i = 0; !r && i < rs.n; i++) {
		const struct rule *x = &rs.v[i];
		struct kpx_service k, *s;
		long at;

		if (x->nat || strcmp(x->chain, "KPX-SERVICES") ||
		    !strstr(x->comment, "has no endpoints") ||
		    !rule_key(x, family, &k))
			continue;
		at = find_key(*v + first, *n - first, &k);
		if (at < 0) {
			r = new_frontend(v, n, &k, x->comment, &s);
			if (r)
				break;
			s->scheduler[0] = '\0';
			s->flags |= KPX_SVC_F_DROP_EMPTY;
		} else {
			s = &(*v)[first + (size_t)at];
			if (s->nbackends)
				continue;
		}
		if (!strcmp(x->target, "REJECT")) {
			s->flags &= ~(uint32_t)KPX_SVC_F_DROP_EMPTY;
			if (x->has_s && !x->neg_s)
				r = add_range(s, &x->s);
		}
	}
	for (j = first; j < *n; j++)
		kpx_service_normalize(&(*v)[j], kpx_addr_len(family));
	free(rs.v);
	return r;
}

/* @tool's standard output (stderr discarded) into *@out; 0 or -errno. */
static int run(const char *tool, const char *table, char **out, char *err,
	       size_t errlen)
{
	char *const argv[] = { (char *)tool, (char *)"-t", (char *)table,
			       NULL };
	posix_spawn_file_actions_t fa;
	size_t len = 0, cap = 0;
	int p[2], status, r;
	char *buf = NULL;
	pid_t pid;

	*out = NULL;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&pid, tool, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		snprintf(err, errlen, "%s: %s", tool, strerror(r));
		return -r;
	}
	for (;;) {
		ssize_t got;

		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
		}
		got = read(p[0], buf + len, cap - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!r && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		snprintf(err, errlen, "%s -t %s failed", tool, table);
		r = -EIO;
	}
	if (r) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

int kpx_ipt_read(struct kpx_service **out, size_t *n, char *err, size_t errlen)
{
	static const struct {
		int family;
		const char *tool;
	} fams[] = { { AF_INET, "iptables-save" },
		     { AF_INET6, "ip6tables-save" } };
	bool found = false;
	int r = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < 2 && !r; i++) {
		char *nat = NULL, *filter = NULL, *both;

		/* saving a table would load its modules */
		if (!kpx_module_loaded("nf_tables") &&
		    !kpx_module_loaded(fams[i].family == AF_INET ?
					       "ip_tables" :
					       "ip6_tables"))
			continue;

		/* a family whose tool fails (no ip6tables) has nothing of ours */
		if (run(fams[i].tool, "nat", &nat, err, errlen) ||
		    run(fams[i].tool, "filter", &filter, err, errlen)) {
			free(nat);
			continue;
		}
		if (asprintf(&both, "%s\n%s", nat, filter) < 0) {
			r = -ENOMEM;
		} else {
			r = kpx_ipt_parse_frontends(both, fams[i].family, out,
						    n, &found);
			free(both);
		}
		free(nat);
		free(filter);
	}
	if (!r && !found) {
		snprintf(
			err, errlen,
			"no iptables chain KPX-SERVICES (iptables-save, ip6tables-save)");
		r = -ENOENT;
	}
	if (r) {
		kpx_services_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return r;
}
