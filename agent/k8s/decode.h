/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kubernetes API objects (v1 Service, discovery.k8s.io/v1 EndpointSlice,
 * v1 Node) decoded from json-c into the model's plain C structs
 * (model/api.h), plus typed, checked field getters.  json-c stops here: the
 * model is handed typed objects.  Unknown fields are ignored;
 * missing optional fields take their API defaults; a present field of the
 * wrong type or value makes the object malformed (-EINVAL).
 */
#ifndef KPX_DECODE_H
#define KPX_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <json-c/json_object.h>
#include "base/cidr.h"
#include "model/api.h"
#include "model/model.h"

/*
 * The cache key of @obj into *key (malloc'd): "namespace/name", or "name"
 * when !@namespaced.  Returns 0, -ENOMEM, or -EINVAL with a reason in @why.
 */
int kpx_decode_key(struct json_object *obj, bool namespaced, char **key,
		   char *why, size_t len);

/*
 * Decode @obj into a zeroed struct.  Return 0, -ENOMEM, or -EINVAL with a
 * one-line reason naming the field in @why (@len bytes).  On error the
 * struct may be partly filled: release it anyway.  An EndpointSlice's
 * endpoint or port that does not decode is left out and counted
 * (kpx_api_slice.nskipped) instead of failing the slice.
 */
int kpx_decode_service(struct json_object *obj, struct kpx_api_service *s,
		       char *why, size_t len);
int kpx_decode_slice(struct json_object *obj, struct kpx_api_slice *sl,
		     char *why, size_t len);
int kpx_decode_node(struct json_object *obj, struct kpx_api_node *nd,
		    char *why, size_t len);

/*
 * Field @key of object @o with JSON type @type.  Returns 1 and sets *out,
 * 0 with *out = NULL when @o is NULL or the field is absent or null, or
 * -EINVAL when @o is not an object or the field has another type.
 */
int kpx_json_field(struct json_object *o, const char *key,
		   enum json_type type, struct json_object **out);

/* String field: as kpx_json_field(); *out points into @o (not copied). */
int kpx_json_string(struct json_object *o, const char *key, const char **out);

/*
 * Integer field in [@min, @max]: as kpx_json_field(); a JSON number with a
 * fraction or exponent, or one out of range, is -EINVAL.
 */
int kpx_json_int(struct json_object *o, const char *key, int64_t min,
		 int64_t max, int64_t *out);

/* Boolean field: as kpx_json_field(). */
int kpx_json_bool(struct json_object *o, const char *key, bool *out);

/*
 * Applies one watch event (or one item of a list, as KPX_EV_ADDED) for an
 * object of @kind to the model: its key and object decoded, the object
 * handed over with kpx_model_update(), kpx_model_delete() or, when it does
 * not decode, kpx_model_keep() (decode.c).  The model copies what it needs; @obj stays the caller's.
 * Returns 0, or -EINVAL for a malformed object, which is logged and skipped
 * (a previous good version of the same object, if any, is kept).
 */
int kpx_model_apply(struct kpx_model *m, enum kpx_kind kind,
		    enum kpx_event ev, struct json_object *obj);

#endif
