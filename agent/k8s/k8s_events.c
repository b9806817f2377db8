// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a list page or a watch event means for the model: items and
 * ADDED/MODIFIED/DELETED events applied (decode.c), BOOKMARKs, ERROR
 * events and 410 Gone, relists begun and ended, the own Node's
 * eligibility, EndpointSlice trigger times for the latency metric.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <json-c/json_object.h>

#include "base/duration.h"
#include "base/log.h"
#include "http/metrics.h"
#include "k8s/decode.h"
#include "k8s/k8s_priv.h"
#include "model/model.h"

/* The slice's last-change-trigger-time, or 0. */
static double trigger_time(struct json_object *o)
{
	struct json_object *meta = NULL, *ann = NULL;
	const char *s = NULL;
	double t;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	kpx_json_field(meta, "annotations", json_type_object, &ann);
	kpx_json_string(ann, TRIGGER_ANNOTATION, &s);
	return s && !kpx_k8s_parse_time(s, &t) ? t : 0;
}

/* kube-proxy's node eligibility: not being deleted, not tainted for it. */
static bool node_eligible(struct json_object *o)
{
	struct json_object *meta = NULL, *spec = NULL, *taints = NULL, *del = NULL;
	size_t i, n;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	if (meta && json_object_object_get_ex(meta, "deletionTimestamp", &del) && del)
		return false;
	kpx_json_field(o, "spec", json_type_object, &spec);
	kpx_json_field(spec, "taints", json_type_array, &taints);
	n = taints ? json_object_array_length(taints) : 0;
	for (i = 0; i < n; i++) {
		const char *key = NULL;

		kpx_json_string(json_object_array_get_idx(taints, i), "key", &key);
		if (key && !strcmp(key, TO_BE_DELETED_TAINT))
			return false;
	}
	return true;
}

/* "ns/name" of an API object for logs, into @buf. */
static const char *obj_name(struct json_object *o, char *buf, size_t len)
{
	struct json_object *meta = NULL;
	const char *ns = NULL, *name = NULL;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	kpx_json_string(meta, "namespace", &ns);
	kpx_json_string(meta, "name", &name);
	snprintf(buf, len, "%s%s%s", ns ? ns : "", ns ? "/" : "",
		 name ? name : "?");
	return buf;
}

/* metadata.<key> of @o as a string, or NULL. */
static const char *meta_str(struct json_object *o, const char *key)
{
	struct json_object *meta = NULL;
	const char *s = NULL;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	kpx_json_string(meta, key, &s);
	return s && *s ? s : NULL;
}

void k8s_set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? strdup(s) : NULL;
}

/* Schedules the next request of @r after a jittered, growing delay. */
void k8s_backoff(struct res *r)
{
	int b = r->backoff_ms;

	r->next_at = kpx_now_ms() + b / 2 + random() % (b / 2 + 1);
	r->backoff_ms = b * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b * 2;
}

void k8s_schedule_now(struct res *r, enum req next)
{
	r->next = next;
	r->next_at = kpx_now_ms();
}

static void apply(struct res *r, enum kpx_event ev, struct json_object *obj)
{
	char name[KPX_OBJ_NAME_LEN];
	const char *rv = meta_str(obj, "resourceVersion");

	struct kpx_k8s *k = r->k;

	if (kpx_model_apply(k->model, r->kind, ev, obj) == -EINVAL)
		kpx_warn("k8s", "%s: skipping malformed object %s", r->name,
			 obj_name(obj, name, sizeof(name)));
	if (k->metrics && r->kind == KPX_KIND_ENDPOINTSLICE) {
		const char *at = NULL;
		int fam;

		kpx_json_string(obj, "addressType", &at);
		fam = at && !strcmp(at, "IPv6") ? AF_INET6 :
		      at && !strcmp(at, "IPv4") ? AF_INET : 0;
		kpx_metrics_change_slice(k->metrics, obj_name(obj, name, sizeof(name)),
					 ev == KPX_EV_DELETED, fam,
					 kpx_model_dirty(k->model), trigger_time(obj));
	} else if (k->metrics) {
		kpx_metrics_change(k->metrics, r->kind, kpx_model_dirty(k->model), 0);
		if (r->kind == KPX_KIND_NODE)
			kpx_metrics_node_eligible(k->metrics,
						  ev != KPX_EV_DELETED && node_eligible(obj));
	}
	if (rv && r->cur == REQ_WATCH)
		k8s_set_str(&r->rv, rv);
	if (r->kind == KPX_KIND_NODE && r->cur == REQ_WATCH) {
		if (ev == KPX_EV_DELETED) {
			kpx_warn("k8s", "node: Node %s deleted: no NodePort frontends until it is registered again",
				 k->node);
			k->node_seen = false;
		} else if (!k->node_seen) {
			kpx_info("k8s", "node: Node %s registered", k->node);
			k->node_seen = true;
		}
	}
}

/*
 * After a list of the own Node: without it (a --hostname-override that
 * matches no Node) the node has no NodePort addresses and no
 * eligibility, so say so; the watch goes on and picks it up once it is
 * registered (kube-proxy likewise waits for its Node).
 */
void k8s_node_listed(struct res *r)
{
	struct kpx_k8s *k = r->k;

	if (r->items) {
		if (!k->node_seen && r->synced)
			kpx_info("k8s", "node: Node %s found", k->node);
		k->node_seen = true;
		return;
	}
	k->node_seen = false;
	kpx_metrics_node_eligible(k->metrics, false);	/* unknown: not eligible */
	kpx_warn("k8s", "node: no Node named \"%s\" (--hostname-override, or the host name): "
		 "no NodePort frontends and no node eligibility until it is registered; waiting for it",
		 k->node);
}

