// SPDX-License-Identifier: GPL-2.0-only
/*
 * List + watch over one libcurl multi handle; streams parsed incrementally
 * with jsonstream.c (see k8s.h for the protocol).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json_tokener.h>

#include "k8s/decode.h"
#include "base/duration.h"
#include "k8s/jsonstream.h"
#include "k8s/k8s.h"
#include "k8s/k8s_priv.h"
#include "base/log.h"
#include "base/ratelimit.h"

static const char *const kind_names[KPX_KIND_MAX] = {
	[KPX_KIND_SERVICE] = "services",
	[KPX_KIND_ENDPOINTSLICE] = "endpointslices",
	[KPX_KIND_NODE] = "node",
};

static const char *const kind_paths[KPX_KIND_MAX] = {
	[KPX_KIND_SERVICE] = "/api/v1/services",
	[KPX_KIND_ENDPOINTSLICE] = "/apis/discovery.k8s.io/v1/endpointslices",
	[KPX_KIND_NODE] = "/api/v1/nodes",
};

void kpx_k8s_set_limits(struct kpx_k8s *k, double qps, int burst,
			int request_timeout_s, int stall_timeout_s)
{
	kpx_ratelimit_init(&k->rl, qps, burst, kpx_now_ms());
	if (request_timeout_s > 0)
		k->request_timeout_s = request_timeout_s;
	if (stall_timeout_s > 0)
		k->stall_timeout_s = stall_timeout_s;
}

void kpx_k8s_set_metrics(struct kpx_k8s *k, struct kpx_metrics *m)
{
	k->metrics = m;
}

int kpx_k8s_parse_time(const char *s, double *out)
{
	struct tm tm = { 0 };
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	double frac = 0, scale = 0.1;
	long off = 0;
	time_t t;

	if (!p)
		return -EINVAL;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
		   isdigit((unsigned char)p[2]) && p[3] == ':' &&
		   isdigit((unsigned char)p[4]) && isdigit((unsigned char)p[5])) {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
		      ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		if (*p == '-')
			off = -off;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = (double)(t - off) + frac;
	return 0;
}
static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct res *r = ud;
	size_t total = size * nmemb;
	int ret;

	if (!r->code)
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->code);
	if (r->code != 200) {
		/* Keep the start of an error body (a Status) for the log. */
		size_t room = ERRBODY_MAX - 1 - r->errlen;
		size_t n = total < room ? total : room;

		memcpy(r->errbody + r->errlen, p, n);
		r->errlen += n;
		r->errbody[r->errlen] = '\0';
		return total;
	}
	/*
	 * Malformed JSON ends a list page and a watch alike: the watch is
	 * resumed from the last applied resourceVersion, so the event that
	 * did not parse is received again rather than lost.
	 */
	ret = kpx_jstream_feed(r->json, p, total, false, k8s_on_value, r);
	if (ret) {
		if (ret == -EBADMSG)
			r->bad = r->cur == REQ_WATCH ? "malformed watch event" :
				 "malformed list response";
		r->aborted = true;
		return 0;
	}
	return total;
}

