// SPDX-License-Identifier: GPL-2.0-only
/*
 * The effective configuration written out: --write-config-to (a
 * KubeProxyConfiguration through libyaml's emitter), /configz (json-c) and
 * /flagz.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include <json-c/json.h>

#include "base/duration.h"
#include "base/log.h"
#include "config/config.h"
#include "config/config_priv.h"

/* ---- --write-config-to --------------------------------------------------- */

/*
 * Every KubeProxyConfiguration v1alpha1 field, in the order kube-proxy
 * writes them (sorted keys), with kube-proxy's default.  T_* is the YAML
 * shape: a number or boolean is a plain scalar, a string is quoted when it
 * would otherwise read as something else.
 */
enum etype { T_STR, T_NUM, T_LIST, T_MAP };

static const struct {
	const char *path;
	enum etype type;
	const char *def;
} emit_fields[] = {
	{ "apiVersion", T_STR, API_VERSION },
	{ "bindAddress", T_STR, "0.0.0.0" },
	{ "bindAddressHardFail", T_NUM, "false" },
	{ "clientConnection.acceptContentTypes", T_STR, "" },
	{ "clientConnection.burst", T_NUM, "10" },
	{ "clientConnection.contentType", T_STR, "application/vnd.kubernetes.protobuf" },
	{ "clientConnection.kubeconfig", T_STR, "" },
	{ "clientConnection.qps", T_NUM, "5" },
	{ "clusterCIDR", T_STR, "" },
	{ "configSyncPeriod", T_STR, "15m0s" },
	{ "conntrack.maxPerCore", T_NUM, "32768" },
	{ "conntrack.min", T_NUM, "131072" },
	{ "conntrack.tcpBeLiberal", T_NUM, "false" },
	{ "conntrack.tcpCloseWaitTimeout", T_STR, "1h0m0s" },
	{ "conntrack.tcpEstablishedTimeout", T_STR, "24h0m0s" },
	{ "conntrack.udpStreamTimeout", T_STR, "0s" },
	{ "conntrack.udpTimeout", T_STR, "0s" },
	{ "detectLocal.bridgeInterface", T_STR, "" },
	{ "detectLocal.interfaceNamePrefix", T_STR, "" },
	{ "detectLocalMode", T_STR, "" },
	{ "enableProfiling", T_NUM, "false" },
	{ "featureGates", T_MAP, NULL },
	{ "healthzBindAddress", T_STR, "0.0.0.0:10256" },
	{ "hostnameOverride", T_STR, "" },
	{ "iptables.localhostNodePorts", T_NUM, "true" },
	{ "iptables.masqueradeAll", T_NUM, "false" },
	{ "iptables.masqueradeBit", T_NUM, "14" },
	{ "iptables.minSyncPeriod", T_STR, "1s" },
	{ "iptables.syncPeriod", T_STR, "30s" },
	{ "ipvs.excludeCIDRs", T_LIST, NULL },
	{ "ipvs.minSyncPeriod", T_STR, "0s" },
	{ "ipvs.scheduler", T_STR, "" },
	{ "ipvs.strictARP", T_NUM, "false" },
	{ "ipvs.syncPeriod", T_STR, "30s" },
	{ "ipvs.tcpFinTimeout", T_STR, "0s" },
	{ "ipvs.tcpTimeout", T_STR, "0s" },
	{ "ipvs.udpTimeout", T_STR, "0s" },
	{ "kind", T_STR, KIND },
	{ "logging.flushFrequency", T_STR, "5s" },
	{ "logging.format", T_STR, "text" },
	{ "logging.options.json.infoBufferSize", T_STR, "0" },
	{ "logging.options.text.infoBufferSize", T_STR, "0" },
	{ "logging.verbosity", T_NUM, "0" },
	{ "metricsBindAddress", T_STR, "127.0.0.1:10249" },
	{ "mode", T_STR, "" },
	{ "nftables.masqueradeAll", T_NUM, "false" },
	{ "nftables.masqueradeBit", T_NUM, "14" },
	{ "nftables.minSyncPeriod", T_STR, "1s" },
	{ "nftables.syncPeriod", T_STR, "30s" },
	{ "nodePortAddresses", T_LIST, NULL },
	{ "oomScoreAdj", T_NUM, "-999" },
	{ "portRange", T_STR, "" },
	{ "showHiddenMetricsForVersion", T_STR, "" },
	{ "winkernel.enableDSR", T_NUM, "false" },
	{ "winkernel.forwardHealthCheckVip", T_NUM, "false" },
	{ "winkernel.networkName", T_STR, "" },
	{ "winkernel.rootHnsEndpointName", T_STR, "" },
	{ "winkernel.sourceVip", T_STR, "" },
	{ "windowsRunAsService", T_NUM, "false" },
};

