// SPDX-License-Identifier: GPL-2.0-only
/*
 * --proxy-mode iptables: kube-proxy's iptables chains under the prefix
 * KPX- (layout in ipt_rules.h), applied with iptables-restore --noflush
 * and ip6tables-restore --noflush, one restore per family and commit.
 *
 * set_service()/del_service() queue; commit() merges the queue into the
 * state last committed and writes, as kube-proxy's partial syncs
 * (KEP-3453), the top-level chains and only the changed frontends' chains,
 * deleting (-X) the chains of removed frontends and backends.  A full
 * commit reads iptables-save first, rewrites everything, adds the missing
 * jump rules from the built-in chains and deletes KPX- chains that should
 * not exist.  It is the first commit after open() and after a failure, and
 * the first after a dump() (the syncer's periodic re-check, every
 * --sync-period) when an hour has passed since the last full one
 * (kube-proxy's FullSyncPeriod) or when KPX-SERVICES is missing from the
 * nat or filter table of either family (a firewall reload flushed them:
 * kube-proxy's canary chains).  Between those, the re-check costs four
 * "iptables -S KPX-SERVICES 1", not a save and restore of every chain.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/addr.h"
#include "dp/dataplane.h"
#include "base/duration.h"
#include "dp/ipt/ipt_priv.h"
#include "dp/ipt/ipt_kubeproxy.h"
#include "dp/ipt/ipt_rules.h"
#include "base/sysctl.h"
#include "base/log.h"



/* kube-proxy's FullSyncPeriod (pkg/proxy/util): one hour, in ms. */
#define IPT_FULL_SYNC_MS (3600 * 1000)

static int ipt_open(struct kpx_dp **out, unsigned int flags, char *err, size_t errlen)
{
	static const char *const tools[NFAM][3] = {
		{ "iptables-restore", "iptables-save", "iptables" },
		{ "ip6tables-restore", "ip6tables-save", "ip6tables" },
	};
	struct dp_ipt *d = calloc(1, sizeof(*d));
	char *ver = NULL, *serr = NULL, *sout = NULL;
	int f, r;

	if (!d)
		return -ENOMEM;
	for (f = 0; f < NFAM; f++) {
		if (!ipt_find_tool(tools[f][0], d->restore[f], sizeof(d->restore[f])) ||
		    !ipt_find_tool(tools[f][1], d->save[f], sizeof(d->save[f])) ||
		    !ipt_find_tool(tools[f][2], d->cmd[f], sizeof(d->cmd[f]))) {
			snprintf(err, errlen, "%s, %s or %s not found (install the iptables package)",
				 tools[f][0], tools[f][1], tools[f][2]);
			free(d);
			return -ENOENT;
		}
	}
	d->full = true;
	d->dp.errmsg[0] = '\0';
	if (flags & KPX_DP_OPEN_CLEANUP) {
		/* No iptables kernel state at all: nothing to remove, load nothing. */
		if (!ipt_saving_loads_nothing()) {
			snprintf(err, errlen, "no iptables state (neither nf_tables nor ip_tables loaded)");
			free(d);
			return -ENOENT;
		}
		*out = &d->dp;
		return 0;
	}
	/* Can the kernel do it?  A read-only listing of each family's nat table. */
	for (f = 0; f < NFAM; f++) {
		char *argv[] = { d->save[f], "-t", "nat", NULL };

		r = ipt_run_tool(argv, NULL, 0, &sout, &serr);
		free(sout);
		sout = NULL;
		if (r) {
			snprintf(err, errlen, "%s -t nat: %s %d: %s", d->save[f],
				 r < 0 ? "failed" : "exit status", r < 0 ? -r : r,
				 ipt_first_lines(serr, 300));
			free(serr);
			free(d);
			return -EOPNOTSUPP;
		}
		free(serr);
		serr = NULL;
	}
	{
		char *argv[] = { d->restore[V4], "--version", NULL };

		if (!ipt_run_tool(argv, NULL, 0, &ver, NULL))
			kpx_info("dataplane", "iptables mode: %s", ipt_first_lines(ver, 100));
		free(ver);
	}
	*out = &d->dp;
	return 0;
}

static void ops_free(struct dp_ipt *d)
{
	size_t i;

	for (i = 0; i < d->nops; i++)
		kpx_service_free(&d->ops[i].s);
	free(d->ops);
	d->ops = NULL;
	d->nops = 0;
}

