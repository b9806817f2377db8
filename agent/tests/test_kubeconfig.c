// SPDX-License-Identifier: GPL-2.0-only
/*
 * kubeconfig.c: sample kubeconfigs (token, client cert data, CA file vs
 * data, several contexts, errors) and in-cluster config.  TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/kubeconfig.h"

#include "lib/tap.h"

static char dir[] = "/tmp/kpx-test-kubeconfig-XXXXXX";

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Writes @text to dir/@name and returns the path (static buffer). */
static const char *put(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
	return path;
}

static bool mem_is(const struct kpx_pem *p, const char *s)
{
	return p->data && p->len == strlen(s) && !memcmp(p->data, s, p->len);
}

/* base64("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n") */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define CA_PEM "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"

static void test_token_ca_data(void)
{
	struct kpx_kubeconfig kc;
	char err[256] = "";
	const char *p = put("token.yaml",
		"apiVersion: v1\n"
		"kind: Config\n"
		"clusters:\n"
		"- name: test\n"
		"  cluster:\n"
		"    server: https://127.0.0.1:6443\n"
		"    certificate-authority-data: " CA_B64 "\n"
		"contexts:\n"
		"- name: ctx\n"
		"  context: {cluster: test, user: agent, namespace: kube-system}\n"
		"current-context: ctx\n"
		"users:\n"
		"- name: agent\n"
		"  user:\n"
		"    token: abc.def-123\n");
	int r = kpx_kubeconfig_load(p, &kc, err, sizeof(err));
	char *tok;

	ok(r == 0, "token kubeconfig loads (%d %s)", r, err);
	ok(streq(kc.server, "https://127.0.0.1:6443"), "server %s", kc.server);
	ok(mem_is(&kc.ca, CA_PEM), "CA data decoded (%zu bytes)", kc.ca.len);
	ok(kc.ca.file == NULL, "no CA file");
	ok(!kc.insecure, "TLS verified by default");
	ok(streq(kc.token, "abc.def-123"), "token %s", kc.token);
	ok(!kc.token_file && !kc.cert.data && !kc.cert.file && !kc.key.data,
	   "no token file, no client cert");
	tok = kpx_kubeconfig_token(&kc);
	ok(streq(tok, "abc.def-123"), "token to send: %s", tok);
	free(tok);
	kpx_kubeconfig_free(&kc);
	ok(kc.server == NULL, "free clears");
}

/* Several contexts: current-context picks the second cluster and user. */
static void test_cert_data_contexts(void)
{
	struct kpx_kubeconfig kc;
	char err[256] = "";
	const char *p = put("cert.yaml",
		"apiVersion: v1\n"
		"kind: Config\n"
		"current-context: \"prod\"\n"
		"clusters:\n"
		"- cluster:\n"
		"    server: https://dev.example:443\n"
		"    insecure-skip-tls-verify: true\n"
		"  name: dev\n"
		"- cluster:\n"
		"    server: https://[::1]:6443/\n"
		"    certificate-authority-data: >-\n"
		"      LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0t\n"
		"      RU5EIENFUlRJRklDQVRFLS0tLS0K\n"
		"  name: prod\n"
		"contexts:\n"
		"- context:\n"
		"    cluster: dev\n"
		"    user: dev-user\n"
		"  name: dev\n"
		"- context:\n"
		"    cluster: prod\n"
		"    user: prod-user\n"
		"  name: prod\n"
		"users:\n"
		"- name: dev-user\n"
		"  user:\n"
		"    token: devtoken\n"
		"- name: prod-user\n"
		"  user:\n"
		"    client-certificate-data: Q0VSVA==\n"	/* "CERT" */
		"    client-key-data: S0VZ\n");		/* "KEY" */
	int r = kpx_kubeconfig_load(p, &kc, err, sizeof(err));

	ok(r == 0, "cert kubeconfig loads (%d %s)", r, err);
	ok(streq(kc.server, "https://[::1]:6443"), "prod server %s", kc.server);
	ok(!kc.insecure, "prod cluster is verified (dev's insecure flag not taken)");
	ok(mem_is(&kc.ca, CA_PEM), "folded base64 CA decoded (%zu bytes)", kc.ca.len);
	ok(mem_is(&kc.cert, "CERT"), "client cert data");
	ok(mem_is(&kc.key, "KEY"), "client key data");
	ok(kc.token == NULL, "dev user's token not taken");
	kpx_kubeconfig_free(&kc);
}

