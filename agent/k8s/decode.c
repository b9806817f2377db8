// SPDX-License-Identifier: GPL-2.0-only
/*
 * API objects from json-c to plain structs, and typed field access; see
 * decode.h.  Field names in messages are the API's (spec.ports[0].port).
 */
#define _GNU_SOURCE	/* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <json-c/json_object.h>
#include <json-c/linkhash.h>
#include "base/addr.h"
#include "k8s/decode.h"

#define LABEL_SERVICE_NAME	"kubernetes.io/service-name"
#define LABEL_PROXY_NAME	"service.kubernetes.io/service-proxy-name"
#define LABEL_ZONE		"topology.kubernetes.io/zone"

int kpx_json_field(struct json_object *o, const char *key,
		   enum json_type type, struct json_object **out)
{
	struct json_object *v = NULL;

	*out = NULL;
	if (!o || json_object_get_type(o) == json_type_null)
		return 0;
	if (!json_object_is_type(o, json_type_object))
		return -EINVAL;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;	/* absent, or present as null */
	if (!json_object_is_type(v, type))
		return -EINVAL;
	*out = v;
	return 1;
}

int kpx_json_string(struct json_object *o, const char *key, const char **out)
{
	struct json_object *v;
	int ret = kpx_json_field(o, key, json_type_string, &v);

	*out = ret > 0 ? json_object_get_string(v) : NULL;
	return ret;
}

int kpx_json_int(struct json_object *o, const char *key, int64_t min,
		 int64_t max, int64_t *out)
{
	struct json_object *v;
	int64_t x;
	int ret = kpx_json_field(o, key, json_type_int, &v);

	if (ret <= 0)
		return ret;
	/* json-c clamps huge literals to INT64_MIN/MAX: caught by the range */
	x = json_object_get_int64(v);
	if (x < min || x > max)
		return -EINVAL;
	*out = x;
	return 1;
}

int kpx_json_bool(struct json_object *o, const char *key, bool *out)
{
	struct json_object *v;
	int ret = kpx_json_field(o, key, json_type_boolean, &v);

	if (ret > 0)
		*out = json_object_get_boolean(v);
	return ret;
}

#define BAD(why, len, ...) (snprintf(why, len, __VA_ARGS__), -EINVAL)

int kpx_decode_key(struct json_object *obj, bool namespaced, char **key,
		   char *why, size_t len)
{
	struct json_object *meta;
	const char *name, *ns = NULL;
	int ret;

	if (!json_object_is_type(obj, json_type_object))
		return BAD(why, len, "not a JSON object");
	if (kpx_json_field(obj, "metadata", json_type_object, &meta) <= 0)
		return BAD(why, len, "metadata missing or not an object");
	if (kpx_json_string(meta, "name", &name) <= 0 || !*name)
		return BAD(why, len, "metadata.name missing or not a string");
	if (namespaced && kpx_json_string(meta, "namespace", &ns) < 0)
		return BAD(why, len, "%s: metadata.namespace is not a string",
			   name);
	if (namespaced)
		ret = asprintf(key, "%s/%s", ns ? ns : "", name);
	else
		ret = (*key = strdup(name)) ? 0 : -1;
	return ret < 0 ? -ENOMEM : 0;
}

static int parse_protocol(const char *s, uint8_t *proto)
{
	if (!s || !strcmp(s, "TCP"))
		*proto = IPPROTO_TCP;
	else if (!strcmp(s, "UDP"))
		*proto = IPPROTO_UDP;
	else if (!strcmp(s, "SCTP"))
		*proto = IPPROTO_SCTP;
	else
		return -EINVAL;
	return 0;
}

