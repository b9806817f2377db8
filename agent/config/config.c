// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx-agent's configuration: kube-proxy's flags and the
 * KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) file, read with
 * the libyaml document API.  One table (settings[]) names every flag and
 * field kube-proxy has, with the setter kpx uses, or none when kpx has no
 * use for it (then a non-zero value is logged once and ignored).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <arpa/inet.h>
#include <yaml.h>
#include <json-c/json.h>
#include <linux/kpx.h>

#include "config/config.h"
#include "base/duration.h"
#include "base/log.h"

#define HEALTHZ_PORT	10256
#define METRICS_PORT	10249
#define API_VERSION	"kubeproxy.config.k8s.io/v1alpha1"
#define KIND		"KubeProxyConfiguration"

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void kpx_config_defaults(struct kpx_config *c)
{
	memset(c, 0, sizeof(*c));
	c->kube_api_qps = 5;
	c->kube_api_burst = 10;
	c->min_sync_ms = 1000;
	c->sync_ms = 30000;
	c->detect_local = KPX_DETECT_LOCAL_CLUSTER_CIDR;
	c->nodeport_primary = true;
	strcpy(c->scheduler, "random");
	snprintf(c->healthz_bind, sizeof(c->healthz_bind), "0.0.0.0:%d", HEALTHZ_PORT);
	snprintf(c->metrics_bind, sizeof(c->metrics_bind), "127.0.0.1:%d", METRICS_PORT);
	c->health_timeout_ms = 2 * c->sync_ms;
	c->request_timeout_ms = 60000;
	c->watch_stall_ms = 150000;
	c->oom_score_adj = -999;	/* kube-proxy's qos.KubeProxyOOMScoreAdj */
	kpx_ct_settings_defaults(&c->conntrack);
}

static size_t nsettings(void);

void kpx_config_free(struct kpx_config *c)
{
	free(c->kubeconfig);
	free(c->master);
	free(c->config_file);
	free(c->write_config_to);
	if (c->values) {
		for (size_t i = 0; i < nsettings(); i++)
			free(c->values[i]);
		free(c->values);
	}
	c->kubeconfig = c->master = c->config_file = c->write_config_to = NULL;
	c->values = NULL;
}

/* ---- value parsers: each returns 0 or -EINVAL with a reason ---------- */

/* Go's strconv.ParseBool plus YAML 1.1 yes/no/on/off. */
static int parse_bool(const char *v, bool *out)
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

