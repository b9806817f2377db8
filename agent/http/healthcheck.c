// SPDX-License-Identifier: GPL-2.0-only
/*
 * Health-check servers for healthCheckNodePort, on libmicrohttpd; see
 * healthcheck.h.  Semantics after kube-proxy's pkg/proxy/healthcheck
 * service health server (status from the local endpoint count and the
 * proxy's health; JSON body; listeners opened and closed as Services come
 * and go; a failed listen is retried at the next sync).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <json-c/json.h>
#include <microhttpd.h>

#include "http/healthcheck.h"
#include "base/log.h"

#define COMP "healthcheck"
#define HC_ADDRS_MAX 16
/*
 * Each listening socket is one libmicrohttpd daemon with its own polling
 * thread (Services x bind addresses threads); a small stack keeps that
 * cheap.  Probes are answered in that thread: at most 64 connections a
 * socket, idle ones closed after 10 s.
 */
#define HC_STACK ((size_t)256 * 1024)

struct hc_inst {
	struct kpx_hc *hc;
	struct kpx_hc_service svc;	/* counts guarded by hc->lock */
	uint16_t bound;
	bool kept;		/* scratch of kpx_hc_sync() */
	/* d[i] listens on hc->addrs[i] (d[0] on all addresses when
	 * hc->naddrs is 0); NULL where it could not be opened yet */
	struct MHD_Daemon *d[HC_ADDRS_MAX];
	bool warned[HC_ADDRS_MAX];	/* its failure logged */
};

struct kpx_hc {
	pthread_mutex_t lock;
	size_t naddrs;
	struct sockaddr_storage addrs[HC_ADDRS_MAX];
	struct hc_inst **v;	/* sorted by kpx_hc_service_cmp() */
	size_t n;
};

/*
 * The answer for @in: status code, a malloc'd JSON body and the local
 * endpoint count (for X-Load-Balancing-Endpoint-Weight).
 */
