// SPDX-License-Identifier: GPL-2.0-only
/*
 * Choosing and opening a data plane (--proxy-mode); see dataplane.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dp/dataplane.h"
#include "base/log.h"

extern const struct kpx_dp_ops kpx_dp_kpx;
extern const struct kpx_dp_ops kpx_dp_nft;
extern const struct kpx_dp_ops kpx_dp_iptables;
extern const struct kpx_dp_ops kpx_dp_ipvs;

/* In the order of the automatic choice. */
const struct kpx_dp_ops *const kpx_dp_modes[] = {
	&kpx_dp_kpx,
	&kpx_dp_nft,
	&kpx_dp_iptables,
	&kpx_dp_ipvs,
	NULL,
};

static struct kpx_dp_params params = { .masq_mark = KPX_DP_MASQ_MARK_DEFAULT };

void kpx_dp_set_params(const struct kpx_dp_params *p)
{
	params = *p;
	if (!params.masq_mark)
		params.masq_mark = KPX_DP_MASQ_MARK_DEFAULT;
}

const struct kpx_dp_params *kpx_dp_params(void)
{
	return &params;
}

const struct kpx_dp_ops *kpx_dp_find(const char *name)
{
	size_t i;

	for (i = 0; kpx_dp_modes[i]; i++)
		if (!strcmp(kpx_dp_modes[i]->name, name))
			return kpx_dp_modes[i];
	return NULL;
}

int kpx_dp_open(const char *name, struct kpx_dp **out, char *err, size_t errlen)
{
	const struct kpx_dp_ops *ops;
	char why[512];
	size_t i, len = 0;
	int r = -ENOENT;

	if (name && *name) {
		ops = kpx_dp_find(name);
		if (!ops) {
			snprintf(err, errlen, "proxy mode \"%s\" is not known", name);
			return -EINVAL;
		}
		r = ops->open(out, 0, why, sizeof(why));
		if (r) {
			snprintf(err, errlen, "proxy mode %s cannot work here: %s", name, why);
			return r;
		}
		(*out)->ops = ops;
		return 0;
	}
	err[0] = '\0';
	for (i = 0; kpx_dp_modes[i]; i++) {
		ops = kpx_dp_modes[i];
		/* ipvs is never chosen automatically (deprecated, as kube-proxy). */
		if (!strcmp(ops->name, "ipvs"))
			continue;
		r = ops->open(out, 0, why, sizeof(why));
		if (!r) {
			(*out)->ops = ops;
			kpx_info("dataplane", "proxy mode %s chosen", ops->name);
			return 0;
		}
		kpx_info("dataplane", "proxy mode %s not available: %s", ops->name, why);
		if (len < errlen)
			len += snprintf(err + len, errlen - len, "%s%s: %s",
					len ? "; " : "", ops->name, why);
	}
	return r;
}

int kpx_dp_cleanup_leftovers(const struct kpx_dp_ops *const *modes, const char *in_use)
{
	char why[512];
	int failed = 0;
	size_t i;

	for (i = 0; modes[i]; i++) {
		const struct kpx_dp_ops *ops = modes[i];
		bool own = strcmp(ops->name, in_use) != 0;
		int (*clean)(struct kpx_dp *dp) = own ? ops->cleanup : ops->cleanup_kubeproxy;
		struct kpx_dp *dp;
		int r;

		if (!clean)
			continue;
		r = ops->open(&dp, KPX_DP_OPEN_CLEANUP, why, sizeof(why));
		if (r) {
			kpx_dbg(2, "dataplane", "leftovers: %s: nothing to remove (%s)", ops->name, why);
			continue;
		}
		dp->ops = ops;
		dp->errmsg[0] = '\0';
		r = clean(dp);
		if (r) {
			kpx_warn("dataplane", "removing the leftovers of %s%s failed: %s%s%s",
				 own ? "the proxy mode " : "kube-proxy's state of kind ", ops->name,
				 strerror(-r), dp->errmsg[0] ? ": " : "", dp->errmsg);
			failed++;
		} else {
			kpx_info("dataplane", "leftovers: %s state checked and removed (%s)",
				 ops->name, own ? "a mode not in use: kpx's and kube-proxy's" :
				 "the mode in use: kube-proxy's only");
		}
		ops->close(dp);
	}
	return failed;
}

int kpx_dp_fail(struct kpx_dp *dp, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dp->errmsg, sizeof(dp->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

bool kpx_dp_err_refused(int err)
{
	switch (-err) {
	case EINVAL:
	case E2BIG:
	case ENOSPC:
	case EMSGSIZE:
	case ERANGE:
	case EOVERFLOW:
	case EOPNOTSUPP:
	case EAFNOSUPPORT:
	case EPROTONOSUPPORT:
		return true;
	default:
		return false;
	}
}
