// SPDX-License-Identifier: GPL-2.0-only
/* kpx per-CPU counters: allocation and the readers' sums (stats.h). */
#include <linux/percpu.h>
#include <linux/gfp.h>

#include "stats.h"

/**
 * kpx_stats_alloc - zeroed per-CPU counters, charged to the caller's
 * memory cgroup
 *
 * Process context.  Return: the counters, or NULL.
 */
struct kpx_stats_pcpu __percpu *kpx_stats_alloc(void)
{
	struct kpx_stats_pcpu __percpu *st;
	int cpu;

	st = alloc_percpu_gfp(struct kpx_stats_pcpu, GFP_KERNEL_ACCOUNT);
	if (!st)
		return NULL;
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(st, cpu)->syncp);
	return st;
}

/** kpx_stats_free - free kpx_stats_alloc()'s counters (NULL is fine). */
void kpx_stats_free(struct kpx_stats_pcpu __percpu *st)
{
	free_percpu(st);
}

/**
 * kpx_stats_sum - the counters summed over every possible CPU
 * @st: the per-CPU counters (NULL: all zero)
 * @sum: set to the sums
 *
 * Any context; O(number of possible CPUs).  Each CPU's copy is read
 * consistently; the sum is not atomic across CPUs (like IPVS's).
 */
void kpx_stats_sum(const struct kpx_stats_pcpu __percpu *st,
		   struct kpx_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	if (!st)
		return;
	for_each_possible_cpu(cpu) {
		const struct kpx_stats_pcpu *s = per_cpu_ptr(st, cpu);
		u64 conns, rejects, drops, filtered, invalid;
		unsigned int seq;

		do {
			seq = u64_stats_fetch_begin(&s->syncp);
			conns = u64_stats_read(&s->conns);
			rejects = u64_stats_read(&s->rejects);
			drops = u64_stats_read(&s->drops);
			filtered = u64_stats_read(&s->filtered);
			invalid = u64_stats_read(&s->invalid);
		} while (u64_stats_fetch_retry(&s->syncp, seq));
		sum->conns += conns;
		sum->rejects += rejects;
		sum->drops += drops;
		sum->filtered += filtered;
		sum->invalid += invalid;
	}
}

/**
 * kpx_be_stats_alloc - a backend's zeroed per-CPU connection counter,
 * charged to the caller's memory cgroup
 *
 * Process context.  Return: the counter, or NULL.
 */
struct kpx_be_pcpu __percpu *kpx_be_stats_alloc(void)
{
	struct kpx_be_pcpu __percpu *st;
	int cpu;

	st = alloc_percpu_gfp(struct kpx_be_pcpu, GFP_KERNEL_ACCOUNT);
	if (!st)
		return NULL;
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(st, cpu)->syncp);
	return st;
}

/** kpx_be_stats_free - free kpx_be_stats_alloc()'s counter (NULL is fine). */
void kpx_be_stats_free(struct kpx_be_pcpu __percpu *st)
{
	free_percpu(st);
}

/**
 * kpx_be_stats_conns - a backend's connections, summed over every possible
 * CPU
 * @st: the per-CPU counter
 *
 * Any context; O(number of possible CPUs); not atomic across CPUs.
 * Return: the sum (KPX_BE_A_CONNS).
 */
u64 kpx_be_stats_conns(const struct kpx_be_pcpu __percpu *st)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct kpx_be_pcpu *s = per_cpu_ptr(st, cpu);
		unsigned int seq;
		u64 v;

		do {
			seq = u64_stats_fetch_begin(&s->syncp);
			v = u64_stats_read(&s->conns);
		} while (u64_stats_fetch_retry(&s->syncp, seq));
		sum += v;
	}
	return sum;
}
