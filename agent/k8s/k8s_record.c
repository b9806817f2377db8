// SPDX-License-Identifier: GPL-2.0-only
/*
 * Node Events, as kube-proxy's recorder posts them (client-go
 * tools/events, events.k8s.io/v1): POST
 * /apis/events.k8s.io/v1/namespaces/default/events on the client's libcurl
 * multi handle, never waited for.
 *
 * The Event:
 *   metadata.name        "<node>.<eventTime in ns, hex>", namespace "default"
 *                        (the recorder's for a cluster-scoped object)
 *   eventTime            RFC 3339 with microseconds, UTC
 *   reportingController  "kube-proxy"
 *   reportingInstance    "kube-proxy-<gethostname()>"
 *   regarding            {kind: Node, name: <node>, uid: <node>} (kube-proxy's
 *                        NodeRef carries the node name as its UID)
 *   type, reason, action, note
 *
 * Best-effort: at most EV_INFLIGHT posts at once, rate-limited (burst
 * EV_BURST, then one per EV_REFILL_S s, client-go's event spam filter);
 * an Event that does not fit is dropped and logged at -v 2; a failed post
 * (403 from RBAC, 5xx, no connection) is warned about once (until a post
 * succeeds again) and not retried.  Their own token bucket: they take
 * nothing from --kube-api-qps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "base/duration.h"
#include "base/log.h"
#include "k8s/decode.h"
#include "k8s/k8s.h"
#include "k8s/k8s_priv.h"

#define EV_BURST	25
#define EV_REFILL_S	300
#define EV_TIMEOUT_S	10
#define EV_PATH		"/apis/events.k8s.io/v1/namespaces/default/events"

static size_t post_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct k8s_post *ps = ud;
	size_t total = size * nmemb, room = sizeof(ps->errbody) - 1 - ps->errlen;
	size_t n = total < room ? total : room;

	memcpy(ps->errbody + ps->errlen, p, n);
	ps->errlen += n;
	ps->errbody[ps->errlen] = '\0';
	return total;
}

/* The Event as JSON, or NULL (out of memory). */
static char *event_body(const struct kpx_k8s *k, const char *type, const char *reason,
			const char *action, const char *note)
{
	struct json_object *ev = json_object_new_object(), *md, *reg;
	char name[KPX_OBJ_NAME_LEN + 20], when[40], host[256] = "", inst[300];
	struct timespec ts;
	struct tm tm;
	const char *js;
	char *out;

	if (!ev)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%06ldZ",
		 ts.tv_nsec / 1000);
	snprintf(name, sizeof(name), "%s.%llx", k->node,
		 (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
	gethostname(host, sizeof(host) - 1);
	snprintf(inst, sizeof(inst), "kube-proxy-%s", host);

	md = json_object_new_object();
	reg = json_object_new_object();
	if (!md || !reg) {
		json_object_put(md);
		json_object_put(reg);
		json_object_put(ev);
		return NULL;
	}
	json_object_object_add(ev, "apiVersion", json_object_new_string("events.k8s.io/v1"));
	json_object_object_add(ev, "kind", json_object_new_string("Event"));
	json_object_object_add(md, "name", json_object_new_string(name));
	json_object_object_add(md, "namespace", json_object_new_string("default"));
	json_object_object_add(ev, "metadata", md);
	json_object_object_add(ev, "eventTime", json_object_new_string(when));
	json_object_object_add(ev, "reportingController", json_object_new_string("kube-proxy"));
	json_object_object_add(ev, "reportingInstance", json_object_new_string(inst));
	json_object_object_add(ev, "action", json_object_new_string(action));
	json_object_object_add(ev, "reason", json_object_new_string(reason));
	json_object_object_add(ev, "type", json_object_new_string(type));
	if (note && *note)
		json_object_object_add(ev, "note", json_object_new_string(note));
	json_object_object_add(reg, "kind", json_object_new_string("Node"));
	json_object_object_add(reg, "name", json_object_new_string(k->node));
	json_object_object_add(reg, "uid", json_object_new_string(k->node));
	json_object_object_add(ev, "regarding", reg);
	js = json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN);
	out = js ? strdup(js) : NULL;
	json_object_put(ev);
	return out;
}

