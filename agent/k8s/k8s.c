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
#include "base/log.h"
#include "base/ratelimit.h"

#define LIST_LIMIT		500
#define BACKOFF_MIN_MS		500
#define BACKOFF_MAX_MS		30000
#define WATCH_MIN_S		300	/* server-side timeout, jittered to 2x */
#define CONNECT_TIMEOUT_S	10
#define LIST_TIMEOUT_S		60
#define STALL_TIMEOUT_S		150
#define TRIGGER_ANNOTATION	"endpoints.kubernetes.io/last-change-trigger-time"
#define TO_BE_DELETED_TAINT	"ToBeDeletedByClusterAutoscaler"
#define JSON_DEPTH		64	/* managedFields nests deeply */
#define ERRBODY_MAX		1024
/* "namespace/name": a DNS-1123 label and a DNS-1123 subdomain */
#define KPX_OBJ_NAME_LEN	(63 + 1 + 253 + 1)
/* metav1.CauseTypeResourceVersionTooLarge; older servers' messages */
#define CAUSE_RV_TOO_LARGE	"ResourceVersionTooLarge"
#define MSG_RV_TOO_LARGE	"Too large resource version"

/* kube-proxy's label selector for Services and EndpointSlices. */
#define PROXY_SELECTOR \
	"!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name"

enum req { REQ_LIST, REQ_WATCH };

struct res {
	struct kpx_k8s *k;
	enum kpx_kind kind;
	const char *name;	/* for logs */
	const char *path;
	char *selector;		/* "labelSelector=..." or "fieldSelector=...", escaped */

	enum req next;		/* what to send when next_at comes */
	int64_t next_at;	/* monotonic ms; meaningful while !easy */
	int backoff_ms;
	char *rv;		/* resourceVersion to watch from */
	char *cont;		/* list continue token */
	bool relisting;		/* between kpx_model_relist_begin() and _end() */
	bool first_page;	/* the list request in flight has no continue */
	bool synced;		/* an initial list completed */

	/* The transfer in flight. */
	CURL *easy;
	enum req cur;
	int64_t started;
	struct kpx_jstream *json;
	long code;		/* HTTP status, once known */
	char errbody[ERRBODY_MAX];
	size_t errlen;
	char curlerr[CURL_ERROR_SIZE];
	bool page_ok;		/* a list page was parsed */
	bool gone;		/* the watch needs a relist: 410, too large RV */
	bool aborted;		/* we stopped the transfer (bad data, ERROR) */
	const char *bad;	/* why a 200 reply was refused, or NULL */
	char *page_rv;		/* resourceVersion of the list */
	unsigned long items, events;
};

