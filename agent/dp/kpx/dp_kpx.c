// SPDX-License-Identifier: GPL-2.0-only
/*
 * --proxy-mode kpx: the data plane is the kpx module, programmed over its
 * generic-netlink family (nl.c).  Every change is sent at once; the module
 * reads its state back and cleans conntrack itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kpx.h>

#include "base/sysctl.h"
#include "dp/dataplane.h"
#include "base/log.h"
#include "dp/kpx/nl.h"

struct dp_kpx {
	struct kpx_dp dp;
	struct kpx_nl *nl;
	struct kpx_nl_notify *notify;	/* module load/unload, or NULL */
};

static struct dp_kpx *to_kpx(struct kpx_dp *dp)
{
	return (struct dp_kpx *)dp;
}

/* Copies the kernel's extack message of the last failure into errmsg. */
static int nl_result(struct dp_kpx *k, int r)
{
	if (r)
		kpx_dp_fail(&k->dp, r, "%s", kpx_nl_errmsg(k->nl));
	return r;
}

static int kpx_open(struct kpx_dp **out, unsigned int flags, char *err,
		    size_t errlen)
{
	struct dp_kpx *k = calloc(1, sizeof(*k));
	int r;

	if (!k)
		return -ENOMEM;
	r = kpx_nl_open(&k->nl);
	if (r == -ENOENT && !(flags & KPX_DP_OPEN_CLEANUP) && kpx_modprobe("kpx")) {
		kpx_info("dataplane", "loaded the kpx module (modprobe kpx)");
		r = kpx_nl_open(&k->nl);
	}
	if (r) {
		if (r == -ENOENT)
			snprintf(err, errlen, "kpx module not loaded (generic netlink family \"kpx\" not found) and modprobe kpx failed");
		else
			snprintf(err, errlen, "netlink: %s", strerror(-r));
		free(k);
		return r;
	}
	if (!(flags & KPX_DP_OPEN_CLEANUP)) {
		r = kpx_nl_notify_open(&k->notify);
		if (r)
			kpx_warn("dataplane", "cannot watch the kpx module's loads and unloads (nlctrl notify): %s; a reloaded module is programmed again at the next --sync-period",
				 strerror(-r));
	}
	*out = &k->dp;
	return 0;
}

static void kpx_close(struct kpx_dp *dp)
{
	kpx_nl_notify_close(to_kpx(dp)->notify);
	kpx_nl_close(to_kpx(dp)->nl);
	free(dp);
}

static int kpx_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n)
{
	return nl_result(to_kpx(dp), kpx_nl_dump(to_kpx(dp)->nl, out, n));
}

static int kpx_set_config(struct kpx_dp *dp, const struct kpx_ns_config *c)
{
	int r = kpx_nl_set_config(to_kpx(dp)->nl, c);

	/* A module without KPX_CMD_SET_CONFIG: fine while nothing is set. */
	if (r == -EOPNOTSUPP && !c->nlocal_cidrs && !c->local_ifname[0] &&
	    !c->local_ifprefix[0])
		return 0;
	return nl_result(to_kpx(dp), r);
}

static int kpx_set_service(struct kpx_dp *dp, const struct kpx_service *s)
{
	return nl_result(to_kpx(dp), kpx_nl_set_service(to_kpx(dp)->nl, s));
}

/*
 * The module's documented limits (uapi/linux/kpx.h), so that a frontend
 * over them is refused by name before anything is sent.  Where the header
 * names no limit, the module's own answer is the only check.
 */
#if defined(KPX_SOURCE_RANGES_MAX)
#define SOURCE_RANGES_MAX KPX_SOURCE_RANGES_MAX
#elif defined(KPX_CIDRS_MAX)
#define SOURCE_RANGES_MAX KPX_CIDRS_MAX
#endif

static int kpx_check_service(struct kpx_dp *dp, const struct kpx_service *s)
{
#ifdef KPX_BACKENDS_MAX
	if (s->nbackends > KPX_BACKENDS_MAX)
		return kpx_dp_fail(dp, -E2BIG, "%zu backends, the kpx module takes at most %d per frontend",
				   s->nbackends, KPX_BACKENDS_MAX);
#endif
#ifdef SOURCE_RANGES_MAX
	if (s->nsource_ranges > SOURCE_RANGES_MAX)
		return kpx_dp_fail(dp, -E2BIG, "%zu source ranges, the kpx module takes at most %d per frontend",
				   s->nsource_ranges, SOURCE_RANGES_MAX);
#endif
	(void)dp;
	(void)s;
	return 0;
}

static int kpx_del_service(struct kpx_dp *dp, const struct kpx_service *key)
{
	int r = kpx_nl_del_service(to_kpx(dp)->nl, key);

	return nl_result(to_kpx(dp), r == -ENOENT ? 0 : r);	/* gone: wanted */
}

static int kpx_commit(struct kpx_dp *dp)
{
	(void)dp;
	return 0;
}

static int kpx_generation(struct kpx_dp *dp, uint32_t *gen)
{
	struct kpx_nl_stats st;
	int r = kpx_nl_stats(to_kpx(dp)->nl, &st);

	if (r)
		return nl_result(to_kpx(dp), r);
	*gen = st.generation;
	return st.generation ? 0 : -EOPNOTSUPP;	/* an older module */
}

static int kpx_event_fd(struct kpx_dp *dp)
{
	return to_kpx(dp)->notify ? kpx_nl_notify_fd(to_kpx(dp)->notify) : -1;
}

/*
 * The module unloaded (its frontends and settings gone with it: logged) or
 * loaded again (empty, under a new family id: the socket is opened again
 * and the syncer programs it from scratch).
 */
static int kpx_events(struct kpx_dp *dp)
{
	struct dp_kpx *k = to_kpx(dp);
	int ev, r, replaced = 0;

	if (!k->notify)
		return 0;
	ev = kpx_nl_notify_read(k->notify);
	if (ev & KPX_NL_FAMILY_DEL)
		kpx_warn("dataplane", "the kpx module was unloaded (generic netlink family \"%s\" gone): its frontends are gone until it is loaded again",
			 KPX_GENL_NAME);
	if (ev & KPX_NL_FAMILY_NEW) {
		r = kpx_nl_reopen(&k->nl);
		if (r) {
			kpx_err("dataplane", "the kpx module was loaded again, but opening its family failed: %s",
				strerror(-r));
		} else {
			replaced = 1;
			kpx_info("dataplane", "the kpx module was loaded (generic netlink family \"%s\" registered): programming it from scratch",
				 KPX_GENL_NAME);
		}
	}
	/* a sync on the old socket would only fail: none until a reopen works */
	return replaced;
}

static int kpx_cleanup(struct kpx_dp *dp)
{
	return nl_result(to_kpx(dp), kpx_nl_flush(to_kpx(dp)->nl));
}

const struct kpx_dp_ops kpx_dp_kpx = {
	.name = "kpx",
	.caps = KPX_DP_CAP_CT_CLEANUP | KPX_DP_CAP_DUMP,
	.open = kpx_open,
	.close = kpx_close,
	.dump = kpx_dump,
	.set_config = kpx_set_config,
	.set_service = kpx_set_service,
	.check_service = kpx_check_service,
	.del_service = kpx_del_service,
	.commit = kpx_commit,
	.generation = kpx_generation,
	.event_fd = kpx_event_fd,
	.events = kpx_events,
	.cleanup = kpx_cleanup,
};