static void ipt_close(struct kpx_dp *dp)
{
	struct dp_ipt *d = to_ipt(dp);

	ops_free(d);
	kpx_services_free(d->cur, d->ncur);
	free(d);
}

/* A copy of @s into @o: deep, or of the key only; 0 or -ENOMEM. */
static int svc_copy(struct kpx_service *o, const struct kpx_service *s, bool key_only)
{
	if (!key_only)
		return kpx_service_copy(o, s);
	*o = kpx_service_key(s);
	return 0;
}

/*
 * Whether KPX-SERVICES is in the nat and filter tables of both families
 * (only its first rule is listed).  A missing chain, or a check that could
 * not run, is logged: the caller then rewrites everything.
 */
static bool chains_present(struct dp_ipt *d)
{
	static const char *const tables[] = { "nat", "filter" };
	char *out = NULL, *err = NULL;
	size_t t;
	int f, r;

	for (f = 0; f < NFAM; f++) {
		for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
			char *argv[] = { d->cmd[f], "-w", "5", "-t", (char *)tables[t],
					 "-S", "KPX-SERVICES", "1", NULL };

			r = ipt_run_tool(argv, NULL, 0, &out, &err);
			if (r)
				kpx_warn("iptables", "%s -t %s -S KPX-SERVICES: %s %d (%s): rewriting every chain",
					 d->cmd[f], tables[t], r < 0 ? "failed" : "exit status",
					 r < 0 ? -r : r, ipt_first_lines(err, 200));
			free(out);
			free(err);
			out = err = NULL;
			if (r)
				return false;
		}
	}
	return true;
}

static int ipt_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n)
{
	struct dp_ipt *d = to_ipt(dp);
	struct kpx_service *v = calloc(d->ncur ? d->ncur : 1, sizeof(*v));
	size_t i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < d->ncur; i++)
		if (svc_copy(&v[i], &d->cur[i], false)) {
			kpx_services_free(v, i);
			return -ENOMEM;
		}
	*out = v;
	*n = d->ncur;
	if (!d->full && (kpx_now_ms() - d->last_full >= IPT_FULL_SYNC_MS ||
			 !chains_present(d)))
		d->full = true;
	return 0;
}

static int ipt_set_config(struct kpx_dp *dp, const struct kpx_ns_config *c)
{
	struct dp_ipt *d = to_ipt(dp);

	d->cfg = *c;
	d->dirty[V4] = d->dirty[V6] = true;
	d->cfg_changed = true;
	return 0;
}

static const struct kpx_service *cur_find(const struct dp_ipt *d,
					  const struct kpx_service *key)
{
	long i = kpx_service_find(d->cur, d->ncur, key);

	return i >= 0 ? &d->cur[i] : NULL;
}

static int queue(struct dp_ipt *d, const struct kpx_service *s, bool del)
{
	struct ipt_op *v = realloc(d->ops, (d->nops + 1) * sizeof(*v));

	if (!v)
		return kpx_dp_fail(&d->dp, -ENOMEM, "out of memory");
	d->ops = v;
	v[d->nops].del = del;
	v[d->nops].seq = d->nops;
	if (svc_copy(&v[d->nops].s, s, del))
		return kpx_dp_fail(&d->dp, -ENOMEM, "out of memory");
	d->nops++;
	d->dirty[ipt_fam_index(s->family)] = true;
	return 0;
}

static int ipt_set_service(struct kpx_dp *dp, const struct kpx_service *s)
{
	struct dp_ipt *d = to_ipt(dp);
	const struct kpx_service *old = cur_find(d, s);
	char key[KPX_SERVICE_STRLEN];

	if (s->protocol != IPPROTO_TCP && s->protocol != IPPROTO_UDP &&
	    s->protocol != IPPROTO_SCTP)
		return kpx_dp_fail(dp, -EINVAL, "protocol %u not supported", s->protocol);
	if (s->scheduler[0] && strcmp(s->scheduler, "random") &&
	    (!old || strcmp(old->scheduler, s->scheduler)))
		kpx_warn("dataplane", "%s: scheduler \"%s\" is not supported in iptables mode; using random (weights honored)",
			 kpx_service_str(s, key, sizeof(key)), s->scheduler);
	return queue(d, s, false);
}

