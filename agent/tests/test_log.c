// SPDX-License-Identifier: GPL-2.0-only
/*
 * log.c: klog's text header and quoting (Go's strconv.Quote: quotes,
 * control characters, invalid UTF-8, non-printable runes), multi-line
 * values, bare numbers and booleans, the "err" key, verbosity gating,
 * truncation, and component-base's JSON lines (parsed back with json-c).
 * TAP output.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/log.h"

#include "lib/tap.h"

static FILE *out;

/* Everything logged since the last call, NUL-terminated (static buffer). */
static const char *take(void)
{
	static char buf[65536];
	size_t n;

	fflush(out);
	rewind(out);
	n = fread(buf, 1, sizeof(buf) - 1, out);
	buf[n] = '\0';
	if (ftruncate(fileno(out), 0))
		abort();
	rewind(out);
	return buf;
}

static int matches(const char *s, const char *re)
{
	regex_t r;
	int m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return 0;
	m = !regexec(&r, s, 0, NULL, 0);
	regfree(&r);
	return m;
}

/* Number of '\n' in s. */
static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The text after the header's "] " (the header itself checked elsewhere). */
static const char *body(const char *s)
{
	const char *p = strstr(s, "] ");

	return p ? p + 2 : "";
}

/* Whether @s ends with @tail. */
static int ends(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

static struct json_object *parse(const char *s)
{
	return json_tokener_parse(s);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static int jtype(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return -1;
	return json_object_get_type(v);
}

/* The keys of @o in order, joined by ','. */
static const char *jkeys(struct json_object *o)
{
	static char buf[256];
	size_t n = 0;

	buf[0] = '\0';
	json_object_object_foreach(o, k, v) {
		(void)v;
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "," : "", k);
		if (n >= sizeof(buf))
			break;
	}
	return buf;
}

static void text_tests(void)
{
	char pid[16], want[256], big[6000];
	const char *s;
	int side = 0, line;

	snprintf(pid, sizeof(pid), "%7d", (int)getpid());

	line = __LINE__ + 1;
	kpx_info("sync", "applied %d changes", 3);
	s = take();
	snprintf(want, sizeof(want), " %s test_log.c:%d] \"applied 3 changes\"\n", pid, line);
	ok(matches(s, "^I[01][0-9][0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{6} ") &&
	   !strcmp(s + 21, want),
	   "klog header: Lmmdd hh:mm:ss.uuuuuu, pid in 7 columns, file:line: %.*s",
	   (int)strcspn(s, "\n"), s);

	kpx_err("nl", "x");
	kpx_warn("k8s", "y");
	kpx_dbg(0, "k8s", "z");
	s = take();
	ok(matches(s, "^E[0-9]{4} [^\n]*\\] \"x\"\nW[0-9]{4} [^\n]*\\] \"y\"\nI[0-9]{4} [^\n]*\\] \"z\"\n$"),
	   "severity letters E, W, I (debug lines are I)");

	kpx_info("sync", "a \"quoted\" \\ word\nsecond\tline\x01\x7f\r");
	s = take();
	ok(lines(s) == 1 &&
	   !strcmp(body(s), "\"a \\\"quoted\\\" \\\\ word\\nsecond\\tline\\x01\\x7f\\r\"\n"),
	   "message quoted as strconv.Quote, one line: %s", body(s));

	kpx_info("sync", "caf\xc3\xa9 \xff\xfe end \xe2\x82 \xc0\xaf \xed\xa0\x80");
	s = take();
	ok(!strcmp(body(s), "\"caf\xc3\xa9 \\xff\\xfe end \\xe2\\x82 \\xc0\\xaf \\xed\\xa0\\x80\"\n"),
	   "valid UTF-8 kept, invalid bytes (cut, overlong, surrogate) as \\xHH: %s", body(s));

	kpx_info("sync", "\xc2\x85 \xe2\x80\xa8 \xef\xbb\xbf \xf0\x9f\x98\x80 \xf3\xb0\x80\x80");
	s = take();
	ok(!strcmp(body(s), "\"\\u0085 \\u2028 \\ufeff \xf0\x9f\x98\x80 \\U000f0000\"\n"),
	   "non-printable runes as \\uXXXX / \\UXXXXXXXX, printable ones kept: %s", body(s));

	kpx_log_verbosity = 0;
	kpx_dbg(2, "sync", "hidden %d", ++side);
	kpx_dbgkv(2, "sync", "hidden", "n", side++ ? "1" : "0", NULL);
	s = take();
	ok(*s == '\0' && side == 0,
	   "kpx_dbg(2) and kpx_dbgkv(2) silent at verbosity 0, arguments not evaluated");
	kpx_log_verbosity = 2;
	kpx_dbg(2, "sync", "shown");
	kpx_dbg(3, "sync", "hidden");
	kpx_dbgkv(2, "sync", "shown kv", NULL);
	s = take();
	ok(lines(s) == 2 && strstr(s, "] \"shown\"\n") && strstr(s, "] \"shown kv\"\n"),
	   "verbosity 2 shows V=2, hides V=3");
	kpx_log_verbosity = 4;
	kpx_dbg(4, "sync", "deep");
	s = take();
	ok(lines(s) == 1 && strstr(s, "] \"deep\""), "verbosity 4 shows V=4");
	kpx_log_verbosity = 0;

	kpx_logkv(KPX_LOG_INFO, "sync", "synced", "services", "12", "ratio", "0.25",
		  "neg", "-3", "full", "false", "reason", "full resync", "empty", "",
		  "zero", "007", "hex", "0x8", "null", NULL, NULL);
	s = take();
	ok(!strcmp(body(s), "\"synced\" services=12 ratio=0.25 neg=-3 full=false "
			    "reason=\"full resync\" empty=\"\" zero=\"007\" hex=\"0x8\" "
			    "null=\"\"\n"),
	   "numbers and booleans bare, other strings quoted: %s", body(s));

	kpx_logkv(KPX_LOG_INFO, "sync", "m", "q", "say \"hi\"\t\xff", NULL);
	s = take();
	ok(!strcmp(body(s), "\"m\" q=\"say \\\"hi\\\"\\t\\xff\"\n"),
	   "values quoted as the message: %s", body(s));

	kpx_logkv(KPX_LOG_INFO, "sync", "multi", "a", "line 1\nline 2", "b", "x\n", "c", "1",
		  NULL);
	s = take();
	ok(!strcmp(body(s), "\"multi\" a=<\n\tline 1\n\tline 2\n > b=<\n\tx\n > c=1\n"),
	   "a value with newlines as klog's multi-line string: %s", body(s));

	kpx_logkv(KPX_LOG_ERR, "k8s", "request failed", "resource", "services", "err",
		  "connection refused", NULL);
	s = take();
	ok(s[0] == 'E' &&
	   !strcmp(body(s), "\"request failed\" err=\"connection refused\" resource=\"services\"\n"),
	   "err first after the message, as ErrorS: %s", body(s));

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	kpx_info("sync", "%s", big);
	s = take();
	ok(lines(s) == 1 && ends(s, "zzz...\"\n") && strlen(body(s)) == 4095 + 3,
	   "a long message cut to 4 KiB ending \"...\", still quoted (%zu)", strlen(body(s)));
}

static void json_tests(void)
{
	struct json_object *o;
	char want[64];
	const char *s;
	int line;

	kpx_log_set_format(KPX_LOG_JSON);

	line = __LINE__ + 1;
	kpx_info("sync", "applied %d changes", 3);
	s = take();
	o = parse(s);
	snprintf(want, sizeof(want), "tests/test_log.c:%d", line);
	ok(o && lines(s) == 1 && !strcmp(jkeys(o), "ts,caller,msg,v") &&
	   jtype(o, "ts") == json_type_double && jtype(o, "v") == json_type_int &&
	   !strcmp(jstr(o, "caller"), want) && !strcmp(jstr(o, "msg"), "applied 3 changes") &&
	   !strcmp(jstr(o, "v"), "0"),
	   "info: ts, caller, msg, v=0: %.*s", (int)strcspn(s, "\n"), s);
	if (o) {
		double ts = json_object_get_double(json_object_object_get(o, "ts"));
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		ok(ts > (now.tv_sec - 5) * 1e3 && ts <= (now.tv_sec + 1) * 1e3 &&
		   matches(s, "\"ts\":[0-9]{13}\\.[0-9]{3},"),
		   "ts: milliseconds since the epoch with microseconds (%.3f)", ts);
	}
	json_object_put(o);

	kpx_log_verbosity = 2;
	kpx_dbgkv(2, "sync", "sync done", "frontends", "14", "cpu_ms", "1.250", "full", "true",
		  "name", "a\nb\"\xff", "big", "123456789012345678901234", NULL);
	kpx_log_verbosity = 0;
	s = take();
	o = parse(s);
	ok(o && lines(s) == 1 &&
	   !strcmp(jkeys(o), "ts,caller,msg,v,frontends,cpu_ms,full,name,big") &&
	   !strcmp(jstr(o, "v"), "2") && jtype(o, "frontends") == json_type_int &&
	   jtype(o, "cpu_ms") == json_type_double && strstr(s, "\"cpu_ms\":1.250,") &&
	   jtype(o, "full") == json_type_boolean &&
	   !strcmp(jstr(o, "name"), "a\nb\"\xef\xbf\xbd") &&
	   strstr(s, "\"big\":123456789012345678901234}"),
	   "V(2) pairs: v=2, numbers and booleans typed, invalid UTF-8 as U+FFFD: %.*s",
	   (int)strcspn(s, "\n"), s);
	json_object_put(o);

	kpx_logkv(KPX_LOG_ERR, "k8s", "request failed", "err", "refused", "resource", "services",
		  NULL);
	kpx_warn("k8s", "careful");
	s = take();
	o = parse(s);
	ok(o && !strcmp(jkeys(o), "ts,caller,msg,resource,err") && !strcmp(jstr(o, "err"), "refused"),
	   "error: no v, err last: %.*s", (int)strcspn(s, "\n"), s);
	json_object_put(o);
	o = parse(strchr(s, '\n') + 1);
	ok(o && !strcmp(jkeys(o), "ts,caller,msg,v") && !strcmp(jstr(o, "v"), "0"),
	   "warning: v=0, as component-base writes klog's warnings");
	json_object_put(o);

	kpx_info("sync", "ctl \x01 \xc3");
	s = take();
	o = parse(s);
	ok(o && !strcmp(jstr(o, "msg"), "ctl \x01 \xef\xbf\xbd") && strstr(s, "\\u0001"),
	   "message: control characters escaped, invalid UTF-8 replaced: %.*s",
	   (int)strcspn(s, "\n"), s);
	json_object_put(o);

	kpx_log_set_format(KPX_LOG_TEXT);
}

int main(void)
{
	enum kpx_log_format f;

	printf("TAP version 13\n");

	out = tmpfile();
	if (!out)
		return 1;
	kpx_log_set_fd(fileno(out));

	text_tests();
	json_tests();

	ok(!kpx_log_parse_format("text", &f) && f == KPX_LOG_TEXT &&
	   !kpx_log_parse_format("json", &f) && f == KPX_LOG_JSON &&
	   kpx_log_parse_format("JSON", &f) == -EINVAL && kpx_log_parse_format("", &f) == -EINVAL,
	   "--logging-format: text and json, nothing else");

	return tap_done();
}