/* Query string selecting the objects of @kind, URL-escaped. */
static char *make_selector(CURL *c, enum kpx_kind kind, const char *node)
{
	char *sel = NULL, *raw = NULL, *esc;

	if (kind == KPX_KIND_NODE && asprintf(&raw, "metadata.name=%s", node) < 0)
		return NULL;
	esc = curl_easy_escape(c, raw ? raw : PROXY_SELECTOR, 0);
	if (esc && asprintf(&sel, "%s=%s", raw ? "fieldSelector" : "labelSelector", esc) < 0)
		sel = NULL;
	curl_free(esc);
	free(raw);
	return sel;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/*
 * client-go's reflector's relistResourceVersion(): "" (NULL) after an
 * expired or too large one, "0" before the first list completed, else the
 * last resourceVersion seen.
 */
static void list_rv_choose(struct res *r)
{
	free(r->list_rv_buf);
	r->list_rv_buf = NULL;
	if (r->rv_unavailable)
		r->list_rv = NULL;
	else if (!r->rv)
		r->list_rv = "0";
	else
		r->list_rv = r->list_rv_buf = strdup(r->rv);	/* NULL: quorum */
}

static char *make_url(struct res *r, enum req req, long *timeout_s)
{
	CURL *c = r->easy;
	char *url = NULL, *esc = NULL;
	int ret;

	if (req == REQ_LIST && r->cont) {
		/* a continue page: no resourceVersion, as client-go's pager */
		if (!(esc = curl_easy_escape(c, r->cont, 0)))
			return NULL;
		ret = asprintf(&url, "%s%s?%s&limit=%d&continue=%s", r->k->base, r->path,
			       r->selector, LIST_LIMIT, esc);
		*timeout_s = r->k->request_timeout_s;
	} else if (req == REQ_LIST) {
		bool limit;

		list_rv_choose(r);
		/*
		 * The reflector's pager: a limit, except at a resourceVersion
		 * other than "0" unless an earlier list was paged (the watch
		 * cache then serves it whole; it ignores the limit at "0").
		 */
		limit = !r->list_rv || !strcmp(r->list_rv, "0") || r->paginated;
		if (r->list_rv && !(esc = curl_easy_escape(c, r->list_rv, 0)))
			return NULL;
		ret = asprintf(&url, "%s%s?%s%s%s%s", r->k->base, r->path, r->selector,
			       esc ? "&resourceVersion=" : "", esc ? esc : "",
			       limit ? "&limit=" STR(LIST_LIMIT) : "");
		*timeout_s = r->k->request_timeout_s;
	} else {
		long t = WATCH_MIN_S + random() % (WATCH_MIN_S + 1);

		if (!(esc = curl_easy_escape(c, r->rv, 0)))
			return NULL;
		ret = asprintf(&url, "%s%s?%s&watch=true&allowWatchBookmarks=true"
			       "&resourceVersion=%s&timeoutSeconds=%ld",
			       r->k->base, r->path, r->selector, esc, t);
		*timeout_s = t + 60;	/* client-side guard for a dead peer */
	}
	curl_free(esc);
	return ret < 0 ? NULL : url;
}

static void set_pem(CURL *c, const struct kpx_pem *pem, CURLoption blob_opt,
		    CURLoption file_opt)
{
	if (pem->data) {
		struct curl_blob b = {
			.data = pem->data, .len = pem->len,
			.flags = CURL_BLOB_COPY,
		};

		curl_easy_setopt(c, blob_opt, &b);
	} else if (pem->file) {
		curl_easy_setopt(c, file_opt, pem->file);
	}
}

int k8s_set_auth(struct kpx_k8s *k, CURL *c)
{
	const struct kpx_kubeconfig *kc = k->kc;
	char *token;

	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, kc->insecure ? 0L : 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, kc->insecure ? 0L : 2L);
	set_pem(c, &kc->ca, CURLOPT_CAINFO_BLOB, CURLOPT_CAINFO);
	set_pem(c, &kc->cert, CURLOPT_SSLCERT_BLOB, CURLOPT_SSLCERT);
	set_pem(c, &kc->key, CURLOPT_SSLKEY_BLOB, CURLOPT_SSLKEY);
	if (!kc->token && !kc->token_file)
		return 0;
	token = kpx_kubeconfig_token(kc);
	if (!token) {
		kpx_warn("k8s", "cannot read token file %s: %s", kc->token_file,
			 strerror(errno));
		return 0;
	}
	curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
	curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, token);	/* copied */
	free(token);
	return 0;
}

