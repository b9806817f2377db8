// SPDX-License-Identifier: GPL-2.0-only
/*
 * One watch event or list item into the model: its key and object decoded
 * here (decode.c), the typed object handed to the model (model/model.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "k8s/decode.h"
#include "model/model.h"

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
