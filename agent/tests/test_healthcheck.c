// SPDX-License-Identifier: GPL-2.0-only
/*
 * Health-check servers (healthcheck.c) over real HTTP on 127.0.0.1 with
 * ephemeral ports, fetched with libcurl: status 200/503, kube-proxy's JSON
 * body and headers, updates, several Services, closing, a busy port, and
 * the model's health checks for case 04 (node-a 200 with 2, node-b 503).
 * Only loopback is contacted.  TAP; exits non-zero on any failure.
 */
#include <unistd.h>
#include <curl/curl.h>
#include "http/healthcheck.h"
#include "testlib_model.h"

struct reply {
	long status;
	CURLcode err;
	char body[4096];
	size_t len;
	char ctype[128], nosniff[64], weight[32];
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = sz * n, room = sizeof(r->body) - 1 - r->len;

	memcpy(r->body + r->len, p, len < room ? len : room);
	r->len += len < room ? len : room;
	r->body[r->len] = 0;
	return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = sz * n;

	if (!strncasecmp(p, "Content-Type:", 13))
		snprintf(r->ctype, sizeof(r->ctype), "%.*s", (int)(len - 13), p + 13);
	if (!strncasecmp(p, "X-Content-Type-Options:", 23))
		snprintf(r->nosniff, sizeof(r->nosniff), "%.*s", (int)(len - 23), p + 23);
	if (!strncasecmp(p, "X-Load-Balancing-Endpoint-Weight:", 33))
		snprintf(r->weight, sizeof(r->weight), "%.*s", (int)(len - 33), p + 33);
	return len;
}

