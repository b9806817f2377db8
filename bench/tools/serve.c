// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_load serve: the backend.  One epoll loop: accept, answer "ID\n",
 * then discard whatever arrives until EOF or an error (a reset from the
 * conn mode's SO_LINGER 0 close), and close.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load.h"

#define RXBUF (256 * 1024)

static int listen_any(int port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, 4096) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void accept_all(int ep, int lfd, const char *line, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (write(fd, line, len) < 0 && errno != EAGAIN) {
			close(fd);
			continue;
		}
		ev.data.fd = fd;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			close(fd);
	}
}

/* drain() - read what is there; 1 if the connection is finished. */
static int drain(int fd, char *buf)
{
	ssize_t n;

	for (;;) {
		n = read(fd, buf, RXBUF);
		if (n > 0)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		return 1;
	}
}

static int serve_loop(int lfd, const char *ident)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];
	char line[128], *buf = malloc(RXBUF);
	size_t len = snprintf(line, sizeof(line), "%s\n", ident);
	int ep = epoll_create1(EPOLL_CLOEXEC), i, n;

	if (ep < 0 || !buf)
		return 1;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		n = epoll_wait(ep, evs, 64, -1);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd)
				accept_all(ep, lfd, line, len);
			else if (drain(fd, buf))
				close(fd);	/* also leaves the epoll set */
		}
	}
}

int load_serve(const struct load_opts *o)
{
	int lfd = listen_any(o->port);
	pid_t pid;

	if (lfd < 0) {
		fprintf(stderr, "kpx_load serve: port %d: %s\n", o->port, strerror(errno));
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0) {
		printf("%d\n", (int)pid);
		return 0;
	}
	setsid();
	fclose(stdin);
	fclose(stdout);
	return serve_loop(lfd, o->ident);
}
