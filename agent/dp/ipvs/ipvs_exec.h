/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Running the netfilter tools --proxy-mode ipvs needs (ipset,
 * iptables-restore, ip6tables-restore, iptables): argv executed from PATH
 * with posix_spawnp, optional text on stdin, stdout and stderr captured.
 */
#ifndef KPX_IPVS_EXEC_H
#define KPX_IPVS_EXEC_H

#include <stddef.h>

/*
 * Runs @argv (NULL-terminated), writing @in (may be NULL) to its stdin.
 * With @out non-NULL, *out is its stdout (malloc'd, NUL-terminated).  On a
 * non-zero exit its stderr (or stdout) is in @err.  Returns 0, -ENOENT
 * when it cannot be run, -EIO when it exited non-zero, -ENOMEM.
 */
int kpx_ipvs_run(const char *const argv[], const char *in, char **out,
		 char *err, size_t errlen);

/* True when @prog is an executable file in PATH. */
int kpx_ipvs_have(const char *prog);

#endif