/* GET (or POST @post) http://@host:@port@path. */
static struct reply get_at(const char *host, uint16_t port, const char *path,
			   const char *post)
{
	struct reply r;
	char url[128];
	CURL *c = curl_easy_init();

	memset(&r, 0, sizeof(r));
	snprintf(url, sizeof(url), "http://%s:%u%s", host, port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (post)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
	r.err = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
	curl_easy_cleanup(c);
	return r;
}

static struct reply get(uint16_t port, const char *path, const char *post)
{
	return get_at("127.0.0.1", port, path, post);
}

static struct kpx_hc_service hc_svc(const char *ns, const char *name,
				    unsigned int local, bool healthy)
{
	struct kpx_hc_service s;

	memset(&s, 0, sizeof(s));
	snprintf(s.namespace, sizeof(s.namespace), "%s", ns);
	snprintf(s.name, sizeof(s.name), "%s", name);
	s.local_endpoints = local;
	s.healthy = healthy;
	return s;
}

/* The "localEndpoints" of a JSON body, -1 if it does not parse. */
static int local_of(const char *body)
{
	struct json_object *o = json_tokener_parse(body), *v;
	int n = -1;

	if (o && json_object_object_get_ex(o, "localEndpoints", &v))
		n = json_object_get_int(v);
	json_object_put(o);
	return n;
}

static void test_server(void)
{
	const char *lo[] = { "127.0.0.1" };
	struct kpx_hc *hc = kpx_hc_new(lo, 1);
	struct kpx_hc_service v[2];
	struct reply r;
	uint16_t p, p2;

	ok(hc != NULL, "hc: server set on 127.0.0.1");
	v[0] = hc_svc("shop", "storefront", 2, true);
	ok(kpx_hc_sync(hc, v, 1) == 0 && kpx_hc_count(hc) == 1, "hc: one Service served");
	p = kpx_hc_bound_port(hc, "shop", "storefront");
	ok(p != 0, "hc: bound to an ephemeral port (%u)", p);
	r = get(p, "/", NULL);
	ok(r.err == CURLE_OK && r.status == 200, "hc: 2 local endpoints: 200");
	ok_str(r.body,
	       "{\n\t\"service\": {\n\t\t\"namespace\": \"shop\",\n\t\t\"name\": \"storefront\"\n\t},\n"
	       "\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}",
	       "hc: kube-proxy's body, pretty-printed with tabs");
	ok(local_of(r.body) == 2, "hc: body parses as JSON, localEndpoints 2");
	ok(strstr(r.ctype, "application/json") && strstr(r.nosniff, "nosniff"),
	   "hc: Content-Type application/json, X-Content-Type-Options nosniff");
	ok(!strcmp(r.weight, " 2\r\n"), "hc: X-Load-Balancing-Endpoint-Weight: 2 (the local endpoints)");
	r = get(p, "/any/path?x=1", "a request body");
	ok(r.err == CURLE_OK && r.status == 200 && local_of(r.body) == 2,
	   "hc: any path and method (POST with a body) get the same answer");

	v[0].local_endpoints = 0;
	ok(kpx_hc_sync(hc, v, 1) == 0 && kpx_hc_bound_port(hc, "shop", "storefront") == p,
	   "hc: update keeps the server and its port");
	r = get(p, "/", NULL);
	ok(r.status == 503 && local_of(r.body) == 0 &&
	   strstr(r.body, "\"serviceProxyHealthy\": true"),
	   "hc: 0 local endpoints: 503, localEndpoints 0");
	ok(!strcmp(r.weight, " 0\r\n"), "hc: X-Load-Balancing-Endpoint-Weight: 0");
	v[0].local_endpoints = 3;
	v[0].healthy = false;
	kpx_hc_sync(hc, v, 1);
	r = get(p, "/", NULL);
	ok(r.status == 503 && local_of(r.body) == 3 &&
	   strstr(r.body, "\"serviceProxyHealthy\": false"),
	   "hc: not programmed (healthy false): 503 despite 3 endpoints");

	v[0].healthy = true;
	v[1] = hc_svc("shop", "checkout", 1, true);
	ok(kpx_hc_sync(hc, v, 2) == 0 && kpx_hc_count(hc) == 2, "hc: two Services");
	p2 = kpx_hc_bound_port(hc, "shop", "checkout");
	r = get(p2, "/", NULL);
	ok(p2 && p2 != p && r.status == 200 && local_of(r.body) == 1 &&
	   strstr(r.body, "\"checkout\""), "hc: the second has its own port and answer");
	r = get(p, "/", NULL);
	ok(r.status == 200 && local_of(r.body) == 3 && strstr(r.body, "\"storefront\""),
	   "hc: the first still answers for itself");

	ok(kpx_hc_sync(hc, &v[1], 1) == 0 && kpx_hc_count(hc) == 1 &&
	   !kpx_hc_bound_port(hc, "shop", "storefront"), "hc: storefront dropped");
	r = get(p, "/", NULL);
	ok(r.err == CURLE_COULDNT_CONNECT, "hc: its port is closed (connection refused)");
	ok(kpx_hc_set_addrs(hc, lo, 1) == 0 && kpx_hc_count(hc) == 1,
	   "hc: same bind addresses: nothing closed");
	ok(kpx_hc_set_addrs(hc, (const char *[]){ "127.0.0.2" }, 1) == 1 && kpx_hc_count(hc) == 1 &&
	   kpx_hc_bound_port(hc, "shop", "checkout") == p2,
	   "hc: new bind addresses: the server kept, on the same port");
	r = get(p2, "/", NULL);
	ok(r.err == CURLE_COULDNT_CONNECT, "hc: no longer on 127.0.0.1 (connection refused)");
	r = get_at("127.0.0.2", p2, "/", NULL);
	ok(r.status == 200 && local_of(r.body) == 1, "hc: on 127.0.0.2 at once, before a sync");
	ok(kpx_hc_set_addrs(hc, (const char *[]){ "bad" }, 1) == -EINVAL,
	   "hc: bad bind address: -EINVAL");
	ok(kpx_hc_set_addrs(hc, lo, 1) == 1 && kpx_hc_sync(hc, &v[1], 1) == 0 &&
	   kpx_hc_count(hc) == 1, "hc: back on 127.0.0.1, reopened by the next sync");
	p2 = kpx_hc_bound_port(hc, "shop", "checkout");
	r = get(p2, "/", NULL);
	ok(r.status == 200 && local_of(r.body) == 1, "hc: and answers there");
	ok(kpx_hc_sync(hc, NULL, 0) == 0 && kpx_hc_count(hc) == 0, "hc: empty set");
	kpx_hc_free(hc);
}

/*
 * Bind addresses that come and go (a node address added, moved, removed):
 * the listener on an address that stays is the same one (an open
 * connection to it survives), one on a new address opens at once, one on
 * an address gone closes; an address that cannot be bound (not local)
 * leaves the others served and is retried.
 */
static void test_addr_change(void)
{
	const char *a1[] = { "127.0.0.1" }, *a12[] = { "127.0.0.1", "127.0.0.2" };
	const char *a2x[] = { "127.0.0.2", "192.0.2.99" };
	struct kpx_hc *hc = kpx_hc_new(a1, 1);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct kpx_hc_service v = hc_svc("shop", "gw", 1, true);
	const char req[] = "GET / HTTP/1.0\r\n\r\n";
	char buf[256] = "";
	struct reply r;
	uint16_t p;
	ssize_t got;
	int fd, i, same = 1;

	ok(kpx_hc_sync(hc, &v, 1) == 0, "addrs: served on 127.0.0.1");
	p = kpx_hc_bound_port(hc, "shop", "gw");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(p);
	ok(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	   "addrs: a connection open to 127.0.0.1:%u", p);
	ok(kpx_hc_set_addrs(hc, a12, 2) == 1 && kpx_hc_bound_port(hc, "shop", "gw") == p,
	   "addrs: 127.0.0.2 added: changed, same port");
	r = get_at("127.0.0.2", p, "/", NULL);
	ok(r.status == 200 && local_of(r.body) == 1, "addrs: 127.0.0.2 answers without a sync");
	ok(write(fd, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1) &&
	   (got = read(fd, buf, sizeof(buf) - 1)) > 0 && !strncmp(buf, "HTTP/1.", 7) &&
	   !strncmp(buf + 8, " 200", 4),
	   "addrs: the connection opened before the change is answered 200 (listener kept)");
	close(fd);
	for (i = 0; i < 20; i++) {
		kpx_hc_set_addrs(hc, i % 2 ? a12 : a1, i % 2 ? 2 : 1);
		kpx_hc_sync(hc, &v, 1);
		r = get(p, "/", NULL);
		same = same && r.status == 200 && kpx_hc_bound_port(hc, "shop", "gw") == p;
	}
	ok(same, "addrs: 20 flaps of 127.0.0.2: 127.0.0.1 answers 200 on the same port each time");
	ok(kpx_hc_set_addrs(hc, a2x, 2) == 1 && kpx_hc_count(hc) == 1,
	   "addrs: moved to 127.0.0.2 and a non-local address");
	r = get(p, "/", NULL);
	ok(r.err == CURLE_COULDNT_CONNECT, "addrs: 127.0.0.1 removed: closed");
	r = get_at("127.0.0.2", p, "/", NULL);
	ok(r.status == 200, "addrs: 127.0.0.2 still answers");
	ok(kpx_hc_sync(hc, &v, 1) == 1 && kpx_hc_count(hc) == 1,
	   "addrs: the address that cannot be bound is one failure, retried; the Service stays served");
	kpx_hc_free(hc);
}

/* A fixed port already taken: the Service is not served, then retried. */
static void test_busy_port(void)
{
	const char *lo[] = { "127.0.0.1" };
	struct kpx_hc *hc = kpx_hc_new(lo, 1);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	struct kpx_hc_service v;
	struct reply r;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	   listen(fd, 1) == 0 && getsockname(fd, (struct sockaddr *)&sa, &len) == 0,
	   "busy: a listener holds a port");
	v = hc_svc("t", "busy", 1, true);
	v.port = ntohs(sa.sin_port);
	ok(kpx_hc_sync(hc, &v, 1) == 1 && kpx_hc_count(hc) == 0,
	   "busy: the Service could not be opened (1 failure, not served)");
	close(fd);
	ok(kpx_hc_sync(hc, &v, 1) == 0 && kpx_hc_bound_port(hc, "t", "busy") == v.port,
	   "busy: retried at the next sync once the port is free");
	r = get(v.port, "/", NULL);
	ok(r.status == 200 && local_of(r.body) == 1, "busy: then it answers 200");
	kpx_hc_free(hc);
	ok(kpx_hc_new((const char *[]){ "not-an-ip" }, 1) == NULL && errno == EINVAL,
	   "busy: a bad bind address is EINVAL");
}

