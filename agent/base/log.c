// SPDX-License-Identifier: GPL-2.0-only
/*
 * One logfmt line per event on stderr (see log.h for the format).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

#define LINE_MAX_LEN 4096

int kpx_log_verbosity;
static int log_fd = 2;

static const char *const level_names[] = {
	[KPX_LOG_ERR] = "error",
	[KPX_LOG_WARN] = "warning",
	[KPX_LOG_INFO] = "info",
	[KPX_LOG_DEBUG] = "debug",
};

void kpx_log_set_fd(int fd)
{
	log_fd = fd;
}

/* An output buffer that silently stops at its end. */
struct line {
	char buf[LINE_MAX_LEN];
	size_t len;
	bool truncated;
};

static void put_char(struct line *l, char c)
{
	/* Keep room for "...\n". */
	if (l->len + 5 > sizeof(l->buf)) {
		l->truncated = true;
		return;
	}
	l->buf[l->len++] = c;
}

static void put_str(struct line *l, const char *s)
{
	while (*s)
		put_char(l, *s++);
}

/* Appends @s quoted, escaping '"', '\\' and control characters. */
static void put_quoted(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put_char(l, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"':
		case '\\':
			put_char(l, '\\');
			put_char(l, (char)c);
			break;
		case '\n':
			put_str(l, "\\n");
			break;
		case '\t':
			put_str(l, "\\t");
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				put_str(l, "\\x");
				put_char(l, hex[c >> 4]);
				put_char(l, hex[c & 0xf]);
			} else {
				put_char(l, (char)c);
			}
		}
	}
	put_char(l, '"');
}

static bool needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == '"' || *s == '=' ||
		    *s == '\\' || *s == 0x7f)
			return true;
	return false;
}

static void put_header(struct line *l, enum kpx_log_level level,
		       const char *comp)
{
	struct timespec ts;
	struct tm tm;
	char tbuf[64];
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(tbuf + n, sizeof(tbuf) - n, ".%03dZ",
		 (int)(ts.tv_nsec / 1000000) % 1000);
	put_str(l, tbuf);
	put_str(l, " level=");
	if ((unsigned int)level > KPX_LOG_DEBUG)
		level = KPX_LOG_DEBUG;
	put_str(l, level_names[level]);
	put_str(l, " comp=");
	if (comp && *comp && !needs_quotes(comp))
		put_str(l, comp);
	else
		put_quoted(l, comp ? comp : "");
}

static void emit(struct line *l)
{
	const char *p = l->buf;
	size_t left;

	if (l->truncated) {
		memcpy(l->buf + l->len, "...", 3);
		l->len += 3;
	}
	l->buf[l->len++] = '\n';
	left = l->len;
	while (left) {
		ssize_t n = write(log_fd, p, left);

		if (n <= 0)
			return;	/* nowhere to report a failure of the logger */
		p += n;
		left -= (size_t)n;
	}
}

void kpx_vlog(enum kpx_log_level level, const char *comp, const char *fmt,
	      va_list ap)
{
	char msg[LINE_MAX_LEN];
	struct line l = { .len = 0 };

	vsnprintf(msg, sizeof(msg), fmt, ap);
	put_header(&l, level, comp);
	put_str(&l, " msg=");
	put_quoted(&l, msg);
	emit(&l);
}

void kpx_log(enum kpx_log_level level, const char *comp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kpx_vlog(level, comp, fmt, ap);
	va_end(ap);
}

void kpx_logkv(enum kpx_log_level level, const char *comp, const char *msg,
	       ...)
{
	struct line l = { .len = 0 };
	const char *key;
	va_list ap;

	put_header(&l, level, comp);
	put_str(&l, " msg=");
	put_quoted(&l, msg);
	va_start(ap, msg);
	while ((key = va_arg(ap, const char *))) {
		const char *val = va_arg(ap, const char *);

		put_char(&l, ' ');
		put_str(&l, key);
		put_char(&l, '=');
		if (!val)
			val = "";
		if (needs_quotes(val))
			put_quoted(&l, val);
		else
			put_str(&l, val);
	}
	va_end(ap);
	emit(&l);
}
