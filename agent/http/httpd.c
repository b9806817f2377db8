// SPDX-License-Identifier: GPL-2.0-only
/*
 * libmicrohttpd wrapper: our own listening socket (precise bind errors),
 * one internal polling thread, GET/HEAD only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

#include "base/addr.h"
#include "http/httpd.h"

struct kpx_httpd {
	struct MHD_Daemon *d;
	kpx_http_handler h;
	void *ctx;
	int fd;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct kpx_httpd *d = cls;
	struct kpx_http_reply rep = { .status = 200, .content_type = "text/plain" };
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		rep.status = 405;
		rep.body = strdup("method not allowed\n");
	} else if (d->h(d->ctx, url, &rep)) {
		free(rep.body);
		rep.status = 500;
		rep.content_type = "text/plain";
		rep.body = strdup("out of memory\n");
	}
	if (!rep.body)
		rep.len = 0;
	else if (!rep.len)
		rep.len = strlen(rep.body);
	resp = MHD_create_response_from_buffer(rep.len, rep.body ? rep.body : (char *)"",
					       rep.body ? MHD_RESPMEM_MUST_FREE :
							  MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(rep.body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", rep.content_type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(c, rep.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static bool unspecified(int fam, const unsigned char *a)
{
	static const unsigned char zero[16];

	return !memcmp(a, zero, fam == AF_INET ? 4 : 16);
}

/* A listening [::]:@port socket for both families, or -1 (errno). */
static int dual_stack_fd(uint16_t port)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, zero = 0;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) ||
	    bind(fd, (struct sockaddr *)&s6, sizeof(s6)) || listen(fd, 64)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

struct kpx_httpd *kpx_httpd_start(const char *bind_addr, kpx_http_handler h,
				  void *ctx, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	struct kpx_httpd *d;
	unsigned char a[16];
	socklen_t sl;
	uint16_t port;
	int fam, one = 1, e;

	if (kpx_hostport_parse(bind_addr, &fam, a, &port)) {
		snprintf(err, errlen, "%s: not an IP:PORT", bind_addr);
		errno = EINVAL;
		return NULL;
	}
	if (fam == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, a, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, a, 16);
		sl = sizeof(*s6);
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->h = h;
	d->ctx = ctx;
	d->fd = -1;
	/*
	 * The unspecified address of either family (0.0.0.0, the default,
	 * or ::) listens on both families, as kube-proxy's (Go's
	 * net.Listen("tcp", ...) opens one IPv6 socket with IPV6_V6ONLY 0
	 * for a wildcard): a dual-stack node answers /healthz on its IPv6
	 * addresses too.  IPv4 alone when the host has no IPv6 (EAFNOSUPPORT,
	 * EADDRNOTAVAIL).
	 */
	if (unspecified(fam, a)) {
		d->fd = dual_stack_fd(port);
		/* only a host without IPv6 falls back; EADDRINUSE is an error */
		if (d->fd < 0 && errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL)
			goto fail;
	}
	if (d->fd < 0) {
		d->fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (d->fd < 0)
			goto fail;
		setsockopt(d->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fam == AF_INET6)
			setsockopt(d->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(d->fd, (struct sockaddr *)&ss, sl) || listen(d->fd, 64))
			goto fail;
	}
	d->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO,
				0, NULL, NULL, answer, d,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)d->fd,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
				MHD_OPTION_END);
	if (!d->d) {
		errno = errno ? errno : EIO;
		goto fail;
	}
	return d;
fail:
	e = errno;
	snprintf(err, errlen, "listen on %s: %s", bind_addr, strerror(e));
	if (d->fd >= 0)
		close(d->fd);
	free(d);
	errno = e;
	return NULL;
}

void kpx_httpd_stop(struct kpx_httpd *d)
{
	if (!d)
		return;
	MHD_quiesce_daemon(d->d);	/* we close the socket, not MHD */
	MHD_stop_daemon(d->d);
	close(d->fd);
	free(d);
}