/* @ms as Go's time.Duration.String() ("0s", "500ms", "1m30s", "24h0m0s"). */
static void go_duration(int64_t ms, char *out, size_t len)
{
	char sec[32];
	int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, f = ms % 1000;
	int n;

	if (!ms) {
		snprintf(out, len, "0s");
		return;
	}
	if (ms < 1000) {
		snprintf(out, len, "%lldms", (long long)ms);
		return;
	}
	n = snprintf(sec, sizeof(sec), "%lld.%03lld", (long long)s, (long long)f);
	while (sec[n - 1] == '0')
		sec[--n] = '\0';
	if (sec[n - 1] == '.')
		sec[--n] = '\0';
	if (h)
		snprintf(out, len, "%lldh%lldm%ss", (long long)h, (long long)m, sec);
	else if (m)
		snprintf(out, len, "%lldm%ss", (long long)m, sec);
	else
		snprintf(out, len, "%ss", sec);
}

/* The value to write for @path into @buf, or NULL for the field's default. */
static const char *effective(const struct kpx_config *c, const char *path,
			     char *buf, size_t len)
{
	const struct setting *s = cfg_find_field(path);
	const char *dot = strchr(path, '.');

	if (!strcmp(path, "healthzBindAddress"))
		return c->healthz_bind;
	if (!strcmp(path, "metricsBindAddress"))
		return c->metrics_bind;
	if (!strcmp(path, "logging.verbosity")) {
		snprintf(buf, len, "%d", c->verbosity);
		return buf;
	}
	if (!strcmp(path, "hostnameOverride"))
		return cfg_given_value(c, "hostname-override") ? c->hostname : NULL;
	if (dot && (!strcmp(dot, ".syncPeriod") || !strcmp(dot, ".minSyncPeriod")) &&
	    !strncmp(path, cfg_mode_section(c->proxy_mode), (size_t)(dot - path + 1))) {
		go_duration(!strcmp(dot, ".syncPeriod") ? c->sync_ms : c->min_sync_ms, buf, len);
		return buf;
	}
	if (s && c->values)
		return c->values[s - cfg_settings];
	return NULL;
}

/* A string that YAML would read as a number, boolean or null. */
static bool needs_quotes(const char *v)
{
	char *end;
	bool b;

	if (!*v || !cfg_parse_bool(v, &b) || !strcmp(v, "null") || !strcmp(v, "~"))
		return true;
	strtod(v, &end);
	return !*end;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
	return yaml_emitter_emit(e, ev) ? 0 : -EIO;
}

static int emit_scalar(yaml_emitter_t *e, const char *v, bool quoted)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v),
				     1, 1, quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE :
				     YAML_PLAIN_SCALAR_STYLE);
	return emit(e, &ev);
}

static int emit_mapping(yaml_emitter_t *e, bool start, bool flow)
{
	yaml_event_t ev;

	if (start)
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, flow ?
						    YAML_FLOW_MAPPING_STYLE :
						    YAML_BLOCK_MAPPING_STYLE);
	else
		yaml_mapping_end_event_initialize(&ev);
	return emit(e, &ev);
}

