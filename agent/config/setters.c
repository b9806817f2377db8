// SPDX-License-Identifier: GPL-2.0-only
/*
 * The setters of the settings table (settings.c) and the value parsers
 * they share: each checks one value as kube-proxy's validation does and
 * writes its field, or returns -EINVAL with the reason.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>

#include "base/cidr.h"
#include "base/duration.h"
#include "base/log.h"
#include "config/config.h"
#include "config/config_priv.h"

/* ---- value parsers: each returns 0 or -EINVAL with a reason ---------- */

/* Go's strconv.ParseBool plus YAML 1.1 yes/no/on/off. */
int cfg_parse_bool(const char *v, bool *out)
{
	static const char *const t[] = { "1", "t", "true", "yes", "y", "on" };
	static const char *const f[] = { "0", "f", "false", "no", "n", "off" };
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (!strcasecmp(v, t[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, f[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int cfg_parse_long(const char *v, long min, long max, long *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

/*
 * "IP:PORT", "[IPv6]:PORT" or a bare IP (then @defport) into @out,
 * normalized; port 0 means "disabled" and stores "".
 */
static int cfg_parse_bind(const char *v, int defport, char *out, size_t outlen)
{
	char host[INET6_ADDRSTRLEN + 2], *colon;
	unsigned char a[16];
	long port = defport;
	int fam;

	if (strlen(v) >= sizeof(host) + 6)
		return -EINVAL;
	if (v[0] == '[') {
		const char *rb = strchr(v, ']');

		if (!rb || (size_t)(rb - v - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, v + 1, rb - v - 1);
		host[rb - v - 1] = '\0';
		if (rb[1] && (rb[1] != ':' || cfg_parse_long(rb + 2, 0, 65535, &port)))
			return -EINVAL;
		fam = AF_INET6;
	} else if (strchr(v, ':') && strchr(v, ':') == strrchr(v, ':')) {
		colon = strchr(v, ':');
		if ((size_t)(colon - v) >= sizeof(host))
			return -EINVAL;
		memcpy(host, v, colon - v);
		host[colon - v] = '\0';
		if (cfg_parse_long(colon + 1, 0, 65535, &port))
			return -EINVAL;
		fam = AF_INET;
	} else {
		if (strlen(v) >= sizeof(host))
			return -EINVAL;
		strcpy(host, v);	/* bare address */
		fam = strchr(v, ':') ? AF_INET6 : AF_INET;
	}
	if (inet_pton(fam, host, a) != 1)
		return -EINVAL;
	if (!port)
		out[0] = '\0';
	else
		snprintf(out, outlen, fam == AF_INET6 ? "[%s]:%ld" : "%s:%ld", host, port);
	return 0;
}

static int cfg_set_dup(char **dst, const char *v)
{
	char *d = strdup(v);

	if (!d)
		return -ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

/* The field @s names in @c (struct setting's off). */
static void *cfg_field(struct kpx_config *c, const struct setting *s)
{
	return (char *)c + s->off;
}

/* A string field (char *), owned by @c. */
int cfg_set_str(struct kpx_config *c, const struct setting *s,
		   const char *v, bool from_file, char *err, size_t len)
{
	return cfg_set_dup(cfg_field(c, s), v);
}

int cfg_set_master(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	if (strncmp(v, "https://", 8) && strncmp(v, "http://", 7))
		return BAD(" (want an http:// or https:// URL)");
	return cfg_set_dup(&c->master, v);
}

int cfg_set_hostname(struct kpx_config *c, const struct setting *s,
			const char *v, bool from_file, char *err, size_t len)
{
	size_t n;
	char *p;

	while (isspace((unsigned char)*v))
		v++;
	n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n > KPX_NODE_NAME_MAX)
		return BAD(" (a Node name has at most 253 characters)");
	memcpy(c->hostname, v, n);
	c->hostname[n] = '\0';
	for (p = c->hostname; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	/* DNS-1123 subdomain: labels of [a-z0-9-], alphanumeric at both
	 * ends, joined by '.' */
	for (p = c->hostname; *p; p++) {
		bool edge = p == c->hostname || !p[1] || p[-1] == '.' || p[1] == '.';

		if (*p == '.' ? edge : !isalnum((unsigned char)*p) &&
		    (*p != '-' || edge))
			return BAD(" (not a Node name: a DNS-1123 subdomain)");
	}
	return 0;
}

int cfg_set_qps(struct kpx_config *c, const struct setting *s,
		   const char *v, bool from_file, char *err, size_t len)
{
	char *end;
	double q;

	errno = 0;
	q = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(q))
		return BAD("");
	c->kube_api_qps = q;	/* < 0: no limit, as client-go */
	return 0;
}

int cfg_set_burst(struct kpx_config *c, const struct setting *s,
		     const char *v, bool from_file, char *err, size_t len)
{
	long b;

	if (cfg_parse_long(v, 0, 1000000, &b))
		return BAD(" (want 0..1000000)");
	c->kube_api_burst = (int)b;
	return 0;
}

int cfg_set_content_type(struct kpx_config *c, const struct setting *s,
			    const char *v, bool from_file, char *err, size_t len)
{
	if (strcmp(v, "application/json") &&
	    strcmp(v, "application/vnd.kubernetes.protobuf"))
		return BAD(" (want application/json or application/vnd.kubernetes.protobuf)");
	if (strcmp(v, "application/json")) {
		kpx_info("config", "%s=%s: kpx-agent always speaks application/json",
			 cfg_name(s, from_file), v);
	}
	return 0;
}

static int cfg_set_period(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len,
		      int64_t *out, bool positive)
{
	int64_t ms;

	if (kpx_parse_duration(v, &ms) || (positive && ms <= 0))
		return BAD(positive ? " (want a duration > 0, e.g. 30s)" :
			   " (want a duration, e.g. 1s)");
	*out = ms;
	return 0;
}

/* A duration field in milliseconds (int64_t): any, or > 0. */
int cfg_set_ms(struct kpx_config *c, const struct setting *s,
		  const char *v, bool from_file, char *err, size_t len)
{
	return cfg_set_period(c, s, v, from_file, err, len, cfg_field(c, s), false);
}

int cfg_set_ms_positive(struct kpx_config *c, const struct setting *s,
			   const char *v, bool from_file, char *err, size_t len)
{
	return cfg_set_period(c, s, v, from_file, err, len, cfg_field(c, s), true);
}

/* iptables.*, nftables.*, ipvs.* periods: checked here, used by cfg_resolve_periods(). */
int cfg_set_mode_period(struct kpx_config *c, const struct setting *s,
			   const char *v, bool from_file, char *err, size_t len)
{
	int64_t ms;

	return cfg_set_period(c, s, v, from_file, err, len, &ms, strstr(s->field, ".syncPeriod") != NULL);
}

int cfg_set_req_timeout(struct kpx_config *c, const struct setting *s,
			   const char *v, bool from_file, char *err, size_t len)
{
	int r = cfg_set_period(c, s, v, from_file, err, len, &c->request_timeout_ms, true);

	return r ? r : c->request_timeout_ms < 1000 ? BAD(" (at least 1s)") : 0;
}

int cfg_set_stall(struct kpx_config *c, const struct setting *s,
		     const char *v, bool from_file, char *err, size_t len)
{
	int r = cfg_set_period(c, s, v, from_file, err, len, &c->watch_stall_ms, true);

	return r ? r : c->watch_stall_ms < 1000 ? BAD(" (at least 1s)") : 0;
}

int cfg_set_cluster_cidr(struct kpx_config *c, const struct setting *s,
			    const char *v, bool from_file, char *err, size_t len)
{
	char *dup = strdup(v), *tok, *save = NULL;
	struct kpx_cidr cidrs[2];
	int n = 0, r = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		if (n == 2 || kpx_cidr_parse(tok, &cidrs[n])) {
			r = BAD(" (want a CIDR, or an IPv4,IPv6 pair of CIDRs)");
			goto out;
		}
		n++;
	}
	if (n == 2 && cidrs[0].family == cidrs[1].family) {
		r = BAD(" (a pair must be one IPv4 and one IPv6 CIDR)");
		goto out;
	}
	memcpy(c->cluster_cidrs, cidrs, n * sizeof(cidrs[0]));
	c->n_cluster_cidrs = n;
out:
	free(dup);
	return r;
}

/* A comma-separated list of CIDRs into ipvs_exclude (ipvs.excludeCIDRs). */
int cfg_set_cidr_list(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	char *dup = strdup(v), *tok, *save = NULL;
	struct kpx_cidr cidrs[KPX_CONFIG_CIDRS_MAX];
	int n = 0, r = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			continue;
		if (n == KPX_CONFIG_CIDRS_MAX) {
			r = BAD(" (too many CIDRs)");
			goto out;
		}
		if (kpx_cidr_parse(tok, &cidrs[n])) {
			r = BAD(" (must be a valid CIDR)");
			goto out;
		}
		n++;
	}
	memcpy(c->ipvs_exclude, cidrs, n * sizeof(cidrs[0]));
	c->n_ipvs_exclude = n;
out:
	free(dup);
	return r;
}

int cfg_set_nodeport(struct kpx_config *c, const struct setting *s,
			const char *v, bool from_file, char *err, size_t len)
{
	char *dup = strdup(v), *tok, *save = NULL;
	struct kpx_cidr cidrs[KPX_CONFIG_CIDRS_MAX];
	bool primary = false;
	int n = 0, r = 0;
	const char *add[2];
	int i, nadd;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		nadd = 0;
		if (!strcmp(tok, "primary")) {
			primary = true;
		} else if (!strcmp(tok, "all")) {
			add[nadd++] = "0.0.0.0/0";
			add[nadd++] = "::/0";
		} else if (!strcmp(tok, "localhost")) {
			add[nadd++] = "127.0.0.0/8";
			add[nadd++] = "::1/128";
		} else {
			add[nadd++] = tok;
		}
		for (i = 0; i < nadd; i++) {
			if (n == KPX_CONFIG_CIDRS_MAX || kpx_cidr_parse(add[i], &cidrs[n])) {
				r = BAD(" (want CIDRs and/or primary, all, localhost)");
				goto out;
			}
			n++;
		}
	}
	memcpy(c->nodeport_cidrs, cidrs, n * sizeof(cidrs[0]));
	c->n_nodeport_cidrs = n;
	c->nodeport_primary = primary || n == 0;
out:
	free(dup);
	return r;
}

int cfg_set_detect_local(struct kpx_config *c, const struct setting *s,
			    const char *v, bool from_file, char *err, size_t len)
{
	static const struct {
		const char *name;
		enum kpx_detect_local mode;
	} modes[] = {
		{ "ClusterCIDR", KPX_DETECT_LOCAL_CLUSTER_CIDR },
		{ "NodeCIDR", KPX_DETECT_LOCAL_NODE_CIDR },
		{ "BridgeInterface", KPX_DETECT_LOCAL_BRIDGE },
		{ "InterfaceNamePrefix", KPX_DETECT_LOCAL_IFPREFIX },
	};
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(v, modes[i].name)) {
			c->detect_local = modes[i].mode;
			return 0;
		}
	}
	return BAD(" (want ClusterCIDR, NodeCIDR, BridgeInterface or InterfaceNamePrefix)");
}

/* An interface name field (char[IF_NAMESIZE]). */
int cfg_set_ifname(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	char *out = cfg_field(c, s);

	if (strlen(v) >= IF_NAMESIZE || strchr(v, '/') || strchr(v, ' '))
		return BAD(" (not an interface name)");
	strcpy(out, v);
	return 0;
}

int cfg_set_scheduler(struct kpx_config *c, const struct setting *s,
			 const char *v, bool from_file, char *err, size_t len)
{
	static const char *const names[] = { "random", "rr", "wrr", "lc", "sh", "mh" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(v, names[i])) {
			strcpy(c->scheduler, v);
			return 0;
		}
	}
	return BAD(" (want random, rr, wrr, lc, sh or mh)");
}

/* True when the bind address @v names no port ("IP" or "[IPv6]"). */
static bool bind_is_bare(const char *v)
{
	if (v[0] == '[')
		return !strstr(v, "]:");
	return !strchr(v, ':') || strchr(v, ':') != strrchr(v, ':');
}

int cfg_set_healthz(struct kpx_config *c, const struct setting *s,
		       const char *v, bool from_file, char *err, size_t len)
{
	c->healthz_bind_bare = *v && bind_is_bare(v);
	if (!*v) {	/* a flag set to "": disabled */
		c->healthz_bind[0] = '\0';
		return 0;
	}
	if (cfg_parse_bind(v, HEALTHZ_PORT, c->healthz_bind, sizeof(c->healthz_bind)))
		return BAD(" (want IP:PORT, e.g. 0.0.0.0:10256)");
	return 0;
}

int cfg_set_metrics(struct kpx_config *c, const struct setting *s,
		       const char *v, bool from_file, char *err, size_t len)
{
	c->metrics_bind_bare = *v && bind_is_bare(v);
	if (!*v) {
		c->metrics_bind[0] = '\0';
		return 0;
	}
	if (cfg_parse_bind(v, METRICS_PORT, c->metrics_bind, sizeof(c->metrics_bind)))
		return BAD(" (want IP:PORT, e.g. 127.0.0.1:10249)");
	return 0;
}

int cfg_set_mode(struct kpx_config *c, const struct setting *s,
		    const char *v, bool from_file, char *err, size_t len)
{
	static const char *const modes[] = { "", "kpx", "nftables", "iptables", "ipvs" };
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(v, modes[i])) {
			strcpy(c->proxy_mode, v);
			return 0;
		}
	if (!strcmp(v, "kernelspace"))
		return cfg_fail(err, len, "%s: proxy mode \"kernelspace\" is Windows-only",
			    cfg_name(s, from_file));
	return BAD(" (unknown proxy mode; want \"\", kpx, nftables, iptables or ipvs)");
}

