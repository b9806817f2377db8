// SPDX-License-Identifier: GPL-2.0-only
/*
 * The --config file: a KubeProxyConfiguration read with libyaml's document
 * API, strict then lenient as kube-proxy, each field applied through the
 * settings table (settings.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "base/duration.h"
#include "base/log.h"
#include "config/config.h"
#include "config/config_priv.h"

/* ---- YAML -------------------------------------------------------------- */

/* Sections of the file whose members are in cfg_settings[]. */
static const char *const sections[] = {
	"clientConnection", "logging", "iptables", "ipvs", "nftables",
	"winkernel", "detectLocal", "conntrack",
};

struct yctx {
	struct kpx_config *c;
	yaml_document_t *doc;
	char *err;
	size_t len;
	char errs[2048];	/* every field error, ", "-joined */
	unsigned int nerrs;
	char unknown[1024];	/* unknown fields, as strict decoding lists them */
	unsigned int nunknown;
};

/* Appends @msg to @buf (of @size), ", "-joined, truncating with "...". */
static void append(char *buf, size_t size, const char *msg)
{
	size_t n = strlen(buf);

	if (n + 8 >= size)
		return;
	snprintf(buf + n, size - n, "%s%s", n ? ", " : "", msg);
	if (strlen(buf) + 1 >= size)
		strcpy(buf + size - 4, "...");
}

static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (!n)
		return true;
	if (n->type != YAML_SCALAR_NODE)
		return false;
	v = (const char *)n->data.scalar.value;
	return !*v || (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		       (!strcmp(v, "null") || !strcmp(v, "~") || !strcmp(v, "Null") ||
			!strcmp(v, "NULL")));
}

/* Zero values are unset: kube-proxy's defaulting replaces them. */
bool cfg_is_zero(const struct setting *s, const char *v)
{
	bool b, unspec;
	int64_t ms;

	switch (s->type) {
	case V_BOOL:
		return !cfg_parse_bool(v, &b) && !b;
	case V_INT:
	case V_FLOAT:
		return strspn(v, "0.") == strlen(v);
	case V_DUR:
		return !kpx_parse_duration(v, &ms) && !ms;
	case V_IP:
		return !*v || (!cfg_parse_ip(v, &unspec) && unspec);
	default:
		return !*v;
	}
}

/* The value of a sequence of strings, comma-joined (malloc'd). */
static char *join_seq(struct yctx *y, const struct setting *s, yaml_node_t *n)
{
	yaml_node_item_t *it;
	size_t cap = 1, off = 0;
	char *out;

	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(y->doc, *it);

		if (!e || e->type != YAML_SCALAR_NODE) {
			cfg_fail(y->err, y->len, "%s: want a list of strings", s->field);
			return NULL;
		}
		cap += e->data.scalar.length + 1;
	}
	out = malloc(cap);
	if (!out) {
		cfg_fail(y->err, y->len, "out of memory");
		return NULL;
	}
	out[0] = '\0';
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(y->doc, *it);

		off += sprintf(out + off, "%s%s", off ? "," : "", (char *)e->data.scalar.value);
	}
	return out;
}

