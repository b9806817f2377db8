// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the ipvs data plane writes on the node besides IPVS: the constant
 * iptables ruleset and its ipsets (ipvs_rules.c's text, through
 * iptables-restore and ipset restore), and every VIP it serves on kpx-ipvs0
 * (unless the node holds the address already) with the ipset KPX-IPVS-IPS
 * kept equal to them, as kube-proxy's IPVS mode keeps kube-ipvs0 and
 * KUBE-IPVS-IPS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/sysctl.h"
#include "config/ctsysctl.h"
#include "dp/ipvs/ipvs_link.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_priv.h"
#include "dp/ipvs/ipvs_exec.h"
#include "dp/ipvs/ipvs_rules.h"

/* --- small helpers ----------------------------------------------------------- */

bool ipvs_module_loaded(const char *name)
{
	return kpx_module_loaded(name);
}

/* `ipset -exist restore` of @text; 0 or -errno with errmsg set. */
int ipvs_ipset_restore(struct dp_ipvs *v, const char *text)
{
	const char *argv[] = { "ipset", "-exist", "restore", NULL };
	char err[400];
	int r;

	if (!text || !*text)
		return 0;
	r = kpx_ipvs_run(argv, text, NULL, err, sizeof(err));
	if (r)
		kpx_dp_fail(&v->dp, r, "ipset restore: %s", err);
	return r;
}

const char *ipvs_iptables_cmd(int family, bool restore)
{
	if (family == AF_INET)
		return restore ? "iptables-restore" : "iptables";
	return restore ? "ip6tables-restore" : "ip6tables";
}

/* --- the constant ruleset -------------------------------------------------- */

/*
 * ipvs.tcpTimeout, tcpFinTimeout, udpTimeout: IPVS_CMD_SET_CONFIG (as
 * kube-proxy's ConfigureTimeouts()) of those given (> 0) that differ from
 * the kernel's; each change logged with the old value.  A refusal is
 * logged as an error and not fatal, as in kube-proxy.
 */
static int ipvs_set_timeouts(struct dp_ipvs *v)
{
	const struct kpx_dp_params *p = kpx_dp_params();
	struct kpx_ipvs_timeouts now, want = { p->ipvs_tcp_s, p->ipvs_tcpfin_s, p->ipvs_udp_s };
	int r;

	if (!want.tcp && !want.tcpfin && !want.udp)
		return 0;
	r = kpx_ipvs_get_timeouts(v->ipvs, &now);
	if (!r && (!want.tcp || want.tcp == now.tcp) &&
	    (!want.tcpfin || want.tcpfin == now.tcpfin) && (!want.udp || want.udp == now.udp))
		return 0;
	r = kpx_ipvs_set_timeouts(v->ipvs, &want);
	if (r) {
		kpx_err("dataplane", "ipvs: setting the IPVS timeouts (tcp %u, tcpfin %u, udp %u s): %s%s%s",
			want.tcp, want.tcpfin, want.udp, strerror(-r),
			*kpx_ipvs_errmsg(v->ipvs) ? ": " : "", kpx_ipvs_errmsg(v->ipvs));
		return 0;
	}
	kpx_info("dataplane", "ipvs: IPVS timeouts tcp %u s, tcpfin %u s, udp %u s (were %u, %u, %u)",
		 want.tcp ? want.tcp : now.tcp, want.tcpfin ? want.tcpfin : now.tcpfin,
		 want.udp ? want.udp : now.udp, now.tcp, now.tcpfin, now.udp);
	return 0;
}