/* Port @p, element @i of @what, into @out (name set last). */
static int parse_port(struct json_object *p, const char *what, size_t i,
		      bool need_port, struct kpx_api_port *out,
		      char *why, size_t len)
{
	const char *name, *proto;
	int64_t port;
	int ret;

	if (!json_object_is_type(p, json_type_object))
		return BAD(why, len, "%s[%zu] is not an object", what, i);
	if (kpx_json_string(p, "name", &name) < 0)
		return BAD(why, len, "%s[%zu].name is not a string", what, i);
	if (kpx_json_string(p, "protocol", &proto) < 0 ||
	    parse_protocol(proto, &out->protocol))
		return BAD(why, len, "%s[%zu].protocol is not TCP, UDP or SCTP",
			   what, i);
	ret = kpx_json_int(p, "port", 1, 65535, &port);
	if (ret < 0 || (!ret && need_port))
		return BAD(why, len, "%s[%zu].port is not an integer in 1..65535",
			   what, i);
	out->port = ret ? (uint16_t)port : 0;
	if (need_port) {
		ret = kpx_json_int(p, "nodePort", 0, 65535, &port);
		if (ret < 0)
			return BAD(why, len, "%s[%zu].nodePort is not an integer in 0..65535",
				   what, i);
		out->node_port = ret ? (uint16_t)port : 0;
	}
	out->name = strdup(name ? name : "");
	return out->name ? 0 : -ENOMEM;
}

/*
 * The array @field of @o, of ports with name, protocol and port (required
 * iff @need_port).  @what names it in messages ("spec.ports").  With
 * @skipped (EndpointSlice ports) a port that does not decode is left out
 * and counted there, the last such reason in @why; without, it makes the
 * whole object -EINVAL.
 */
static int parse_ports(struct json_object *o, const char *field,
		       const char *what, bool need_port,
		       struct kpx_api_port **out, size_t *nout,
		       size_t *skipped, char *why, size_t len)
{
	struct kpx_api_port *ports;
	struct json_object *arr;
	size_t i, n;
	int ret;

	*out = NULL;
	*nout = 0;
	ret = kpx_json_field(o, field, json_type_array, &arr);
	if (ret < 0)
		return BAD(why, len, "%s is not an array", what);
	if (!ret || !(n = json_object_array_length(arr)))
		return 0;
	ports = calloc(n, sizeof(*ports));
	if (!ports)
		return -ENOMEM;
	*out = ports;
	for (i = 0; i < n; i++) {
		struct kpx_api_port *pt = &ports[*nout];

		ret = parse_port(json_object_array_get_idx(arr, i), what, i,
				 need_port, pt, why, len);
		if (!ret) {
			(*nout)++;
			continue;
		}
		free(pt->name);
		memset(pt, 0, sizeof(*pt));
		if (ret != -EINVAL || !skipped)
			return ret;
		(*skipped)++;
	}
	return 0;
}

/* The clusterIPs (or clusterIP) of @spec; s->nips stays 0 when headless. */
static int parse_cluster_ips(struct json_object *spec,
			     struct kpx_api_service *s, char *why, size_t len)
{
	struct json_object *arr, *v;
	const char *ip = NULL;
	size_t i, n = 0;
	int ret;

	ret = kpx_json_field(spec, "clusterIPs", json_type_array, &arr);
	if (ret < 0)
		return BAD(why, len, "spec.clusterIPs is not an array");
	if (ret > 0)
		n = json_object_array_length(arr);
	if (!n) {
		if (kpx_json_string(spec, "clusterIP", &ip) < 0)
			return BAD(why, len, "spec.clusterIP is not a string");
		if (!ip || !*ip || !strcmp(ip, "None"))
			return 0;
		n = 1;
	}
	s->ips = calloc(n, sizeof(*s->ips));
	if (!s->ips)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!ip || i) {
			v = json_object_array_get_idx(arr, i);
			if (!json_object_is_type(v, json_type_string))
				return BAD(why, len, "spec.clusterIPs[%zu] is not a string",
					   i);
			ip = json_object_get_string(v);
		}
		if (!i && (!*ip || !strcmp(ip, "None")))
			return 0;	/* headless */
		ret = kpx_parse_addr(ip, 0, &s->ips[i].addr);
		if (ret < 0)
			return BAD(why, len, "spec.clusterIPs[%zu] \"%.64s\" is not an IP address",
				   i, ip);
		s->ips[i].family = ret;
		s->nips = i + 1;
	}
	return 0;
}

