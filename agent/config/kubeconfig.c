// SPDX-License-Identifier: GPL-2.0-only
/*
 * kubeconfig (libyaml document API), in-cluster config and token reading.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "config/kubeconfig.h"

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The scalar text of @n, or NULL when @n is absent or not a scalar. */
static const char *scalar(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)n->data.scalar.value;
}

/* Value node of @key in mapping @map, or NULL. */
static yaml_node_t *map_get(yaml_document_t *doc, const yaml_node_t *map,
			    const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));

		if (k && !strcmp(k, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

static const char *map_str(yaml_document_t *doc, const yaml_node_t *map,
			   const char *key)
{
	const char *s = scalar(map_get(doc, map, key));

	return s && *s ? s : NULL;
}

/*
 * In the sequence @list ("clusters", "contexts", "users") of the root, the
 * mapping @field ("cluster", ...) of the entry whose name is @name.
 */
static yaml_node_t *named_entry(yaml_document_t *doc, const yaml_node_t *root,
				const char *list, const char *field,
				const char *name)
{
	yaml_node_t *seq = map_get(doc, root, list);
	yaml_node_item_t *it;

	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it);
		const char *n = map_str(doc, e, "name");

		if (n && !strcmp(n, name)) {
			yaml_node_t *v = map_get(doc, e, field);

			return v && v->type == YAML_MAPPING_NODE ? v : NULL;
		}
	}
	return NULL;
}

/* Base64 (whitespace and newlines allowed) into a malloc'd buffer. */
static int b64_decode(const char *in, unsigned char **out, size_t *outlen)
{
	size_t inlen = strlen(in);
	EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
	unsigned char *buf = malloc(inlen / 4 * 3 + 4);
	int n1 = 0, n2 = 0, ret = -ENOMEM;

	if (!ctx || !buf)
		goto out;
	ret = -EINVAL;
	EVP_DecodeInit(ctx);
	if (inlen > INT_MAX || EVP_DecodeUpdate(ctx, buf, &n1,
			(const unsigned char *)in, (int)inlen) < 0)
		goto out;
	if (EVP_DecodeFinal(ctx, buf + n1, &n2) < 0 || n1 + n2 == 0)
		goto out;
	*out = buf;
	*outlen = (size_t)(n1 + n2);
	buf = NULL;
	ret = 0;
out:
	EVP_ENCODE_CTX_free(ctx);
	free(buf);
	return ret;
}

/* @name relative to directory @dir (with trailing '/'), unless absolute. */
static char *resolve(const char *dir, const char *name)
{
	char *p;

	if (name[0] == '/' || !dir[0])
		return strdup(name);
	if (asprintf(&p, "%s%s", dir, name) < 0)
		return NULL;
	return p;
}

/* @data_key (base64) or @file_key of @map into @pem. */
static int load_pem(yaml_document_t *doc, const yaml_node_t *map,
		    const char *data_key, const char *file_key, const char *dir,
		    struct kpx_pem *pem, char *err, size_t errlen)
{
	const char *data = map_str(doc, map, data_key);
	const char *file = map_str(doc, map, file_key);

	if (data) {
		int r = b64_decode(data, &pem->data, &pem->len);

		if (r == -EINVAL)
			return fail(err, errlen, "%s is not valid base64", data_key);
		return r;
	}
	if (file && !(pem->file = resolve(dir, file)))
		return -ENOMEM;
	return 0;
}

/* YAML 1.1 booleans, as kubectl's YAML decoder reads them. */
static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]))
			return *out = true, 0;
		if (!strcmp(s, no[i]))
			return *out = false, 0;
	}
	return -EINVAL;
}

static int load_doc(yaml_document_t *doc, const char *dir,
		    struct kpx_kubeconfig *kc, char *err, size_t errlen)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	yaml_node_t *ctx, *cluster, *user;
	const char *cur, *cname, *uname, *s;
	char msg[320];
	int r;

	if (!root || root->type != YAML_MAPPING_NODE)
		return fail(err, errlen, "not a YAML mapping");
	cur = map_str(doc, root, "current-context");
	if (!cur)
		return fail(err, errlen, "no current-context");
	ctx = named_entry(doc, root, "contexts", "context", cur);
	if (!ctx)
		return fail(err, errlen, "context \"%s\" not found", cur);
	cname = map_str(doc, ctx, "cluster");
	if (!cname)
		return fail(err, errlen, "context \"%s\" has no cluster", cur);
	cluster = named_entry(doc, root, "clusters", "cluster", cname);
	if (!cluster)
		return fail(err, errlen, "cluster \"%s\" not found", cname);

	s = map_str(doc, cluster, "server");
	if (!s)
		return fail(err, errlen, "cluster \"%s\" has no server", cname);
	r = kpx_kubeconfig_server(s, &kc->server, msg, sizeof(msg));
	if (r)
		return r == -ENOMEM ? r :
			fail(err, errlen, "cluster \"%s\": %s", cname, msg);
	s = map_str(doc, cluster, "insecure-skip-tls-verify");
	if (s && parse_bool(s, &kc->insecure))
		return fail(err, errlen, "insecure-skip-tls-verify: \"%s\" is not a boolean", s);
	r = load_pem(doc, cluster, "certificate-authority-data",
		     "certificate-authority", dir, &kc->ca, err, errlen);
	if (r)
		return r;

	/* A context without a user means anonymous access. */
	uname = map_str(doc, ctx, "user");
	if (!uname)
		return 0;
	user = named_entry(doc, root, "users", "user", uname);
	if (!user)
		return fail(err, errlen, "user \"%s\" not found", uname);
	if ((s = map_str(doc, user, "token")) && !(kc->token = strdup(s)))
		return -ENOMEM;
	if ((s = map_str(doc, user, "tokenFile")) &&
	    !(kc->token_file = resolve(dir, s)))
		return -ENOMEM;
	r = load_pem(doc, user, "client-certificate-data", "client-certificate",
		     dir, &kc->cert, err, errlen);
	if (!r)
		r = load_pem(doc, user, "client-key-data", "client-key", dir,
			     &kc->key, err, errlen);
	if (r)
		return r;
	if (!(kc->cert.data || kc->cert.file) != !(kc->key.data || kc->key.file))
		return fail(err, errlen, "user \"%s\": client certificate and key must be given together", uname);
	if (map_get(doc, user, "exec") || map_get(doc, user, "auth-provider"))
		if (!kc->token && !kc->token_file && !kc->cert.data && !kc->cert.file)
			return fail(err, errlen, "user \"%s\": exec and auth-provider credentials are not supported", uname);
	return 0;
}

