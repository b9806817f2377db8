// SPDX-License-Identifier: GPL-2.0-only
/*
 * --proxy-mode nftables: tables "ip kpx" and "ip6 kpx" programmed through
 * libnftables (no nft process), with the structure of kube-proxy's
 * nftables mode (KEP-3866; layout in nft_rules.h).
 *
 * set_service()/del_service() queue; commit() sends one buffer, i.e. one
 * atomic nftables transaction, holding only the changed frontends' chains,
 * sets and map elements.  The first successful commit deletes any table
 * of ours left by a previous run and creates both afresh, as kube-proxy's
 * first sync.  The kernel's state is not read back (no KPX_DP_CAP_DUMP):
 * dump() returns what was last committed, empty after open() and after a
 * failed commit or a table removed by someone else (then the next commit
 * recreates the tables and the sync rewrites every frontend).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/kpx.h>
#include <nftables/libnftables.h>

#include "base/addr.h"
#include "dp/dataplane.h"
#include "base/sysctl.h"
#include "base/log.h"
#include "dp/nft/nft_cips.h"
#include "dp/nft/nft_rules.h"

/* One queued change: @svc (deep copy), or only its key when @del. */
struct nft_op {
	struct kpx_service svc;
	bool del;
	size_t seq;		/* queue order: the last op on a key wins */
};

struct dp_nft {
	struct kpx_dp dp;
	struct nft_ctx *nft;
	bool created;			/* a commit created our tables */
	struct kpx_service *cur;	/* committed, sorted by key */
	size_t ncur;
	struct nft_op *ops;
	size_t nops, capops;
	struct kpx_ns_config cfg;	/* requested by set_config() */
	bool cfg_dirty;			/* cfg not committed yet */
	bool localnet;			/* route_localnet written */
	struct kpx_nft_cips cips;	/* the cluster-ips set */
	struct kpx_strbuf buf;
};

static struct dp_nft *to_nft(struct kpx_dp *dp)
{
	return (struct dp_nft *)dp;
}

/*
 * Runs @cmds as one transaction; 0, or -EIO with nft's "Error: ..." lines
 * (without the echoed command and the carets) in errmsg, "; "-separated.
 */
static int nft_run(struct dp_nft *n, const char *cmds)
{
	char msg[sizeof(n->dp.errmsg)] = "";
	const char *e, *p, *nl;
	size_t len = 0;

	if (!nft_run_cmd_from_buffer(n->nft, cmds))
		return 0;
	e = nft_ctx_get_error_buffer(n->nft);
	for (p = e; p && *p && len < sizeof(msg); p = nl + (*nl == '\n')) {
		nl = strchrnul(p, '\n');
		if (strncmp(p, "Error: ", 7) && strncmp(p, "internal:", 9))
			continue;
		len += snprintf(msg + len, sizeof(msg) - len, "%s%.*s",
				len ? "; " : "", (int)(nl - p), p);
	}
	return kpx_dp_fail(&n->dp, -EIO, "nftables: %s",
			   msg[0] ? msg : "transaction failed");
}

/*
 * Whether the line at @p names table "@fam kpx": "table ip kpx\n" in "list
 * tables" output, "table ip kpx {" in "list chains" output.
 */
static bool table_is(const char *p, const char *fam, const char *name)
{
	char want[40];
	int len = snprintf(want, sizeof(want), "table %s %s", fam, name);

	return !strncmp(p, want, (size_t)len) && (p[len] == '\n' || p[len] == ' ' || !p[len]);
}

static bool table_line(const char *p, const char *fam)
{
	return table_is(p, fam, KPX_NFT_TABLE);
}

/*
 * Which of "ip kpx" / "ip6 kpx" exist: bit 0 / bit 1 in *@have.  @cheap:
 * "list chains", which names the tables that have a chain (ours always
 * have) without reading any rule or set element; "list tables" names every
 * table, but libnftables 1.0 reads every set element of every table for it
 * (0.5 s for a 50,000-element map, measured natively).
 */
static int nft_tables(struct dp_nft *n, unsigned int *have, bool cheap)
{
	const char *out, *p;
	int r = nft_run(n, cheap ? "list chains" : "list tables");

	*have = 0;
	if (r)
		return r;
	out = nft_ctx_get_output_buffer(n->nft);
	for (p = out; p && *p; p = strchrnul(p, '\n'), p += *p == '\n') {
		if (table_line(p, "ip"))
			*have |= 1;
		if (table_line(p, "ip6"))
			*have |= 2;
	}
	return 0;
}

