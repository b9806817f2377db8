/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kpx generic-netlink family from userspace (libnl-genl-3 only).
 * All functions return 0 or a negative errno; after a kernel error the extack
 * message, if any, is returned by kpx_nl_errmsg().
 */
#ifndef KPX_NL_H
#define KPX_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdint.h>
#include "base/service.h"

struct kpx_nl;

struct kpx_nl_stats {
	uint32_t services, backends;
	uint64_t conns, rejects, drops;
	uint32_t generation;	/* KPX_STATS_A_GENERATION; 0: an older module */
	uint64_t filtered;	/* KPX_STATS_A_FILTERED; 0: an older module */
	uint64_t invalid_drops;	/* KPX_STATS_A_INVALID_DROPS; 0: an older module */
	/* KPX_STATS_A_CT_DELETED4, _6: [0] IPv4, [1] IPv6 */
	uint64_t ct_deleted[2];
	bool ct_deleted_known;	/* the module sent them (an older one does not) */
};

/*
 * One counter the module reports, in KPX_CMD_GET_STATS (struct
 * kpx_nl_stats), per frontend (struct kpx_service, a dump's
 * KPX_SVC_A_*) or per backend (struct kpx_backend, KPX_BE_A_*): the one
 * list that the parsers, kpxctl (stats, list) and /metrics read.
 */
struct kpx_nl_counter {
	const char *name;	/* kpxctl's: the JSON key, "name: value" line */
	const char *column;	/* kpxctl list's column header, or NULL */
	int width;		/* that column's width */
	int attr;		/* KPX_STATS_A_*, KPX_SVC_A_* or KPX_BE_A_* */
	size_t offset;		/* of the value in its struct */
	unsigned int size;	/* of the value: 4 (u32) or 8 (u64) bytes */
	const char *metric;	/* its /metrics series, or NULL: none */
	const char *type;	/* the series' "counter" or "gauge" */
	const char *help;	/* the series' HELP text */
};

/* The tables, each ended by a row whose name is NULL, in output order. */
extern const struct kpx_nl_counter kpx_nl_stats_counters[];
extern const struct kpx_nl_counter kpx_nl_frontend_counters[];
extern const struct kpx_nl_counter kpx_nl_backend_counters[];

/* The value of @c in @obj (a struct kpx_nl_stats, kpx_service or
 * kpx_backend, as @c's table says). */
uint64_t kpx_nl_counter_get(const struct kpx_nl_counter *c, const void *obj);

/* Stores netlink attribute @nla's value (of @c's size) into @obj's field. */
struct nlattr;
void kpx_nl_counter_parse(const struct kpx_nl_counter *c, void *obj,
			  const struct nlattr *nla);

/*
 * Opens a socket in the caller's network namespace and resolves the family.
 * -ENOENT when the family "kpx" is not registered (module not loaded).
 */
int kpx_nl_open(struct kpx_nl **out);
void kpx_nl_close(struct kpx_nl *nl);
/*
 * Opens a new socket (the family's id resolved anew: a module unloaded and
 * loaded again registers it under a new one) and only then closes *@nl and
 * puts the new one there.  0, or a negative errno with *@nl kept.
 */
int kpx_nl_reopen(struct kpx_nl **nl);

/*
 * The module's comings and goings (nl_notify.c): a socket subscribed to
 * the generic netlink controller's "notify" group, non-blocking.  Its
 * descriptor (kpx_nl_notify_fd()) becomes readable on every family event;
 * kpx_nl_notify_read() then reads all pending ones and returns which of
 * KPX_NL_FAMILY_NEW (the family "kpx" registered: the module loaded, empty)
 * and KPX_NL_FAMILY_DEL (unregistered: the module unloaded, its frontends
 * gone) it saw, both when notifications were lost (receive buffer
 * overrun), 0 for none.  A kpx_nl opened before a KPX_NL_FAMILY_NEW holds
 * the old family id: open a new one.  open: 0 or -errno.
 */