int kpx_kubeconfig_load(const char *path, struct kpx_kubeconfig *kc,
			char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	char dir[PATH_MAX] = "", msg[256] = "";
	const char *slash = strrchr(path, '/');
	FILE *f;
	int r;

	memset(kc, 0, sizeof(*kc));
	f = fopen(path, "r");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "kubeconfig %s: %s", path, strerror(errno));
		return r;
	}
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s/", (int)(slash - path), path);
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		snprintf(err, errlen, "kubeconfig %s: out of memory", path);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "kubeconfig %s: YAML error at line %zu: %s",
			 path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "unknown");
		yaml_parser_delete(&parser);
		fclose(f);
		return -EINVAL;
	}
	r = load_doc(&doc, dir, kc, msg, sizeof(msg));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (r) {
		snprintf(err, errlen, "kubeconfig %s: %s", path,
			 r == -ENOMEM ? "out of memory" : msg);
		kpx_kubeconfig_free(kc);
	}
	return r;
}

int kpx_kubeconfig_server(const char *in, char **out, char *err,
			  size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *url = NULL;
	CURLUcode uc;
	int r = -EINVAL;
	size_t n;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	/* no scheme: https (CURLU_DEFAULT_SCHEME), never a guess */
	uc = curl_url_set(u, CURLUPART_URL, in, CURLU_DEFAULT_SCHEME);
	if (uc == CURLUE_OUT_OF_MEMORY) {
		r = -ENOMEM;
		goto out;
	}
	if (uc) {
		snprintf(err, errlen, "server \"%s\" is not a URL: %s", in,
			 curl_url_strerror(uc));
		goto out;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) || !*host) {
		snprintf(err, errlen, "server \"%s\" has no host", in);
		goto out;
	}
	if (strcasecmp(scheme, "https") && strcasecmp(scheme, "http")) {
		snprintf(err, errlen, "server \"%s\": scheme %s is not http or https",
			 in, scheme);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_URL, &url, 0)) {
		r = -ENOMEM;
		goto out;
	}
	n = strlen(url);
	while (n && url[n - 1] == '/')
		url[--n] = '\0';
	*out = strdup(url);
	r = *out ? 0 : -ENOMEM;
out:
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	curl_free(url);
	curl_free(host);
	curl_free(scheme);
	curl_url_cleanup(u);
	return r;
}

int kpx_kubeconfig_incluster(const char *sa_dir, struct kpx_kubeconfig *kc,
			     char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	bool v6 = host && strchr(host, ':');

	memset(kc, 0, sizeof(*kc));
	if (!host || !*host || !port || !*port) {
		snprintf(err, errlen, "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
		return -ENOENT;
	}
	char *url = NULL;
	int r;

	if (asprintf(&url, "https://%s%s%s:%s", v6 ? "[" : "", host,
		     v6 ? "]" : "", port) < 0)
		url = NULL;
	r = url ? kpx_kubeconfig_server(url, &kc->server, err, errlen) : -ENOMEM;
	free(url);
	if (r == -EINVAL) {
		kpx_kubeconfig_free(kc);
		snprintf(err + strlen(err), errlen - strlen(err),
			 " (from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT)");
		return r;
	}
	if (asprintf(&kc->token_file, "%s/token", sa_dir) < 0)
		kc->token_file = NULL;
	if (asprintf(&kc->ca.file, "%s/ca.crt", sa_dir) < 0)
		kc->ca.file = NULL;
	if (!kc->server || !kc->token_file || !kc->ca.file) {
		kpx_kubeconfig_free(kc);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

char *kpx_kubeconfig_token(const struct kpx_kubeconfig *kc)
{
	char *line = NULL, *end;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int e;

	if (kc->token)
		return strdup(kc->token);
	if (!kc->token_file) {
		errno = ENOENT;
		return NULL;
	}
	f = fopen(kc->token_file, "r");
	if (!f)
		return NULL;
	errno = 0;
	n = getline(&line, &cap, f);
	e = ferror(f) && errno ? errno : ENODATA;
	fclose(f);
	if (n < 0) {
		free(line);
		errno = e;
		return NULL;
	}
	for (end = line + n; end > line && strchr(" \t\r\n", end[-1]); end--)
		;
	*end = '\0';
	return line;
}

static void pem_free(struct kpx_pem *p)
{
	free(p->data);
	free(p->file);
}

void kpx_kubeconfig_free(struct kpx_kubeconfig *kc)
{
	free(kc->server);
	pem_free(&kc->ca);
	pem_free(&kc->cert);
	pem_free(&kc->key);
	free(kc->token);
	free(kc->token_file);
	memset(kc, 0, sizeof(*kc));
}