/*
 * Each string of the array @field of @o passed to @each (which returns 0 to
 * keep it, 1 to skip it, or a negative errno).  -EINVAL (message in @why)
 * when the field or an item has a wrong type.
 */
static int for_each_string(struct json_object *o, const char *field,
			   const char *what, int (*each)(const char *s, void *arg),
			   void *arg, char *why, size_t len)
{
	struct json_object *arr, *v;
	size_t i, n;
	int ret;

	ret = kpx_json_field(o, field, json_type_array, &arr);
	if (ret < 0)
		return BAD(why, len, "%s is not an array", what);
	n = ret ? json_object_array_length(arr) : 0;
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(v, json_type_string))
			return BAD(why, len, "%s[%zu] is not a string", what, i);
		ret = each(json_object_get_string(v), arg);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Growable arrays of IPs and CIDRs for for_each_string(). */
struct ip_vec {
	struct kpx_api_ip **v;
	size_t *n;
};

static int add_ip(const char *s, void *arg)
{
	struct ip_vec *iv = arg;
	struct kpx_api_ip ip, *nv;

	memset(&ip, 0, sizeof(ip));
	ip.family = kpx_parse_addr(s, 0, &ip.addr);
	if (ip.family < 0)
		return 1;	/* kube-proxy skips what does not parse */
	nv = realloc(*iv->v, (*iv->n + 1) * sizeof(**iv->v));
	if (!nv)
		return -ENOMEM;
	nv[(*iv->n)++] = ip;
	*iv->v = nv;
	return 0;
}

struct cidr_vec {
	struct kpx_cidr **v;
	size_t *n;
};

static int add_cidr(const char *s, void *arg)
{
	struct cidr_vec *cv = arg;
	struct kpx_cidr c, *nv;

	if (kpx_parse_cidr(s, &c) < 0)
		return 1;
	nv = realloc(*cv->v, (*cv->n + 1) * sizeof(**cv->v));
	if (!nv)
		return -ENOMEM;
	nv[(*cv->n)++] = c;
	*cv->v = nv;
	return 0;
}