enum { KPX_NL_FAMILY_NEW = 1, KPX_NL_FAMILY_DEL = 2 };
struct kpx_nl_notify;
int kpx_nl_notify_open(struct kpx_nl_notify **out);
void kpx_nl_notify_close(struct kpx_nl_notify *n);
int kpx_nl_notify_fd(const struct kpx_nl_notify *n);
int kpx_nl_notify_read(struct kpx_nl_notify *n);
/* The last extack message from the kernel, or "" (never NULL). */
const char *kpx_nl_errmsg(const struct kpx_nl *nl);

int kpx_nl_set_service(struct kpx_nl *nl, const struct kpx_service *s);
int kpx_nl_del_service(struct kpx_nl *nl, const struct kpx_service *key);
int kpx_nl_flush(struct kpx_nl *nl);
int kpx_nl_ct_sync(struct kpx_nl *nl);
/*
 * Dumps every frontend; on success *out is a malloc'd array of *n services
 * (each normalized), to be freed with kpx_services_free().  Retries a dump
 * interrupted by a concurrent change (NLM_F_DUMP_INTR).
 */
int kpx_nl_dump(struct kpx_nl *nl, struct kpx_service **out, size_t *n);
/*
 * As kpx_nl_dump(), but the backends are only counted: each frontend's
 * nbackends is set and its backends pointer is NULL (source ranges are
 * read, nothing is normalized).  For /metrics without per-backend series:
 * no allocation per backend.
 */
int kpx_nl_dump_frontends(struct kpx_nl *nl, struct kpx_service **out,
			  size_t *n);
int kpx_nl_stats(struct kpx_nl *nl, struct kpx_nl_stats *st);

/*
 * KPX_CMD_SET_CONFIG: sets every namespace setting of @c (the local
 * prefixes, "" interface name / prefix and an empty list clearing them);
 * compute @c with kpx_model_ns_config().  -EINVAL for more than
 * KPX_CIDRS_MAX prefixes or a kernel rejection (extack in kpx_nl_errmsg()).
 */
int kpx_nl_set_config(struct kpx_nl *nl, const struct kpx_ns_config *c);

/*
 * KPX_CMD_GET_CONFIG: the namespace settings into @c (an attribute the
 * module leaves out reads as empty).  -EBADMSG for a malformed reply or
 * more than KPX_CONFIG_CIDRS_MAX prefixes.
 */
int kpx_nl_get_config(struct kpx_nl *nl, struct kpx_ns_config *c);

/*
 * KPX_CMD_EXPLAIN (nl_explain.c): what the module's packet path would do
 * with a new connection, changing nothing.  @q: the connection (ports in
 * host order, @iif 0 for none); *@out: the answer, the enums and bits of
 * <linux/kpx.h>.  -EOPNOTSUPP from a module without the command, -ENODEV
 * for an unknown @iif, -EBADMSG for a malformed reply.
 */
struct kpx_nl_explain_req {
	int family;
	uint8_t protocol;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} src, dst;
	uint16_t sport, dport;
	uint32_t iif;
	bool local_out;
};

/* A frontend of the answer: KPX_EXP_A_FRONTEND or _SCHED_FRONTEND. */
struct kpx_nl_explain_fe {
	bool present;
	int family;
	uint8_t protocol;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint16_t port;		/* host order */
	uint32_t flags;
	char name[256];		/* "" none */
	uint8_t kind;
	char scheduler[16];
	uint32_t affinity_timeout;
	uint64_t conns, rejects, filtered;
};

struct kpx_nl_explain {
	uint8_t verdict;	/* KPX_EXP_V_* */
	bool has_source, has_sched, has_backend, has_pick, has_masq;
	uint8_t source;		/* KPX_EXP_SRC_* */
	uint8_t ranges;		/* KPX_EXP_RANGES_* */
	bool short_circuit;
	uint8_t affinity;	/* KPX_EXP_AFF_* */
	uint64_t affinity_age_ms;
	char scheduler[16];
	uint32_t nbackends;
	uint8_t pick;		/* KPX_EXP_PICK_* */
	uint8_t masq;		/* KPX_EXP_MASQ_* */
	uint32_t counters;	/* KPX_EXP_C_* */
	struct kpx_nl_explain_fe fe, sfe;
	struct kpx_backend be;
};

int kpx_nl_explain(struct kpx_nl *nl, const struct kpx_nl_explain_req *q,
		   struct kpx_nl_explain *out);

#endif
