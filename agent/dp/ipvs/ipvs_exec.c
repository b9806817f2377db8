// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spawning the netfilter tools (see ipvs_exec.h).  stdout and stderr go to
 * anonymous temporary files so that neither side can block on a full pipe
 * while stdin is being written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dp/ipvs/ipvs_exec.h"

extern char **environ;

/* The whole content of @fd from offset 0, NUL-terminated; NULL on ENOMEM. */
static char *slurp(int fd)
{
	struct stat st;
	char *buf;
	ssize_t r;
	size_t n = 0;

	if (fstat(fd, &st))
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	while (n < (size_t)st.st_size &&
	       (r = pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return buf;
}

int kpx_ipvs_have(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (!access(buf, X_OK))
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

int kpx_ipvs_run(const char *const argv[], const char *in, char **out,
		 char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	int ofd = memfd_create("kpx-out", MFD_CLOEXEC);
	int efd = memfd_create("kpx-err", MFD_CLOEXEC);
	int p[2] = { -1, -1 }, status, ret = 0;
	pid_t pid;

	if (err && errlen)
		err[0] = '\0';
	if (ofd < 0 || efd < 0 || pipe2(p, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawn_file_actions_adddup2(&fa, ofd, 1);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	p[0] = -1;
	if (ret) {
		if (err)
			snprintf(err, errlen, "%s: %s", argv[0], strerror(ret));
		ret = -ENOENT;
		goto out;
	}
	if (in) {
		size_t n = strlen(in), off = 0;
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);

		while (off < n) {
			ssize_t w = write(p[1], in + off, n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		signal(SIGPIPE, old);
	}
	close(p[1]);
	p[1] = -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			ret = -errno;
			goto out;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char *e = slurp(efd);

		if (e && !*e) {
			free(e);
			e = slurp(ofd);
		}
		if (err)
			snprintf(err, errlen, "%s exited %d: %s", argv[0],
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
				 e ? e : "");
		if (err && *err && err[strlen(err) - 1] == '\n')
			err[strlen(err) - 1] = '\0';
		free(e);
		ret = -EIO;
		goto out;
	}
	if (out) {
		*out = slurp(ofd);
		if (!*out)
			ret = -ENOMEM;
	}
out:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	return ret;
}
