// SPDX-License-Identifier: GPL-2.0-only
/*
 * /statusz's JSON (see statusz.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

#include "base/service.h"
#include "http/statusz.h"

static struct json_object *list_json(const struct kpx_status_list *l)
{
	struct json_object *o = json_object_new_object();
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct kpx_status_fe *e = &l->v[i];
		struct json_object *f = json_object_new_object();

		json_object_object_add(f, "frontend",
				       json_object_new_string(e->key));
		json_object_object_add(
			f, "service",
			e->name ? json_object_new_string(e->name) : NULL);
		json_object_object_add(
			f, "kind",
			e->kind ?
				json_object_new_string(kpx_kind_name(e->kind)) :
				NULL);
		json_object_object_add(
			f, "reason",
			e->reason ? json_object_new_string(e->reason) : NULL);
		json_object_array_add(a, f);
	}
	json_object_object_add(o, "total", json_object_new_uint64(l->total));
	json_object_object_add(o, "items", a);
	return o;
}

char *kpx_statusz_json(const struct kpx_status *st, const char *mode)
{
	struct json_object *o = json_object_new_object(), *ls;
	char when[32] = "", *out;
	time_t t = (time_t)(st->last_sync_ms / 1000);
	struct tm tm;

	json_object_object_add(o, "mode",
			       json_object_new_string(mode ? mode : "kpx"));
	json_object_object_add(o, "synced",
			       json_object_new_boolean(st->synced));
	if (st->synced) {
		ls = json_object_new_object();
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_object_object_add(ls, "time",
				       json_object_new_string(when));
		json_object_object_add(ls, "unix_ms",
				       json_object_new_int64(st->last_sync_ms));
		json_object_object_add(
			ls, "duration_seconds",
			json_object_new_double(st->last_duration_s));
		json_object_object_add(ls, "full",
				       json_object_new_boolean(st->last_full));
		json_object_object_add(ls, "errors",
				       json_object_new_uint64(st->last_errors));
		json_object_object_add(ls, "sets",
				       json_object_new_uint64(st->last_sets));
		json_object_object_add(ls, "dels",
				       json_object_new_uint64(st->last_dels));
		json_object_object_add(ls, "failed", list_json(&st->failed));
		json_object_object_add(o, "last_sync", ls);
	}
	json_object_object_add(o, "desired",
			       json_object_new_uint64(st->desired));
	json_object_object_add(o, "compared",
			       json_object_new_boolean(st->compared));
	json_object_object_add(o, "programmed",
			       json_object_new_uint64(st->programmed));
	json_object_object_add(o, "refused", list_json(&st->refused));
	json_object_object_add(o, "missing", list_json(&st->missing));
	json_object_object_add(o, "differ", list_json(&st->differ));
	json_object_object_add(o, "unexpected", list_json(&st->unexpected));
	out = strdup(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return out;
}