struct kpx_k8s {
	const struct kpx_kubeconfig *kc;
	struct kpx_model *model;
	CURLM *multi;
	struct curl_slist *headers;
	char *base;		/* server URL without trailing '/' */
	char *node;		/* the own Node's name */
	bool node_seen;		/* the own Node was listed or added */
	struct res res[KPX_KIND_MAX];
	struct kpx_ratelimit rl;
	int request_timeout_s, stall_timeout_s;
	struct kpx_metrics *metrics;	/* or NULL */
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

/* The slice's last-change-trigger-time, or 0. */
static double trigger_time(struct json_object *o)
{
	struct json_object *meta = NULL, *ann = NULL;
	const char *s = NULL;
	double t;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	kpx_json_field(meta, "annotations", json_type_object, &ann);
	kpx_json_string(ann, TRIGGER_ANNOTATION, &s);
	return s && !kpx_k8s_parse_time(s, &t) ? t : 0;
}

/* kube-proxy's node eligibility: not being deleted, not tainted for it. */
static bool node_eligible(struct json_object *o)
{
	struct json_object *meta = NULL, *spec = NULL, *taints = NULL, *del = NULL;
	size_t i, n;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	if (meta && json_object_object_get_ex(meta, "deletionTimestamp", &del) && del)
		return false;
	kpx_json_field(o, "spec", json_type_object, &spec);
	kpx_json_field(spec, "taints", json_type_array, &taints);
	n = taints ? json_object_array_length(taints) : 0;
	for (i = 0; i < n; i++) {
		const char *key = NULL;

		kpx_json_string(json_object_array_get_idx(taints, i), "key", &key);
		if (key && !strcmp(key, TO_BE_DELETED_TAINT))
			return false;
	}
	return true;
}

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

/* "ns/name" of an API object for logs, into @buf. */
static const char *obj_name(struct json_object *o, char *buf, size_t len)
{
	struct json_object *meta = NULL;
	const char *ns = NULL, *name = NULL;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	kpx_json_string(meta, "namespace", &ns);
	kpx_json_string(meta, "name", &name);
	snprintf(buf, len, "%s%s%s", ns ? ns : "", ns ? "/" : "",
		 name ? name : "?");
	return buf;
}

/* metadata.<key> of @o as a string, or NULL. */
static const char *meta_str(struct json_object *o, const char *key)
{
	struct json_object *meta = NULL;
	const char *s = NULL;

	kpx_json_field(o, "metadata", json_type_object, &meta);
	kpx_json_string(meta, key, &s);
	return s && *s ? s : NULL;
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? strdup(s) : NULL;
}

/* Schedules the next request of @r after a jittered, growing delay. */
static void backoff(struct res *r)
{
	int b = r->backoff_ms;

	r->next_at = kpx_now_ms() + b / 2 + random() % (b / 2 + 1);
	r->backoff_ms = b * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b * 2;
}

static void schedule_now(struct res *r, enum req next)
{
	r->next = next;
	r->next_at = kpx_now_ms();
}

static void apply(struct res *r, enum kpx_event ev, struct json_object *obj)
{
	char name[KPX_OBJ_NAME_LEN];
	const char *rv = meta_str(obj, "resourceVersion");

	struct kpx_k8s *k = r->k;

	if (kpx_model_apply(k->model, r->kind, ev, obj) == -EINVAL)
		kpx_warn("k8s", "%s: skipping malformed object %s", r->name,
			 obj_name(obj, name, sizeof(name)));
	if (k->metrics) {
		kpx_metrics_change(k->metrics, r->kind, kpx_model_dirty(k->model),
				   r->kind == KPX_KIND_ENDPOINTSLICE ? trigger_time(obj) : 0);
		if (r->kind == KPX_KIND_NODE)
			kpx_metrics_node_eligible(k->metrics,
						  ev != KPX_EV_DELETED && node_eligible(obj));
	}
	if (rv && r->cur == REQ_WATCH)
		set_str(&r->rv, rv);
	if (r->kind == KPX_KIND_NODE && r->cur == REQ_WATCH) {
		if (ev == KPX_EV_DELETED) {
			kpx_warn("k8s", "node: Node %s deleted: no NodePort frontends until it is registered again",
				 k->node);
			k->node_seen = false;
		} else if (!k->node_seen) {
			kpx_info("k8s", "node: Node %s registered", k->node);
			k->node_seen = true;
		}
	}
}

/*
 * After a list of the own Node: without it (a --hostname-override that
 * matches no Node) the node has no NodePort addresses and no
 * eligibility, so say so; the watch goes on and picks it up once it is
 * registered (kube-proxy likewise waits for its Node).
 */
static void node_listed(struct res *r)
{
	struct kpx_k8s *k = r->k;

	if (r->items) {
		if (!k->node_seen && r->synced)
			kpx_info("k8s", "node: Node %s found", k->node);
		k->node_seen = true;
		return;
	}
	k->node_seen = false;
	kpx_warn("k8s", "node: no Node named \"%s\" (--hostname-override, or the host name): "
		 "no NodePort frontends and no node eligibility until it is registered; waiting for it",
		 k->node);
}

/* One page of a list.  Returns 0, or -1 to abort the transfer. */
static int on_page(struct res *r, struct json_object *list)
{
	struct json_object *items = NULL;
	size_t i, n;

	/*
	 * A list (ListMeta) always carries items (possibly empty or null)
	 * and metadata.resourceVersion; a 200 without them (an auth proxy's
	 * "{}", an error object) is not an empty list and must delete
	 * nothing.
	 */
	if (!json_object_object_get_ex(list, "items", NULL) ||
	    kpx_json_field(list, "items", json_type_array, &items) < 0) {
		r->bad = "list response without an items array";
		return -1;
	}
	if (!meta_str(list, "resourceVersion")) {
		r->bad = "list response without metadata.resourceVersion";
		return -1;
	}
	/*
	 * Each list from its first page is a new relist generation: what a
	 * list that failed partway (or whose continue token expired)
	 * applied does not count as seen, so an object deleted meanwhile
	 * is dropped at the end (client-go's reflector likewise replaces
	 * its store with one complete list).
	 */
	if (r->first_page) {
		if (r->relisting)
			kpx_info("k8s", "%s: list restarted from the first page", r->name);
		kpx_model_relist_begin(r->k->model, r->kind);
		if (!r->relisting && r->synced)
			kpx_metrics_relist(r->k->metrics, r->kind);
		r->relisting = true;
		r->first_page = false;
	}
	n = items ? json_object_array_length(items) : 0;
	for (i = 0; i < n; i++)
		apply(r, KPX_EV_ADDED, json_object_array_get_idx(items, i));
	r->items += n;
	set_str(&r->cont, meta_str(list, "continue"));
	set_str(&r->page_rv, meta_str(list, "resourceVersion"));
	r->page_ok = true;
	return 0;
}

/*
 * Whether the Status @st says the resourceVersion asked for is newer than
 * the server has (apimachinery's IsTooLargeResourceVersionError as
 * client-go's reflector tests it): a cause ResourceVersionTooLarge, or, from
 * servers before 1.18.6, a 504 Timeout whose cause or message says "Too
 * large resource version".
 */
static bool rv_too_large(struct json_object *st)
{
	struct json_object *det = NULL, *causes = NULL;
	const char *msg = NULL, *reason = NULL;
	int64_t code = 0;
	size_t i, n;

	kpx_json_int(st, "code", 0, 999, &code);
	kpx_json_string(st, "reason", &reason);
	kpx_json_field(st, "details", json_type_object, &det);
	kpx_json_field(det, "causes", json_type_array, &causes);
	n = causes ? json_object_array_length(causes) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(causes, i);
		const char *cr = NULL, *cm = NULL;

		kpx_json_string(c, "reason", &cr);
		kpx_json_string(c, "message", &cm);
		if (cr && !strcmp(cr, CAUSE_RV_TOO_LARGE))
			return true;
		if (code == 504 && cm && !strcmp(cm, MSG_RV_TOO_LARGE))
			return true;
	}
	kpx_json_string(st, "message", &msg);
	return code == 504 && reason && !strcmp(reason, "Timeout") && msg &&
	       strstr(msg, MSG_RV_TOO_LARGE);
}

