// SPDX-License-Identifier: GPL-2.0-only
/*
 * kube-proxy's iptables chains removed (see ipt_kubeproxy.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/ipt/ipt_kubeproxy.h"

bool kpx_ipt_kubeproxy_chain(const char *name, size_t len)
{
	static const char *const exact[] = {
		"KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING",
		"KUBE-FORWARD", "KUBE-MARK-MASQ", "KUBE-PROXY-FIREWALL", "KUBE-PROXY-CANARY",
		"KUBE-LOAD-BALANCER", "KUBE-NODE-PORT", "KUBE-SOURCE-RANGES-FIREWALL",
		"KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER",
	};
	static const char *const prefix[] = {
		"KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SEP-", "KUBE-XLB-",
	};
	size_t i;

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == len && !memcmp(name, exact[i], len))
			return true;
	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (len > strlen(prefix[i]) && !memcmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

/* The word after " -j " or " -g " in rule line @l, or NULL; its length in *n. */
static const char *target(const char *l, size_t len, size_t *n)
{
	const char *w = NULL, *p;

	for (p = l; p + 4 <= l + len; p++)
		if (p[0] == ' ' && p[1] == '-' && (p[2] == 'j' || p[2] == 'g') && p[3] == ' ')
			w = p + 4;
	if (!w)
		return NULL;
	p = memchr(w, ' ', (size_t)(l + len - w));
	*n = p ? (size_t)(p - w) : (size_t)(l + len - w);
	return w;
}

/* The chain of rule line "-A CHAIN ..." @l, its length in *n. */
static const char *rule_chain(const char *l, size_t len, size_t *n)
{
	const char *c = l + 3, *sp = memchr(c, ' ', len - 3);

	*n = sp ? (size_t)(sp - c) : len - 3;
	return c;
}

/* One table's section [@s, @end) of iptables-save output. */
static void table(const char *name, const char *s, const char *end, struct kpx_strbuf *b,
		  size_t *nchains)
{
	struct kpx_strbuf decl = { 0 }, del = { 0 }, drop = { 0 };
	const char *l, *e;
	size_t n = 0;

	for (l = s; l < end; l = e + 1) {
		size_t len, cn, tn;
		const char *c, *t;

		e = memchr(l, '\n', (size_t)(end - l));
		if (!e)
			e = end;
		len = (size_t)(e - l);
		if (len > 1 && l[0] == ':') {
			const char *sp = memchr(l, ' ', len);

			cn = sp ? (size_t)(sp - l - 1) : len - 1;
			if (kpx_ipt_kubeproxy_chain(l + 1, cn)) {
				kpx_strbuf_printf(&decl, ":%.*s - [0:0]\n", (int)cn, l + 1);
				kpx_strbuf_printf(&drop, "-X %.*s\n", (int)cn, l + 1);
				n++;
			}
		} else if (len > 3 && !strncmp(l, "-A ", 3)) {
			c = rule_chain(l, len, &cn);
			t = target(l, len, &tn);
			if (t && kpx_ipt_kubeproxy_chain(t, tn) && !kpx_ipt_kubeproxy_chain(c, cn))
				kpx_strbuf_printf(&del, "-D %.*s\n", (int)(len - 3), l + 3);
		}
		if (e == end)
			break;
	}
	if (n) {
		kpx_strbuf_printf(b, "*%s\n%s%s%sCOMMIT\n", name, decl.s, del.s ? del.s : "", drop.s);
		if (decl.err || del.err || drop.err)
			b->err = -ENOMEM;
		*nchains += n;
	}
	kpx_strbuf_free(&decl);
	kpx_strbuf_free(&del);
	kpx_strbuf_free(&drop);
}

int kpx_ipt_kubeproxy_cleanup_text(const char *save, struct kpx_strbuf *out, size_t *nchains)
{
	const char *p = save, *start = NULL, *e;
	char name[32] = "";
	size_t n = 0;

	for (; p && *p; p = *e ? e + 1 : e) {
		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		if (p[0] == '*') {
			snprintf(name, sizeof(name), "%.*s", (int)(e - p - 1), p + 1);
			start = *e ? e + 1 : e;
		} else if (!strncmp(p, "COMMIT", 6) && start) {
			table(name, start, p, out, &n);
			start = NULL;
		}
	}
	if (nchains)
		*nchains = n;
	return out->err;
}
