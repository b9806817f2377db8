// SPDX-License-Identifier: GPL-2.0-only
/*
 * API objects from json-c to the model's plain structs (model/api.h), and
 * typed field access; see decode.h.  Here: field access, keys, ports,
 * EndpointSlices and the hand-over of one event to the model
 * (kpx_model_apply()); Services are decode_service.c's, Nodes
 * decode_node.c's.  Field names in messages are the API's
 * (spec.ports[0].port).
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
#include "base/log.h"
#include "k8s/decode.h"
#include "k8s/decode_priv.h"
#include "model/model.h"

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
int dec_parse_ports(struct json_object *o, const char *field,
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
	ret = dec_parse_ports(obj, "ports", "ports", false, &sl->ports, &sl->nports,
			  &sl->nskipped, sl->skipped_why, sizeof(sl->skipped_why));
	if (ret)
		return ret;
	return parse_endpoints(obj, sl, why, len);
}

/* status.addresses: InternalIP and ExternalIP entries. */

/* ---- one event into the model ---- */

#define COMP "model"

static int decode_service(struct json_object *obj, union kpx_api_object *o,
			  char *why, size_t len)
{
	return kpx_decode_service(obj, &o->service, why, len);
}

static int decode_slice(struct json_object *obj, union kpx_api_object *o,
			char *why, size_t len)
{
	return kpx_decode_slice(obj, &o->slice, why, len);
}

static int decode_node(struct json_object *obj, union kpx_api_object *o,
		       char *why, size_t len)
{
	return kpx_decode_node(obj, &o->node, why, len);
}

static void release(enum kpx_kind kind, union kpx_api_object *o)
{
	if (kind == KPX_KIND_SERVICE)
		kpx_api_service_release(&o->service);
	else if (kind == KPX_KIND_ENDPOINTSLICE)
		kpx_api_slice_release(&o->slice);
	else
		kpx_api_node_release(&o->node);
}

static const struct {
	const char *name;
	bool namespaced;
	int (*decode)(struct json_object *obj, union kpx_api_object *o,
		      char *why, size_t len);
} kinds[KPX_KIND_MAX] = {
	[KPX_KIND_SERVICE] = { "Service", true, decode_service },
	[KPX_KIND_ENDPOINTSLICE] = { "EndpointSlice", true, decode_slice },
	[KPX_KIND_NODE] = { "Node", false, decode_node },
};

int kpx_model_apply(struct kpx_model *m, enum kpx_kind kind,
		    enum kpx_event ev, struct json_object *obj)
{
	union kpx_api_object o;
	char why[192], *key = NULL;
	int ret;

	if ((unsigned int)kind >= KPX_KIND_MAX)
		return -EINVAL;
	ret = kpx_decode_key(obj, kinds[kind].namespaced, &key, why, sizeof(why));
	if (ret == -EINVAL)
		kpx_warn(COMP, "%s ignored: %s", kinds[kind].name, why);
	if (ret)
		return ret;
	if (ev == KPX_EV_DELETED) {
		kpx_model_delete(m, kind, key);
		free(key);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	ret = kinds[kind].decode(obj, &o, why, sizeof(why));
	if (ret) {
		bool had = kpx_model_keep(m, kind, key);

		release(kind, &o);
		if (ret == -EINVAL)
			kpx_warn(COMP, "%s %s: %s; %s", kinds[kind].name, key, why,
				 had ? "keeping the previous version" : "ignored");
		else
			kpx_err(COMP, "%s %s: %s", kinds[kind].name, key, strerror(-ret));
		free(key);
		return ret;
	}
	if (kind == KPX_KIND_ENDPOINTSLICE && o.slice.nskipped)
		kpx_warn(COMP, "EndpointSlice %s: %zu endpoint(s)/port(s) that do not decode left out, the rest kept (last: %s)",
			 key, o.slice.nskipped, o.slice.skipped_why);
	return kpx_model_update(m, kind, key, &o);
}
