// SPDX-License-Identifier: GPL-2.0-only
/*
 * One event per write(2): klog's text format or component-base's JSON
 * lines (see log.h for both).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/log.h"

#define MSG_MAX 4096		/* a message longer is cut, ending "..." */
#define LINE_MAX_LEN 16384	/* a quoted message and its pairs */

int kpx_log_verbosity;
static int log_fd = 2;
static enum kpx_log_format log_format = KPX_LOG_TEXT;

void kpx_log_set_fd(int fd)
{
	log_fd = fd;
}

void kpx_log_set_format(enum kpx_log_format f)
{
	log_format = f;
}

int kpx_log_parse_format(const char *s, enum kpx_log_format *f)
{
	if (!strcmp(s, "text"))
		*f = KPX_LOG_TEXT;
	else if (!strcmp(s, "json"))
		*f = KPX_LOG_JSON;
	else
		return -EINVAL;
	return 0;
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

static void put_fmt(struct line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put_fmt(struct line *l, const char *fmt, ...)
{
	char b[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	put_str(l, b);
}

/*
 * The length of the UTF-8 sequence at @s (@n bytes left) and its code
 * point in *@cp, or 0 when it is not valid UTF-8 (overlong, a surrogate,
 * past U+10FFFF, cut short), as Go's utf8.DecodeRune sees it.
 */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c, min;
	size_t len, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/*
 * Whether Go's strconv.Quote writes rune @c as it is: the printable ASCII
 * and, beyond, everything but the C1 controls, the format and separator
 * characters it escapes, private use and noncharacters (unassigned code
 * points, which Go escapes too, are not known here and are kept).
 */
static bool go_printable(uint32_t c)
{
	if (c < 0x80)
		return c >= 0x20 && c != 0x7f;
	if (c < 0xa0 || c == 0xad || c == 0x2028 || c == 0x2029 ||
	    c == 0xfeff || (c >= 0x200b && c <= 0x200f) ||
	    (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) ||
	    (c >= 0xfff9 && c <= 0xfffb) || (c & 0xfffe) == 0xfffe ||
	    (c >= 0xfdd0 && c <= 0xfdef))
		return false;
	if ((c >= 0xe000 && c <= 0xf8ff) || c >= 0xf0000)
		return false;
	return true;
}

/* Appends @s as Go's strconv.Quote writes it. */
static void put_quoted(struct line *l, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	put_char(l, '"');
	while (n) {
		uint32_t c;
		size_t len = utf8_decode(s, n, &c);

		if (!len) {
			put_str(l, "\\x");
			put_char(l, hex[s[0] >> 4]);
			put_char(l, hex[s[0] & 0xf]);
			s++, n--;
			continue;
		}
		switch (c) {
		case '"':
		case '\\':
			put_char(l, '\\');
			put_char(l, (char)c);
			break;
		case '\a': put_str(l, "\\a"); break;
		case '\b': put_str(l, "\\b"); break;
		case '\f': put_str(l, "\\f"); break;
		case '\n': put_str(l, "\\n"); break;
		case '\r': put_str(l, "\\r"); break;
		case '\t': put_str(l, "\\t"); break;
		case '\v': put_str(l, "\\v"); break;
		default:
			if (go_printable(c)) {
				for (size_t i = 0; i < len; i++)
					put_char(l, (char)s[i]);
			} else if (c < 0x80) {
				put_str(l, "\\x");
				put_char(l, hex[c >> 4]);
				put_char(l, hex[c & 0xf]);
			} else if (c < 0x10000) {
				put_fmt(l, "\\u%04x", (unsigned int)c);
			} else {
				put_fmt(l, "\\U%08x", (unsigned int)c);
			}
		}
		s += len, n -= len;
	}
	put_char(l, '"');
}

/* "true", "false" or a decimal number ("12", "-3", "0.25"). */
enum bare { BARE_NO, BARE_BOOL, BARE_INT, BARE_FLOAT };

static enum bare bare_kind(const char *s)
{
	bool dot = false;

	if (!strcmp(s, "true") || !strcmp(s, "false"))
		return BARE_BOOL;
	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return BARE_NO;
	/* no leading zeros, as JSON has none */
	if (*s == '0' && s[1] >= '0' && s[1] <= '9')
		return BARE_NO;
	for (; *s; s++) {
		if (*s == '.' && !dot && s[1] >= '0' && s[1] <= '9')
			dot = true;
		else if (*s < '0' || *s > '9')
			return BARE_NO;
	}
	return dot ? BARE_FLOAT : BARE_INT;
}

/* " key=value" as klog's text format writes a string value. */
static void put_text_kv(struct line *l, const char *key, const char *val)
{
	const char *nl;

	put_char(l, ' ');
	put_str(l, key);
	if (!strchr(val, '\n')) {
		put_char(l, '=');
		if (bare_kind(val) != BARE_NO)
			put_str(l, val);
		else
			put_quoted(l, val);
		return;
	}
	/* klog's multi-line string: lines after a tab, " >" below them */
	put_str(l, "=<\n");
	while ((nl = strchr(val, '\n'))) {
		put_char(l, '\t');
		for (; val <= nl; val++)
			put_char(l, *val);
	}
	if (*val) {
		put_char(l, '\t');
		put_str(l, val);
		put_char(l, '\n');
	}
	put_str(l, " >");
}

static const char *base_name(const char *file)
{
	const char *p = strrchr(file, '/');

	return p ? p + 1 : file;
}

/* The last folder and the file, as zap's short caller: "sync/sync.c". */
static const char *short_caller(const char *file)
{
	const char *p = strrchr(file, '/');

	if (!p)
		return file;
	while (p > file && p[-1] != '/')
		p--;
	return p;
}

static void put_header(struct line *l, const char *file, int line,
		       enum kpx_log_level level)
{
	static const char sev[] = { [KPX_LOG_ERR] = 'E', [KPX_LOG_WARN] = 'W',
				    [KPX_LOG_INFO] = 'I', [KPX_LOG_DEBUG] = 'I' };
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	if ((unsigned int)level > KPX_LOG_DEBUG)
		level = KPX_LOG_DEBUG;
	put_fmt(l, "%c%02d%02d %02d:%02d:%02d.%06ld %7d ", sev[level],
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000, (int)getpid());
	put_str(l, base_name(file));
	put_fmt(l, ":%d] ", line);
}

static void write_all(const char *p, size_t left)
{
	while (left) {
		ssize_t n = write(log_fd, p, left);

		if (n <= 0)
			return;	/* nowhere to report a failure of the logger */
		p += n;
		left -= (size_t)n;
	}
}

static void emit(struct line *l)
{
	if (l->truncated) {
		memcpy(l->buf + l->len, "...", 3);
		l->len += 3;
	}
	l->buf[l->len++] = '\n';
	write_all(l->buf, l->len);
}

/* @s with each invalid UTF-8 byte replaced by U+FFFD (malloc'd; NULL: ENOMEM). */
static char *utf8_clean(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), o = 0;
	char *out = malloc(3 * n + 1);

	if (!out)
		return NULL;
	while (n) {
		uint32_t c;
		size_t len = utf8_decode(s, n, &c);

		if (!len) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3, s++, n--;
			continue;
		}
		memcpy(out + o, s, len);
		o += len, s += len, n -= len;
	}
	out[o] = '\0';
	return out;
}

/* Adds @key: @val to @obj as a string, UTF-8 cleaned; false on ENOMEM. */
static bool json_add_str(struct json_object *obj, const char *key,
			 const char *val)
{
	char *k = utf8_clean(key), *v = utf8_clean(val);
	struct json_object *js = v ? json_object_new_string(v) : NULL;
	bool ok = k && js && !json_object_object_add(obj, k, js);

	if (!ok && js && k)
		json_object_put(js);
	free(k);
	free(v);
	return ok;
}

static bool json_add_val(struct json_object *obj, const char *key,
			 const char *val)
{
	struct json_object *j = NULL;
	char *k;

	switch (bare_kind(val)) {
	case BARE_NO:
		return json_add_str(obj, key, val);
	case BARE_BOOL:
		j = json_object_new_boolean(!strcmp(val, "true"));
		break;
	case BARE_INT:
		errno = 0;
		j = json_object_new_int64(strtoll(val, NULL, 10));
		if (errno)	/* past int64: keep its digits */
			j = json_object_new_double_s(strtod(val, NULL), val);
		break;
	case BARE_FLOAT:
		j = json_object_new_double_s(strtod(val, NULL), val);
		break;
	}
	k = utf8_clean(key);
	if (!j || !k || json_object_object_add(obj, k, j)) {
		json_object_put(j);
		free(k);
		return false;
	}
	free(k);
	return true;
}

/*
 * One JSON line: ts, caller, msg, v (not for errors), the pairs of @ap
 * (NULL when none; "err" last).  false when out of memory.
 */
static bool emit_json(const char *file, int line, enum kpx_log_level level,
		      int v, const char *msg, va_list *ap)
{
	struct json_object *o = json_object_new_object();
	const char *err = NULL, *key, *s;
	char ts[64], caller[256];
	struct timespec t;
	bool ok = o != NULL;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &t);
	snprintf(ts, sizeof(ts), "%lld.%03ld",
		 (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000,
		 (t.tv_nsec / 1000) % 1000);
	snprintf(caller, sizeof(caller), "%s:%d", short_caller(file), line);
	if (ok)
		ok = !json_object_object_add(o, "ts", json_object_new_double_s(
						     strtod(ts, NULL), ts)) &&
		     json_add_str(o, "caller", caller) &&
		     json_add_str(o, "msg", msg);
	if (ok && level != KPX_LOG_ERR)
		ok = !json_object_object_add(o, "v", json_object_new_int(v));
	while (ok && ap && (key = va_arg(*ap, const char *))) {
		const char *val = va_arg(*ap, const char *);

		if (!val)
			val = "";
		if (!strcmp(key, "err"))
			err = val;
		else
			ok = json_add_val(o, key, val);
	}
	if (ok && err)
		ok = json_add_str(o, "err", err);
	s = ok ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE)
	       : NULL;
	if (s) {
		char *buf;

		n = strlen(s);
		buf = malloc(n + 1);
		if (buf) {
			memcpy(buf, s, n);
			buf[n] = '\n';
			write_all(buf, n + 1);
			free(buf);
		} else {
			s = NULL;
		}
	}
	json_object_put(o);
	return s != NULL;
}