static int field_value(struct yctx *y, const struct setting *s, yaml_node_t *n)
{
	const char *v;
	char *joined;
	int r;

	if (is_null(n))
		return 0;
	switch (s->type) {
	case V_ANY:
		if (n->type == YAML_SCALAR_NODE) {
			v = (const char *)n->data.scalar.value;
			if (!strcmp(v, "0") || !strcmp(v, "0s") || !strcmp(v, "false"))
				return 0;
		}
		y->c->n_ignored++;
		kpx_logkv(KPX_LOG_WARN, "config", "setting not used by kpx-agent, ignored",
			  "setting", s->field, NULL);
		return 0;
	case V_MAP:
		if (n->type != YAML_MAPPING_NODE)
			return cfg_fail(y->err, y->len, "%s: want a map", s->field);
		if (n->data.mapping.pairs.start == n->data.mapping.pairs.top)
			return 0;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
			yaml_node_t *val = yaml_document_get_node(y->doc, p->value);
			bool b;

			if (!k || k->type != YAML_SCALAR_NODE || !val ||
			    val->type != YAML_SCALAR_NODE ||
			    cfg_parse_bool((char *)val->data.scalar.value, &b))
				return cfg_fail(y->err, y->len, "%s: want a map of names to true/false",
					    s->field);
		}
		y->c->n_ignored++;
		kpx_logkv(KPX_LOG_WARN, "config", "setting not used by kpx-agent, ignored",
			  "setting", s->field, NULL);
		return 0;
	case V_LIST:
		if (n->type != YAML_SEQUENCE_NODE)
			return cfg_fail(y->err, y->len, "%s: want a list", s->field);
		if (n->data.sequence.items.start == n->data.sequence.items.top)
			return 0;
		joined = join_seq(y, s, n);
		if (!joined)
			return -EINVAL;
		r = cfg_apply(y->c, s, joined, true, y->err, y->len);
		free(joined);
		return r;
	default:
		break;
	}
	if (n->type != YAML_SCALAR_NODE)
		return cfg_fail(y->err, y->len, "%s: want a %s", s->field,
			    s->type == V_STR || s->type == V_DUR ? "string" : "scalar");
	v = (const char *)n->data.scalar.value;
	if ((s->type == V_BOOL || s->type == V_INT || s->type == V_FLOAT) &&
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return cfg_fail(y->err, y->len, "%s: want a %s, not a quoted string", s->field,
			    s->type == V_BOOL ? "boolean" : "number");
	/*
	 * A file's zero means "unset, take the default", except for the fields
	 * that are pointers in kube-proxy's v1alpha1 types, where only a
	 * missing one is defaulted: conntrack.* (0 is "leave the sysctl as it
	 * is"), the masquerade bits (bit 0) and iptables.localhostNodePorts
	 * (false).
	 */
	if (cfg_is_zero(s, v) && strncmp(s->field, "conntrack.", 10) &&
	    strcmp(s->field, "iptables.masqueradeBit") && strcmp(s->field, "nftables.masqueradeBit") &&
	    strcmp(s->field, "iptables.localhostNodePorts"))
		return 0;
	return cfg_apply(y->c, s, v, true, y->err, y->len);
}

const struct setting *cfg_find_field(const char *path)
{
	size_t i;

	for (i = 0; i < NSETTINGS; i++)
		if (cfg_settings[i].field && !strcmp(cfg_settings[i].field, path))
			return &cfg_settings[i];
	return NULL;
}

/* The mode section whose sync periods kube-proxy uses in @mode. */
const char *cfg_mode_section(const char *mode)
{
	if (!strcmp(mode, "nftables"))
		return "nftables.";
	if (!strcmp(mode, "ipvs"))
		return "ipvs.";
	return "iptables.";	/* iptables, and kpx's own modes */
}

/*
 * In ipvs mode, ipvs.scheduler (--ipvs-scheduler) is the default scheduler
 * when kpx has it (rr, wrr, lc, sh, mh); another IPVS scheduler is
 * reported and the default kept.  --scheduler, given, wins.
 */
void cfg_resolve_ipvs_scheduler(struct kpx_config *c)
{
	static const char *const kpx_has[] = { "rr", "wrr", "lc", "sh", "mh" };
	const struct setting *s = cfg_find_field("ipvs.scheduler");
	const char *v = s && c->values ? c->values[s - cfg_settings] : NULL;
	size_t i;

	if (!v || !*v || strcmp(c->proxy_mode, "ipvs") || cfg_given_value(c, "scheduler"))
		return;
	for (i = 0; i < sizeof(kpx_has) / sizeof(kpx_has[0]); i++) {
		if (!strcmp(v, kpx_has[i])) {
			strcpy(c->scheduler, v);
			return;
		}
	}
	c->n_ignored++;
	kpx_logkv(KPX_LOG_WARN, "config", "IPVS scheduler not available in kpx, default kept",
		  "setting", "ipvs.scheduler", "value", v, "scheduler", c->scheduler, NULL);
}

/*
 * The sync periods of the proxy mode's own section, as kube-proxy's
 * v1alpha1 conversion: nftables.* in nftables mode, ipvs.* in ipvs mode,
 * iptables.* otherwise; the other sections' values are not used.
 */
void cfg_resolve_periods(struct kpx_config *c)
{
	static const char *const keys[] = { "syncPeriod", "minSyncPeriod" };
	char path[32];
	size_t i;

	for (i = 0; c->values && i < 2; i++) {
		const struct setting *s;
		int64_t ms;

		snprintf(path, sizeof(path), "%s%s", cfg_mode_section(c->proxy_mode), keys[i]);
		s = cfg_find_field(path);
		if (s && c->values[s - cfg_settings] &&
		    !kpx_parse_duration(c->values[s - cfg_settings], &ms))
			*(i ? &c->min_sync_ms : &c->sync_ms) = ms;
	}
	cfg_resolve_ipvs_scheduler(c);
}

static bool is_section(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (!strcmp(sections[i], key))
			return true;
	return false;
}

