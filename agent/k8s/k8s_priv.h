/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared only by the API client's files: k8s.c (the transfers: list and
 * watch requests over libcurl, retries, the poll loop) and k8s_events.c
 * (what a list page or a watch event means for the model).
 */
#ifndef KPX_K8S_PRIV_H
#define KPX_K8S_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <json-c/json_object.h>

#include "base/ratelimit.h"
#include "k8s/jsonstream.h"
#include "k8s/k8s.h"

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
	int64_t throttled_at;	/* monotonic ms the rate limit first held it, 0 */
	int backoff_ms;
	char *rv;		/* resourceVersion to watch from */
	char *cont;		/* list continue token */
	bool relisting;		/* between kpx_model_relist_begin() and _end() */
	/*
	 * client-go's reflector: the list's resourceVersion is "0" (any
	 * revision, served by the watch cache) until a list completed, then
	 * the last one seen (not older than what was applied), "" (a quorum
	 * read) after the server answered that one expired (410) or too large.
	 */
	bool rv_unavailable;
	bool paginated;		/* a list at "0" came in pages: keep the limit */
	const char *list_rv;	/* the first page's: "0", r->rv's copy or NULL */
	char *list_rv_buf;
	unsigned int pages;	/* of the list under way */
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

#define EV_INFLIGHT		4

/* An Event post in flight (k8s_record.c). */
struct k8s_post {
	CURL *easy;		/* NULL: the slot is free */
	char *body;
	char reason[64];
	char errbody[512];
	size_t errlen;
	char curlerr[CURL_ERROR_SIZE];
};

struct kpx_k8s {
	const struct kpx_kubeconfig *kc;
	struct kpx_model *model;
	CURLM *multi;
	struct curl_slist *headers;
	char *base;		/* server URL without trailing '/' */
	char host[280];		/* its host[:port], client-go's "host" label */
	char *node;		/* the own Node's name */
	bool node_seen;		/* the own Node was listed or added */
	struct res res[KPX_KIND_MAX];
	struct kpx_ratelimit rl;
	int request_timeout_s, stall_timeout_s;
	struct kpx_metrics *metrics;	/* or NULL */
	struct k8s_post posts[EV_INFLIGHT];
	struct curl_slist *post_headers;
	struct kpx_ratelimit ev_rl;
	long ev_failed_code;	/* of the last failed post, logged once */
};

/* k8s.c */
int k8s_set_auth(struct kpx_k8s *k, CURL *c);
/* k8s_record.c */
void k8s_posts_init(struct kpx_k8s *k);
void k8s_posts_free(struct kpx_k8s *k);
/* True when @c was an Event post (then done with and freed). */
bool k8s_post_done(struct kpx_k8s *k, CURL *c, CURLcode res);
/* k8s_events.c */
void k8s_set_str(char **dst, const char *s);
void k8s_backoff(struct res *r);
void k8s_schedule_now(struct res *r, enum req next);
void k8s_node_listed(struct res *r);
bool k8s_rv_too_large(struct json_object *st);
/* jsonstream.c's callback: one list page or one watch event of @ctx, a res. */
int k8s_on_value(void *ctx, struct json_object *obj);

#endif