static char *answer(struct hc_inst *in, unsigned int *status, long *weight)
{
	struct kpx_hc_service s;
	struct json_object *o, *id;
	char *body;

	pthread_mutex_lock(&in->hc->lock);
	s = in->svc;
	pthread_mutex_unlock(&in->hc->lock);
	*weight = (long)s.local_endpoints;
	*status = s.local_endpoints && s.healthy ? MHD_HTTP_OK :
		  MHD_HTTP_SERVICE_UNAVAILABLE;
	o = json_object_new_object();
	id = json_object_new_object();
	if (!o || !id) {
		json_object_put(o);
		json_object_put(id);
		return NULL;
	}
	json_object_object_add(id, "namespace", json_object_new_string(s.namespace));
	json_object_object_add(id, "name", json_object_new_string(s.name));
	json_object_object_add(o, "service", id);
	json_object_object_add(o, "localEndpoints",
			       json_object_new_int64(s.local_endpoints));
	json_object_object_add(o, "serviceProxyHealthy",
			       json_object_new_boolean(s.healthy));
	body = strdup(json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_PRETTY_TAB |
			JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return body;
}

/* libmicrohttpd access handler: every method and path get the answer. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	static int started;
	struct MHD_Response *resp;
	unsigned int status;
	enum MHD_Result ret;
	char *body, w[24];
	long weight;

	if (!*state) {		/* headers only so far */
		*state = &started;
		return MHD_YES;
	}
	if (*upload_size) {	/* a request body is read and ignored */
		*upload_size = 0;
		return MHD_YES;
	}
	body = answer(cls, &status, &weight);
	if (!body)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(strlen(body), body,
					       MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	snprintf(w, sizeof(w), "%ld", weight);
	MHD_add_response_header(resp, "X-Load-Balancing-Endpoint-Weight", w);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void inst_stop(struct hc_inst *in)
{
	size_t i;

	for (i = 0; i < HC_ADDRS_MAX; i++)
		if (in->d[i])
			MHD_stop_daemon(in->d[i]);
	free(in);
}

/* Slots of the bind address list: one (all addresses) when it is empty. */
static size_t nslots(const struct kpx_hc *hc)
{
	return hc->naddrs ? hc->naddrs : 1;
}

static bool sa_eq(const struct sockaddr_storage *a,
		  const struct sockaddr_storage *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* Parses @addrs into @out (HC_ADDRS_MAX, zeroed here); -EINVAL if bad. */
static int parse_addrs(const char *const *addrs, size_t naddrs,
		       struct sockaddr_storage *out)
{
	size_t i;

	if (naddrs > HC_ADDRS_MAX)
		return -EINVAL;
	memset(out, 0, HC_ADDRS_MAX * sizeof(*out));
	for (i = 0; i < naddrs; i++) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&out[i];
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out[i];

		if (inet_pton(AF_INET, addrs[i], &s4->sin_addr) == 1)
			s4->sin_family = AF_INET;
		else if (inet_pton(AF_INET6, addrs[i], &s6->sin6_addr) == 1)
			s6->sin6_family = AF_INET6;
		else
			return -EINVAL;
	}
	return 0;
}

struct kpx_hc *kpx_hc_new(const char *const *addrs, size_t naddrs)
{
	struct kpx_hc *hc = calloc(1, sizeof(*hc));

	if (!hc)
		return NULL;
	if (parse_addrs(addrs, naddrs, hc->addrs)) {
		free(hc);
		errno = EINVAL;
		return NULL;
	}
	hc->naddrs = naddrs;
	pthread_mutex_init(&hc->lock, NULL);
	return hc;
}

static int inst_open(struct hc_inst *in, size_t i);

int kpx_hc_set_addrs(struct kpx_hc *hc, const char *const *addrs, size_t naddrs)
{
	struct sockaddr_storage v[HC_ADDRS_MAX];
	struct MHD_Daemon *nd[HC_ADDRS_MAX];
	size_t i, j, k, oldn = nslots(hc);
	struct hc_inst *in;

	if (parse_addrs(addrs, naddrs, v))
		return -EINVAL;
	if (naddrs == hc->naddrs && !memcmp(v, hc->addrs, sizeof(v)))
		return 0;
	/*
	 * Each server keeps its listeners on the addresses that stay (no
	 * moment with the port closed there), closes those on addresses
	 * gone and opens the new ones.
	 */
	for (k = 0; k < hc->n; k++) {
		in = hc->v[k];
		memset(nd, 0, sizeof(nd));
		for (j = 0; j < (naddrs ? naddrs : 1); j++)
			for (i = 0; i < oldn; i++)
				if (in->d[i] && sa_eq(&v[j], &hc->addrs[i])) {
					nd[j] = in->d[i];
					in->d[i] = NULL;
					break;
				}
		for (i = 0; i < HC_ADDRS_MAX; i++)
			if (in->d[i])
				MHD_stop_daemon(in->d[i]);
		memcpy(in->d, nd, sizeof(nd));
		memset(in->warned, 0, sizeof(in->warned));
	}
	memcpy(hc->addrs, v, sizeof(v));
	hc->naddrs = naddrs;
	for (k = 0; k < hc->n; k++)
		for (j = 0; j < nslots(hc); j++)
			if (!hc->v[k]->d[j])
				inst_open(hc->v[k], j);
	kpx_info(COMP, "bind addresses changed (%zu): health-check servers kept where the address stayed",
		 naddrs);
	return 1;
}

void kpx_hc_free(struct kpx_hc *hc)
{
	size_t i;

	if (!hc)
		return;
	for (i = 0; i < hc->n; i++)
		inst_stop(hc->v[i]);
	free(hc->v);
	pthread_mutex_destroy(&hc->lock);
	free(hc);
}

/* One daemon on @sa (NULL: all addresses) and @port; NULL on failure. */
static struct MHD_Daemon *start_one(struct hc_inst *in,
				    const struct sockaddr_storage *sa,
				    uint16_t port)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	struct sockaddr_storage a;
	struct MHD_Daemon *d;

	if (!sa) {
		d = MHD_start_daemon(flags | MHD_USE_DUAL_STACK, port, NULL, NULL,
				     on_request, in,
				     MHD_OPTION_CONNECTION_LIMIT, 64U,
				     MHD_OPTION_CONNECTION_TIMEOUT, 10U,
				     MHD_OPTION_THREAD_STACK_SIZE, HC_STACK,
				     MHD_OPTION_END);
		if (d)
			return d;
		/* no IPv6 on this host */
		return MHD_start_daemon(flags, port, NULL, NULL, on_request, in,
					MHD_OPTION_CONNECTION_LIMIT, 64U,
					MHD_OPTION_CONNECTION_TIMEOUT, 10U,
					MHD_OPTION_THREAD_STACK_SIZE, HC_STACK,
					MHD_OPTION_END);
	}
	a = *sa;
	if (a.ss_family == AF_INET6) {
		((struct sockaddr_in6 *)&a)->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		((struct sockaddr_in *)&a)->sin_port = htons(port);
	}
	return MHD_start_daemon(flags, port, NULL, NULL, on_request, in,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a,
				MHD_OPTION_CONNECTION_LIMIT, 64U,
				MHD_OPTION_CONNECTION_TIMEOUT, 10U,
				MHD_OPTION_THREAD_STACK_SIZE, HC_STACK,
				MHD_OPTION_END);
}

/*
 * Opens slot @i of @in's server; 0, or -1 (logged once until the slot
 * opens or the addresses change; retried by kpx_hc_sync()).
 */
