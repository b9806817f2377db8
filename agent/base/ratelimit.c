// SPDX-License-Identifier: GPL-2.0-only
/*
 * Token bucket (see ratelimit.h).
 */
#include <math.h>

#include "base/ratelimit.h"

void kpx_ratelimit_init(struct kpx_ratelimit *rl, double qps, int burst,
			int64_t now_ms)
{
	rl->qps = qps;
	rl->burst = burst < 1 ? 1 : burst;
	rl->tokens = rl->burst;
	rl->last_ms = now_ms;
}

int64_t kpx_ratelimit_take(struct kpx_ratelimit *rl, int64_t now_ms)
{
	double wait;

	if (rl->qps <= 0)
		return 0;
	if (now_ms > rl->last_ms) {
		rl->tokens += (double)(now_ms - rl->last_ms) * rl->qps / 1000.0;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
		rl->last_ms = now_ms;
	}
	if (rl->tokens >= 1.0) {
		rl->tokens -= 1.0;
		return 0;
	}
	wait = ceil((1.0 - rl->tokens) * 1000.0 / rl->qps);
	return wait < 1 ? 1 : (int64_t)wait;
}
