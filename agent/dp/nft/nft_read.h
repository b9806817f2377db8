/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The nftables mode's frontends read back from the kernel, for kpxctl list
 * and flows in that mode: the tables "ip kpx" and "ip6 kpx" listed as
 * libnftables JSON and read by the layout nft_rules.h writes.  Read-only;
 * links libnftables and json-c only.
 */
#ifndef KPX_NFT_READ_H
#define KPX_NFT_READ_H

#include <stddef.h>
#include "base/service.h"

/*
 * Appends to *@v (*@n entries, realloc'd) the frontends of one table's
 * `nft -j list table` output @json: key, backends (from the ep- chains'
 * dnat) and weights (the dispatch map's ranges), flags (cluster-ip from
 * the cluster-ips set, masq and masq-nonlocal from the svc- chain's
 * jumps, drop-empty from the no-endpoint map's verdict), source ranges
 * (fw- chains), the scheduler (numgen random: "random", inc: "rr", jhash:
 * "sh"), the affinity timeout (aff- sets) and the Service name and kind
 * from the map elements' comments (NULL name without one).  Each
 * normalized.  0, -EINVAL (not such output) or -ENOMEM.
 */
int kpx_nft_parse_json(const char *json, struct kpx_service **v, size_t *n);

/*
 * Both families' tables of this network namespace into *@out (*@n,
 * malloc'd, kpx_services_free()).  -ENOENT when neither table exists,
 * another negative errno with the reason in @err.
 */
int kpx_nft_read(struct kpx_service **out, size_t *n, char *err, size_t errlen);

#endif
