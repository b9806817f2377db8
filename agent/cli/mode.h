/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where kpxctl list and flows read the frontends: the kpx module, or the
 * kernel state one of the agent's fallback modes wrote (nftables tables,
 * iptables chains, IPVS services with the mode's ipsets), read by the
 * layout that mode writes (dp/nft/nft_read.h, dp/ipt/ipt_read.h,
 * dp/ipvs/ipvs_read.h).
 */
#ifndef KPX_CLI_MODE_H
#define KPX_CLI_MODE_H

#include <stddef.h>
#include "base/service.h"
#include "cli/kpxctl.h"

/*
 * Takes "--mode MODE" out of @argv (*@argc updated) into *@mode: "kpx",
 * "nftables", "iptables", "ipvs", or NULL (absent: choose).  0, or
 * EXIT_USAGE after the usage error.
 */
int mode_flag(const struct cmd *cmd, int *argc, char **argv, const char **mode);

/*
 * The frontends of @mode (NULL: the kpx module when it is loaded and
 * holds frontends, else the first fallback mode whose state is present:
 * nftables, ipvs, iptables; else the module, empty) into *@v (*@n,
 * kpx_services_free()), the mode read in *@used.  0, or 1 after the error
 * on stderr (@what names the command).
 */
int mode_frontends(const char *mode, const char *what, struct kpx_service **v,
		   size_t *n, const char **used);

#endif