/* status.loadBalancer.ingress[]: the ip of each entry not in ipMode Proxy. */
static int parse_lb_ingress(struct json_object *obj, struct kpx_api_service *s,
			    char *why, size_t len)
{
	struct json_object *status, *lb, *arr, *ing;
	struct ip_vec iv = { &s->lb_ips, &s->nlb_ips };
	const char *ip, *mode;
	size_t i, n;
	int ret;

	/* a status of another type is the API server's business: no LB IPs */
	if (kpx_json_field(obj, "status", json_type_object, &status) < 0)
		return 0;
	if (kpx_json_field(status, "loadBalancer", json_type_object, &lb) < 0 ||
	    kpx_json_field(lb, "ingress", json_type_array, &arr) < 0)
		return BAD(why, len, "status.loadBalancer.ingress has a wrong type");
	n = arr ? json_object_array_length(arr) : 0;
	for (i = 0; i < n; i++) {
		ing = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(ing, json_type_object) ||
		    kpx_json_string(ing, "ip", &ip) < 0 ||
		    kpx_json_string(ing, "ipMode", &mode) < 0)
			return BAD(why, len, "status.loadBalancer.ingress[%zu] has a wrong type",
				   i);
		/* KEP-1860: with ipMode Proxy the LB delivers to the node
		 * itself, so its IP is not captured on the node */
		if (!ip || !*ip || (mode && !strcmp(mode, "Proxy")))
			continue;
		ret = add_ip(ip, &iv);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Traffic policies, health check port, external addresses, source ranges. */
static int parse_service_extra(struct json_object *obj, struct json_object *spec,
			       struct kpx_api_service *s, char *why, size_t len)
{
	struct ip_vec iv = { &s->external_ips, &s->nexternal_ips };
	struct cidr_vec cv = { &s->source_ranges, &s->nsource_ranges };
	const char *etp, *itp, *td;
	int64_t hc = 0;
	int ret;

	if (kpx_json_string(spec, "externalTrafficPolicy", &etp) < 0 ||
	    kpx_json_string(spec, "internalTrafficPolicy", &itp) < 0 ||
	    kpx_json_string(spec, "trafficDistribution", &td) < 0)
		return BAD(why, len, "spec.externalTrafficPolicy, internalTrafficPolicy or trafficDistribution is not a string");
	if (kpx_json_int(spec, "healthCheckNodePort", 0, 65535, &hc) < 0)
		return BAD(why, len, "spec.healthCheckNodePort is not an integer in 0..65535");
	ret = for_each_string(spec, "externalIPs", "spec.externalIPs", add_ip,
			      &iv, why, len);
	if (!ret)
		ret = for_each_string(spec, "loadBalancerSourceRanges",
				      "spec.loadBalancerSourceRanges", add_cidr,
				      &cv, why, len);
	if (!ret)
		ret = parse_lb_ingress(obj, s, why, len);
	if (ret)
		return ret;
	s->itp_local = itp && !strcmp(itp, "Local");
	/* apiservice.ExternalPolicyLocal(): only for NodePort, LoadBalancer
	 * or a Service with externalIPs */
	s->etp_local = etp && !strcmp(etp, "Local") &&
		       (s->type != KPX_API_CLUSTER_IP || s->nexternal_ips);
	/* apiservice.NeedsHealthCheck(): LoadBalancer with eTP Local */
	if (s->type == KPX_API_LOAD_BALANCER && s->etp_local)
		s->hc_node_port = (uint16_t)hc;
	if (td && (!strcmp(td, "PreferClose") || !strcmp(td, "PreferSameZone")))
		s->traffic_dist = KPX_API_TD_PREFER_ZONE;
	else if (td && !strcmp(td, "PreferSameNode"))
		s->traffic_dist = KPX_API_TD_PREFER_NODE;
	return 0;
}

/*
 * Issue 4: the kpx.io/scheduler annotation and ClientIP session affinity.
 * An unknown scheduler name is ignored (the default applies), as is an
 * out-of-range timeout (the API server validates 1..86400).
 */
static int parse_sched(struct json_object *meta, struct json_object *spec,
		       struct kpx_api_service *s, char *why, size_t len)
{
	static const char *const names[] = { "random", "rr", "wrr", "lc",
					     "sh", "mh" };
	struct json_object *ann, *cfg, *cip;
	const char *sched = NULL, *aff;
	int64_t t = 10800;
	size_t i;

	if (kpx_json_field(meta, "annotations", json_type_object, &ann) < 0)
		return BAD(why, len, "metadata.annotations is not an object");
	if (kpx_json_string(ann, "kpx.io/scheduler", &sched) < 0)
		return BAD(why, len, "annotation kpx.io/scheduler is not a string");
	for (i = 0; sched && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(sched, names[i]))
			snprintf(s->scheduler, sizeof(s->scheduler), "%s",
				 names[i]);
	if (kpx_json_string(spec, "sessionAffinity", &aff) < 0)
		return BAD(why, len, "spec.sessionAffinity is not a string");
	if (!aff || strcmp(aff, "ClientIP"))
		return 0;
	if (kpx_json_field(spec, "sessionAffinityConfig", json_type_object,
			   &cfg) > 0 &&
	    kpx_json_field(cfg, "clientIP", json_type_object, &cip) > 0 &&
	    kpx_json_int(cip, "timeoutSeconds", 1, 86400, &t) < 0)
		t = 10800;
	s->affinity_timeout = (uint32_t)t;
	return 0;
}

int kpx_decode_service(struct json_object *obj, struct kpx_api_service *s,
		       char *why, size_t len)
{
	struct json_object *meta, *labels, *spec;
	const char *type, *proxy;
	int ret;

	kpx_json_field(obj, "metadata", json_type_object, &meta);
	if (kpx_json_field(meta, "labels", json_type_object, &labels) < 0)
		return BAD(why, len, "metadata.labels is not an object");
	if (kpx_json_string(labels, LABEL_PROXY_NAME, &proxy) < 0)
		return BAD(why, len, "label %s is not a string",
			   LABEL_PROXY_NAME);
	if (proxy) {
		s->skip = "labelled " LABEL_PROXY_NAME;
		return 0;
	}
	if (kpx_json_field(obj, "spec", json_type_object, &spec) < 0)
		return BAD(why, len, "spec is not an object");
	if (kpx_json_string(spec, "type", &type) < 0)
		return BAD(why, len, "spec.type is not a string");
	if (type && strcmp(type, "ClusterIP") && strcmp(type, "NodePort") &&
	    strcmp(type, "LoadBalancer")) {
		s->skip = "of type ExternalName or unknown";
		return 0;
	}
	ret = parse_cluster_ips(spec, s, why, len);
	if (ret)
		return ret;
	if (!s->nips) {
		s->skip = "headless";
		return 0;
	}
	if (type && !strcmp(type, "NodePort"))
		s->type = KPX_API_NODE_PORT;
	else if (type && !strcmp(type, "LoadBalancer"))
		s->type = KPX_API_LOAD_BALANCER;
	ret = parse_ports(spec, "ports", "spec.ports", true, &s->ports,
			  &s->nports, NULL, why, len);
	if (ret)
		return ret;
	ret = parse_sched(meta, spec, s, why, len);
	if (ret)
		return ret;
	return parse_service_extra(obj, spec, s, why, len);
}

static int parse_conditions(struct json_object *ep, struct kpx_api_endpoint *e,
			    size_t i, char *why, size_t len)
{
	struct json_object *c;

	/* API defaults: nil ready = ready, nil serving = ready's value
	 * (same as kube-proxy), nil terminating = false */
	e->ready = true;
	e->terminating = false;
	if (kpx_json_field(ep, "conditions", json_type_object, &c) < 0 ||
	    kpx_json_bool(c, "ready", &e->ready) < 0)
		goto bad;
	e->serving = e->ready;
	if (kpx_json_bool(c, "serving", &e->serving) < 0 ||
	    kpx_json_bool(c, "terminating", &e->terminating) < 0)
		goto bad;
	return 0;
bad:
	return BAD(why, len, "endpoints[%zu].conditions has a wrong type", i);
}

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

/* hints.@field[].name of @hints into *out. */
static int parse_hint_list(struct json_object *hints, const char *field,
			   char ***out, size_t *nout)
{
	struct json_object *arr, *h;
	const char *name;
	size_t i, n;

	if (kpx_json_field(hints, field, json_type_array, &arr) < 0)
		return -EINVAL;
	n = arr ? json_object_array_length(arr) : 0;
	if (!n)
		return 0;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		h = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(h, json_type_object) ||
		    kpx_json_string(h, "name", &name) < 0)
			return -EINVAL;
		if (!name)
			continue;
		(*out)[*nout] = strdup(name);
		if (!(*out)[*nout])
			return -ENOMEM;
		(*nout)++;
	}
	return 0;
}

