/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx packet-path counters, per CPU (the IPVS model): a new connection
 * only touches the current CPU's copy, readers sum every CPU's copy.  On
 * 32-bit kernels u64_stats_sync lets a reader retry a torn 64-bit read; on
 * 64-bit it costs nothing.  Writers disable bottom halves so that a
 * softirq cannot interleave with a process-context writer on one CPU (the
 * NAT hook runs in both: PRE_ROUTING in softirq, LOCAL_OUT in the sender's
 * context).
 */
#ifndef _KPX_STATS_H
#define _KPX_STATS_H

#include <linux/percpu.h>
#include <linux/bottom_half.h>
#include <linux/u64_stats_sync.h>

/* One CPU's counters of a namespace or a frontend (drops, invalid: namespace). */
struct kpx_stats_pcpu {
	u64_stats_t conns;	/* new connections DNATed to a backend */
	u64_stats_t rejects;	/* refused for want of a backend */
	u64_stats_t drops;	/* dropped (KPX_SVC_F_DROP_EMPTY, NAT error) */
	u64_stats_t filtered;	/* dropped by KPX_SVC_A_SOURCE_RANGES */
	u64_stats_t invalid;	/* INVALID packets of kpx's flows dropped */
	struct u64_stats_sync syncp;
};

/* One CPU's count of the new connections sent to one backend. */
struct kpx_be_pcpu {
	u64_stats_t conns;
	struct u64_stats_sync syncp;
};

/* The sum over every CPU, as the uapi counters report it. */
struct kpx_stats {
	u64 conns;
	u64 rejects;
	u64 drops;
	u64 filtered;
	u64 invalid;
};

struct kpx_stats_pcpu __percpu *kpx_stats_alloc(void);
void kpx_stats_free(struct kpx_stats_pcpu __percpu *st);
void kpx_stats_sum(const struct kpx_stats_pcpu __percpu *st,
		   struct kpx_stats *sum);
struct kpx_be_pcpu __percpu *kpx_be_stats_alloc(void);
void kpx_be_stats_free(struct kpx_be_pcpu __percpu *st);
u64 kpx_be_stats_conns(const struct kpx_be_pcpu __percpu *st);

/*
 * kpx_stat_inc2 - add one to @field of two counter sets (a frontend's and
 * its namespace's, either may be NULL) on the current CPU; any context.
 */
#define kpx_stat_inc2(a, b, field) do {					\
		struct kpx_stats_pcpu __percpu *_a = (a), *_b = (b);	\
		struct kpx_stats_pcpu *_s;				\
									\
		local_bh_disable();					\
		if (_a) {						\
			_s = this_cpu_ptr(_a);				\
			u64_stats_update_begin(&_s->syncp);		\
			u64_stats_inc(&_s->field);			\
			u64_stats_update_end(&_s->syncp);		\
		}							\
		if (_b) {						\
			_s = this_cpu_ptr(_b);				\
			u64_stats_update_begin(&_s->syncp);		\
			u64_stats_inc(&_s->field);			\
			u64_stats_update_end(&_s->syncp);		\
		}							\
		local_bh_enable();					\
	} while (0)

#define kpx_stat_inc(a, field)	kpx_stat_inc2(a, NULL, field)

/* kpx_be_stat_inc - one more connection sent to a backend; any context. */
static inline void kpx_be_stat_inc(struct kpx_be_pcpu __percpu *st)
{
	struct kpx_be_pcpu *s;

	local_bh_disable();
	s = this_cpu_ptr(st);
	u64_stats_update_begin(&s->syncp);
	u64_stats_inc(&s->conns);
	u64_stats_update_end(&s->syncp);
	local_bh_enable();
}

#endif /* _KPX_STATS_H */