static int parse_long(const char *v, long min, long max, long *out)
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
static int parse_bind(const char *v, int defport, char *out, size_t outlen)
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
		if (rb[1] && (rb[1] != ':' || parse_long(rb + 2, 0, 65535, &port)))
			return -EINVAL;
		fam = AF_INET6;
	} else if (strchr(v, ':') && strchr(v, ':') == strrchr(v, ':')) {
		colon = strchr(v, ':');
		if ((size_t)(colon - v) >= sizeof(host))
			return -EINVAL;
		memcpy(host, v, colon - v);
		host[colon - v] = '\0';
		if (parse_long(colon + 1, 0, 65535, &port))
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

/* ---- the settings table ------------------------------------------- */

_Static_assert(KPX_CONFIG_CIDRS_MAX == KPX_CIDRS_MAX,
	       "a configured prefix list must fit the module's");

enum vtype {
	V_STR, V_BOOL, V_INT, V_FLOAT, V_DUR,
	V_LIST,		/* comma-separated flag; YAML sequence of strings */
	V_MAP,		/* featureGates: "k=v,..." flag; YAML map of booleans */
	V_ANY,		/* logging.options etc.: any YAML */
	V_IP,		/* an IP address; 0.0.0.0 and :: are its zero */
};

struct setting;
typedef int (*setter)(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len);

struct setting {
	const char *flag;	/* kube-proxy flag without "--", or NULL */
	const char *field;	/* path in the config file, or NULL */
	enum vtype type;
	setter set;		/* NULL: kpx does not use it */
	bool always;		/* flag applies even with --config */
	bool own;		/* kpx's own flag, not kube-proxy's */
	const char *deprecated;	/* kube-proxy's deprecation notice, or NULL */
};

#define BAD(what) bad(err, len, s, from_file, v, what)

static const char *name(const struct setting *s, bool from_file);

/*
 * An invalid value: "--flag: invalid value "v" (why)" for a flag; for a
 * file field the shape of kube-proxy's validation errors,
 * "path: Invalid value: v: why" (strings quoted, numbers not).
 */
static int bad(char *err, size_t len, const struct setting *s, bool from_file,
	       const char *v, const char *what)
{
	size_t n;

	if (!from_file || !s->field)
		return fail(err, len, "%s: invalid value \"%.128s\"%s", name(s, from_file), v, what);
	while (*what == ' ' || *what == '(')
		what++;
	n = strlen(what);
	if (n && what[n - 1] == ')')
		n--;
	return fail(err, len, s->type == V_INT || s->type == V_FLOAT || s->type == V_BOOL ?
		    "%s: Invalid value: %.128s%s%.*s" : "%s: Invalid value: \"%.128s\"%s%.*s",
		    s->field, v, n ? ": " : "", (int)n, what);
}

static const char *name(const struct setting *s, bool from_file)
{
	static char buf[96];

	if (from_file || !s->flag)
		return s->field;
	snprintf(buf, sizeof(buf), "--%s", s->flag);
	return buf;
}

static int set_dup(char **dst, const char *v)
{
	char *d = strdup(v);

	if (!d)
		return -ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

static int set_kubeconfig(struct kpx_config *c, const struct setting *s,
			  const char *v, bool from_file, char *err, size_t len)
{
	return set_dup(&c->kubeconfig, v);
}

static int set_master(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	if (strncmp(v, "https://", 8) && strncmp(v, "http://", 7))
		return BAD(" (want an http:// or https:// URL)");
	return set_dup(&c->master, v);
}

static int set_config(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	return set_dup(&c->config_file, v);
}

static int set_hostname(struct kpx_config *c, const struct setting *s,
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

static int set_qps(struct kpx_config *c, const struct setting *s,
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

static int set_burst(struct kpx_config *c, const struct setting *s,
		     const char *v, bool from_file, char *err, size_t len)
{
	long b;

	if (parse_long(v, 0, 1000000, &b))
		return BAD(" (want 0..1000000)");
	c->kube_api_burst = (int)b;
	return 0;
}

static int set_content_type(struct kpx_config *c, const struct setting *s,
			    const char *v, bool from_file, char *err, size_t len)
{
	if (strcmp(v, "application/json") &&
	    strcmp(v, "application/vnd.kubernetes.protobuf"))
		return BAD(" (want application/json or application/vnd.kubernetes.protobuf)");
	if (strcmp(v, "application/json")) {
		kpx_info("config", "%s=%s: kpx-agent always speaks application/json",
			 name(s, from_file), v);
	}
	return 0;
}

static int set_period(struct kpx_config *c, const struct setting *s,
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

static int set_sync(struct kpx_config *c, const struct setting *s,
		    const char *v, bool from_file, char *err, size_t len)
{
	return set_period(c, s, v, from_file, err, len, &c->sync_ms, true);
}

static int set_min_sync(struct kpx_config *c, const struct setting *s,
			const char *v, bool from_file, char *err, size_t len)
{
	return set_period(c, s, v, from_file, err, len, &c->min_sync_ms, false);
}

/* iptables.*, nftables.*, ipvs.* periods: checked here, used by resolve_periods(). */
static int set_mode_period(struct kpx_config *c, const struct setting *s,
			   const char *v, bool from_file, char *err, size_t len)
{
	int64_t ms;

	return set_period(c, s, v, from_file, err, len, &ms, strstr(s->field, ".syncPeriod") != NULL);
}

static int set_req_timeout(struct kpx_config *c, const struct setting *s,
			   const char *v, bool from_file, char *err, size_t len)
{
	int r = set_period(c, s, v, from_file, err, len, &c->request_timeout_ms, true);

	return r ? r : c->request_timeout_ms < 1000 ? BAD(" (at least 1s)") : 0;
}

static int set_stall(struct kpx_config *c, const struct setting *s,
		     const char *v, bool from_file, char *err, size_t len)
{
	int r = set_period(c, s, v, from_file, err, len, &c->watch_stall_ms, true);

	return r ? r : c->watch_stall_ms < 1000 ? BAD(" (at least 1s)") : 0;
}

static int set_cluster_cidr(struct kpx_config *c, const struct setting *s,
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

static int set_nodeport(struct kpx_config *c, const struct setting *s,
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

static int set_detect_local(struct kpx_config *c, const struct setting *s,
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

static int set_ifname(const struct setting *s, const char *v, bool from_file,
		      char *err, size_t len, char *out)
{
	if (strlen(v) >= IF_NAMESIZE || strchr(v, '/') || strchr(v, ' '))
		return BAD(" (not an interface name)");
	strcpy(out, v);
	return 0;
}

static int set_bridge(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	return set_ifname(s, v, from_file, err, len, c->pod_bridge_interface);
}

static int set_ifprefix(struct kpx_config *c, const struct setting *s,
			const char *v, bool from_file, char *err, size_t len)
{
	return set_ifname(s, v, from_file, err, len, c->pod_interface_prefix);
}

static int set_masq_all(struct kpx_config *c, const struct setting *s,
			const char *v, bool from_file, char *err, size_t len)
{
	if (parse_bool(v, &c->masquerade_all))
		return BAD(" (want true or false)");
	return 0;
}

static int set_scheduler(struct kpx_config *c, const struct setting *s,
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

static int set_healthz(struct kpx_config *c, const struct setting *s,
		       const char *v, bool from_file, char *err, size_t len)
{
	c->healthz_bind_bare = *v && bind_is_bare(v);
	if (!*v) {	/* a flag set to "": disabled */
		c->healthz_bind[0] = '\0';
		return 0;
	}
	if (parse_bind(v, HEALTHZ_PORT, c->healthz_bind, sizeof(c->healthz_bind)))
		return BAD(" (want IP:PORT, e.g. 0.0.0.0:10256)");
	return 0;
}

static int set_metrics(struct kpx_config *c, const struct setting *s,
		       const char *v, bool from_file, char *err, size_t len)
{
	c->metrics_bind_bare = *v && bind_is_bare(v);
	if (!*v) {
		c->metrics_bind[0] = '\0';
		return 0;
	}
	if (parse_bind(v, METRICS_PORT, c->metrics_bind, sizeof(c->metrics_bind)))
		return BAD(" (want IP:PORT, e.g. 127.0.0.1:10249)");
	return 0;
}

static int set_mode(struct kpx_config *c, const struct setting *s,
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
		return fail(err, len, "%s: proxy mode \"kernelspace\" is Windows-only",
			    name(s, from_file));
	return BAD(" (unknown proxy mode; want \"\", kpx, nftables, iptables or ipvs)");
}

/* --conntrack-max-per-core, --conntrack-min: 0..2^31-1 (kube-proxy's int32). */
static int set_ct_count(const struct setting *s, const char *v, bool from_file,
			char *err, size_t len, long *out)
{
	if (parse_long(v, -2147483648L, 2147483647L, out))
		return BAD(" (want an integer)");
	if (*out < 0)
		return BAD(" (must be greater than or equal to 0)");
	return 0;
}

static int set_ct_max_per_core(struct kpx_config *c, const struct setting *s,
			       const char *v, bool from_file, char *err, size_t len)
{
	return set_ct_count(s, v, from_file, err, len, &c->conntrack.max_per_core);
}

static int set_ct_min(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	return set_ct_count(s, v, from_file, err, len, &c->conntrack.min);
}

/* A conntrack timeout: a duration >= 0, kept in whole seconds (0 = leave as is). */
static int set_ct_timeout(const struct setting *s, const char *v, bool from_file,
			  char *err, size_t len, long *out)
{
	int64_t ms;

	if (kpx_parse_duration(v, &ms) || ms < 0 || ms / 1000 > 2147483647L)
		return BAD(" (want a duration >= 0, e.g. 24h0m0s)");
	*out = (long)(ms / 1000);
	return 0;
}

static int set_ct_tcp_established(struct kpx_config *c, const struct setting *s,
				  const char *v, bool from_file, char *err, size_t len)
{
	return set_ct_timeout(s, v, from_file, err, len, &c->conntrack.tcp_established_s);
}

static int set_ct_tcp_close_wait(struct kpx_config *c, const struct setting *s,
				 const char *v, bool from_file, char *err, size_t len)
{
	return set_ct_timeout(s, v, from_file, err, len, &c->conntrack.tcp_close_wait_s);
}

static int set_ct_udp(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len)
{
	return set_ct_timeout(s, v, from_file, err, len, &c->conntrack.udp_s);
}

static int set_ct_udp_stream(struct kpx_config *c, const struct setting *s,
			     const char *v, bool from_file, char *err, size_t len)
{
	return set_ct_timeout(s, v, from_file, err, len, &c->conntrack.udp_stream_s);
}

static int set_ct_be_liberal(struct kpx_config *c, const struct setting *s,
			     const char *v, bool from_file, char *err, size_t len)
{
	if (parse_bool(v, &c->conntrack.tcp_be_liberal))
		return BAD(" (want true or false)");
	return 0;
}

static int set_verbosity(struct kpx_config *c, const struct setting *s,
			 const char *v, bool from_file, char *err, size_t len)
{
	long x;

	if (parse_long(v, 0, 10, &x))
		return BAD(" (want a level 0..10)");
	c->verbosity = (int)x;
	return 0;
}

static int set_bool_field(const struct setting *s, const char *v, bool from_file,
			  char *err, size_t len, bool *out)
{
	if (parse_bool(v, out))
		return BAD(" (want true or false)");
	return 0;
}

static int set_cleanup(struct kpx_config *c, const struct setting *s,
		       const char *v, bool from_file, char *err, size_t len)
{
	return set_bool_field(s, v, from_file, err, len, &c->cleanup);
}

static int set_once(struct kpx_config *c, const struct setting *s,
		    const char *v, bool from_file, char *err, size_t len)
{
	return set_bool_field(s, v, from_file, err, len, &c->once);
}

static int set_dry_run(struct kpx_config *c, const struct setting *s,
		       const char *v, bool from_file, char *err, size_t len)
{
	return set_bool_field(s, v, from_file, err, len, &c->dry_run);
}

static int set_metrics_per_backend(struct kpx_config *c, const struct setting *s,
				   const char *v, bool from_file, char *err, size_t len)
{
	return set_bool_field(s, v, from_file, err, len, &c->metrics_per_backend);
}

static int set_write_config(struct kpx_config *c, const struct setting *s,
			    const char *v, bool from_file, char *err, size_t len)
{
	if (!*v)
		return BAD(" (want a file name)");
	return set_dup(&c->write_config_to, v);
}

/* --healthz-port, --metrics-port: checked here, applied by kpx_config_parse(). */
static int set_port(struct kpx_config *c, const struct setting *s,
		    const char *v, bool from_file, char *err, size_t len)
{
	long port;

	if (parse_long(v, 0, 65535, &port))
		return BAD(" (want a port 0..65535, 0 disables the server)");
	return 0;
}

static int set_oom(struct kpx_config *c, const struct setting *s,
		   const char *v, bool from_file, char *err, size_t len)
{
	long x;

	if (parse_long(v, -1000, 1000, &x))
		return BAD(" (must be within the range [-1000, 1000])");
	c->oom_score_adj = (int)x;
	return 0;
}

/* ipvs.scheduler: IPVS's scheduler names, as kube-proxy's validation. */
static int set_ipvs_scheduler(struct kpx_config *c, const struct setting *s,
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

static int set_init_only(struct kpx_config *c, const struct setting *s,
			 const char *v, bool from_file, char *err, size_t len)
{
	return set_bool_field(s, v, from_file, err, len, &c->init_only);
}

/* own and deprecated are set by name where they apply; the rest are zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct setting settings[] = {
	/* flags without a field: always apply */
	{ "config", NULL, V_STR, set_config, true },
	{ "write-config-to", NULL, V_STR, set_write_config, true },
	{ "healthz-port", NULL, V_INT, set_port, true, .deprecated =
	  "This flag is deprecated and will be removed in a future release. Please use --healthz-bind-address instead." },
	{ "metrics-port", NULL, V_INT, set_port, true, .deprecated =
	  "This flag is deprecated and will be removed in a future release. Please use --metrics-bind-address instead." },
	{ "master", NULL, V_STR, set_master, true },
	{ "cleanup", NULL, V_BOOL, set_cleanup, true },
	{ "init-only", NULL, V_BOOL, set_init_only, true },
	{ "once", NULL, V_BOOL, set_once, true, .own = true },
	{ "dry-run", NULL, V_BOOL, set_dry_run, true, .own = true },
	{ "scheduler", NULL, V_STR, set_scheduler, true, .own = true },
	{ "kube-api-timeout", NULL, V_DUR, set_req_timeout, true, .own = true },
	{ "watch-stall-timeout", NULL, V_DUR, set_stall, true, .own = true },
	{ "metrics-per-backend", NULL, V_BOOL, set_metrics_per_backend, true, .own = true },
	{ "min-sync-period", NULL, V_DUR, set_min_sync, false, .own = true },
	{ "sync-period", NULL, V_DUR, set_sync, false, .own = true },
	{ "v", "logging.verbosity", V_INT, set_verbosity, true },
	{ "hostname-override", "hostnameOverride", V_STR, set_hostname, true },
	{ "boot-id-file", NULL, V_STR, NULL, true },
	{ "machine-id-file", NULL, V_STR, NULL, true },
	{ "log-text-split-stream", NULL, V_BOOL, NULL, true },
	{ "log-text-info-buffer-size", NULL, V_STR, NULL, true },
	{ "log-json-split-stream", NULL, V_BOOL, NULL, true },
	{ "log-json-info-buffer-size", NULL, V_STR, NULL, true },
	{ "vmodule", "logging.vmodule", V_ANY, NULL, true },
	{ "log-flush-frequency", "logging.flushFrequency", V_ANY, NULL, true },
	{ "logging-format", "logging.format", V_STR, NULL, true },
	{ NULL, "logging.options", V_ANY, NULL, false },

	/* flags and fields */
	{ "kubeconfig", "clientConnection.kubeconfig", V_STR, set_kubeconfig, false },
	{ "kube-api-qps", "clientConnection.qps", V_FLOAT, set_qps, false },
	{ "kube-api-burst", "clientConnection.burst", V_INT, set_burst, false },
	{ "kube-api-content-type", "clientConnection.contentType", V_STR, set_content_type, false },
	{ NULL, "clientConnection.acceptContentTypes", V_STR, set_content_type, false },
	{ "healthz-bind-address", "healthzBindAddress", V_STR, set_healthz, false },
	{ "metrics-bind-address", "metricsBindAddress", V_STR, set_metrics, false },
	{ "proxy-mode", "mode", V_STR, set_mode, false },
	{ "cluster-cidr", "clusterCIDR", V_STR, set_cluster_cidr, false },
	{ "detect-local-mode", "detectLocalMode", V_STR, set_detect_local, false },
	{ "pod-bridge-interface", "detectLocal.bridgeInterface", V_STR, set_bridge, false },
	{ "pod-interface-name-prefix", "detectLocal.interfaceNamePrefix", V_STR, set_ifprefix, false },
	{ "masquerade-all", "iptables.masqueradeAll", V_BOOL, set_masq_all, false },
	{ NULL, "nftables.masqueradeAll", V_BOOL, set_masq_all, false },
	{ "nodeport-addresses", "nodePortAddresses", V_LIST, set_nodeport, false },
	{ "iptables-sync-period", "iptables.syncPeriod", V_DUR, set_mode_period, false },
	{ "iptables-min-sync-period", "iptables.minSyncPeriod", V_DUR, set_mode_period, false },
	{ "conntrack-max-per-core", "conntrack.maxPerCore", V_INT, set_ct_max_per_core, false },
	{ "conntrack-min", "conntrack.min", V_INT, set_ct_min, false },
	{ "conntrack-tcp-timeout-established", "conntrack.tcpEstablishedTimeout", V_DUR,
	  set_ct_tcp_established, false },
	{ "conntrack-tcp-timeout-close-wait", "conntrack.tcpCloseWaitTimeout", V_DUR,
	  set_ct_tcp_close_wait, false },
	{ "conntrack-tcp-be-liberal", "conntrack.tcpBeLiberal", V_BOOL, set_ct_be_liberal, false },
	{ "conntrack-udp-timeout", "conntrack.udpTimeout", V_DUR, set_ct_udp, false },
	{ "conntrack-udp-timeout-stream", "conntrack.udpStreamTimeout", V_DUR, set_ct_udp_stream, false },

	/* kube-proxy settings kpx has no use for */
	{ "feature-gates", "featureGates", V_MAP, NULL, false },
	/*
	 * kube-proxy takes a specific --bind-address as the node's primary IP
	 * of its family (cmd/kube-proxy/app/server.go detectNodeIPs()); kpx
	 * takes the node's addresses from its Node object only, so a specific
	 * address is reported as ignored; 0.0.0.0 and :: (the default) are not.
	 */
	{ "bind-address", "bindAddress", V_IP, NULL, false },
	{ "bind-address-hard-fail", "bindAddressHardFail", V_BOOL, NULL, false },
	{ "profiling", "enableProfiling", V_BOOL, NULL, false },
	{ "show-hidden-metrics-for-version", "showHiddenMetricsForVersion", V_STR, NULL, false },
	{ "oom-score-adj", "oomScoreAdj", V_INT, set_oom, false },
	{ "config-sync-period", "configSyncPeriod", V_DUR, NULL, false },
	{ "proxy-port-range", "portRange", V_STR, NULL, false },
	{ NULL, "windowsRunAsService", V_BOOL, NULL, false },
	{ "iptables-masquerade-bit", "iptables.masqueradeBit", V_INT, NULL, false },
	{ "iptables-localhost-nodeports", "iptables.localhostNodePorts", V_BOOL, NULL, false },
	{ NULL, "iptables.snatNodeInternalIP", V_BOOL, NULL, false },
	{ NULL, "nftables.masqueradeBit", V_INT, NULL, false },
	{ NULL, "nftables.syncPeriod", V_DUR, set_mode_period, false },
	{ NULL, "nftables.minSyncPeriod", V_DUR, set_mode_period, false },
	{ "ipvs-sync-period", "ipvs.syncPeriod", V_DUR, set_mode_period, false },
	{ "ipvs-min-sync-period", "ipvs.minSyncPeriod", V_DUR, set_mode_period, false },
	{ "ipvs-scheduler", "ipvs.scheduler", V_STR, set_ipvs_scheduler, false },
	{ "ipvs-exclude-cidrs", "ipvs.excludeCIDRs", V_LIST, NULL, false },
	{ "ipvs-strict-arp", "ipvs.strictARP", V_BOOL, NULL, false },
	{ "ipvs-tcp-timeout", "ipvs.tcpTimeout", V_DUR, NULL, false },
	{ "ipvs-tcpfin-timeout", "ipvs.tcpFinTimeout", V_DUR, NULL, false },
	{ "ipvs-udp-timeout", "ipvs.udpTimeout", V_DUR, NULL, false },
	{ NULL, "winkernel.networkName", V_STR, NULL, false },
	{ NULL, "winkernel.sourceVip", V_STR, NULL, false },
	{ NULL, "winkernel.enableDSR", V_BOOL, NULL, false },
	{ NULL, "winkernel.rootHnsEndpointName", V_STR, NULL, false },
	{ NULL, "winkernel.forwardHealthCheckVip", V_BOOL, NULL, false },
};
#pragma GCC diagnostic pop

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

static size_t nsettings(void)
{
	return NSETTINGS;
}

static const char *given_value(const struct kpx_config *c, const char *flag);

/* Records @v as the value @s was given, for kpx_config_write(). */
static int remember(struct kpx_config *c, const struct setting *s, const char *v)
{
	char *d;

	if (!c->values) {
		c->values = calloc(NSETTINGS, sizeof(*c->values));
		if (!c->values)
			return -ENOMEM;
	}
	d = strdup(v);
	if (!d)
		return -ENOMEM;
	free(c->values[s - settings]);
	c->values[s - settings] = d;
	return 0;
}

/* Sections of the file whose members are in settings[]. */
static const char *const sections[] = {
	"clientConnection", "logging", "iptables", "ipvs", "nftables",
	"winkernel", "detectLocal", "conntrack",
};

/*
 * 0 when @v is an IPv4 or IPv6 address (then *unspec, if not NULL: it is
 * 0.0.0.0 or ::), else -EINVAL.
 */
static int parse_ip(const char *v, bool *unspec)
{
	static const unsigned char zero[16];
	unsigned char a[16] = { 0 };

	if (inet_pton(AF_INET, v, a) != 1 && inet_pton(AF_INET6, v, a) != 1)
		return -EINVAL;
	if (unspec)
		*unspec = !memcmp(a, zero, sizeof(a));
	return 0;
}

static bool is_zero(const struct setting *s, const char *v);

/* Checks @v's syntax for a setting kpx ignores, so typos still fail. */
static int check_ignored(const struct setting *s, const char *v, bool from_file,
			 char *err, size_t len)
{
	int64_t ms;
	bool b;
	long x;

	switch (s->type) {
	case V_BOOL:
		return parse_bool(v, &b) ? BAD(" (want true or false)") : 0;
	case V_INT:
		return parse_long(v, -2147483648L, 2147483647L, &x) ? BAD(" (want an integer)") : 0;
	case V_DUR:
		return kpx_parse_duration(v, &ms) ? BAD(" (want a duration)") : 0;
	case V_IP:
		return parse_ip(v, NULL) ? BAD(" (want an IP address)") : 0;
	default:
		return 0;
	}
}

static int apply(struct kpx_config *c, const struct setting *s, const char *v,
		 bool from_file, char *err, size_t len)
{
	int r;

	if (remember(c, s, v))
		return fail(err, len, "out of memory");
	if (s->set) {
		r = s->set(c, s, v, from_file, err, len);
		if (r == -ENOMEM)
			return fail(err, len, "out of memory");
		return r;
	}
	r = check_ignored(s, v, from_file, err, len);
	if (r)
		return r;
	if (s->type == V_IP && is_zero(s, v))
		return 0;	/* the default, given explicitly */
	c->n_ignored++;
	kpx_logkv(KPX_LOG_WARN, "config", "setting not used by kpx-agent, ignored",
		  "setting", name(s, from_file), "value", v, NULL);
	return 0;
}

/* ---- YAML -------------------------------------------------------------- */

struct yctx {
	struct kpx_config *c;
	yaml_document_t *doc;
	char *err;
	size_t len;
	char errs[2048];	/* every field error, ", "-joined */
	unsigned int nerrs;
	char unknown[1024];	/* unknown fields, as strict decoding lists them */
	unsigned int nunknown;
};

/* Appends @msg to @buf (of @size), ", "-joined, truncating with "...". */
static void append(char *buf, size_t size, const char *msg)
{
	size_t n = strlen(buf);

	if (n + 8 >= size)
		return;
	snprintf(buf + n, size - n, "%s%s", n ? ", " : "", msg);
	if (strlen(buf) + 1 >= size)
		strcpy(buf + size - 4, "...");
}

static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (!n)
		return true;
	if (n->type != YAML_SCALAR_NODE)
		return false;
	v = (const char *)n->data.scalar.value;
	return !*v || (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		       (!strcmp(v, "null") || !strcmp(v, "~") || !strcmp(v, "Null") ||
			!strcmp(v, "NULL")));
}

/* Zero values are unset: kube-proxy's defaulting replaces them. */
static bool is_zero(const struct setting *s, const char *v)
{
	bool b, unspec;
	int64_t ms;

	switch (s->type) {
	case V_BOOL:
		return !parse_bool(v, &b) && !b;
	case V_INT:
	case V_FLOAT:
		return strspn(v, "0.") == strlen(v);
	case V_DUR:
		return !kpx_parse_duration(v, &ms) && !ms;
	case V_IP:
		return !*v || (!parse_ip(v, &unspec) && unspec);
	default:
		return !*v;
	}
}

/* The value of a sequence of strings, comma-joined (malloc'd). */
static char *join_seq(struct yctx *y, const struct setting *s, yaml_node_t *n)
{
	yaml_node_item_t *it;
	size_t cap = 1, off = 0;
	char *out;

	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(y->doc, *it);

		if (!e || e->type != YAML_SCALAR_NODE) {
			fail(y->err, y->len, "%s: want a list of strings", s->field);
			return NULL;
		}
		cap += e->data.scalar.length + 1;
	}
	out = malloc(cap);
	if (!out) {
		fail(y->err, y->len, "out of memory");
		return NULL;
	}
	out[0] = '\0';
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(y->doc, *it);

		off += sprintf(out + off, "%s%s", off ? "," : "", (char *)e->data.scalar.value);
	}
	return out;
}

static int field_value(struct yctx *y, const struct setting *s, yaml_node_t *n)
{
	const char *v;
	char *joined;
	int r;

	if (is_null(n))
		return 0;
	switch (s->type) {
	case V_ANY:
		if (n->type == YAML_SCALAR_NODE) {
			v = (const char *)n->data.scalar.value;
			if (!strcmp(v, "0") || !strcmp(v, "0s") || !strcmp(v, "false"))
				return 0;
		}
		y->c->n_ignored++;
		kpx_logkv(KPX_LOG_WARN, "config", "setting not used by kpx-agent, ignored",
			  "setting", s->field, NULL);
		return 0;
	case V_MAP:
		if (n->type != YAML_MAPPING_NODE)
			return fail(y->err, y->len, "%s: want a map", s->field);
		if (n->data.mapping.pairs.start == n->data.mapping.pairs.top)
			return 0;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
			yaml_node_t *val = yaml_document_get_node(y->doc, p->value);
			bool b;

			if (!k || k->type != YAML_SCALAR_NODE || !val ||
			    val->type != YAML_SCALAR_NODE ||
			    parse_bool((char *)val->data.scalar.value, &b))
				return fail(y->err, y->len, "%s: want a map of names to true/false",
					    s->field);
		}
		y->c->n_ignored++;
		kpx_logkv(KPX_LOG_WARN, "config", "setting not used by kpx-agent, ignored",
			  "setting", s->field, NULL);
		return 0;
	case V_LIST:
		if (n->type != YAML_SEQUENCE_NODE)
			return fail(y->err, y->len, "%s: want a list", s->field);
		if (n->data.sequence.items.start == n->data.sequence.items.top)
			return 0;
		joined = join_seq(y, s, n);
		if (!joined)
			return -EINVAL;
		r = apply(y->c, s, joined, true, y->err, y->len);
		free(joined);
		return r;
	default:
		break;
	}
	if (n->type != YAML_SCALAR_NODE)
		return fail(y->err, y->len, "%s: want a %s", s->field,
			    s->type == V_STR || s->type == V_DUR ? "string" : "scalar");
	v = (const char *)n->data.scalar.value;
	if ((s->type == V_BOOL || s->type == V_INT || s->type == V_FLOAT) &&
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return fail(y->err, y->len, "%s: want a %s, not a quoted string", s->field,
			    s->type == V_BOOL ? "boolean" : "number");
	/*
	 * A file's zero means "unset, take the default", except in conntrack.*:
	 * there kube-proxy's 0 means "leave the sysctl as it is".
	 */
	if (is_zero(s, v) && strncmp(s->field, "conntrack.", 10))
		return 0;
	return apply(y->c, s, v, true, y->err, y->len);
}

static const struct setting *find_field(const char *path)
{
	size_t i;

	for (i = 0; i < NSETTINGS; i++)
		if (settings[i].field && !strcmp(settings[i].field, path))
			return &settings[i];
	return NULL;
}

/* The mode section whose sync periods kube-proxy uses in @mode. */
static const char *mode_section(const char *mode)
{
	if (!strcmp(mode, "nftables"))
		return "nftables.";
	if (!strcmp(mode, "ipvs"))
		return "ipvs.";
	return "iptables.";	/* iptables, and kpx's own modes */
}

/*
 * In ipvs mode, ipvs.scheduler (--ipvs-scheduler) is the default scheduler
 * when kpx has it (rr, wrr, lc, sh, mh); another IPVS scheduler is
 * reported and the default kept.  --scheduler, given, wins.
 */
static void resolve_ipvs_scheduler(struct kpx_config *c)
{
	static const char *const kpx_has[] = { "rr", "wrr", "lc", "sh", "mh" };
	const struct setting *s = find_field("ipvs.scheduler");
	const char *v = s && c->values ? c->values[s - settings] : NULL;
	size_t i;

	if (!v || !*v || strcmp(c->proxy_mode, "ipvs") || given_value(c, "scheduler"))
		return;
	for (i = 0; i < sizeof(kpx_has) / sizeof(kpx_has[0]); i++) {
		if (!strcmp(v, kpx_has[i])) {
			strcpy(c->scheduler, v);
			return;
		}
	}
	c->n_ignored++;
	kpx_logkv(KPX_LOG_WARN, "config", "IPVS scheduler not available in kpx, default kept",
		  "setting", "ipvs.scheduler", "value", v, "scheduler", c->scheduler, NULL);
}

/*
 * The sync periods of the proxy mode's own section, as kube-proxy's
 * v1alpha1 conversion: nftables.* in nftables mode, ipvs.* in ipvs mode,
 * iptables.* otherwise; the other sections' values are not used.
 */
static void resolve_periods(struct kpx_config *c)
{
	static const char *const keys[] = { "syncPeriod", "minSyncPeriod" };
	char path[32];
	size_t i;

	for (i = 0; c->values && i < 2; i++) {
		const struct setting *s;
		int64_t ms;

		snprintf(path, sizeof(path), "%s%s", mode_section(c->proxy_mode), keys[i]);
		s = find_field(path);
		if (s && c->values[s - settings] &&
		    !kpx_parse_duration(c->values[s - settings], &ms))
			*(i ? &c->min_sync_ms : &c->sync_ms) = ms;
	}
	resolve_ipvs_scheduler(c);
}

static bool is_section(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (!strcmp(sections[i], key))
			return true;
	return false;
}

static int walk(struct yctx *y, yaml_node_t *map, const char *prefix)
{
	yaml_node_pair_t *p;
	char path[160];
	int r;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
		const struct setting *s;
		const char *key;

		if (!k || k->type != YAML_SCALAR_NODE)
			return fail(y->err, y->len, "%s: a key is not a string", prefix ? prefix : "(top)");
		key = (const char *)k->data.scalar.value;
		snprintf(path, sizeof(path), "%s%s%s", prefix ? prefix : "",
			 prefix ? "." : "", key);
		if (!prefix && (!strcmp(key, "apiVersion") || !strcmp(key, "kind")))
			continue;	/* checked by the caller */
		s = find_field(path);
		if (s) {
			r = field_value(y, s, v);
			if (r == -EINVAL) {
				/* every field error is reported, as kube-proxy's validation */
				append(y->errs, sizeof(y->errs), y->err);
				y->nerrs++;
			} else if (r) {
				return r;
			}
			continue;
		}
		if (!prefix && is_section(key)) {
			if (is_null(v))
				continue;
			if (v->type != YAML_MAPPING_NODE)
				return fail(y->err, y->len, "%s: want a map", key);
			r = walk(y, v, key);
			if (r)
				return r;
			continue;
		}
		/* unknown or obsolete (udpIdleTimeout, conntrack.max, ...) */
		snprintf(y->err, y->len, "unknown field \"%.128s\"", path);
		append(y->unknown, sizeof(y->unknown), y->err);
		y->nunknown++;
	}
	return 0;
}

static const char *top_str(yaml_document_t *doc, yaml_node_t *root, const char *key)
{
	yaml_node_pair_t *p;

	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);

		if (k && k->type == YAML_SCALAR_NODE && v && v->type == YAML_SCALAR_NODE &&
		    !strcmp((char *)k->data.scalar.value, key))
			return (const char *)v->data.scalar.value;
	}
	return NULL;
}

int kpx_config_load_yaml(struct kpx_config *c, const char *data, size_t len,
			 char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct yctx y = { .c = c, .doc = &doc, .err = err, .len = errlen };
	const char *av, *kind;
	int r;

	if (!yaml_parser_initialize(&parser))
		return fail(err, errlen, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = fail(err, errlen, "YAML syntax error at line %zu: %s",
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "unknown");
		yaml_parser_delete(&parser);
		return r;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		r = fail(err, errlen, "empty configuration");
	} else if (root->type != YAML_MAPPING_NODE) {
		r = fail(err, errlen, "the configuration is not a map");
	} else {
		av = top_str(&doc, root, "apiVersion");
		kind = top_str(&doc, root, "kind");
		if (!av || strcmp(av, API_VERSION))
			r = fail(err, errlen, "apiVersion \"%.64s\": want %s",
				 av ? av : "", API_VERSION);
		else if (!kind || strcmp(kind, KIND))
			r = fail(err, errlen, "kind \"%.64s\": want %s", kind ? kind : "", KIND);
		else
			r = walk(&y, root, NULL);
		if (!r && y.nerrs)
			r = y.nerrs == 1 ? fail(err, errlen, "%s", y.errs) :
			    fail(err, errlen, "[%s]", y.errs);
		if (!r && y.nunknown) {
			/*
			 * kube-proxy decodes strictly first, then leniently
			 * (unknown fields dropped) with a warning.
			 */
			char msg[sizeof(y.unknown) + 32];

			snprintf(msg, sizeof(msg), "strict decoding error: %s", y.unknown);
			c->n_ignored += y.nunknown;
			kpx_logkv(KPX_LOG_WARN, "config",
				  "Using lenient decoding as strict decoding failed",
				  "err", msg, NULL);
		}
		if (!r)
			resolve_periods(c);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int kpx_config_load_file(struct kpx_config *c, const char *path, char *err,
			 size_t errlen)
{
	char *data = NULL, msg[256];
	size_t size = 0;
	FILE *f = fopen(path, "re");
	int r, e;

	if (!f) {
		e = errno;
		snprintf(err, errlen, "--config %s: %s", path, strerror(e));
		return -e;
	}
	data = malloc(1 << 20);
	if (data)
		size = fread(data, 1, 1 << 20, f);
	e = ferror(f) ? errno : 0;
	if (!data || e || !feof(f)) {
		snprintf(err, errlen, "--config %s: %s", path,
			 !data ? "out of memory" : e ? strerror(e) : "larger than 1 MiB");
		free(data);
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	r = kpx_config_load_yaml(c, data, size, msg, sizeof(msg));
	if (r)
		snprintf(err, errlen, "--config %s: %s", path, msg);
	free(data);
	return r;
}

/* ---- command line -------------------------------------------------------- */

/*
 * Prints the flags of settings[]: kube-proxy's that kpx uses (@used) or
 * ignores, wrapped.
 */
static void list_flags(bool used)
{
	size_t i, col = 0;

	for (i = 0; i < NSETTINGS; i++) {
		if (!settings[i].flag || settings[i].own || !settings[i].set != !used)
			continue;
		if (col + strlen(settings[i].flag) + 3 > 78) {
			printf("\n");
			col = 0;
		}
		col += (size_t)printf(" --%s", settings[i].flag);
	}
	printf("\n");
}

static void usage(void)
{
	printf("Usage: kpx-agent [FLAGS]\n"
	       "Watches Services and EndpointSlices and programs the kpx kernel module.\n"
	       "Flags and --config (KubeProxyConfiguration v1alpha1) are kube-proxy's; with\n"
	       "--config, flags other than --v and --hostname-override that map to a field\n"
	       "are ignored, as in kube-proxy; \"_\" in a flag name reads as \"-\".\n"
	       "kpx-agent's own flags (not kube-proxy's):\n"
	       "  --once          list, sync once and exit (for tests)\n"
	       "  --dry-run       do not touch the module: sync against an empty state\n"
	       "                  and log the changes instead\n"
	       "  --scheduler S   default scheduler: random, rr, wrr, lc, sh, mh\n"
	       "  --kube-api-timeout DUR      list request timeout (default 60s)\n"
	       "  --watch-stall-timeout DUR   re-watch after this long without data\n"
	       "                  (default 150s; API servers send bookmarks each minute)\n"
	       "  --min-sync-period, --sync-period DUR   (as kube-proxy >= 1.30)\n"
	       "  --metrics-per-backend  /metrics also has kpx_backend_connections_total,\n"
	       "                  one series per backend (default: per frontend only)\n"
	       "kube-proxy flags used by kpx (--proxy-mode also takes kpx; \"\" = kpx if\n"
	       "the module loads, else nftables, else iptables; --healthz-port and\n"
	       "--metrics-port are deprecated, as in kube-proxy):\n");
	list_flags(true);
	printf("kube-proxy flags accepted, reported and ignored:\n");
	list_flags(false);
	printf("  --help, --version\nDUR is a kube duration such as 500ms, 1s, 1m30s.\n");
}

/* The value --@flag was given, or NULL. */
static const char *given_value(const struct kpx_config *c, const char *flag)
{
	size_t i;

	for (i = 0; c->values && i < NSETTINGS; i++)
		if (settings[i].flag && !strcmp(settings[i].flag, flag))
			return c->values[i];
	return NULL;
}

/* --healthz-port / --metrics-port @flag over the bind address @bind. */
static void apply_port(struct kpx_config *c, const char *flag, char *bind,
		       size_t bindlen, bool bare)
{
	const char *v = given_value(c, flag);
	char host[64], *colon;

	if (!v)
		return;
	if (!strcmp(v, "0")) {
		bind[0] = '\0';
		return;
	}
	if (!bare || !bind[0])
		return;	/* the address names its port: it wins, as kube-proxy */
	colon = strrchr(bind, ':');
	if (!colon || (size_t)(colon - bind) >= sizeof(host))
		return;
	memcpy(host, bind, colon - bind);
	host[colon - bind] = '\0';
	if (snprintf(bind, bindlen, "%s:%.5s", host, v) >= (int)bindlen)
		bind[0] = '\0';	/* cannot happen: host came from bind */
}

#define OPT_HELP	(int)(NSETTINGS + 1)
#define OPT_VERSION	(int)(NSETTINGS + 2)

int kpx_config_parse(struct kpx_config *c, int argc, char **argv, char *err,
		     size_t errlen)
{
	struct option opts[NSETTINGS + 3];
	struct {
		const struct setting *s;
		const char *v;
	} given[256];
	size_t i, n = 0, ngiven = 0;
	char **nargv = NULL;
	int ch, r, idx;

	kpx_config_defaults(c);
	for (i = 0; i < NSETTINGS; i++) {
		if (!settings[i].flag)
			continue;
		opts[n++] = (struct option){
			settings[i].flag,
			settings[i].type == V_BOOL ? optional_argument : required_argument,
			NULL, (int)i + 1,
		};
	}
	opts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	opts[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	opts[n] = (struct option){ 0 };

	/*
	 * pflag's WordSepNormalizeFunc: "_" in a flag's name reads as "-".
	 * The flags are normalized in a copy of argv (the caller's may be
	 * read-only).
	 */
	nargv = calloc((size_t)argc + 1, sizeof(*nargv));
	if (!nargv)
		return fail(err, errlen, "out of memory");
	for (i = 0; i < (size_t)argc; i++) {
		nargv[i] = strdup(argv[i]);
		if (!nargv[i]) {
			r = fail(err, errlen, "out of memory");
			goto out;
		}
	}
	argv = nargv;

	/* Whole names only: getopt would take abbreviations, kube-proxy does not. */
	for (i = 1; i < (size_t)argc; i++) {
		char *a = argv[i], *nm;
		size_t len, j;

		if (a[0] != '-' || !a[1])
			continue;
		if (!strcmp(a, "--"))
			break;
		nm = a + (a[1] == '-' ? 2 : 1);
		len = strcspn(nm, "=");
		for (j = 0; j < len; j++)
			if (nm[j] == '_')
				nm[j] = '-';
		if ((len == 4 && !strncmp(nm, "help", 4)) || (len == 1 && nm[0] == 'h') ||
		    (len == 7 && !strncmp(nm, "version", 7)))
			continue;
		for (j = 0; j < NSETTINGS; j++)
			if (settings[j].flag && strlen(settings[j].flag) == len &&
			    !strncmp(settings[j].flag, nm, len))
				break;
		if (j == NSETTINGS) {
			r = fail(err, errlen, "unknown flag %.*s", (int)(nm - a + len), a);
			goto out;
		}
		if (settings[j].type != V_BOOL && !nm[len])
			i++;	/* its value */
	}
	optind = 0;	/* full re-initialization (tests parse several times) */
	opterr = 0;
	while ((ch = getopt_long_only(argc, argv, ":h", opts, &idx)) != -1) {
		if (ch == 'h' || ch == OPT_HELP) {
			usage();
			r = 1;
			goto out;
		}
		if (ch == OPT_VERSION) {
			r = 2;
			goto out;
		}
		if (ch == ':')
			{ r = fail(err, errlen, "flag %s needs a value", argv[optind - 1]); goto out; }
		if (ch == '?' || ch < 1 || ch > (int)NSETTINGS)
			{ r = fail(err, errlen, "unknown flag %s", argv[optind - 1]); goto out; }
		if (ngiven == sizeof(given) / sizeof(given[0]))
			{ r = fail(err, errlen, "too many flags"); goto out; }
		given[ngiven].s = &settings[ch - 1];
		given[ngiven].v = optarg ? optarg : "true";
		ngiven++;
	}
	if (optind < argc)
		{ r = fail(err, errlen, "unexpected argument \"%s\"", argv[optind]); goto out; }

	/* --config first (the last one given wins), then the flags. */
	for (i = 0; i < ngiven; i++) {
		if (given[i].s->set == set_config) {
			r = apply(c, given[i].s, given[i].v, false, err, errlen);
			if (r)
				goto out;
		}
	}
	if (c->config_file) {
		r = kpx_config_load_file(c, c->config_file, err, errlen);
		if (r) {
			r = -EINVAL;
			goto out;
		}
	}
	for (i = 0; i < ngiven; i++) {
		const struct setting *s = given[i].s;

		if (s->set == set_config)
			continue;
		if (s->deprecated) {
			kpx_logkv(KPX_LOG_WARN, "config", "flag has been deprecated",
				  "flag", name(s, false), "notice", s->deprecated, NULL);
		}
		if (c->config_file && !s->always) {
			c->n_ignored++;
			kpx_logkv(KPX_LOG_WARN, "config",
				  "flag ignored because --config is given (as kube-proxy)",
				  "flag", name(s, false), "value", given[i].v, NULL);
			continue;
		}
		r = apply(c, s, given[i].v, false, err, errlen);
		if (r)
			goto out;
	}
	/*
	 * kube-proxy's addressFromDeprecatedFlags(): without --config and
	 * --write-config-to, a port of 0 disables the server and another
	 * port is appended to a bind address given without one.
	 */
	if (!c->config_file && !c->write_config_to) {
		apply_port(c, "healthz-port", c->healthz_bind, sizeof(c->healthz_bind),
			   c->healthz_bind_bare);
		apply_port(c, "metrics-port", c->metrics_bind, sizeof(c->metrics_bind),
			   c->metrics_bind_bare);
	}

	/*
	 * The per-mode sync period flags, as kube-proxy's
	 * processV1Alpha1Flags(): --iptables-* unless the mode is ipvs,
	 * --ipvs-* in ipvs mode (with --config, resolve_periods() did it).
	 */
	if (!c->config_file) {
		const char *v;
		int64_t ms;
		bool ipvs = !strcmp(c->proxy_mode, "ipvs");

		if ((v = given_value(c, ipvs ? "ipvs-sync-period" : "iptables-sync-period")) &&
		    !kpx_parse_duration(v, &ms))
			c->sync_ms = ms;
		if ((v = given_value(c, ipvs ? "ipvs-min-sync-period" : "iptables-min-sync-period")) &&
		    !kpx_parse_duration(v, &ms))
			c->min_sync_ms = ms;
	}
	resolve_ipvs_scheduler(c);

	/* Cross-field checks, as kube-proxy's validation. */
	if (c->detect_local == KPX_DETECT_LOCAL_BRIDGE && !c->pod_bridge_interface[0])
		{ r = fail(err, errlen, "detectLocalMode BridgeInterface needs --pod-bridge-interface (detectLocal.bridgeInterface)"); goto out; }
	if (c->detect_local == KPX_DETECT_LOCAL_IFPREFIX && !c->pod_interface_prefix[0])
		{ r = fail(err, errlen, "detectLocalMode InterfaceNamePrefix needs --pod-interface-name-prefix (detectLocal.interfaceNamePrefix)"); goto out; }
	if (c->min_sync_ms > c->sync_ms)
		{ r = fail(err, errlen, "min-sync-period (%lld ms) is longer than sync-period (%lld ms)",
			    (long long)c->min_sync_ms, (long long)c->sync_ms); goto out; }
	c->health_timeout_ms = 2 * c->sync_ms;
	if (!c->hostname[0]) {
		if (gethostname(c->hostname, sizeof(c->hostname)))
			{ r = fail(err, errlen, "gethostname: %s", strerror(errno)); goto out; }
		c->hostname[sizeof(c->hostname) - 1] = '\0';
		for (char *p = c->hostname; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	}
	r = 0;
	if (c->write_config_to) {
		r = kpx_config_write(c, c->write_config_to, err, errlen);
		if (!r) {
			kpx_logkv(KPX_LOG_INFO, "config", "Wrote configuration",
				  "file", c->write_config_to, NULL);
			r = 1;
		}
	}
out:
	for (i = 0; nargv && i < (size_t)argc; i++)
		free(nargv[i]);
	free(nargv);
	return r;
}

/* ---- --write-config-to --------------------------------------------------- */

/*
 * Every KubeProxyConfiguration v1alpha1 field, in the order kube-proxy
 * writes them (sorted keys), with kube-proxy's default.  T_* is the YAML
 * shape: a number or boolean is a plain scalar, a string is quoted when it
 * would otherwise read as something else.
 */
enum etype { T_STR, T_NUM, T_LIST, T_MAP };

static const struct {
	const char *path;
	enum etype type;
	const char *def;
} emit_fields[] = {
	{ "apiVersion", T_STR, API_VERSION },
	{ "bindAddress", T_STR, "0.0.0.0" },
	{ "bindAddressHardFail", T_NUM, "false" },
	{ "clientConnection.acceptContentTypes", T_STR, "" },
	{ "clientConnection.burst", T_NUM, "10" },
	{ "clientConnection.contentType", T_STR, "application/vnd.kubernetes.protobuf" },
	{ "clientConnection.kubeconfig", T_STR, "" },
	{ "clientConnection.qps", T_NUM, "5" },
	{ "clusterCIDR", T_STR, "" },
	{ "configSyncPeriod", T_STR, "15m0s" },
	{ "conntrack.maxPerCore", T_NUM, "32768" },
	{ "conntrack.min", T_NUM, "131072" },
	{ "conntrack.tcpBeLiberal", T_NUM, "false" },
	{ "conntrack.tcpCloseWaitTimeout", T_STR, "1h0m0s" },
	{ "conntrack.tcpEstablishedTimeout", T_STR, "24h0m0s" },
	{ "conntrack.udpStreamTimeout", T_STR, "0s" },
	{ "conntrack.udpTimeout", T_STR, "0s" },
	{ "detectLocal.bridgeInterface", T_STR, "" },
	{ "detectLocal.interfaceNamePrefix", T_STR, "" },
	{ "detectLocalMode", T_STR, "" },
	{ "enableProfiling", T_NUM, "false" },
	{ "featureGates", T_MAP, NULL },
	{ "healthzBindAddress", T_STR, "0.0.0.0:10256" },
	{ "hostnameOverride", T_STR, "" },
	{ "iptables.localhostNodePorts", T_NUM, "true" },
	{ "iptables.masqueradeAll", T_NUM, "false" },
	{ "iptables.masqueradeBit", T_NUM, "14" },
	{ "iptables.minSyncPeriod", T_STR, "1s" },
	{ "iptables.syncPeriod", T_STR, "30s" },
	{ "ipvs.excludeCIDRs", T_LIST, NULL },
	{ "ipvs.minSyncPeriod", T_STR, "0s" },
	{ "ipvs.scheduler", T_STR, "" },
	{ "ipvs.strictARP", T_NUM, "false" },
	{ "ipvs.syncPeriod", T_STR, "30s" },
	{ "ipvs.tcpFinTimeout", T_STR, "0s" },
	{ "ipvs.tcpTimeout", T_STR, "0s" },
	{ "ipvs.udpTimeout", T_STR, "0s" },
	{ "kind", T_STR, KIND },
	{ "logging.flushFrequency", T_STR, "5s" },
	{ "logging.format", T_STR, "text" },
	{ "logging.options.json.infoBufferSize", T_STR, "0" },
	{ "logging.options.text.infoBufferSize", T_STR, "0" },
	{ "logging.verbosity", T_NUM, "0" },
	{ "metricsBindAddress", T_STR, "127.0.0.1:10249" },
	{ "mode", T_STR, "" },
	{ "nftables.masqueradeAll", T_NUM, "false" },
	{ "nftables.masqueradeBit", T_NUM, "14" },
	{ "nftables.minSyncPeriod", T_STR, "1s" },
	{ "nftables.syncPeriod", T_STR, "30s" },
	{ "nodePortAddresses", T_LIST, NULL },
	{ "oomScoreAdj", T_NUM, "-999" },
	{ "portRange", T_STR, "" },
	{ "showHiddenMetricsForVersion", T_STR, "" },
	{ "winkernel.enableDSR", T_NUM, "false" },
	{ "winkernel.forwardHealthCheckVip", T_NUM, "false" },
	{ "winkernel.networkName", T_STR, "" },
	{ "winkernel.rootHnsEndpointName", T_STR, "" },
	{ "winkernel.sourceVip", T_STR, "" },
	{ "windowsRunAsService", T_NUM, "false" },
};

/* @ms as Go's time.Duration.String() ("0s", "500ms", "1m30s", "24h0m0s"). */
static void go_duration(int64_t ms, char *out, size_t len)
{
	char sec[32];
	int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, f = ms % 1000;
	int n;

	if (!ms) {
		snprintf(out, len, "0s");
		return;
	}
	if (ms < 1000) {
		snprintf(out, len, "%lldms", (long long)ms);
		return;
	}
	n = snprintf(sec, sizeof(sec), "%lld.%03lld", (long long)s, (long long)f);
	while (sec[n - 1] == '0')
		sec[--n] = '\0';
	if (sec[n - 1] == '.')
		sec[--n] = '\0';
	if (h)
		snprintf(out, len, "%lldh%lldm%ss", (long long)h, (long long)m, sec);
	else if (m)
		snprintf(out, len, "%lldm%ss", (long long)m, sec);
	else
		snprintf(out, len, "%ss", sec);
}

/* The value to write for @path into @buf, or NULL for the field's default. */
static const char *effective(const struct kpx_config *c, const char *path,
			     char *buf, size_t len)
{
	const struct setting *s = find_field(path);
	const char *dot = strchr(path, '.');

	if (!strcmp(path, "healthzBindAddress"))
		return c->healthz_bind;
	if (!strcmp(path, "metricsBindAddress"))
		return c->metrics_bind;
	if (!strcmp(path, "logging.verbosity")) {
		snprintf(buf, len, "%d", c->verbosity);
		return buf;
	}
	if (!strcmp(path, "hostnameOverride"))
		return given_value(c, "hostname-override") ? c->hostname : NULL;
	if (dot && (!strcmp(dot, ".syncPeriod") || !strcmp(dot, ".minSyncPeriod")) &&
	    !strncmp(path, mode_section(c->proxy_mode), (size_t)(dot - path + 1))) {
		go_duration(!strcmp(dot, ".syncPeriod") ? c->sync_ms : c->min_sync_ms, buf, len);
		return buf;
	}
	if (s && c->values)
		return c->values[s - settings];
	return NULL;
}

/* A string that YAML would read as a number, boolean or null. */
static bool needs_quotes(const char *v)
{
	char *end;
	bool b;

	if (!*v || !parse_bool(v, &b) || !strcmp(v, "null") || !strcmp(v, "~"))
		return true;
	strtod(v, &end);
	return !*end;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
	return yaml_emitter_emit(e, ev) ? 0 : -EIO;
}

static int emit_scalar(yaml_emitter_t *e, const char *v, bool quoted)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v),
				     1, 1, quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE :
				     YAML_PLAIN_SCALAR_STYLE);
	return emit(e, &ev);
}

static int emit_mapping(yaml_emitter_t *e, bool start, bool flow)
{
	yaml_event_t ev;

	if (start)
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, flow ?
						    YAML_FLOW_MAPPING_STYLE :
						    YAML_BLOCK_MAPPING_STYLE);
	else
		yaml_mapping_end_event_initialize(&ev);
	return emit(e, &ev);
}

/* A comma-joined list value as a sequence; NULL or "" is null. */
static int emit_list(yaml_emitter_t *e, const char *v)
{
	char *dup, *tok, *save = NULL;
	yaml_event_t ev;
	int r;

	if (!v || !*v)
		return emit_scalar(e, "null", false);
	dup = strdup(v);
	if (!dup)
		return -ENOMEM;
	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
	r = emit(e, &ev);
	for (tok = strtok_r(dup, ",", &save); !r && tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		r = emit_scalar(e, tok, needs_quotes(tok));
	}
	free(dup);
	if (!r) {
		yaml_sequence_end_event_initialize(&ev);
		r = emit(e, &ev);
	}
	return r;
}

/* Opens and closes the nested maps between field paths @prev and @path. */
static int emit_sections(yaml_emitter_t *e, const char *prev, const char *path)
{
	size_t common = 0, i;
	int depth_prev = 0, depth_common = 0, r = 0;
	const char *p;

	/* the length of the common section prefix, ending on a '.' */
	for (i = 0; prev && prev[i] && prev[i] == path[i]; i++)
		if (prev[i] == '.')
			common = i + 1;
	for (p = prev; p && *p; p++)
		depth_prev += *p == '.';
	for (i = 0; i < common; i++)
		depth_common += path[i] == '.';
	for (; !r && depth_prev > depth_common; depth_prev--)
		r = emit_mapping(e, false, false);
	for (p = path + common; !r && strchr(p, '.'); p = strchr(p, '.') + 1) {
		char key[64];

		snprintf(key, sizeof(key), "%.*s", (int)(strchr(p, '.') - p), p);
		r = emit_scalar(e, key, false);
		if (!r)
			r = emit_mapping(e, true, false);
	}
	return r;
}

int kpx_config_write(const struct kpx_config *c, const char *path, char *err,
		     size_t errlen)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	const char *prev = NULL;
	char buf[64];
	size_t i;
	FILE *f;
	int r, fr;

	f = fopen(path, "we");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "--write-config-to %s: %s", path, strerror(-r));
		return r;
	}
	if (!yaml_emitter_initialize(&e)) {
		fclose(f);
		return fail(err, errlen, "out of memory");
	}
	yaml_emitter_set_output_file(&e, f);
	yaml_emitter_set_unicode(&e, 1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	r = emit(&e, &ev);
	if (!r) {
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		r = emit(&e, &ev);
	}
	if (!r)
		r = emit_mapping(&e, true, false);
	for (i = 0; !r && i < sizeof(emit_fields) / sizeof(emit_fields[0]); i++) {
		const char *fp = emit_fields[i].path;
		const char *v = effective(c, fp, buf, sizeof(buf));
		const char *key = strrchr(fp, '.') ? strrchr(fp, '.') + 1 : fp;

		r = emit_sections(&e, prev, fp);
		prev = fp;
		if (!r)
			r = emit_scalar(&e, key, false);
		if (r)
			break;
		switch (emit_fields[i].type) {
		case T_LIST:
			r = emit_list(&e, v);
			break;
		case T_MAP:
			r = emit_mapping(&e, true, true);
			if (!r)
				r = emit_mapping(&e, false, true);
			break;
		case T_NUM:
			r = emit_scalar(&e, v ? v : emit_fields[i].def, false);
			break;
		default:
			v = v ? v : emit_fields[i].def;
			r = emit_scalar(&e, v, needs_quotes(v));
			break;
		}
	}
	if (!r)
		r = emit_sections(&e, prev, "");
	if (!r)
		r = emit_mapping(&e, false, false);
	if (!r) {
		yaml_document_end_event_initialize(&ev, 1);
		r = emit(&e, &ev);
	}
	if (!r) {
		yaml_stream_end_event_initialize(&ev);
		r = emit(&e, &ev);
	}
	if (r) {
		snprintf(err, errlen, "--write-config-to %s: %s", path,
			 r == -ENOMEM ? "out of memory" : e.problem ? e.problem : "write error");
	}
	yaml_emitter_delete(&e);
	fr = fclose(f);
	if (!r && fr) {
		r = -errno;
		snprintf(err, errlen, "--write-config-to %s: %s", path, strerror(-r));
	}
	return r;
}

/* ---- the --config file's changes --------------------------------------- */

#define WATCH_EVENTS (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF)

int kpx_config_watch_open(const char *path)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), e;

	if (fd < 0)
		return -errno;
	if (inotify_add_watch(fd, path, WATCH_EVENTS) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

bool kpx_config_watch_changed(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->mask & (WATCH_EVENTS | IN_IGNORED))
				changed = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return changed;
}

int kpx_config_apply_oom_score_adj(const struct kpx_config *c, const char *path)
{
	char v[16];
	FILE *f = fopen(path ? path : "/proc/self/oom_score_adj", "we");
	int r = 0;

	if (!f) {
		r = -errno;
	} else {
		snprintf(v, sizeof(v), "%d\n", c->oom_score_adj);
		if (fputs(v, f) == EOF)
			r = -errno;
		if (fclose(f) && !r)
			r = -errno;
	}
	if (r) {
		char val[16];

		snprintf(val, sizeof(val), "%d", c->oom_score_adj);
		kpx_dbg(2, "config", "Failed to apply OOMScore: %s (oomScoreAdj %s)",
			strerror(-r), val);
	}
	return r;
}

/* ---- /configz and /flagz ---------------------------------------------- */

/* The JSON value of @v for a field of type @t. */
static json_object *json_value(enum etype t, const char *v)
{
	json_object *a;
	char *end, *dup, *tok, *save = NULL;
	bool b;
	long long x;

	switch (t) {
	case T_MAP:
		return json_object_new_object();
	case T_LIST:
		if (!v || !*v)
			return NULL;	/* null */
		a = json_object_new_array();
		dup = strdup(v);
		for (tok = dup ? strtok_r(dup, ",", &save) : NULL; a && tok;
		     tok = strtok_r(NULL, ",", &save))
			json_object_array_add(a, json_object_new_string(tok));
		free(dup);
		return a;
	case T_NUM:
		if (!parse_bool(v, &b) && (!strcmp(v, "true") || !strcmp(v, "false")))
			return json_object_new_boolean(b);
		errno = 0;
		x = strtoll(v, &end, 10);
		if (!errno && !*end)
			return json_object_new_int64(x);
		return json_object_new_double(strtod(v, NULL));
	default:
		return json_object_new_string(v);
	}
}

char *kpx_config_configz(const struct kpx_config *c)
{
	json_object *root = json_object_new_object(), *cfg = json_object_new_object();
	char buf[64], *out = NULL;
	size_t i;

	if (!root || !cfg)
		goto out;
	json_object_object_add(root, "kubeproxy.config.k8s.io", cfg);
	for (i = 0; i < sizeof(emit_fields) / sizeof(emit_fields[0]); i++) {
		const char *path = emit_fields[i].path, *p, *dot;
		const char *v = effective(c, path, buf, sizeof(buf));
		json_object *obj = cfg, *sub;
		char key[64];

		/* the nested objects of "a.b.c" */
		for (p = path; (dot = strchr(p, '.')); p = dot + 1) {
			snprintf(key, sizeof(key), "%.*s", (int)(dot - p), p);
			if (!json_object_object_get_ex(obj, key, &sub)) {
				sub = json_object_new_object();
				json_object_object_add(obj, key, sub);
			}
			obj = sub;
		}
		json_object_object_add(obj, p, json_value(emit_fields[i].type,
							   v ? v : emit_fields[i].def));
	}
	out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
out:
	json_object_put(root);
	if (!cfg || !root)
		json_object_put(cfg);
	return out;
}

static int cmp_flag(const void *a, const void *b)
{
	return strcmp((*(const struct setting *const *)a)->flag,
		      (*(const struct setting *const *)b)->flag);
}

char *kpx_config_flagz(const struct kpx_config *c)
{
	const struct setting *sorted[NSETTINGS];
	char *buf = NULL;
	size_t len = 0, i, n = 0, j;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (i = 0; i < NSETTINGS; i++)
		if (settings[i].flag)
			sorted[n++] = &settings[i];
	qsort(sorted, n, sizeof(sorted[0]), cmp_flag);
	fprintf(f, "\n kube-proxy flags\n"
		"Warning: This endpoint is not meant to be machine parseable, has no "
		"formatting compatibility guarantees and is for debugging purposes only.\n\n");
	for (i = 0; i < n; i++) {
		const struct setting *s = sorted[i];
		const char *v = c->values ? c->values[s - settings] : NULL;

		for (j = 0; !v && s->field && j < sizeof(emit_fields) / sizeof(emit_fields[0]); j++)
			if (!strcmp(emit_fields[j].path, s->field))
				v = emit_fields[j].def;
		fprintf(f, "%s=%s\n", s->flag, v ? v : "");
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