/*
 * kube-proxy's nftables mode's tables, "ip kube-proxy" / "ip6 kube-proxy"
 * (bits 0, 1 of *@have), from a "list tables".
 */
static int kubeproxy_tables(struct dp_nft *n, unsigned int *have)
{
	const char *out, *p;
	int r = nft_run(n, "list tables");

	*have = 0;
	if (r)
		return r;
	out = nft_ctx_get_output_buffer(n->nft);
	for (p = out; p && *p; p = strchrnul(p, '\n'), p += *p == '\n') {
		if (table_is(p, "ip", "kube-proxy"))
			*have |= 1;
		if (table_is(p, "ip6", "kube-proxy"))
			*have |= 2;
	}
	return 0;
}

/*
 * Whether nf_tables is in the running kernel without loading anything:
 * /proc/modules (loaded) or modules.builtin; true without module support.
 */
static bool nf_tables_present(void)
{
	char line[256], path[320];
	struct utsname u;
	bool found = false;
	FILE *f = fopen("/proc/modules", "re");

	if (!f)
		return true;	/* no loadable modules: built in or absent */
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "nf_tables ", 10);
	fclose(f);
	if (found || uname(&u))
		return found;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.builtin", u.release);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/nf_tables.ko") != NULL;
	fclose(f);
	return found;
}

static void nft_free_ops(struct dp_nft *n)
{
	for (size_t i = 0; i < n->nops; i++)
		kpx_service_free(&n->ops[i].svc);
	n->nops = 0;
}

static void nft_close(struct kpx_dp *dp)
{
	struct dp_nft *n = to_nft(dp);

	nft_free_ops(n);
	free(n->ops);
	kpx_services_free(n->cur, n->ncur);
	kpx_nft_cips_clear(&n->cips);
	kpx_strbuf_free(&n->buf);
	if (n->nft)
		nft_ctx_free(n->nft);
	free(n);
}

/*
 * Every kind of object and expression the mode uses (tables, nat and
 * filter chains, reject, masquerade, numgen, jhash, dnat, dynamic sets,
 * intervals), both families, for a dry run: the kernel checks it all (and
 * loads the nft_* modules it needs now rather than during the first sync)
 * in a transaction that is never committed.
 */
static void gen_probe(struct kpx_strbuf *b)
{
	struct kpx_backend be[2] = { { .port = 1, .weight = 1 }, { .port = 2, .weight = 2 } };
	struct kpx_cidr range = { .family = AF_INET, .len = 8 };
	struct kpx_ns_config c = { .nlocal_cidrs = 0 };
	struct kpx_service s = {
		.protocol = IPPROTO_TCP, .port = 1, .nbackends = 2, .backends = be,
		.flags = KPX_SVC_F_MASQ, .affinity_timeout = 1,
		.nsource_ranges = 1, .source_ranges = &range,
	};
	static const int fam[2] = { AF_INET, AF_INET6 };

	snprintf(c.local_ifprefix, sizeof(c.local_ifprefix), "probe");
	for (int i = 0; i < 2; i++) {
		s.family = range.family = fam[i];
		memset(&s.addr, 0, sizeof(s.addr));
		memset(&be[0].addr, 0, sizeof(be[0].addr));
		memset(&be[1].addr, 0, sizeof(be[1].addr));
		/* 10.0.0.1 / ::a, backends 10.0.0.2 / ::b and 10.0.0.3 / ::c */
		if (fam[i] == AF_INET) {
			s.addr.v4.s_addr = htonl(0x0a000001);
			be[0].addr.v4.s_addr = htonl(0x0a000002);
			be[1].addr.v4.s_addr = htonl(0x0a000003);
		} else {
			s.addr.v6.s6_addr[15] = 0xa;
			be[0].addr.v6.s6_addr[15] = 0xb;
			be[1].addr.v6.s6_addr[15] = 0xc;
		}
		kpx_nft_gen_table(b, fam[i]);
		kpx_nft_gen_config(b, fam[i], &c, true);
		snprintf(s.scheduler, sizeof(s.scheduler), "%s", i ? "sh" : "");
		kpx_nft_gen_service(b, NULL, &s);
		kpx_nft_gen_cluster_ip(b, fam[i], &s.addr, true);
	}
}

