// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: API objects as the watch delivers them.  The input is
 * a newline-delimited stream (cut in two chunks, as jsonstream.c sees
 * network reads) of JSON values; each goes to kpx_model_apply() as the kind
 * its "kind" field names (else as picked by byte 0) with an event picked by
 * byte 0; the desired state is computed, then a relist drops everything.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json_object.h>

#include "k8s/decode.h"
#include "k8s/jsonstream.h"
#include "base/log.h"
#include "model/model.h"
#include "dp/kpx/nl.h"

struct ctx {
	struct kpx_model *m;
	uint8_t sel;
	unsigned int n;
};

static int on_value(void *p, struct json_object *obj)
{
	struct ctx *c = p;
	unsigned int s = c->sel + c->n++;
	enum kpx_kind kind = (enum kpx_kind)(s % KPX_KIND_MAX);
	struct json_object *k;
	const char *name;

	if (json_object_object_get_ex(obj, "kind", &k) &&
	    (name = json_object_get_string(k))) {
		if (!strcmp(name, "Service"))
			kind = KPX_KIND_SERVICE;
		else if (!strcmp(name, "EndpointSlice"))
			kind = KPX_KIND_ENDPOINTSLICE;
		else if (!strcmp(name, "Node"))
			kind = KPX_KIND_NODE;
	}
	kpx_model_apply(c->m, kind, (enum kpx_event)((s / 4) % 3), obj);
	return c->n > 64 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct ctx c = { 0 };
	struct kpx_jstream *js;
	struct kpx_service *v = NULL;
	size_t n = 0, half;

	if (!quiet++)
		kpx_log_set_fd(open("/dev/null", O_WRONLY));
	if (size < 1)
		return 0;
	c.sel = data[0];
	c.m = kpx_model_new();
	js = kpx_jstream_new("fuzz", 64);
	if (c.m && js) {
		data++;
		size--;
		half = size / 2;	/* two chunks: values split across feeds */
		if (!kpx_jstream_feed(js, (const char *)data, half, true, on_value, &c))
			kpx_jstream_feed(js, (const char *)data + half, size - half, true,
					 on_value, &c);
		if (!kpx_model_desired(c.m, &v, &n))
			kpx_services_free(v, n);
		for (int k = 0; k < KPX_KIND_MAX; k++) {
			kpx_model_relist_begin(c.m, (enum kpx_kind)k);
			kpx_model_relist_end(c.m, (enum kpx_kind)k);
		}
		if (!kpx_model_desired(c.m, &v, &n))
			kpx_services_free(v, n);
	}
	kpx_jstream_free(js);
	kpx_model_free(c.m);
	return 0;
}
