/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's cache of API objects and the desired state computed from it,
 * with kube-proxy's semantics (ClusterIP for now).  Pure: no I/O, no clock,
 * no netlink; unit-tested on the host.
 */
#ifndef KPX_MODEL_H
#define KPX_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json_object.h>
#include "service.h"

enum kpx_kind {
	KPX_KIND_SERVICE,		/* v1 Service */
	KPX_KIND_ENDPOINTSLICE,		/* discovery.k8s.io/v1 EndpointSlice */
	KPX_KIND_NODE,			/* v1 Node (the agent's own) */
	KPX_KIND_MAX
};

enum kpx_event {
	KPX_EV_ADDED,
	KPX_EV_MODIFIED,
	KPX_EV_DELETED,
};

struct kpx_model;

struct kpx_model *kpx_model_new(void);
void kpx_model_free(struct kpx_model *m);

/*
 * Applies one watch event (or one item of a list, as KPX_EV_ADDED) for an
 * object of @kind.  The model copies what it needs; @obj stays the caller's.
 * Returns 0, or -EINVAL for a malformed object, which is logged and skipped
 * (a previous good version of the same object, if any, is kept).
 */
int kpx_model_apply(struct kpx_model *m, enum kpx_kind kind,
		    enum kpx_event ev, struct json_object *obj);

/*
 * Relist: between begin and end, every object of @kind is re-applied as
 * KPX_EV_ADDED; end drops the objects of that kind that were not seen.
 */
void kpx_model_relist_begin(struct kpx_model *m, enum kpx_kind kind);
void kpx_model_relist_end(struct kpx_model *m, enum kpx_kind kind);

/* True when an object changed since the last kpx_model_desired(). */
bool kpx_model_dirty(const struct kpx_model *m);

/*
 * Computes the node's desired frontends: one per (ClusterIP, Service port),
 * backends = ready endpoints of the Service's slices of the same address
 * family, target port resolved per slice (named targetPorts by the slice's
 * port name), merged across slices, duplicates once.  Headless Services and
 * Services labelled service.kubernetes.io/service-proxy-name are skipped.
 * *out is sorted by kpx_service_key_cmp(); free with kpx_services_free().
 * Clears the dirty flag.  Returns 0 or -ENOMEM.
 */
int kpx_model_desired(struct kpx_model *m, struct kpx_service **out, size_t *n);

#endif