static int nft_open(struct kpx_dp **out, unsigned int flags, char *err,
		    size_t errlen)
{
	struct dp_nft *n;
	unsigned int have, kube = 0;
	int r;

	if ((flags & KPX_DP_OPEN_CLEANUP) && !nf_tables_present()) {
		snprintf(err, errlen, "nf_tables not loaded");
		return -ENOENT;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!n->nft || nft_ctx_buffer_output(n->nft) ||
	    nft_ctx_buffer_error(n->nft)) {
		snprintf(err, errlen, "libnftables: cannot create a context");
		nft_close(&n->dp);
		return -ENOMEM;
	}
	r = nft_tables(n, &have, false);
	if (!r && (flags & KPX_DP_OPEN_CLEANUP) && !have && !kubeproxy_tables(n, &kube) && !kube) {
		snprintf(err, errlen, "no table %s or kube-proxy", KPX_NFT_TABLE);
		r = -ENOENT;
	} else if (!r && !(flags & KPX_DP_OPEN_CLEANUP)) {
		gen_probe(&n->buf);
		nft_ctx_set_dry_run(n->nft, true);
		r = n->buf.err ? n->buf.err : nft_run(n, n->buf.s);
		nft_ctx_set_dry_run(n->nft, false);
		kpx_strbuf_reset(&n->buf);
	} else if (r) {
		r = -EOPNOTSUPP;
	}
	if (r) {
		if (r != -ENOENT)
			snprintf(err, errlen, "%s", n->dp.errmsg);
		nft_close(&n->dp);
		return r == -EIO ? -EOPNOTSUPP : r;
	}
	*out = &n->dp;
	return 0;
}

/* Forgets what was committed: the next commit starts with fresh tables. */
static void nft_forget(struct dp_nft *n)
{
	kpx_services_free(n->cur, n->ncur);
	n->cur = NULL;
	n->ncur = 0;
	n->created = false;
	kpx_nft_cips_clear(&n->cips);
}

/*
 * Full syncs only: when a table of ours has vanished (nft flush ruleset by
 * a firewall reload), reports nothing so that everything is rewritten.
 */
static int nft_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *nout)
{
	struct dp_nft *n = to_nft(dp);
	struct kpx_service *v;
	unsigned int have;
	size_t i;
	int r;

	if (n->created) {
		r = nft_tables(n, &have, true);
		if (r)
			return r;
		if (have != 3) {
			kpx_warn("nftables", "table %s removed by someone else; rewriting it",
				 KPX_NFT_TABLE);
			nft_forget(n);
		}
	}
	v = calloc(n->ncur ? n->ncur : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n->ncur; i++) {
		if (kpx_service_copy(&v[i], &n->cur[i])) {
			kpx_services_free(v, i);
			return -ENOMEM;
		}
	}
	*out = v;
	*nout = n->ncur;
	return 0;
}

/* Interface names go into quoted nft strings: no quote, backslash or '*'. */
static bool ifname_ok(const char *s)
{
	return !strpbrk(s, "\"\\*");
}

static int nft_set_config(struct kpx_dp *dp, const struct kpx_ns_config *c)
{
	struct dp_nft *n = to_nft(dp);

	if (!ifname_ok(c->local_ifname) || !ifname_ok(c->local_ifprefix))
		return kpx_dp_fail(dp, -EINVAL, "interface name with '\"', '\\' or '*'");
	if (memcmp(&n->cfg, c, sizeof(*c))) {
		n->cfg = *c;
		n->cfg_dirty = true;
	}
	return 0;
}

static int queue_op(struct dp_nft *n, const struct kpx_service *s, bool del)
{
	struct nft_op *op;

	if (n->nops == n->capops) {
		size_t cap = n->capops ? 2 * n->capops : 64;
		struct nft_op *v = realloc(n->ops, cap * sizeof(*v));

		if (!v)
			return kpx_dp_fail(&n->dp, -ENOMEM, "out of memory");
		n->ops = v;
		n->capops = cap;
	}
	op = &n->ops[n->nops];
	if (del)
		op->svc = kpx_service_key(s);
	else if (kpx_service_copy(&op->svc, s)) {
		return kpx_dp_fail(&n->dp, -ENOMEM, "out of memory");
	}
	op->del = del;
	op->seq = n->nops++;
	return 0;
}