/* A comma-joined list value as a sequence; NULL or "" is null. */
static int emit_list(yaml_emitter_t *e, const char *v)
{
	char *dup, *tok, *save = NULL;
	yaml_event_t ev;
	int r;

	if (!v || !*v)
		return emit_scalar(e, "null", false);
	dup = strdup(v);
	if (!dup)
		return -ENOMEM;
	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
	r = emit(e, &ev);
	for (tok = strtok_r(dup, ",", &save); !r && tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		r = emit_scalar(e, tok, needs_quotes(tok));
	}
	free(dup);
	if (!r) {
		yaml_sequence_end_event_initialize(&ev);
		r = emit(e, &ev);
	}
	return r;
}

/* Opens and closes the nested maps between field paths @prev and @path. */
static int emit_sections(yaml_emitter_t *e, const char *prev, const char *path)
{
	size_t common = 0, i;
	int depth_prev = 0, depth_common = 0, r = 0;
	const char *p;

	/* the length of the common section prefix, ending on a '.' */
	for (i = 0; prev && prev[i] && prev[i] == path[i]; i++)
		if (prev[i] == '.')
			common = i + 1;
	for (p = prev; p && *p; p++)
		depth_prev += *p == '.';
	for (i = 0; i < common; i++)
		depth_common += path[i] == '.';
	for (; !r && depth_prev > depth_common; depth_prev--)
		r = emit_mapping(e, false, false);
	for (p = path + common; !r && strchr(p, '.'); p = strchr(p, '.') + 1) {
		char key[64];

		snprintf(key, sizeof(key), "%.*s", (int)(strchr(p, '.') - p), p);
		r = emit_scalar(e, key, false);
		if (!r)
			r = emit_mapping(e, true, false);
	}
	return r;
}

int kpx_config_write(const struct kpx_config *c, const char *path, char *err,
		     size_t errlen)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	const char *prev = NULL;
	char buf[64];
	size_t i;
	FILE *f;
	int r, fr;

	f = fopen(path, "we");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "--write-config-to %s: %s", path, strerror(-r));
		return r;
	}
	if (!yaml_emitter_initialize(&e)) {
		fclose(f);
		return cfg_fail(err, errlen, "out of memory");
	}
	yaml_emitter_set_output_file(&e, f);
	yaml_emitter_set_unicode(&e, 1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	r = emit(&e, &ev);
	if (!r) {
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		r = emit(&e, &ev);
	}
	if (!r)
		r = emit_mapping(&e, true, false);
	for (i = 0; !r && i < sizeof(emit_fields) / sizeof(emit_fields[0]); i++) {
		const char *fp = emit_fields[i].path;
		const char *v = effective(c, fp, buf, sizeof(buf));
		const char *key = strrchr(fp, '.') ? strrchr(fp, '.') + 1 : fp;

		r = emit_sections(&e, prev, fp);
		prev = fp;
		if (!r)
			r = emit_scalar(&e, key, false);
		if (r)
			break;
		switch (emit_fields[i].type) {
		case T_LIST:
			r = emit_list(&e, v);
			break;
		case T_MAP:
			r = emit_mapping(&e, true, true);
			if (!r)
				r = emit_mapping(&e, false, true);
			break;
		case T_NUM:
			r = emit_scalar(&e, v ? v : emit_fields[i].def, false);
			break;
		default:
			v = v ? v : emit_fields[i].def;
			r = emit_scalar(&e, v, needs_quotes(v));
			break;
		}
	}
	if (!r)
		r = emit_sections(&e, prev, "");
	if (!r)
		r = emit_mapping(&e, false, false);
	if (!r) {
		yaml_document_end_event_initialize(&ev, 1);
		r = emit(&e, &ev);
	}
	if (!r) {
		yaml_stream_end_event_initialize(&ev);
		r = emit(&e, &ev);
	}
	if (r) {
		snprintf(err, errlen, "--write-config-to %s: %s", path,
			 r == -ENOMEM ? "out of memory" : e.problem ? e.problem : "write error");
	}
	yaml_emitter_delete(&e);
	fr = fclose(f);
	if (!r && fr) {
		r = -errno;
		snprintf(err, errlen, "--write-config-to %s: %s", path, strerror(-r));
	}
	return r;
}