/* --conntrack-max-per-core, --conntrack-min: 0..2^31-1 (kube-proxy's int32). */
int cfg_set_ct_count(struct kpx_config *c, const struct setting *s,
			const char *v, bool from_file, char *err, size_t len)
{
	long *out = cfg_field(c, s);

	if (cfg_parse_long(v, -2147483648L, 2147483647L, out))
		return BAD(" (want an integer)");
	if (*out < 0)
		return BAD(" (must be greater than or equal to 0)");
	return 0;
}

/* A conntrack timeout: a duration >= 0, kept in whole seconds (0 = leave as is). */
int cfg_set_ct_timeout(struct kpx_config *c, const struct setting *s,
			  const char *v, bool from_file, char *err, size_t len)
{
	long *out = cfg_field(c, s);
	int64_t ms;

	if (kpx_parse_duration(v, &ms) || ms < 0 || ms / 1000 > 2147483647L)
		return BAD(" (want a duration >= 0, e.g. 24h0m0s)");
	*out = (long)(ms / 1000);
	return 0;
}

int cfg_set_verbosity(struct kpx_config *c, const struct setting *s,
			 const char *v, bool from_file, char *err, size_t len)
{
	long x;

	if (cfg_parse_long(v, 0, 10, &x))
		return BAD(" (want a level 0..10)");
	c->verbosity = (int)x;
	return 0;
}

