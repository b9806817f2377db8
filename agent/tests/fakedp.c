// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recording fake data plane of the sync tests and bench_sync: see
 * fakedp.h.  Its table code is its own (not reconcile.c's), so that a test
 * checking sync.c against it does not check reconcile.c against itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr.h"
#include "fakedp.h"
#include "dp/kpx/nl.h"

static struct kpx_fakedp *F(struct kpx_dp *dp)
{
	return (struct kpx_fakedp *)dp;
}

/* True (and dp->errmsg set, the failure counted) when @call is to fail. */
static bool injected(struct kpx_fakedp *f, enum kpx_fakedp_call call,
		     const char *what)
{
	if (!f->fail || !f->fail(f, call))
		return false;
	f->failed++;
	kpx_dp_fail(&f->dp, -EIO, "fake: %s refused", what);
	return true;
}

/*
 * A deep copy of @v[0..@n) into *@out (malloc'd, never NULL on success),
 * reversed when @reverse.  0 or -ENOMEM.
 */
static int clone_all(struct kpx_service **out, const struct kpx_service *v,
		     size_t n, bool reverse)
{
	struct kpx_service *c = calloc(n ? n : 1, sizeof(*c));
	size_t i;

	if (!c)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (kpx_service_copy(&c[i], &v[reverse ? n - 1 - i : i])) {
			kpx_services_free(c, i);
			return -ENOMEM;
		}
	}
	*out = c;
	return 0;
}

/* *@v (of *@n, capacity *@cap if not NULL) := copy of @src[0..@nsrc). */
static int replace_all(struct kpx_service **v, size_t *n, size_t *cap,
		       const struct kpx_service *src, size_t nsrc)
{
	struct kpx_service *c;

	if (clone_all(&c, src, nsrc, false))
		return -ENOMEM;
	kpx_services_free(*v, *n);
	*v = c;
	*n = nsrc;
	if (cap)
		*cap = nsrc ? nsrc : 1;
	return 0;
}

/* Index of @key's frontend in the pending table, or where it would go. */
static size_t lower_bound(const struct kpx_fakedp *f,
			  const struct kpx_service *key, bool *found)
{
	long i = kpx_service_find(f->pending, f->npending, key);

	*found = i >= 0;
	return (size_t)(i >= 0 ? i : -i - 1);
}

static int pending_set(struct kpx_fakedp *f, const struct kpx_service *s)
{
	struct kpx_service c;
	bool found;
	size_t at = lower_bound(f, s, &found);

	if (kpx_service_copy(&c, s))
		return -ENOMEM;
	if (found) {
		kpx_service_free(&f->pending[at]);
		f->pending[at] = c;
		return 0;
	}
	if (f->npending == f->cap_pending) {
		size_t cap = f->cap_pending ? 2 * f->cap_pending : 16;
		struct kpx_service *v = realloc(f->pending, cap * sizeof(*v));

		if (!v) {
			kpx_service_free(&c);
			return -ENOMEM;
		}
		f->pending = v;
		f->cap_pending = cap;
	}
	memmove(&f->pending[at + 1], &f->pending[at],
		(f->npending - at) * sizeof(*f->pending));
	f->pending[at] = c;
	f->npending++;
	return 0;
}

/* Returns whether @key was there. */
static bool pending_del(struct kpx_fakedp *f, const struct kpx_service *key)
{
	bool found;
	size_t at = lower_bound(f, key, &found);

	if (!found)
		return false;
	kpx_service_free(&f->pending[at]);
	memmove(&f->pending[at], &f->pending[at + 1],
		(f->npending - at - 1) * sizeof(*f->pending));
	f->npending--;
	return true;
}

static int f_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n)
{
	struct kpx_fakedp *f = F(dp);

	f->dumps++;
	if (injected(f, KPX_FAKEDP_DUMP, "dump"))
		return -EIO;
	if (clone_all(out, f->table, f->ntable,
		      f->dump_order == KPX_FAKEDP_DUMP_REVERSED))
		return kpx_dp_fail(dp, -ENOMEM, "fake: dump: out of memory");
	*n = f->ntable;
	return 0;
}

static int f_set_config(struct kpx_dp *dp, const struct kpx_ns_config *c)
{
	struct kpx_fakedp *f = F(dp);

	f->set_configs++;
	return injected(f, KPX_FAKEDP_SET_CONFIG, "set_config") ? -EIO : 0;
}