/* CA, cert, key and token as files, relative to the kubeconfig's directory. */
static void test_files(void)
{
	struct kpx_kubeconfig kc;
	char err[256] = "", want[300];
	const char *p;
	char *tok;
	int r;

	put("sa-token", "file-token-42\n\n");
	p = put("files.yaml",
		"current-context: c\n"
		"clusters:\n"
		"- name: k\n"
		"  cluster:\n"
		"    server: https://10.0.0.1\n"
		"    certificate-authority: ca.crt\n"
		"    insecure-skip-tls-verify: false\n"
		"contexts:\n"
		"- name: c\n"
		"  context:\n"
		"    cluster: k\n"
		"    user: u\n"
		"users:\n"
		"- name: u\n"
		"  user:\n"
		"    tokenFile: sa-token\n"
		"    client-certificate: /etc/pki/client.crt\n"
		"    client-key: keys/client.key\n");
	r = kpx_kubeconfig_load(p, &kc, err, sizeof(err));
	ok(r == 0, "file kubeconfig loads (%d %s)", r, err);
	snprintf(want, sizeof(want), "%s/ca.crt", dir);
	ok(streq(kc.ca.file, want), "CA file resolved: %s", kc.ca.file);
	ok(kc.ca.data == NULL, "no CA data");
	ok(streq(kc.cert.file, "/etc/pki/client.crt"), "absolute cert path kept: %s", kc.cert.file);
	snprintf(want, sizeof(want), "%s/keys/client.key", dir);
	ok(streq(kc.key.file, want), "key file resolved: %s", kc.key.file);
	snprintf(want, sizeof(want), "%s/sa-token", dir);
	ok(streq(kc.token_file, want), "token file resolved: %s", kc.token_file);
	tok = kpx_kubeconfig_token(&kc);
	ok(streq(tok, "file-token-42"), "token read from file, trimmed: %s", tok);
	free(tok);
	put("sa-token", "rotated\n");
	tok = kpx_kubeconfig_token(&kc);
	ok(streq(tok, "rotated"), "token file re-read (rotation): %s", tok);
	free(tok);
	unlink(kc.token_file);
	errno = 0;
	tok = kpx_kubeconfig_token(&kc);
	ok(tok == NULL && errno == ENOENT, "missing token file: NULL, ENOENT");
	kpx_kubeconfig_free(&kc);
}

static void expect_error(const char *name, const char *text, int want,
			 const char *msg)
{
	struct kpx_kubeconfig kc;
	char err[256] = "";
	const char *p = put(name, text);
	int r = kpx_kubeconfig_load(p, &kc, err, sizeof(err));

	ok(r == want && strstr(err, msg) && strstr(err, name) && kc.server == NULL,
	   "%s: %d \"%s\"", name, r, err);
	kpx_kubeconfig_free(&kc);
}

static void test_errors(void)
{
	struct kpx_kubeconfig kc;
	char err[256] = "";
	int r;

	expect_error("no-current.yaml",
		"clusters:\n- name: a\n  cluster: {server: https://a}\n"
		"contexts:\n- name: a\n  context: {cluster: a}\n",
		-EINVAL, "no current-context");
	expect_error("empty-current.yaml",
		"current-context: \"\"\ncontexts: []\n", -EINVAL, "no current-context");
	expect_error("bad-context.yaml",
		"current-context: nope\ncontexts:\n- name: a\n  context: {cluster: a}\n",
		-EINVAL, "context \"nope\" not found");
	expect_error("bad-cluster.yaml",
		"current-context: a\ncontexts:\n- name: a\n  context: {cluster: zz}\n",
		-EINVAL, "cluster \"zz\" not found");
	expect_error("no-server.yaml",
		"current-context: a\nclusters:\n- name: a\n  cluster: {}\n"
		"contexts:\n- name: a\n  context: {cluster: a}\n",
		-EINVAL, "cluster \"a\" has no server");
	expect_error("bad-user.yaml",
		"current-context: a\nclusters:\n- name: a\n  cluster: {server: https://a}\n"
		"contexts:\n- name: a\n  context: {cluster: a, user: who}\n",
		-EINVAL, "user \"who\" not found");
	expect_error("bad-b64.yaml",
		"current-context: a\nclusters:\n- name: a\n  cluster:\n"
		"    server: https://a\n    certificate-authority-data: '%%%not base64'\n"
		"contexts:\n- name: a\n  context: {cluster: a}\n",
		-EINVAL, "certificate-authority-data is not valid base64");
	expect_error("bad-bool.yaml",
		"current-context: a\nclusters:\n- name: a\n  cluster:\n"
		"    server: https://a\n    insecure-skip-tls-verify: maybe\n"
		"contexts:\n- name: a\n  context: {cluster: a}\n",
		-EINVAL, "insecure-skip-tls-verify: \"maybe\" is not a boolean");
	expect_error("cert-no-key.yaml",
		"current-context: a\nclusters:\n- name: a\n  cluster: {server: https://a}\n"
		"contexts:\n- name: a\n  context: {cluster: a, user: u}\n"
		"users:\n- name: u\n  user: {client-certificate-data: Q0VSVA==}\n",
		-EINVAL, "client certificate and key must be given together");
	expect_error("syntax.yaml", "current-context: [a\nclusters: {\n",
		     -EINVAL, "YAML error at line");
	expect_error("not-a-map.yaml", "- a\n- b\n", -EINVAL, "not a YAML mapping");

	r = kpx_kubeconfig_load("/nonexistent/kubeconfig", &kc, err, sizeof(err));
	ok(r == -ENOENT && strstr(err, "/nonexistent/kubeconfig: No such file"),
	   "missing file: %d \"%s\"", r, err);
}

