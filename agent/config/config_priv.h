/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared only by config/'s files: the settings table (settings.c), its
 * setters (setters.c), the --config file reader (yaml.c), the command line
 * (flags.c) and the effective configuration written out (effective.c).
 * Everything else uses config.h.
 */
#ifndef KPX_CONFIG_PRIV_H
#define KPX_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

#define HEALTHZ_PORT	10256
#define METRICS_PORT	10249
#define API_VERSION	"kubeproxy.config.k8s.io/v1alpha1"
#define KIND		"KubeProxyConfiguration"

enum vtype {
	V_STR, V_BOOL, V_INT, V_FLOAT, V_DUR,
	V_LIST,		/* comma-separated flag; YAML sequence of strings */
	V_MAP,		/* featureGates: "k=v,..." flag; YAML map of booleans */
	V_ANY,		/* logging.options etc.: any YAML */
	V_IP,		/* an IP address; 0.0.0.0 and :: are its zero */
};

struct setting;
typedef int (*setter)(struct kpx_config *c, const struct setting *s,
		      const char *v, bool from_file, char *err, size_t len);

struct setting {
	const char *flag;	/* kube-proxy flag without "--", or NULL */
	const char *field;	/* path in the config file, or NULL */
	enum vtype type;
	setter set;		/* NULL: kpx does not use it */
	bool always;		/* flag applies even with --config */
	bool own;		/* kpx's own flag, not kube-proxy's */
	const char *deprecated;	/* kube-proxy's deprecation notice, or NULL */
	const char *why;	/* without a setter: why kpx has no use for it,
				 * logged with the value */
	size_t off;		/* the field of struct kpx_config that a typed
				 * setter (cfg_set_bool(), cfg_set_str(), cfg_set_ms(), ...)
				 * writes */
};

#define BAD(what) cfg_bad(err, len, s, from_file, v, what)

/* A setter of the table (struct setting's set). */
#define CFG_SETTER(fn) int fn(struct kpx_config *c, const struct setting *s, \
			      const char *v, bool from_file, char *err, size_t len)

/* The table (settings.c): every kube-proxy flag and field, in order. */
extern const struct setting cfg_settings[];
size_t cfg_nsettings(void);
#define NSETTINGS cfg_nsettings()

/* settings.c: the table and what applies a value */
int cfg_fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cfg_bad(char *err, size_t len, const struct setting *s, bool from_file,
	    const char *v, const char *what);
const char *cfg_name(const struct setting *s, bool from_file);
int cfg_parse_ip(const char *v, bool *unspec);
int cfg_apply(struct kpx_config *c, const struct setting *s, const char *v,
	      bool from_file, char *err, size_t len);

/* setters.c: value parsers and the setters of the table */
int cfg_parse_bool(const char *v, bool *out);
int cfg_parse_long(const char *v, long min, long max, long *out);
CFG_SETTER(cfg_set_str);
CFG_SETTER(cfg_set_masq_bit);
CFG_SETTER(cfg_set_bool_not);
CFG_SETTER(cfg_set_master);
CFG_SETTER(cfg_set_hostname);
CFG_SETTER(cfg_set_qps);
CFG_SETTER(cfg_set_burst);
CFG_SETTER(cfg_set_content_type);
CFG_SETTER(cfg_set_ms);
CFG_SETTER(cfg_set_ms_positive);
CFG_SETTER(cfg_set_mode_period);
CFG_SETTER(cfg_set_req_timeout);
CFG_SETTER(cfg_set_stall);
CFG_SETTER(cfg_set_cluster_cidr);
CFG_SETTER(cfg_set_nodeport);
CFG_SETTER(cfg_set_cidr_list);
CFG_SETTER(cfg_set_detect_local);
CFG_SETTER(cfg_set_ifname);
CFG_SETTER(cfg_set_scheduler);
CFG_SETTER(cfg_set_healthz);
CFG_SETTER(cfg_set_metrics);
CFG_SETTER(cfg_set_mode);
CFG_SETTER(cfg_set_ct_count);
CFG_SETTER(cfg_set_ct_timeout);
CFG_SETTER(cfg_set_verbosity);
CFG_SETTER(cfg_set_log_format);
CFG_SETTER(cfg_set_bool);
CFG_SETTER(cfg_set_write_config);
CFG_SETTER(cfg_set_port);
CFG_SETTER(cfg_set_oom);
CFG_SETTER(cfg_set_ipvs_scheduler);

/* yaml.c: the --config file */
bool cfg_is_zero(const struct setting *s, const char *v);
const struct setting *cfg_find_field(const char *path);
const char *cfg_mode_section(const char *mode);
void cfg_resolve_ipvs_scheduler(struct kpx_config *c);
void cfg_resolve_periods(struct kpx_config *c);

/* flags.c: the command line */
const char *cfg_given_value(const struct kpx_config *c, const char *flag);

#endif