/* One page of a list.  Returns 0, or -1 to abort the transfer. */
static int on_page(struct res *r, struct json_object *list)
{
	struct json_object *items = NULL;
	size_t i, n;

	/*
	 * A list (ListMeta) always carries items (possibly empty or null)
	 * and metadata.resourceVersion; a 200 without them (an auth proxy's
	 * "{}", an error object) is not an empty list and must delete
	 * nothing.
	 */
	if (!json_object_object_get_ex(list, "items", NULL) ||
	    kpx_json_field(list, "items", json_type_array, &items) < 0) {
		r->bad = "list response without an items array";
		return -1;
	}
	if (!meta_str(list, "resourceVersion")) {
		r->bad = "list response without metadata.resourceVersion";
		return -1;
	}
	/*
	 * Each list from its first page is a new relist generation: what a
	 * list that failed partway (or whose continue token expired)
	 * applied does not count as seen, so an object deleted meanwhile
	 * is dropped at the end (client-go's reflector likewise replaces
	 * its store with one complete list).
	 */
	if (r->first_page) {
		if (r->relisting)
			kpx_info("k8s", "%s: list restarted from the first page", r->name);
		kpx_model_relist_begin(r->k->model, r->kind);
		if (!r->relisting && r->synced)
			kpx_metrics_relist(r->k->metrics, r->kind);
		r->relisting = true;
		r->first_page = false;
	}
	n = items ? json_object_array_length(items) : 0;
	for (i = 0; i < n; i++)
		apply(r, KPX_EV_ADDED, json_object_array_get_idx(items, i));
	r->items += n;
	k8s_set_str(&r->cont, meta_str(list, "continue"));
	k8s_set_str(&r->page_rv, meta_str(list, "resourceVersion"));
	r->page_ok = true;
	return 0;
}

/*
 * Whether the Status @st says the resourceVersion asked for is newer than
 * the server has (apimachinery's IsTooLargeResourceVersionError as
 * client-go's reflector tests it): a cause ResourceVersionTooLarge, or, from
 * servers before 1.18.6, a 504 Timeout whose cause or message says "Too
 * large resource version".
 */
bool k8s_rv_too_large(struct json_object *st)
{
	struct json_object *det = NULL, *causes = NULL;
	const char *msg = NULL, *reason = NULL;
	int64_t code = 0;
	size_t i, n;

	kpx_json_int(st, "code", 0, 999, &code);
	kpx_json_string(st, "reason", &reason);
	kpx_json_field(st, "details", json_type_object, &det);
	kpx_json_field(det, "causes", json_type_array, &causes);
	n = causes ? json_object_array_length(causes) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(causes, i);
		const char *cr = NULL, *cm = NULL;

		kpx_json_string(c, "reason", &cr);
		kpx_json_string(c, "message", &cm);
		if (cr && !strcmp(cr, CAUSE_RV_TOO_LARGE))
			return true;
		if (code == 504 && cm && !strcmp(cm, MSG_RV_TOO_LARGE))
			return true;
	}
	kpx_json_string(st, "message", &msg);
	return code == 504 && reason && !strcmp(reason, "Timeout") && msg &&
	       strstr(msg, MSG_RV_TOO_LARGE);
}

/* One watch event.  Returns 0, or -1 to end the watch. */
static int on_event(struct res *r, struct json_object *ev)
{
	static const struct {
		const char *type;
		enum kpx_event ev;
	} types[] = {
		{ "ADDED", KPX_EV_ADDED },
		{ "MODIFIED", KPX_EV_MODIFIED },
		{ "DELETED", KPX_EV_DELETED },
	};
	struct json_object *obj = NULL;
	const char *type = NULL, *msg = NULL, *rv;
	int64_t code = 0;
	size_t i;

	/*
	 * An event that cannot be decoded ends the watch, which is resumed
	 * from the last applied resourceVersion (client-go's StreamWatcher
	 * and reflector): skipping it would lose that change for good.
	 */
	if (kpx_json_string(ev, "type", &type) <= 0 ||
	    kpx_json_field(ev, "object", json_type_object, &obj) <= 0) {
		r->bad = "watch event without type or object";
		return -1;
	}
	r->events++;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (!strcmp(type, types[i].type)) {
			apply(r, types[i].ev, obj);
			return 0;
		}
	}
	if (!strcmp(type, "BOOKMARK")) {
		if ((rv = meta_str(obj, "resourceVersion")))
			k8s_set_str(&r->rv, rv);
		kpx_dbg(4, "k8s", "%s: bookmark at %s", r->name, r->rv);
		return 0;
	}
	if (!strcmp(type, "ERROR")) {
		kpx_json_int(obj, "code", 0, 999, &code);
		kpx_json_string(obj, "message", &msg);
		if (code == 410) {
			kpx_info("k8s", "%s: resourceVersion %s expired, relisting: %s",
				 r->name, r->rv, msg ? msg : "");
			r->gone = true;
		} else if (k8s_rv_too_large(obj)) {
			kpx_warn("k8s", "%s: resourceVersion %s is too large for this API server, relisting: %s",
				 r->name, r->rv, msg ? msg : "");
			r->gone = true;
		} else {
			kpx_warn("k8s", "%s: watch error %d: %s", r->name,
				 (int)code, msg ? msg : "(no message)");
		}
		return -1;
	}
	/*
	 * A type this client does not know (client-go's watchHandler logs
	 * and skips it): ending the watch would replay the same event from
	 * the same resourceVersion and hold back every later change.
	 */
	kpx_warn("k8s", "%s: unknown watch event type \"%s\", skipped", r->name, type);
	return 0;
}

int k8s_on_value(void *ctx, struct json_object *obj)
{
	struct res *r = ctx;

	return r->cur == REQ_LIST ? on_page(r, obj) : on_event(r, obj);
}

