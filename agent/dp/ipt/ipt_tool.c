// SPDX-License-Identifier: GPL-2.0-only
/*
 * The iptables data plane's tools: iptables-save and iptables-restore (or
 * the ip6tables pair) found once, run with the input on a pipe and their
 * output read back, with their first lines of error in the data plane's
 * message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "dp/ipt/ipt_priv.h"

int ipt_fam_index(int family)
{
	return family == AF_INET6 ? V6 : V4;
}

/* Finds @name in $PATH, /usr/sbin, /sbin; false if not executable. */
bool ipt_find_tool(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];
	char *save = NULL, *d;

	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/sbin", path ? path : "");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (!*d)
			continue;
		snprintf(out, len, "%s/%s", d, name);
		if (!access(out, X_OK))
			return true;
	}
	return false;
}

/* Reads a memfd from its start into a malloc'd NUL-terminated string. */
static char *read_all(int fd)
{
	struct stat st;
	char *s;
	ssize_t r;
	size_t got = 0;

	if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET))
		return strdup("");
	s = malloc((size_t)st.st_size + 1);
	if (!s)
		return NULL;
	while (got < (size_t)st.st_size) {
		r = read(fd, s + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	s[got] = '\0';
	return s;
}

/*
 * Runs @argv (argv[0] an absolute path) with @input (may be NULL) on a
 * pipe as stdin; *out and *err (may be NULL) get its stdout and stderr.
 * Returns its exit status (0..255), or a negative errno when it could not
 * run or was killed.
 */
int ipt_run_tool(char *const argv[], const char *input, size_t inlen,
		    char **out, char **err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t def;
	int pin[2] = { -1, -1 }, ofd, efd, status, r;
	pid_t pid;
	size_t off = 0;

	ofd = memfd_create("kpx-ipt-out", MFD_CLOEXEC);
	efd = memfd_create("kpx-ipt-err", MFD_CLOEXEC);
	if (ofd < 0 || efd < 0 || pipe2(pin, O_CLOEXEC)) {
		r = -errno;
		goto out_close;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
	posix_spawn_file_actions_adddup2(&fa, ofd, 1);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	posix_spawnattr_init(&attr);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	r = posix_spawn(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(pin[0]);
	pin[0] = -1;
	if (r) {
		r = -r;
		goto out_close;
	}
	/* The agent ignores SIGPIPE: a tool that stops reading gives EPIPE. */
	while (input && off < inlen) {
		ssize_t w = write(pin[1], input + off, inlen - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(pin[1]);
	pin[1] = -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			r = -errno;
			goto out_close;
		}
	r = WIFEXITED(status) ? WEXITSTATUS(status) : -EINTR;
	if (out)
		*out = read_all(ofd);
	if (err)
		*err = read_all(efd);
out_close:
	if (pin[0] >= 0)
		close(pin[0]);
	if (pin[1] >= 0)
		close(pin[1]);
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	return r;
}

/* @s for a one-line message: newlines as spaces, no trailing ones, at most @max bytes. */
const char *ipt_first_lines(char *s, size_t max)
{
	size_t len;

	if (!s)
		return "";
	len = strlen(s);
	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		s[--len] = '\0';
	if (len > max)
		s[max] = '\0';
	for (char *p = s; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return s;
}

/* errmsg for a tool that could not run (@r < 0) or exited with status @r. */
static void tool_fail(struct dp_ipt *d, const char *tool, int r, char *err)
{
	if (r < 0)
		kpx_dp_fail(&d->dp, r, "%s: %s", tool, strerror(-r));
	else
		kpx_dp_fail(&d->dp, -EIO, "%s: exit status %d: %s", tool, r,
			    ipt_first_lines(err, 400));
}

/* iptables-save (all tables) of family @f into *out; 0 or -errno. */
int ipt_save(struct dp_ipt *d, int f, char **out)
{
	char *argv[] = { d->save[f], NULL };
	char *err = NULL;
	int r;

	*out = NULL;
	r = ipt_run_tool(argv, NULL, 0, out, &err);
	if (r) {
		tool_fail(d, d->save[f], r, err);
		free(*out);
		*out = NULL;
		free(err);
		return r < 0 ? r : -EIO;
	}
	free(err);
	if (!*out)
		return -ENOMEM;
	return 0;
}

/* iptables-restore --noflush of family @f with @text; 0 or -errno. */
int ipt_restore(struct dp_ipt *d, int f, const char *text, size_t len)
{
	char *argv[] = { d->restore[f], "--noflush", "--wait=5", NULL };
	char *err = NULL;
	int r;

	r = ipt_run_tool(argv, text, len, NULL, &err);
	if (r) {
		tool_fail(d, d->restore[f], r, err);
		free(err);
		return r < 0 ? r : -EIO;
	}
	free(err);
	return 0;
}

/*
 * Can iptables-save run without loading a kernel module?  Yes when the
 * module of a backend (nf_tables for iptables-nft, ip_tables for legacy)
 * is loaded or built in, or when this kernel has no loadable modules.
 */
bool ipt_saving_loads_nothing(void)
{
	static const char *const mods[] = { "nf_tables", "ip_tables", "ip6_tables" };
	char p[PATH_MAX], line[512];
	struct utsname u;
	bool found = false;
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		snprintf(p, sizeof(p), "/sys/module/%s", mods[i]);
		if (!access(p, F_OK))
			return true;
	}
	if (uname(&u))
		return false;
	snprintf(p, sizeof(p), "/lib/modules/%s/modules.dep", u.release);
	if (access(p, F_OK))
		return true;		/* no modules to load at all */
	snprintf(p, sizeof(p), "/lib/modules/%s/modules.builtin", u.release);
	f = fopen(p, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "/nf_tables.ko") || strstr(line, "/ip_tables.ko");
	if (f)
		fclose(f);
	return found;
}