/* Starts the request r->next.  On failure retries later. */
static void start(struct res *r)
{
	struct kpx_k8s *k = r->k;
	long timeout_s = 0;
	char *url = NULL;
	CURL *c;

	r->easy = c = curl_easy_init();
	if (!c)
		goto fail;
	if (r->next == REQ_WATCH && !r->rv)	/* lost to a failed strdup() */
		r->next = REQ_LIST;
	r->cur = r->next;
	url = make_url(r, r->cur, &timeout_s);
	if (!url)
		goto fail;
	kpx_jstream_reset(r->json);
	r->code = 0;
	r->errlen = 0;
	r->errbody[0] = r->curlerr[0] = '\0';
	r->page_ok = r->gone = r->aborted = false;
	r->bad = NULL;
	r->events = 0;
	r->first_page = r->cur == REQ_LIST && !r->cont;
	if (r->first_page)
		r->items = r->pages = 0;

	curl_easy_setopt(c, CURLOPT_URL, url);
	/* only what kpx_kubeconfig_server() let through, and no redirects */
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PRIVATE, r);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->curlerr);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, k->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kpx-agent");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	/* A watch gets bookmarks: silence this long is a dead stream. */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
			 (long)(r->cur == REQ_WATCH ? k->stall_timeout_s : k->request_timeout_s));
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 10L);
	k8s_set_auth(k, c);
	if (curl_multi_add_handle(k->multi, c) != CURLM_OK)
		goto fail;
	kpx_dbg(2, "k8s", "GET %s", url);
	r->started = kpx_now_ms();
	free(url);
	return;
fail:
	kpx_err("k8s", "%s: cannot start a request: out of memory", r->name);
	free(url);
	curl_easy_cleanup(c);
	r->easy = NULL;
	k8s_backoff(r);
}

/* "HTTP 403: <Status message>" or the curl error, for logs. */
static const char *failure(struct res *r, CURLcode res, char *buf, size_t len)
{
	struct json_object *st;
	const char *msg = NULL;

	if (res != CURLE_OK && !r->aborted) {
		snprintf(buf, len, "%s", r->curlerr[0] ? r->curlerr : curl_easy_strerror(res));
		return buf;
	}
	if (r->code == 200) {
		snprintf(buf, len, "%s", r->bad ? r->bad : "invalid response");
		return buf;
	}
	st = json_tokener_parse(r->errbody);
	kpx_json_string(st, "message", &msg);
	snprintf(buf, len, "HTTP %ld: %.400s", r->code, msg ? msg : r->errbody);
	json_object_put(st);
	return buf;
}

/* A list's resourceVersion was refused: 410 Expired or 504 too large. */
static bool list_rv_gone(struct res *r)
{
	struct json_object *st;
	bool gone;

	if (r->code == 410)
		return true;
	if (r->code != 504)
		return false;
	st = json_tokener_parse(r->errbody);
	gone = k8s_rv_too_large(st);
	json_object_put(st);
	return gone;
}

static void list_done(struct res *r, CURLcode res)
{
	char why[512];

	if (res == CURLE_OK && r->code == 200 && r->page_ok) {
		r->pages++;
		if (r->cont) {
			k8s_schedule_now(r, REQ_LIST);	/* next page */
			return;
		}
		kpx_model_relist_end(r->k->model, r->kind);
		r->relisting = false;
		if (r->kind == KPX_KIND_NODE)
			k8s_node_listed(r);
		if (r->list_rv && !strcmp(r->list_rv, "0") && r->pages > 1)
			r->paginated = true;
		r->rv_unavailable = false;
		kpx_info("k8s", "%s: listed %lu at resourceVersion %s%s (asked for %s, %u page%s)",
			 r->name, r->items, r->page_rv ? r->page_rv : "?",
			 r->synced ? " (relist)" : "", r->list_rv ? r->list_rv : "the latest",
			 r->pages, r->pages == 1 ? "" : "s");
		r->synced = true;
		k8s_set_str(&r->rv, r->page_rv);
		r->backoff_ms = BACKOFF_MIN_MS;
		k8s_schedule_now(r, r->rv ? REQ_WATCH : REQ_LIST);
		if (!r->rv) {
			kpx_err("k8s", "%s: list without resourceVersion", r->name);
			k8s_backoff(r);
		}
		return;
	}
	if (r->first_page && r->list_rv && list_rv_gone(r)) {
		/*
		 * The reflector: the resourceVersion listed at expired (410) or
		 * is newer than the cache (504 ResourceVersionTooLarge): list
		 * again at once, at the latest (a quorum read).
		 */
		kpx_info("k8s", "%s: list at resourceVersion %s: %s, listing the latest",
			 r->name, r->list_rv, failure(r, res, why, sizeof(why)));
		r->rv_unavailable = true;
		k8s_schedule_now(r, REQ_LIST);
		return;
	}
	if (r->code == 410)
		kpx_info("k8s", "%s: list continue token expired, listing again from the first page",
			 r->name);
	else
		kpx_err("k8s", "%s: list failed: %s%s", r->name, failure(r, res, why, sizeof(why)),
			r->relisting ? "; nothing deleted, listing again from the first page" : "");
	k8s_set_str(&r->cont, NULL);
	r->next = REQ_LIST;
	k8s_backoff(r);
}

