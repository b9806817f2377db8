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
#include "dp/ipvs/ipvs_kubeproxy.h"
#include "dp/ipvs/ipvs_link.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_priv.h"
#include "dp/ipvs/ipvs_rules.h"
#include "base/sysctl.h"
#include "config/ctsysctl.h"
#include "base/log.h"

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
		if (r && kpx_ipvs_link_index(v->rt) < 0 && !ipvs_module_loaded("ip_set") &&
		    kpx_ipvs_link_index_of(v->rt, KPX_KUBE_IPVS_LINK) < 0) {
			snprintf(err, errlen, "no IPVS, no %s or %s, no ipsets", KPX_IPVS_LINK,
				 KPX_KUBE_IPVS_LINK);
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

	ipvs_pend_clear(v);
	free(v->pend);
	free(v->drain);
	ipvs_cur_clear(v);
	kpx_ipvs_close(v->ipvs);
	nl_socket_free(v->rt);
	free(v);
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
			kpx_warn("dataplane", "ipvs: loopback frontends such as %s (127.0.0.1 NodePorts) are not served in this mode: IPVS drops loopback-sourced connections to other hosts (as in kube-proxy's IPVS mode): refused on the node; other hosts' packets to 127.0.0.0/8 are dropped (KPX-IPVS-INPUT, CVE-2020-8558); use --proxy-mode iptables or kpx for localhost NodePorts",
				 kpx_service_str(s, key, sizeof(key)));
		v->warned_loopback = true;
		return ipvs_pend_push(v, s, true);
	}
	if (fb && !v->warned_random) {
		v->warned_random = true;
		kpx_warn("dataplane", "ipvs: scheduler \"%s\" is not supported in this mode; IPVS \"rr\" is used instead (kube-proxy's IPVS default)",
			 s->scheduler[0] ? s->scheduler : "random");
	}
	return ipvs_pend_push(v, s, false);
}

static int ipvs_del_service(struct kpx_dp *dp, const struct kpx_service *key)
{
	return ipvs_pend_push(to_ipvs(dp), key, true);
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
			/* no new connection; deleted by ipvs_reap() once drained */
			d.weight = 0;
			r = kpx_ipvs_dest_put(v->ipvs, &is, &d, 0);
			if (!r)
				r = ipvs_drain_add(v, &is);
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

	if (!v->rules_ok && (r = ipvs_write_rules(v)))
		goto out;
	ipvs_reap(v);
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
		long k = ipvs_cur_find(v, s);
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
	if ((r = ipvs_ipset_restore(v, adds)))
		goto out;
	/* 2. IPVS, in order; cur follows what succeeded */
	for (i = 0; i < v->npend; i++) {
		const struct kpx_service *s = &v->pend[i].s;
		long k = ipvs_cur_find(v, s);
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
				ipvs_cur_del(v, s);
			}
		} else {
			e = apply_set(v, old, s);
			if (!e)
				e = ipvs_cur_put(v, s);
		}
		if (e && !first)
			first = e;
	}
	/* 3. VIPs on kpx-ipvs0 */
	r = ipvs_sync_addrs(v);
	if (r && !first)
		first = r;
	/* 4. ipset deletions: flags gone, hairpin entries no frontend uses */
	for (i = 0; i < gone.n; i++) {
		if (ipvs_backend_used(v, gone.v[i].family, gone.v[i].protocol, &gone.v[i].b))
			continue;
		kpx_ipvs_loop_entry(gone.v[i].family, gone.v[i].protocol, &gone.v[i].b,
				    line, sizeof(line));
		fprintf(fd, "del %s\n", line);
	}
	fflush(fd);
	r = ipvs_ipset_restore(v, dels);
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
	ipvs_pend_clear(v);
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

	if (ipvs_module_loaded("ip_set") && (r = ipvs_read_sets(v, &e, &ne)))
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
				ours = e[j].set == KPX_IPVS_SET_SVC && ipvs_entry_is(&e[j], &svcs[i]);
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
		bool loaded = ipvs_module_loaded("nf_tables") ||
			      ipvs_module_loaded(fams[i] == AF_INET ? "ip_tables" : "ip6_tables");
		char *text = NULL;
		size_t len;
		FILE *f;

		if (!loaded || !kpx_ipvs_have(ipvs_iptables_cmd(fams[i], true)))
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
			const char *dargv[] = { ipvs_iptables_cmd(fams[i], false), "-w", "-t", jp->table,
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
			const char *rargv[] = { ipvs_iptables_cmd(fams[i], true), "-w", "--noflush", NULL };

			r = kpx_ipvs_run(rargv, text, NULL, err, sizeof(err));
		}
		free(text);
		if (r && !first)
			first = kpx_dp_fail(dp, r, "%s", err);
	}
	/* our ipsets, now unreferenced */
	if (ipvs_module_loaded("ip_set")) {
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
		r = ipvs_ipset_restore(v, script);
		free(script);
		if (r && !first)
			first = r;
	}
	r = kpx_ipvs_link_delete(v->rt);
	if (r && !first)
		first = kpx_dp_fail(dp, r, "deleting %s: %s", KPX_IPVS_LINK, strerror(-r));
	/* and kube-proxy's, as kube-proxy --cleanup (migration) */
	r = ipvs_kubeproxy_cleanup(v);
	if (r && !first)
		first = r;
	free(e);
	free(on);
	free(other);
	free(svcs);
	ipvs_cur_clear(v);
	v->rules_ok = false;
	v->ips_synced = false;
	return first;
}

static int ipvs_cleanup_kubeproxy(struct kpx_dp *dp)
{
	return ipvs_kubeproxy_cleanup(to_ipvs(dp));
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
	.cleanup_kubeproxy = ipvs_cleanup_kubeproxy,
};