/* server: without a scheme is https; only http and https are taken. */
static void test_server(void)
{
	static const struct {
		const char *in, *want;	/* want NULL: -EINVAL */
	} cases[] = {
		{ "10.0.0.1:6443", "https://10.0.0.1:6443" },
		{ "kubernetes.default.svc", "https://kubernetes.default.svc" },
		{ "[fd00::1]:6443", "https://[fd00::1]:6443" },
		{ "https://10.0.0.1:6443/", "https://10.0.0.1:6443" },
		{ "http://127.0.0.1:8080", "http://127.0.0.1:8080" },
		{ "HTTPS://api.example:443/prefix/", "https://api.example:443/prefix" },
		{ "ftp://10.0.0.1:6443", NULL },
		{ "file:///etc/kubernetes", NULL },
		{ "unix:///run/k8s.sock", NULL },
		{ "", NULL },
	};
	char err[256], *out;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		err[0] = 0;
		r = kpx_kubeconfig_server(cases[i].in, &out, err, sizeof(err));
		if (cases[i].want)
			ok(r == 0 && streq(out, cases[i].want), "server \"%s\" -> %s (%d %s)",
			   cases[i].in, cases[i].want, r, out ? out : err);
		else
			ok(r == -EINVAL && !out && strstr(err, cases[i].in),
			   "server \"%s\" refused: %s", cases[i].in, err);
		free(out);
	}
	expect_error("no-scheme-ftp.yaml",
		"current-context: a\nclusters:\n- name: a\n  cluster: {server: 'ftp://10.0.0.1:6443'}\n"
		"contexts:\n- name: a\n  context: {cluster: a}\n",
		-EINVAL, "cluster \"a\": server \"ftp://10.0.0.1:6443\": scheme ftp is not http or https");
	{
		struct kpx_kubeconfig kc;
		const char *p = put("no-scheme.yaml",
			"current-context: a\nclusters:\n- name: a\n  cluster: {server: '10.0.0.1:6443'}\n"
			"contexts:\n- name: a\n  context: {cluster: a, user: u}\n"
			"users:\n- name: u\n  user: {token: t0k}\n");
		int r = kpx_kubeconfig_load(p, &kc, err, sizeof(err));

		ok(r == 0 && streq(kc.server, "https://10.0.0.1:6443"),
		   "kubeconfig server: 10.0.0.1:6443 is https://10.0.0.1:6443 (%s)", kc.server);
		kpx_kubeconfig_free(&kc);
	}
}

static void test_incluster(void)
{
	struct kpx_kubeconfig kc;
	char err[256] = "";
	int r;

	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	r = kpx_kubeconfig_incluster("/sa", &kc, err, sizeof(err));
	ok(r == -ENOENT && strstr(err, "KUBERNETES_SERVICE_HOST"), "not in cluster: %d \"%s\"", r, err);

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	r = kpx_kubeconfig_incluster("/sa", &kc, err, sizeof(err));
	ok(r == 0 && streq(kc.server, "https://10.96.0.1:443"), "in-cluster server %s", kc.server);
	ok(streq(kc.token_file, "/sa/token") && streq(kc.ca.file, "/sa/ca.crt") &&
	   !kc.token && !kc.insecure, "service account token and CA files");
	kpx_kubeconfig_free(&kc);

	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	r = kpx_kubeconfig_incluster(KPX_SA_DIR, &kc, err, sizeof(err));
	ok(r == 0 && streq(kc.server, "https://[fd00:10:96::1]:443"), "IPv6 server bracketed: %s", kc.server);
	ok(streq(kc.token_file, "/var/run/secrets/kubernetes.io/serviceaccount/token"),
	   "default token path %s", kc.token_file);
	kpx_kubeconfig_free(&kc);

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "not-a-port", 1);
	r = kpx_kubeconfig_incluster(KPX_SA_DIR, &kc, err, sizeof(err));
	ok(r == -EINVAL && !kc.server && strstr(err, "KUBERNETES_SERVICE_PORT"),
	   "in-cluster: a bad port is refused: \"%s\"", err);
	kpx_kubeconfig_free(&kc);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("TAP version 13\n");
	test_token_ca_data();
	test_cert_data_contexts();
	test_files();
	test_errors();
	test_server();
	test_incluster();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return tap_done();
}