static int nft_set_service(struct kpx_dp *dp, const struct kpx_service *s)
{
	if (s->family != AF_INET && s->family != AF_INET6)
		return kpx_dp_fail(dp, -EAFNOSUPPORT, "address family %d", s->family);
	return queue_op(to_nft(dp), s, false);
}

static int nft_del_service(struct kpx_dp *dp, const struct kpx_service *key)
{
	if (key->family != AF_INET && key->family != AF_INET6)
		return 0;
	return queue_op(to_nft(dp), key, true);
}

static int op_cmp(const void *pa, const void *pb)
{
	const struct nft_op *a = pa, *b = pb;
	int r = kpx_service_key_cmp(&a->svc, &b->svc);

	return r ? r : (a->seq > b->seq) - (a->seq < b->seq);
}

static const struct kpx_service *find_cur(const struct dp_nft *n,
					  const struct kpx_service *key)
{
	long i = kpx_service_find(n->cur, n->ncur, key);

	return i >= 0 ? &n->cur[i] : NULL;
}

/* Sorts the queue by key and keeps the last op of each key. */
static void dedup_ops(struct dp_nft *n)
{
	size_t i, j = 0;

	qsort(n->ops, n->nops, sizeof(*n->ops), op_cmp);
	for (i = 0; i < n->nops; i++) {
		if (i + 1 < n->nops &&
		    !kpx_service_key_cmp(&n->ops[i].svc, &n->ops[i + 1].svc)) {
			kpx_service_free(&n->ops[i].svc);
			continue;
		}
		n->ops[j++] = n->ops[i];
	}
	n->nops = j;
}

/* After a successful transaction: cur = cur with the (sorted) ops applied. */
static int apply_ops(struct dp_nft *n)
{
	struct kpx_service *v = calloc(n->ncur + n->nops + 1, sizeof(*v));
	size_t i = 0, j = 0, k = 0;

	if (!v)
		return -ENOMEM;
	while (i < n->ncur || j < n->nops) {
		int r = i == n->ncur ? 1 : j == n->nops ? -1 :
			kpx_service_key_cmp(&n->cur[i], &n->ops[j].svc);

		if (r < 0) {
			v[k++] = n->cur[i++];
			continue;
		}
		if (r == 0)
			kpx_service_free(&n->cur[i++]);
		if (!n->ops[j].del)
			v[k++] = n->ops[j].svc;
		else
			kpx_service_free(&n->ops[j].svc);
		j++;
	}
	free(n->cur);
	n->cur = v;
	n->ncur = k;
	n->nops = 0;
	return 0;
}

/*
 * A frontend on 127.0.0.0/8 (the localhost NodePort of kube-proxy's
 * iptables mode) is only reachable after DNAT to a pod with
 * net.ipv4.conf.all.route_localnet=1, which kube-proxy sets too.
 */
static void maybe_route_localnet(struct dp_nft *n)
{
	char err[512];

	if (n->localnet)
		return;
	for (size_t i = 0; i < n->ncur; i++) {
		if (n->cur[i].family != AF_INET ||
		    (ntohl(n->cur[i].addr.v4.s_addr) >> 24) != 127)
			continue;
		if (kpx_sysctl_ensure("", "net/ipv4/conf/all/route_localnet", 1,
				      KPX_SYSCTL_TOLERANT, err, sizeof(err)) < 0)
			kpx_warn("nftables", "localhost NodePorts: %s", err);
		n->localnet = true;
		return;
	}
}

/* Logs once per change of scheduler that nftables has no equivalent. */
static void warn_sched(const struct kpx_service *old, const struct kpx_service *new)
{
	char s[KPX_SERVICE_STRLEN];
	bool supported;

	kpx_nft_sched(new->scheduler, &supported);
	if (supported || (old && !strcmp(old->scheduler, new->scheduler)))
		return;
	kpx_warn("nftables", "%s: scheduler \"%s\" is not supported in proxy mode nftables; using random",
		 kpx_service_str(new, s, sizeof(s)), new->scheduler);
}