static void watch_done(struct res *r, CURLcode res)
{
	char why[512];

	kpx_metrics_watch_restart(r->k->metrics, r->kind);
	if (res == CURLE_OPERATION_TIMEDOUT && !r->gone)
		kpx_warn("k8s", "%s: watch stalled or timed out (no data for %d s), re-watching",
			 r->name, r->k->stall_timeout_s);

	if (!r->gone && r->code == 504) {
		struct json_object *st = json_tokener_parse(r->errbody);

		if (k8s_rv_too_large(st)) {
			kpx_warn("k8s", "%s: resourceVersion %s is too large for this API server, relisting",
				 r->name, r->rv);
			r->gone = true;
		}
		json_object_put(st);
	}
	if (r->gone || r->code == 410) {
		if (!r->gone)
			kpx_info("k8s", "%s: resourceVersion %s expired, relisting",
				 r->name, r->rv);
		k8s_set_str(&r->cont, NULL);
		k8s_schedule_now(r, REQ_LIST);
		return;
	}
	r->next = REQ_WATCH;
	if ((res == CURLE_OK && r->code == 200) && !r->aborted) {
		kpx_dbg(2, "k8s", "%s: watch ended after %lu events", r->name, r->events);
		/* A healthy watch ended (server timeout): re-watch at once. */
		if (r->events || kpx_now_ms() - r->started > 10000) {
			r->backoff_ms = BACKOFF_MIN_MS;
			r->next_at = kpx_now_ms();
			return;
		}
	} else if (!r->aborted) {
		kpx_warn("k8s", "%s: watch failed: %s", r->name,
			 failure(r, res, why, sizeof(why)));
	} else if (r->bad) {
		kpx_warn("k8s", "%s: %s, re-watching from resourceVersion %s",
			 r->name, r->bad, r->rv);
	}
	k8s_backoff(r);
}

/*
 * The host[:port] of @url as written (Go's url.URL.Host, client-go's
 * "host" label: no default port added), into @buf ("" if it does not parse).
 */
static void url_host(const char *url, char *buf, size_t len)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL;

	buf[0] = '\0';
	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0)) {
		curl_url_cleanup(u);
		return;
	}
	if (curl_url_get(u, CURLUPART_PORT, &port, 0))
		port = NULL;
	snprintf(buf, len, "%s%s%s", host, port ? ":" : "", port ? port : "");
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
}

static void done(struct kpx_k8s *k, CURL *c, CURLcode res)
{
	struct res *r = NULL;
	curl_off_t us = 0;

	if (k8s_post_done(k, c, res))
		return;
	curl_easy_getinfo(c, CURLINFO_PRIVATE, (char **)&r);
	if (!r->code)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
	/* client-go: every request's code; a list's whole latency, none
	 * for a watch (its response streams for minutes) */
	curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &us);
	kpx_metrics_rest_request(k->metrics, r->code, "GET", k->host,
				 r->cur == REQ_LIST ? (double)us / 1e6 : -1);
	curl_multi_remove_handle(k->multi, c);
	curl_easy_cleanup(c);
	r->easy = NULL;
	if (r->cur == REQ_LIST)
		list_done(r, res);
	else
		watch_done(r, res);
}