/* Cuts @msg (vsnprintf's result @n into @size bytes) to end with "...". */
static void mark_cut(char *msg, int n, size_t size)
{
	if (n >= 0 && (size_t)n >= size)
		memcpy(msg + size - 4, "...", 4);
}

void kpx_vlog_at(const char *file, int line, enum kpx_log_level level, int v,
		 const char *comp, const char *fmt, va_list ap)
{
	char msg[MSG_MAX];
	struct line l = { .len = 0 };

	mark_cut(msg, vsnprintf(msg, sizeof(msg), fmt, ap), sizeof(msg));
	if (log_format == KPX_LOG_JSON &&
	    emit_json(file, line, level, v, msg, NULL))
		return;
	put_header(&l, file, line, level);
	put_quoted(&l, msg);
	emit(&l);
}

void kpx_log_at(const char *file, int line, enum kpx_log_level level, int v,
		const char *comp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kpx_vlog_at(file, line, level, v, comp, fmt, ap);
	va_end(ap);
}

void kpx_logkv_at(const char *file, int line, enum kpx_log_level level, int v,
		  const char *comp, const char *msg, ...)
{
	struct line l = { .len = 0 };
	char cut[MSG_MAX];
	const char *key;
	va_list ap;
	bool done;

	mark_cut(cut, snprintf(cut, sizeof(cut), "%s", msg), sizeof(cut));
	if (log_format == KPX_LOG_JSON) {
		va_start(ap, msg);
		done = emit_json(file, line, level, v, cut, &ap);
		va_end(ap);
		if (done)
			return;
	}
	put_header(&l, file, line, level);
	put_quoted(&l, cut);
	/* klog's ErrorS writes the error right after the message */
	va_start(ap, msg);
	while ((key = va_arg(ap, const char *))) {
		const char *val = va_arg(ap, const char *);

		if (!strcmp(key, "err"))
			put_text_kv(&l, key, val ? val : "");
	}
	va_end(ap);
	va_start(ap, msg);
	while ((key = va_arg(ap, const char *))) {
		const char *val = va_arg(ap, const char *);

		if (strcmp(key, "err"))
			put_text_kv(&l, key, val ? val : "");
	}
	va_end(ap);
	emit(&l);
}
