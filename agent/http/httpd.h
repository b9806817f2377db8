/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A tiny HTTP/1.1 server for the agent's /healthz, /livez and /metrics
 * (libmicrohttpd, one internal polling thread per server, GET/HEAD only).
 */
#ifndef KPX_HTTPD_H
#define KPX_HTTPD_H

#include <stddef.h>

struct kpx_httpd;

/* What a handler answers: status, malloc'd body (freed by the server). */
struct kpx_http_reply {
	unsigned int status;
	const char *content_type;
	char *body;
	size_t len;
};

/*
 * Fills @rep for a GET of @path (query string removed).  Runs in the
 * server's thread, one request at a time.  Returns 0, or -ENOMEM (500).
 */
typedef int (*kpx_http_handler)(void *ctx, const char *path,
				struct kpx_http_reply *rep);

/*
 * Listens on @bind ("IP:PORT" or "[IPv6]:PORT", as config/setters.c normalizes
 * it) and serves @h.  Returns NULL with errno set (EADDRINUSE, EACCES,
 * EINVAL for a bad address...) and a reason in @err.
 */
struct kpx_httpd *kpx_httpd_start(const char *bind, kpx_http_handler h,
				  void *ctx, char *err, size_t errlen);
void kpx_httpd_stop(struct kpx_httpd *d);

#endif