/* Case 04 end to end: model -> servers -> HTTP, per node. */
static void test_case04(void)
{
	const char *lo[] = { "127.0.0.1" };
	const char *nodes[2] = { "node-a", "node-b" };
	struct kpx_hc *hc = kpx_hc_new(lo, 1);
	struct kpx_hc_service *v;
	struct kpx_model *m;
	struct reply r;
	size_t n;
	int i;

	for (i = 0; i < 2; i++) {
		m = kpx_model_new();
		set_node(m, nodes[i]);
		load(m, "../testdata/cases/04/objects.json");
		ok(kpx_model_healthchecks(m, &v, &n) == 0 && n == 1 && v[0].port == 32100,
		   "case04 %s: one health check, port 32100", nodes[i]);
		if (n == 1) {
			v[0].port = 0;	/* the test binds an ephemeral port */
			kpx_hc_sync(hc, v, n);
			r = get(kpx_hc_bound_port(hc, "shop", "storefront"), "/", NULL);
			if (!i)
				ok(r.status == 200 && local_of(r.body) == 2 &&
				   strstr(r.body, "\"namespace\": \"shop\"") &&
				   strstr(r.body, "\"name\": \"storefront\""),
				   "case04 node-a: 200, shop/storefront, localEndpoints 2");
			else
				ok(r.status == 503 && local_of(r.body) == 0,
				   "case04 node-b: 503, localEndpoints 0");
		}
		free(v);
		kpx_model_free(m);
	}
	kpx_hc_free(hc);
}

/* 50 Services at once, each answering with its own count. */
static void test_many(void)
{
	enum { N = 50 };
	const char *lo[] = { "127.0.0.1" };
	struct kpx_hc *hc = kpx_hc_new(lo, 1);
	struct kpx_hc_service v[N];
	char name[32];
	int i, good = 0;

	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "svc-%02d", i);
		v[i] = hc_svc("many", name, (unsigned int)i, true);
	}
	ok(kpx_hc_sync(hc, v, N) == 0 && kpx_hc_count(hc) == N, "many: %d servers", N);
	for (i = 0; i < N; i++) {
		struct reply r;

		snprintf(name, sizeof(name), "svc-%02d", i);
		r = get(kpx_hc_bound_port(hc, "many", name), "/", NULL);
		good += r.status == (i ? 200 : 503) && local_of(r.body) == i &&
			strstr(r.body, name) != NULL;
	}
	ok(good == N, "many: each answers with its own name and count (%d of %d)", good, N);
	kpx_hc_free(hc);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	test_server();
	test_busy_port();
	test_addr_change();
	test_case04();
	test_many();
	curl_global_cleanup();
	return tap_done();
}