/* endpoints[i].hints: forZones and forNodes; other fields are ignored. */
static int parse_hints(struct json_object *ep, struct kpx_api_endpoint *e,
		       size_t i, char *why, size_t len)
{
	struct json_object *hints;
	int ret;

	if (kpx_json_field(ep, "hints", json_type_object, &hints) < 0)
		return BAD(why, len, "endpoints[%zu].hints is not an object", i);
	ret = parse_hint_list(hints, "forZones", &e->zone_hints, &e->nzone_hints);
	if (!ret)
		ret = parse_hint_list(hints, "forNodes", &e->node_hints,
				      &e->nnode_hints);
	if (ret == -EINVAL)
		return BAD(why, len, "endpoints[%zu].hints has a wrong type", i);
	return ret;
}

/*
 * endpoints[@i] (@ep) of a slice of @family into @e.  Returns 0, 1 when it
 * has no address (skipped as kube-proxy does), -EINVAL or -ENOMEM.
 */
static int parse_endpoint(struct json_object *ep, int family,
			  struct kpx_api_endpoint *e, size_t i,
			  char *why, size_t len)
{
	struct json_object *addrs, *a;
	const char *node, *zone;
	int ret;

	if (!json_object_is_type(ep, json_type_object))
		return BAD(why, len, "endpoints[%zu] is not an object", i);
	if (kpx_json_field(ep, "addresses", json_type_array, &addrs) < 0)
		return BAD(why, len, "endpoints[%zu].addresses is not an array", i);
	/* consumers use the first address (API doc; kube-proxy) */
	a = addrs ? json_object_array_get_idx(addrs, 0) : NULL;
	if (!a)
		return 1;
	if (!json_object_is_type(a, json_type_string) ||
	    kpx_parse_addr(json_object_get_string(a), family, &e->addr) < 0)
		return BAD(why, len, "endpoints[%zu].addresses[0] is not an %s address",
			   i, family == AF_INET ? "IPv4" : "IPv6");
	ret = parse_conditions(ep, e, i, why, len);
	if (ret)
		return ret;
	if (kpx_json_string(ep, "nodeName", &node) < 0 ||
	    kpx_json_string(ep, "zone", &zone) < 0)
		return BAD(why, len, "endpoints[%zu].nodeName or zone is not a string",
			   i);
	if (dup_opt(node, &e->node_name) || dup_opt(zone, &e->zone))
		return -ENOMEM;
	return parse_hints(ep, e, i, why, len);
}