/* Sets, chains and jumps of both families, and the sysctls; idempotent. */
int ipvs_write_rules(struct dp_ipvs *v)
{
	const struct kpx_dp_params *p = kpx_dp_params();
	static const int fams[] = { AF_INET, AF_INET6 };
	char *text = NULL, err[400];
	size_t len, i, j;
	FILE *f;
	int r;

	/*
	 * kube-proxy's IPVS sysctls (NAT'ed connections get conntrack
	 * entries); a read-only /proc/sys is a warning (--init-only sets them).
	 */
	r = kpx_mode_sysctls("ipvs", false, "", KPX_SYSCTL_TOLERANT, err, sizeof(err));
	if (r < 0)
		return kpx_dp_fail(&v->dp, r, "setting the IPVS sysctls: %s", err);
	if (p->strict_arp) {
		r = kpx_strict_arp_sysctls("", KPX_SYSCTL_TOLERANT, err, sizeof(err));
		if (r < 0)
			return kpx_dp_fail(&v->dp, r, "ipvs.strictARP: %s", err);
	}
	r = ipvs_set_timeouts(v);
	if (r)
		return r;
	if (!v->liberal_read) {
		/* once, as kube-proxy at start (after the conntrack sysctls) */
		v->drop_invalid = !kpx_ct_tcp_be_liberal("");
		v->liberal_read = true;
		kpx_info("ipvs", "%s", v->drop_invalid ?
			 "nf_conntrack_tcp_be_liberal is 0: forwarded packets conntrack marks INVALID are dropped (KPX-IPVS-FORWARD)" :
			 "nf_conntrack_tcp_be_liberal set, not installing DROP rules for INVALID packets");
	}
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	kpx_ipvs_ipset_create(f);
	fclose(f);
	r = ipvs_ipset_restore(v, text);
	free(text);
	if (r)
		return r;
	for (i = 0; i < 2; i++) {
		const char *rargv[] = { ipvs_iptables_cmd(fams[i], true), "-w", "--noflush", NULL };

		text = NULL;
		f = open_memstream(&text, &len);
		if (!f)
			return -ENOMEM;
		kpx_ipvs_iptables_rules(f, fams[i], &v->cfg, v->drop_invalid);
		fclose(f);
		r = kpx_ipvs_run(rargv, text, NULL, err, sizeof(err));
		free(text);
		if (r)
			return kpx_dp_fail(&v->dp, r, "%s", err);
		for (j = 0; j < kpx_ipvs_njumps; j++) {
			const struct kpx_ipvs_jump *jp = &kpx_ipvs_jumps[j];
			const char *cargv[] = { ipvs_iptables_cmd(fams[i], false), "-w", "-t", jp->table,
						"-C", jp->chain, "-j", jp->target, NULL };
			const char *iargv[] = { ipvs_iptables_cmd(fams[i], false), "-w", "-t", jp->table,
						"-I", jp->chain, "-j", jp->target, NULL };

			if (!kpx_ipvs_run(cargv, NULL, NULL, NULL, 0))
				continue;
			r = kpx_ipvs_run(iargv, NULL, NULL, err, sizeof(err));
			if (r)
				return kpx_dp_fail(&v->dp, r, "%s", err);
		}
	}
	v->rules_ok = true;
	return 0;
}


bool ipvs_backend_used(struct dp_ipvs *v, int family, uint8_t proto,
			 const struct kpx_backend *b)
{
	size_t i;

	for (i = 0; i < v->ncur; i++)
		if (v->cur[i].family == family && v->cur[i].protocol == proto &&
		    kpx_ipvs_find_backend(&v->cur[i], b))
			return true;
	return false;
}

/*
 * Keeps KPX-IPVS-IPS / KPX-IPVS6-IPS equal to kpx-ipvs0's addresses
 * (sorted @want: to be on it, sorted @on: on it now).  @adding: the
 * additions (before the addresses are added), else the deletions (after
 * they are removed).  The first time, both sets are flushed and refilled
 * from @want (a set left by an earlier run may hold anything).
 */
