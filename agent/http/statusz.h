/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * /statusz on the metrics server: the agent's status report
 * (base/status.h) as one JSON object, for kpxctl status.
 */
#ifndef KPX_STATUSZ_H
#define KPX_STATUSZ_H

#include "base/status.h"

/*
 * @st with the proxy @mode as a malloc'd JSON string, or NULL (ENOMEM):
 * {"mode", "synced", "last_sync": {"time" (RFC 3339, UTC), "unix_ms",
 * "duration_seconds", "full", "errors", "sets", "dels", "failed": LIST},
 * "desired", "compared", "programmed", "refused", "missing", "differ",
 * "unexpected": LIST}; a LIST is {"total", "items": [{"frontend"
 * ("10.96.0.10:80/tcp"), "service" (null: none), "kind", "reason"}]}.
 */
char *kpx_statusz_json(const struct kpx_status *st, const char *mode);

#endif