int kpx_k8s_poll(struct kpx_k8s *k, int fd, int timeout_ms)
{
	struct curl_waitfd wfd = { .fd = fd, .events = CURL_WAIT_POLLIN };
	int64_t now = kpx_now_ms();
	int i, running, queued, ret = 0;
	CURLMsg *msg;

	for (i = 0; i < KPX_KIND_MAX; i++) {
		struct res *r = &k->res[i];

		if (r->easy)
			continue;
		if (r->next_at <= now) {
			int64_t wait = kpx_ratelimit_take(&k->rl, now);

			if (wait) {
				kpx_dbg(4, "k8s", "%s: client-side rate limit, %lld ms",
					r->name, (long long)wait);
				r->next_at = now + wait;
				if (!r->throttled_at)
					r->throttled_at = now;
				if (wait < timeout_ms)
					timeout_ms = (int)wait;
				continue;
			}
			kpx_metrics_rest_ratelimit(k->metrics, "GET", k->host,
						   r->throttled_at ?
						   (double)(now - r->throttled_at) / 1e3 : 0);
			r->throttled_at = 0;
			start(r);
		}
		else if (r->next_at - now < timeout_ms)
			timeout_ms = (int)(r->next_at - now);
	}
	if (timeout_ms < 0)
		timeout_ms = 0;
	if (curl_multi_poll(k->multi, &wfd, fd >= 0, timeout_ms, NULL) != CURLM_OK)
		return -EIO;
	if (fd >= 0 && (wfd.revents & CURL_WAIT_POLLIN))
		ret = 1;
	if (curl_multi_perform(k->multi, &running) != CURLM_OK)
		return -EIO;
	while ((msg = curl_multi_info_read(k->multi, &queued)))
		if (msg->msg == CURLMSG_DONE)
			done(k, msg->easy_handle, msg->data.result);
	return ret;
}

bool kpx_k8s_synced(const struct kpx_k8s *k, enum kpx_kind kind)
{
	return k->res[kind].synced;
}

struct kpx_k8s *kpx_k8s_new(const struct kpx_kubeconfig *kc, const char *node,
			    struct kpx_model *model)
{
	struct kpx_k8s *k;
	size_t len;
	CURL *tmp;
	int i;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errno = EIO;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->kc = kc;
	k->model = model;
	k->request_timeout_s = LIST_TIMEOUT_S;
	k->stall_timeout_s = STALL_TIMEOUT_S;
	kpx_ratelimit_init(&k->rl, 5, 10, kpx_now_ms());
	k8s_posts_init(k);
	srandom((unsigned int)(kpx_now_ms() ^ getpid()));
	k->base = strdup(kc->server);
	k->node = strdup(node);
	k->multi = curl_multi_init();
	k->headers = curl_slist_append(NULL, "Accept: application/json");
	tmp = curl_easy_init();
	if (!k->base || !k->node || !k->multi || !k->headers || !tmp)
		goto fail;
	len = strlen(k->base);
	while (len && k->base[len - 1] == '/')
		k->base[--len] = '\0';
	url_host(k->base, k->host, sizeof(k->host));
	if (!strncasecmp(k->base, "http://", 7) && (kc->token || kc->token_file))
		kpx_warn("k8s", "server %s is plain http: the bearer token is sent unencrypted",
			 k->base);
	for (i = 0; i < KPX_KIND_MAX; i++) {
		struct res *r = &k->res[i];

		r->k = k;
		r->kind = i;
		r->name = kind_names[i];
		r->path = kind_paths[i];
		r->backoff_ms = BACKOFF_MIN_MS;
		r->next = REQ_LIST;
		r->selector = make_selector(tmp, i, node);
		r->json = kpx_jstream_new(r->name, JSON_DEPTH);
		if (!r->selector || !r->json)
			goto fail;
	}
	curl_easy_cleanup(tmp);
	return k;
fail:
	curl_easy_cleanup(tmp);
	kpx_k8s_free(k);
	errno = ENOMEM;
	return NULL;
}

void kpx_k8s_free(struct kpx_k8s *k)
{
	int i;

	if (!k)
		return;
	for (i = 0; i < KPX_KIND_MAX; i++) {
		struct res *r = &k->res[i];

		if (r->easy) {
			curl_multi_remove_handle(k->multi, r->easy);
			curl_easy_cleanup(r->easy);
		}
		kpx_jstream_free(r->json);
		free(r->selector);
		free(r->rv);
		free(r->cont);
		free(r->page_rv);
		free(r->list_rv_buf);
	}
	k8s_posts_free(k);
	curl_multi_cleanup(k->multi);
	curl_slist_free_all(k->headers);
	free(k->base);
	free(k->node);
	free(k);
	curl_global_cleanup();
}

