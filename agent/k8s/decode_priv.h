/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared only by k8s/'s decoders: decode.c (field access, keys, ports,
 * EndpointSlices, the hand-over to the model), decode_service.c,
 * decode_node.c.
 */
#ifndef KPX_DECODE_PRIV_H
#define KPX_DECODE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json_object.h>

#include "k8s/decode.h"

#define LABEL_SERVICE_NAME	"kubernetes.io/service-name"
#define LABEL_PROXY_NAME	"service.kubernetes.io/service-proxy-name"
#define LABEL_ZONE		"topology.kubernetes.io/zone"

#define BAD(why, len, ...) (snprintf(why, len, __VA_ARGS__), -EINVAL)

/* A growable array of CIDRs for dec_add_cidr(). */
struct cidr_vec {
	struct kpx_cidr **v;
	size_t *n;
};

/* decode.c */
int dec_parse_ports(struct json_object *o, const char *field, const char *what,
		    bool need_port, struct kpx_api_port **out, size_t *nout,
		    size_t *skipped, char *why, size_t len);

/* decode_service.c */
int dec_for_each_string(struct json_object *o, const char *field,
			const char *what, int (*each)(const char *s, void *arg),
			void *arg, char *why, size_t len);
/* Appends the CIDR @s to @arg, a struct cidr_vec. */
int dec_add_cidr(const char *s, void *arg);

#endif