/* One watch event.  Returns 0, or -1 to end the watch. */
static int on_event(struct res *r, struct json_object *ev)
{
	static const struct {
		const char *type;
		enum kpx_event ev;
	} types[] = {
		{ "ADDED", KPX_EV_ADDED },
		{ "MODIFIED", KPX_EV_MODIFIED },
		{ "DELETED", KPX_EV_DELETED },
	};
	struct json_object *obj = NULL;
	const char *type = NULL, *msg = NULL, *rv;
	int64_t code = 0;
	size_t i;

	/*
	 * An event that cannot be decoded ends the watch, which is resumed
	 * from the last applied resourceVersion (client-go's StreamWatcher
	 * and reflector): skipping it would lose that change for good.
	 */
	if (kpx_json_string(ev, "type", &type) <= 0 ||
	    kpx_json_field(ev, "object", json_type_object, &obj) <= 0) {
		r->bad = "watch event without type or object";
		return -1;
	}
	r->events++;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (!strcmp(type, types[i].type)) {
			apply(r, types[i].ev, obj);
			return 0;
		}
	}
	if (!strcmp(type, "BOOKMARK")) {
		if ((rv = meta_str(obj, "resourceVersion")))
			set_str(&r->rv, rv);
		kpx_dbg(4, "k8s", "%s: bookmark at %s", r->name, r->rv);
		return 0;
	}
	if (!strcmp(type, "ERROR")) {
		kpx_json_int(obj, "code", 0, 999, &code);
		kpx_json_string(obj, "message", &msg);
		if (code == 410) {
			kpx_info("k8s", "%s: resourceVersion %s expired, relisting: %s",
				 r->name, r->rv, msg ? msg : "");
			r->gone = true;
		} else if (rv_too_large(obj)) {
			kpx_warn("k8s", "%s: resourceVersion %s is too large for this API server, relisting: %s",
				 r->name, r->rv, msg ? msg : "");
			r->gone = true;
		} else {
			kpx_warn("k8s", "%s: watch error %d: %s", r->name,
				 (int)code, msg ? msg : "(no message)");
		}
		return -1;
	}
	/*
	 * A type this client does not know (client-go's watchHandler logs
	 * and skips it): ending the watch would replay the same event from
	 * the same resourceVersion and hold back every later change.
	 */
	kpx_warn("k8s", "%s: unknown watch event type \"%s\", skipped", r->name, type);
	return 0;
}