/* endpoints[]: one that does not decode is left out and counted. */
static int parse_endpoints(struct json_object *obj, struct kpx_api_slice *sl,
			   char *why, size_t len)
{
	struct json_object *arr;
	size_t i, n;
	int ret;

	ret = kpx_json_field(obj, "endpoints", json_type_array, &arr);
	if (ret < 0)
		return BAD(why, len, "endpoints is not an array");
	/* FQDN slices carry host names: never backends, not stored */
	if (!ret || !sl->family || !(n = json_object_array_length(arr)))
		return 0;
	sl->eps = calloc(n, sizeof(*sl->eps));
	if (!sl->eps)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct kpx_api_endpoint *e = &sl->eps[sl->neps];

		ret = parse_endpoint(json_object_array_get_idx(arr, i),
				     sl->family, e, i, sl->skipped_why,
				     sizeof(sl->skipped_why));
		if (!ret) {
			sl->neps++;
			continue;
		}
		kpx_api_endpoint_release(e);
		if (ret == -ENOMEM)
			return ret;
		if (ret == -EINVAL)
			sl->nskipped++;
	}
	return 0;
}

int kpx_decode_slice(struct json_object *obj, struct kpx_api_slice *sl,
		     char *why, size_t len)
{
	struct json_object *meta, *labels;
	const char *svc, *ns, *type;
	int ret;

	kpx_json_field(obj, "metadata", json_type_object, &meta);
	if (kpx_json_field(meta, "labels", json_type_object, &labels) < 0 ||
	    kpx_json_string(labels, LABEL_SERVICE_NAME, &svc) < 0)
		return BAD(why, len, "metadata.labels or label %s has a wrong type",
			   LABEL_SERVICE_NAME);
	kpx_json_string(meta, "namespace", &ns);
	if (svc && asprintf(&sl->service, "%s/%s", ns ? ns : "", svc) < 0) {
		sl->service = NULL;
		return -ENOMEM;
	}
	if (kpx_json_string(obj, "addressType", &type) <= 0)
		return BAD(why, len, "addressType missing or not a string");
	if (!strcmp(type, "IPv4"))
		sl->family = AF_INET;
	else if (!strcmp(type, "IPv6"))
		sl->family = AF_INET6;
	ret = parse_ports(obj, "ports", "ports", false, &sl->ports, &sl->nports,
			  &sl->nskipped, sl->skipped_why, sizeof(sl->skipped_why));
	if (ret)
		return ret;
	return parse_endpoints(obj, sl, why, len);
}

