// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl status: the agent's view against the module's, from the agent's
 * /statusz (http/statusz.h) on its metrics server, fetched with libcurl
 * and read with json-c.  The comparison is the agent's: it dumps the
 * module on its own socket and compares it with its desired state under
 * the syncer's lock, so the two are of one moment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <json-c/json.h>

#include "cli/kpxctl.h"

#define DEFAULT_SERVER "http://127.0.0.1:10249"
#define EXIT_DIFFERS 3
#define BODY_MAX (16U << 20)

struct body {
	char *p;
	size_t len;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct body *b = data;
	size_t n = size * nmemb;
	char *p;

	if (b->len + n > BODY_MAX)
		return 0;
	p = realloc(b->p, b->len + n + 1);
	if (!p)
		return 0;
	memcpy(p + b->len, ptr, n);
	b->p = p;
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* GET @url into *@b; 0, or 1 after saying why on stderr. */
static int fetch(const char *url, struct body *b)
{
	char err[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;
	CURL *c;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(c = curl_easy_init())) {
		fprintf(stderr,
			"kpxctl: status: libcurl initialization failed\n");
		return 1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	rc = curl_easy_perform(c);
	if (!rc)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_global_cleanup();
	if (rc) {
		fprintf(stderr,
			"kpxctl: status: %s: %s (is kpx-agent running with "
			"--metrics-bind-address there?)\n",
			url, *err ? err : curl_easy_strerror(rc));
		return 1;
	}
	if (code != 200) {
		fprintf(stderr, "kpxctl: status: %s: HTTP %ld%s\n", url, code,
			code == 404 ? " (an agent without /statusz)" : "");
		return 1;
	}
	return 0;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

static const char *str(struct json_object *o, const char *key, const char *def)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) :
		       def;
}

static uint64_t num(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v ? (uint64_t)json_object_get_int64(v) : 0;
}

/* One list's lines under @title; returns its total. */
static uint64_t print_list(struct json_object *root, const char *key,
			   const char *title)
{
	struct json_object *l = get(root, key),
			   *items = l ? get(l, "items") : NULL;
	uint64_t total = l ? num(l, "total") : 0;
	size_t n = items ? json_object_array_length(items) : 0;

	printf("%s: %llu\n", title, (unsigned long long)total);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(items, i);
		const char *reason = str(e, "reason", NULL);

		printf("  %-32s %s %s%s%s\n", str(e, "frontend", "?"),
		       str(e, "service", "-"), str(e, "kind", "-"),
		       reason ? ": " : "", reason ? reason : "");
	}
	if (total > n)
		printf("  ... and %llu more\n",
		       (unsigned long long)(total - n));
	return total;
}

static int print_status(struct json_object *root)
{
	struct json_object *ls = get(root, "last_sync");
	struct json_object *compared = get(root, "compared");
	uint64_t errors = 0, diffs = 0;

	printf("Proxy mode: %s\n", str(root, "mode", "?"));
	if (ls) {
		errors = num(ls, "errors");
		printf("Last sync: %s, %.3f s, %s, %llu sets, %llu dels, %llu errors\n",
		       str(ls, "time", "?"),
		       json_object_get_double(get(ls, "duration_seconds")),
		       json_object_get_boolean(get(ls, "full")) ? "full" :
								  "partial",
		       (unsigned long long)num(ls, "sets"),
		       (unsigned long long)num(ls, "dels"),
		       (unsigned long long)errors);
		print_list(ls, "failed", "Failed changes");
	} else {
		printf("Last sync: none yet\n");
	}
	printf("Frontends: %llu wanted by the agent",
	       (unsigned long long)num(root, "desired"));
	if (compared && json_object_get_boolean(compared))
		printf(", %llu in the module\n",
		       (unsigned long long)num(root, "programmed"));
	else
		printf(" (the data plane was not compared: kpx mode only)\n");
	print_list(root, "refused", "Refused");
	if (compared && json_object_get_boolean(compared)) {
		diffs += print_list(root, "missing",
				    "Wanted, missing in the module");
		diffs += print_list(root, "differ",
				    "Wanted, held otherwise by the module");
		diffs += print_list(root, "unexpected",
				    "In the module, not wanted");
	}
	return errors || diffs ? EXIT_DIFFERS : 0;
}

int cmd_status(const struct cmd *cmd, int argc, char **argv)
{
	const char *server = DEFAULT_SERVER;
	struct json_object *root, *ls;
	struct body b = { 0 };
	char url[512];
	int json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--server") && i + 1 < argc)
			server = argv[++i];
		else
			return usage_error(cmd, "unexpected argument '%s'",
					   argv[i]);
	}
	snprintf(url, sizeof(url), "%s%s/statusz",
		 strstr(server, "://") ? "" : "http://", server);
	if (fetch(url, &b))
		return 1;
	root = json_tokener_parse(b.p ? b.p : "");
	free(b.p);
	if (!root || !json_object_is_type(root, json_type_object)) {
		fprintf(stderr, "kpxctl: status: %s: not a JSON object\n", url);
		json_object_put(root);
		return 1;
	}
	if (json) {
		uint64_t d = num(get(root, "missing"), "total") +
			     num(get(root, "differ"), "total") +
			     num(get(root, "unexpected"), "total");

		ls = get(root, "last_sync");
		print_json(root);
		rc = d || (ls && num(ls, "errors")) ? EXIT_DIFFERS : 0;
	} else {
		rc = print_status(root);
	}
	json_object_put(root);
	return rc;
}
