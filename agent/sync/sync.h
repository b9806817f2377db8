/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Turning the model's desired state into module state, with kube-proxy's
 * BoundedFrequencyRunner timing: a change is synced at once if the last
 * sync was at least min-sync-period ago, else at last + min-sync-period;
 * and everything is re-checked every sync-period (a "full" sync, which
 * re-reads the data plane's state with its dump() and recomputes the
 * desired state).  Between full syncs the last known module state is kept,
 * so a sync sends only changes.
 *
 * Where the data plane has a generation (kpx: KPX_STATS_A_GENERATION), the
 * syncer reads it before and after each sync.  When it moved by exactly
 * the changes this sync applied, the kept state is the data plane's; the
 * periodic re-check is then one generation read, and a dump happens only
 * when the generation shows another writer (kpxctl, a module reload): at
 * the next sync, not at the next sync-period.  So at 50,000 Services the
 * periodic re-check costs O(1), not a dump of every frontend.
 */
#ifndef KPX_SYNC_H
#define KPX_SYNC_H

#include <stdbool.h>
#include <stdint.h>
#include "http/healthcheck.h"
#include "http/metrics.h"
#include "model/model.h"
#include "dp/dataplane.h"

struct kpx_sync;

/*
 * @dp NULL means dry run: start from an empty state and log the changes
 * instead of sending them.  Periods in milliseconds.  @model and @dp must
 * outlive the syncer.  Returns NULL on allocation failure.
 */
struct kpx_sync *kpx_sync_new(struct kpx_model *model, struct kpx_dp *dp,
			      int64_t min_period_ms, int64_t period_ms);
void kpx_sync_free(struct kpx_sync *s);

/*
 * Records every sync into @m (may be NULL): duration, errors, success
 * time; in dry run also the frontends it would have programmed.
 */
void kpx_sync_set_metrics(struct kpx_sync *s, struct kpx_metrics *m);

/*
 * After every sync, serve the model's healthCheckNodePorts with @hc (may be
 * NULL: none) on the node's NodePort addresses; "serviceProxyHealthy" is
 * false when the sync had errors or the proxy is unhealthy (an update pending
 * longer than @health_timeout_ms, see metrics.h).
 */
void kpx_sync_set_healthchecks(struct kpx_sync *s, struct kpx_hc *hc,
			       int64_t health_timeout_ms);

/*
 * When (monotonic ms) the next sync is due: INT64_MIN before the first sync
 * (due now); else last + @min_period when @dirty, but never later than
 * last_full + @period.  Pure, for tests.
 */
int64_t kpx_sync_next_at(bool synced_before, int64_t last, int64_t last_full,
			 bool dirty, int64_t min_period, int64_t period);

/* kpx_sync_next_at() for this syncer and the model's dirty flag. */
int64_t kpx_sync_due(const struct kpx_sync *s);

/*
 * Runs one sync now: full (dump first) when sync-period has passed since
 * the last full one (unless the generation shows no other writer, see
 * above), when another writer changed the data plane, or when the previous
 * sync had errors.  First the namespace
 * settings (kpx_model_ns_config()) are sent if they differ from the last
 * ones sent (KPX_CMD_SET_CONFIG), then the frontend changes, then the
 * health-check servers are updated.  Each failed change
 * is logged with the kernel's extack message and retried at the next
 * (then full) sync; it does not stop the others.
 *
 * A SET that the data plane refuses for that frontend's own content
 * (kpx_dp_err_refused(): more backends or source ranges than it takes, a
 * value it cannot program), found by its check_service() before sending
 * or answered by set_service(), costs only that frontend, as kube-proxy's
 * rule that one bad object costs at most itself: it is logged once per
 * refused value at error level with its Service's "namespace/name", the
 * frontend key and the reason, counted (kpx_metrics_refused()), and set
 * aside; the data plane keeps what it had for that key (its previous
 * value, or nothing).  It is not a sync error: the sync is not full again,
 * the update time /healthz and serviceProxyHealthy read moves on.  The
 * same value is sent again at most once per sync-period (at a later
 * sync, at least sync-period after the last attempt); a changed value is
 * sent at once; a frontend no longer desired is forgotten.  When the
 * refused frontends are most of the desired ones (at least two, more than
 * half), the data plane as a whole is failing (a module of another
 * version refusing every SET): such a sync's refusals count as failed
 * changes, as before.
 *
 * Logs one "sync done" line: duration_ms (wall), cpu_ms (the thread's CPU
 * time, netlink handling in the kernel included), full, frontends, sets,
 * dels, errors, refused (SETs refused in this sync), refused_now
 * (frontends set aside now).  Returns the number of failed changes (refusals not
 * counted), or a negative errno when the sync could not be done at all
 * (dump or model failure).
 */
int kpx_sync_run(struct kpx_sync *s);

/*
 * The agent's status report (base/status.h) into *@st (zeroed first; free
 * with kpx_status_free()): the last sync, the failed changes of the last
 * sync and the refused frontends with their Services and reasons, and,
 * with @have_dp, @dp (the data plane's frontends, @ndp of them, sorted by
 * kpx_service_key_cmp(), read by the caller on a socket of its own), the
 * frontends desired and missing or held otherwise there and those it
 * holds that no Service wants.  Thread-safe against kpx_sync_run(): it
 * waits for a sync running (kpx_sync_run() holds the sync's lock
 * throughout), so read @dp before calling, never under a sync.
 * O(desired + ndp).  0 or -ENOMEM.
 */
struct kpx_status;
int kpx_sync_status(struct kpx_sync *s, const struct kpx_service *dp,
		    size_t ndp, bool have_dp, struct kpx_status *st);

/*
 * The data plane lost its state (dp->ops->events() answered 1: the kpx
 * module was unloaded or loaded again): the next sync is due at once and
 * full (dump, every frontend compared), and the namespace settings are
 * sent again.
 */
void kpx_sync_dp_replaced(struct kpx_sync *s);

#endif
