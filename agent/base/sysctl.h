/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sysctls under /proc/sys (or a scratch root in tests) and modprobe: what
 * the node set-up (config/ctsysctl.h) and the data planes change on the
 * node.  No library types.
 */
#ifndef KPX_SYSCTL_H
#define KPX_SYSCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Reads the decimal value of the file @path into *v; 0 or -errno. */
int kpx_sysctl_read(const char *path, long *v);
/* Writes @v and a newline to @path; 0 or -errno. */
int kpx_sysctl_write(const char *path, long v);

/* Flags of kpx_sysctl_ensure(), kpx_ct_apply() and kpx_mode_sysctls(). */
#define KPX_SYSCTL_DRY_RUN	0x1	/* write nothing, log each change */
#define KPX_SYSCTL_TOLERANT	0x2	/* a read-only /proc/sys is a warning */

/*
 * Sets the sysctl @name (a path under /proc/sys, "net/ipv4/vs/conntrack";
 * @root "" for the node, a scratch directory in tests) to @want unless it
 * has that value already (then only a debug line is logged).  Returns 1
 * when written (or, with KPX_SYSCTL_DRY_RUN, when it would be), 0 when it
 * had the value, or -errno with the file and the reason in @err.
 *
 * With KPX_SYSCTL_TOLERANT a write refused with EROFS, EACCES or EPERM (a
 * container's read-only /proc/sys, systemd's ProtectKernelTunables=, no
 * capability) is not an error: the first time for @name it is logged as a
 * warning naming the value wanted and the value found, the sysctl is
 * counted in the kpx_sysctl_unset metric (kpx_sysctl_metrics()) until it
 * has the wanted value, and 0 is returned.  "kpx-agent --init-only", run
 * with the rights to write /proc/sys, sets them before the agent starts.
 */
int kpx_sysctl_ensure(const char *root, const char *name, long want,
		      unsigned int flags, char *err, size_t errlen);

/*
 * Whether /proc/sys under @root is mounted read-only (statvfs ST_RDONLY):
 * logged once at info level by the agent.
 */
bool kpx_sysctl_readonly(const char *root);

/*
 * Appends the Prometheus gauge kpx_sysctl_unset{sysctl="net.x.y"} (1 per
 * sysctl that kpx_sysctl_ensure() could not set to its wanted value) to @f.
 * Thread-safe.
 */
void kpx_sysctl_metrics(FILE *f);

/*
 * Runs "modprobe -q @module" (the data planes and ctsysctl.c load what they
 * need, as kube-proxy does); true when it exited 0.
 */
bool kpx_modprobe(const char *module);

/*
 * Whether kernel module @name is loaded (/sys/module/NAME), or the kernel
 * takes no modules (no /proc/modules: everything is built in).  For
 * readers that must not make the kernel load one by asking (netlink
 * families and nfnetlink subsystems load theirs on demand).
 */
bool kpx_module_loaded(const char *name);

#endif