/* status.addresses: InternalIP and ExternalIP entries. */
static int parse_node_addrs(struct json_object *obj, struct kpx_api_node *nd,
			    char *why, size_t len)
{
	struct json_object *status, *arr, *a;
	struct kpx_api_node_addr *na;
	const char *type, *addr;
	size_t i, n;
	int fam;

	if (kpx_json_field(obj, "status", json_type_object, &status) < 0 ||
	    kpx_json_field(status, "addresses", json_type_array, &arr) < 0)
		return BAD(why, len, "status.addresses has a wrong type");
	n = arr ? json_object_array_length(arr) : 0;
	if (!n)
		return 0;
	nd->addrs = calloc(n, sizeof(*nd->addrs));
	if (!nd->addrs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		a = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(a, json_type_object) ||
		    kpx_json_string(a, "type", &type) < 0 ||
		    kpx_json_string(a, "address", &addr) < 0)
			return BAD(why, len, "status.addresses[%zu] has a wrong type", i);
		if (!type || !addr || (strcmp(type, "InternalIP") &&
				       strcmp(type, "ExternalIP")))
			continue;
		na = &nd->addrs[nd->naddrs];
		fam = kpx_parse_addr(addr, 0, &na->ip.addr);
		if (fam < 0)
			continue;
		na->ip.family = fam;
		na->type = strcmp(type, "InternalIP") ? KPX_API_EXTERNAL_IP :
							KPX_API_INTERNAL_IP;
		nd->naddrs++;
	}
	return 0;
}

/* spec.podCIDRs, or spec.podCIDR when that is absent. */
static int parse_pod_cidrs(struct json_object *obj, struct kpx_api_node *nd,
			   char *why, size_t len)
{
	struct cidr_vec cv = { &nd->pod_cidrs, &nd->npod_cidrs };
	struct json_object *spec;
	const char *one;
	int ret;

	if (kpx_json_field(obj, "spec", json_type_object, &spec) < 0)
		return BAD(why, len, "spec is not an object");
	ret = for_each_string(spec, "podCIDRs", "spec.podCIDRs", add_cidr, &cv,
			      why, len);
	if (ret || nd->npod_cidrs)
		return ret;
	if (kpx_json_string(spec, "podCIDR", &one) < 0)
		return BAD(why, len, "spec.podCIDR is not a string");
	ret = one ? add_cidr(one, &cv) : 0;
	return ret < 0 ? ret : 0;
}

int kpx_decode_node(struct json_object *obj, struct kpx_api_node *nd,
		    char *why, size_t len)
{
	struct json_object *meta, *labels;
	size_t n;
	int ret;

	kpx_json_field(obj, "metadata", json_type_object, &meta);
	if (kpx_json_field(meta, "labels", json_type_object, &labels) < 0)
		return BAD(why, len, "metadata.labels is not an object");
	ret = parse_node_addrs(obj, nd, why, len);
	if (!ret)
		ret = parse_pod_cidrs(obj, nd, why, len);
	if (ret)
		return ret;
	if (!labels || !(n = json_object_object_length(labels)))
		return 0;
	nd->labels = calloc(n, sizeof(*nd->labels));
	if (!nd->labels)
		return -ENOMEM;
	json_object_object_foreach(labels, k, v) {
		struct kpx_api_label *l = &nd->labels[nd->nlabels];

		if (!json_object_is_type(v, json_type_string))
			return BAD(why, len, "label %.64s is not a string", k);
		l->key = strdup(k);
		l->value = strdup(json_object_get_string(v));
		nd->nlabels++;
		if (!l->key || !l->value)
			return -ENOMEM;
		if (!strcmp(k, LABEL_ZONE))
			nd->zone = l->value;
	}
	return 0;
}
