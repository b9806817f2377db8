// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's HTTP server (httpd.c) and its bind addresses, over real HTTP
 * on loopback, fetched with libcurl: the wildcard default (0.0.0.0) and ::
 * answer on both families, as kube-proxy's Go listener does; a specific
 * address on its own family only.  Only loopback is contacted.  TAP;
 * exits non-zero on any failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <curl/curl.h>

#include "http/httpd.h"
#include "lib/fixtures.h"
#include "lib/tap.h"

static int handler(void *ctx, const char *path, struct kpx_http_reply *rep)
{
	(void)ctx;
	rep->status = strcmp(path, "/healthz") ? 404 : 200;
	rep->body = strdup("ok\n");
	return 0;
}

/* The status of GET @url, 0 when no connection. */
static long get(const char *url)
{
	return fx_http_get(url, NULL, 0);
}

/* A TCP port free on both families now. */
static unsigned int free_port(void)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	socklen_t len = sizeof(s6);
	int fd = socket(AF_INET6, SOCK_STREAM, 0), zero = 0;
	unsigned int port = 0;

	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (!bind(fd, (struct sockaddr *)&s6, sizeof(s6)) &&
	    !getsockname(fd, (struct sockaddr *)&s6, &len))
		port = ntohs(s6.sin6_port);
	close(fd);
	return port;
}

static void one(const char *bind_fmt, long want4, long want6)
{
	char bind[64], u4[64], u6[64], err[256] = "";
	unsigned int port = free_port();
	struct kpx_httpd *d;

	snprintf(bind, sizeof(bind), bind_fmt, port);
	d = kpx_httpd_start(bind, handler, NULL, err, sizeof(err));
	ok(d != NULL, "%s: listening (%s)", bind, d ? "ok" : err);
	snprintf(u4, sizeof(u4), "http://127.0.0.1:%u/healthz", port);
	snprintf(u6, sizeof(u6), "http://[::1]:%u/healthz", port);
	ok(get(u4) == want4, "%s: IPv4 127.0.0.1 gets %ld", bind, want4);
	ok(get(u6) == want6, "%s: IPv6 ::1 gets %ld", bind, want6);
	kpx_httpd_stop(d);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (access("/proc/net/if_inet6", R_OK)) {
		printf("1..0 # SKIP no IPv6 on this host\n");
		return 0;
	}
	one("0.0.0.0:%u", 200, 200);
	one("[::]:%u", 200, 200);
	one("127.0.0.1:%u", 200, 0);
	one("[::1]:%u", 0, 200);
	curl_global_cleanup();
	return tap_done();
}