/*
 * --logging-format / logging.format: component-base's "text" (klog) or
 * "json"; applied at once, so that what the rest of the parse logs is
 * already in the format asked for.
 */
int cfg_set_log_format(struct kpx_config *c, const struct setting *s,
		       const char *v, bool from_file, char *err, size_t len)
{
	enum kpx_log_format f;

	if (kpx_log_parse_format(v, &f))
		return BAD(" (want text or json)");
	c->log_json = f == KPX_LOG_JSON;
	kpx_log_set_format(f);
	return 0;
}

/* A boolean field (bool). */
int cfg_set_bool(struct kpx_config *c, const struct setting *s,
		    const char *v, bool from_file, char *err, size_t len)
{
	bool *out = cfg_field(c, s);

	if (cfg_parse_bool(v, out))
		return BAD(" (want true or false)");
	return 0;
}

/* A boolean stored negated (a field whose zero is kube-proxy's default true). */
int cfg_set_bool_not(struct kpx_config *c, const struct setting *s,
		     const char *v, bool from_file, char *err, size_t len)
{
	bool *out = cfg_field(c, s);

	if (cfg_parse_bool(v, out))
		return BAD(" (want true or false)");
	*out = !*out;
	return 0;
}

int cfg_set_write_config(struct kpx_config *c, const struct setting *s,
			    const char *v, bool from_file, char *err, size_t len)
{
	if (!*v)
		return BAD(" (want a file name)");
	return cfg_set_dup(&c->write_config_to, v);
}

