/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A recording fake of the data-plane interface (dataplane.h), for the tests
 * that drive sync.c (test_sync_dp, test_sync_unsorted,
 * test_model_incremental) and for bench/agent/bench_sync.  No kernel state.
 *
 * What it records: the number of calls of each op (failed ones included)
 * and the key of the last set_service(), and on request the changes in
 * order (@journal).  What it holds: @table, sorted by
 * kpx_service_key_cmp(), what dump() returns:
 *   - by default the frontends given to kpx_fakedp_load() (none after
 *     init()); set/del/commit only count.  Costs a few stores per op, so
 *     that bench_sync times sync.c, not the fake.
 *   - with @hold, what was committed: set_service()/del_service() edit a
 *     pending copy, commit() makes it @table, a failed commit() drops it
 *     (all or nothing, as the batching modes nftables and iptables).
 * dump() returns a deep copy of @table in @dump_order (the kpx module dumps
 * in insertion order, which sync.c must sort: test_sync_unsorted).
 * With @has_generation, generation() returns @generation (1 after init()),
 * which, like the kpx module's, grows by one with each successful
 * set_service() and each del_service() of a frontend that was there (with
 * @hold; a test that edits @table as "another writer" bumps it itself);
 * without, it fails with -EOPNOTSUPP (the fallback modes).
 *
 * Failures: @fail_commits fails that many next commit() calls; @fail, when
 * set, is asked before every other op (and before a commit() that
 * @fail_commits does not fail) and fails it when it returns true (random or
 * targeted injection, with @fail_arg).  A failed op returns -EIO with
 * "fake: <op> refused" in dp->errmsg, counts in @failed and changes nothing
 * but the counters (a failed commit() with @hold drops the pending changes).
 *
 * Refusals: @refuse, when set, is asked before every set_service() (after
 * @fail) and, when it returns a negative errno, the set is refused with it
 * and "fake: refused: <key>" in dp->errmsg (a data plane refusing one
 * frontend's content, as the kpx module answers -E2BIG / -EINVAL with an
 * extack message); counted in @refused, nothing changed.
 *
 * Depends only on dataplane.h, service.h and nl.h (kpx_services_free()),
 * so that bench_sync can link it against older builds of libkpx.a.
 */
#ifndef KPX_TESTS_FAKEDP_H
#define KPX_TESTS_FAKEDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/dataplane.h"
#include "base/service.h"
#include "base/strbuf.h"

/* The ops, for @fail. */
enum kpx_fakedp_call {
	KPX_FAKEDP_DUMP,
	KPX_FAKEDP_SET_CONFIG,
	KPX_FAKEDP_SET,
	KPX_FAKEDP_DEL,
	KPX_FAKEDP_COMMIT,
};

/* Order of dump()'s result. */
enum kpx_fakedp_order {
	KPX_FAKEDP_DUMP_SORTED,		/* by kpx_service_key_cmp() */
	KPX_FAKEDP_DUMP_REVERSED,	/* descending key order */
};

struct kpx_fakedp {
	struct kpx_dp dp;	/* first: &f->dp is what kpx_sync_new() gets */
	struct kpx_dp_ops ops;	/* this instance's name and caps */

	/* Options: set after kpx_fakedp_init(), before the first sync. */
	bool hold;			/* see the top comment */
	bool has_generation;		/* see the top comment */
	uint32_t generation;
	enum kpx_fakedp_order dump_order;
	int fail_commits;		/* commit() calls to fail from now */
	bool (*fail)(struct kpx_fakedp *f, enum kpx_fakedp_call call);
	void *fail_arg;			/* for @fail */
	int (*refuse)(struct kpx_fakedp *f, const struct kpx_service *s);
	void *refuse_arg;		/* for @refuse */

	/* Records: calls of each op, the failed ones included. */
	long dumps, set_configs, sets, dels, commits, generations;
	long failed;			/* ops failed by injection */
	long refused;			/* sets refused by @refuse */
	/* The last set_service()'s frontend, its pointers NULL: the key,
	 * flags and nbackends. */
	struct kpx_service last_set;
	/* When not NULL, each set_service() and del_service() that
	 * succeeds is appended as one line, "set KEY flags=0xF
	 * backends=[ADDR:PORT@WEIGHT ...]" or "del KEY": the changes
	 * sent, for tests that compare two syncs'. */
	struct kpx_strbuf *journal;

	/* What dump() returns (owned, sorted by key); read-only for tests. */
	struct kpx_service *table;
	size_t ntable;

	/* With @hold: the state since the last commit(). */
	struct kpx_service *pending;
	size_t npending, cap_pending;
	bool pending_changed;		/* since the last commit() */
};

/*
 * Zeroes @f and sets it up as a data plane named @name (logged by sync.c)
 * with the KPX_DP_CAP_* @caps.  Give KPX_DP_CAP_CT_CLEANUP unless the test
 * means sync.c to plan conntrack cleanup: without it sync.c deletes stale
 * UDP/SCTP entries of the host through ctnetlink.
 */
void kpx_fakedp_init(struct kpx_fakedp *f, const char *name, unsigned int caps);

/*
 * Replaces @table with a deep copy of @v[0..@n) (any order; sorted here):
 * what the data plane already holds before the first sync.  0 or -ENOMEM.
 */
int kpx_fakedp_load(struct kpx_fakedp *f, const struct kpx_service *v, size_t n);

/* Frees what @f holds (not @f). */
void kpx_fakedp_free(struct kpx_fakedp *f);

#endif
