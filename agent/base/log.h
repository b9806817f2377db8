/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A tiny leveled logger for the agent and kpxctl: one line per event on
 * stderr, logfmt style:
 *
 *   2026-11-30T06:01:02.123Z level=info comp=sync msg="applied 3 changes"
 *
 * The message is the printf-formatted text, quoted, with '"' and '\\'
 * backslash-escaped and control characters (newlines included) written as
 * \n, \t or \xHH, so one event is always one line.  Extra key=value pairs can
 * be added by the caller after the message with kpx_logkv() (see below).
 *
 * Verbosity follows kube-proxy's --v: kpx_log_verbosity is 0 by default;
 * errors, warnings and info are always printed; kpx_dbg(V, ...) prints only
 * when kpx_log_verbosity >= V (2 = more detail, 4 = debug).
 * Thread-safe: each line is written with a single write(2).
 */
#ifndef KPX_LOG_H
#define KPX_LOG_H

#include <stdarg.h>

enum kpx_log_level {
	KPX_LOG_ERR,
	KPX_LOG_WARN,
	KPX_LOG_INFO,
	KPX_LOG_DEBUG,
};

/* Global verbosity, kube-proxy --v semantics (0 default, 2 more, 4 debug). */
extern int kpx_log_verbosity;

/*
 * Logs one event at @level for component @comp (short word: "sync", "k8s",
 * "nl", ...).  @fmt is printf-style.  Never fails; a line longer than 4 KiB
 * is truncated and ends with "...".
 */
void kpx_log(enum kpx_log_level level, const char *comp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void kpx_vlog(enum kpx_log_level level, const char *comp, const char *fmt,
	      va_list ap) __attribute__((format(printf, 3, 0)));

/*
 * Like kpx_log(), then appends " key=value" pairs: @kv is a NULL-terminated
 * list of alternating const char *key, const char *value (value quoted when it
 * contains spaces, '"' or '=').  Example:
 *   kpx_logkv(KPX_LOG_INFO, "sync", "synced", "services", "12", NULL);
 *   -> ... level=info comp=sync msg="synced" services=12
 */
void kpx_logkv(enum kpx_log_level level, const char *comp, const char *msg,
	       ...) __attribute__((sentinel));

/* Redirects output to file descriptor @fd (default 2, stderr); for tests. */
void kpx_log_set_fd(int fd);

#define kpx_err(comp, ...)  kpx_log(KPX_LOG_ERR, comp, __VA_ARGS__)
#define kpx_warn(comp, ...) kpx_log(KPX_LOG_WARN, comp, __VA_ARGS__)
#define kpx_info(comp, ...) kpx_log(KPX_LOG_INFO, comp, __VA_ARGS__)
/* Debug at verbosity @v: evaluated (arguments included) only if enabled. */
#define kpx_dbg(v, comp, ...)						\
	do {								\
		if (kpx_log_verbosity >= (v))				\
			kpx_log(KPX_LOG_DEBUG, comp, __VA_ARGS__);	\
	} while (0)

#endif
