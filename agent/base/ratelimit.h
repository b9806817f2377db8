/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Client-side request rate limit, as client-go's token bucket
 * (--kube-api-qps, --kube-api-burst): the bucket holds at most @burst
 * tokens, refills at @qps tokens per second and starts full; a request
 * takes one token.  Pure: the caller passes the monotonic time.
 */
#ifndef KPX_RATELIMIT_H
#define KPX_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct kpx_ratelimit {
	double qps;		/* tokens per second; <= 0: unlimited */
	double burst;		/* bucket size, >= 1 */
	double tokens;
	int64_t last_ms;	/* time of the last refill */
};

/* @qps <= 0 disables the limit; @burst < 1 is taken as 1. */
void kpx_ratelimit_init(struct kpx_ratelimit *rl, double qps, int burst,
			int64_t now_ms);

/*
 * Takes a token at @now_ms if there is one: returns 0.  Otherwise returns
 * the milliseconds (>= 1) until one is available and takes nothing.
 */
int64_t kpx_ratelimit_take(struct kpx_ratelimit *rl, int64_t now_ms);

#endif