static int inst_open(struct hc_inst *in, size_t i)
{
	struct kpx_hc *hc = in->hc;
	const union MHD_DaemonInfo *info;
	char a[INET6_ADDRSTRLEN] = "*";
	const struct sockaddr_storage *sa = hc->naddrs ? &hc->addrs[i] : NULL;

	in->d[i] = start_one(in, sa, in->bound);
	if (!in->d[i]) {
		int e = errno ? errno : EADDRINUSE;

		if (!in->warned[i]) {
			if (sa)
				inet_ntop(sa->ss_family, sa->ss_family == AF_INET6 ?
					  (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr :
					  (const void *)&((const struct sockaddr_in *)sa)->sin_addr,
					  a, sizeof(a));
			kpx_err(COMP, "%s/%s: cannot listen on %s port %u: %s (retried at each sync)",
				in->svc.namespace, in->svc.name, a, in->bound,
				strerror(e));
			in->warned[i] = true;
		}
		return -1;
	}
	in->warned[i] = false;
	if (!in->bound) {
		info = MHD_get_daemon_info(in->d[i], MHD_DAEMON_INFO_BIND_PORT);
		in->bound = info ? info->port : 0;
	}
	return 0;
}

/*
 * Opens @s's server on every address it can; NULL when none could be
 * opened (nothing left open).  With port 0 the first daemon's ephemeral
 * port is used for the others.
 */
static struct hc_inst *inst_start(struct kpx_hc *hc,
				  const struct kpx_hc_service *s)
{
	struct hc_inst *in = calloc(1, sizeof(*in));
	size_t i, ok = 0;

	if (!in)
		return NULL;
	in->hc = hc;
	in->svc = *s;
	in->bound = s->port;
	for (i = 0; i < nslots(hc); i++)
		ok += !inst_open(in, i);
	if (!ok) {
		inst_stop(in);
		return NULL;
	}
	kpx_info(COMP, "%s/%s: serving health checks on port %u (%zu of %zu addresses)",
		 s->namespace, s->name, in->bound, ok, nslots(hc));
	return in;
}

/* Opens the slots of @in that are not open; how many are still not. */
static int inst_retry(struct hc_inst *in)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < nslots(in->hc); i++)
		if (!in->d[i] && inst_open(in, i))
			bad++;
	return bad;
}

static struct hc_inst *find(const struct kpx_hc *hc, const char *ns,
			    const char *name)
{
	struct kpx_hc_service key;
	size_t lo = 0, hi = hc->n, mid;
	int r;

	snprintf(key.namespace, sizeof(key.namespace), "%s", ns);
	snprintf(key.name, sizeof(key.name), "%s", name);
	while (lo < hi) {
		mid = (lo + hi) / 2;
		r = kpx_hc_service_cmp(&key, &hc->v[mid]->svc);
		if (!r)
			return hc->v[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int inst_cmp(const void *a, const void *b)
{
	return kpx_hc_service_cmp(&(*(struct hc_inst *const *)a)->svc,
				  &(*(struct hc_inst *const *)b)->svc);
}

int kpx_hc_sync(struct kpx_hc *hc, const struct kpx_hc_service *v, size_t n)
{
	struct hc_inst **nv = calloc(n ? n : 1, sizeof(*nv)), *in;
	size_t i, nn = 0;
	int failed = 0;

	if (!nv)
		return -ENOMEM;
	/* keep the servers whose Service is still listed with the same port */
	for (i = 0; i < n; i++) {
		in = find(hc, v[i].namespace, v[i].name);
		if (in && !in->kept && in->svc.port == v[i].port) {
			nv[nn++] = in;
			in->kept = true;
			if (inst_retry(in))
				failed++;
		}
	}
	/* close the others first, so that a port moving between Services
	 * is free again */
	for (i = 0; i < hc->n; i++) {
		in = hc->v[i];
		if (in->kept) {
			in->kept = false;
			continue;
		}
		kpx_info(COMP, "%s/%s: health checks on port %u closed",
			 in->svc.namespace, in->svc.name, in->bound);
		inst_stop(in);
	}
	free(hc->v);
	hc->v = nv;
	hc->n = nn;
	qsort(hc->v, hc->n, sizeof(*hc->v), inst_cmp);
	/* open the new ones */
	for (i = 0; i < n; i++) {
		if (find(hc, v[i].namespace, v[i].name))
			continue;
		in = inst_start(hc, &v[i]);
		if (!in) {
			failed++;
			continue;
		}
		hc->v[hc->n++] = in;
		qsort(hc->v, hc->n, sizeof(*hc->v), inst_cmp);
	}
	/* the answers */
	pthread_mutex_lock(&hc->lock);
	for (i = 0; i < n; i++) {
		in = find(hc, v[i].namespace, v[i].name);
		if (!in)
			continue;
		in->svc.local_endpoints = v[i].local_endpoints;
		in->svc.healthy = v[i].healthy;
	}
	pthread_mutex_unlock(&hc->lock);
	return failed;
}

size_t kpx_hc_count(const struct kpx_hc *hc)
{
	return hc->n;
}

uint16_t kpx_hc_bound_port(const struct kpx_hc *hc, const char *ns,
			   const char *name)
{
	const struct hc_inst *in = find(hc, ns, name);

	return in ? in->bound : 0;
}