static int ipt_del_service(struct kpx_dp *dp, const struct kpx_service *key)
{
	return queue(to_ipt(dp), key, true);
}

/* Queue order: by key, then by arrival (the last one of a key wins). */
static int op_cmp(const void *a, const void *b)
{
	const struct ipt_op *x = a, *y = b;
	int c = kpx_service_key_cmp(&x->s, &y->s);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool chain_in(const kpx_ipt_chain_t *v, size_t n, const char *c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], c))
			return true;
	return false;
}

/* The state to commit: cur with the queue applied, and what changed. */
struct plan {
	struct kpx_service *svcs;	/* owned copies */
	size_t n;
	bool *write;			/* per svcs[i] */
	kpx_ipt_chain_t *del;		/* nat chains of removed frontends/backends */
	int *del_fam;
	size_t ndel;
};

static void plan_free(struct plan *p)
{
	kpx_services_free(p->svcs, p->n);
	free(p->write);
	free(p->del);
	free(p->del_fam);
	memset(p, 0, sizeof(*p));
}

/* Adds the chains of @old that @new (NULL: deleted) does not have to p->del. */
static int plan_removed(struct plan *p, const struct kpx_service *old,
			const struct kpx_service *new)
{
	kpx_ipt_chain_t *oc = NULL, *nc = NULL;
	size_t noc = 0, nnc = 0, i;
	int r = kpx_ipt_frontend_chains(old, &oc, &noc);

	if (!r && new)
		r = kpx_ipt_frontend_chains(new, &nc, &nnc);
	for (i = 0; !r && i < noc; i++) {
		if (chain_in(nc, nnc, oc[i]))
			continue;
		kpx_ipt_chain_t *v = realloc(p->del, (p->ndel + 1) * sizeof(*v));
		int *fv = realloc(p->del_fam, (p->ndel + 1) * sizeof(*fv));

		if (v)
			p->del = v;
		if (fv)
			p->del_fam = fv;
		if (!v || !fv) {
			r = -ENOMEM;
			break;
		}
		memcpy(p->del[p->ndel], oc[i], sizeof(kpx_ipt_chain_t));
		p->del_fam[p->ndel++] = ipt_fam_index(old->family);
	}
	free(oc);
	free(nc);
	return r;
}

static int plan_build(struct dp_ipt *d, struct plan *p)
{
	size_t i = 0, j = 0, cap = d->ncur + d->nops;
	int r = 0;

	memset(p, 0, sizeof(*p));
	qsort(d->ops, d->nops, sizeof(*d->ops), op_cmp);
	p->svcs = calloc(cap ? cap : 1, sizeof(*p->svcs));
	p->write = calloc(cap ? cap : 1, sizeof(*p->write));
	if (!p->svcs || !p->write)
		return -ENOMEM;
	while (!r && (i < d->ncur || j < d->nops)) {
		const struct kpx_service *old = NULL;
		const struct ipt_op *op = NULL;
		int c;

		if (j < d->nops && j + 1 < d->nops &&
		    !kpx_service_key_cmp(&d->ops[j].s, &d->ops[j + 1].s)) {
			j++;		/* a later op of the same key wins */
			continue;
		}
		if (i >= d->ncur)
			c = 1;
		else if (j >= d->nops)
			c = -1;
		else
			c = kpx_service_key_cmp(&d->cur[i], &d->ops[j].s);
		if (c <= 0)
			old = &d->cur[i++];
		if (c >= 0)
			op = &d->ops[j++];
		if (!op) {
			r = svc_copy(&p->svcs[p->n], old, false);
			if (!r)
				p->n++;
			continue;
		}
		if (old)
			r = plan_removed(p, old, op->del ? NULL : &op->s);
		if (r || op->del)
			continue;
		r = svc_copy(&p->svcs[p->n], &op->s, false);
		if (!r)
			p->write[p->n++] = true;
	}
	/*
	 * An eTP Local external frontend's chain jumps to its ClusterIP
	 * frontend's (the short-circuit, when that one has backends) for the
	 * local-traffic detector's sources: it is rewritten with that chain,
	 * and when the detector's settings changed.
	 */
	for (i = 0; !r && i < p->n; i++) {
		const struct kpx_service *c;

		if (p->write[i])
			continue;
		c = kpx_ipt_cluster_frontend(p->svcs, p->n, &p->svcs[i]);
		if (c && (d->cfg_changed || p->write[c - p->svcs]))
			p->write[i] = true;
	}
	return r;
}

