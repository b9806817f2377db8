/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How to reach the Kubernetes API: read from a kubeconfig file (libyaml),
 * from the in-cluster service account, or just a --master URL.  Plain C
 * data, no library types; the HTTP client (k8s.c) turns it into TLS options.
 */
#ifndef KPX_KUBECONFIG_H
#define KPX_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* A PEM blob given inline (the *-data fields, base64-decoded) or a file. */
struct kpx_pem {
	unsigned char *data;	/* decoded bytes, or NULL */
	size_t len;
	char *file;		/* absolute path, or NULL */
};

struct kpx_kubeconfig {
	char *server;		/* "https://host:port[/path]", no trailing '/';
				 * the scheme is http or https */
	bool insecure;		/* insecure-skip-tls-verify: no peer/host check */
	struct kpx_pem ca;	/* certificate-authority(-data) */
	struct kpx_pem cert;	/* client-certificate(-data) */
	struct kpx_pem key;	/* client-key(-data) */
	char *token;		/* bearer token, or NULL */
	char *token_file;	/* re-read for every request (rotation), or NULL */
};

/*
 * Loads @path: current-context -> its cluster (server,
 * certificate-authority-data or certificate-authority,
 * insecure-skip-tls-verify) and user (token, tokenFile,
 * client-certificate(-data), client-key(-data)).  Relative file names are
 * taken relative to the kubeconfig's directory, as kubectl does.
 * Returns 0, or a negative errno with a one-line reason in @err:
 * -ENOENT/-EACCES (file), -EINVAL (YAML syntax, missing current-context,
 * unknown context/cluster/user, bad base64, bad boolean, no server).
 * On error *kc is left empty (safe to kpx_kubeconfig_free()).
 */
int kpx_kubeconfig_load(const char *path, struct kpx_kubeconfig *kc,
			char *err, size_t errlen);

/*
 * The API server URL to use for @in, a kubeconfig cluster's server: (or
 * --master) into *out (malloc'd, trailing '/' removed): without a scheme
 * it is https ("10.0.0.1:6443" is https://10.0.0.1:6443), so that a bearer
 * token goes over plain http only when the URL says http; a scheme other
 * than http and https, or no host, is -EINVAL with a reason in @err.
 * Parsed with libcurl's URL API.  Returns 0, -EINVAL or -ENOMEM.
 */
int kpx_kubeconfig_server(const char *in, char **out, char *err,
			  size_t errlen);

/* Service-account token and CA file of in-cluster config. */
#define KPX_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * In-cluster config from KUBERNETES_SERVICE_HOST and _PORT (server
 * https://HOST:PORT, IPv6 bracketed), token file and CA file in @sa_dir
 * (KPX_SA_DIR in production).  Returns 0, -ENOENT when the variables are
 * not set (not in a cluster), or -ENOMEM; reason in @err.
 */
int kpx_kubeconfig_incluster(const char *sa_dir, struct kpx_kubeconfig *kc,
			     char *err, size_t errlen);

/*
 * Reads the bearer token to send now: kc->token, else the first line of
 * kc->token_file (trailing whitespace removed).  Returns a malloc'd string,
 * or NULL with errno set (ENOENT when there is no token at all).
 */
char *kpx_kubeconfig_token(const struct kpx_kubeconfig *kc);

void kpx_kubeconfig_free(struct kpx_kubeconfig *kc);

#endif
