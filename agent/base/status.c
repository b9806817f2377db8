// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's status report's lists (see status.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

int kpx_status_add(struct kpx_status_list *l, const struct kpx_service *s,
		   const char *name, const char *reason)
{
	struct kpx_status_fe *e;

	l->total++;
	if (l->n >= KPX_STATUS_LIST_MAX)
		return 0;
	e = realloc(l->v, (l->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	l->v = e;
	e = &l->v[l->n];
	memset(e, 0, sizeof(*e));
	kpx_service_str(s, e->key, sizeof(e->key));
	if (!name)
		name = s->name;
	e->kind = s->kind;
	if ((name && *name && !(e->name = strdup(name))) ||
	    (reason && !(e->reason = strdup(reason)))) {
		free(e->name);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

void kpx_status_list_free(struct kpx_status_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].reason);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void kpx_status_free(struct kpx_status *st)
{
	kpx_status_list_free(&st->failed);
	kpx_status_list_free(&st->refused);
	kpx_status_list_free(&st->missing);
	kpx_status_list_free(&st->differ);
	kpx_status_list_free(&st->unexpected);
}
