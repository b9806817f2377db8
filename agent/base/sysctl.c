// SPDX-License-Identifier: GPL-2.0-only
/*
 * One sysctl under /proc/sys read, or set to a wanted value with a
 * read-only /proc/sys tolerated on request (sysctl.h), and modprobe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include "base/log.h"
#include "base/sysctl.h"

int kpx_sysctl_read(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "%ld", v) != 1)
		r = -EINVAL;
	fclose(f);
	return r;
}

int kpx_sysctl_write(const char *path, long v)
{
	FILE *f = fopen(path, "we");
	int r = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%ld\n", v) < 0)
		r = -errno;
	if (fclose(f) && !r)
		r = -errno;
	return r;
}

/* ---- one sysctl ------------------------------------------------------ */

/*
 * Sysctls that kpx_sysctl_ensure() found unwritable: warned once each, and
 * rendered by kpx_sysctl_metrics() (the metrics server's thread) while the
 * main thread adds to them.
 */
#define UNSET_MAX 32
static pthread_mutex_t unset_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char name[80];		/* dotted, "net.netfilter.nf_conntrack_max" */
	bool unset;		/* not at the wanted value */
} unset_v[UNSET_MAX];
static size_t unset_n;

/*
 * Records whether @dotted is at its wanted value; returns true when it is
 * not and this is the first time (the caller warns).
 */
static bool note(const char *dotted, bool is_unset)
{
	bool first = false;
	size_t i;

	pthread_mutex_lock(&unset_lock);
	for (i = 0; i < unset_n; i++)
		if (!strcmp(unset_v[i].name, dotted))
			break;
	if (i == unset_n && is_unset && unset_n < UNSET_MAX) {
		snprintf(unset_v[i].name, sizeof(unset_v[i].name), "%s", dotted);
		unset_n++;
		first = true;
	}
	if (i < unset_n)
		unset_v[i].unset = is_unset;
	pthread_mutex_unlock(&unset_lock);
	return first;
}

void kpx_sysctl_metrics(FILE *f)
{
	size_t i;

	pthread_mutex_lock(&unset_lock);
	if (unset_n) {
		fputs("# HELP kpx_sysctl_unset Node sysctls the agent needs at another value and could not set (read-only /proc/sys; see kpx-agent --init-only)\n"
		      "# TYPE kpx_sysctl_unset gauge\n", f);
		for (i = 0; i < unset_n; i++)
			fprintf(f, "kpx_sysctl_unset{sysctl=\"%s\"} %d\n", unset_v[i].name,
				unset_v[i].unset);
	}
	pthread_mutex_unlock(&unset_lock);
}

/* "net/ipv4/vs/conntrack" -> "net.ipv4.vs.conntrack", as sysctl(8) names it. */
static void dotted(const char *name, char *out, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		out[i] = name[i] == '/' ? '.' : name[i];
	out[i] = 0;
}

int kpx_sysctl_ensure(const char *root, const char *name, long want,
		      unsigned int flags, char *err, size_t errlen)
{
	char path[512], dn[80];
	long cur;
	int r;

	snprintf(path, sizeof(path), "%s/proc/sys/%s", root, name);
	dotted(name, dn, sizeof(dn));
	r = kpx_sysctl_read(path, &cur);
	if (!r && cur == want) {
		kpx_dbg(4, "sysctl", "%s = %ld already", dn, want);
		note(dn, false);
		return 0;
	}
	if (flags & KPX_SYSCTL_DRY_RUN) {
		kpx_info("sysctl", "dry run: would set %s = %ld", dn, want);
		return 1;
	}
	if (r) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
		return r;
	}
	r = kpx_sysctl_write(path, want);
	if (!r) {
		kpx_info("sysctl", "set %s = %ld (was %ld)", dn, want, cur);
		note(dn, false);
		return 1;
	}
	if ((flags & KPX_SYSCTL_TOLERANT) && (r == -EROFS || r == -EACCES || r == -EPERM)) {
		if (note(dn, true))
			kpx_warn("sysctl", "cannot set %s = %ld (it is %ld): %s; going on without it (kpx-agent --init-only with the rights to write /proc/sys sets it before the agent: the DaemonSet's init container, the unit's ExecStartPre=)",
				 dn, want, cur, strerror(-r));
		return 0;
	}
	snprintf(err, errlen, "cannot set %s = %ld: %s", path, want, strerror(-r));
	return r;
}

bool kpx_sysctl_readonly(const char *root)
{
	char path[512];
	struct statvfs st;

	snprintf(path, sizeof(path), "%s/proc/sys", root);
	return !statvfs(path, &st) && (st.f_flag & ST_RDONLY);
}

bool kpx_modprobe(const char *module)
{
	char *argv[] = { "modprobe", "-q", (char *)module, NULL };
	extern char **environ;
	int status;
	pid_t pid;

	if (posix_spawnp(&pid, "modprobe", NULL, NULL, argv, environ))
		return false;
	if (waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool kpx_module_loaded(const char *name)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/module/%s", name);
	return !access(p, F_OK) || access("/proc/modules", F_OK);
}