/* One line of @journal (fakedp.h). */
static void journal(struct kpx_fakedp *f, const char *op,
		    const struct kpx_service *s)
{
	char key[KPX_SERVICE_STRLEN], be[KPX_HOSTPORT_STRLEN];
	size_t i;

	if (!f->journal)
		return;
	kpx_strbuf_printf(f->journal, "%s %s", op,
			  kpx_service_str(s, key, sizeof(key)));
	if (!strcmp(op, "set")) {
		kpx_strbuf_printf(f->journal, " flags=0x%x backends=[",
				  (unsigned int)s->flags);
		for (i = 0; i < s->nbackends; i++)
			kpx_strbuf_printf(f->journal, "%s%s@%u", i ? " " : "",
					  kpx_hostport_str(s->family, &s->backends[i].addr,
							   s->backends[i].port,
							   be, sizeof(be)),
					  (unsigned int)s->backends[i].weight);
		kpx_strbuf_printf(f->journal, "]");
	}
	kpx_strbuf_printf(f->journal, "\n");
}


static int f_set(struct kpx_dp *dp, const struct kpx_service *s)
{
	struct kpx_fakedp *f = F(dp);

	f->sets++;
	if (injected(f, KPX_FAKEDP_SET, "set"))
		return -EIO;
	if (f->refuse) {
		int r = f->refuse(f, s);

		if (r) {
			char key[KPX_SERVICE_STRLEN];

			f->refused++;
			return kpx_dp_fail(dp, r, "fake: refused: %s",
					   kpx_service_str(s, key, sizeof(key)));
		}
	}
	f->last_set = *s;
	f->last_set.backends = NULL;
	f->last_set.source_ranges = NULL;
	f->last_set.name = NULL;
	if (f->hold && pending_set(f, s))
		return kpx_dp_fail(dp, -ENOMEM, "fake: set: out of memory");
	f->pending_changed = true;
	f->generation++;
	journal(f, "set", s);
	return 0;
}

/* Only @key's key is read: its pointers may be into the syncer's state. */
static int f_del(struct kpx_dp *dp, const struct kpx_service *key)
{
	struct kpx_fakedp *f = F(dp);

	f->dels++;
	if (injected(f, KPX_FAKEDP_DEL, "del"))
		return -EIO;
	if (f->hold && pending_del(f, key)) {
		f->pending_changed = true;
		f->generation++;
	}
	journal(f, "del", key);
	return 0;
}

static int f_generation(struct kpx_dp *dp, uint32_t *gen)
{
	struct kpx_fakedp *f = F(dp);

	f->generations++;
	if (!f->has_generation)
		return -EOPNOTSUPP;
	*gen = f->generation;
	return 0;
}

static int f_commit(struct kpx_dp *dp)
{
	struct kpx_fakedp *f = F(dp);
	bool fail = f->fail_commits > 0;

	f->commits++;
	if (fail) {
		f->fail_commits--;
		f->failed++;
		kpx_dp_fail(dp, -EIO, "fake: commit refused");
	} else {
		fail = injected(f, KPX_FAKEDP_COMMIT, "commit");
	}
	if (!f->hold)
		return fail ? -EIO : 0;
	if (!f->pending_changed)	/* nothing to apply or to lose */
		return fail ? -EIO : 0;
	f->pending_changed = false;
	if (fail) {	/* every change since the last commit is lost */
		if (replace_all(&f->pending, &f->npending, &f->cap_pending,
				f->table, f->ntable))
			return kpx_dp_fail(dp, -ENOMEM, "fake: commit: out of memory");
		return -EIO;
	}
	if (replace_all(&f->table, &f->ntable, NULL, f->pending, f->npending))
		return kpx_dp_fail(dp, -ENOMEM, "fake: commit: out of memory");
	return 0;
}

static const struct kpx_dp_ops fake_ops = {
	.name = "fake",
	.dump = f_dump,
	.set_config = f_set_config,
	.set_service = f_set,
	.del_service = f_del,
	.commit = f_commit,
	.generation = f_generation,
};

void kpx_fakedp_init(struct kpx_fakedp *f, const char *name, unsigned int caps)
{
	memset(f, 0, sizeof(*f));
	f->ops = fake_ops;
	f->ops.name = name;
	f->ops.caps = caps;
	f->dp.ops = &f->ops;
	f->generation = 1;
}

static int key_qsort_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

int kpx_fakedp_load(struct kpx_fakedp *f, const struct kpx_service *v, size_t n)
{
	if (replace_all(&f->table, &f->ntable, NULL, v, n))
		return -ENOMEM;
	qsort(f->table, f->ntable, sizeof(*f->table), key_qsort_cmp);
	return replace_all(&f->pending, &f->npending, &f->cap_pending,
			   f->table, f->ntable);
}

void kpx_fakedp_free(struct kpx_fakedp *f)
{
	kpx_services_free(f->table, f->ntable);
	kpx_services_free(f->pending, f->npending);
	f->table = f->pending = NULL;
	f->ntable = f->npending = f->cap_pending = 0;
}