static int nft_commit(struct kpx_dp *dp)
{
	struct dp_nft *n = to_nft(dp);
	bool fresh = !n->created;
	size_t i, changed = 0;
	int r = 0;

	dedup_ops(n);
	kpx_nft_cips_unstage(&n->cips);
	kpx_strbuf_reset(&n->buf);
	if (fresh) {
		kpx_nft_gen_table(&n->buf, AF_INET);
		kpx_nft_gen_table(&n->buf, AF_INET6);
	}
	if (fresh || n->cfg_dirty) {
		kpx_nft_gen_config(&n->buf, AF_INET, &n->cfg, fresh);
		kpx_nft_gen_config(&n->buf, AF_INET6, &n->cfg, fresh);
	}
	for (i = 0; i < n->nops; i++) {
		const struct kpx_service *old = find_cur(n, &n->ops[i].svc);
		const struct kpx_service *new = n->ops[i].del ? NULL : &n->ops[i].svc;

		if ((!old && !new) || (old && new && kpx_service_same_config(old, new)))
			continue;
		if (new)
			warn_sched(old, new);
		kpx_nft_gen_service(&n->buf, old, new);
		r = r ? r : kpx_nft_cips_stage(&n->cips, old, new);
		changed++;
	}
	if (!r)
		r = kpx_nft_cips_gen(&n->cips, &n->buf);
	if (r || n->buf.err)
		r = kpx_dp_fail(dp, -ENOMEM, "out of memory");
	if (!r && n->buf.len)
		r = nft_run(n, n->buf.s);
	if (r) {
		/*
		 * Nothing changed (one transaction), but the failure may come
		 * from a table changed behind our back: the next sync is full,
		 * let it rewrite everything into fresh tables.
		 */
		nft_free_ops(n);
		nft_forget(n);
		return r;
	}
	kpx_dbg(2, "nftables", "committed %zu frontend changes%s (%zu bytes)", changed,
		fresh ? " in new tables" : "", n->buf.len);
	n->created = true;
	n->cfg_dirty = false;
	r = kpx_nft_cips_apply(&n->cips);
	if (!r)
		r = apply_ops(n);
	if (r) {
		/* Our record is lost: start over with fresh tables. */
		nft_free_ops(n);
		nft_forget(n);
		return kpx_dp_fail(dp, r, "out of memory");
	}
	maybe_route_localnet(n);
	return 0;
}

/* kube-proxy's nftables tables, and with @own kpx's nftables mode's too. */
static int nft_clean(struct kpx_dp *dp, bool own)
{
	struct dp_nft *n = to_nft(dp);
	unsigned int have = 0, kube = 0;
	int r = own ? nft_tables(n, &have, false) : 0;

	/* and kube-proxy's nftables mode's tables, as kube-proxy --cleanup */
	if (!r)
		r = kubeproxy_tables(n, &kube);
	if (r || (!have && !kube))
		return r;
	kpx_strbuf_reset(&n->buf);
	if (have & 1)
		kpx_nft_gen_delete_table(&n->buf, AF_INET);
	if (have & 2)
		kpx_nft_gen_delete_table(&n->buf, AF_INET6);
	if (kube & 1)
		kpx_strbuf_printf(&n->buf, "delete table ip kube-proxy\n");
	if (kube & 2)
		kpx_strbuf_printf(&n->buf, "delete table ip6 kube-proxy\n");
	r = n->buf.err ? n->buf.err : nft_run(n, n->buf.s);
	if (!r && own)
		nft_forget(n);
	if (!r && kube)
		kpx_info("dataplane", "cleanup: removed kube-proxy's nftables table%s%s%s",
			 kube == 3 ? "s" : "", kube & 1 ? " ip kube-proxy" : "",
			 kube & 2 ? " ip6 kube-proxy" : "");
	return r;
}

static int nft_cleanup(struct kpx_dp *dp)
{
	return nft_clean(dp, true);
}

static int nft_cleanup_kubeproxy(struct kpx_dp *dp)
{
	return nft_clean(dp, false);
}

const struct kpx_dp_ops kpx_dp_nft = {
	.name = "nftables",
	.caps = 0,
	.open = nft_open,
	.close = nft_close,
	.dump = nft_dump,
	.set_config = nft_set_config,
	.set_service = nft_set_service,
	.del_service = nft_del_service,
	.commit = nft_commit,
	.cleanup = nft_cleanup,
	.cleanup_kubeproxy = nft_cleanup_kubeproxy,
};
