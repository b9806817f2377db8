// SPDX-License-Identifier: GPL-2.0-only
/*
 * v1 Service from json-c to struct kpx_api_service (model/api.h): ports,
 * cluster IPs, load-balancer ingress and source ranges, traffic policies,
 * session affinity and kpx's scheduler annotations.
 */
#define _GNU_SOURCE
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
#include "k8s/decode_priv.h"

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
int dec_for_each_string(struct json_object *o, const char *field,
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

/* Growable arrays of IPs and CIDRs for dec_for_each_string(). */
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

int dec_add_cidr(const char *s, void *arg)
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
	ret = dec_for_each_string(spec, "externalIPs", "spec.externalIPs", add_ip,
			      &iv, why, len);
	if (!ret)
		ret = dec_for_each_string(spec, "loadBalancerSourceRanges",
				      "spec.loadBalancerSourceRanges", dec_add_cidr,
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
 * The kpx.io/scheduler annotation and ClientIP session affinity.
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
	ret = dec_parse_ports(spec, "ports", "spec.ports", true, &s->ports,
			  &s->nports, NULL, why, len);
	if (ret)
		return ret;
	ret = parse_sched(meta, spec, s, why, len);
	if (ret)
		return ret;
	return parse_service_extra(obj, spec, s, why, len);
}