int kpx_k8s_event(struct kpx_k8s *k, const char *type, const char *reason,
		  const char *action, const char *note)
{
	struct k8s_post *ps = NULL;
	char *url = NULL;
	CURL *c;
	int i;

	for (i = 0; i < EV_INFLIGHT && !ps; i++)
		if (!k->posts[i].easy)
			ps = &k->posts[i];
	if (!k->post_headers)
		return -ENOMEM;
	if (!ps || kpx_ratelimit_take(&k->ev_rl, kpx_now_ms())) {
		kpx_dbg(2, "k8s", "event %s dropped: %s", reason,
			ps ? "rate limit" : "too many in flight");
		return -EBUSY;
	}
	memset(ps, 0, sizeof(*ps));
	snprintf(ps->reason, sizeof(ps->reason), "%s", reason);
	ps->body = event_body(k, type, reason, action, note);
	c = curl_easy_init();
	if (!ps->body || !c || asprintf(&url, "%s%s", k->base, EV_PATH) < 0) {
		curl_easy_cleanup(c);
		free(ps->body);
		ps->body = NULL;
		return -ENOMEM;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	free(url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, ps->body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, k->post_headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kpx-agent");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, post_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, ps);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ps->curlerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)EV_TIMEOUT_S);
	k8s_set_auth(k, c);
	if (curl_multi_add_handle(k->multi, c) != CURLM_OK) {
		curl_easy_cleanup(c);
		free(ps->body);
		ps->body = NULL;
		return -ENOMEM;
	}
	ps->easy = c;
	kpx_dbg(2, "k8s", "POST %s%s: %s %s", k->base, EV_PATH, type, reason);
	return 0;
}

bool k8s_post_done(struct kpx_k8s *k, CURL *c, CURLcode res)
{
	struct k8s_post *ps = NULL;
	long code = 0;
	int i;

	for (i = 0; i < EV_INFLIGHT && !ps; i++)
		if (k->posts[i].easy == c)
			ps = &k->posts[i];
	if (!ps)
		return false;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	/* counted by code and method; the latency histogram is the lists' */
	kpx_metrics_rest_request(k->metrics, code, "POST", k->host, -1);
	if (res != CURLE_OK || code / 100 != 2) {
		struct json_object *st = json_tokener_parse(ps->errbody);
		const char *msg = NULL;

		kpx_json_string(st, "message", &msg);
		/* once per distinct failure, then at -v 2 */
		if (code != k->ev_failed_code) {
			kpx_warn("k8s", "event %s not recorded: %s%ld: %.300s", ps->reason,
				 res != CURLE_OK ? "" : "HTTP ", res != CURLE_OK ? 0L : code,
				 res != CURLE_OK ? (ps->curlerr[0] ? ps->curlerr :
						    curl_easy_strerror(res)) :
				 msg ? msg : ps->errbody);
			k->ev_failed_code = code;
		} else {
			kpx_dbg(2, "k8s", "event %s not recorded: HTTP %ld", ps->reason, code);
		}
		json_object_put(st);
	} else {
		kpx_dbg(2, "k8s", "event %s recorded", ps->reason);
		k->ev_failed_code = -1;
	}
	curl_multi_remove_handle(k->multi, c);
	curl_easy_cleanup(c);
	free(ps->body);
	memset(ps, 0, sizeof(*ps));
	return true;
}

void k8s_posts_free(struct kpx_k8s *k)
{
	int i;

	for (i = 0; i < EV_INFLIGHT; i++) {
		if (k->posts[i].easy) {
			curl_multi_remove_handle(k->multi, k->posts[i].easy);
			curl_easy_cleanup(k->posts[i].easy);
		}
		free(k->posts[i].body);
	}
	curl_slist_free_all(k->post_headers);
}

void k8s_posts_init(struct kpx_k8s *k)
{
	struct curl_slist *h, *h2;

	kpx_ratelimit_init(&k->ev_rl, 1.0 / EV_REFILL_S, EV_BURST, kpx_now_ms());
	k->ev_failed_code = -1;
	h = curl_slist_append(NULL, "Accept: application/json");
	h2 = h ? curl_slist_append(h, "Content-Type: application/json") : NULL;
	if (!h2)
		curl_slist_free_all(h);
	k->post_headers = h2;	/* NULL: events are not posted */
}
