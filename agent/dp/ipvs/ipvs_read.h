/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ipvs mode's frontends read back from the kernel, for kpxctl list and
 * flows in that mode: the IPVS services that the mode's ipset KPX-IPVS-SVC
 * (KPX-IPVS6-SVC) names, with their destinations over IPVS's generic
 * netlink, and the settings, Service name and kind from that entry's
 * comment (ipvs_rules.h).  Read-only; links dp/genl.o, ipvs_nl.o,
 * ipvs_exec.o (ipset save) and libnl-genl.
 */
#ifndef KPX_IPVS_READ_H
#define KPX_IPVS_READ_H

#include <stddef.h>
#include "base/service.h"

/*
 * Into *@out (*@n, malloc'd, kpx_services_free()): each backend's
 * active connections (IPVS's) in its @active.  -ENOENT when the SVC sets
 * hold nothing (or ipset is not installed), another negative errno with
 * the reason in @err.
 */
int kpx_ipvs_read(struct kpx_service **out, size_t *n, char *err,
		  size_t errlen);

#endif