static int ips_update(struct dp_ipvs *v, const struct kpx_ipvs_ip *want, size_t nwant,
		      const struct kpx_ipvs_ip *on, size_t non, bool adding)
{
	char *text = NULL;
	size_t len, i;
	FILE *f;
	int r;

	if (!adding && !v->ips_synced) {
		v->ips_synced = true;	/* the additions were a full refill */
		return 0;
	}
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	if (adding && !v->ips_synced)
		kpx_ipvs_ips_flush(f);
	if (adding) {
		for (i = 0; i < nwant; i++)
			if (!v->ips_synced ||
			    !(non && bsearch(&want[i], on, non, sizeof(*on), kpx_ipvs_ip_cmp)))
				kpx_ipvs_ips_cmd(f, "add", want[i].family, &want[i].addr);
	} else {
		for (i = 0; i < non; i++)
			if (!(nwant && bsearch(&on[i], want, nwant, sizeof(*want), kpx_ipvs_ip_cmp)))
				kpx_ipvs_ips_cmd(f, "del", on[i].family, &on[i].addr);
	}
	fclose(f);
	r = ipvs_ipset_restore(v, text);
	free(text);
	return r;
}

/* Adds the VIPs of cur to kpx-ipvs0, removes the others from it. */
int ipvs_sync_addrs(struct dp_ipvs *v)
{
	struct kpx_ipvs_ip *want = NULL, *on = NULL, *other = NULL;
	size_t nwant = 0, non = 0, nother = 0, i;
	int r;

	if (v->ifindex <= 0 || kpx_ipvs_link_index(v->rt) != v->ifindex) {
		r = kpx_ipvs_link_ensure(v->rt);
		if (r < 0)
			return kpx_dp_fail(&v->dp, r, "creating %s: %s", KPX_IPVS_LINK, strerror(-r));
		v->ifindex = r;
	}
	r = kpx_ipvs_addrs(v->rt, v->ifindex, &on, &non, &other, &nother);
	if (r)
		return kpx_dp_fail(&v->dp, r, "listing addresses: %s", strerror(-r));
	want = calloc(v->ncur ? v->ncur : 1, sizeof(*want));
	if (!want) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < v->ncur; i++) {
		struct kpx_ipvs_ip ip = { .family = v->cur[i].family };

		memcpy(&ip.addr, &v->cur[i].addr, sizeof(ip.addr));
		if (!kpx_ipvs_serves(&v->cur[i]))
			continue;	/* adopted from an older agent: lo has it */
		/* the node's own address (NodePorts): not ours to hold */
		if (nother && bsearch(&ip, other, nother, sizeof(*other), kpx_ipvs_ip_cmp))
			continue;
		want[nwant++] = ip;
	}
	if (nwant)
		qsort(want, nwant, sizeof(*want), kpx_ipvs_ip_cmp);
	/* KPX-IPVS-IPS first: a new VIP never answers on a host port */
	r = ips_update(v, want, nwant, on, non, true);
	if (r)
		goto out;
	for (i = 0; i < nwant; i++) {
		if ((i && !kpx_ipvs_ip_cmp(&want[i - 1], &want[i])) ||
		    (non && bsearch(&want[i], on, non, sizeof(*on), kpx_ipvs_ip_cmp)))
			continue;
		r = kpx_ipvs_addr_add(v->rt, v->ifindex, &want[i]);
		if (r) {
			kpx_dp_fail(&v->dp, r, "adding a VIP to %s: %s", KPX_IPVS_LINK, strerror(-r));
			goto out;
		}
	}
	for (i = 0; i < non; i++) {
		if (nwant && bsearch(&on[i], want, nwant, sizeof(*want), kpx_ipvs_ip_cmp))
			continue;
		r = kpx_ipvs_addr_del(v->rt, v->ifindex, &on[i]);
		if (r) {
			kpx_dp_fail(&v->dp, r, "removing a VIP from %s: %s", KPX_IPVS_LINK, strerror(-r));
			goto out;
		}
	}
	r = ips_update(v, want, nwant, on, non, false);
out:
	if (r)
		v->ips_synced = false;	/* rewritten whole by the next commit */
	free(want);
	free(on);
	free(other);
	return r;
}

