/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The iptables mode's frontends read back from the kernel, for kpxctl list
 * and flows in that mode: iptables-save and ip6tables-save output read by
 * the layout ipt_rules.h writes (KPX-SERVICES, KPX-FW-, KPX-SVC-, KPX-SEP-
 * chains).  Read-only; links libc only.
 */
#ifndef KPX_IPT_READ_H
#define KPX_IPT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include "base/service.h"

/*
 * Appends to *@v (*@n, realloc'd) the frontends of family @family in
 * iptables-save output @text (the nat and filter tables): from nat
 * KPX-SERVICES the frontends with backends (key, Service name and kind
 * from the rule's comment), their source ranges (KPX-FW- chain), flags
 * masq and masq-nonlocal and the affinity timeout (KPX-SVC- chain), the
 * backends from each KPX-SEP- chain's DNAT with the weights the statistic
 * probabilities give (relative, smallest 1); from filter KPX-SERVICES the
 * frontends without backends (drop-empty when no rule rejects).  The
 * scheduler is "random", the mode's only one.  Each normalized.  0 or
 * -ENOMEM.  *@found is set when the text has the chain KPX-SERVICES.
 */
int kpx_ipt_parse_frontends(const char *text, int family,
			    struct kpx_service **v, size_t *n, bool *found);

/*
 * Both families' frontends of this network namespace (iptables-save -t
 * nat and -t filter, and ip6tables-save's) into *@out (*@n, malloc'd,
 * kpx_services_free()).  -ENOENT when neither family has KPX-SERVICES,
 * another negative errno with the reason in @err.
 */
int kpx_ipt_read(struct kpx_service **out, size_t *n, char *err, size_t errlen);

#endif