/* ---- /configz and /flagz ---------------------------------------------- */

/* The JSON value of @v for a field of type @t. */
static json_object *json_value(enum etype t, const char *v)
{
	json_object *a;
	char *end, *dup, *tok, *save = NULL;
	bool b;
	long long x;

	switch (t) {
	case T_MAP:
		return json_object_new_object();
	case T_LIST:
		if (!v || !*v)
			return NULL;	/* null */
		a = json_object_new_array();
		dup = strdup(v);
		for (tok = dup ? strtok_r(dup, ",", &save) : NULL; a && tok;
		     tok = strtok_r(NULL, ",", &save))
			json_object_array_add(a, json_object_new_string(tok));
		free(dup);
		return a;
	case T_NUM:
		if (!cfg_parse_bool(v, &b) && (!strcmp(v, "true") || !strcmp(v, "false")))
			return json_object_new_boolean(b);
		errno = 0;
		x = strtoll(v, &end, 10);
		if (!errno && !*end)
			return json_object_new_int64(x);
		return json_object_new_double(strtod(v, NULL));
	default:
		return json_object_new_string(v);
	}
}

char *kpx_config_configz(const struct kpx_config *c)
{
	json_object *root = json_object_new_object(), *cfg = json_object_new_object();
	char buf[64], *out = NULL;
	size_t i;

	if (!root || !cfg)
		goto out;
	json_object_object_add(root, "kubeproxy.config.k8s.io", cfg);
	for (i = 0; i < sizeof(emit_fields) / sizeof(emit_fields[0]); i++) {
		const char *path = emit_fields[i].path, *p, *dot;
		const char *v = effective(c, path, buf, sizeof(buf));
		json_object *obj = cfg, *sub;
		char key[64];

		/* the nested objects of "a.b.c" */
		for (p = path; (dot = strchr(p, '.')); p = dot + 1) {
			snprintf(key, sizeof(key), "%.*s", (int)(dot - p), p);
			if (!json_object_object_get_ex(obj, key, &sub)) {
				sub = json_object_new_object();
				json_object_object_add(obj, key, sub);
			}
			obj = sub;
		}
		json_object_object_add(obj, p, json_value(emit_fields[i].type,
							   v ? v : emit_fields[i].def));
	}
	out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
out:
	json_object_put(root);
	if (!cfg || !root)
		json_object_put(cfg);
	return out;
}

static int cmp_flag(const void *a, const void *b)
{
	return strcmp((*(const struct setting *const *)a)->flag,
		      (*(const struct setting *const *)b)->flag);
}

char *kpx_config_flagz(const struct kpx_config *c)
{
	const struct setting *sorted[NSETTINGS];
	char *buf = NULL;
	size_t len = 0, i, n = 0, j;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (i = 0; i < NSETTINGS; i++)
		if (cfg_settings[i].flag)
			sorted[n++] = &cfg_settings[i];
	qsort(sorted, n, sizeof(sorted[0]), cmp_flag);
	fprintf(f, "\n kube-proxy flags\n"
		"Warning: This endpoint is not meant to be machine parseable, has no "
		"formatting compatibility guarantees and is for debugging purposes only.\n\n");
	for (i = 0; i < n; i++) {
		const struct setting *s = sorted[i];
		const char *v = c->values ? c->values[s - cfg_settings] : NULL;

		for (j = 0; !v && s->field && j < sizeof(emit_fields) / sizeof(emit_fields[0]); j++)
			if (!strcmp(emit_fields[j].path, s->field))
				v = emit_fields[j].def;
		fprintf(f, "%s=%s\n", s->flag, v ? v : "");
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

