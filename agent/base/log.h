/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's and kpxctl's leveled logger: one event per write(2) on
 * stderr, in one of the two formats kube-proxy writes (component-base's
 * --logging-format):
 *
 * text (the default), klog's header and structured message:
 *
 *   I1201 12:00:00.000000    1234 sync.c:541] "sync done" frontends=14 full=false
 *
 *   severity letter (I, W, E), month and day, local time with
 *   microseconds, the process id right-aligned in 7 columns, the source
 *   file's base name and line, "] ", the message quoted as Go's
 *   strconv.Quote does (so it is always on one line: '"', '\\' and control
 *   characters escaped, invalid UTF-8 bytes as \xHH, non-printable runes as
 *   \uXXXX), then " key=value" pairs.  A value is quoted the same way,
 *   except that a value holding a newline is written as klog writes a
 *   multi-line string ("key=<", each line after a tab, " >" on the last
 *   line), and a value that reads as a decimal number or as true/false
 *   (the caller formatted it from one) is written bare, as klog writes an
 *   int, float or bool.
 *
 * json, component-base's JSON lines (logs/json, zap):
 *
 *   {"ts":1764590400000.123,"caller":"sync/sync.c:541","msg":"sync done","v":2,"frontends":14}
 *
 *   ts in milliseconds since the epoch (a float), caller as the last
 *   folder and file with the line, msg, v (the verbosity of an info or
 *   warning line; errors have none), then the keys in order, numbers and
 *   booleans as JSON numbers and booleans, an "err" key last; invalid
 *   UTF-8 replaced with U+FFFD.
 *
 * Verbosity follows kube-proxy's --v (klog's V levels): kpx_log_verbosity
 * is 0 by default; errors, warnings and info are always written;
 * kpx_dbg(V, ...) and kpx_dbgkv(V, ...) only when kpx_log_verbosity >= V
 * (2: each sync and each change; 4: debug).  The component word @comp of
 * the calls below names the caller's area in the code; klog's formats have
 * no field for it and it is not written.
 * Thread-safe: each event is written with a single write(2).
 */
#ifndef KPX_LOG_H
#define KPX_LOG_H

#include <stdarg.h>

enum kpx_log_level {
	KPX_LOG_ERR,
	KPX_LOG_WARN,
	KPX_LOG_INFO,
	KPX_LOG_DEBUG,	/* info at V(2) (at V(v) through kpx_dbg()) */
};

enum kpx_log_format {
	KPX_LOG_TEXT,	/* --logging-format=text, the default */
	KPX_LOG_JSON,	/* --logging-format=json */
};

/* Global verbosity, kube-proxy --v semantics (0 default, 2 more, 4 debug). */
extern int kpx_log_verbosity;

/* Selects the output format for the lines that follow. */
void kpx_log_set_format(enum kpx_log_format f);

/*
 * Parses a --logging-format value ("text" or "json", as component-base
 * names them) into *@f; returns 0 or -EINVAL.
 */
int kpx_log_parse_format(const char *s, enum kpx_log_format *f);

/*
 * Logs one event at @level and verbosity @v (written as JSON "v"; 0 for
 * ERR, WARN and INFO) from source @file:@line.  @fmt is printf-style.
 * Never fails; a message longer than 4 KiB is cut and ends with "...".
 * Called through the macros below, which pass __FILE__ and __LINE__.
 */
void kpx_log_at(const char *file, int line, enum kpx_log_level level, int v,
		const char *comp, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void kpx_vlog_at(const char *file, int line, enum kpx_log_level level, int v,
		 const char *comp, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

/*
 * Like kpx_log_at() with the fixed message @msg, then the pairs of @...: a
 * NULL-terminated list of alternating const char *key, const char *value
 * (a NULL value is written as ""; a key "err" is written as klog writes
 * the error of ErrorS: first in text, last in JSON).  Example:
 *   kpx_logkv(KPX_LOG_INFO, "sync", "synced", "services", "12", NULL);
 *   -> I1201 12:00:00.000000    1234 sync.c:9] "synced" services=12
 */
void kpx_logkv_at(const char *file, int line, enum kpx_log_level level, int v,
		  const char *comp, const char *msg, ...)
	__attribute__((sentinel));

/* Redirects output to file descriptor @fd (default 2, stderr); for tests. */
void kpx_log_set_fd(int fd);

/* The verbosity a level stands for when no V is given. */
#define KPX_LOG_V_(level) ((level) == KPX_LOG_DEBUG ? 2 : 0)

#define kpx_log(level, comp, ...)					\
	kpx_log_at(__FILE__, __LINE__, level, KPX_LOG_V_(level), comp,	\
		   __VA_ARGS__)
#define kpx_vlog(level, comp, fmt, ap)					\
	kpx_vlog_at(__FILE__, __LINE__, level, KPX_LOG_V_(level), comp,	\
		    fmt, ap)
#define kpx_logkv(level, comp, ...)					\
	kpx_logkv_at(__FILE__, __LINE__, level, KPX_LOG_V_(level), comp, \
		     __VA_ARGS__)

#define kpx_err(comp, ...)  kpx_log(KPX_LOG_ERR, comp, __VA_ARGS__)
#define kpx_warn(comp, ...) kpx_log(KPX_LOG_WARN, comp, __VA_ARGS__)
#define kpx_info(comp, ...) kpx_log(KPX_LOG_INFO, comp, __VA_ARGS__)
/* Info at verbosity @v: evaluated (arguments included) only if enabled. */
#define kpx_dbg(v, comp, ...)						\
	do {								\
		if (kpx_log_verbosity >= (v))				\
			kpx_log_at(__FILE__, __LINE__, KPX_LOG_DEBUG,	\
				   (v), comp, __VA_ARGS__);		\
	} while (0)
/* kpx_logkv() at info and verbosity @v, only if enabled. */
#define kpx_dbgkv(v, comp, ...)						\
	do {								\
		if (kpx_log_verbosity >= (v))				\
			kpx_logkv_at(__FILE__, __LINE__, KPX_LOG_DEBUG,	\
				     (v), comp, __VA_ARGS__);		\
	} while (0)

#endif