/*
 * Sets net.ipv4.conf.all.route_localnet = 1, as kube-proxy for 127.0.0.1
 * NodePorts; a read-only /proc/sys is a warning (--init-only sets it).
 */
static int set_route_localnet(struct dp_ipt *d)
{
	char err[512];
	int r;

	r = kpx_sysctl_ensure("", "net/ipv4/conf/all/route_localnet", 1, KPX_SYSCTL_TOLERANT,
			      err, sizeof(err));
	if (r < 0)
		return kpx_dp_fail(&d->dp, r, "%s", err);
	d->localnet = true;
	return 0;
}

static bool top_level(const char *table, const char *c)
{
	if (!strcmp(c, "KPX-SERVICES"))
		return true;
	if (!strcmp(table, "filter"))
		return !strcmp(c, "KPX-FORWARD");
	return !strcmp(table, "nat") && (!strcmp(c, "KPX-MASQ-NONLOCAL") ||
		!strcmp(c, "KPX-MARK-MASQ") || !strcmp(c, "KPX-POSTROUTING"));
}

/* One family's restore. */
static int commit_family(struct dp_ipt *d, const struct plan *p, int f)
{
	int family = f == V6 ? AF_INET6 : AF_INET;
	struct kpx_ipt_gen g = {
		.family = family, .svcs = p->svcs, .n = p->n, .cfg = &d->cfg,
		.write = d->full ? NULL : p->write, .drop_invalid = d->drop_invalid,
	};
	kpx_ipt_chain_t *want = NULL, *del_nat = NULL, *del_filter = NULL;
	size_t nwant = 0, ndn = 0, ndf = 0, i;
	struct kpx_ipt_saved saved = { 0 };
	struct kpx_strbuf b = { 0 };
	char *text = NULL;
	int r = 0;

	if (d->full) {
		r = ipt_save(d, f, &text);
		if (!r)
			r = kpx_ipt_parse_save(text, &saved);
		free(text);
		for (i = 0; !r && i < p->n; i++)
			if (p->svcs[i].family == family)
				r = kpx_ipt_frontend_chains(&p->svcs[i], &want, &nwant);
		/* Every KPX- chain not wanted goes: stale from an earlier run. */
		del_nat = calloc(saved.nnat + 1, sizeof(*del_nat));
		del_filter = calloc(saved.nfilter + 1, sizeof(*del_filter));
		if (!r && (!del_nat || !del_filter))
			r = -ENOMEM;
		for (i = 0; !r && i < saved.nnat; i++)
			if (!top_level("nat", saved.nat[i]) && !chain_in(want, nwant, saved.nat[i]))
				memcpy(del_nat[ndn++], saved.nat[i], sizeof(kpx_ipt_chain_t));
		for (i = 0; !r && i < saved.nfilter; i++)
			if (!top_level("filter", saved.filter[i]))
				memcpy(del_filter[ndf++], saved.filter[i], sizeof(kpx_ipt_chain_t));
		g.add_hooks = KPX_IPT_HOOKS_ALL & ~saved.hooks;
		g.del_nat = del_nat;
		g.ndel_nat = ndn;
		g.del_filter = del_filter;
		g.ndel_filter = ndf;
	} else {
		del_nat = calloc(p->ndel + 1, sizeof(*del_nat));
		if (!del_nat)
			r = -ENOMEM;
		for (i = 0; !r && i < p->ndel; i++)
			if (p->del_fam[i] == f)
				memcpy(del_nat[ndn++], p->del[i], sizeof(kpx_ipt_chain_t));
		g.del_nat = del_nat;
		g.ndel_nat = ndn;
	}
	if (!r)
		r = kpx_ipt_restore_text(&g, &b);
	if (r && !d->dp.errmsg[0])
		kpx_dp_fail(&d->dp, r, "generating the %s rules: %s",
			    f == V6 ? "ip6tables" : "iptables", strerror(-r));
	if (!r) {
		kpx_dbg(3, "dataplane", "%s-restore input:\n%s", f == V6 ? "ip6tables" : "iptables", b.s);
		r = ipt_restore(d, f, b.s, b.len);
	}
	kpx_strbuf_free(&b);
	kpx_ipt_saved_free(&saved);
	free(want);
	free(del_nat);
	free(del_filter);
	return r;
}