static int walk(struct yctx *y, yaml_node_t *map, const char *prefix)
{
	yaml_node_pair_t *p;
	char path[160];
	int r;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
		const struct setting *s;
		const char *key;

		if (!k || k->type != YAML_SCALAR_NODE)
			return cfg_fail(y->err, y->len, "%s: a key is not a string", prefix ? prefix : "(top)");
		key = (const char *)k->data.scalar.value;
		snprintf(path, sizeof(path), "%s%s%s", prefix ? prefix : "",
			 prefix ? "." : "", key);
		if (!prefix && (!strcmp(key, "apiVersion") || !strcmp(key, "kind")))
			continue;	/* checked by the caller */
		s = cfg_find_field(path);
		if (s) {
			r = field_value(y, s, v);
			if (r == -EINVAL) {
				/* every field error is reported, as kube-proxy's validation */
				append(y->errs, sizeof(y->errs), y->err);
				y->nerrs++;
			} else if (r) {
				return r;
			}
			continue;
		}
		if (!prefix && is_section(key)) {
			if (is_null(v))
				continue;
			if (v->type != YAML_MAPPING_NODE)
				return cfg_fail(y->err, y->len, "%s: want a map", key);
			r = walk(y, v, key);
			if (r)
				return r;
			continue;
		}
		/* unknown or obsolete (udpIdleTimeout, conntrack.max, ...) */
		snprintf(y->err, y->len, "unknown field \"%.128s\"", path);
		append(y->unknown, sizeof(y->unknown), y->err);
		y->nunknown++;
	}
	return 0;
}

static const char *top_str(yaml_document_t *doc, yaml_node_t *root, const char *key)
{
	yaml_node_pair_t *p;

	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);

		if (k && k->type == YAML_SCALAR_NODE && v && v->type == YAML_SCALAR_NODE &&
		    !strcmp((char *)k->data.scalar.value, key))
			return (const char *)v->data.scalar.value;
	}
	return NULL;
}

int kpx_config_load_yaml(struct kpx_config *c, const char *data, size_t len,
			 char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct yctx y = { .c = c, .doc = &doc, .err = err, .len = errlen };
	const char *av, *kind;
	int r;

	if (!yaml_parser_initialize(&parser))
		return cfg_fail(err, errlen, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = cfg_fail(err, errlen, "YAML syntax error at line %zu: %s",
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "unknown");
		yaml_parser_delete(&parser);
		return r;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		r = cfg_fail(err, errlen, "empty configuration");
	} else if (root->type != YAML_MAPPING_NODE) {
		r = cfg_fail(err, errlen, "the configuration is not a map");
	} else {
		av = top_str(&doc, root, "apiVersion");
		kind = top_str(&doc, root, "kind");
		if (!av || strcmp(av, API_VERSION))
			r = cfg_fail(err, errlen, "apiVersion \"%.64s\": want %s",
				 av ? av : "", API_VERSION);
		else if (!kind || strcmp(kind, KIND))
			r = cfg_fail(err, errlen, "kind \"%.64s\": want %s", kind ? kind : "", KIND);
		else
			r = walk(&y, root, NULL);
		if (!r && y.nerrs)
			r = y.nerrs == 1 ? cfg_fail(err, errlen, "%s", y.errs) :
			    cfg_fail(err, errlen, "[%s]", y.errs);
		if (!r && y.nunknown) {
			/*
			 * kube-proxy decodes strictly first, then leniently
			 * (unknown fields dropped) with a warning.
			 */
			char msg[sizeof(y.unknown) + 32];

			snprintf(msg, sizeof(msg), "strict decoding error: %s", y.unknown);
			c->n_ignored += y.nunknown;
			kpx_logkv(KPX_LOG_WARN, "config",
				  "Using lenient decoding as strict decoding failed",
				  "err", msg, NULL);
		}
		if (!r)
			cfg_resolve_periods(c);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int kpx_config_load_file(struct kpx_config *c, const char *path, char *err,
			 size_t errlen)
{
	char *data = NULL, msg[256];
	size_t size = 0;
	FILE *f = fopen(path, "re");
	int r, e;

	if (!f) {
		e = errno;
		snprintf(err, errlen, "--config %s: %s", path, strerror(e));
		return -e;
	}
	data = malloc(1 << 20);
	if (data)
		size = fread(data, 1, 1 << 20, f);
	e = ferror(f) ? errno : 0;
	if (!data || e || !feof(f)) {
		snprintf(err, errlen, "--config %s: %s", path,
			 !data ? "out of memory" : e ? strerror(e) : "larger than 1 MiB");
		free(data);
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	r = kpx_config_load_yaml(c, data, size, msg, sizeof(msg));
	if (r)
		snprintf(err, errlen, "--config %s: %s", path, msg);
	free(data);
	return r;
}

