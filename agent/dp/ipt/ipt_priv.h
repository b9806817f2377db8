/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared only by the iptables data plane's files: dp_ipt.c (the data-plane
 * ops) and ipt_tool.c (running iptables-save and iptables-restore).
 */
#ifndef KPX_IPT_PRIV_H
#define KPX_IPT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/service.h"
#include "dp/dataplane.h"
#include "dp/ipt/ipt_rules.h"

enum { V4, V6, NFAM };

struct ipt_op {
	bool del;
	size_t seq;
	struct kpx_service s;	/* owned (deep copy); only the key if del */
};

struct dp_ipt {
	struct kpx_dp dp;
	char restore[NFAM][PATH_MAX], save[NFAM][PATH_MAX], cmd[NFAM][PATH_MAX];
	struct kpx_service *cur;	/* committed, sorted, owned */
	size_t ncur;
	struct ipt_op *ops;		/* queued since the last commit */
	size_t nops;
	struct kpx_ns_config cfg;
	bool dirty[NFAM];
	bool cfg_changed;		/* set_config() since the last commit */
	bool full;
	int64_t last_full;		/* monotonic ms of the last full commit */
	bool localnet;			/* route_localnet set by us */
	bool liberal_read;		/* drop_invalid decided (first commit) */
	bool drop_invalid;		/* nf_conntrack_tcp_be_liberal was 0 */
};

static inline struct dp_ipt *to_ipt(struct kpx_dp *dp)
{
	return (struct dp_ipt *)dp;
}

/* ipt_tool.c */
int ipt_fam_index(int family);
bool ipt_find_tool(const char *name, char *out, size_t len);
int ipt_run_tool(char *const argv[], const char *input, size_t inlen,
		 char **out, char **err);
const char *ipt_first_lines(char *s, size_t max);
int ipt_save(struct dp_ipt *d, int f, char **out);
int ipt_restore(struct dp_ipt *d, int f, const char *text, size_t len);
bool ipt_saving_loads_nothing(void);

#endif