static int ipt_commit(struct kpx_dp *dp)
{
	struct dp_ipt *d = to_ipt(dp);
	struct plan p;
	bool localhost = false;
	size_t i;
	int f, r;

	if (!d->full && !d->nops && !d->dirty[V4] && !d->dirty[V6])
		return 0;
	r = plan_build(d, &p);
	if (r) {
		kpx_dp_fail(dp, r, "out of memory");
		goto out;
	}
	if (!d->liberal_read) {
		/* once, as kube-proxy at start (after the conntrack sysctls) */
		long v;

		d->drop_invalid = kpx_sysctl_read("/proc/sys/net/netfilter/nf_conntrack_tcp_be_liberal", &v) || !v;
		d->liberal_read = true;
		kpx_info("iptables", "%s", d->drop_invalid ?
			 "nf_conntrack_tcp_be_liberal is 0: forwarded packets conntrack marks INVALID are dropped (KPX-FORWARD)" :
			 "nf_conntrack_tcp_be_liberal set, not installing DROP rules for INVALID packets");
	}
	for (i = 0; i < p.n; i++)
		if (kpx_ipt_is_localhost(&p.svcs[i]))
			localhost = true;
	if (localhost && !d->localnet && (r = set_route_localnet(d)))
		goto out;
	for (f = 0; f < NFAM && !r; f++)
		if (d->full || d->dirty[f])
			r = commit_family(d, &p, f);
out:
	ops_free(d);
	if (r) {
		d->full = true;		/* state unknown: rewrite all next time */
		plan_free(&p);
		return r;
	}
	kpx_services_free(d->cur, d->ncur);
	d->cur = p.svcs;
	d->ncur = p.n;
	p.svcs = NULL;
	p.n = 0;
	plan_free(&p);
	if (d->full)
		d->last_full = kpx_now_ms();
	d->full = false;
	d->dirty[V4] = d->dirty[V6] = false;
	d->cfg_changed = false;
	return 0;
}

/* kube-proxy's chains, and with @own kpx's iptables mode's too. */
static int ipt_clean(struct kpx_dp *dp, bool own)
{
	struct dp_ipt *d = to_ipt(dp);
	int f, r = 0;

	for (f = 0; f < NFAM && !r; f++) {
		struct kpx_ipt_saved saved = { 0 };
		struct kpx_strbuf b = { 0 };
		char *text = NULL;

		size_t nkube = 0;

		r = ipt_save(d, f, &text);
		if (!r && own)
			r = kpx_ipt_parse_save(text, &saved);
		if (!r && own)
			r = kpx_ipt_cleanup_text(&saved, &b);
		/* and kube-proxy's, as kube-proxy --cleanup (migration) */
		if (!r)
			r = kpx_ipt_kubeproxy_cleanup_text(text, &b, &nkube);
		if (!r && b.len)
			r = ipt_restore(d, f, b.s, b.len);
		if (!r && nkube)
			kpx_info("dataplane", "cleanup: removed kube-proxy's %zu %s chains (KUBE-SERVICES, KUBE-SVC-*, ...) and the rules jumping to them",
				 nkube, f ? "ip6tables" : "iptables");
		free(text);
		kpx_strbuf_free(&b);
		kpx_ipt_saved_free(&saved);
	}
	if (!r && own) {
		kpx_services_free(d->cur, d->ncur);
		d->cur = NULL;
		d->ncur = 0;
		d->full = true;
	}
	return r;
}

static int ipt_cleanup(struct kpx_dp *dp)
{
	return ipt_clean(dp, true);
}

static int ipt_cleanup_kubeproxy(struct kpx_dp *dp)
{
	return ipt_clean(dp, false);
}

const struct kpx_dp_ops kpx_dp_iptables = {
	.name = "iptables",
	.caps = 0,
	.open = ipt_open,
	.close = ipt_close,
	.dump = ipt_dump,
	.set_config = ipt_set_config,
	.set_service = ipt_set_service,
	.del_service = ipt_del_service,
	.commit = ipt_commit,
	.cleanup = ipt_cleanup,
	.cleanup_kubeproxy = ipt_cleanup_kubeproxy,
};

