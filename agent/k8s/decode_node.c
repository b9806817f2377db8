// SPDX-License-Identifier: GPL-2.0-only
/*
 * v1 Node from json-c to struct kpx_api_node (model/api.h): addresses,
 * podCIDRs, labels and the taints that make it ineligible.
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
	ret = dec_for_each_string(spec, "podCIDRs", "spec.podCIDRs", dec_add_cidr, &cv,
			      why, len);
	if (ret || nd->npod_cidrs)
		return ret;
	if (kpx_json_string(spec, "podCIDR", &one) < 0)
		return BAD(why, len, "spec.podCIDR is not a string");
	ret = one ? dec_add_cidr(one, &cv) : 0;
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