static int on_value(void *ctx, struct json_object *obj)
{
	struct res *r = ctx;

	return r->cur == REQ_LIST ? on_page(r, obj) : on_event(r, obj);
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
	ret = kpx_jstream_feed(r->json, p, total, false, on_value, r);
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

static char *make_url(struct res *r, enum req req, long *timeout_s)
{
	CURL *c = r->easy;
	char *url = NULL, *esc = NULL;
	int ret;

	if (req == REQ_LIST) {
		if (r->cont && !(esc = curl_easy_escape(c, r->cont, 0)))
			return NULL;
		ret = asprintf(&url, "%s%s?%s&limit=%d%s%s", r->k->base, r->path,
			       r->selector, LIST_LIMIT, esc ? "&continue=" : "",
			       esc ? esc : "");
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

static int set_auth(struct kpx_k8s *k, CURL *c)
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
		r->items = 0;

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
	set_auth(k, c);
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
	backoff(r);
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

static void list_done(struct res *r, CURLcode res)
{
	char why[512];

	if (res == CURLE_OK && r->code == 200 && r->page_ok) {
		if (r->cont) {
			schedule_now(r, REQ_LIST);	/* next page */
			return;
		}
		kpx_model_relist_end(r->k->model, r->kind);
		r->relisting = false;
		if (r->kind == KPX_KIND_NODE)
			node_listed(r);
		kpx_info("k8s", "%s: listed %lu at resourceVersion %s%s", r->name,
			 r->items, r->page_rv ? r->page_rv : "?",
			 r->synced ? " (relist)" : "");
		r->synced = true;
		set_str(&r->rv, r->page_rv);
		r->backoff_ms = BACKOFF_MIN_MS;
		schedule_now(r, r->rv ? REQ_WATCH : REQ_LIST);
		if (!r->rv) {
			kpx_err("k8s", "%s: list without resourceVersion", r->name);
			backoff(r);
		}
		return;
	}
	if (r->code == 410)
		kpx_info("k8s", "%s: list continue token expired, listing again from the first page",
			 r->name);
	else
		kpx_err("k8s", "%s: list failed: %s%s", r->name, failure(r, res, why, sizeof(why)),
			r->relisting ? "; nothing deleted, listing again from the first page" : "");
	set_str(&r->cont, NULL);
	r->next = REQ_LIST;
	backoff(r);
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

		if (rv_too_large(st)) {
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
		set_str(&r->cont, NULL);
		schedule_now(r, REQ_LIST);
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
	backoff(r);
}

static void done(struct kpx_k8s *k, CURL *c, CURLcode res)
{
	struct res *r = NULL;

	curl_easy_getinfo(c, CURLINFO_PRIVATE, (char **)&r);
	if (!r->code)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
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
				if (wait < timeout_ms)
					timeout_ms = (int)wait;
				continue;
			}
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
	}
	curl_multi_cleanup(k->multi);
	curl_slist_free_all(k->headers);
	free(k->base);
	free(k->node);
	free(k);
	curl_global_cleanup();
}