/* --healthz-port, --metrics-port: checked here, applied by kpx_config_parse(). */
int cfg_set_port(struct kpx_config *c, const struct setting *s,
		    const char *v, bool from_file, char *err, size_t len)
{
	long port;

	if (cfg_parse_long(v, 0, 65535, &port))
		return BAD(" (want a port 0..65535, 0 disables the server)");
	return 0;
}

int cfg_set_oom(struct kpx_config *c, const struct setting *s,
		   const char *v, bool from_file, char *err, size_t len)
{
	long x;

	if (cfg_parse_long(v, -1000, 1000, &x))
		return BAD(" (must be within the range [-1000, 1000])");
	c->oom_score_adj = (int)x;
	return 0;
}

/* iptables.masqueradeBit, nftables.masqueradeBit: kube-proxy's validation. */
int cfg_set_masq_bit(struct kpx_config *c, const struct setting *s,
		     const char *v, bool from_file, char *err, size_t len)
{
	int *out = cfg_field(c, s);
	long x;

	if (cfg_parse_long(v, 0, 31, &x))
		return BAD(" (must be within the range [0, 31])");
	*out = (int)x;
	return 0;
}

/* ipvs.scheduler: IPVS's scheduler names, as kube-proxy's validation. */
int cfg_set_ipvs_scheduler(struct kpx_config *c, const struct setting *s,
			      const char *v, bool from_file, char *err, size_t len)
{
	static const char *const names[] = {
		"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "sh", "dh", "sed", "nq", "mh",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i]))
			return 0;
	return BAD(" (not an IPVS scheduler: rr, wrr, lc, wlc, lblc, lblcr, sh, dh, sed, nq, mh)");
}

